// launchers/linux/proc_files.hpp - what the brokers read of a command's thread in /proc.
//
// The file broker and the connect broker look at the thread that made a call
// while it waits for their answer: a field of its status, where a link of its
// (its working directory, a descriptor) leads. Each reading is of that moment;
// the caller checks afterwards that the call still waits, so that it was not
// another thread under a number used again.
#pragma once

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <string>
#include <string_view>

#include "base/fd_io.hpp"

namespace sbx::linux_sandbox {

// The text of field `name` ("Tgid", "Umask") in /proc/TID/status; empty when
// it cannot be read.
inline std::string status_field(pid_t tid, std::string_view name) {
    const std::string path = "/proc/" + std::to_string(tid) + "/status";
    launcher::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    char buf[2048];
    const ssize_t n = fd.ok() ? ::read(fd.get(), buf, sizeof buf - 1) : -1;
    if (n <= 0) return {};
    const std::string_view text(buf, static_cast<std::size_t>(n));
    const std::string key = "\n" + std::string(name) + ":\t";
    const auto at = text.find(key);
    if (at == std::string_view::npos) return {};
    const auto value = text.substr(at + key.size());
    return std::string(value.substr(0, value.find('\n')));
}

// What the link `link` holds (in /proc: where a descriptor or working
// directory lies); empty when it cannot be read whole.
inline std::string read_link(const std::string& link) {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
    if (n <= 0 || n >= static_cast<ssize_t>(sizeof buf)) return {};
    return std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace sbx::linux_sandbox
