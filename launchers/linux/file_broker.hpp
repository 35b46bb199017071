// launchers/linux/file_broker.hpp - the weaker sandbox's file broker.
//
// Landlock alone cannot let the command make a file at the root's top without
// letting it plant a missing protected name there, nor make git's lock files in
// `.git` without opening its hooks (sbx/linux/weaker_broker.hpp). So the stage
// loads, beside the Landlock domain and the whole filter, a second seccomp
// filter that stops every system call that could change the file tree (opens
// for writing, making, removing, renaming and linking, truncating by name) and
// hands its listener to the launcher. For each, the broker here reads the
// command's path from its memory, resolves the folder it names to where it
// lies (through the command's working directory or descriptor, in /proc), and
// asks WeakerBroker::step:
//   - kernel: the call goes on (SECCOMP_USER_NOTIF_FLAG_CONTINUE), and Landlock
//     decides as it would alone. Everything the broker cannot read, resolve or
//     does not know goes this way, so a failure refuses, never allows.
//   - broker: the broker makes the change itself, through a descriptor on that
//     folder and never following a link at the last step, with the command's
//     umask and no capability, and answers the call with the result (a new
//     descriptor for an open, placed in the command by the kernel).
// The broker is a thread of the launcher with no capability and a working
// directory and umask of its own; the listener closes when the last process
// under the filter is gone.
//
// Not made here (the kernel refuses them where Landlock does): openat2,
// O_TMPFILE, links with flags, renames with RENAME_WHITEOUT, device files,
// Unix sockets bound by path, opening a FIFO, a write through a symbolic link
// at the last step, and a trailing slash on anything but a directory.
#pragma once

#include <linux/seccomp.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include "base/fd_io.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/linux/weaker_broker.hpp"

namespace sbx::linux_sandbox {

// The filter's BPF program in a memfd (close-on-exec), for the native
// architecture: every other call, and every call of another architecture,
// passes it (the whole filter decides those). `with_connect`: connect() waits
// for the listener too, for the connect broker (connect_broker.hpp), which a
// process can have no listener of its own beside this one for. Fails with
// Errc::sandbox_unavailable naming the step.
sbx::expected<launcher::Fd> broker_filter_program(bool with_connect = false);

class FileBroker {
public:
    // Serves `listener` (the filter's, from the stage) on a thread of its own
    // until stop(). Fails with Errc::sandbox_unavailable where the thread or
    // its stop signal cannot be made.
    // `on_connect`: what answers a connect() the filter sent (with_connect);
    // it is called on the broker's thread, and must answer it.
    using OnConnect = std::function<void(const seccomp_notif&)>;
    static sbx::expected<std::unique_ptr<FileBroker>> start(launcher::Fd listener, WeakerBroker rules,
                                                            OnConnect on_connect = nullptr);
    ~FileBroker();
    FileBroker(const FileBroker&) = delete;
    FileBroker& operator=(const FileBroker&) = delete;

    // Ends the thread (calls still waiting get ENOSYS from the kernel once the
    // listener closes). Idempotent.
    void stop();

    // How many calls the kernel went on with, and how many the broker made
    // (whether they succeeded or not).
    std::uint64_t continued() const { return continued_.load(); }
    std::uint64_t made() const { return made_.load(); }

private:
    FileBroker(launcher::Fd listener, launcher::Fd wake, WeakerBroker rules, OnConnect on_connect)
        : listener_(std::move(listener)), wake_(std::move(wake)), rules_(std::move(rules)),
          on_connect_(std::move(on_connect)) {}
    void serve();

    launcher::Fd listener_, wake_;
    WeakerBroker rules_;
    OnConnect on_connect_;
    std::thread thread_;
    std::atomic<std::uint64_t> continued_{0}, made_{0};
};

}  // namespace sbx::linux_sandbox
