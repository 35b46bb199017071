#!/usr/bin/env bash
# TAP: signals sent to `sbx run` (README, "Signals"). SIGTERM, SIGINT, SIGHUP and
# SIGQUIT go to the command's process group as they are; the command's traps run
# and its status is sbx's (a trap's `exit 7` is 7). One that ignores SIGTERM,
# SIGHUP or SIGQUIT is killed once the grace period (--grace) runs out, with a
# line that says so, and its status is 137; one that goes on after SIGINT is not. The control is --grace 0, where the sandbox is killed at once:
# the trap never runs. Each case runs as the current user and, as root with
# SBX_TEST_USER set, as that user too; `sbx run` carries the plan out itself, and
# once through `--launcher sbx-linux`.
# Usage: signals_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX
set -euo pipefail

if (($# != 2)); then
    echo "usage: signals_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX" >&2
    exit 2
fi
source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch

bin=$tmp/bin
tap_readable_copies "$bin" "$1" "$2"
sbx=$bin/sbx
launcher=$bin/sbx-linux

# The command: a trap for SIG that writes trapped-SIG into the project and exits
# with CODE, `started` once it is set, then a wait on a child in its group.
trapping() { echo "trap 'echo trapped-$1 >trapped; exit $2' $1; touch started; sleep 60 & wait"; }

# in_background ARGS... -- SCRIPT: `sbx run ARGS -- sh -c SCRIPT` as the case's
# user, in the background; `pid` is sbx's own (setpriv and env exec it). Waits up
# to 10 s for the command to touch `started`.
in_background() {
    local args=() script
    tap_split "$@"
    rm -f "$proj/started" "$proj/trapped"
    (cd "$proj" && exec "${as[@]}" env HOME="$home" "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        "${args[@]}" -- sh -c "$script") </dev/null >"$work/out" 2>"$work/err" &
    pid=$!
    local i
    for i in $(seq 100); do
        [[ -e $proj/started ]] && return 0
        sleep 0.1
    done
    fail_because "the command did not start within 10 s"
}

# finish_background: waits for it; sets rc, out, err and `took` (seconds, whole).
finish_background() {
    local start=$SECONDS
    rc=0
    wait "$pid" || rc=$?
    took=$((SECONDS - start))
    out=$(<"$work/out")
    err=$(<"$work/err")
}

want_trapped() {
    [[ $(cat "$proj/trapped" 2>/dev/null) == "trapped-$1" ]] || fail_because "the command's $1 trap did not run"
}

# No bubblewrap of this case's left running.
want_no_sandbox() {
    ! pgrep -f "$proj" >/dev/null || fail_because "a process of the sandbox is still running: $(pgrep -af "$proj")"
}

tap_users
for who in "${users[@]}"; do
    tap_user_project "$who" || continue

    # timeout(1), as CI cancellation and agent hosts send it (6 s: the command
    # has started by then even on a loaded machine; a signal before it starts
    # ends the sandbox at once).
    rm -f "$proj/trapped"
    rc=0
    (cd "$proj" && "${as[@]}" env HOME="$home" timeout -s TERM 6 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        -- sh -c "$(trapping TERM 7)") </dev/null >"$work/out" 2>"$work/err" || rc=$?
    want_status 124
    want_trapped TERM
    want_no_sandbox
    tap_finish "timeout -s TERM: the command's TERM trap runs inside, and timeout sees its own 124"

    for sig in TERM INT HUP QUIT; do
        in_background -- "$(trapping "$sig" 7)"
        kill -s "$sig" "$pid"
        finish_background
        want_status 7
        want_trapped "$sig"
        want_no_sandbox
        tap_finish "SIG$sig from a parent reaches the command's group: its trap runs and its exit status 7 is sbx's"
    done

    in_background --launcher "$launcher" -- "$(trapping INT 9)"
    kill -s INT "$pid"
    finish_background
    want_status 9
    want_trapped INT
    tap_finish "through --launcher sbx-linux too: SIGINT reaches the command's trap, status 9"

    # A child of the command in its group gets the signal too: nothing is left.
    # The command starts once the child has set its trap, and its own trap waits
    # for the child's (the sandbox ends with the command, children and all).
    # Each sleep starts before its shell says it is ready: one started after the
    # signal came would not get it, and the trap's wait would wait for it (a
    # race a loaded machine lost).
    in_background -- "sh -c 'trap \"echo child-trapped >child; exit 0\" TERM; sleep 60 & touch child-ready; wait' &
while [ ! -e child-ready ]; do sleep 0.05; done; rm -f child-ready
trap 'wait; echo trapped-TERM >trapped; exit 5' TERM; sleep 60 & touch started; wait"
    kill -s TERM "$pid"
    finish_background
    want_status 5
    [[ $(cat "$proj/child" 2>/dev/null) == child-trapped ]] || fail_because "the command's child did not get TERM"
    rm -f "$proj/child"
    tap_finish "the command's children in its group get the signal too"

    in_background --grace 1 -- "trap '' TERM; touch started; sleep 60"
    kill -s TERM "$pid"
    finish_background
    want_status 137
    want_err "sbx: warning: the command was still running 1 s after SIGTERM came: its sandbox was killed (--grace SECONDS gives it longer)"
    ((took <= 5)) || fail_because "it took $took s to end"
    want_no_sandbox
    tap_finish "a command that ignores SIGTERM is killed after --grace 1, with status 137 and one line saying so"

    # SIGINT asks a command to stop what it is doing; one that goes on after it
    # (a shell, a REPL) goes on inside too. The control is the case above: the
    # same --grace 1 after SIGTERM kills a command that goes on.
    in_background --grace 1 -- "trap 'echo trapped-INT >trapped' INT; touch started; sleep 60 & wait; sleep 2; exit 4"
    kill -s INT "$pid"
    finish_background
    want_status 4
    want_trapped INT
    [[ $err != *"still running"* ]] || fail_because "sbx said it killed the command: $err"
    want_no_sandbox
    tap_finish "a command that goes on after SIGINT is not killed after --grace 1: it ends as it would outside, status 4"

    in_background --grace 0 -- "$(trapping TERM 7)"
    kill -s TERM "$pid"
    finish_background
    want_status 143
    [[ ! -e $proj/trapped ]] || fail_because "the trap ran"
    want_no_sandbox
    tap_finish "control: with --grace 0 the sandbox is killed at once, the trap never runs, sbx dies of SIGTERM"
    rm -f "$proj/started"
done

tap_end
