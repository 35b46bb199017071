// launchers/git_audit.hpp - after the command: neutralise what it left for git outside.
//
// Once the command and every process of its sandbox are gone, sbx-linux walks each
// of the plan's filesystem.gitAudit directories and finds every git directory in it:
// `.git` directories, the targets of `.git` files and of `.git` symlinks that lie in
// an audited directory, bare repositories (a directory holding HEAD, objects and
// refs), and the git directories under each one's `modules/` and `worktrees/`. The
// root's own `.git` is the exception: its files are protected while the command
// runs, so only its `modules/` and `worktrees/` are looked into. In each, a
// `config`, `config.worktree`, `commondir` or hook made or changed since `start`
// (its ctime, which no program can set back) is renamed to NAME.sbx-disabled when
// sbx::git_audit says git would run something through it; so is a `.git` symlink
// made during the run, and a `.git` file made during the run that names a git
// directory outside every audited one (neither is followed). The walk reads
// directories with their entry types (no stat per file), never follows a symbolic
// link, opens every directory from the one above it, and stops after kMaxEntries
// entries with a warning.
#pragma once

#include <time.h>

#include <cstddef>
#include <string>
#include <vector>

#include "sbx/rules/git_audit.hpp"

namespace sbx::launcher {

// Entries looked at over one audit, and directories deep, before it stops.
inline constexpr std::size_t kMaxAuditEntries = 200000;
inline constexpr int kMaxAuditDepth = 200;

struct GitAuditResult {
    std::vector<sbx::GitNeutralised> neutralised;
    // What could not be looked at or renamed, one line each: said loudly, since a
    // repository there may still run what the command planted.
    std::vector<std::string> warnings;
};

// The clock the kernel stamps file times with (CLOCK_REALTIME_COARSE): a time taken
// with it before the command starts is at or before every ctime the command causes.
timespec audit_clock();

// Audits `dirs` (absolute, normalised, without symlinks) for a run that started at
// `start`. `root`: the plan's root, whose own `.git` is protected during the run.
GitAuditResult audit_git(const std::string& root, const std::vector<std::string>& dirs, const timespec& start);

}  // namespace sbx::launcher
