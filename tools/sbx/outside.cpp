// outside.cpp - a command run outside the sandbox, as the settings send it and
// the caller asked for (outside.hpp).
#include "outside.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>

#include "cli_common.hpp"
#include "shared/common.hpp"  // launchers/: the statuses of a command that cannot run

namespace sbx::cli {

namespace {

volatile sig_atomic_t g_outside_child = -1;

void forward_to_child(int sig) {
    const int saved = errno;
    if (g_outside_child > 0) ::kill(static_cast<pid_t>(g_outside_child), sig);
    errno = saved;
}

// The signals sbx handles while the command runs, and what the command gets
// back before it execs: the default for each.
constexpr int kForwarded[] = {SIGTERM, SIGHUP};
constexpr int kIgnored[] = {SIGINT, SIGQUIT};  // the terminal sends them to the command as well

[[noreturn]] void exec_command(const std::vector<std::string>& command, const sigset_t& mask) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int sig : {SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGALRM, SIGPIPE}) ::sigaction(sig, &dfl, nullptr);
    ::sigprocmask(SIG_SETMASK, &mask, nullptr);
    std::vector<char*> argv;
    for (const auto& w : command) argv.push_back(const_cast<char*>(w.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    const int e = errno;
    const std::string said = "sbx: " + command.front() + ": " + std::strerror(e) + "\n";
    (void)!::write(STDERR_FILENO, said.data(), said.size());
    ::_exit(e == ENOENT ? sbx::launcher::kNotFound : sbx::launcher::kCannotRun);
}

}  // namespace

int run_outside(const std::vector<std::string>& command, const std::string& line, const std::string& why) {
    std::cerr << "sbx: UNSANDBOXED: " << line << " runs outside the sandbox, unconfined, as you asked (--unsandboxed): "
              << why << "\n";
    sigset_t block, old;
    sigemptyset(&block);
    for (int sig : kForwarded) sigaddset(&block, sig);
    ::sigprocmask(SIG_BLOCK, &block, &old);
    struct sigaction sa {};
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = forward_to_child;
    for (int sig : kForwarded) ::sigaction(sig, &sa, nullptr);
    sa.sa_handler = SIG_IGN;
    for (int sig : kIgnored) ::sigaction(sig, &sa, nullptr);
    std::cerr.flush();
    const pid_t pid = ::fork();
    if (pid == 0) exec_command(command, old);
    if (pid < 0) {
        const int e = errno;
        ::sigprocmask(SIG_SETMASK, &old, nullptr);
        return report(sbx::Error(sbx::Errc::internal, std::string("cannot start the command: ") + std::strerror(e)));
    }
    g_outside_child = pid;
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    g_outside_child = -1;
    if (WIFSIGNALED(status)) {
        std::cerr << "sbx: UNSANDBOXED: " << line << " ran outside the sandbox and died of signal "
                  << WTERMSIG(status) << " (" << ::strsignal(WTERMSIG(status)) << ")\n";
        return 128 + WTERMSIG(status);
    }
    std::cerr << "sbx: UNSANDBOXED: " << line << " ran outside the sandbox and exited with status "
              << WEXITSTATUS(status) << "\n";
    return WEXITSTATUS(status);
}

}  // namespace sbx::cli
