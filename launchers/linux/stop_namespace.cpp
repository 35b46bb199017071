// launchers/linux/stop_namespace.cpp - see stop_namespace.hpp.
#include "linux/stop_namespace.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

namespace sbx::launcher {

namespace {

struct NsId {
    dev_t dev = 0;
    ino_t ino = 0;
    bool operator==(const NsId&) const = default;
};

// The PID namespace of `pid` (0 for ourselves), or {0, 0} when it cannot be read.
NsId pid_ns_of(pid_t pid) {
    struct stat st {};
    const std::string path = pid == 0 ? "/proc/self/ns/pid" : "/proc/" + std::to_string(pid) + "/ns/pid";
    if (::stat(path.c_str(), &st) != 0) return {};
    return {st.st_dev, st.st_ino};
}

// Every process id in /proc.
std::vector<pid_t> all_pids() {
    std::vector<pid_t> out;
    DIR* d = ::opendir("/proc");
    if (d == nullptr) return out;
    while (const dirent* e = ::readdir(d)) {
        pid_t pid = 0;
        const char* c = e->d_name;
        for (; *c >= '0' && *c <= '9'; ++c) pid = pid * 10 + (*c - '0');
        if (*c == '\0' && pid > 0) out.push_back(pid);
    }
    ::closedir(d);
    return out;
}

// The fields of /proc/PID/stat after the command name: state first, then the
// parent's id. Empty when the process is gone.
std::string stat_after_name(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(f, line)) return {};
    const auto close = line.rfind(')');  // the name may hold anything, ')' included
    if (close == std::string::npos || close + 2 >= line.size()) return {};
    return line.substr(close + 2);
}

// The state letter ('R', 'S', 'T', 'Z', ...), or '\0' when the process is gone.
char state_of(pid_t pid) {
    const std::string rest = stat_after_name(pid);
    return rest.empty() ? '\0' : rest[0];
}

}  // namespace

std::vector<pid_t> children_of(pid_t pid) {
    std::vector<pid_t> out;
    for (pid_t p : all_pids()) {
        std::istringstream fields(stat_after_name(p));
        char state = 0;
        pid_t parent = 0;
        if (fields >> state >> parent && parent == pid) out.push_back(p);
    }
    return out;
}


Stopped stop_pid_namespace(pid_t bubblewrap) {
    sandbox_frozen(true);  // until continue_stopped()
    Stopped out;
    if (bubblewrap <= 0) {
        out.complete = false;
        return out;
    }
    const NsId ours = pid_ns_of(0);
    NsId sandbox;
    for (pid_t child : children_of(bubblewrap)) {
        const NsId ns = pid_ns_of(child);
        if (ns.ino != 0 && !(ns == ours)) {
            sandbox = ns;
            break;
        }
    }
    if (sandbox.ino == 0 || ours.ino == 0) {
        out.complete = false;
        return out;
    }
    // A process that forks while it is being stopped has a child the last scan
    // did not see: scan again until one finds nothing new.
    std::set<pid_t> stopped;
    bool settled = false;
    for (int round = 0; round < 1000 && !settled; ++round) {
        settled = true;
        for (pid_t pid : all_pids()) {
            if (stopped.count(pid) != 0 || !(pid_ns_of(pid) == sandbox)) continue;
            if (::kill(pid, SIGSTOP) == 0) {
                stopped.insert(pid);
                out.targets.push_back(pid);
                settled = false;
            }
        }
    }
    out.complete = settled;
    // SIGSTOP takes effect when the process next leaves the kernel: wait for it.
    // One in uninterruptible sleep ('D') runs no code of its own before it stops,
    // and may never get there while we wait: the parent of a vfork (which dash
    // uses for commands) sleeps so until its stopped child execs.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (pid_t pid : out.targets) {
        for (;;) {
            const char state = state_of(pid);
            if (state == '\0' || state == 'T' || state == 't' || state == 'Z' || state == 'X' || state == 'D') break;
            if (std::chrono::steady_clock::now() > deadline) {
                out.complete = false;
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    return out;
}

}  // namespace sbx::launcher
