#!/usr/bin/env bash
# TAP: `sbx run -- bash -i` on a terminal is a shell with job control on a
# pseudo-terminal of the sandbox's own, and the caller's terminal is safe.
# pty_driver.py holds a pseudo-terminal, runs the command on it and types:
# `tty` names a terminal and bash has job control; Ctrl-C ends a sleep and not
# the shell; Ctrl-Z, jobs, bg, fg; the start size and a resize show inside; the
# caller's terminal is raw during the run and its modes are as before after
# `exit 3` (status 3), SIGTERM and SIGKILL to sbx (nothing of the sandbox left);
# TIOCSTI and TIOCLINUX fail with EPERM and inject nothing; no process inside
# holds the caller's terminal; python3, node, less, vim, git add -p and top work.
# Controls: the same scripts pass on plain bash outside any sandbox (TIOCSTI
# injects there), and under `sbx run --no-pty` (the old behaviour) the command
# holds the caller's terminal and the job-control scripts fail. Pipes and files
# stay the command's own; the <sandbox_violations> block starts a line of its
# own after output that ends mid-line (control: glued on under --no-pty). As
# the current user and, as root with SBX_TEST_USER, as that user.
# --core leaves out the tool cases and the plain-bash control (for the
# sanitizer build: they exercise the tools, not the launcher).
# Usage: pty_test.sh SBX SBX-LINUX [--core]
set -euo pipefail

usage="usage: pty_test.sh SBX SBX-LINUX [--core]"
sbx_in=$(realpath "${1:?$usage}")
launcher_in=$(realpath "${2:?$usage}")
core=false
case ${3-} in
    --core) core=true ;;
    '') ;;
    *) echo "$usage" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
driver=$here/pty_driver.py
source "$here/../tap.sh"
tap_scratch

# The flag that keeps the old behaviour, for the controls. Empty it to run them
# on a launcher that has no such flag (and gives the terminal as it is).
nopty=(--no-pty)
# PATH inside and outside: the caller's may name tools under /root.
path=/usr/local/bin:/usr/bin:/bin

for tool in python3 bash git; do
    if ! command -v "$tool" >/dev/null; then
        echo "1..0 # SKIP $tool is not installed"
        exit 0
    fi
done
# The binaries may sit where the test user cannot read (a clone under /root).
tap_readable_copies "$tmp/bin" "$sbx_in" "$launcher_in"
sbx=$tmp/bin/$(basename "$sbx_in")
launcher=$tmp/bin/$(basename "$launcher_in")

# sandboxed MODE [FLAG...]: the driver's MODE on `sbx run FLAG... -- bash -i` as
# the case's user, in its project; sets rc and out.
sandboxed() {
    local mode=$1
    shift
    rc=0
    out=$(cd "$proj" && python3 "$driver" "$mode" -- "${as[@]}" env HOME="$home" PATH="$path" TERM=xterm \
        "$sbx" run --managed-settings "$tmp/empty-managed.json" "$@" \
        -- bash --norc --noprofile -i 2>&1) || rc=$?
}

# outside MODE: the same on plain bash, outside any sandbox.
outside() {
    rc=0
    out=$(cd "$proj" && python3 "$driver" "$1" -- "${as[@]}" env HOME="$home" PATH="$path" TERM=xterm \
        bash --norc --noprofile -i 2>&1) || rc=$?
}

# on_pty COMMAND...: COMMAND on a new pseudo-terminal (Python's pty.spawn) as
# the case's user, in its project, with nothing typed; sets rc and out (what
# the terminal showed).
on_pty() {
    rc=0
    out=$(cd "$proj" && "${as[@]}" env HOME="$home" PATH="$path" TERM=xterm timeout 60 \
        python3 -c 'import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)' "$@" </dev/null 2>&1) || rc=$?
}

# block_alone: every line of $out that holds the launcher's <sandbox_violations>
# begins with it.
block_alone() {
    python3 -c '
import sys
lines = sys.stdin.buffer.read().replace(b"\r", b"").split(b"\n")
tagged = [l for l in lines if b"<sandbox_violations>" in l]
sys.exit(0 if tagged and all(l.startswith(b"<sandbox_violations>") for l in tagged) else 1)' <<<"$out"
}

# expect_pass: the driver found every expectation held.
expect_pass() {
    [[ $rc == 0 ]] || fail_because "the driver found problems (status $rc)"
}

# note: the driver's findings as TAP comments (what a control saw).
note() {
    local line
    while IFS= read -r line; do
        [[ $line == "terminal output"* ]] || echo "#   $1: $line"
    done <<<"$out"
}

# skip_case DESCRIPTION REASON
skip_case() {
    n=$((n + 1))
    echo "ok $n - ${TAP_PREFIX-}$1 # SKIP $2"
}

# addp: a repository in the project with one committed file and one change to it.
make_addp() {
    git init -q "$proj/addp"
    echo one >"$proj/addp/file"
    git -C "$proj/addp" add file
    git -C "$proj/addp" -c user.name=pty-test -c user.email=pty-test@example.invalid commit -qm one
    echo two >>"$proj/addp/file"
}

tap_users
for who in "${users[@]}"; do
    tap_user_project "$who" || continue
    make_addp
    ((${#as[@]} == 0)) || chown -R "$who:" "$proj/addp"

    sandboxed jobs
    expect_pass
    tap_finish "tty names a terminal in /dev/pts inside and bash has job control (no warning)"

    sandboxed ctrl-c
    expect_pass
    tap_finish "Ctrl-C during sleep ends the sleep, and the shell answers after it"

    sandboxed ctrl-z
    expect_pass
    tap_finish "Ctrl-Z stops sleep: jobs shows it Stopped, bg runs it, fg and Ctrl-C end it; sleep & is Running"

    sandboxed resize
    expect_pass
    tap_finish "the size at start and a resize of the caller's terminal show in stty size (stdin and /dev/tty), with SIGWINCH inside"

    sandboxed exit
    expect_pass
    [[ $out == *"exit status 3 passed through"* ]] || fail_because "exit 3 did not give status 3"
    tap_finish "the caller's terminal is raw during the run and its modes are as before after exit 3, whose status passes through"

    # An interactive bash ignores SIGTERM, inside as outside: it goes to the
    # shell's group, and the sandbox is killed once --grace runs out.
    sandboxed sigterm --grace 1
    expect_pass
    [[ $out == *"ended with status 137"* ]] || fail_because "it did not end killed (137)"
    tap_finish "SIGTERM to sbx: it reaches the shell, which ignores it; after --grace the caller's terminal modes are restored and nothing of the sandbox is left"

    sandboxed sigkill
    expect_pass
    tap_finish "SIGKILL to sbx: the reaper restores the caller's terminal modes and nothing of the sandbox is left"

    sandboxed tiocsti
    expect_pass
    tap_finish "TIOCSTI on fds 0-2 and /dev/tty and TIOCLINUX fail with EPERM inside, and no injected line runs"

    outside tiocsti-control
    expect_pass
    note control
    tap_finish "control: outside any sandbox the same TIOCSTI script injects a line the shell runs"

    sandboxed fds
    expect_pass
    tap_finish "no process in the sandbox (pid 1 included) holds a descriptor of the caller's terminal, and no path in /dev names it"

    sandboxed fds-control "${nopty[@]}"
    expect_pass
    note control
    tap_finish "control: under --no-pty the command has the caller's terminal as its fd 0"

    # With no terminal no terminal is made, and beside one only what was the
    # terminal is replaced. (Standard output and error that are no terminal
    # reach the command as the launcher's pipes: it neutralises the tags of the
    # <sandbox_violations> block in them, and scans standard error.)
    tap_in_sandbox -- 'readlink /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2; tty || true'
    [[ $rc == 0 ]] || fail_because "the command failed"
    [[ $out == "/dev/null"$'\n'"pipe:["*"]"$'\n'"pipe:["*"]"$'\n'"not a tty" ]] ||
        fail_because "with no terminal the command's 0-2 are not /dev/null and the launcher's two pipes"
    tap_finish "with no terminal the command's 0-2 are /dev/null and the launcher's pipes, and tty says not a tty"

    rm -f "$work/mixed.out" "$work/mixed.err"
    on_pty sh -c '"$0" run --managed-settings "$1" -- sh -c "readlink /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2; tty" >"$2" 2>"$3"' \
        "$sbx" "$tmp/empty-managed.json" "$work/mixed.out" "$work/mixed.err"
    [[ $rc == 0 ]] || fail_because "the run failed (status $rc): $(<"$work/mixed.err")"
    mapfile -t fds <"$work/mixed.out" || true
    [[ ${fds[0]-} == /dev/pts/* && ${fds[3]-} == "${fds[0]-}" ]] ||
        fail_because "standard input is not the command's own terminal: '${fds[0]-}', tty '${fds[3]-}'"
    [[ ${fds[1]-} == "pipe:["* && ${fds[2]-} == "pipe:["* && ${fds[1]-} != "${fds[2]-}" ]] ||
        fail_because "standard output and error are not the launcher's two pipes: '${fds[1]-}' '${fds[2]-}'"
    tap_finish "standard input a terminal, output and error files: only standard input becomes the command's terminal, the files reach it through the launcher"

    # The <sandbox_violations> block after output that ends mid-line starts a
    # line of its own; control: without a terminal of its own the launcher
    # cannot know where the command's output ended, and the block is glued on.
    if command -v curl >/dev/null; then
        script='curl -s -m 10 -o /dev/null http://refused.example/; printf partial-$((2*4))'
        on_pty "$sbx" run --managed-settings "$tmp/empty-managed.json" \
            --on-unknown-host deny -- sh -c "$script"
        [[ $out == *"partial-8"* && $out == *"refused.example"* ]] || fail_because "no output, or no refusal in the block"
        block_alone || fail_because "the <sandbox_violations> block does not start a line of its own"
        tap_finish "the <sandbox_violations> block starts a line of its own after output that ends mid-line"

        on_pty "$sbx" run --managed-settings "$tmp/empty-managed.json" \
            --on-unknown-host deny "${nopty[@]}" -- sh -c "$script"
        [[ $out == *"partial-8<sandbox_violations>"* ]] || fail_because "control: the block was not glued to the output"
        tap_finish "control: under --no-pty the block is glued to output that ends mid-line"
    else
        skip_case "the <sandbox_violations> block starts a line of its own" "curl is not installed"
    fi

    for tool in python3 node less vim git top; do
        mode=$tool
        [[ $tool != python3 ]] || mode=python
        description="$tool works on the sandbox's terminal and quits when told"
        if $core; then
            skip_case "$description" "--core (the sanitizer build) leaves the tools out"
            continue
        fi
        if ! command -v "$tool" >/dev/null; then
            skip_case "$description" "$tool is not installed"
            continue
        fi
        sandboxed "$mode"
        expect_pass
        if [[ $tool == git ]]; then
            staged=$("${as[@]}" env HOME="$home" git -C "$proj/addp" diff --cached --name-only 2>/dev/null) || true
            [[ $staged == file ]] || fail_because "git add -p staged nothing (git diff --cached: '$staged')"
        fi
        tap_finish "$description"
    done

    # The scripts are sound: plain bash on the driver's terminal passes them
    # (once, as the first user: they depend on the tools, not on who runs them).
    # The change to stage again for git add -p.
    if [[ $who == "${users[0]}" ]] && ! $core; then
        "${as[@]}" env HOME="$home" git -C "$proj/addp" reset -q
        modes=(jobs ctrl-c ctrl-z resize)
        for tool in python3 node less vim git top; do
            ! command -v "$tool" >/dev/null || modes+=("${tool%3}")
        done
        for mode in "${modes[@]}"; do
            outside "$mode"
            [[ $rc == 0 ]] || fail_because "$mode failed on plain bash (status $rc): $(grep '^problem' <<<"$out" | tr '\n' ' ')"
        done
        out=
        tap_finish "control: plain bash outside any sandbox passes the same scripts (${modes[*]})"
    fi

    # The bug fixed: with the caller's terminal given as it is, no job control.
    # (Ctrl-C still ends the sleep there: the terminal sends SIGINT to sbx's
    # group, and sbx passes it to the command's, as it does a kill. SIGINT
    # starts no grace period: the shell, which goes on after it, still answers
    # after --grace 1 has passed.)
    sandboxed ctrl-c-stays "${nopty[@]}" --grace 1
    [[ $rc == 0 ]] || fail_because "ctrl-c under --no-pty failed (status $rc): $(grep '^problem' <<<"$out" | tr '\n' ' ')"
    for mode in jobs ctrl-z; do
        sandboxed "$mode" "${nopty[@]}"
        [[ $rc == 1 ]] || fail_because "$mode under --no-pty did not fail as expected (status $rc)"
        [[ $mode != jobs ]] || [[ $out == *"no job control"* || $out == *"not a tty"* ]] ||
            fail_because "under --no-pty, neither 'no job control' nor 'not a tty'"
        grep '^problem' <<<"$out" | sed "s/^/#   --no-pty $mode: /" || true
    done
    out=
    tap_finish "control: under --no-pty the job-control scripts fail (no job control, not a tty); Ctrl-C reaches the command's group through sbx, and the shell outlives --grace 1"
done

tap_end
