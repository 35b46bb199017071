// launchers/shared/launcher_main.cpp - see launcher_main.hpp.
#include "shared/launcher_main.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>

#include "sbx/core/json.hpp"
#include "sbx/io/fs_view_disk.hpp"
#include "sbx/plan/read_plan.hpp"
#include "sbx/plan/verify_plan.hpp"
#include "shared/signals.hpp"
#include "shared/tool_cache.hpp"

namespace sbx::launcher {

namespace {

int usage_of(const Platform& platform, const std::string& message) {
    std::cerr << platform.program() << ": USAGE: " << message << "\n" << platform.usage_lines();
    return kFailedBeforeCommand;
}

}  // namespace

bool runs_filtered() {
    std::ifstream in("/proc/self/status");
    bool no_new_privs = false, filtered = false;
    for (std::string line; std::getline(in, line);) {
        if (line == "NoNewPrivs:\t1") no_new_privs = true;
        if (line == "Seccomp:\t2") filtered = true;
    }
    return no_new_privs && filtered;
}

int Launcher::fail_before(const sbx::Error& e) const {
    plan_again_if_stale(e, options_.again, program());
    std::cerr << program() << ": " << sbx::errc_name(e.code) << ": " << sbx::to_string(e) << "\n";
    if (e.code == sbx::Errc::unavailable && runs_filtered()) std::cerr << program() << ": " << kNestedNote << "\n";
    return kFailedBeforeCommand;
}

int Launcher::fail_reported(const sbx::Error& e) {
    report_.error_event(e);
    return fail_before(e);
}

int Launcher::usage(const std::string& message) const { return usage_of(platform_, message); }

void Launcher::warn(std::string_view message) const { std::cerr << program() << ": warning: " << message << "\n"; }

void Launcher::warn_reported(std::string_view message) {
    report().warning_event(message);
    warn(message);
}

sbx::expected<void> make_tmpdir(const sbx::Plan& plan, Reaper& reaper, std::vector<Leftover>& made) {
    if (::mkdir(plan.tmpdir.c_str(), 0700) != 0)
        return sbx::fail(sbx::Error(sbx::Errc::stale_plan, std::string("cannot make the temporary directory: ") +
                                                               std::strerror(errno))
                             .in_file(plan.tmpdir));
    made.push_back({LeftoverKind::tmpdir, plan.tmpdir, 0, 0});
    reaper.made(made.back());
    return {};
}

LimitLines limit_lines(const sbx::Plan& plan, int status, const sbx::StderrScanner* scanner,
                       const KernelLimitCounts& counts) {
    LimitLines out;
    const auto reached = [&](sbx::Limit l, std::string_view what) {
        if (const auto& pl = plan.limits[static_cast<std::size_t>(l)]) out.lines.push_back(sbx::limit_line(l, *pl, what));
    };
    if (timed_out())
        reached(sbx::Limit::timeout, grace_ran_out() ? sbx::kTimedOutKilled : sbx::kTimedOut);
    if (status > 128)
        if (auto line = sbx::limit_signal_line(plan, status - 128); !line.empty()) out.lines.push_back(std::move(line));
    out.ended = !out.lines.empty();
    const auto times = [](std::uint64_t n) { return n == 1 ? std::string("once") : std::to_string(n) + " times"; };
    // What the kernel counted, where a cgroup held the limit; else what the command said.
    const auto said = [&](sbx::Limit l) { return scanner != nullptr ? scanner->limit_sign_line(l) : std::string(); };
    if (counts.processes) {
        if (counts.forks_refused > 0)
            reached(sbx::Limit::processes, "a fork of the command's failed at this limit, " + times(counts.forks_refused) +
                                               " (its cgroup's count)");
    } else if (auto line = sbx::limit_said_line(plan, sbx::Limit::processes, said(sbx::Limit::processes));
               !line.empty()) {
        out.lines.push_back(std::move(line));
    }
    if (counts.memory) {
        if (counts.oom_kills > 0)
            reached(sbx::Limit::memory, "the kernel ended a process of the command at this limit, " +
                                            times(counts.oom_kills) + " (its cgroup's count)");
    } else if (auto line = sbx::limit_said_line(plan, sbx::Limit::memory, said(sbx::Limit::memory)); !line.empty()) {
        out.lines.push_back(std::move(line));
    }
    // A command that failed after saying so was ended by it, as far as anyone can tell.
    out.ended = out.ended || (!out.lines.empty() && status != 0);
    return out;
}

void Launcher::clean_up(const std::vector<Leftover>& made, Reaper& reaper, RootGroup* group) const {
    auto problems = remove_leftovers(made);
    if (group != nullptr) {
        const auto t = Trace::now();
        auto more = group->leave();
        problems.insert(problems.end(), more.begin(), more.end());
        options_.trace.step("launcher.group-leave", t);
    }
    for (const auto& p : problems) warn(p);
    // Whatever we could not remove, the reaper cannot either.
    reaper.dismiss();
}

sbx::expected<sbx::Plan> Launcher::read_plan() {
    const int fd = options_.plan_fd;
    const std::string origin = fd == 0 ? "standard input" : "fd " + std::to_string(fd);
    auto text = sbx::read_all(fd, sbx::json::kMaxDocumentBytes, origin, sbx::Errc::invalid_plan);
    SBX_TRY(text);
    if (fd != 0) ::close(fd);
    return sbx::parse_plan(*text, origin);
}

// failIfUnavailable: false and no sandbox here: the command runs as it is, in a
// temporary directory of its own, and the report says it ran unsandboxed.
int Launcher::run_unconfined_fallback(const sbx::Plan& plan, Reaper& reaper, const sbx::Error& why) {
    std::vector<Leftover> made;
    if (auto r = make_tmpdir(plan, reaper, made); !r) {
        reaper.dismiss();
        return fail_reported(r.error());
    }
    std::cerr << program()
              << ": warning: running the command WITHOUT a sandbox, as the plan allows (failIfUnavailable: false): "
              << sbx::to_string(why) << "\n";
    const int status = run_unconfined(plan);
    clean_up(made, reaper);
    // No audit of gitAudit here: the command ran without any sandbox, as the
    // plan allowed, and could have written anything anywhere.
    report_.exit_event(false, "unavailable", status);
    if (caught_signal() != 0) die_of(caught_signal());
    return status;
}

int Launcher::run_plan() {
    const auto t = Trace::now();
    auto plan = read_plan();
    if (!plan) return fail_reported(plan.error());
    options_.trace.step("launcher.read-plan", t);
    return run_plan(*plan);
}

int Launcher::run_plan(const sbx::Plan& plan, std::optional<Reaper> reaper) {
    const Trace& trace = options_.trace;
    // Until the steps below take it (they dismiss it themselves), nothing is
    // made: a reaper given has nothing to remove when this returns early.
    bool taken = false;
    struct Dismiss {
        std::optional<Reaper>& r;
        const bool& taken;
        ~Dismiss() {
            if (r && !taken) r->dismiss();
        }
    } dismiss_early{reaper, taken};
    for (const auto& w : plan.warnings)
        if (platform_.shows(w)) warn(sbx::to_string(w));
    platform_.warn(plan);
    if (auto fds = check_pass_fds(plan, {options_.plan_fd, options_.report_fd, options_.control_fd, options_.trace.fd()}); !fds)
        return fail_reported(fds.error());

    auto t = Trace::now();
    const auto unavailable = platform_.unavailable(plan);
    trace.step("launcher.probe", t);
    if (unavailable && plan.fail_if_unavailable) return fail_reported(*unavailable);
    if (unavailable || platform_.verifies_first()) {
        sbx::DiskFs disk;
        if (auto v = sbx::verify_plan(plan, disk); !v) {
            // A stale plan's next attempt replaces this program: a reaper given goes first.
            if (reaper) {
                reaper->dismiss();
                reaper->wait();
            }
            return fail_reported(v.error());
        }
    }

    // The project's tool cache home persists between its runs: made here, never removed.
    t = Trace::now();
    if (plan.tool_cache)
        if (auto r = make_tool_cache(plan.tool_cache->path, ::getuid()); !r) return fail_reported(r.error());
    trace.step("launcher.tool-cache", t);

    install_signal_handlers();
    if (!reaper) {
        t = Trace::now();
        auto started = Reaper::start();
        if (!started) return fail_before(started.error());
        reaper.emplace(std::move(*started));
        trace.step("launcher.reaper", t);
    }
    taken = true;
    if (unavailable) return run_unconfined_fallback(plan, *reaper, *unavailable);
    return platform_.run(*this, plan, *reaper);
}

void say_grace_ran_out(const Launcher& l) {
    if (!grace_ran_out()) return;
    const int sig = grace_signal();
    const char* name = sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "SIGQUIT";
    l.warn(std::string("the command was still running ") + std::to_string(l.options().grace) + " s after " + name +
           (timed_out() ? " for its timeout" : " came") + ": its sandbox was killed (--grace SECONDS gives it longer)");
}

int launcher_main(int argc, char** argv, Platform& platform) {
    const auto started = Trace::now();
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        const std::function<const char*()> next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        if (a == "--plan-fd" || a == "--report-fd" || a == "--control-fd") {
            int& out = a == "--plan-fd" ? o.plan_fd : a == "--report-fd" ? o.report_fd : o.control_fd;
            if (auto why = take_fd_option(a, next(), out); !why.empty()) return usage_of(platform, why);
        } else if (a == "--trace-fd") {
            int fd = -1;
            if (auto why = take_fd_option(a, next(), fd); !why.empty()) return usage_of(platform, why);
            if (fd < 3) return usage_of(platform, "--trace-fd needs a descriptor above 2");
            o.trace = Trace(fd);
        } else if (a == "--again-fd") {
            if (auto why = take_again_option(next(), o.again); !why.empty()) return usage_of(platform, why);
        } else if (a == "--violations") {
            o.print_violations = true;
        } else if (a == "--pty" || a == "--no-pty") {
            const PtyMode mode = a == "--pty" ? PtyMode::always : PtyMode::never;
            if (o.pty != PtyMode::automatic && o.pty != mode) return usage_of(platform, "--pty and --no-pty contradict each other");
            o.pty = mode;
        } else if (a == "--allow-clipboard-write") {
            o.allow_clipboard_write = true;
        } else if (a == "--name") {
            const char* v = next();
            const std::string_view n = v == nullptr ? std::string_view() : std::string_view(v);
            if (n.empty() || n.size() > 32 ||
                !std::all_of(n.begin(), n.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }))
                return usage_of(platform, "--name needs a name of 1 to 32 letters a-z, digits and '-'");
            platform.set_program(std::string(n));
        } else if (a == "--grace") {
            if (auto why = take_grace_option(next(), o.grace); !why.empty()) return usage_of(platform, why);
        } else if (a == "--doctor") {
            o.doctor = true;
        } else if (a == "--json") {
            o.json = true;
        } else if (a == "--help" || a == "-h") {
            std::cout << platform.help_text();
            return 0;
        } else if (std::string why; platform.take_option(a, next, why)) {
            if (!why.empty()) return usage_of(platform, why);
        } else {
            return usage_of(platform, "unknown argument '" + std::string(a) + "'");
        }
    }
    Launcher launcher(platform, std::move(o));
    const Options& opts = launcher.options();
    if (opts.doctor) return platform.doctor(launcher);
    if (auto why = platform.check_options(opts); !why.empty()) return launcher.usage(why);
    if (opts.control_fd >= 0 && opts.report_fd < 0)
        return launcher.usage("--control-fd answers questions asked on --report-fd: give both");
    launcher.trace().step("launcher.options", started);
    try {
        if (auto status = platform.other_mode(launcher)) return *status;
        return launcher.run_plan();
    } catch (const std::exception& e) {
        std::cerr << platform.name() << ": INTERNAL: " << e.what() << "\n";
        return kFailedBeforeCommand;
    }
}

}  // namespace sbx::launcher
