#include "shared/run_program.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/fd_io.hpp"

namespace sbx::launcher {

ProgramFile inspect_program(const std::string& path) {
    ProgramFile f;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return f;
    f.path = path;
    f.regular = S_ISREG(st.st_mode);
    f.executable = f.regular && ::faccessat(AT_FDCWD, path.c_str(), X_OK, AT_EACCESS) == 0;
    f.setuid = (st.st_mode & S_ISUID) != 0;
    f.setgid = (st.st_mode & S_ISGID) != 0;
    return f;
}

ProgramFile find_in_path(std::string_view name, const std::optional<std::string>& path_env) {
    std::string_view rest = path_env ? std::string_view(*path_env) : kDefaultPath;
    ProgramFile first_seen;
    for (;;) {
        const auto colon = rest.find(':');
        std::string_view dir = rest.substr(0, colon);
        while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
        if (!dir.empty() && dir.front() == '/') {
            const std::string candidate = std::string(dir == "/" ? "" : dir) + "/" + std::string(name);
            ProgramFile f = inspect_program(candidate);
            if (f.executable) return f;
            if (f.regular && first_seen.path.empty()) first_seen = std::move(f);
        }
        if (colon == std::string_view::npos) break;
        rest.remove_prefix(colon + 1);
    }
    return first_seen;
}

Fd high_fd(Fd fd) {
    if (!fd.ok() || fd.get() >= 10) return fd;
    return Fd(::fcntl(fd.get(), F_DUPFD_CLOEXEC, 10));  // `fd` closes after, errno kept
}

namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// A pipe whose ends are close-on-exec and at 10 or above (high_fd); false when
// one could not be made.
bool high_pipe(Fd& read_end, Fd& write_end) {
    Pipe p;
    if (!p.open()) return false;
    read_end = high_fd(std::move(p.read));
    write_end = high_fd(std::move(p.write));
    return read_end.ok() && write_end.ok();
}

}  // namespace

RunOutcome run_program(const std::vector<std::string>& argv, std::span<const int> pass, const RunLimits& limits) {
    const std::size_t kCap = limits.cap;
    RunOutcome r;
    Fd out_r, out_w, err_r, err_w;
    if (!high_pipe(out_r, out_w) || !high_pipe(err_r, err_w)) {
        r.spawn_error = errno_text("pipe");
        return r;
    }

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_w.get(), 1);
    posix_spawn_file_actions_adddup2(&actions, err_w.get(), 2);
    for (std::size_t i = 0; i < pass.size(); ++i)
        posix_spawn_file_actions_adddup2(&actions, pass[i], 3 + static_cast<int>(i));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> env;
    for (const auto& e : limits.environment) env.push_back(const_cast<char*>(e.c_str()));
    env.push_back(nullptr);
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), env.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        r.spawn_error = "posix_spawn " + argv[0] + ": " + std::strerror(rc);
        return r;
    }
    out_w.reset();
    err_w.reset();

    const auto deadline = std::chrono::steady_clock::now() + limits.timeout;
    pollfd fds[2] = {{out_r.get(), POLLIN, 0}, {err_r.get(), POLLIN, 0}};
    std::string* sinks[2] = {&r.out, &r.err};
    int open_fds = 2;
    while (open_fds > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            r.timed_out = true;
            ::kill(pid, SIGKILL);
            break;
        }
        const int n = ::poll(fds, 2, static_cast<int>(left.count()));
        if (n < 0) {
            if (errno == EINTR) continue;
            r.timed_out = true;  // cannot wait any more: treat as stuck
            ::kill(pid, SIGKILL);
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            char buf[4096];
            const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {
                fds[i].fd = -1;
                --open_fds;
                continue;
            }
            std::string& sink = *sinks[i];
            const std::size_t room = kCap - std::min(kCap, sink.size());
            if (i == 0 && static_cast<std::size_t>(got) > room) r.out_cut = true;
            sink.append(buf, std::min(static_cast<std::size_t>(got), room));
        }
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            r.spawn_error = errno_text("waitpid");
            return r;
        }
    }
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status) && !r.timed_out) r.signal = WTERMSIG(status);
    return r;
}

}  // namespace sbx::launcher
