#!/usr/bin/env bash
# The git commands of an agent's session, run in a repository git_fixture made
# (tools_test.sh): each step prints the command, its output and its status, so
# that a run inside sbx and one outside can be compared line by line.
set -u
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid GIT_COMMITTER_NAME=t
export GIT_COMMITTER_EMAIL=t@example.invalid GIT_AUTHOR_DATE=2026-01-01T00:00:00Z
export GIT_COMMITTER_DATE=2026-01-01T00:00:00Z
step() {
    echo "== $*"
    "$@" 2>&1
    echo "rc=$?"
}

echo change >>src/a.txt
step git diff HEAD
step git diff --cached HEAD
step git show --stat HEAD
step git log --oneline HEAD
step git rev-parse HEAD
step git rev-parse --show-toplevel
step git status --porcelain
git add src/a.txt
step git reset -q HEAD src/a.txt
step git reset -q HEAD -- src/a.txt
(
    cd src || exit 1
    step git diff HEAD
    step git log --oneline HEAD -- a.txt
    step git rev-parse --show-prefix
    step git status --porcelain
)
step git stash push -q
step git stash list
step git stash pop -q
step git diff --stat
step git checkout -q -- src/a.txt
step git cherry-pick topic
step git log --oneline
step git checkout -q -b feature topic
step git rebase -q main
step git log --oneline feature
step git checkout -q main
step git worktree add -q -b side .worktrees/side main
step git worktree list
step git -C .worktrees/side log --oneline -1
step git submodule status
step git status --porcelain --untracked-files=all
step git add -A --dry-run
