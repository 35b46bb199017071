#!/usr/bin/env bash
# TAP: a root that is a linked worktree (`git worktree add ../wt`, made outside).
# The command run there stages, commits, stashes, rebases onto a branch made
# outside and fetches from a bare repository (file://): git writes the worktree's
# index and HEAD under the main repository's worktrees/wt and the objects and refs
# they share in the main git directory, which sbx makes writable. While it runs,
# git outside and inside lists none of sbx's placeholders (`git status
# --porcelain`, `git add -A --dry-run`): their lines are in the main repository's
# info/exclude, the one git reads for the worktree, and stay there while a run in
# another worktree of the repository starts and ends. The files of the main
# repository that make git run a program stay read-only: its config, a hook, the
# worktree's config.worktree and commondir, info/attributes, and the git
# directories cannot be moved; each attempt has its control, the same payload
# under filesystem.disabled, where it works. Each case runs as the current user
# and, as root with SBX_TEST_USER set, as that user too.
# Usage: worktree_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX
set -euo pipefail

if (($# != 2)); then
    echo "usage: worktree_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX" >&2
    exit 2
fi
source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch

bin=$tmp/bin
tap_readable_copies "$bin" "$1" "$2"
sbx=$bin/sbx
launcher=$bin/sbx-linux
echo '{"sandbox": {"enabled": true, "filesystem": {"disabled": true}}}' >"$tmp/fs-disabled.json"
chmod 644 "$tmp/fs-disabled.json"

# A git with no user or system configuration but a name to commit with.
git_env='export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=sbx GIT_AUTHOR_EMAIL=sbx@example.invalid GIT_COMMITTER_NAME=sbx GIT_COMMITTER_EMAIL=sbx@example.invalid'

# outside SCRIPT: `sh -c SCRIPT` in the worktree (once there is one) as the case's
# user, outside any sandbox; sets rc, out and err.
outside() {
    rc=0
    local here=$proj
    [[ -d $here ]] || here=$work
    (cd "$here" && "${as[@]}" env HOME="$home" sh -c "$git_env; $1") </dev/null >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
}

# The attempts on the main repository, each printing DONE-NAME when it worked; the
# moves are put back at once, so that the control leaves a repository to go on with.
attempts() {
    local g=$main/.git
    cat <<EOF
printf '[core]\n\tfsmonitor = touch $work/planted\n' >>$g/config 2>/dev/null && echo DONE-config
printf '#!/bin/sh\ntouch $work/planted\n' >$g/hooks/pre-commit 2>/dev/null && echo DONE-hook
printf '[core]\n\thooksPath = /tmp\n' >>$g/worktrees/wt/config.worktree 2>/dev/null && echo DONE-config-worktree
printf '/tmp\n' >$g/worktrees/wt/commondir 2>/dev/null && echo DONE-commondir
printf '* filter=planted\n' >$g/info/attributes 2>/dev/null && echo DONE-attributes
mv $g $main/.git-moved 2>/dev/null && echo DONE-move-git && mv $main/.git-moved $g
mv $g/worktrees/wt $g/worktrees/wt-moved 2>/dev/null && echo DONE-move-worktree && mv $g/worktrees/wt-moved $g/worktrees/wt
echo attempts-over
EOF
}

tap_users
for who in "${users[@]}"; do
    tap_user_project "$who" || continue
    main=$work/main
    proj=$work/wt
    # The repositories, made outside as the case's user: main with a branch
    # `other`, a bare repository holding a branch main lacks, and the worktree.
    outside "set -e
git init -q -b main $main && cd $main && echo a >a && git add a && git commit -qm a
git checkout -q -b other && echo b >b && git add b && git commit -qm b && git checkout -q main
git init -q --bare $work/bare.git && git checkout -q -b up && echo u >u && git add u && git commit -qm u
git push -q $work/bare.git up && git checkout -q main && git branch -q -D up
git worktree add -q $proj -b task && git worktree add -q $work/wt2 -b task2"
    want_status 0
    tap_finish "setup: a main repository, a bare one and a linked worktree made outside"
    ((rc == 0)) || continue
    rc=0
    (cd "$proj" && for args in "explain $main/.git/objects" "explain $main/.git/config" policy; do
        # shellcheck disable=SC2086 # the words of args
        "${as[@]}" env HOME="$home" "$sbx" $args --managed-settings "$tmp/empty-managed.json" || exit
    done) </dev/null >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
    want_status 0
    want_out "write: allowed  inside the root's git directory $main/.git (the main repository's git directory of the root, a linked worktree"
    want_out "write: denied  protected: protected path $main/.git/config"
    want_out "git directory, writable: $main/.git ("
    tap_finish "sbx explain and sbx policy name the main git directory's grant and why"
    cp "$main/.git/config" "$work/config.saved"
    cp "$main/.git/worktrees/wt/commondir" "$work/commondir.saved"

    # One run does the work, and waits in the middle for git outside to look.
    inside="set -e; $git_env
echo one >f1 && git add -A && git commit -qm one && echo COMMITTED
git status --porcelain | sed 's/^/STATUS-IN /'
git add -A --dry-run | sed 's/^/ADD-IN /'; echo LISTED
echo two >f1 && git stash -q && [ -z \"\$(git status --porcelain)\" ] && git stash pop -q && git commit -qam two && echo STASHED
git rebase -q other && echo REBASED
git fetch -q file://$work/bare.git up:refs/remotes/bare/up && echo FETCHED
touch $main/.git/sbx-test-ready
i=0; while [ ! -e $main/.git/sbx-test-go ] && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i+1)); done
echo over"
    rc=0
    (cd "$proj" && "${as[@]}" env HOME="$home" timeout 30 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --launcher "$launcher" -- sh -c "$inside") </dev/null >"$work/run-out" 2>"$work/run-err" &
    pid=$!
    i=0
    while [[ ! -e $main/.git/sbx-test-ready ]] && ((i < 400)) && kill -0 "$pid" 2>/dev/null; do
        sleep 0.05
        i=$((i + 1))
    done
    # A run in another worktree of the repository starts and ends meanwhile: the
    # lines it shares in the main info/exclude stay while this one still runs.
    other_rc=0
    (cd "$work/wt2" && "${as[@]}" env HOME="$home" timeout 30 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --launcher "$launcher" -- true) </dev/null >/dev/null 2>"$work/other-err" || other_rc=$?
    outside "ls -a; git status --porcelain | sed 's/^/STATUS-OUT /'; git add -A --dry-run | sed 's/^/ADD-OUT /'; echo LISTED"
    outside_out=$out
    touch "$main/.git/sbx-test-go"
    wait "$pid" || rc=$?
    out=$(<"$work/run-out")
    err=$(<"$work/run-err")
    want_status 0
    for word in COMMITTED STASHED REBASED FETCHED over; do want_out "$word"; done
    want_no_err '<sandbox_violations>'  # nothing refused, nothing the audit renamed
    want_no_err warning
    want_out LISTED
    want_no_out 'STATUS-IN '
    want_no_out 'ADD-IN '
    tap_finish "inside: commit, stash, rebase and fetch work; git status and git add -A list no placeholder"

    out=$outside_out
    rc=0
    [[ -e $main/.git/sbx-test-ready ]] || fail_because "the run never got to the middle"
    ((other_rc == 0)) || fail_because "the run in the other worktree failed: $(<"$work/other-err")"
    want_line '^\.vscode$'  # the placeholders are there ...
    want_out LISTED  # ... and git outside passes over them
    want_no_out 'STATUS-OUT '
    want_no_out 'ADD-OUT '
    tap_finish "outside, while the command runs, after a run in another worktree ended: git status and git add -A list no placeholder"

    outside "git log --format=%s; git rev-parse --verify -q refs/remotes/bare/up >/dev/null && echo FETCHED
git merge-base --is-ancestor other HEAD && echo REBASED; git status --porcelain | sed 's/^/STATUS /'
echo BLOCK:\$(grep -c '^# sbx' $main/.git/info/exclude)"
    want_status 0
    for word in one two FETCHED REBASED; do want_out "$word"; done
    want_no_out 'STATUS '
    want_line '^BLOCK:0$'
    [[ ! -e $proj/.vscode ]] || fail_because "a placeholder is left in the worktree"
    tap_finish "after: the commits, the rebase and the fetch are there; no placeholder and no exclude block left"

    rm -f "$main/.git/sbx-test-ready" "$main/.git/sbx-test-go"
    tap_in_sandbox -- "$(attempts)"
    want_status 0
    want_out attempts-over
    [[ $out != *DONE-* ]] || fail_because "an attempt worked: $(grep DONE- <<<"$out" | tr '\n' ' ')"
    cmp -s "$main/.git/config" "$work/config.saved" || fail_because "the main config changed"
    [[ ! -e $main/.git/hooks/pre-commit && ! -e $main/.git/info/attributes ]] || fail_because "a hook or attributes were planted"
    [[ ! -e $main/.git/worktrees/wt/config.worktree ]] || fail_because "config.worktree was planted"
    cmp -s "$main/.git/worktrees/wt/commondir" "$work/commondir.saved" || fail_because "commondir changed"
    tap_finish "the main repository's config, a hook, config.worktree, commondir and info/attributes are read-only; the git directories cannot be moved"

    tap_in_sandbox --settings "$tmp/fs-disabled.json" -- "$(attempts)"
    want_status 0
    for word in config hook config-worktree commondir attributes move-git move-worktree; do want_out "DONE-$word"; done
    tap_finish "control: each attempt works with filesystem.disabled"
    cp "$work/config.saved" "$main/.git/config"
    cp "$work/commondir.saved" "$main/.git/worktrees/wt/commondir"
    rm -f "$main/.git/hooks/pre-commit" "$main/.git/info/attributes" "$main/.git/worktrees/wt/config.worktree"
done
tap_end
