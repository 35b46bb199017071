// session_repos.hpp - repositories a session's commands make: found, audited and
// protected before the next command runs (docs/sessions.md).
//
// `sbx run` surveys the root before it plans each run, and its plan protects
// every repository it finds by mounts. A session's mounts are made once, so
// before each of its runs the holder surveys the root the same way (survey_git,
// which lists only the directories changed since the last survey) and, where a
// repository is there that was not before:
//   1. audits it as the audit after a run does (audit_git, for what was made
//      since the session started): a hook or config that would run something
//      is renamed to NAME.sbx-disabled now, not at the session's end;
//   2. writes the root's record with it (keep_git_record), as `sbx run`'s
//      audit does, so that `sbx run` beside the session protects it too;
//   3. makes the plan `sbx run` would make now, of the session's own policy
//      and options, and adds to the running sandbox what that plan adds
//      inside the root: pins, read-only binds and their placeholders
//      (launchers/linux/session_mounts.hpp);
// and tells that run's client what it did, once for each repository (ten by
// name at most, the rest counted). Where a step fails, the line says so and
// what still holds: the audit when the session stops.
#pragma once

#include <time.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sbx/plan/plan.hpp"

#include "compose.hpp"
#include "options.hpp"

#include "linux/git_audit.hpp"       // launchers/: the survey and the audit
#include "linux/session_mounts.hpp"  // launchers/: the mounts added to the sandbox

namespace sbx::cli {

class SessionRepositories {
public:
    // `composed`, `args` and `plan`: the session's, which outlive this; `id`:
    // the session's, for the lines; `start`: audit_clock() before the session's
    // sandbox started. Surveys the root once, for what is there at the start.
    SessionRepositories(const Composed& composed, const PlanArgs& args, const sbx::Plan& plan, std::string id,
                        timespec start);

    // Before each run, on the holder's thread: the lines for that run's client.
    std::vector<std::string> before_run();

    // The sandbox's added mounts while it runs, and nullptr once it has ended
    // (LinuxPlatform::SessionHooks::mounts); from the launcher's thread.
    void serve(sbx::linux_sandbox::SessionMounts* mounts);

    // The repositories made during the session at most ten are named.
    static constexpr std::size_t kMaxNamed = 10;

private:
    // Steps 1 to 3 for the repositories in `fresh` (new since the last run) and
    // `again` (whose mounts a command kept from being made); the lines.
    std::vector<std::string> protect(const std::vector<std::string>& fresh, const std::vector<std::string>& again);
    // Step 3's mounts: what `later` adds that is not made yet. `why_not` says
    // why none could be.
    sbx::linux_sandbox::SessionMounts::Result mount(const sbx::Plan& later, std::string& why_not);

    const Composed& composed_;
    const PlanArgs& args_;
    const sbx::Plan& plan_;
    std::string id_;
    timespec start_;
    sbx::launcher::GitSurvey surveyed_;
    std::set<std::string> known_;
    std::set<std::string> retry_;                             // their mounts to be tried again
    std::set<std::pair<sbx::MountKind, std::string>> applied_;  // the mounts made
    std::mutex mounts_mutex_;
    sbx::linux_sandbox::SessionMounts* mounts_ = nullptr;  // under mounts_mutex_
};

}  // namespace sbx::cli
