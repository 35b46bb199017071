#!/usr/bin/env bash
# TAP: the limits a command runs under (README, "Limits"; sbx/settings/limits.hpp).
# Each as the current user and, as root with SBX_TEST_USER set, as that user too,
# with its control where the same command goes past what the limit would allow:
#   - processes: a command forking as fast as it can gets at most the limit
#     (plus the 300 numbers the kernel keeps apart, for root), while a probe
#     outside keeps counting; the control forks past it without the limit;
#   - timeoutSeconds: the command's TERM trap runs, sbx exits 124 with a line
#     naming the limit, where it was set and how to raise it; a command that
#     ignores SIGTERM is killed once the grace period runs out; the control
#     runs past that time;
#   - cpuSeconds and fileSizeMiB: a busy loop and a writer are ended with
#     their line and 124; the writer's control writes the whole file;
#   - memoryMiB: a process that asks for more fails to get it, and its
#     MemoryError gives the limit's line; its control gets it; a shell whose
#     fork fails at the processes limit gives that limit's line;
#   - tmpdirMiB: TMPDIR is a tmpfs of that size, full at it, while the host's
#     folder stays empty; a folder made unreadable, 3,000 nested ones and a
#     file held open there leave nothing (in the weaker sandbox too, where it
#     is the host's); the controls write past it and make the tangle outside;
#   - a project's settings can lower a limit, not raise it.
# The two users' cases run at once (tap_users_at_once).
# Usage: limits_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX
set -euo pipefail

if (($# != 2)); then
    echo "usage: limits_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX" >&2
    exit 2
fi
source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch

bin=$tmp/bin
tap_readable_copies "$bin" "$1" "$2"
sbx=$bin/sbx
launcher=$bin/sbx-linux

# run_limited ARGS... -- SCRIPT: `sbx run ARGS -- sh -c SCRIPT` as the case's
# user in its project; sets rc, out, err and `took` (whole seconds).
run_limited() {
    local args=() script start=$SECONDS
    tap_split "$@"
    rc=0
    (cd "$proj" && "${as[@]}" env HOME="$home" timeout 60 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        "${args[@]}" -- sh -c "$script") </dev/null >"$work/out" 2>"$work/err" || rc=$?
    took=$((SECONDS - start))
    out=$(<"$work/out")
    err=$(<"$work/err")
}

# Forks children that wait until the parent ends, as many as it can up to
# $1, and prints how many it got.
forks() {
    echo "python3 -c '
import os, sys, time
n = 0
r, w = os.pipe()
try:
    for _ in range($1):
        if os.fork() == 0:
            os.close(w)
            os.read(r, 1)
            os._exit(0)
        n += 1
except OSError:
    pass
print(\"forked\", n)
sys.stdout.flush()
os._exit(0)
'"
}

# A counter outside the sandbox: its count file grows every 0.05 s while it runs.
start_probe() {
    rm -f "$work/probe"
    (while :; do echo x >>"$work/probe"; sleep 0.05; done) &
    probe=$!
}
stop_probe() {
    kill "$probe" 2>/dev/null || true
    wait "$probe" 2>/dev/null || true
    probed=$(wc -l <"$work/probe")
}

# A folder a cleanup that follows the file tree cannot remove: one made
# unreadable (chmod 000) and 3,000 folders nested, past PATH_MAX and past the
# descriptors a process may hold open; a file at the bottom is held open by a
# process still running when the command ends ($1: 1), or not (0). Made in $TMPDIR.
tangle() {
    echo "python3 -c '
import os, subprocess
os.chdir(os.environ[\"TMPDIR\"])
os.mkdir(\"locked\"); open(\"locked/f\", \"w\").write(\"x\"); os.mkdir(\"locked/sub\")
os.chmod(\"locked/sub\", 0); os.chmod(\"locked\", 0)
for _ in range(3000):
    os.mkdir(\"d\"); os.chdir(\"d\")
open(\"held\", \"w\").write(\"x\")
if $1:
    subprocess.Popen([\"sleep\", \"300\"], stdin=open(\"held\"))
os.chmod(\".\", 0o500)
print(\"tangled\", os.environ[\"TMPDIR\"])
'"
}

# want_tangle_gone: the last command made its tangle and exited 0, and the
# folder it made it in is gone.
want_tangle_gone() {
    want_status 0
    where=$(sed -n 's/^tangled //p' <<<"$out")
    [[ -n $where ]] || fail_because "the command did not make its tangle"
    [[ -z $where || ! -e $where ]] || fail_because "$where is still there"
}

# The cgroup v2 hierarchy's mount point, where there is one (a sandbox's own
# cgroup is made below it, in a folder delegated to the case's user).
cgroup2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
    /proc/self/mountinfo | head -n 1)
# Each user's folder there, $cgroup2/sbx-test-PID-WHO with its `caller`, made
# and delegated (chown) before the users' cases start, removed at the end.
cgroup_folder() { echo "$cgroup2/sbx-test-$$-$1"; }

# cgroup_run ARGS... -- SCRIPT: as the case's user, from the cgroup
# $cg/caller, `sbx plan -- sh -c SCRIPT | sbx-linux ARGS` in the background
# ($bg), its output in $work/out and $work/err.
cgroup_run() {
    local args=() script
    tap_split "$@"
    (cd "$proj" && "${as[@]}" env HOME="$home" "$sbx" plan --managed-settings "$tmp/empty-managed.json" \
        -- sh -c "$script") >"$work/plan.json" 2>"$work/err"
    (cd "$proj" && exec sh -c 'echo $$ >"$0/caller/cgroup.procs" && exec "$@"' "$cg" "${as[@]}" env HOME="$home" \
        "$launcher" "${args[@]}" <"$work/plan.json" >"$work/out" 2>>"$work/err") &
    bg=$!
}

# The sandbox's cgroups below $cg that hold a process now, one a line.
cgroups_in_use() {
    local d
    for d in "$cg"/sbx-*; do
        # (cgroupfs files have no size: read, not tested with -s)
        [[ -d $d && -n $(cat "$d/cgroup.procs" 2>/dev/null) ]] && echo "$d"
    done
    return 0
}

# The cases each user runs (tap_users_at_once: both users at once, as the
# cases mostly wait).
user_cases() {
    root_caller=0
    [[ $(id -u "$who") != 0 ]] || root_caller=1

    # processes: 200 at most (for root, by the sandbox's PID namespace:
    # 200 + the 300 the kernel keeps apart once numbers wrap).
    start_probe
    run_limited --limit processes=200 -- "$(forks 2000)"
    stop_probe
    got=$(sed -n 's/^forked //p' <<<"$out")
    cap=200
    ((root_caller == 0)) || cap=500
    [[ -n $got ]] || fail_because "the forking command said nothing"
    [[ -z $got ]] || ((got <= cap)) || fail_because "it forked $got processes, over $cap"
    [[ -z $got ]] || ((got >= 150)) || fail_because "it forked only $got processes"
    ((probed >= 5)) || fail_because "the probe outside counted only $probed times meanwhile"
    run_limited -- "$(forks 1000)"
    [[ $out == "forked 1000" ]] || fail_because "control: without the limit it did not fork 1000 (it said: $out)"
    tap_finish "processes=200: a command forking as fast as it can gets at most $cap while a probe outside keeps running (control: 1000 without the limit)"

    # The line, where the command says its fork failed (sh does, and stops), and 124.
    run_limited --limit processes=50 -- 'for i in $(seq 400); do sleep 1 & done; wait'
    want_status 124
    want_err "limit processes 50: a process of the command could not start another, as at this limit (it said: sh: "
    want_err "Cannot fork) (set by --limit processes on the command line;"
    run_limited -- 'for i in $(seq 400); do sleep 0.2 & done; wait'
    want_status 0
    want_no_err "limit processes"
    tap_finish "processes=50: a shell whose fork fails at the limit stops, with the limit's line and 124 (control: 400 background jobs without it)"

    # timeoutSeconds: the TERM trap runs, 124, the line.
    run_limited --limit timeoutSeconds=1 --grace 5 -- "trap 'echo trapped; exit 3' TERM; sleep 30 & wait"
    want_status 124
    want_out trapped
    want_err "limit timeoutSeconds 1s: the command ran that long and was sent SIGTERM (set by --limit timeoutSeconds on the command line; to raise it, give a higher --limit timeoutSeconds=N)"
    ((took < 5)) || fail_because "it took $took s"
    run_limited --limit timeoutSeconds=5 -- "sleep 1.5; echo done"
    want_status 0
    want_out done
    tap_finish "timeoutSeconds=1: the command's TERM trap runs, sbx exits 124 with the limit's line (control: a command that ends before it is untouched)"

    run_limited --limit timeoutSeconds=1 --grace 1 -- "trap '' TERM; sleep 30"
    want_status 124
    want_err "the command ran that long and was sent SIGTERM, then killed when the grace period ran out"
    ((took < 6)) || fail_because "it took $took s"
    tap_finish "timeoutSeconds=1: a command that ignores SIGTERM is killed when the grace period runs out, 124"

    # SIGINT asks a command to stop what it is doing, and it may go on (a REPL):
    # the timeout holds all the same.
    # sbx itself in the background (setpriv and env exec it), with no timeout(1)
    # between, which would send SIGINT to its whole group and report it itself.
    (cd "$proj" && exec "${as[@]}" env HOME="$home" "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --limit timeoutSeconds=2 -- sh -c "trap 'echo interrupted' INT; touch started; sleep 30 & wait; sleep 30 & wait") \
        </dev/null >"$work/out" 2>"$work/err" &
    bg=$!
    for _ in $(seq 400); do [[ -e $proj/started ]] && break; sleep 0.05; done
    kill -s INT "$bg" 2>/dev/null || true
    rc=0
    wait "$bg" || rc=$?
    out=$(<"$work/out") err=$(<"$work/err")
    rm -f "$proj/started"
    want_status 124
    want_out interrupted
    want_err "limit timeoutSeconds 2s"
    tap_finish "timeoutSeconds=2: a command that goes on after SIGINT is still ended by its timeout, 124"

    # cpuSeconds: a busy loop.
    run_limited --limit cpuSeconds=1 -- "while :; do :; done"
    want_status 124
    want_err "limit cpuSeconds 1s: the command used that much CPU time and was ended (SIGXCPU)"
    ((took < 10)) || fail_because "it took $took s"
    tap_finish "cpuSeconds=1: a busy loop is ended with SIGXCPU, 124 and its line"

    # fileSizeMiB: a 2 MiB file, past a 1 MiB limit.
    run_limited --limit fileSizeMiB=1 -- 'head -c 2097152 /dev/zero >"$TMPDIR/f"'
    want_status 124
    want_err "limit fileSizeMiB 1MiB: the command wrote a file up to that size and was ended (SIGXFSZ)"
    run_limited -- 'head -c 2097152 /dev/zero >"$TMPDIR/f" && wc -c <"$TMPDIR/f"'
    want_status 0
    want_out 2097152
    tap_finish "fileSizeMiB=1: a writer is ended at 1 MiB with SIGXFSZ, 124 and its line (control: it writes 2 MiB without the limit)"

    # memoryMiB: per process, for its data; the line from what the process said.
    run_limited --limit memoryMiB=64 -- "python3 -c 'b = bytearray(256 << 20); print(\"got\", len(b))'"
    want_status 124
    want_no_out got
    want_err MemoryError
    want_err "limit memoryMiB 64MiB: a process of the command could not get more memory (it said: MemoryError) (set by --limit memoryMiB on the command line;"
    run_limited -- "python3 -c 'b = bytearray(256 << 20); print(\"got\", len(b))'"
    want_status 0
    want_out "got 268435456"
    tap_finish "memoryMiB=64: a process cannot take 256 MiB for its data, 124 and the limit's line (control: it can without the limit)"

    # A session's commands: each its own timeout and CPU time; the session goes on.
    sid=$(cd "$proj" && "${as[@]}" env HOME="$home" timeout 30 "$sbx" session start --managed-settings "$tmp/empty-managed.json" \
        --limit timeoutSeconds=3 --limit cpuSeconds=1 --limit processes=50 --grace 1 2>"$work/err") || true
    [[ -n $sid ]] || fail_because "the session did not start: $(<"$work/err")"
    in_session() {
        rc=0
        (cd "$proj" && "${as[@]}" env HOME="$home" timeout 30 "$sbx" run --session "$sid" -- sh -c "$1") </dev/null \
            >"$work/out" 2>"$work/err" || rc=$?
        out=$(<"$work/out")
        err=$(<"$work/err")
    }
    in_session "trap 'echo trapped; exit 3' TERM; sleep 30 & wait"
    want_status 124
    want_out trapped
    want_err "limit timeoutSeconds 3s: the command ran that long and was sent SIGTERM ("
    # CPU time comes slower than time on a busy machine: the timeout, 3 s, leaves it room.
    in_session "while :; do :; done"
    want_status 124
    want_err "limit cpuSeconds 1s: the command used that much CPU time and was ended (SIGXCPU)"
    # The session's processes limit: a shell whose fork fails says so, and the
    # client's block has the line. For a user, whose limit is exact (root's is
    # the limit plus the 300 numbers the kernel keeps apart, which takes long
    # enough to fork under a loaded machine to meet the session's timeout; the
    # one-shot case above has root's).
    if ((root_caller == 0)); then
        in_session 'for i in $(seq 100); do sleep 1 & done; wait'
        want_status 124
        want_err "limit processes 50: a process of the command could not start another, as at this limit (it said: sh: "
        sleep 1  # its background jobs end
    fi
    in_session "echo still"
    want_status 0
    want_out still
    (cd "$proj" && "${as[@]}" env HOME="$home" timeout 30 "$sbx" session stop "$sid") >/dev/null 2>&1 || true
    tap_finish "a session's commands each get the timeout (the TERM trap runs) and the CPU limit$( ((root_caller)) || echo ", and the session's processes limit"), 124 with their line; the next command runs"

    # The weaker sandbox (no namespaces: inside an outer bubblewrap that refuses
    # them): the same timeout and CPU time, and processes for a user (RLIMIT_NPROC
    # does not bind root, and there is no PID namespace of the sandbox's own).
    outer=(bwrap --dev-bind / / --unshare-user --disable-userns --)
    weaker() {
        local args=() script
        tap_split "$@"
        rc=0
        (cd "$proj" && "${as[@]}" "${outer[@]}" env HOME="$home" timeout 30 "$sbx" run --weaker-sandbox \
            --managed-settings "$tmp/empty-managed.json" "${args[@]}" -- sh -c "$script") </dev/null >"$work/out" \
            2>"$work/err" || rc=$?
        out=$(<"$work/out")
        err=$(<"$work/err")
    }
    weaker --limit timeoutSeconds=1 --grace 1 -- "trap 'echo trapped; exit 3' TERM; sleep 30 & wait"
    if [[ $err == *"Landlock"*"ABI"* && $rc == 125 ]]; then
        echo "ok $((n + 1)) - ${TAP_PREFIX}the weaker sandbox's limits # SKIP this kernel has no Landlock ABI 4"
        n=$((n + 1))
    else
        want_status 124
        want_out trapped
        want_err "limit timeoutSeconds 1s"
        weaker --limit cpuSeconds=1 -- "while :; do :; done"
        want_status 124
        want_err "limit cpuSeconds 1s"
        # Its TMPDIR is a folder of the host's /tmp: the tangle is removed all the same.
        weaker -- "$(tangle 1)"
        want_tangle_gone
        if ((root_caller == 0)); then
            # The limit is 100 more than the user's tasks when it starts; those
            # of other tests that end meanwhile leave room, so the bound is
            # that it stops far below the 1000 tried (control: the first case).
            weaker --limit processes=100 -- "$(forks 1000)"
            got=$(sed -n 's/^forked //p' <<<"$out")
            [[ -n $got ]] && ((got < 500)) || fail_because "in the weaker sandbox it forked ${got:-nothing} of 1000 under processes=100"
        fi
        tap_finish "the weaker sandbox: the timeout's TERM trap runs, CPU time is limited (124, their lines), the tangle in its TMPDIR (a folder of the host's) is removed$( ((root_caller)) || echo ', and a user'"'"'s processes are bounded')"
    fi

    # tmpdirMiB: TMPDIR is a tmpfs of the sandbox's own, of that size; the
    # host's folder at its path (the mount point) stays empty meanwhile.
    rm -f "$proj/where"
    (cd "$proj" && exec "${as[@]}" env HOME="$home" "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --limit tmpdirMiB=8 -- sh -c 'head -c 16777216 /dev/zero >"$TMPDIR/fill"; echo "wrote $(wc -c <"$TMPDIR/fill")"
            stat -f -c %T "$TMPDIR"; echo "$TMPDIR" >where.new; mv where.new where; sleep 1') \
        </dev/null >"$work/out" 2>"$work/err" &
    bg=$!
    for _ in $(seq 400); do [[ -s $proj/where ]] && break; sleep 0.05; done
    where=$(cat "$proj/where" 2>/dev/null || true)
    on_host=$(ls -A "$where" 2>&1 || true)
    rc=0
    wait "$bg" || rc=$?
    out=$(<"$work/out") err=$(<"$work/err")
    want_status 0
    want_out "wrote 8388608"
    want_out tmpfs
    want_err "No space left on device"
    [[ -n $where ]] || fail_because "the command did not say where its TMPDIR was"
    [[ -z $where || -z $on_host ]] || fail_because "the host's $where held, while the command ran: $on_host"
    [[ -z $where || ! -e $where ]] || fail_because "$where is still there"
    rm -f "$proj/where"
    run_limited -- 'head -c 16777216 /dev/zero >"$TMPDIR/fill" && wc -c <"$TMPDIR/fill"'
    want_status 0
    want_out 16777216
    tap_finish "tmpdirMiB=8: TMPDIR is a tmpfs of 8 MiB, a 16 MiB write stops at it (ENOSPC) while the host's folder stays empty, and it is gone after (control: 16 MiB under the default)"

    # What the command leaves in TMPDIR: a folder made unreadable, 3,000 nested
    # ones and a file a process still holds: nothing stays on the host.
    run_limited -- "$(tangle 1)"
    want_tangle_gone
    ((took < 20)) || fail_because "it took $took s"
    # Control: the same made outside, as the user, defeats rm -r (for a user:
    # root's rm reads the folder made unreadable all the same).
    mkdir -p "$work/ctl" && chown "$(id -u "$who"):$(id -g "$who")" "$work/ctl"
    (cd "$work" && "${as[@]}" env TMPDIR="$work/ctl" sh -c "$(tangle 0)") >/dev/null 2>&1 || true
    [[ -d $work/ctl/locked && $(stat -c %a "$work/ctl/locked") == 0 ]] || fail_because "control: the tangle was not made outside"
    if ((root_caller == 0)); then
        "${as[@]}" rm -rf "$work/ctl" 2>/dev/null || true
        [[ -d $work/ctl/locked ]] || fail_because "control: rm -r as $who removed the folder made unreadable"
    fi
    chmod -R u+rwx "$work/ctl" && rm -rf "$work/ctl"
    tap_finish "a folder made unreadable, 3,000 nested folders and a file held open in TMPDIR leave nothing behind (control: made outside, they stay)"

    # A cgroup of the sandbox's own, in a folder delegated to the user
    # (--cgroup-parent; this machine may offer no memory or pids controller
    # there, so this is how it is made, entered and removed, not what it holds).
    if [[ -z $cgroup2 || ! -w $cgroup2 ]]; then
        n=$((n + 1))
        echo "ok $n - ${TAP_PREFIX}a sandbox's own cgroup # SKIP no cgroup v2 hierarchy here that root may write"
    else
        cg=$(cgroup_folder "$who")
        for mode in "" --bubblewrap-mounts; do
            rm -f "$proj/started"
            # The command tries to leave its cgroup, for the hierarchy's root,
            # and to make one (the cgroup v2 mount it sees is the host's, read-only).
            cgroup_run --cgroup-parent "$cg" $mode -- "touch started; sleep 0.5
                echo \$\$ >'$cgroup2/cgroup.procs' 2>/dev/null && echo 'moved itself'
                mkdir '$cgroup2/x' 2>/dev/null && echo 'made a cgroup'
                echo ran"
            for _ in $(seq 400); do [[ -e $proj/started ]] && break; sleep 0.05; done
            in_use=$(cgroups_in_use)
            rc=0
            wait "$bg" || rc=$?
            out=$(<"$work/out") err=$(<"$work/err")
            want_status 0
            want_out ran
            want_no_out "moved itself"
            want_no_out "made a cgroup"
            [[ $in_use == "$cg"/sbx-* && $in_use != *$'\n'* ]] ||
                fail_because "${mode:-waiting}: while it ran, the cgroups in use below $cg were: ${in_use:-none}"
            [[ -z $(ls -d "$cg"/sbx-* 2>/dev/null) ]] || fail_because "${mode:-waiting}: left: $(ls -d "$cg"/sbx-*)"
        done
        # The launcher killed: the reaper removes the cgroup once the sandbox is gone.
        rm -f "$proj/started"
        cgroup_run --cgroup-parent "$cg" -- 'touch started; sleep 30'
        for _ in $(seq 400); do [[ -e $proj/started ]] && break; sleep 0.05; done
        kill -KILL "$bg" 2>/dev/null || true
        wait "$bg" 2>/dev/null || true
        for _ in $(seq 200); do [[ -z $(ls -d "$cg"/sbx-* 2>/dev/null) ]] && break; sleep 0.05; done
        [[ -z $(ls -d "$cg"/sbx-* 2>/dev/null) ]] || fail_because "after a SIGKILL of the launcher, left: $(ls -d "$cg"/sbx-*)"
        # Control: outside, the user's process in the delegated folder's `caller`
        # leaves it for the folder itself.
        rc=0
        sh -c 'echo $$ >"$0/caller/cgroup.procs" && exec "$@"' "$cg" "${as[@]}" \
            sh -c 'echo $$ >"$0/cgroup.procs" && echo moved' "$cg" >"$work/out" 2>&1 || rc=$?
        [[ $(<"$work/out") == moved ]] || fail_because "control: the process outside did not leave its cgroup: $(<"$work/out")"
        rm -f "$proj/started" "$work/plan.json"
        tap_finish "the sandbox's processes run in a cgroup of its own in the folder --cgroup-parent names (bubblewrap's mounts or the stage's), which the command can neither leave nor add to, removed after, and after a SIGKILL of the launcher by the reaper (control: outside, a process of the user's leaves its cgroup)"
    fi

    # Layers: the project lowers, cannot raise.
    mkdir -p "$proj/.claude"
    echo '{"sandbox": {"limits": {"timeoutSeconds": 1}}}' >"$proj/.claude/settings.json"
    chown -R "$(id -u "$who"):$(id -g "$who")" "$proj/.claude"
    run_limited -- "sleep 5"
    want_status 124
    want_err "set by sandbox.limits.timeoutSeconds in $proj/.claude/settings.json"
    echo '{"sandbox": {"limits": {"processes": 100000}}}' >"$proj/.claude/settings.json"
    run_limited -- "true"
    want_status 0
    want_err "left out: the project's files can lower a limit, not raise it over 4096 (sbx's default)"
    rm -r "$proj/.claude"
    tap_finish "a project's settings lower a limit (timeoutSeconds 1 holds) and cannot raise one (processes 100000 is left out, named)"
}

tap_users
if [[ -n $cgroup2 && -w $cgroup2 ]]; then
    for who in "${users[@]}"; do
        id -u "$who" >/dev/null 2>&1 || continue
        mkdir -p "$(cgroup_folder "$who")/caller"
        tap_on_exit "rmdir '$(cgroup_folder "$who")/caller' '$(cgroup_folder "$who")' 2>/dev/null || true"
        chown "$(id -u "$who"):$(id -g "$who")" "$(cgroup_folder "$who")"{,/cgroup.procs,/caller,/caller/cgroup.procs}
    done
fi
tap_users_at_once user_cases

# Bad input: a key that is no limit, a value out of range.
mkdir -p "$tmp/bad/.claude" && git init -q "$tmp/bad"
echo '{"sandbox": {"limits": {"timeoutSecond": 5}}}' >"$tmp/bad/.claude/settings.json"
rc=0
(cd "$tmp/bad" && "$sbx" run --managed-settings "$tmp/empty-managed.json" -- true) >"$tmp/bad/out" 2>"$tmp/bad/err" || rc=$?
out=$(<"$tmp/bad/out") err=$(<"$tmp/bad/err")
want_status 125
want_err "sandbox.limits.timeoutSecond"
want_err "did you mean 'timeoutSeconds'?"
echo '{}' >"$tmp/bad/.claude/settings.json"
rc=0
(cd "$tmp/bad" && "$sbx" run --managed-settings "$tmp/empty-managed.json" --limit processes=0 -- true) >"$tmp/bad/out" 2>"$tmp/bad/err" || rc=$?
out=$(<"$tmp/bad/out") err=$(<"$tmp/bad/err")
want_status 125
want_err "--limit processes=0: give a whole number from 1 to 4194304"
tap_finish "a limit misspelt in a settings file, or out of range on the command line, refuses the run (125), naming it"

tap_end
