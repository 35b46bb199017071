#!/usr/bin/env bash
# TAP: escape attempts against `sbx run`. Each attempt must be refused inside the
# sandbox, and each has a control that shows the same attempt working where the
# sandbox, or the one setting that stops it, is absent: so every check can fail.
# sbx-attack (tests/attacks/attack.cpp) makes the attempts; its exit status is 0
# when one worked, 1 when it was refused and 2 on a usage error, and a process the
# filter kills dies of the signal, which sbx run passes on as 128+N.
# The controls loosen through settings where a setting can (filesystem.disabled,
# no denyRead, network.allowAllUnixSockets); the seccomp and namespace attempts,
# which no setting loosens, run in bare bubblewrap (the same namespaces without the
# filter) or with no sandbox at all. A control this machine cannot run (io_uring or
# TIOCSTI switched off by a sysctl) is skipped, saying why; its confined check runs.
# Every attack runs as the current user and, when that is root and SBX_TEST_USER
# names a user (tools/test.sh makes sbx-test), again as that user. Each case gets a
# fresh HOME, project and TMPDIR; the binaries are copied where any user can run
# them. Needs bash, coreutils, util-linux (setpriv, script, unshare), procps (pgrep),
# git and bubblewrap; where bubblewrap cannot make a sandbox, a user's cases are
# skipped.
# Usage: attacks_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX PATH-TO-SBX-ATTACK
# Functions run through trap, wait_until and a variable look unreachable to shellcheck.
# shellcheck disable=SC2317
set -euo pipefail

if (($# != 3)); then
    echo "usage: attacks_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX PATH-TO-SBX-ATTACK" >&2
    exit 2
fi

tmp=$(mktemp -d)
# Processes named after this marker were started by this test, whatever they became.
marker_base=sbxattack-$(basename "$tmp" | tr -dc 'A-Za-z0-9')
bg_pids=()
cleanup() {
    local pid
    for pid in "${bg_pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    for pid in $(pgrep -f "$marker_base" || true); do kill -KILL "$pid" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
# Killed (meson's timeout sends SIGTERM): exit, so that cleanup runs.
trap 'exit 143' TERM
trap 'exit 130' INT
chmod 755 "$tmp"  # the test user walks through it to its own directory
tmp=$(cd "$tmp" && pwd -P)

# The binaries may sit where the test user cannot read (a clone under /root).
bin=$tmp/bin
mkdir "$bin"
cp "$1" "$bin/sbx"
cp "$2" "$bin/sbx-linux"
cp "$3" "$bin/sbx-attack"
chmod 755 "$bin" "$bin"/*
sbx=$bin/sbx
sbx_linux=$bin/sbx-linux
attack=$bin/sbx-attack

# Settings for the controls, each given as the flag layer (--settings).
conf=$tmp/settings
mkdir "$conf"
echo '{"sandbox": {"enabled": true, "filesystem": {"disabled": true}}}' >"$conf/fs-disabled.json"
echo '{"sandbox": {"enabled": true}}' >"$conf/no-deny.json"
echo '{"sandbox": {"enabled": true, "network": {"allowAllUnixSockets": true}}}' >"$conf/unix-sockets.json"
# The confined runs use the built-in default policy (no settings file at all), which
# is what a user without settings gets. This machine's managed settings file, if it
# has one, must not change the answers; but any layer replaces the default policy,
# so then a flag file stands in for the default's credential stores.
managed=()
confined=()
if [[ -e /etc/claude-code/managed-settings.json ]]; then
    echo '{}' >"$conf/empty-managed.json"
    managed=(--managed-settings "$conf/empty-managed.json")
    echo '{"sandbox": {"enabled": true, "filesystem": {"denyRead": ["~/.ssh"]}}}' >"$conf/like-default.json"
    confined=(--settings "$conf/like-default.json")
fi
chmod 755 "$conf"
chmod 644 "$conf"/*

bare_bwrap=(bwrap --unshare-user --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc --)

source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"

# skip DESCRIPTION WHY: a TAP line for a check this machine cannot make.
skip() {
    n=$((n + 1))
    echo "ok $n - ${TAP_PREFIX-}$1 # SKIP $2"
    problems=()
}

want_status() { [[ $rc == "$1" ]] || fail_because "exit status $rc, not $1"; }
# want_refused [ERRNO]: sbx-attack said the attempt was refused (with ERRNO).
want_refused() {
    want_status 1
    grep -qE -- ": refused: ${1:-}" <<<"$out" || fail_because "stdout does not say: refused: ${1:-...}"
}
want_succeeded() {
    want_status 0
    grep -qF -- ": succeeded: " <<<"$out" || fail_because "stdout does not say: succeeded"
}
want_out() { grep -qF -- "$1" <<<"$out" || fail_because "stdout does not hold: $1"; }
want_no_out() { ! grep -qF -- "$1" <<<"$out" || fail_because "stdout holds: $1"; }
want_file() { [[ -e $1 ]] || fail_because "$1 does not exist"; }
want_no_file() { [[ ! -e $1 && ! -L $1 ]] || fail_because "$1 exists"; }

# wait_until SECONDS COMMAND...: true as soon as COMMAND succeeds, false if it has
# not within SECONDS.
wait_until() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.1
    done
}

# as_user NAME: the cases that follow run as NAME, in a directory of NAME's own.
as_user() {
    who=$1
    TAP_PREFIX="as $who: "
    work=$tmp/as-$who
    mkdir -m 755 "$work"
    if [[ $who == "$(id -un)" ]]; then
        as=()
    else
        as=(setpriv --reuid="$(id -u "$who")" --regid="$(id -g "$who")" --init-groups --)
        chown "$who:" "$work"
    fi
}

# give PATH...: PATH and what is under it belong to the case's user.
give() {
    ((${#as[@]} == 0)) || chown -R "$who:" "$@"
}

# fresh_case: sets $case_dir, $home, $proj and $tmpd for the next case and makes them.
fresh_case() {
    case_dir=$work/case-$((n + 1))
    home=$case_dir/home
    proj=$case_dir/project
    tmpd=$case_dir/tmp
    mkdir -p "$home" "$proj" "$tmpd"
    give "$case_dir"
}

# in_case COMMAND...: COMMAND as the case's user, with the case's HOME and TMPDIR.
in_case() { "${as[@]}" env HOME="$home" TMPDIR="$tmpd" "$@"; }

# capture COMMAND...: runs COMMAND with in_case and stdin from $input (/dev/null
# unless set); leaves $rc, $out and $err.
capture() {
    rc=0
    in_case "$@" <"${input:-/dev/null}" >"$case_dir/out" 2>"$case_dir/err" || rc=$?
    out=$(cat "$case_dir/out")
    err=$(cat "$case_dir/err")
}

# sbx_run [OPTION...] -- COMMAND...: `sbx run` of COMMAND with the case's project as
# the root, at most 20 seconds (a hang ends with status 124).
sbx_run() { capture timeout 20 "$sbx" run --root "$proj" --launcher "$sbx_linux" "${managed[@]}" "$@"; }

# start_bg COMMAND...: COMMAND as the case's user in the background, output to
# $case_dir/bg.log; sets $bg_pid (the command's own pid: every step execs).
start_bg() {
    "${as[@]}" env HOME="$home" TMPDIR="$tmpd" "$@" </dev/null >"$case_dir/bg.log" 2>&1 &
    bg_pid=$!
    bg_pids+=("$bg_pid")
}

# stop_bg PID: kills and reaps a process start_bg started (quietly: bash reports a
# killed job on stderr otherwise), and forgets it, since its pid may come back.
stop_bg() {
    {
        kill -KILL "$1" || true
        wait "$1" || true
    } 2>/dev/null
    local kept=() pid
    for pid in "${bg_pids[@]}"; do [[ $pid == "$1" ]] || kept+=("$pid"); done
    bg_pids=("${kept[@]}")
}

# ended PID: the process is gone or a zombie (dead, not yet reaped).
ended() {
    local state
    state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null || true)
    [[ -z $state || $state == Z ]]
}

no_process() { ! pgrep -f "$1" >/dev/null; }
has_process() { pgrep -f "$1" >/dev/null; }
tmpdir_made() { compgen -G "$tmpd/sbx-*" >/dev/null; }
no_tmpdir() { ! tmpdir_made; }

# file_state PATH: "absent", or "present" and a digest of the content.
file_state() {
    if [[ -e $1 || -L $1 ]]; then
        echo "present $(sha256sum <"$1" 2>/dev/null | cut -c1-16)"
    else
        echo absent
    fi
}

# Case set-ups: each prepares the fresh case's project and home.
setup_plain() { :; }
setup_repo() {
    # As the case's user: git refuses a repository that another user owns.
    in_case git init -q "$proj"
    in_case git -C "$proj" config user.name "sbx attack test"
    in_case git -C "$proj" config user.email "sbx-attack@example.invalid"
}
setup_claude() {
    mkdir "$proj/.claude"
    echo '{"sandbox": {"enabled": true}}' >"$proj/.claude/settings.json"
    give "$case_dir"
}
setup_outside() {
    mkdir "$case_dir/outside"
    give "$case_dir"
}
secret=
setup_secret() {
    secret="sbx-attack secret $RANDOM$RANDOM"
    mkdir -m 700 "$home/.ssh"
    echo "$secret" >"$home/.ssh/id_rsa"
    give "$case_dir"
}

# --- the filesystem -------------------------------------------------------------------

# write_case SETUP DESCRIPTION PATH: writing PATH (relative to the case directory:
# project/... or outside/...) is refused and leaves the host's file as it was; the
# control writes it with filesystem.disabled.
write_case() {
    local setup=$1 what=$2 rel=$3 before text="written by an attack"
    fresh_case
    $setup
    before=$(file_state "$case_dir/$rel")
    sbx_run "${confined[@]}" -- "$attack" write "$case_dir/$rel" "$text"
    want_refused
    [[ $(file_state "$case_dir/$rel") == "$before" ]] || fail_because "$rel changed on the host"
    tap_finish "$what is refused"

    fresh_case
    $setup
    sbx_run --settings "$conf/fs-disabled.json" -- "$attack" write "$case_dir/$rel" "$text"
    want_succeeded
    [[ $(cat "$case_dir/$rel" 2>/dev/null || true) == "$text" ]] || fail_because "$rel does not hold the text"
    tap_finish "control: $what works with filesystem.disabled"
}

fs_attacks() {
    write_case setup_outside "writing a file outside the writable roots" outside/note.txt
    write_case setup_repo "writing .git/hooks/pre-commit" project/.git/hooks/pre-commit
    write_case setup_repo "writing .git/config" project/.git/config
    write_case setup_claude "writing .claude/settings.json" project/.claude/settings.json
    write_case setup_plain "writing .bashrc in the root" project/.bashrc
    write_case setup_plain "writing .mcp.json" project/.mcp.json
    write_case setup_plain "creating HEAD at a root that is no repository" project/HEAD

    # A hidden file, read directly and through a symlink the command makes.
    fresh_case
    setup_secret
    sbx_run "${confined[@]}" -- "$attack" read "$home/.ssh/id_rsa"
    want_refused
    want_no_out "$secret"
    tap_finish "reading ~/.ssh/id_rsa (hidden by the default policy) is refused"

    fresh_case
    setup_secret
    sbx_run --settings "$conf/no-deny.json" -- "$attack" read "$home/.ssh/id_rsa"
    want_succeeded
    want_out "$secret"
    tap_finish "control: reading ~/.ssh/id_rsa works with settings that deny no read"

    fresh_case
    setup_secret
    sbx_run "${confined[@]}" -- "$attack" symlink-read "$home/.ssh/id_rsa" "$proj/harmless-link"
    want_refused
    want_no_out "$secret"
    tap_finish "reading ~/.ssh/id_rsa through a symlink the command makes in the root is refused"

    fresh_case
    setup_secret
    sbx_run --settings "$conf/no-deny.json" -- "$attack" symlink-read "$home/.ssh/id_rsa" "$proj/harmless-link"
    want_succeeded
    want_out "$secret"
    tap_finish "control: reading through the symlink works with settings that deny no read"

    # .git pinned: renaming it away would take the protected paths inside along.
    fresh_case
    setup_repo
    sbx_run "${confined[@]}" -- "$attack" rename "$proj/.git" "$proj/.git-moved"
    want_refused EBUSY
    want_file "$proj/.git/config"
    want_no_file "$proj/.git-moved"
    tap_finish "mv .git elsewhere in the root is refused with EBUSY"

    fresh_case
    setup_repo
    sbx_run --settings "$conf/fs-disabled.json" -- "$attack" rename "$proj/.git" "$proj/.git-moved"
    want_succeeded
    want_file "$proj/.git-moved/config"
    tap_finish "control: mv .git works with filesystem.disabled"

    # A protected path swapped for a symlink between plan and launch: the launcher
    # must see that the disk no longer looks as planned, and run nothing.
    fresh_case
    setup_repo
    capture "$sbx" plan --root "$proj" "${managed[@]}" "${confined[@]}" -- "$attack" write "$proj/launched"
    cp "$case_dir/out" "$case_dir/plan.json"
    [[ $rc == 0 ]] || fail_because "sbx plan failed with status $rc"
    # The real hooks stay inside .git, so that .git itself still looks as planned
    # and only the swapped path gives the change away.
    mv "$proj/.git/hooks" "$proj/.git/hooks-moved"
    mkdir "$case_dir/hooks-elsewhere"
    ln -s "$case_dir/hooks-elsewhere" "$proj/.git/hooks"
    give "$case_dir"
    input=$case_dir/plan.json capture timeout 20 "$sbx_linux" --plan-fd 0
    want_status 125
    grep -qE -- "$proj/\.git/hooks([^-]|\$)" <<<"$err" || fail_because "stderr does not name $proj/.git/hooks"
    want_no_file "$proj/launched"
    tap_finish ".git/hooks swapped for a symlink after the plan: sbx-linux refuses with 125, naming it"

    fresh_case
    setup_repo
    capture "$sbx" plan --root "$proj" "${managed[@]}" "${confined[@]}" -- "$attack" write "$proj/launched"
    cp "$case_dir/out" "$case_dir/plan.json"
    [[ $rc == 0 ]] || fail_because "sbx plan failed with status $rc"
    input=$case_dir/plan.json capture timeout 20 "$sbx_linux" --plan-fd 0
    want_succeeded
    want_file "$proj/launched"
    tap_finish "control: the same plan, with the disk unchanged, runs the command"
}

# --- namespaces and the seccomp filter ---------------------------------------------------

# ns_case DESCRIPTION SUBCOMMAND ARG...: refused with EPERM in the sandbox; works in
# bare bubblewrap.
ns_case() {
    local what=$1
    shift
    fresh_case
    sbx_run "${confined[@]}" -- "$attack" "$@"
    want_refused EPERM
    tap_finish "$what is refused with EPERM"

    fresh_case
    capture timeout 20 "${bare_bwrap[@]}" "$attack" "$@"
    want_succeeded
    tap_finish "control: $what works in bare bubblewrap (same namespaces, no filter)"
}

syscall_attacks() {
    ns_case "unshare -U (a user namespace)" unshare user
    # Without a user namespace to grant CAP_SYS_ADMIN, unshare -m and -n fail for an
    # unprivileged user whatever the filter says; the real attack asks for both.
    ns_case "unshare -Um (a mount namespace)" unshare user,mount
    ns_case "unshare -Un (a network namespace)" unshare user,net
    ns_case "clone with CLONE_NEWUSER|CLONE_NEWNS" clone-ns user,mount

    fresh_case
    mkdir "$proj/mnt"
    give "$case_dir"
    sbx_run "${confined[@]}" -- "$attack" mount "$proj/mnt"
    want_refused EPERM
    if mountpoint -q "$proj/mnt" 2>/dev/null; then
        fail_because "a tmpfs is mounted on $proj/mnt on the host"
        umount "$proj/mnt" || true
    fi
    tap_finish "mounting a tmpfs is refused with EPERM"

    fresh_case
    mkdir "$proj/mnt"
    give "$case_dir"
    if ! command -v unshare >/dev/null; then
        skip "control: mounting a tmpfs works under unshare -Urm" "unshare is not installed"
    else
        capture timeout 20 unshare -Urm "$attack" mount "$proj/mnt"
        want_succeeded
        tap_finish "control: mounting a tmpfs works under unshare -Urm"
    fi

    fresh_case
    sbx_run "${confined[@]}" -- "$attack" clone3
    want_refused ENOSYS
    tap_finish "clone3 is refused with ENOSYS (libc falls back to clone)"

    fresh_case
    capture "$attack" clone3
    want_succeeded
    tap_finish "control: clone3 makes a child outside the sandbox"

    fresh_case
    sbx_run "${confined[@]}" -- "$attack" io-uring
    want_refused EPERM
    tap_finish "io_uring_setup is refused with EPERM"

    fresh_case
    capture "$attack" io-uring
    local io_uring_disabled
    io_uring_disabled=$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)
    if [[ $rc == 1 && $io_uring_disabled != 0 ]]; then
        skip "control: io_uring_setup works outside the sandbox" "kernel.io_uring_disabled = $io_uring_disabled"
    else
        want_succeeded
        tap_finish "control: io_uring_setup works outside the sandbox"
    fi

    # x32: without the filter the kernel answers (ENOSYS where x32 is off); with it,
    # the process is killed by SIGSYS, 128 + 31.
    fresh_case
    sbx_run "${confined[@]}" -- "$attack" x32
    want_status 159
    tap_finish "a system call through the x32 numbering kills the command with SIGSYS (159)"

    fresh_case
    capture "$attack" x32
    [[ $rc == 0 || $rc == 1 ]] || fail_because "exit status $rc: killed without any filter"
    tap_finish "control: without the filter the same x32 call is answered, not killed"

    # i386 (int 0x80): killed by SIGSYS where the kernel has the ABI. Where it has
    # none, int 0x80 faults (SIGSEGV) with or without the filter.
    fresh_case
    capture "$attack" i386
    local i386_rc=$rc i386_out=$out i386_err=$err
    sbx_run "${confined[@]}" -- "$attack" i386
    if [[ $i386_rc == 139 ]]; then
        [[ $rc == 159 || $rc == 139 ]] || fail_because "exit status $rc, neither 159 (SIGSYS) nor 139 (SIGSEGV)"
    else
        want_status 159
    fi
    tap_finish "a system call through int 0x80 (i386) kills the command with SIGSYS (159)"

    rc=$i386_rc out=$i386_out err=$i386_err
    if [[ $rc == 139 ]]; then
        skip "control: an int 0x80 getpid is answered outside the sandbox" "this kernel has no i386 ABI (int 0x80 faults)"
    else
        want_succeeded
        tap_finish "control: an int 0x80 getpid is answered outside the sandbox"
    fi
}

# --- sockets and the terminal ----------------------------------------------------------

# socket_case SETTINGS-FILE: a Unix socket to a server outside; sets $rc, $out and
# leaves the server's log in $case_dir/bg.log.
socket_case() {
    start_bg "$attack" unix-serve "$case_dir/sock" "$case_dir/ready"
    local server=$bg_pid
    if ! wait_until 10 test -e "$case_dir/ready"; then
        fail_because "the server outside did not start: $(cat "$case_dir/bg.log")"
        stop_bg "$server"
        return
    fi
    sbx_run "$@" -- "$attack" unix-connect "$case_dir/sock"
    # What the server received, if anything, arrives right after the connect.
    wait_until 2 grep -q 'accepted a connection' "$case_dir/bg.log" || true
    stop_bg "$server"
}

socket_attacks() {
    fresh_case
    socket_case "${confined[@]}"
    want_refused EPERM
    ! grep -q 'accepted' "$case_dir/bg.log" || fail_because "the server outside accepted a connection"
    tap_finish "connecting a Unix socket to a server outside is refused with EPERM"

    fresh_case
    socket_case --settings "$conf/unix-sockets.json"
    want_succeeded
    grep -q 'accepted a connection: hello' "$case_dir/bg.log" || fail_because "the server outside got no hello"
    tap_finish "control: the connection reaches the server with network.allowAllUnixSockets"

    local type
    for type in dgram seqpacket; do
        fresh_case
        sbx_run "${confined[@]}" -- "$attack" socketpair "$type"
        want_refused EPERM
        tap_finish "a $type Unix socketpair is refused with EPERM"

        fresh_case
        sbx_run --settings "$conf/unix-sockets.json" -- "$attack" socketpair "$type"
        want_succeeded
        tap_finish "control: a $type Unix socketpair works with network.allowAllUnixSockets"
    done

    fresh_case
    sbx_run "${confined[@]}" -- "$attack" socketpair stream
    want_succeeded
    tap_finish "a stream Unix socketpair (a pipe between processes) still works in the sandbox"

    # TIOCSTI needs a terminal on fd 0: script gives the command a pty, and echoes
    # an injected character in front of the next line ("xtiocsti: ...").
    if ! command -v script >/dev/null; then
        skip "TIOCSTI into the terminal is refused with EPERM" "script (util-linux) is not installed"
        skip "control: TIOCSTI works outside the sandbox" "script (util-linux) is not installed"
        return
    fi
    local cmd
    fresh_case
    printf -v cmd '%q ' "$sbx" run --root "$proj" --launcher "$sbx_linux" "${managed[@]}" "${confined[@]}" \
        -- "$attack" tiocsti
    capture timeout 20 script -qec "$cmd" /dev/null
    want_status 1
    want_out "tiocsti: refused: EPERM"
    want_no_out "xtiocsti"
    tap_finish "TIOCSTI into the terminal is refused with EPERM"

    fresh_case
    printf -v cmd '%q ' "$attack" tiocsti
    capture timeout 20 script -qec "$cmd" /dev/null
    local legacy
    legacy=$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo 1)
    if [[ $rc == 1 && $legacy == 0 ]]; then
        skip "control: TIOCSTI works outside the sandbox" "dev.tty.legacy_tiocsti = 0"
    else
        want_succeeded
        want_out "xtiocsti: succeeded"
        tap_finish "control: TIOCSTI works outside the sandbox (the injected x is echoed)"
    fi
}

# --- processes -------------------------------------------------------------------------

# outside_process: starts `sleep 300` as the case's user, outside any sandbox; sets
# $outside. Each case has its own, so that an escape in one leaves the next intact.
outside_process() {
    start_bg sleep 300
    outside=$bg_pid
    # Until setpriv and env have exec'd, the pid is root's and not yet sleep.
    wait_until 5 runs_sleep "$outside" || fail_because "the process outside did not start"
}
runs_sleep() { [[ $(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) == "sleep 300 " ]]; }

process_attacks() {
    local outside
    fresh_case
    outside_process
    sbx_run "${confined[@]}" -- "$attack" see-pid "$outside"
    want_refused ESRCH
    stop_bg "$outside"
    tap_finish "seeing a process outside is refused with ESRCH"

    fresh_case
    outside_process
    capture "$attack" see-pid "$outside"
    want_succeeded
    stop_bg "$outside"
    tap_finish "control: the process is visible outside the sandbox"

    fresh_case
    outside_process
    sbx_run "${confined[@]}" -- "$attack" kill "$outside"
    want_refused ESRCH
    if ended "$outside"; then fail_because "the process outside died"; fi
    stop_bg "$outside"
    tap_finish "signalling a process outside is refused with ESRCH"

    fresh_case
    outside_process
    local status=0
    {
        capture "$attack" kill "$outside"
        # Delivered SIGTERM ends sleep at once; anything else is killed here.
        if [[ $rc == 0 ]]; then wait "$outside" || status=$?; fi
    } 2>/dev/null
    want_succeeded
    [[ $status == 143 ]] || fail_because "the process outside ended with status $status, not 143 (SIGTERM)"
    stop_bg "$outside"
    tap_finish "control: the same kill ends the process outside the sandbox"

    fresh_case
    outside_process
    sbx_run "${confined[@]}" -- "$attack" ptrace "$outside"
    want_refused ESRCH
    stop_bg "$outside"
    tap_finish "ptrace of a process outside is refused with ESRCH"

    fresh_case
    outside_process
    capture "$attack" ptrace "$outside"
    stop_bg "$outside"
    local scope
    scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
    if [[ $rc == 1 && $scope != 0 ]]; then
        skip "control: ptrace of the process works outside the sandbox" "kernel.yama.ptrace_scope = $scope"
    else
        want_succeeded
        tap_finish "control: ptrace of the process works outside the sandbox"
    fi

    # /proc in the sandbox shows the command's own processes only.
    fresh_case
    outside_process
    sbx_run "${confined[@]}" -- sh -c 'ls /proc'
    stop_bg "$outside"
    want_status 0
    local pids
    pids=$(grep -cE '^[0-9]+$' <<<"$out" || true)
    ((pids > 0 && pids <= 10)) || fail_because "/proc lists $pids processes, not 1 to 10"
    ! grep -qx -- "$outside" <<<"$out" || fail_because "/proc lists the process outside ($outside)"
    tap_finish "/proc in the sandbox lists only the command's own processes ($pids)"

    fresh_case
    outside_process
    capture sh -c 'ls /proc'
    stop_bg "$outside"
    grep -qx -- "$outside" <<<"$out" || fail_because "/proc does not list $outside"
    tap_finish "control: /proc outside the sandbox lists the process outside"

    # A process in a new session, double-forked: it must die with the command.
    local marker
    fresh_case
    marker=$marker_base-$n
    sbx_run "${confined[@]}" -- "$attack" spawn-orphan "$marker"
    want_succeeded
    wait_until 3 no_process "$marker" || fail_because "still running: $(pgrep -af "$marker" | tr '\n' ' ')"
    tap_finish "a double-forked background process does not outlive the command"

    fresh_case
    marker=$marker_base-$n
    capture "$attack" spawn-orphan "$marker"
    want_succeeded
    wait_until 3 has_process "$marker" || fail_because "no process named $marker runs"
    local pid
    for pid in $(pgrep -f "$marker" || true); do kill -KILL "$pid" 2>/dev/null || true; done
    tap_finish "control: the same process outlives sbx-attack outside the sandbox"
}

# --- what the launcher leaves behind -----------------------------------------------------

leftover_attacks() {
    # A command that runs until told to stop: while it runs, placeholders and the
    # temporary directory exist; once it ends, neither remains.
    fresh_case
    setup_repo
    local before after run
    before=$(find "$proj" | sort)
    # shellcheck disable=SC2016  # $1 is the inner shell's
    start_bg timeout 20 "$sbx" run --root "$proj" --launcher "$sbx_linux" "${managed[@]}" "${confined[@]}" \
        -- sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done' sh "$case_dir/go"
    run=$bg_pid
    wait_until 10 test -e "$proj/.bashrc" || fail_because "no placeholder $proj/.bashrc appeared"
    wait_until 10 tmpdir_made || fail_because "no temporary directory $tmpd/sbx-* appeared"
    rc=0 out=$(cat "$case_dir/bg.log") err=''
    tap_finish "control: while the command runs, the placeholder .bashrc and \$TMPDIR/sbx-* exist"

    touch "$case_dir/go"
    rc=0
    wait "$run" || rc=$?
    out=$(cat "$case_dir/bg.log")
    want_status 0
    after=$(find "$proj" | sort)
    [[ $after == "$before" ]] || fail_because "the project changed: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | tr '\n' ' ')"
    tmpdir_made && fail_because "left behind: $(echo "$tmpd"/sbx-*)"
    tap_finish "after the command, the project is as before and no \$TMPDIR/sbx-* remains"

    launcher_kill KILL
    launcher_kill TERM
}

# launch_cleaned LAUNCHER MARKER: the launcher has ended, and the placeholder
# .bashrc, the temporary directory and every process named MARKER are gone.
launch_cleaned() { ended "$1" && [[ ! -e $proj/.bashrc ]] && no_tmpdir && no_process "$2"; }

# launcher_kill SIGNAL: the launcher killed with SIGNAL while the command runs
# leaves no placeholder, no temporary directory and no process within 3 seconds.
launcher_kill() {
    local signal=$1 marker launcher
    fresh_case
    setup_repo
    marker=$marker_base-$n
    # sbx run execs into sbx-linux, and setpriv and env exec too: the pid is the launcher's.
    # shellcheck disable=SC2016  # $0 is the inner shell's
    start_bg "$sbx" run --root "$proj" --launcher "$sbx_linux" "${managed[@]}" "${confined[@]}" \
        -- bash -c 'exec -a "$0" sleep 300' "$marker"
    launcher=$bg_pid
    rc=0 out='' err=''
    if ! wait_until 10 test -e "$proj/.bashrc" || ! wait_until 10 has_process "$marker 300"; then
        fail_because "the sandboxed command did not start"
    fi
    {
        kill "-$signal" "$launcher" || true
        # One deadline for everything; then each thing that is still there is named.
        wait_until 3 launch_cleaned "$launcher" "$marker" || true
        ended "$launcher" || fail_because "the launcher is still running 3 s after SIG$signal"
        [[ ! -e $proj/.bashrc ]] || fail_because "the placeholder $proj/.bashrc remains"
        no_tmpdir || fail_because "left behind: $(echo "$tmpd"/sbx-*)"
        no_process "$marker" || fail_because "still running: $(pgrep -af "$marker" | tr '\n' ' ')"
        stop_bg "$launcher"
    } 2>/dev/null
    out=$(cat "$case_dir/bg.log")
    tap_finish "SIG$signal to the launcher: no placeholder, temporary directory or process remains"
}

# --- the run ------------------------------------------------------------------------------

users=("$(id -un)")
if ((EUID == 0)) && [[ -n ${SBX_TEST_USER:-} ]]; then
    users+=("$SBX_TEST_USER")
fi

for user in "${users[@]}"; do
    who=$user
    TAP_PREFIX="as $who: "
    if ! id -u "$user" >/dev/null 2>&1; then
        problems=("SBX_TEST_USER names no user")
        tap_finish "the test user $user exists"
        continue
    fi
    as_user "$user"
    fresh_case
    if ! command -v bwrap >/dev/null; then
        skip "every attack" "bubblewrap (bwrap) is not installed"
        continue
    fi
    capture timeout 20 "${bare_bwrap[@]}" true
    if [[ $rc != 0 ]]; then
        skip "every attack" "bubblewrap cannot make a sandbox as $user here: $(head -n1 <<<"$err")"
        continue
    fi
    sbx_run "${confined[@]}" -- true
    want_status 0
    tap_finish "sbx run -- true runs in the sandbox and exits 0"

    fs_attacks
    syscall_attacks
    socket_attacks
    process_attacks
    leftover_attacks
done

tap_end
