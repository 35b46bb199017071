// launchers/git_audit.hpp - after the command: neutralise what it left for git outside.
//
// Once the command and every process of its sandbox are gone, sbx-linux walks each
// of the plan's filesystem.gitAudit directories, all of it: every directory, at
// any depth, behind any number of entries, a `.git` directory's inside too. A
// directory of the user's that the command left unreadable or unsearchable (mode
// 111, 000) is given u+rx for the audit and its mode back at the end; one that
// cannot be looked into is a failure. Every git directory found (a directory
// holding HEAD and objects and refs, or HEAD and commondir: `.git` directories,
// bare repositories, linked worktrees' and submodules' git directories) but the
// root's own (protected during the run) is then checked: a `config`,
// `config.worktree`, `commondir` or hook made or changed since `start` (its ctime,
// which no program can set back) is renamed to NAME.sbx-disabled when
// sbx::git_audit says git would run something through it; its config, changed or
// not, is followed to the hooks directories it names (core.hooksPath, relative to
// each of its working trees) and the files it includes, and a hook or included
// file made or changed there during the run is renamed too, as is a symbolic link
// made during the run on the way to one. So is a `.git` symlink made during the
// run, and a `.git` file made during the run that names a git directory outside
// every audited one. What cannot be made safe is a failure: the run says so in the
// violations block and exits with git_audit::kAuditFailedStatus. The walk reads
// directories with their entry types (no stat per file), never follows a symbolic
// link, and keeps at most kOpenDirectories of them open, reopening a parent
// through `..` (checked to be the same directory) when it comes back to it.
#pragma once

#include <time.h>

#include <cstddef>
#include <string>
#include <vector>

#include "sbx/rules/git_audit.hpp"

namespace sbx::launcher {

// The directories of the walk held open at once; the walk itself has no limit of
// depth or size.
inline constexpr std::size_t kOpenDirectories = 64;

struct GitAuditResult {
    std::vector<sbx::GitNeutralised> neutralised;
    // What could not be looked at or renamed: git there may run what the command
    // planted. The run's exit status says so (git_audit::kAuditFailedStatus).
    std::vector<sbx::GitAuditFailure> failures;
    // What went wrong without leaving anything armed (a mode not put back).
    std::vector<std::string> warnings;
};

// The clock the kernel stamps file times with (CLOCK_REALTIME_COARSE): a time taken
// with it before the command starts is at or before every ctime the command causes.
timespec audit_clock();

// Audits `dirs` (absolute, normalised, without symlinks) for a run that started at
// `start`. `root`: the plan's root, whose own `.git` is protected during the run.
GitAuditResult audit_git(const std::string& root, const std::vector<std::string>& dirs, const timespec& start);

}  // namespace sbx::launcher
