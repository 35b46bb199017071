// launchers/linux/platform.hpp - the Linux launcher's steps, as a Platform of
// launcher_main.hpp: the probe and the seccomp programs, the root's group and
// its placeholders, bubblewrap with the stage, the proxy, the clean-up and the
// audit after the command (linux/platform.cpp says each in order).
//
// sbx-linux runs it from its own main; `sbx run` runs it in its own process
// (no second program to start, no plan to write and read again), so both carry
// a plan out with the same code.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd_io.hpp"
#include "linux/cgroup.hpp"
#include "linux/probe.hpp"
#include "linux/session_mounts.hpp"
#include "sbx/plan/plan.hpp"
#include "shared/launcher_main.hpp"

namespace sbx::launcher {
class CommandProxy;  // shared/common.hpp
}

namespace sbx::linux_sandbox {

using sbx::launcher::CommandProxy;

struct Sandbox;  // bubblewrap and the descriptors it and the stage hold (linux/platform.cpp)

// What a sandbox is started with before its plan is made, from the settings
// and the command line alone: the plan must then say the same (facts_of), or
// that sandbox is ended and one started for the plan.
struct SandboxFacts {
    std::string bwrap_path;     // the plan's bwrapPath ("": bwrap on PATH)
    bool isolated = true;       // the plan's filesystem.isolated
    bool scan_stderr = false;   // the plan's scanStderr
    std::vector<int> pass_fds;  // the plan's passFds, sorted, each once
    bool operator==(const SandboxFacts&) const = default;
};
SandboxFacts facts_of(const sbx::Plan& plan);

class LinuxPlatform final : public sbx::launcher::Platform {
public:
    LinuxPlatform();
    ~LinuxPlatform() override;  // ends a sandbox started early and never run
    LinuxPlatform(const LinuxPlatform&) = delete;
    LinuxPlatform& operator=(const LinuxPlatform&) = delete;

    const char* name() const override { return "sbx-linux"; }
    std::string_view usage_lines() const override;
    std::string_view help_text() const override;
    bool take_option(std::string_view arg, const std::function<const char*()>& next, std::string& why) override;
    std::string check_options(const sbx::launcher::Options& o) const override;
    int doctor(sbx::launcher::Launcher& l) override;
    // The quick probe of the machine, then the seccomp step.
    std::optional<sbx::Error> unavailable(const sbx::Plan& plan) override;
    // The disk is checked under the root group's lock (prepare_under_lock).
    bool verifies_first() const override { return false; }
    int run(sbx::launcher::Launcher& l, const sbx::Plan& plan, sbx::launcher::Reaper& reaper) override;

    // Starts bubblewrap before the plan is made (`sbx run` calls it before it
    // reads the settings, and again should they say otherwise than it guessed),
    // its stage waiting for orders: bubblewrap builds the namespaces while the
    // settings, the plan, the checks and the placeholders are made. run() gives
    // it its orders when the plan says the same as `facts`, else ends it and
    // starts another; so does a second call with other facts. Starts nothing
    // where the stage would not make the mounts (the quick probe fails, the
    // kernel lacks the new mount API, --bubblewrap-mounts); run() then takes
    // the usual way.
    void start_early(sbx::launcher::Launcher& l, const SandboxFacts& facts, sbx::launcher::Reaper& reaper);
    // Ends a sandbox start_early started, which no plan will use (the command
    // runs outside it), and waits for it.
    void cancel_early();

    // One more line of information for doctor() to print after its checks, which
    // it does not change: "     LABEL: TEXT", and in --json the member
    // "KEY": JSON (a JSON value, written whole). `sbx doctor` says there where
    // its install lies (tools/sbx/doctor.cpp).
    struct DoctorNote {
        std::string label, text, key, json;
    };
    void add_doctor_note(DoctorNote note) { notes_.push_back(std::move(note)); }

    // What a session's holder (session_holder.hpp) is told while the sandbox
    // runs; not in the weaker sandbox, which sessions refuse.
    struct SessionHooks {
        // The command's proxy once it serves, and nullptr before it stops.
        std::function<void(CommandProxy*)> proxy;
        // Each refusal of a session command's, as its line of the violations
        // block, with its tag: the command's process group in the sandbox's
        // PID namespace, in decimal (the proxy's on its listeners or for its
        // own connections, the connect broker's where it knows the caller's
        // group). From the proxy's and the broker's threads, the proxy's with
        // its lock held: it may take no lock that waits for either.
        std::function<void(const std::string& tag, const std::string& line)> refused;
        // What makes more mounts in the sandbox while it runs, once it runs,
        // and nullptr once it has ended (before the cleanup): the call with
        // nullptr returns only when no add() is under way, so a caller holds
        // a lock of its own over both.
        std::function<void(SessionMounts*)> mounts;
    };
    void session_hooks(SessionHooks hooks) { hooks_ = std::move(hooks); }

private:
    SessionHooks hooks_;
    std::vector<DoctorNote> notes_;
    struct Waiting;  // a sandbox started early (linux/platform.cpp)
    std::unique_ptr<Waiting> waiting_;
    std::string bwrap_;  // --bwrap, for --doctor
    bool bubblewrap_mounts_ = false;  // --bubblewrap-mounts: bubblewrap makes every mount, as where the stage cannot
    // Where each sandbox gets a cgroup of its own (cgroup.hpp): the directory
    // --cgroup-parent names, else the delegated one find_cgroup_parent finds;
    // looked for once.
    std::string cgroup_given_;
    std::optional<CgroupParent> cgroup_parent_;
    const CgroupParent& cgroup_parent();
    ProbeOptions popt_;
    ProbeResult probed_;
    sbx::launcher::Fd seccomp_program_;  // bubblewrap's filter, or its first part where the stage makes the mounts
    sbx::launcher::Fd mounts_filter_;    // the second part, which the stage loads after its mounts
    // The launcher answers each connect() of the command (connect_broker.hpp):
    // the plan does not open every Unix socket, and the kernel can. Where it
    // cannot, `broker_warning_` says what the plan's listed sockets lose.
    bool connect_broker_ = false;
    std::string broker_warning_;
    sbx::expected<std::unique_ptr<Sandbox>> waiting_sandbox(sbx::launcher::Launcher& l, const sbx::Plan& plan,
                                                            sbx::launcher::Reaper& reaper, std::uint64_t& sandbox_start);
    // The weaker sandbox (README, "The weaker sandbox"): the plan asks for it and
    // user namespaces are refused here. seccomp_program_ then holds the whole
    // filter for the host's network, which the stage loads itself.
    bool weaker_ = false;
    int weaker_abi_ = 0;  // the kernel's Landlock ABI, 4 or later
    std::optional<sbx::Error> weaker_unavailable(const sbx::Plan& plan, const UnshareOutcome& trial);
    int run_weaker(sbx::launcher::Launcher& l, const sbx::Plan& plan, sbx::launcher::Reaper& reaper);
};

}  // namespace sbx::linux_sandbox
