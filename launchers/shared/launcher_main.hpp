// launchers/shared/launcher_main.hpp - the one skeleton of both launchers (sbx-linux,
// sbx-mac): the command line, reading the plan, failing before the command, the
// unconfined fallback and the exit; each launcher fills in a Platform.
//
// A launcher's main is launcher_main(argc, argv, platform). The skeleton parses
// the options both share (--plan-fd, --report-fd, --control-fd, --again-fd,
// --trace-fd, --violations, --pty, --no-pty, --doctor, --json, --help) and hands the rest to the platform;
// then it reads the plan, shows its warnings, checks the descriptors it passes,
// asks the platform whether the sandbox can run here, checks the disk, makes the
// tool cache home, starts the reaper, and either runs the command without a
// sandbox (failIfUnavailable: false) or hands over to the platform's run step.
// Every failure before the command is one line "PROGRAM: CODE: message", an error
// event, and exit status 125 (or a new plan, with --again-fd and a stale one).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/trace.hpp"
#include "sbx/core/error.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/plan/plan.hpp"
#include "shared/common.hpp"
#include "shared/leftovers.hpp"
#include "shared/root_group.hpp"
#include "shared/signals.hpp"
#include "shared/terminal.hpp"

namespace sbx::launcher {

// What the shared options said.
struct Options {
    int plan_fd = 0;  // standard input unless --plan-fd
    int report_fd = -1;
    int control_fd = -1;
    Trace trace;  // --trace-fd (trace.hpp)
    std::vector<std::string> again;  // --again-fd's program and arguments
    bool print_violations = false;
    PtyMode pty = PtyMode::automatic;  // --pty, --no-pty (terminal.hpp)
    bool allow_clipboard_write = false;  // --allow-clipboard-write: OSC 52 passes the terminal's relay
    int grace = kDefaultGrace;  // --grace SECONDS (signals.hpp)
    bool doctor = false;
    bool json = false;
    // Set by sbx run, which keeps longer answers itself (none of the launcher
    // programs' options): what the terminal's question offers, and who is told
    // each answer (Answering).
    AnswerOffers offers;
    std::function<void(const sbx::net::HostTarget&, const Answer&)> on_answer;
    // Set by a session's holder: who answers the questions (Answering::asker).
    std::function<std::optional<Answer>(const sbx::net::HostTarget&, const std::string& tag)> asker;
};

class Launcher;

// What each launcher fills in: its name and usage, its own options, its doctor,
// and its steps around the command.
class Platform {
public:
    virtual ~Platform() = default;

    // "sbx-linux": the start of every message.
    virtual const char* name() const = 0;
    // The name its messages start with: name(), unless `--name` (or sbx, running
    // the launcher's steps itself) gave another, so that `sbx run` says `sbx:`
    // however its launcher runs.
    const char* program() const { return program_.empty() ? name() : program_.c_str(); }
    void set_program(std::string p) { program_ = std::move(p); }
    // The lines after a USAGE message ("usage: ...\n"), and --help's text.
    virtual std::string_view usage_lines() const = 0;
    virtual std::string_view help_text() const = 0;
    // An option of this launcher's own: false when `arg` is none. `next` takes
    // its value (nullptr when there is none); a usage message goes into `why`.
    virtual bool take_option(std::string_view arg, const std::function<const char*()>& next, std::string& why) = 0;
    // After --doctor: a usage message when the options do not go together, else empty.
    virtual std::string check_options(const Options& o) const = 0;
    // --doctor: can the sandbox run here; 0 when it can, 1 when not.
    virtual int doctor(Launcher& l) = 0;
    // A mode of this launcher's own that runs nothing (sbx-mac's
    // --print-profile): its exit status, or nullopt to run the plan.
    virtual std::optional<int> other_mode(Launcher&) { return std::nullopt; }

    // Whether the launcher shows this plan warning: one about another platform's
    // sandbox is not this one's to show.
    virtual bool shows(const sbx::Warning&) const { return true; }
    // What this platform says about the plan before anything is made.
    virtual void warn(const sbx::Plan&) {}
    // Why the sandbox cannot run here, or nullopt when it can. What it made to
    // find out (the seccomp program) the platform keeps for run().
    virtual std::optional<sbx::Error> unavailable(const sbx::Plan& plan) = 0;
    // Whether the disk is checked against the plan before anything is made;
    // otherwise run() checks it itself (sbx-linux: under the root group's lock).
    virtual bool verifies_first() const = 0;
    // The confined run, from the reaper's start to the command's exit status.
    virtual int run(Launcher& l, const sbx::Plan& plan, Reaper& reaper) = 0;

private:
    std::string program_;
};

// One run of a launcher: its platform, what its command line said, and its
// report. Passed to every step; nothing of it is global.
class Launcher {
public:
    Launcher(Platform& platform, Options options)
        : platform_(platform), options_(std::move(options)), report_(options_.report_fd) {}
    Launcher(const Launcher&) = delete;
    Launcher& operator=(const Launcher&) = delete;

    const char* program() const { return platform_.program(); }
    const Options& options() const { return options_; }
    const Trace& trace() const { return options_.trace; }
    Report& report() { return report_; }
    // Who answers the proxy's questions.
    // What the terminal's question offers and who is told each answer (sbx
    // run, once it knows the session's file and the agent file).
    void set_answering(AnswerOffers offers, std::function<void(const sbx::net::HostTarget&, const Answer&)> told) {
        options_.offers = std::move(offers);
        options_.on_answer = std::move(told);
    }
    Answering answering() const {
        return Answering{options_.control_fd, program(), options_.offers, options_.on_answer, options_.asker};
    }

    // Failed before the command: runs --again-fd's program instead when the plan
    // is stale, else says "PROGRAM: CODE: message" and returns 125.
    int fail_before(const sbx::Error& e) const;
    // The same, after an error event on the report.
    int fail_reported(const sbx::Error& e);
    // "PROGRAM: USAGE: message" and the usage lines; 125.
    int usage(const std::string& message) const;
    // "PROGRAM: warning: message".
    void warn(std::string_view message) const;
    // The same, and a warning event on the report.
    void warn_reported(std::string_view message);

    // Removes what was made (and leaves the root's group, when one was joined),
    // warning about what could not be removed, and dismisses the reaper.
    void clean_up(const std::vector<Leftover>& made, Reaper& reaper, RootGroup* group = nullptr) const;

    // The plan from --plan-fd (standard input by default), read whole and
    // parsed strictly; the descriptor is closed after.
    sbx::expected<sbx::Plan> read_plan();
    // The whole run of a plan: read, checked, and carried out (see the top).
    int run_plan();
    // The same for a plan this process made (`sbx run`): nothing to read.
    // `reaper`: one this process started before it made anything of its own
    // (`sbx run` starts it first, while the process is small: every page it
    // writes after a fork costs a copy); else one is started here.
    int run_plan(const sbx::Plan& plan, std::optional<Reaper> reaper = std::nullopt);

private:
    int run_unconfined_fallback(const sbx::Plan& plan, Reaper& reaper, const sbx::Error& why);

    Platform& platform_;
    Options options_;
    Report report_;
};

// Makes the plan's temporary directory, recorded in `made` and with the reaper.
// STALE_PLAN when it cannot (something is there already).
sbx::expected<void> make_tmpdir(const sbx::Plan& plan, Reaper& reaper, std::vector<Leftover>& made);

// The violations block's lines for the limits the command reached, and
// whether one of them ended it (then the launcher exits sbx::kLimitStatus).
struct LimitLines {
    std::vector<std::string> lines;
    bool ended = false;
};

// What the kernel counted of the sandbox's limits, where a cgroup of its own
// held them (sbx-linux's, linux/cgroup.hpp).
struct KernelLimitCounts {
    bool processes = false;           // a cgroup held the processes limit and counted forks_refused
    bool memory = false;              // and the memory limit, and counted oom_kills
    std::uint64_t forks_refused = 0;  // forks that failed at the processes limit
    std::uint64_t oom_kills = 0;      // processes the kernel killed at the memory limit
};

// By how the command ended (`status`, 128+N for signal N), whether its timeout
// ran out (signals.hpp), and what its standard error said (`scanner`, where
// the launcher reads it: a fork or an allocation that failed under the
// processes or memory limit, which the command sees and says itself; a
// command that said so and failed counts as ended by it), or, where a cgroup
// counted them (`counts`), what the kernel counted instead.
LimitLines limit_lines(const sbx::Plan& plan, int status, const sbx::StderrScanner* scanner,
                       const KernelLimitCounts& counts = {});

// A launcher's main: parses the command line and runs what it asks for. Its
// exit status is the command's, or 125, 126, 127 (see docs/plan.md).
// Whether this process runs confined as every command of an sbx sandbox does:
// with a seccomp filter and no new privileges (/proc/self/status). So do the
// services some machines harden, where a sandbox may still be made: this only
// explains a failure (kNestedNote, after an UNAVAILABLE), it refuses nothing.
bool runs_filtered();
inline constexpr std::string_view kNestedNote =
    "this runs inside a sandbox already (a seccomp filter and no new privileges, as in an sbx sandbox), where no "
    "other can be made: run the command as it is, and it is confined by the sandbox around it";

// After a signal went to the command's group: when the grace period ran out and
// the sandbox was killed, one line that says so, and how to give it longer.
void say_grace_ran_out(const Launcher& l);

int launcher_main(int argc, char** argv, Platform& platform);

}  // namespace sbx::launcher
