#!/usr/bin/env bash
# TAP: `sbx run`, `sbx doctor` and `sbx-linux` as a caller sees them: exit
# statuses, the environment the command gets, the plan read from standard input
# or --plan-fd, refused plans, an unavailable sandbox with and without
# failIfUnavailable, the report, and nothing left behind. Runs the real
# launcher and bubblewrap; the attacks themselves are tests/attacks. `sbx run`
# carries the plan out itself unless --launcher names a program: both ways are
# run here.
# Usage: run_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX
set -euo pipefail

sbx=$(realpath "${1:?usage: run_test.sh SBX SBX-LINUX}")
launcher=$(realpath "${2:?usage: run_test.sh SBX SBX-LINUX}")
source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
# This machine's managed settings must not change the answers: the cases use
# $tmp/empty-managed.json, and those that need managed settings write their own.
tap_scratch

# fresh_case: a new HOME, project (a git repository) and TMPDIR in $home, $proj, $tmpd.
fresh_case() {
    local dir="$tmp/case-$((n + 1))"
    home="$dir/home"
    proj="$dir/project"
    tmpd="$dir/tmp"
    mkdir -p "$home" "$proj" "$tmpd"
    git init -q "$proj"
}

# run_sbx ARGS...: `sbx ARGS` in the case's project with its HOME and TMPDIR, at
# most 20 seconds; sets $rc, $out and $err. Variables may be set for it with env.
run_sbx() {
    rc=0
    (cd "$proj" && HOME=$home TMPDIR=$tmpd timeout 20 "$@") </dev/null >"$tmp/out" 2>"$tmp/err" || rc=$?
    out=$(<"$tmp/out")
    err=$(<"$tmp/err")
}

sbx_run() { run_sbx "$sbx" run --managed-settings "$tmp/empty-managed.json" "$@"; }

expect_rc() { [[ $rc == "$1" ]] || fail_because "status $rc, expected $1"; }
expect_out() { [[ $out == *"$1"* ]] || fail_because "stdout lacks '$1'"; }
expect_no_out() { [[ $out != *"$1"* ]] || fail_because "stdout has '$1'"; }
expect_err() { [[ $err == *"$1"* ]] || fail_because "stderr lacks '$1'"; }

# Nothing of the run may stay: no placeholder in the project, nothing in TMPDIR,
# no bubblewrap running (sbx run starts one before it reads the settings).
expect_clean() {
    local left
    left=$(cd "$proj" && find . -mindepth 1 -maxdepth 1 ! -name .git ! -name 'kept-*' | sort)
    [[ -z $left ]] || fail_because "left in the project: $left"
    left=$(ls -A "$tmpd")
    [[ -z $left ]] || fail_because "left in TMPDIR: $left"
    expect_no_bwrap
}
# orphans CMD...: runs CMD in the case's project under a child subreaper, which
# gets whatever CMD leaves behind; sets $rc, $out, $err and $orphans, the
# processes of CMD's that were still running (not yet ended) the moment it
# exited. CMD gets the descriptors orphans is given.
orphans() {
    rc=0
    orphans=$(cd "$proj" && HOME=$home TMPDIR=$tmpd timeout 20 python3 -c '
import ctypes, os, subprocess, sys
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
with open(sys.argv[1], "w") as out, open(sys.argv[2], "w") as err:
    code = subprocess.run(sys.argv[3:], stdin=subprocess.DEVNULL, stdout=out, stderr=err, close_fds=False).returncode
left = []
for pid in os.listdir("/proc"):
    try:
        stat = open("/proc/%s/stat" % pid).read()
    except (OSError, ValueError):
        continue
    fields = stat[stat.rindex(")") + 2:].split()
    if pid.isdigit() and int(fields[1]) == os.getpid() and fields[0] != "Z":
        left.append(stat[:stat.rindex(")") + 1])
print(" ".join(left))
sys.exit(code)' "$tmp/out" "$tmp/err" "$@") || rc=$?
    out=$(<"$tmp/out")
    err=$(<"$tmp/err")
}
expect_no_bwrap() {
    local left
    left=$(ps -u "$(id -u)" -o stat=,pid=,comm= | awk '$3 == "bwrap" && $1 !~ /^Z/')
    [[ -z $left ]] || fail_because "bubblewrap still running: $left"
}

# --- exit statuses ---------------------------------------------------------------

fresh_case
sbx_run -- sh -c 'echo inside; exit 3'
expect_rc 3
expect_out inside
expect_clean
tap_finish "the command's own exit status comes back, and nothing is left behind"

# The same through the launcher program, which reads the plan sbx writes.
fresh_case
mkdir -m 700 "$home/.ssh"
echo secret >"$home/.ssh/id_rsa"
sbx_run --launcher "$launcher" -- sh -c 'cat "$HOME/.ssh/id_rsa" 2>/dev/null && echo read-ssh; echo inside; exit 3'
expect_rc 3
expect_out inside
expect_no_out read-ssh
sbx_run --launcher "$launcher" -- sbx-no-such-command-here
expect_rc 127
expect_err "sbx-no-such-command-here"
expect_clean
tap_finish "sbx run --launcher sbx-linux: the command confined, its exit status, 127 for none, and nothing left behind"

fresh_case
sbx_run -- sh -c 'kill -TERM $$'
expect_rc 143
tap_finish "a command killed by SIGTERM gives 128+15"

fresh_case
sbx_run -- sbx-no-such-command-here
expect_rc 127
expect_err "sbx-no-such-command-here"
expect_clean
tap_finish "a command that does not exist gives 127, naming it"

fresh_case
printf 'not a program\n' >"$proj/kept-not-executable"
chmod 644 "$proj/kept-not-executable"
sbx_run -- ./kept-not-executable
expect_rc 126
tap_finish "a command that cannot be run gives 126"

fresh_case
mkdir -p "$proj/.claude"
printf '{"sandbox": {"enabled": tru}}' >"$proj/.claude/settings.json"
orphans "$sbx" run --managed-settings "$tmp/empty-managed.json" -- true
expect_rc 125
expect_err "INVALID_SETTINGS"
expect_err "settings.json:1:"
# bubblewrap started before the settings were read: it ended before sbx did.
[[ -z $orphans ]] || fail_because "left running when sbx exited: $orphans"
tap_finish "invalid settings give 125 and name the file, line and column, and the sandbox started before them is gone"

# --- who makes the mounts --------------------------------------------------------------
# This kernel has the new mount API, so the stage makes them; --bubblewrap-mounts
# takes the way of a kernel without it, where bubblewrap makes them all. Both
# give the same sandbox.

bwrap_launcher=$tmp/sbx-linux-bubblewrap-mounts
printf '#!/bin/sh\nexec %q --bubblewrap-mounts "$@"\n' "$launcher" >"$bwrap_launcher"
chmod 755 "$bwrap_launcher"
mounts_probe='grep -E "^(CapEff|CapBnd|Seccomp_filters):" /proc/self/status
echo x >.vscode/settings.json 2>/dev/null && echo wrote-vscode
echo x >.git/hooks/pre-commit 2>/dev/null && echo wrote-hook
cat "$HOME/.ssh/id_rsa" 2>/dev/null && echo read-ssh
echo ok >made-here && echo wrote-root'
for way in stage bubblewrap; do
    fresh_case
    mkdir -m 700 "$home/.ssh"
    echo secret >"$home/.ssh/id_rsa"
    if [[ $way == stage ]]; then
        sbx_run -- sh -c "$mounts_probe"
    else
        run_sbx "$sbx" run --managed-settings "$tmp/empty-managed.json" --launcher "$bwrap_launcher" -- sh -c "$mounts_probe"
    fi
    expect_rc 0
    expect_out "CapEff:	0000000000000000"
    expect_out "CapBnd:	0000000000000000"
    expect_out wrote-root
    expect_no_out wrote-vscode
    expect_no_out wrote-hook
    expect_no_out read-ssh
    # Where the stage loads the second part, bubblewrap's first and that one;
    # where bubblewrap loads the whole, that one alone; and in both the
    # connect broker's, which the stage loads last.
    if [[ $way == stage ]]; then expect_out "Seccomp_filters:	3"; else expect_out "Seccomp_filters:	2"; fi
    rm -f "$proj/made-here"
    expect_clean
    tap_finish "the mounts made by the $way hold: .vscode and the hooks read-only, ~/.ssh hidden, the root writable, no capability"
done

# A writable bind shows the host's mounts below it as the host has them. The
# stage copies the root from the read-only `/` and makes writable again only
# what the host has writable (the kernel keeps the host's read-only mounts so),
# as bubblewrap's own --bind gives it. Mounting needs root.
for way in stage bubblewrap; do
    if ((EUID != 0)); then
        echo "ok $((n + 1)) - mounts below the root as the host has them ($way) # SKIP mounting needs root"
        n=$((n + 1))
        continue
    fi
    fresh_case
    mkdir "$proj/kept-ro" "$proj/kept-rw"
    mount -t tmpfs -o ro,size=64k tmpfs "$proj/kept-ro"
    mount -t tmpfs -o size=64k tmpfs "$proj/kept-rw"
    script='echo x 2>/dev/null >kept-ro/f && echo ro-written; echo x >kept-rw/f && echo rw-written; echo x >kept-root && echo root-written'
    if [[ $way == stage ]]; then
        sbx_run -- sh -c "$script"
    else
        run_sbx "$sbx" run --managed-settings "$tmp/empty-managed.json" --launcher "$bwrap_launcher" -- sh -c "$script"
    fi
    umount "$proj/kept-ro" "$proj/kept-rw"
    expect_rc 0
    expect_out root-written
    expect_out rw-written
    expect_no_out ro-written
    rm -rf "$proj"/kept-*
    expect_clean
    tap_finish "mounts below the root as the host has them ($way): a read-only one stays read-only, a writable one writable"
done

# Where bubblewrap starts before the plan, the stage makes /dev, as bubblewrap's
# --dev does: the same names and kinds, the same mounts with the same flags,
# devices that work, a devpts of its own (control: bubblewrap's, through
# --bubblewrap-mounts).
dev_probe=$tmp/dev-probe.sh
cat >"$dev_probe" <<'EOF'
cd /dev && for f in $(ls -A | sort); do printf '%s:%s ' "$f" "$(stat -c %F "$f")"; done; echo
awk '$5 ~ "^/dev(/|$)" { print $5, $6, $9 }' /proc/self/mountinfo | sort | uniq
echo hi >/dev/null && head -c 8 /dev/zero | wc -c && head -c 8 /dev/urandom | wc -c
python3 -c 'import os; m, s = os.openpty(); print("pty", os.ttyname(s))'
EOF
chmod 644 "$dev_probe"
for way in stage bubblewrap; do
    fresh_case
    if [[ $way == stage ]]; then
        sbx_run -- sh "$dev_probe"
    else
        run_sbx "$sbx" run --managed-settings "$tmp/empty-managed.json" --launcher "$bwrap_launcher" -- sh "$dev_probe"
    fi
    expect_rc 0
    printf '%s\n' "$out" >"$tmp/dev-$way"
    expect_out "pty /dev/pts/0"
    expect_clean
done
fresh_case
diff "$tmp/dev-stage" "$tmp/dev-bubblewrap" >"$tmp/dev-diff" || fail_because "the stage's /dev is not bubblewrap's: $(<"$tmp/dev-diff")"
grep -q "^/dev rw,nosuid,nodev" "$tmp/dev-stage" || fail_because "no tmpfs /dev: $(<"$tmp/dev-stage")"
grep -q "^/dev/null rw,nosuid,relatime" "$tmp/dev-stage" || fail_because "/dev/null is no device bind"
tap_finish "the stage's /dev is bubblewrap's: the same names, kinds and mounts, working devices, a devpts of its own"

# --- --trace-fd: each step's time ----------------------------------------------------

# In sbx's own process, and through sbx-linux, which writes its options' step too.
for way in here sbx-linux; do
    fresh_case
    via=()
    steps=(sbx.options sbx.plan launcher.probe launcher.placeholders sandbox stage launcher.cleanup)
    if [[ $way == sbx-linux ]]; then
        via=(--launcher "$launcher")
        steps+=(launcher.options launcher.read-plan)
    fi
    rc=0
    (cd "$proj" && HOME=$home TMPDIR=$tmpd timeout 20 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        "${via[@]}" --trace-fd 7 -- sh -c 'ls /proc/self/fd; echo ran') </dev/null >"$tmp/out" 2>"$tmp/err" \
        7>"$tmp/trace" || rc=$?
    out=$(<"$tmp/out")
    err=$(<"$tmp/err")
    expect_rc 0
    expect_out ran
    # The command never gets the descriptor.
    ! grep -qx 7 <<<"$out" || fail_because "the command has descriptor 7 open"
    for step in "${steps[@]}"; do
        grep -qE "^\{\"trace\":\"$step\",\"at\":[0-9]+,\"us\":[0-9]+\}\$" "$tmp/trace" ||
            fail_because "the trace has no line for $step"
    done
    # Every line is one whole object: none was torn by another process's write.
    bad=$(grep -cvE '^\{"trace":"[a-z.-]+","at":[0-9]+,"us":[0-9]+\}$' "$tmp/trace" || true)
    [[ $bad == 0 ]] || fail_because "$bad malformed trace lines"
    # bubblewrap started before the settings were read (sbx run), or when the
    # launcher had the plan (sbx-linux), the stage waiting for its orders.
    if [[ $way == here ]]; then started=launcher.start-early; else started=launcher.start; fi
    [[ $(grep -c "\"trace\":\"$started\"" "$tmp/trace") == 1 ]] || fail_because "no single $started in the trace"
    expect_clean
    tap_finish "--trace-fd ($way) writes one line of JSON per step of sbx, the launcher and the stage, and the command does not get it"
done

# bubblewrap starts before the settings are read, as from PATH and for an
# isolated filesystem: settings that say otherwise end that sandbox (its stage
# never got orders) and start another; the command runs in the one they ask
# for, and nothing of the first is left.
for setting in '"bwrapPath": "'"$(command -v bwrap)"'"' '"filesystem": {"disabled": true}'; do
    fresh_case
    mkdir -m 700 "$home/.ssh"
    echo secret >"$home/.ssh/id_rsa"
    printf '{"sandbox": {%s}}' "$setting" >"$tmp/other-managed.json"
    orphans "$sbx" run --managed-settings "$tmp/other-managed.json" --trace-fd 7 -- \
        sh -c 'cat "$HOME/.ssh/id_rsa" 2>/dev/null && echo read-ssh; grep -E "^(CapEff|Seccomp):" /proc/self/status; echo ran' \
        7>"$tmp/trace"
    expect_rc 0
    [[ -z $orphans ]] || fail_because "left running when sbx exited: $orphans"
    expect_out ran
    expect_out "CapEff:	0000000000000000"
    expect_out "Seccomp:	2"
    # filesystem.disabled shows the whole disk as it is; bubblewrap's path hides ~/.ssh as always.
    if [[ $setting == *bwrapPath* ]]; then expect_no_out read-ssh; else expect_out read-ssh; fi
    [[ $(grep -c '"trace":"launcher.start-early"' "$tmp/trace") == 2 ]] ||
        fail_because "bubblewrap was not started again for the settings: $(grep -o '"trace":"launcher[^"]*"' "$tmp/trace" | tr '\n' ' ')"
    expect_clean
    tap_finish "settings that say otherwise than bubblewrap was started for ({$setting}) end that sandbox and start another; nothing left"
done

fresh_case
sbx_run --trace-fd 2 -- true
expect_rc 125
expect_err "--trace-fd"
sbx_run --trace-fd 9 -- true
expect_rc 125
expect_err "--trace-fd 9: the descriptor is not open"
tap_finish "--trace-fd refuses 0 to 2 and a descriptor that is not open, with 125"

fresh_case
sbx_run --no-such-option -- true
expect_rc 125
expect_err "USAGE"
tap_finish "an unknown option of sbx run gives 125"

fresh_case
run_sbx "$sbx" run --managed-settings "$tmp/empty-managed.json" --launcher "$tmp/no-launcher-here" -- true
expect_rc 125
expect_err "no-launcher-here"
tap_finish "a launcher that is not there gives 125, naming it"

fresh_case
run_sbx "$sbx" run --root / --managed-settings "$tmp/empty-managed.json" -- true
expect_rc 125
expect_err "may not be /"
tap_finish "a root of / is refused with 125"

# --- a root that is or holds the home directory ----------------------------------------

# Every dotfile there would be writable (.bash_aliases is not a protected name), so
# code would run unconfined later: refused unless --allow-home-root.
fresh_case
sbx_run --root "$home" -- sh -c 'echo x >.bash_aliases; echo ran'
expect_rc 125
expect_err "INVALID_ARGUMENT: --root $home: the root is your home directory ($home)"
expect_err "--allow-home-root"
expect_no_out ran
[[ ! -e $home/.bash_aliases ]] || fail_because "the command ran and wrote $home/.bash_aliases"
tap_finish "a root that is the home directory is refused with 125, naming --allow-home-root, and nothing runs"

fresh_case
sbx_run --root "$home" --allow-home-root -- sh -c 'echo x >.bash_aliases && echo ran'
expect_rc 0
expect_out ran
[[ $(cat "$home/.bash_aliases" 2>/dev/null) == x ]] || fail_because "$home/.bash_aliases was not written"
tap_finish "with --allow-home-root the home directory is the root, and its dotfiles are writable"

fresh_case
rc=0
out=$(cd "$home" && HOME=$home TMPDIR=$tmpd timeout 20 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
    -- sh -c 'echo x >.bash_aliases; echo ran' 2>"$tmp/err") || rc=$?
err=$(<"$tmp/err")
expect_rc 125
expect_err "the current directory $home"
expect_err "the root is your home directory ($home)"
expect_err "--allow-home-root"
expect_no_out ran
[[ ! -e $home/.bash_aliases ]] || fail_because "the command ran and wrote $home/.bash_aliases"
tap_finish "sbx run with no --root in the home directory is refused likewise"

# The root holds the home: HOME is $users/ana, the root $users.
fresh_case
users=$(dirname "$home")/users
home=$users/ana
mkdir -p "$home"
sbx_run --root "$users" -- sh -c 'echo x >ana/.bash_aliases; echo ran'
expect_rc 125
expect_err "--root $users: the root holds your home directory ($home)"
expect_err "--allow-home-root"
expect_no_out ran
[[ ! -e $home/.bash_aliases ]] || fail_because "the command ran and wrote $home/.bash_aliases"
tap_finish "a root that holds the home directory is refused with 125"

# HOME may lead through a symlink; the real path is compared, as the root's is.
fresh_case
ln -s "$home" "$(dirname "$home")/home-link"
real_home=$home
home=$(dirname "$home")/home-link
sbx_run --root "$real_home" -- sh -c 'echo ran'
expect_rc 125
expect_err "the root is your home directory ($real_home)"
expect_no_out ran
tap_finish "a root that is where a symlinked HOME leads is refused"

# The account's own home, with HOME set elsewhere: refused too. Only the refusal
# is tried (the command would write nothing anyway): nothing may run in the real home.
fresh_case
account_home=$(getent passwd "$(id -un)" | cut -d: -f6)
if [[ -z $account_home || $account_home == / || ! -d $account_home ]]; then
    echo "ok $((n += 1)) - ${TAP_PREFIX-}a root that is the account's home is refused although HOME is elsewhere # SKIP the account $(id -un) has no home directory to try ('$account_home')"
else
    account_real=$(realpath "$account_home")
    sbx_run --root "$account_home" -- sh -c 'echo ran'
    expect_rc 125
    expect_err "the root is your home directory ($account_real)"
    expect_err "--allow-home-root"
    expect_no_out ran
    tap_finish "a root that is the account's home is refused although HOME is elsewhere"
fi

fresh_case
run_sbx "$sbx" plan --managed-settings "$tmp/empty-managed.json" --root "$home" -- true
expect_rc 64
expect_err "INVALID_ARGUMENT: --root $home: the root is your home directory ($home)"
expect_err "--allow-home-root"
expect_no_out '"version"'
tap_finish "sbx plan refuses a root that is the home directory with 64"

fresh_case
run_sbx "$sbx" plan --managed-settings "$tmp/empty-managed.json" --root "$home" --allow-home-root -- true
expect_rc 0
expect_out "\"root\":\"$home\""
tap_finish "sbx plan --allow-home-root plans the home directory as the root"

fresh_case
run_sbx "$sbx" plan --managed-settings "$tmp/empty-managed.json" --root / --allow-home-root -- true
expect_rc 64
expect_err "may not be /"
tap_finish "--allow-home-root does not let the root be /"

fresh_case
mkdir -p "$proj/src/lib"
rc=0
out=$(cd "$proj/src/lib" && HOME=$home TMPDIR=$tmpd timeout 20 "$sbx" run --root "$proj" --managed-settings \
    "$tmp/empty-managed.json" -- pwd 2>"$tmp/err") || rc=$?
err=$(<"$tmp/err")
expect_rc 0
[[ $out == "$proj/src/lib" ]] || fail_because "the command started in '$out'"
tap_finish "the command starts in the current directory when that is inside the root"

fresh_case
mkdir -p "$proj/private"
printf '{"sandbox": {"filesystem": {"denyRead": ["/%s/private"]}}}' "$proj" >"$tmp/hide-cwd.json"
rc=0
out=$(cd "$proj/private" && HOME=$home TMPDIR=$tmpd timeout 20 "$sbx" run --root "$proj" --managed-settings \
    "$tmp/empty-managed.json" --settings "$tmp/hide-cwd.json" -- pwd 2>"$tmp/err") || rc=$?
err=$(<"$tmp/err")
expect_rc 125
expect_err "working directory is hidden"
expect_no_out "private"
tap_finish "a working directory the settings hide is refused, not silently replaced"

# --- the environment ---------------------------------------------------------------

fresh_case
printf '{"sandbox": {"credentials": {"envVars": ["PLAIN_LOOKING"]}}}' >"$tmp/creds.json"
run_sbx env SBX_TEST_API_TOKEN=t0p PLAIN_LOOKING=p1 SBX_ORDINARY=o2 "$sbx" run --managed-settings \
    "$tmp/empty-managed.json" --settings "$tmp/creds.json" -- \
    sh -c 'echo "token=${SBX_TEST_API_TOKEN-unset} plain=${PLAIN_LOOKING-unset} ordinary=${SBX_ORDINARY-unset}"'
expect_rc 0
expect_out "token=unset plain=unset ordinary=o2"
tap_finish "variables named like secrets and credentials.envVars names do not reach the command"

fresh_case
run_sbx env SBX_TEST_API_TOKEN=t0p "$sbx" run --managed-settings "$tmp/empty-managed.json" \
    --env SBX_TEST_API_TOKEN -- sh -c 'echo "token=${SBX_TEST_API_TOKEN-unset}"'
expect_rc 0
expect_out "token=t0p"
tap_finish "--env NAME passes a variable named like a secret"

fresh_case
sbx_run --env SBX_NOT_SET_ANYWHERE -- true
expect_rc 125
expect_err "SBX_NOT_SET_ANYWHERE"
tap_finish "--env with a variable that is not set gives 125"

fresh_case
sbx_run -- sh -c 'echo "tmpdir=$TMPDIR"; echo data >"$TMPDIR/f" && cat "$TMPDIR/f"; test -d "$TMPDIR" && echo is-dir'
expect_rc 0
expect_out "tmpdir=$tmpd/sbx-"
expect_out "data"
expect_out "is-dir"
expect_clean
tap_finish "TMPDIR is the command's own writable directory, removed afterwards"

# A bubblewrap that records its own environment, then runs the real one. Only
# managed settings may name bwrapPath.
fresh_case
real_bwrap=$(command -v bwrap)
cat >"$tmp/bwrap-recorder" <<EOF
#!/bin/sh
env >"$tmp/bwrap-env"
exec $real_bwrap "\$@"
EOF
chmod 755 "$tmp/bwrap-recorder"
printf '{"sandbox": {"bwrapPath": "%s"}}' "$tmp/bwrap-recorder" >"$tmp/recorder-managed.json"
run_sbx env LD_LIBRARY_PATH=/sbx-loader-marker GCONV_PATH=/sbx-gconv-marker "$sbx" run --managed-settings \
    "$tmp/recorder-managed.json" -- sh -c 'echo "ld=$LD_LIBRARY_PATH gconv=$GCONV_PATH"'
expect_rc 0
expect_out "ld=/sbx-loader-marker gconv=/sbx-gconv-marker"
[[ -s $tmp/bwrap-env ]] || fail_because "the recording bubblewrap did not run"
if grep -qE '^(LD_LIBRARY_PATH|GCONV_PATH)=' "$tmp/bwrap-env" 2>/dev/null; then
    fail_because "bubblewrap's environment had a loader variable"
fi
tap_finish "loader variables reach the command but never bubblewrap"

# The stage runs inside the sandbox from a descriptor opened outside: a launcher
# installed in a directory the settings hide still starts the command.
fresh_case
mkdir -p "$tmp/hidden-install"
cp "$sbx" "$launcher" "$tmp/hidden-install/"
stage_program="$(dirname "$launcher")/sbx-stage"
[[ ! -x $stage_program ]] || cp "$stage_program" "$tmp/hidden-install/"
printf '{"sandbox": {"filesystem": {"denyRead": ["/%s"]}}}' "$tmp/hidden-install" >"$tmp/hide-install.json"
run_sbx "$tmp/hidden-install/sbx" run --managed-settings "$tmp/empty-managed.json" --settings "$tmp/hide-install.json" -- \
    sh -c 'ls "$0" 2>&1 | head -c 0; test -z "$(ls -A "$0")" && echo install-dir-hidden; echo ran' "$tmp/hidden-install"
expect_rc 0
expect_out install-dir-hidden
expect_out ran
tap_finish "a launcher installed in a directory the settings hide still runs the command"

fresh_case
cp "$proj/.git/info/exclude" "$tmp/exclude-before"
sbx_run -- sh -c 'echo "status:[$(git status --porcelain)]"; ls -a | grep -c "^\.vscode$"; echo x 2>/dev/null >>.git/info/exclude || echo exclude-read-only'
expect_rc 0
expect_out "status:[]"
expect_out exclude-read-only
cmp -s "$proj/.git/info/exclude" "$tmp/exclude-before" || fail_because ".git/info/exclude changed on the host"
expect_clean
tap_finish "git inside does not see the placeholders as untracked files, and the host's exclude file is as it was once the run is over"

# --- two sandboxes in one root --------------------------------------------------------

# The second plan sees the first one's placeholders as files that exist; the
# first must not remove them while the second runs (that would detach the second
# one's mounts), and the last one out removes them and the group's lock files.
# Each command waits for its file (go-1, go-2): the first ends while the second runs.
fresh_case
mkdir -p "$tmp/runtime" && chmod 700 "$tmp/runtime"
rm -f "$tmp/go-1" "$tmp/go-2"
# shellcheck disable=SC2016  # $1 is the inner shell's
wait_go='while [ ! -e "$1" ]; do sleep 0.05; done'
(cd "$proj" && HOME=$home TMPDIR=$tmpd XDG_RUNTIME_DIR=$tmp/runtime timeout 20 "$sbx" run --managed-settings \
    "$tmp/empty-managed.json" -- sh -c "$wait_go"'; echo x 2>/dev/null >.vscode/settings.json || echo first-refused' \
    sh "$tmp/go-1" >"$tmp/first.out" 2>&1) &
first=$!
for _ in $(seq 50); do [[ -e $proj/.vscode ]] && break; sleep 0.1; done
rc=0
(cd "$proj" && HOME=$home TMPDIR=$tmpd XDG_RUNTIME_DIR=$tmp/runtime timeout 20 "$sbx" run --managed-settings \
    "$tmp/empty-managed.json" -- \
    sh -c 'touch kept-second; '"$wait_go"'; echo x 2>/dev/null >.vscode/settings.json || echo second-refused
           echo y 2>/dev/null >.cursor/mcp.json || echo mcp-refused' sh "$tmp/go-2") >"$tmp/out" 2>"$tmp/err" &
second=$!
for _ in $(seq 100); do [[ -e $proj/kept-second ]] && break; sleep 0.05; done
[[ -e $proj/kept-second ]] || fail_because "the second sandbox's command did not start"
touch "$tmp/go-1"
wait "$first" || fail_because "the first sandbox failed: $(<"$tmp/first.out")"
touch "$tmp/go-2"
wait "$second" || rc=$?
rm -f "$proj/kept-second"
out=$(<"$tmp/out")
err=$(<"$tmp/err")
expect_rc 0
expect_out second-refused
expect_out mcp-refused
grep -q first-refused "$tmp/first.out" || fail_because "the first sandbox's write was not refused: $(<"$tmp/first.out")"
expect_clean
for d in "/tmp/sbx-$(id -u)" "/run/user/$(id -u)/sbx" "$tmp/runtime/sbx"; do
    [[ ! -e $d ]] || fail_because "the group's lock files stayed: $d: $(ls -A "$d")"
done
tap_finish "two sandboxes in one root: protected names stay covered until the last one ends, then all is removed"

# --- the plan ----------------------------------------------------------------------

# --again-fd is read strictly: a closed descriptor, one without an absolute
# program path, or one whose last argument does not end in a NUL is a usage error.
fresh_case
run_sbx "$sbx" plan --managed-settings "$tmp/empty-managed.json" -- true
cp "$tmp/out" "$tmp/plan.json"
printf 'relative\0' >"$tmp/again-relative"
printf '/bin/true\0--x' >"$tmp/again-unended"
: >"$tmp/again-empty"
for bad in "9|the descriptor is not open" "5 5<$tmp/again-relative|absolute program path" \
    "5 5<$tmp/again-unended|ending in a NUL" "5 5<$tmp/again-empty|absolute program path" "x|needs a descriptor"; do
    args=${bad%%|*}
    what=${bad#*|}
    rc=0
    (cd "$proj" && eval "timeout 20 \"\$launcher\" --again-fd $args" <"$tmp/plan.json" >"$tmp/out" 2>"$tmp/err") || rc=$?
    err=$(<"$tmp/err")
    [[ $rc == 125 ]] || fail_because "--again-fd $args: status $rc, expected 125"
    [[ $err == *USAGE*"$what"* ]] || fail_because "--again-fd $args: stderr lacks USAGE and '$what'"
done
expect_clean
tap_finish "sbx-linux refuses a bad --again-fd as a usage error (125), saying what is wrong"

fresh_case
run_sbx "$sbx" plan --managed-settings "$tmp/empty-managed.json" -- sh -c 'read line; echo "got $line"'
cp "$tmp/out" "$tmp/plan.json"
rc=0
out=$(cd "$proj" && echo from-stdin | timeout 20 "$launcher" --plan-fd 5 5<"$tmp/plan.json" 2>"$tmp/err") || rc=$?
err=$(<"$tmp/err")
expect_rc 0
expect_out "got from-stdin"
tap_finish "sbx-linux --plan-fd leaves standard input to the command"

fresh_case
run_sbx "$sbx" plan --managed-settings "$tmp/empty-managed.json" -- sh -c 'echo from-plan-on-stdin'
cp "$tmp/out" "$tmp/plan.json"
rc=0
out=$(cd "$proj" && timeout 20 "$launcher" <"$tmp/plan.json" 2>"$tmp/err") || rc=$?
err=$(<"$tmp/err")
expect_rc 0
expect_out "from-plan-on-stdin"
tap_finish "sbx-linux reads a plan on standard input"

for bad in '{"version": 2}|version' '{"version": 1, "surprise": true}|surprise' 'not json|1:1' '|'; do
    doc=${bad%%|*}
    what=${bad#*|}
    rc=0
    printf '%s' "$doc" | timeout 20 "$launcher" >"$tmp/out" 2>"$tmp/err" || rc=$?
    out=$(<"$tmp/out")
    err=$(<"$tmp/err")
    expect_rc 125
    expect_err "INVALID_PLAN"
    expect_err "$what"
    tap_finish "a plan '${doc:0:30}' is refused with 125 and INVALID_PLAN naming '$what'"
done

fresh_case
run_sbx "$sbx" plan --managed-settings "$tmp/empty-managed.json" -- sh -c 'echo ran'
cp "$tmp/out" "$tmp/plan.json"
mkdir "$proj/.vscode"  # something is now where a placeholder goes
rc=0
out=$(cd "$proj" && timeout 20 "$launcher" <"$tmp/plan.json" 2>"$tmp/err") || rc=$?
err=$(<"$tmp/err")
expect_rc 125
expect_err "STALE_PLAN"
expect_err "$proj/.vscode"
expect_no_out "ran"
rmdir "$proj/.vscode"
expect_clean
tap_finish "a plan whose placeholder path exists now is refused as STALE_PLAN"

# A missing commondir is covered by one naming its own git directory, which git
# reads as none; the command cannot replace it, and its removal afterwards gets
# through a .git the command made unwritable (the mode is put back). It names
# it as `.`: a copy of the repository made meanwhile names itself.
fresh_case
git -C "$proj" -c user.name=t -c user.email=t@example.invalid commit -q --allow-empty -m first
sbx_run -- sh -c 'echo "content:$(cat .git/commondir)"; { echo /elsewhere >.git/commondir; } 2>/dev/null || echo refused;
                  git status --porcelain >/dev/null && echo git-works; tar cf kept-copy.tar --exclude=./kept-copy.tar .
                  chmod 555 .git'
mkdir "$tmp/copy-$n" && tar xf "$proj/kept-copy.tar" -C "$tmp/copy-$n" && rm -f "$proj/kept-copy.tar"
[[ $(git -C "$tmp/copy-$n" rev-parse --path-format=absolute --git-common-dir) == "$tmp/copy-$n/.git" ]] ||
    fail_because "the copy's git uses $(git -C "$tmp/copy-$n" rev-parse --path-format=absolute --git-common-dir)"
# Control: a commondir naming the project by its path would take the copy's git there.
printf '%s\n' "$proj/.git" >"$tmp/copy-$n/.git/commondir"
[[ $(git -C "$tmp/copy-$n" rev-parse --path-format=absolute --git-common-dir) == "$proj/.git" ]] ||
    fail_because "control: an absolute commondir in the copy does not lead its git to the project"
expect_rc 0
expect_out "content:."
expect_out refused
expect_out git-works
[[ ! -e $proj/.git/commondir ]] || fail_because ".git/commondir was left behind"
[[ $(stat -c %a "$proj/.git") == 555 ]] || fail_because ".git's mode is $(stat -c %a "$proj/.git"), not the command's 555"
chmod 755 "$proj/.git"
expect_clean
tap_finish "a missing commondir is covered by one naming its own directory as ., which a tar copy keeps to itself, and removed after, through a mode 555 .git"

fresh_case
run_sbx "$sbx" plan --managed-settings "$tmp/empty-managed.json" -- sh -c 'exit 7'
cp "$tmp/out" "$tmp/plan.json"
rc=0
(cd "$proj" && timeout 20 "$launcher" --report-fd 3 <"$tmp/plan.json" 3>"$tmp/report" >/dev/null 2>"$tmp/err") || rc=$?
out=$(<"$tmp/report")
err=$(<"$tmp/err")
expect_rc 7
# "landlock": the write wall's ABI, 0 where this kernel cannot make it (landlock_test.sh).
[[ $out =~ ^\{\"event\":\"exit\",\"sandboxed\":true,\"mode\":\"bubblewrap\",\"landlock\":[0-9]+,\"status\":7\}$ ]] ||
    fail_because "not the exit event"
tap_finish "--report-fd gets the exit event"

# --- file refusals read from standard error -------------------------------------------

# Writes the sandbox refuses (a protected file, a git hook, outside the root), one
# the plan does not refuse, and a fake refusal of a writable path.
refusing='echo x >.vscode/settings.json; touch .git/hooks/pre-commit; mkdir /usr/sbx-test-dir;
          echo "cat: /etc/shadow: Permission denied" >&2; echo "x: $PWD/ok: Read-only file system" >&2; echo done'

fresh_case
sbx_run -- sh -c "$refusing"
expect_rc 0
expect_out done
expect_err "<sandbox_violations>"
expect_err "deny file-access .vscode/settings.json (sh: 1: cannot create .vscode/settings.json: Read-only file system)"
expect_err "deny file-access .git/hooks/pre-commit (touch: cannot touch '.git/hooks/pre-commit': Read-only file system)"
expect_err "deny file-access /usr/sbx-test-dir ("
[[ $err != *"deny file-access /etc/shadow"* ]] || fail_because "a permission of the file's own was reported"
[[ $err != *"deny file-access $proj/ok"* ]] || fail_because "a refusal of a writable path was reported"
expect_clean
tap_finish "sbx run lists the file refusals the command printed, and only those the plan caused"

fresh_case
sbx_run -- sh -c 'for i in 1 2 3; do echo x >.vscode/settings.json; done; touch .git/hooks/pre-commit; echo done'
expect_rc 0
vscode_line=$(grep "^deny file-access .vscode/settings.json " <<<"$err" || true)
[[ $vscode_line == "deny file-access .vscode/settings.json (sh: 1: cannot create .vscode/settings.json: Read-only file system); "*" (3 times)" ]] ||
    fail_because "the .vscode/settings.json line is not the refusal with its count: $vscode_line"
n_vscode=$(grep -c "deny file-access .vscode/settings.json" <<<"$err" || true)
[[ $n_vscode == 1 ]] || fail_because "the .vscode/settings.json refusal is on $n_vscode lines, not 1"
hooks_line=$(grep "^deny file-access .git/hooks/pre-commit " <<<"$err" || true)
[[ $hooks_line == *"no setting makes it writable" ]] || fail_because "the refusal seen once got a count: $hooks_line"
expect_clean
tap_finish "the same refusal three times is one line of the block, with its count"

# Each line says what refused it and which setting, if any, would allow it, in
# the words of the file the policy came from.
hint_cases() {
    local words=$1
    shift
    sbx_run "$@" -- sh -c 'echo x >.vscode/settings.json; mkdir /usr/sbx-test-dir; cat "$HOME/.netrc";
        curl -sS --max-time 5 http://refused.example/ >/dev/null; curl -sS --max-time 5 --noproxy "" http://127.0.0.1:9/ >/dev/null; echo done'
    expect_out done
    local vscode outside hidden host local_host
    vscode=$(grep "^deny file-access .vscode/settings.json " <<<"$err" || true)
    outside=$(grep "^deny file-access /usr/sbx-test-dir " <<<"$err" || true)
    hidden=$(grep "^deny file-access $home/.netrc " <<<"$err" || true)
    host=$(grep "^deny network-outbound refused.example:80 " <<<"$err" || true)
    local_host=$(grep "^deny network-outbound 127.0.0.1:9 " <<<"$err" || true)
    [[ $vscode == *"; placeholder: "*"; no setting makes it writable" ]] || fail_because "the protected file's line: $vscode"
    if [[ $words == settings ]]; then
        [[ $outside == *"; outside every writable place; to allow it: filesystem.allowWrite" ]] ||
            fail_because "the line of a write outside: $outside"
        [[ $hidden == *"; hidden by "*"; to allow it: filesystem.allowRead naming the path" ]] ||
            fail_because "the hidden file's line: $hidden"
        [[ $host == *"; to allow it: network.allowedDomains" ]] || fail_because "the refused host's line: $host"
        [[ $local_host == *"; to allow it: network.allowedDomains naming the address or localhost with its port"* ]] ||
            fail_because "the loopback address's line: $local_host"
    else
        [[ $outside == *"; to allow it: files.write in the agent file" ]] || fail_because "the line of a write outside: $outside"
        [[ $hidden == *"; hidden by "* && $hidden != *"to allow it"* ]] || fail_because "the hidden file's line: $hidden"
        [[ $host == *"; to allow it: network.hosts in the agent file" ]] || fail_because "the refused host's line: $host"
        [[ $local_host == *"; to allow it: network.local in the agent file" ]] || fail_because "the loopback address's line: $local_host"
    fi
}

fresh_case
echo "machine x login y password z" >"$home/.netrc"
printf '{"sandbox": {"filesystem": {"denyRead": ["~/.netrc"]}}}' >"$tmp/deny-netrc.json"
hint_cases settings --settings "$tmp/deny-netrc.json" --on-unknown-host deny
tap_finish "each refusal line names the rule and the setting that would allow it: protected, outside, hidden, a host, a loopback address"

fresh_case
echo "machine x login y password z" >"$home/.netrc"
printf -- '---\nname: t\nsandbox:\n  files:\n    deny: ["~/.netrc"]\n---\n' >"$tmp/AGENT.md"
hint_cases agent --agent-file "$tmp/AGENT.md" --on-unknown-host deny
tap_finish "with an agent file the lines name its keys: files.write, network.hosts, network.local"

fresh_case
echo "API_KEY=sbx-hint-secret" >"$proj/.env"
printf -- '---\nname: t\n---\n' >"$tmp/AGENT.md"
sbx_run --agent-file "$tmp/AGENT.md" -- sh -c 'cat .env; echo done'
expect_out done
expect_no_out sbx-hint-secret
env_line=$(grep "^deny file-access .env " <<<"$err" || true)
[[ $env_line == *"; to pass a variable it holds: env in the agent file"* ]] || fail_because "the .env line: $env_line"
# The control: the same read under the settings reads the file, and no line is said.
sbx_run -- sh -c 'cat .env; echo done'
expect_out sbx-hint-secret
rm "$proj/.env"
tap_finish "with an agent file a .env read is refused, and its line names the env switch that passes a variable"

# An agent file's env names a variable the shell does not export: it comes from
# ./.env, then from the agent folder's .env, and nothing else of theirs does.
fresh_case
mkdir -p "$tmp/agent-$n"
agent_dir="$tmp/agent-$n"
printf -- '---\nname: t\nsandbox:\n  env: [SBX_T_FROM_CWD, SBX_T_BESIDE, SBX_T_EXPORTED, SBX_T_NOWHERE]\n---\n' >"$agent_dir/AGENT.md"
printf '# the project keys\nSBX_T_FROM_CWD="cwd value"\nSBX_T_OTHER_SECRET=leaked-from-cwd\n' >"$proj/.env"
printf 'export SBX_T_BESIDE=beside\nSBX_T_FROM_CWD=beside-loses\nSBX_T_OTHER_BESIDE=leaked-beside\n' >"$agent_dir/.env"
SBX_T_EXPORTED=from-shell sbx_run --agent-file "$agent_dir/AGENT.md" -- sh -c \
    'echo "cwd=$SBX_T_FROM_CWD beside=$SBX_T_BESIDE exported=$SBX_T_EXPORTED nowhere=${SBX_T_NOWHERE-unset}";
     echo "others=${SBX_T_OTHER_SECRET-unset},${SBX_T_OTHER_BESIDE-unset}"; cat .env || echo "no .env"'
expect_rc 0
expect_out "cwd=cwd value beside=beside exported=from-shell nowhere=unset"
expect_out "others=unset,unset"
expect_out "no .env"
expect_no_out leaked
expect_err "SBX_T_NOWHERE is not set, nor in $proj/.env or $agent_dir/.env"
# A secret-looking variable the list does not name is removed, and its reason
# names the list.
SBX_T_UNLISTED_TOKEN=x run_sbx "$sbx" plan --managed-settings "$tmp/empty-managed.json" --agent-file "$agent_dir/AGENT.md" -- true
expect_rc 0
expect_out "\"name\":\"SBX_T_UNLISTED_TOKEN\",\"why\":\"the name contains TOKEN, so it may hold a secret; pass it with --env SBX_T_UNLISTED_TOKEN, or list it under the agent file's env:\""
rm "$proj/.env"
tap_finish "an agent file's env: unexported names come from ./.env, then the agent folder's .env; nothing else, and ./.env is hidden"

fresh_case
mkdir -p "$tmp/agent-$n"
printf -- '---\nname: t\nsandbox:\n  env: [SBX_T_KEY]\n---\n' >"$tmp/agent-$n/AGENT.md"
printf 'SBX_T_KEY=fine\nthis is not an assignment\n' >"$proj/.env"
sbx_run --agent-file "$tmp/agent-$n/AGENT.md" -- true
expect_rc 125
expect_err "sbx: INVALID_SETTINGS: $proj/.env: line 2: expected NAME=VALUE"
ln -sf /etc/hostname "$tmp/agent-$n/.env"
rm "$proj/.env"
sbx_run --agent-file "$tmp/agent-$n/AGENT.md" -- true
expect_rc 0
expect_err "not read for the agent file's env: not a regular file"
tap_finish "a .env that is not NAME=VALUE stops the run naming its file and line; a symlinked one is not read"

fresh_case
sbx_run --no-scan-stderr -- sh -c "$refusing"
expect_rc 0
expect_err "cannot create .vscode/settings.json"
[[ $err != *"deny file-access"* ]] || fail_because "file refusals were reported with --no-scan-stderr"
tap_finish "--no-scan-stderr leaves the command's standard error unread"

fresh_case
printf '{"sandbox": {"ignoreViolations": {"sh": [".git/hooks"]}}}' >"$tmp/ignore-hooks.json"
sbx_run --settings "$tmp/ignore-hooks.json" -- sh -c "$refusing"
expect_err "deny file-access .vscode/settings.json"
[[ $err != *"deny file-access .git/hooks"* ]] || fail_because "an ignored file refusal was listed"
tap_finish "ignoreViolations leaves expected file refusals out of the block"

fresh_case
run_sbx "$sbx" plan --managed-settings "$tmp/empty-managed.json" --scan-stderr -- sh -c "$refusing"
cp "$tmp/out" "$tmp/plan.json"
grep -q '"scanStderr":true' "$tmp/plan.json" || fail_because "the plan does not ask for scanning"
rc=0
(cd "$proj" && timeout 20 "$launcher" --report-fd 3 <"$tmp/plan.json" 3>"$tmp/report" >/dev/null 2>"$tmp/err") || rc=$?
out=$(<"$tmp/report")
err=$(<"$tmp/err")
expect_rc 0
expect_out '{"event":"violation","kind":"file-access","path":"'"$proj"'/.vscode/settings.json","written":".vscode/settings.json","message":"sh: 1: cannot create .vscode/settings.json: Read-only file system","advisory":true}'
expect_out '"path":"/usr/sbx-test-dir"'
[[ $err != *"<sandbox_violations>"* ]] || fail_because "the launcher printed a block it was not asked for"
tap_finish "--report-fd gets a file-access violation event, marked advisory, for each refusal"

run_sbx "$sbx" plan --managed-settings "$tmp/empty-managed.json" --scan-stderr --no-scan-stderr -- true
expect_rc 64
expect_err "excludes"
tap_finish "--scan-stderr and --no-scan-stderr together are a usage error"

# --- an unavailable sandbox ----------------------------------------------------------

fresh_case
printf '{"sandbox": {"bwrapPath": "/nonexistent/sbx-test/bwrap"}}' >"$tmp/nobwrap.json"
run_sbx "$sbx" run --managed-settings "$tmp/nobwrap.json" -- sh -c 'echo ran'
expect_rc 125
expect_err "UNAVAILABLE"
expect_err "SANDBOX_UNAVAILABLE"
expect_err "/nonexistent/sbx-test/bwrap"
expect_no_out "ran"
expect_clean
tap_finish "without bubblewrap the command does not run: 125, UNAVAILABLE caused by SANDBOX_UNAVAILABLE"

fresh_case
printf '{"sandbox": {"bwrapPath": "/nonexistent/sbx-test/bwrap", "failIfUnavailable": false}}' >"$tmp/nobwrap-ok.json"
run_sbx "$sbx" plan --managed-settings "$tmp/nobwrap-ok.json" -- sh -c 'echo ran; echo "tmp=$TMPDIR"; exit 4'
cp "$tmp/out" "$tmp/plan.json"
rc=0
out=$(cd "$proj" && timeout 20 "$launcher" --report-fd 3 <"$tmp/plan.json" 3>"$tmp/report" 2>"$tmp/err") || rc=$?
err=$(<"$tmp/err")
expect_rc 4
expect_out "ran"
expect_out "tmp=$tmpd/sbx-"
expect_err "WITHOUT a sandbox"
grep -q '"sandboxed":false,"unsandboxedReason":"unavailable","status":4' "$tmp/report" ||
    fail_because "the report does not say sandboxed false: $(<"$tmp/report")"
expect_clean
tap_finish "failIfUnavailable false runs the command unconfined, with a warning and the report saying so"

# A bubblewrap older than 0.8 knows no --disable-userns.
fresh_case
cat >"$tmp/old-bwrap" <<'EOF'
#!/bin/sh
if [ "$1" = --version ]; then echo "bubblewrap 0.7.0"; exit 0; fi
echo "bwrap: Unknown option --disable-userns" >&2
exit 1
EOF
chmod 755 "$tmp/old-bwrap"
printf '{"sandbox": {"bwrapPath": "%s"}}' "$tmp/old-bwrap" >"$tmp/old-managed.json"
run_sbx "$sbx" run --managed-settings "$tmp/old-managed.json" -- sh -c 'echo ran'
expect_rc 125
expect_err "UNAVAILABLE"
expect_err "0.7.0"
expect_no_out "ran"
[[ $err != *"inside a sandbox already"* ]] || fail_because "outside any sandbox, it says it runs inside one"
expect_clean
tap_finish "a bubblewrap older than 0.8 gives 125, naming its version"

# sbx run inside sbx run: no sandbox can be made there, and it says why.
fresh_case
sbx_run -- "$sbx" run --managed-settings "$tmp/empty-managed.json" -- sh -c 'echo ran'
expect_rc 125
expect_err "sbx: this runs inside a sandbox already"
expect_err "run the command as it is"
expect_no_out "ran"
expect_clean
tap_finish "sbx run inside sbx run: 125, saying it runs inside a sandbox already and what to do"

# --- sbx doctor ----------------------------------------------------------------------

fresh_case
run_sbx "$sbx" doctor
expect_rc 0
expect_out "bubblewrap"
expect_out "seccomp"
expect_out "the stage making the mounts"
tap_finish "sbx doctor passes on this machine and names each check"

# The hard-link check of a hidden folder stops after 5000 entries: sbx run says
# so once for the root, not before every command; sbx plan every time.
fresh_case
mkdir "$home/big"
for i in $(seq 52); do mkdir "$home/big/d$i" && (cd "$home/big/d$i" && touch $(seq 100)); done
printf '{"sandbox": {"filesystem": {"denyRead": ["%s/big"]}}}' "$home" >"$tmp/big.json"
stopped="for hard links and stopped"
said=()
for _ in 1 2 3; do
    sbx_run --settings "$tmp/big.json" -- true
    expect_rc 0
    said+=("$(grep -c -- "$stopped" <<<"$err" || true)")
done
[[ ${said[*]} == "1 0 0" ]] || fail_because "the warning was said ${said[*]} times in three runs, not 1 0 0"
run_sbx "$sbx" plan --managed-settings "$tmp/empty-managed.json" --settings "$tmp/big.json" -- true
expect_out "$stopped"
[[ -f $home/.cache/sbx/said/$(ls "$home/.cache/sbx/said" 2>/dev/null | head -1) ]] || fail_because "no record in ~/.cache/sbx/said"
tap_finish "the hard-link check stopping on a large hidden folder is said by sbx run once for the root; sbx plan says it each time"

fresh_case
run_sbx "$sbx" doctor --json --launcher "$launcher"
expect_rc 0
expect_out '"available":true'
# Whether the launcher decides each connection here (this kernel can: 5.6 or later).
expect_out '"connections":{"available":true,"detail":"the launcher decides each connect() of the command'
# And whether ssh goes through the proxy (tools/install-deps.sh --tests installs openssh-client).
if [[ -f /etc/ssh/ssh_config ]]; then
    expect_out '"ssh":{"bound":true,"detail":"by name through the proxy'
else
    expect_out '"ssh":{"bound":false,"detail":"no /etc/ssh/ssh_config here'
fi
tap_finish "sbx doctor --json --launcher sbx-linux says available, that the launcher decides each connection, and how ssh goes"

fresh_case
run_sbx "$launcher" --doctor --bwrap /nonexistent/sbx-test/bwrap
expect_rc 1
expect_out "FAIL"
expect_out "apt-get install bubblewrap"
tap_finish "sbx-linux --doctor with no bubblewrap exits 1 and says how to install it"

tap_end
