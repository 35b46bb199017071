#!/usr/bin/env bash
# TAP: many `sbx run` at once in one root (issue 13). As the current user and,
# as root with SBX_TEST_USER, as that user:
# - 30 runs started together beside a long-running one, in a repository with a
#   .claude/settings.json and in one without: all exit 0, each is refused .vscode and
#   .git/hooks/pre-commit, and the long-running one is still refused both after
#   the 30 have ended (a run ending lifts no other's placeholder); after the
#   last one nothing is left: no placeholder, lock, temporary directory,
#   process or mount. Control: a placeholder removed outside while a plain
#   bubblewrap sandbox runs lifts the read-only mount, and the write goes through.
# - Outside, while a command runs: `git status` and `git add -A` show no
#   placeholder (control: `git status --ignored` shows them as ignored, so they
#   are there), .claude/settings.local.json reads as an empty JSON object, and
#   `sbx policy` reads no settings layer from it.
# - A placeholder replaced outside while a command runs is kept, and no group
#   file is left.
# - Two runs with different XDG_RUNTIME_DIR and TMPDIR are one group.
# - A run whose settings protect less cannot remove the placeholder of one beside
#   it that protects more.
# - A plan made stale before the command runs (a launcher wrapper replaces
#   .envrc) is planned again; one the disk keeps making stale gives up after 5
#   attempts with STALE_PLAN, leaving nothing.
# - A command cannot flock the group's lock files (control: plain bubblewrap can),
#   nor make a run write its exclude block through a symlinked .git/info.
# - As root: a run of the same user whose lock files are elsewhere (/run/user/UID
#   made while the first ran) is refused beside the first, naming why.
# And, as root with SBX_TEST_USER: the other user's run in a root where one of
# root's runs (or the other way round) is refused by name, leaving nothing.
# Usage: parallel_test.sh SBX SBX-LINUX
set -euo pipefail

sbx=$(realpath "${1:?usage: parallel_test.sh SBX SBX-LINUX}")
launcher=$(realpath "${2:?usage: parallel_test.sh SBX SBX-LINUX}")
source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch
# On exit, before $tmp is removed: what runs from $tmp is killed, and the
# directories the test made under /run go.
tap_on_exit 'pkill -KILL -f -- "$tmp/" 2>/dev/null'
tap_on_exit '[[ -z ${made_uid_dir:-} ]] || rm -rf "$made_uid_dir"'
tap_on_exit '[[ -z ${made_run_user:-} ]] || rm -rf /run/user'

if ! command -v git >/dev/null || ! command -v python3 >/dev/null; then
    echo "1..0 # SKIP git and python3 are needed"
    exit 0
fi
bwrap=$(command -v bwrap)

# The group directory of a uid, wherever sbx keeps it.
group_dirs() { echo "/tmp/sbx-$1 /run/user/$1/sbx"; }

# until_there PATH: waits up to 30 seconds for PATH to appear (a run under the
# sanitizers on a loaded machine can take seconds to start).
until_there() {
    for _ in $(seq 600); do
        [[ -e $1 ]] && return 0
        sleep 0.05
    done
    return 1
}

# What is left of a project and of its runs: files beyond the project's own,
# group directories, temporary directories, processes and mounts naming it; asked
# again for up to 3 seconds while something is, as a process may still be exiting.
leftovers() {
    local left
    for _ in $(seq 15); do
        left=$(leftovers_now "$@")
        [[ -n $left ]] || return 0
        sleep 0.2
    done
    echo "$left"
}
leftovers_now() {
    local project=$1 uid=$2 d
    (cd "$project" && find . -mindepth 1 -path ./.git -prune -o -print | grep -v -x -e ./.claude -e ./.claude/settings.json) || true
    for d in $(group_dirs "$uid"); do [[ ! -e $d ]] || echo "group directory $d"; done
    find "$project.tmp" -mindepth 1 -maxdepth 1 2>/dev/null | sed 's/^/temporary /' || true
    pgrep -a -f -- "$project" | grep -v -e pgrep -e parallel_test || true
    grep -F -- "$project" /proc/self/mountinfo || true
}

tap_users
for who in "${users[@]}"; do
    TAP_PREFIX="as $who: "
    work=$tmp/as-$who
    mkdir -p "$work/home"
    tap_become "$who" || continue
    uid=$(id -u "$who")
    # A command's wait for the test to say go: the long-running ones beside others.
    hold="while [ ! -e $work/go ]; do sleep 0.05; done"
    # new_project NAME: a repository with a project settings file and its own TMPDIR.
    new_project() {
        local p=$work/$1
        mkdir -p "$p/.claude" "$p.tmp"
        git init -q "$p"
        echo '{}' >"$p/.claude/settings.json"
        [[ -z ${as[*]} ]] || chown -R "$who:" "$work"
        echo "$p"
    }
    # as_user PROJECT CMD...: CMD as the user, in PROJECT, with the test's HOME and TMPDIR.
    as_user() {
        local p=$1
        shift
        (cd "$p" && "${as[@]}" env HOME="$work/home" TMPDIR="$p.tmp" "$@")
    }
    run_in() {
        local p=$1
        shift
        as_user "$p" timeout 120 "$sbx" run --managed-settings "$tmp/empty-managed.json" "$@"
    }
    # Writes .vscode/settings.json and a hook; says which were refused.
    probe='echo x 2>/dev/null >.vscode/settings.json && echo wrote-vscode || echo refused-vscode; echo x 2>/dev/null >.git/hooks/pre-commit && echo wrote-hook || echo refused-hook'

    # 30 at once beside a long-running one, with a project settings file and
    # with none.
    for settings in with without; do
        p=$(new_project "many-$settings")
        [[ $settings == with ]] || as_user "$p" rm -r .claude
        rm -f "$work/go"
        run_in "$p" -- sh -c "$hold; $probe" >"$work/long.out" 2>"$work/long.err" &
        long=$!
        sleep 0.5
        pids=()
        for i in $(seq 30); do
            run_in "$p" -- sh -c "$probe; sleep 0.3" >"$work/run-$i.out" 2>"$work/run-$i.err" &
            pids+=($!)
        done
        for i in $(seq 30); do
            rc=0
            wait "${pids[$((i - 1))]}" || rc=$?
            [[ $rc == 0 ]] || fail_because "run $i exited $rc: $(head -c 300 "$work/run-$i.err")"
            grep -q -x refused-vscode "$work/run-$i.out" || fail_because "run $i could write .vscode/settings.json"
            grep -q -x refused-hook "$work/run-$i.out" || fail_because "run $i could write .git/hooks/pre-commit"
        done
        touch "$work/go"
        rc=0
        wait "$long" || rc=$?
        [[ $rc == 0 ]] || fail_because "the long-running one exited $rc: $(head -c 300 "$work/long.err")"
        grep -q -x refused-vscode "$work/long.out" || fail_because "the long-running one could write .vscode/settings.json once the others had ended"
        grep -q -x refused-hook "$work/long.out" || fail_because "the long-running one could write the hook once the others had ended"
        left=$(leftovers "$p" "$uid")
        [[ -z $left ]] || fail_because "left behind: $left"
        tap_finish "30 runs at once beside a long-running one, $settings a settings file: all exit 0, each refused .vscode/settings.json and the hook, the long one still refused after they ended, nothing left"
    done

    # Control: what a run ending would do to another if it removed the placeholder.
    p=$(new_project control)
    as_user "$p" touch .bashrc
    rc=0
    out=$(as_user "$p" "$bwrap" --unshare-user --ro-bind / / --dev /dev --bind "$p" "$p" --ro-bind "$p/.bashrc" "$p/.bashrc" --chdir "$p" \
        sh -c 'sleep 0.5; echo x 2>/dev/null >.bashrc && echo wrote-bashrc || echo refused-bashrc' &
        sleep 0.2; rm -f "$p/.bashrc"; wait) || rc=$?
    [[ $out == *wrote-bashrc* ]] || fail_because "the write was still refused after the placeholder went: $out"
    tap_finish "control: a placeholder removed outside while a plain bubblewrap sandbox runs lifts its mount, and .bashrc is written"

    # Outside, while a command runs.
    p=$(new_project outside)
    rm -f "$work/go"
    run_in "$p" -- sh -c "$hold" >/dev/null 2>"$work/outside.err" &
    long=$!
    until_there "$p/.vscode" || fail_because "no placeholder appeared"
    status=$(as_user "$p" git status --porcelain --untracked-files=all)
    [[ $status == '?? .claude/settings.json' ]] || fail_because "git status lists more than the project's file: $status"
    added=$(as_user "$p" git add -A --dry-run)
    [[ $added == "add '.claude/settings.json'" ]] || fail_because "git add -A would add: $added"
    ignored=$(as_user "$p" git status --porcelain --ignored)
    [[ $ignored == *'!! .claude/settings.local.json'* ]] ||
        fail_because "control: git status --ignored does not show the placeholders: $ignored"
    as_user "$p" python3 -c 'import json,sys; d=json.load(open(".claude/settings.local.json")); sys.exit(0 if d == {} else 1)' ||
        fail_because "the settings.local.json placeholder is not an empty JSON object"
    layers=$(as_user "$p" "$sbx" policy --managed-settings "$tmp/empty-managed.json" --json)
    [[ $layers != *settings.local.json* ]] || fail_because "sbx policy read the placeholder as a settings layer"
    touch "$work/go"
    rc=0
    wait "$long" || rc=$?
    [[ $rc == 0 ]] || fail_because "the command exited $rc: $(head -c 300 "$work/outside.err")"
    grep -q '# sbx' "$p/.git/info/exclude" && fail_because "sbx's lines stayed in .git/info/exclude"
    left=$(leftovers "$p" "$uid")
    [[ -z $left ]] || fail_because "left behind: $left"
    tap_finish "outside, while a command runs: git status and git add -A show no placeholder (git status --ignored does), settings.local.json reads as {}, sbx policy reads no layer from it; nothing left"

    # Two policies in one root: a run whose settings protect more (a denyWrite
    # of a missing file, covered by a placeholder) beside one whose settings do
    # not. The second must not be able to remove the first one's placeholder.
    p=$(new_project two-policies)
    printf '{"sandbox": {"filesystem": {"denyWrite": ["%s/extra"]}}}' "$p" >"$work/more.json"
    [[ -z ${as[*]} ]] || chown "$who:" "$work/more.json"
    rm -f "$work/go"
    run_in "$p" --settings "$work/more.json" -- sh -c "$hold; echo x 2>/dev/null >extra && echo wrote-extra || echo refused-extra" \
        >"$work/more.out" 2>"$work/more.err" &
    long=$!
    until_there "$p/extra" || fail_because "no placeholder at extra"
    rc=0
    out=$(run_in "$p" -- sh -c 'rm -f extra 2>/dev/null && echo removed-extra || echo kept-extra' 2>"$work/less.err") || rc=$?
    [[ $rc == 0 ]] || fail_because "the run with fewer protections exited $rc: $(head -c 300 "$work/less.err")"
    [[ $out == kept-extra ]] || fail_because "the run with fewer protections removed the other's placeholder: $out"
    touch "$work/go"
    wait "$long" || fail_because "the run with more protections failed: $(head -c 300 "$work/more.err")"
    grep -q -x refused-extra "$work/more.out" || fail_because "the run with more protections could write extra: $(<"$work/more.out")"
    # Control: in a plain bubblewrap sandbox with the root writable, a placeholder
    # no mount covers is removed.
    as_user "$p" touch extra-control
    ctl=$(as_user "$p" "$bwrap" --unshare-user --ro-bind / / --dev /dev --bind "$p" "$p" --chdir "$p" \
        sh -c 'rm -f extra-control && echo removed-extra' 2>&1) || true
    [[ $ctl == removed-extra ]] || fail_because "control: the removal did not happen: $ctl"
    left=$(leftovers "$p" "$uid")
    [[ -z $left ]] || fail_because "left behind: $left"
    tap_finish "a run whose settings protect less cannot remove the placeholder of one beside it that protects more (control: with no mount over it, it goes)"

    # sbx edits .git/info/exclude on the host; .git/info is swapped for a
    # symlink to a directory of the user's with a file named exclude, for the
    # next run to write into. It must not, and the next run still runs. The
    # command itself cannot swap it (.git/info, which holds the protected
    # info/attributes, is pinned), so the swap is made outside while it runs.
    p=$(new_project exclude-link)
    mkdir -p "$work/victim"
    echo victim-line >"$work/victim/exclude"
    [[ -z ${as[*]} ]] || chown -R "$who:" "$work/victim"
    rm -f "$work/go"
    run_in "$p" -- sh -c "mv .git/info .git/info.old 2>/dev/null && echo swapped || echo pinned; $hold" \
        >"$work/plant.out" 2>"$work/plant.err" &
    long=$!
    for _ in $(seq 100); do grep -qE 'pinned|swapped' "$work/plant.out" 2>/dev/null && break; sleep 0.05; done
    grep -q pinned "$work/plant.out" || fail_because "the command could move .git/info: $(head -c 300 "$work/plant.out")"
    as_user "$p" sh -c "mv .git/info .git/info.old && ln -s $work/victim .git/info"
    rc=0
    out=$(run_in "$p" -- sh -c 'echo ran' 2>"$work/next.err") || rc=$?
    [[ $rc == 0 && $out == ran ]] || fail_because "the next run failed ($rc): $(head -c 300 "$work/next.err")"
    [[ $(<"$work/victim/exclude") == victim-line ]] || fail_because "the file behind the symlink was written: $(<"$work/victim/exclude")"
    touch "$work/go"
    wait "$long" || fail_because "the planting run failed: $(head -c 300 "$work/plant.err")"
    [[ $(<"$work/victim/exclude") == victim-line ]] || fail_because "the file behind the symlink was written at the end"
    # Control: a writer that follows the path, as a naive launcher would, writes it.
    as_user "$p" sh -c 'echo "/.bashrc" >>.git/info/exclude'
    grep -q '^/.bashrc$' "$work/victim/exclude" || fail_because "control: writing through the path did not reach the victim"
    as_user "$p" sh -c 'rm .git/info && mv .git/info.old .git/info && git checkout -q -- . 2>/dev/null || true'
    left=$(leftovers "$p" "$uid")
    [[ -z $left ]] || fail_because "left behind: $left"
    tap_finish "a .git/info swapped for a symlink by a command: no run writes through it, the next run still runs (control: a writer following the path writes the victim)"

    # The group's lock files, which a command could flock to stall every other
    # sandbox of its root: inside, their directory is empty and read-only.
    p=$(new_project locks)
    rm -f "$work/go"
    run_in "$p" -- sh -c "$hold" >/dev/null 2>"$work/locks.err" &
    long=$!
    until_there "$p/.vscode" || fail_because "the long-running run made no placeholder: $(head -c 300 "$work/locks.err")"
    grab='import fcntl, glob, sys
files = [f for d in sys.argv[1:] for f in glob.glob(d + "/*.lock")]
for f in files:
    fcntl.flock(open(f), fcntl.LOCK_EX | fcntl.LOCK_NB)
print("locked", len(files))'
    rc=0
    out=$(run_in "$p" -- python3 -c "$grab" $(group_dirs "$uid") 2>&1) || rc=$?
    [[ $out == *"locked 0"* ]] || fail_because "the command could reach the group's lock files: $out"
    rc=0
    ctl=$(as_user "$p" "$bwrap" --unshare-user --ro-bind / / --dev /dev -- python3 -c "$grab" $(group_dirs "$uid") 2>&1) || rc=$?
    [[ $ctl == *"locked 1"* ]] || fail_because "control: plain bubblewrap could not lock the group's file: $ctl"
    touch "$work/go"
    wait "$long" || fail_because "the long-running one failed: $(head -c 300 "$work/locks.err")"
    left=$(leftovers "$p" "$uid")
    [[ -z $left ]] || fail_because "left behind: $left"
    tap_finish "a command cannot reach the group's lock files to stall the root's other sandboxes (control: plain bubblewrap locks one)"

    # A placeholder replaced outside while a command runs (an editor's atomic
    # save of the settings file): the new file stays, and so do no group files.
    p=$(new_project replaced)
    rm -f "$work/go"
    # Replaced once the command runs: a placeholder exists before its mount is made,
    # and one replaced in between is a plan gone stale (another subtest's matter).
    run_in "$p" -- sh -c "touch started; $hold" >/dev/null 2>"$work/replaced.err" &
    long=$!
    until_there "$p/started" || fail_because "the command did not start: $(head -c 300 "$work/replaced.err")"
    [[ -e $p/.claude/settings.local.json ]] || fail_because "the run made no placeholder"
    as_user "$p" sh -c 'echo "{\"mine\": 1}" >.claude/new.json && mv .claude/new.json .claude/settings.local.json'
    touch "$work/go"
    wait "$long" || fail_because "the command failed: $(head -c 300 "$work/replaced.err")"
    [[ $(<"$p/.claude/settings.local.json") == '{"mine": 1}' ]] || fail_because "the user's new settings.local.json is gone"
    grep -q "settings.local.json.*left in place" "$work/replaced.err" || fail_because "no warning that it was left in place: $(<"$work/replaced.err")"
    as_user "$p" rm .claude/settings.local.json started
    left=$(leftovers "$p" "$uid")
    [[ -z $left ]] || fail_because "left behind: $left"
    tap_finish "a placeholder replaced outside while the command runs: the new file is kept, said so, and no group file is left"

    # Another XDG_RUNTIME_DIR and TMPDIR: the same group.
    p=$(new_project environment)
    mkdir -p "$work/xdg1" "$work/xdg2"
    chmod 700 "$work/xdg1" "$work/xdg2"
    [[ -z ${as[*]} ]] || chown "$who:" "$work/xdg1" "$work/xdg2"
    rm -f "$work/go"
    (cd "$p" && "${as[@]}" env HOME="$work/home" XDG_RUNTIME_DIR="$work/xdg1" TMPDIR="$work/xdg1" timeout 120 "$sbx" run \
        --managed-settings "$tmp/empty-managed.json" -- \
        sh -c "$hold; $probe") >"$work/env1.out" 2>"$work/env1.err" &
    long=$!
    until_there "$p/.vscode" || fail_because "the first run made no placeholder: $(head -c 300 "$work/env1.err")"
    rc=0
    out=$(cd "$p" && "${as[@]}" env HOME="$work/home" XDG_RUNTIME_DIR="$work/xdg2" TMPDIR="$work/xdg2" timeout 120 "$sbx" run \
        --managed-settings "$tmp/empty-managed.json" -- sh -c "$probe" 2>"$work/env2.err") || rc=$?
    [[ $rc == 0 ]] || fail_because "the second run exited $rc: $(head -c 300 "$work/env2.err")"
    [[ $out == *refused-vscode*refused-hook* ]] || fail_because "the second run was not refused: $out"
    touch "$work/go"
    rc=0
    wait "$long" || rc=$?
    [[ $rc == 0 ]] || fail_because "the first run exited $rc: $(head -c 300 "$work/env1.err")"
    grep -q refused-vscode "$work/env1.out" || fail_because "the first run could write .vscode/settings.json after the second ended"
    [[ -z $(ls -A "$work/xdg1" "$work/xdg2" | grep -v -e '^$' -e ':$') ]] || fail_because "files left in the XDG directories"
    left=$(leftovers "$p" "$uid")
    [[ -z $left ]] || fail_because "left behind: $left"
    tap_finish "runs with different XDG_RUNTIME_DIR and TMPDIR are one group: both run, both refused, nothing left"

    # The same user's runs with their lock files in two places are two groups:
    # /run/user/UID appearing while a run goes on (a first login) moves the next
    # run's. The second is refused, naming the reason.
    if [[ ! -e /run/user/$uid ]] && ((EUID == 0)); then
        p=$(new_project two-groups)
        made_run_user=
        [[ -e /run/user ]] || { mkdir /run/user; made_run_user=1; }
        rm -f "$work/go"
        run_in "$p" -- sh -c "$hold; $probe" >"$work/g1.out" 2>"$work/g1.err" &
        long=$!
        until_there "$p/.vscode" || fail_because "the first group's run made no placeholder: $(head -c 300 "$work/g1.err")"
        mkdir -m 700 "/run/user/$uid"
        made_uid_dir=/run/user/$uid
        chown "$uid" "/run/user/$uid"
        rc=0
        err=$(run_in "$p" -- sh -c 'echo ran' 2>&1 >/dev/null) || rc=$?
        [[ $rc == 125 ]] || fail_because "the run of the second group exited $rc, not 125"
        [[ $err == *"sandboxed commands of yours that keep their lock files elsewhere"*"wait until they end"* ]] ||
            fail_because "the refusal does not say why: $err"
        touch "$work/go"
        wait "$long" || fail_because "the first group's run failed: $(head -c 300 "$work/g1.err")"
        grep -q refused-vscode "$work/g1.out" || fail_because "the first group's run could write .vscode/settings.json"
        [[ -z $(ls -A "/run/user/$uid") ]] || fail_because "left in /run/user/$uid: $(ls -A "/run/user/$uid")"
        rmdir "/run/user/$uid"
        made_uid_dir=
        [[ -z $made_run_user ]] || rmdir /run/user
        made_run_user=
        left=$(leftovers "$p" "$uid")
        [[ -z $left ]] || fail_because "left behind: $left"
        tap_finish "a run whose lock files are elsewhere (/run/user/UID made meanwhile) is refused beside the first group's, naming why; nothing left"
        err=
    else
        echo "ok $((n + 1)) - ${TAP_PREFIX}two groups of one user # SKIP /run/user/$uid exists or this is not root, so the test cannot move the group's directory"
        n=$((n + 1))
    fi

    # A plan made stale before the command runs is planned again.
    p=$(new_project stale)
    cat >"$work/stale-launcher" <<EOF
#!/bin/sh
# Each of its first \$STALE_TIMES calls puts a new .envrc in place (a new inode),
# after sbx planned and before the launcher looks: the plan is stale.
n=\$(cat "$work/calls" 2>/dev/null || echo 0); n=\$((n + 1)); echo \$n >"$work/calls"
if [ \$n -le \$STALE_TIMES ]; then echo real >.envrc.new; mv .envrc.new .envrc; fi
exec "$launcher" "\$@"
EOF
    chmod 755 "$work/stale-launcher"
    [[ -z ${as[*]} ]] || chown -R "$who:" "$work"
    rm -f "$work/calls" "$p/.envrc"
    rc=0
    out=$(as_user "$p" env STALE_TIMES=2 timeout 120 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --launcher "$work/stale-launcher" -- sh -c 'cat .envrc; echo x 2>/dev/null >>.envrc || echo refused-envrc' 2>&1) || rc=$?
    [[ $rc == 0 ]] || fail_because "the run exited $rc"
    [[ $(<"$work/calls") == 3 ]] || fail_because "the launcher ran $(<"$work/calls") times, not 3"
    [[ $out == *real*refused-envrc* ]] || fail_because "the third plan did not protect the real .envrc: $out"
    tap_finish "a plan made stale twice before the command runs is planned again, and the third runs confined"
    rm -f "$work/calls" "$p/.envrc"
    rc=0
    err=$(as_user "$p" env STALE_TIMES=99 timeout 120 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --launcher "$work/stale-launcher" -- sh -c 'echo ran' 2>&1 >/dev/null) || rc=$?
    [[ $rc == 125 ]] || fail_because "exit status $rc, not 125"
    [[ $(<"$work/calls") == 5 ]] || fail_because "the launcher ran $(<"$work/calls") times, not 5"
    [[ $err == *STALE_PLAN*.envrc* ]] || fail_because "no STALE_PLAN naming .envrc: $err"
    as_user "$p" rm -f .envrc
    left=$(leftovers "$p" "$uid")
    [[ -z $left ]] || fail_because "left behind: $left"
    err=
    tap_finish "a plan the disk keeps making stale gives up after 5 attempts with STALE_PLAN and the path, leaving nothing"

    # A root the user cannot write: bubblewrap starts while the placeholders are
    # made, and the first one fails. It ends with 125 naming it, after the
    # attempts to plan again, leaving nothing: no placeholder, no process, no
    # reaper of an attempt unwaited for (a zombie `sbx` under an init that reaps
    # late; bubblewrap's own init is left for the system's to reap, by bubblewrap).
    if [[ $who != root ]]; then
        p=$(new_project unwritable)
        chmod 555 "$p"
        zombies() { ps -u "$uid" -o stat=,pid=,comm= | awk '$1 ~ /^Z/ && $3 == "sbx"' || true; }
        before=$(zombies)
        rc=0
        err=$(run_in "$p" -- sh -c 'echo ran' 2>&1) || rc=$?
        [[ $rc == 125 ]] || fail_because "exit status $rc, not 125"
        [[ $err == *STALE_PLAN*"cannot make the placeholder: Permission denied"* ]] ||
            fail_because "no STALE_PLAN naming the placeholder: $err"
        [[ $err != *ran* ]] || fail_because "the command ran: $err"
        new_zombies=$(comm -13 <(echo "$before" | sort) <(zombies | sort))
        [[ -z $new_zombies ]] || fail_because "processes nobody waited for: $new_zombies"
        chmod 755 "$p"
        left=$(leftovers "$p" "$uid")
        [[ -z $left ]] || fail_because "left behind: $left"
        err=
        tap_finish "a root the user cannot write gives 125 naming the placeholder it could not make, leaving nothing, no process either"
    else
        echo "ok $((n + 1)) - ${TAP_PREFIX}a root the user cannot write # SKIP root writes anywhere"
        n=$((n + 1))
    fi
done

# Two users in one root: the second is refused by name, both ways.
if ((EUID == 0)) && [[ -n ${SBX_TEST_USER:-} ]] && id -u "$SBX_TEST_USER" >/dev/null 2>&1; then
    TAP_PREFIX=
    other=$SBX_TEST_USER
    ouid=$(id -u "$other")
    p=$tmp/shared
    mkdir -p "$p" "$p.tmp" "$tmp/shared-home"
    git init -q "$p"
    chown -R "$other:" "$p" "$p.tmp" "$tmp/shared-home"
    as_other=(setpriv --reuid="$ouid" --regid="$(id -g "$other")" --init-groups --)
    for first in root "$other"; do
        if [[ $first == root ]]; then a=(); b=("${as_other[@]}"); first_uid=0; else a=("${as_other[@]}"); b=(); first_uid=$ouid; fi
        rm -f "$tmp/go"
        # --root: a project another user owns is not found from inside it (nor is
        # it by git); named, it is this test's shared root.
        (cd "$p" && "${a[@]}" env HOME="$tmp/shared-home" TMPDIR="$p.tmp" timeout 120 "$sbx" run --root "$p" \
            --managed-settings "$tmp/empty-managed.json" -- \
            sh -c "while [ ! -e $tmp/go ]; do sleep 0.05; done") >/dev/null 2>"$tmp/first.err" &
        long=$!
        until_there "$p/.vscode" || fail_because "the first user's run made no placeholder: $(head -c 300 "$tmp/first.err")"
        rc=0
        err=$(cd "$p" && "${b[@]}" env HOME="$tmp/shared-home" TMPDIR="$p.tmp" timeout 120 "$sbx" run --root "$p" \
            --managed-settings "$tmp/empty-managed.json" -- sh -c 'echo ran' 2>&1 >/dev/null) || rc=$?
        [[ $rc == 125 ]] || fail_because "the second user's run exited $rc, not 125"
        [[ $err == *"uid $first_uid has sandboxed commands running in $p"*"run this one as uid $first_uid"* ]] ||
            fail_because "the refusal does not say who and what to do: $err"
        touch "$tmp/go"
        rc=0
        wait "$long" || rc=$?
        [[ $rc == 0 ]] || fail_because "the first user's run exited $rc: $(head -c 300 "$tmp/first.err")"
        left=$( (leftovers "$p" 0; leftovers "$p" "$ouid") | sort -u)
        [[ -z $left ]] || fail_because "left behind: $left"
        tap_finish "a second user's run beside uid $first_uid's in one root is refused, naming that uid and what to do; nothing left"
        err=
    done
fi

tap_end
