// run.cpp - `sbx run`: the plan made as `sbx plan` makes it (compose.hpp) and
// carried out. On Linux this process runs the launcher's steps itself
// (launchers/linux/platform.hpp), bubblewrap starting while the settings are
// read; elsewhere, or with --launcher, the plan goes to the launcher program.
// A plan the disk made stale before the command ran is made again by sbx run
// again, up to kRunAttempts times. Its exit status is the command's; anything
// that stops the command before it runs is 125.
#include <fcntl.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <sys/stat.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sbx/core/paths.hpp"
#include "sbx/plan/plan_json.hpp"
#include "sbx/plan/said_once.hpp"
#include "sbx/route/route.hpp"
#include "sbx/rules/git_record.hpp"

#include "answers.hpp"
#include "cache_folder.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "compose.hpp"
#include "outside.hpp"
#include "own_programs.hpp"
#if defined(__linux__)
#include "linux/git_audit.hpp"       // launchers/: the audit's walk, for a root's first record of its repositories
#include "linux/platform.hpp"  // launchers/: the Linux launcher's steps, which `sbx run` runs itself
#endif
#include "base/trace.hpp"       // launchers/: --trace-fd's lines
#include "shared/common.hpp"      // launchers/: kFailedBeforeCommand
#include "shared/leftovers.hpp"   // launchers/: the reaper
#include "shared/tool_cache.hpp"  // launchers/: read_small and keep_file, for the warnings said once

namespace sbx::cli {

namespace {

// The launcher's steps in this process: on Linux `sbx run` carries the plan out
// itself (launchers/linux/platform.hpp), unless --launcher names a program;
// elsewhere it runs the launcher beside it.
#if defined(__linux__)
constexpr bool kLaunchesItself = true;
#else
constexpr bool kLaunchesItself = false;
#endif

int run_failed(const sbx::Error& e) {
    std::cerr << "sbx: " << sbx::errc_name(e.code) << ": " << sbx::to_string(e) << "\n";
#if defined(__linux__)
    if (e.code == sbx::Errc::unavailable && sbx::launcher::runs_filtered())
        std::cerr << "sbx: " << sbx::launcher::kNestedNote << "\n";
#endif
    return kRunFailed;
}

// The steps' times for --trace-fd, each from the end of the step before.
class Lap {
public:
    explicit Lap(const sbx::launcher::Trace& trace) : trace_(trace) {}
    const sbx::launcher::Trace& trace() const { return trace_; }
    void step(std::string_view name) {
        trace_.step(name, t_);
        t_ = sbx::launcher::Trace::now();
    }
    // What has passed since is no step's.
    void restart() { t_ = sbx::launcher::Trace::now(); }

private:
    const sbx::launcher::Trace& trace_;
    std::uint64_t t_ = sbx::launcher::Trace::now();
};

// Planned again: wait a moment, longer each time, so that sandboxes of the
// root starting together do not race each other again.
void wait_before_attempt(int attempt) {
    if (attempt <= 1) return;
    std::random_device rd;
    const auto ms = 1 + rd() % (2u << attempt);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// A descriptor, not closed on exec, whose reading from the start gives `text`:
// a memfd (elsewhere an unlinked file).
sbx::expected<int> descriptor_holding(const std::string& text, const char* name) {
#if defined(__linux__)
    const int fd = ::memfd_create(name, 0);
#else
    (void)name;
    char path[] = "/tmp/sbx-XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd >= 0) ::unlink(path);
#endif
    if (fd < 0)
        return sbx::fail(sbx::Error(sbx::Errc::internal, std::string("no descriptor for ") + name + ": " + std::strerror(errno)));
    for (std::size_t off = 0; off < text.size();) {
        const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int err = errno;
            ::close(fd);
            return sbx::fail(sbx::Error(sbx::Errc::internal, std::string("writing ") + name + ": " + std::strerror(err)));
        }
        off += static_cast<std::size_t>(n);
    }
    ::lseek(fd, 0, SEEK_SET);
    return fd;
}

// A plan another sandbox of the root (or anything else) made stale before the
// command ran: the launcher runs sbx again, which plans again, up to
// kRunAttempts times in all; the last attempt fails with the reason. This
// program and its arguments as the next attempt gets them: "run --attempt N
// --started-as NAME" in front of what this one was given after "run" and its
// own --attempt and --started-as (NAME: the name the first attempt was started
// by, whose program every attempt protects). Empty on the last attempt.
sbx::expected<std::vector<std::string>> next_attempt_argv(int attempt) {
    if (attempt >= kRunAttempts) return std::vector<std::string>{};
    const std::string self = own_path();
    if (self.empty()) return sbx::fail(sbx::Errc::internal, "cannot find this program's own path to plan again with");
    std::size_t from = 2;  // g_arguments[1] is "run"
    if (g_arguments.size() > 3 && g_arguments[2] == "--attempt") from = 4;
    if (g_arguments.size() > from + 1 && g_arguments[from] == "--started-as") from += 2;
    const std::string name = started_as();
    std::vector<std::string> out{self, "run", "--attempt", std::to_string(attempt + 1), "--started-as",
                                 name.empty() ? self : name};
    out.insert(out.end(), g_arguments.begin() + static_cast<std::ptrdiff_t>(from), g_arguments.end());
    return out;
}

#if defined(__linux__)
// The launcher's options as sbx gives them: the <sandbox_violations> block,
// the terminal choice, the trace, and, for a stale plan, this program run again
// to plan again (`again`, empty on the last attempt).
sbx::launcher::Options launcher_options(const RunArgs& a, std::vector<std::string> again) {
    sbx::launcher::Options o;
    o.plan_fd = -1;  // no plan to read: it is made here
    o.print_violations = true;
    o.pty = a.pty ? sbx::launcher::PtyMode::always : a.no_pty ? sbx::launcher::PtyMode::never
                                                               : sbx::launcher::PtyMode::automatic;
    o.allow_clipboard_write = a.allow_clipboard_write;
    o.grace = a.grace;
    if (a.trace_fd >= 0) o.trace = sbx::launcher::Trace(a.trace_fd);
    o.again = std::move(again);
    return o;
}

// What the sandbox started before the plan is made takes from the command line
// and, once read, the settings (`c`; before them, bubblewrap on PATH and an
// isolated filesystem, as nearly every plan has them): the plan says the same
// of them (plan_for), or the launcher starts another for it.
sbx::linux_sandbox::SandboxFacts early_facts(const PlanArgs& a, const Composed* c) {
    sbx::linux_sandbox::SandboxFacts f;
    if (c != nullptr && c->policy.bwrap_path) f.bwrap_path = c->policy.bwrap_path->value;
    f.isolated = c == nullptr || !c->policy.filesystem.disabled.value;
    f.scan_stderr = a.scan_stderr || (run_scans_stderr() && !a.no_scan_stderr);
    f.pass_fds = a.pass_fds;
    std::sort(f.pass_fds.begin(), f.pass_fds.end());
    f.pass_fds.erase(std::unique(f.pass_fds.begin(), f.pass_fds.end()), f.pass_fds.end());
    return f;
}

// The root's record of its repositories (sbx/rules/git_record.hpp) brought up to
// date before the plan is made: the directories that changed since sbx last
// looked are listed again (all of the root before its first run), so that a
// repository made or cloned since is protected during this run too, as those
// recorded are. Where the record cannot be kept, the plan says so
// (usable_git_record_base).
void refresh_git_record(const Composed& c) {
    const auto base = usable_git_record_base(c, nullptr);
    if (!base) return;
    auto real = sbx::resolve(*c.view, *base);
    if (!real) return;
    (void)sbx::launcher::refresh_git_record(sbx::git_record_path(*real, c.root), sbx::git_stamps_path(*real, c.root),
                                            c.root);
}
#endif

// The plan's once warnings (sbx/plan/said_once.hpp) that sbx run said before
// for this root are left out of what it says now; the others are said and
// kept as said. Where the file cannot be kept, every warning is said.
void say_warnings_once(const Composed& c, sbx::Plan& plan) {
    if (std::none_of(plan.warnings.begin(), plan.warnings.end(), [](const sbx::Warning& w) { return w.once; })) return;
    const std::string path = sbx::said_path(tool_cache_base(c.home), c.root);
    if (why_cache_dir_unmakeable(sbx::paths::parent(path))) return;
    const auto text = sbx::launcher::read_small(AT_FDCWD, path, sbx::said_once::kMaxBytes);
    auto now = sbx::say_once(plan.warnings, text ? sbx::parse_said(*text) : std::vector<std::string>{});
    if (now.changed && !sbx::launcher::keep_file(path, sbx::said_text(now.said), "the warnings said for the root"))
        return;  // not kept: said again next time, as before
    plan.warnings = std::move(now.say);
}

// One line naming the variables left out of the command's environment (names
// only, never values), or nothing: `sbx plan` says why each was.
std::string removed_env_line(const std::vector<sbx::RemovedEnvVar>& removed) {
    if (removed.empty()) return {};
    std::string names;
    for (const auto& r : removed) names += (names.empty() ? "" : ", ") + sbx::printable_line_part(r.name);
    return "sbx: left out of the command's environment (may hold secrets): " + names +
           "; pass one with --env NAME (sbx plan says why each)\n";
}

// What sbx says before the command runs, on the first attempt only (not
// again on a later one): a root found above the current directory (that
// folder, not only this one, is the command's to write), and the variables left
// out. Nothing with --quiet or the settings' quiet.
std::string said_before(const RunArgs& a, const Composed& c, const sbx::Plan& plan) {
    if (a.quiet || c.policy.quiet.value || a.attempt != 1) return {};
    std::string out;
    if (!a.plan.settings.root_given() && c.root != c.cwd)
        out = "sbx: root " + c.root + ": " + sbx::root_why(c.where) + "\n";
    return out + removed_env_line(plan.env_removed);
}

// The plan, what sbx says before the command runs, and the root's group of
// running sandboxes when the launcher's steps run here.
struct Planned {
    sbx::Plan plan;
    std::string said;
    std::optional<sbx::AgentFileSource> agent;  // --agent-file's, where an `always` answer is written
    std::optional<sbx::GroupSnapshot> group;  // here: for the launcher's steps, released after them
    // Set instead of a plan: the command runs outside the sandbox (--unsandboxed),
    // as one line and with the rule that sends it there.
    std::optional<std::pair<std::string, std::string>> outside;
};

// A command that runs a program the agent file's shell skill blocks is
// refused. A command an excludedCommands pattern takes out of the sandbox is not
// confined as if nothing had (it would fail in ways nobody reads as the
// sandbox), nor run unconfined unasked: refused, unless --unsandboxed. Sets
// `out.outside` when it runs outside.
sbx::expected<void> route_outside(const RunArgs& a, const Composed& c, Planned& out) {
    const std::string line = shell_words(a.plan.command);
    SBX_TRY(refuse_blocked(c, line));
    const auto by = sbx::route::excluded_by(c.policy, line);
    if (!by) {
        if (a.unsandboxed) std::cerr << "sbx: --unsandboxed: nothing takes " << line << " out of the sandbox; it runs confined\n";
        return {};
    }
    const std::string why = sbx::route::describe(*by);
    // Only the agent's owner runs commands outside; anyone else gets them confined or not at all.
    if (a.unsandboxed && c.agent) {
        struct stat st {};
        if (::stat(c.agent->file.c_str(), &st) != 0 || st.st_uid != ::geteuid())
            return sbx::fail(sbx::Error(sbx::Errc::invalid_argument,
                                        line + " runs outside the sandbox by the settings (" + why +
                                            "), and --unsandboxed is refused: you (uid " + std::to_string(::geteuid()) +
                                            ") do not own the agent file, and a caller other than its owner gets only "
                                            "confined commands")
                                 .in_file(c.agent->file));
    }
    if (!a.unsandboxed)
        return sbx::fail(sbx::Errc::invalid_argument,
                         line + " runs outside the sandbox by the settings: " + why +
                             "; sbx run runs nothing unconfined unless asked: pass --unsandboxed to run it outside, or "
                             "take the pattern out of excludedCommands to run it confined");
    out.outside.emplace(line, why);
    return {};
}

// The settings read (then `settings_read` is called) and the plan made. The
// launcher takes the group's lock for itself when its steps run `here` (in
// this process, in the group's files as they are); otherwise it is released.
sbx::expected<Planned> plan_run(const RunArgs& a, bool here, Lap& lap,
                                const std::function<void(const Composed&)>& settings_read) {
    auto composed = compose(a.plan.settings, a.plan.home_root());
    SBX_TRY(composed);
    lap.step("sbx.settings");
    Planned out;
    if (auto routed = route_outside(a, *composed, out); !routed || out.outside) {
        composed->group->release();
        SBX_TRY(routed);
        return out;
    }
    settings_read(*composed);
    lap.restart();
#if defined(__linux__)
    refresh_git_record(*composed);
    lap.step("sbx.git-survey");
#endif
    auto made = plan_for(*composed, a.plan);
    if (made) say_warnings_once(*composed, *made);
    if (here && made) {
        composed->group->unlock();
        out.group.emplace(std::move(*composed->group));
    } else {
        composed->group->release();
    }
    SBX_TRY(made);
    out.said = said_before(a, *composed, *made);
    out.plan = std::move(*made);
    if (composed->agent)
        out.agent = agent_file_source(composed->agent->file, composed->home, a.plan.settings.skill_script);
    return out;
}

// The launcher's command line: the plan on `plan_fd`, the next attempt's argv
// on --again-fd (a descriptor made here), and the run's own options.
sbx::expected<std::vector<std::string>> launcher_args(const RunArgs& a, const std::string& launcher, int plan_fd,
                                                      const std::vector<std::string>& again) {
    std::vector<std::string> out{launcher, "--plan-fd", std::to_string(plan_fd), "--violations"};
    // `again` for the launcher's --again-fd, each word ending in a NUL.
    if (!again.empty()) {
        std::string words;
        for (const auto& w : again) words += w + '\0';
        auto again_fd = descriptor_holding(words, "sbx-again");
        SBX_TRY(again_fd);
        out.insert(out.end(), {"--again-fd", std::to_string(*again_fd)});
    }
    if (a.pty) out.push_back("--pty");
    if (a.no_pty) out.push_back("--no-pty");
    if (a.allow_clipboard_write) out.push_back("--allow-clipboard-write");
    out.insert(out.end(), {"--grace", std::to_string(a.grace), "--name", "sbx"});
    if (a.trace_fd >= 0) out.insert(out.end(), {"--trace-fd", std::to_string(a.trace_fd)});
    return out;
}

// The passed descriptors must survive the exec of the launcher, which hands
// them to the command.
sbx::expected<void> keep_open_for_launcher(const std::vector<int>& pass_fds) {
    for (const int pass : pass_fds) {
        const int flags = ::fcntl(pass, F_GETFD);
        if (flags == -1 || ((flags & FD_CLOEXEC) != 0 && ::fcntl(pass, F_SETFD, flags & ~FD_CLOEXEC) == -1))
            return sbx::fail(sbx::Error(sbx::Errc::internal, "--pass-fd " + std::to_string(pass) +
                                                                 ": cannot keep it open for the launcher: " +
                                                                 std::strerror(errno)));
    }
    return {};
}

// The launcher program runs the plan: this process becomes it.
int exec_launcher(const RunArgs& a, Lap& lap, const Planned& p, const std::vector<std::string>& again) {
    auto launcher = find_launcher(a.launcher);
    if (!launcher) return run_failed(launcher.error());
    // The plan goes in a memfd (elsewhere an unlinked file), read from its start:
    // a pipe would need a writer beside the launcher, and the terminal's standard
    // input stays the command's.
    auto fd = descriptor_holding(sbx::to_json(p.plan), "sbx-plan");
    if (!fd) return run_failed(fd.error());
    // Every passed descriptor was open before this one was made, so the kernel
    // cannot have given it one of their numbers.
    if (std::binary_search(p.plan.pass_fds.begin(), p.plan.pass_fds.end(), *fd))
        return run_failed(sbx::Error(sbx::Errc::internal, "the plan's descriptor " + std::to_string(*fd) +
                                                              " is one the command is passed"));
    auto args = launcher_args(a, *launcher, *fd, again);
    if (!args) return run_failed(args.error());
    if (auto kept = keep_open_for_launcher(p.plan.pass_fds); !kept) return run_failed(kept.error());
    std::cerr << p.said;
    lap.step("sbx.exec-prep");
    if (lap.trace().on()) {
        const int flags = ::fcntl(a.trace_fd, F_GETFD);
        if (flags != -1) ::fcntl(a.trace_fd, F_SETFD, flags & ~FD_CLOEXEC);
    }
    std::vector<char*> argv;
    for (auto& word : *args) argv.push_back(word.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    return run_failed(sbx::Error(sbx::Errc::io_error, std::string("cannot run the launcher: ") + std::strerror(errno))
                          .in_file(*launcher));
}

#if defined(__linux__)
// Here the launcher's steps run in this process (unless --launcher names a
// program); bubblewrap starts at once, while the settings are read and the plan
// is made (LinuxPlatform::start_early), and again if the settings say otherwise.
int plan_and_launch(const RunArgs& a, bool here, Lap& lap, const std::vector<std::string>& again,
                    std::optional<sbx::launcher::Reaper>& reaper) {
    sbx::linux_sandbox::LinuxPlatform platform;
    platform.set_program("sbx");  // its messages are sbx's
    sbx::launcher::Launcher launcher(platform, launcher_options(a, again));
    if (here) platform.start_early(launcher, early_facts(a.plan, nullptr), *reaper);
    lap.restart();
    auto planned = plan_run(a, here, lap, [&](const Composed& c) {
        if (here) platform.start_early(launcher, early_facts(a.plan, &c), *reaper);
    });
    if (!planned) return run_failed(planned.error());
    if (planned->outside) {
        platform.cancel_early();
        if (reaper) reaper->dismiss();
        return run_outside(a.plan.command, planned->outside->first, planned->outside->second);
    }
    lap.step("sbx.plan");
    if (!here) return exec_launcher(a, lap, *planned, again);
    std::cerr << planned->said;
    // Answers that hold past this command are sbx's to keep (answers.hpp).
    GivenAnswers given;
    const std::string& session = a.plan.answers;
    launcher.set_answering(answer_offers(session, planned->agent),
                           [&given](const sbx::net::HostTarget& t, const sbx::launcher::Answer& ans) { given.add(t, ans); });
    lap.step("sbx.launch-prep");
    int status = sbx::launcher::kFailedBeforeCommand;
    try {
        status = launcher.run_plan(planned->plan, std::move(reaper));
    } catch (const std::exception& e) {
        std::cerr << platform.name() << ": INTERNAL: " << e.what() << "\n";
    }
    if (planned->group) planned->group->release();
    keep_answers(session, planned->agent, given.take());
    return status;
}
#else
// The plan goes to the launcher program beside sbx.
int plan_and_launch(const RunArgs& a, bool, Lap& lap, const std::vector<std::string>& again,
                    std::optional<sbx::launcher::Reaper>&) {
    auto planned = plan_run(a, false, lap, [](const Composed&) {});
    if (!planned) return run_failed(planned.error());
    if (planned->outside) return run_outside(a.plan.command, planned->outside->first, planned->outside->second);
    lap.step("sbx.plan");
    return exec_launcher(a, lap, *planned, again);
}
#endif

}  // namespace

int run_run(RunArgs& a) {
    wait_before_attempt(a.attempt);
    const sbx::launcher::Trace trace(a.trace_fd);
    if (trace.on() && ::fcntl(a.trace_fd, F_GETFD) < 0)
        return run_failed(sbx::Error(sbx::Errc::invalid_argument,
                                     "--trace-fd " + std::to_string(a.trace_fd) + ": the descriptor is not open"));
    trace.step("sbx.options", a.started);
    Lap lap(trace);
    const bool here = kLaunchesItself && a.launcher.empty();
    a.plan.launcher = a.launcher;
    // The launcher's reaper, started first while this process is small (see
    // Launcher::run_plan); dismissed, and gone, when nothing runs.
    std::optional<sbx::launcher::Reaper> reaper;
    if (here) {
        auto started = sbx::launcher::Reaper::start();
        if (!started) return run_failed(started.error());
        reaper.emplace(std::move(*started));
        lap.step("launcher.reaper");
    }
    struct DismissUnused {
        std::optional<sbx::launcher::Reaper>& r;
        ~DismissUnused() {
            if (r) r->dismiss();
        }
    } dismiss_unused{reaper};
    auto fds = descriptors_to_pass(a.plan.pass_fd_args);
    if (!fds) return run_failed(fds.error());
    a.plan.pass_fds = std::move(*fds);
    auto again = next_attempt_argv(a.attempt);
    if (!again) return run_failed(again.error());
    return plan_and_launch(a, here, lap, *again, reaper);
}

}  // namespace sbx::cli
