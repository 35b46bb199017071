// launchers/linux/git_audit.hpp - after the command: neutralise what it left for git outside.
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

#include "sbx/core/expected.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "sbx/rules/git_audit.hpp"
#include "sbx/rules/git_record.hpp"

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
    // The repositories found inside the root but its own, for the record the next
    // plan protects them from (keep_git_record): working trees holding a `.git`,
    // bare git directories; none inside a `.git` directory (a submodule's, a linked
    // worktree's git directory is found through its repository).
    std::vector<sbx::RecordedRepository> repositories;
};

// The clock the kernel stamps file times with (CLOCK_REALTIME_COARSE): a time taken
// with it before the command starts is at or before every ctime the command causes.
timespec audit_clock();

// Audits `dirs` (absolute, normalised, without symlinks) for a run that started at
// `start`. `root`: the plan's root, whose own `.git` is protected during the run.
// Once walked, whatever stands at one of `names` (the plan's filesystem.neutralise,
// each missing when the command started) is renamed as a neutralised file is,
// kind "protected": a file, a directory or a symbolic link alike, by its name;
// and so is every entry of a `patterns` directory (the plan's
// filesystem.neutraliseNew) its pattern matches but that is not one of the
// names present when the plan was made.
GitAuditResult audit_git(const std::string& root, const std::vector<std::string>& dirs, const timespec& start,
                         const std::vector<sbx::NeutraliseOp>& names = {},
                         const std::vector<sbx::NeutraliseNewOp>& patterns = {});

// What a survey of a root found: the repositories under it as the audit finds
// them (GitAuditResult::repositories), and the directory stamps of the root
// (sbx/rules/git_record.hpp): every directory it looked at but those inside a
// `.git`, with its ctime, or 0.0 where that ctime is too recent to be trusted
// (within 2 s of the survey's start, which covers filesystems that keep times to
// the second or two: a change made after the survey looked could carry the same
// ctime).
struct GitSurvey {
    std::vector<sbx::RecordedRepository> repositories;
    std::vector<sbx::DirectoryStamp> directories;
};

// The repositories under `root` (absolute, normalised, without symlinks), before a
// command runs: the audit's walk, but what cannot be looked into is passed over
// (the audit after the run looks again), `.git` directories are not looked below,
// and nothing is changed. With `known` (the record and the stamps of an earlier
// survey), a directory whose ctime is its stamp's is not listed: its
// subdirectories are the stamped ones, and the repositories recorded at it stand.
GitSurvey survey_git(const std::string& root, const GitSurvey* known = nullptr);

// Before a run: the record at `record` and the stamps at `stamps` (both as the
// plan's filesystem.gitRecord is made, under the same base) brought up to date
// for `root` by survey_git, which lists only the directories changed since the
// stamps were kept; the whole root where there are no stamps, or no record. A
// failure names the file: the run goes on, with the record as it was.
sbx::expected<void> refresh_git_record(const std::string& record, const std::string& stamps, const std::string& root);

// Writes the record at `path` (the plan's filesystem.gitRecord): `found`, and
// what the record held outside every directory of `audited` (another worktree's
// root shares the record's folder, not its entries). Makes its folder as
// make_tool_cache does (the user's own, mode 0700, no symlink on the way); the
// file is written beside it and renamed over it, and left alone when nothing
// changed. A failure names the path: the run goes on, and the next plan protects
// only what git leads to from the root.
sbx::expected<void> keep_git_record(const std::string& path, const std::vector<std::string>& audited,
                                    const std::vector<sbx::RecordedRepository>& found);

}  // namespace sbx::launcher
