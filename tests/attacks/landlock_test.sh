#!/usr/bin/env bash
# TAP: the Landlock wall under bubblewrap (sbx/linux/write_wall.hpp). The stage
# walls the command in so that nothing outside the plan's writable places can be
# changed, whatever the mounts say. The attack: a plan whose mount list is wrong
# (a writable bind of a directory outside every writable rule, as a mistake in
# the mounts' making would give) handed straight to sbx-linux; a write there must
# be refused by Landlock (EACCES), though the mount lets it through. The control:
# the same plan with that directory among the writable rules writes. Also: the
# report names the wall's ABI, the command still writes where it should (/dev,
# the root, TMPDIR, /proc's own files), and reopening its standard output by name
# works where that is a file outside the root, while a file passed open for
# reading only cannot be reopened for writing (control: bare bubblewrap, where
# it can). Each case runs as the current user
# and, as root with SBX_TEST_USER set, as that user too. Where the kernel has no
# Landlock ABI 2, the wall is not built: the cases say so and check the report's 0.
# Usage: landlock_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX PATH-TO-SBX-ATTACK
set -euo pipefail

if (($# != 3)); then
    echo "usage: landlock_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX PATH-TO-SBX-ATTACK" >&2
    exit 2
fi
source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch

bin=$tmp/bin
tap_readable_copies "$bin" "$1" "$2" "$3"
sbx=$bin/sbx
attack=$bin/sbx-attack
sbx_linux=$bin/sbx-linux
launcher=$sbx_linux  # tap_in_sandbox runs sbx run --launcher "$launcher"

# The kernel's Landlock ABI (0: none), asked the way the launcher asks.
abi=$(python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
v = libc.syscall(444, None, 0, 1)
print(v if v > 0 else 0)')
echo "# this kernel's Landlock ABI: $abi"

# wrong_plan PLAN OUT DIR [writable]: PLAN with a writable bind of DIR added
# where the mounts' order puts it, and, with "writable", DIR among the writable
# rules too (the control).
wrong_plan() {
    python3 - "$@" <<'EOF'
import json, os, sys
src, dst, extra = sys.argv[1], sys.argv[2], sys.argv[3]
plan = json.load(open(src))
fs = plan["filesystem"]
st = os.lstat(extra)
mount = {"kind": "bind", "path": extra, "source": extra,
         "expect": {"exists": True, "type": "directory", "dev": st.st_dev, "ino": st.st_ino, "nlink": st.st_nlink}}
depth = lambda p: p.count("/")
at = next((i for i, m in enumerate(fs["mounts"]) if depth(m["path"]) >= depth(extra)), len(fs["mounts"]))
fs["mounts"].insert(at, mount)
if len(sys.argv) > 4:
    fs["rules"].append({"kind": "writable", "pattern": extra})
json.dump(plan, open(dst, "w"))
EOF
}

# in_launcher PLAN SCRIPT: sbx-linux carries PLAN out (the plan's command is
# `sh -c SCRIPT` already); sets rc, out, err. The report goes to $work/report.
in_launcher() {
    rc=0
    (cd "$proj" && "${as[@]}" env HOME="$home" timeout 30 "$sbx_linux" --report-fd 3 <"$1" \
        3>"$work/report") >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
}

# plan_for SCRIPT: the default policy's plan of `sh -c SCRIPT` in the case's project, at $work/plan.json.
plan_for() {
    (cd "$proj" && "${as[@]}" env HOME="$home" "$sbx" plan --managed-settings "$tmp/empty-managed.json" \
        -- sh -c "$1") >"$work/plan.json"
}

tap_users
for who in "${users[@]}"; do
    tap_user_project "$who" || continue
    outside=$work/outside
    mkdir -p "$outside"
    [[ -z ${as[*]} ]] || chown -R "$who:" "$work"

    # The attack: the mounts make $outside writable, the rules do not.
    plan_for "echo x >'$outside/attack' && echo wrote; mkdir '$outside/dir' && echo made"
    wrong_plan "$work/plan.json" "$work/wrong.json" "$outside"
    [[ -z ${as[*]} ]] || chown "$who:" "$work/wrong.json"
    in_launcher "$work/wrong.json"
    if ((abi >= 2)); then
        [[ $out != *wrote* && $out != *made* ]] || fail_because "the command wrote outside every writable rule"
        [[ $err == *"Permission denied"* ]] || fail_because "not refused with EACCES (Landlock's)"
        [[ ! -e $outside/attack && ! -e $outside/dir ]] || fail_because "$outside has what the command made"
        tap_finish "a writable bind outside every writable rule (a wrong mount list) is refused by Landlock"
    else
        [[ $out == *wrote* ]] || fail_because "without Landlock ABI 2 the wrong mount should write"
        tap_finish "a wrong mount list's write, without the wall # SKIP no Landlock ABI 2 on this kernel (ABI $abi)"
    fi
    rm -rf "${outside:?}"/*

    # The control: the same directory among the writable rules.
    wrong_plan "$work/plan.json" "$work/right.json" "$outside" writable
    [[ -z ${as[*]} ]] || chown "$who:" "$work/right.json"
    in_launcher "$work/right.json"
    [[ $rc == 0 ]] || fail_because "status $rc, expected 0"
    [[ $out == *wrote*made* ]] || fail_because "the control did not write"
    [[ -f $outside/attack && -d $outside/dir ]] || fail_because "the control's files are missing"
    tap_finish "control: the same bind among the writable rules writes"
    rm -rf "${outside:?}"/*

    # The report names the wall.
    want=$abi
    ((abi >= 2)) || want=0
    grep -q "\"event\":\"exit\".*\"landlock\":$want" "$work/report" || fail_because "the exit event lacks \"landlock\":$want"
    tap_finish "the report says the wall's Landlock ABI ($want)"

    # A kernel without Landlock (sbx-attack's filter answers ENOSYS): no wall,
    # the report says 0, and the command runs confined by the mounts as before.
    plan_for 'echo x >./no-wall && echo wrote-root; echo y >/usr/sbx-no-wall || echo refused-usr'
    rc=0
    (cd "$proj" && "${as[@]}" env HOME="$home" timeout 30 "$attack" without-landlock -- "$sbx_linux" --report-fd 3 \
        <"$work/plan.json" 3>"$work/report") >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
    [[ $rc == 0 && $out == *wrote-root*refused-usr* ]] || fail_because "not confined by the mounts alone"
    grep -q '"event":"exit".*"landlock":0' "$work/report" || fail_because "the report does not say landlock 0"
    rm -f "$proj/no-wall"
    tap_finish "without Landlock: no wall, the report's landlock 0, the mounts confine as before"

    # What the command may write still works under the wall.
    tap_in_sandbox -- 'set -e; echo a >./in-root; echo b >"$TMPDIR/t"; mv ./in-root "$TMPDIR/moved";
        mv "$TMPDIR/moved" ./back; rm ./back; echo c >/dev/null; : >/dev/shm/sbx-shm; rm /dev/shm/sbx-shm;
        printf sbx-comm >/proc/self/comm; cat /proc/$$/comm; echo ok'
    [[ $rc == 0 && $out == *sbx-comm*ok* ]] || fail_because "a write the plan allows failed"
    tap_finish "the root, TMPDIR (renames between them), /dev, /dev/shm and /proc/self/comm stay writable"

    # Standard output a file outside the root, reopened by name inside (its
    # standard error is a pipe to the launcher, which reads refusals from it).
    # Without the stage's rule for the file behind it, Landlock refuses the
    # open (EACCES): tried by hand.
    log=$work/log
    : >"$log"
    [[ -z ${as[*]} ]] || chown "$who:" "$log"
    rc=0
    (cd "$proj" && "${as[@]}" env HOME="$home" timeout 30 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        -- sh -c 'echo by-name >/dev/stdout && echo by-name-ok >&2') </dev/null >"$log" 2>"$work/err" || rc=$?
    out=$(<"$log")
    err=$(<"$work/err")
    [[ $rc == 0 && $err == *by-name-ok* ]] || fail_because "the command failed"
    [[ $out == *by-name* ]] || fail_because "/dev/stdout, a file outside the root, could not be reopened"
    tap_finish "standard output, a file outside the root, reopened as /dev/stdout"

    # A file outside the root passed open for reading only: reopened by name
    # for writing, the mounts would let it through (the descriptor is of the
    # host's mount, not the sandbox's read-only one); the wall does not.
    ro=$work/read-only-passed
    echo original >"$ro"
    [[ -z ${as[*]} ]] || chown "$who:" "$ro"
    rc=0
    (cd "$proj" && "${as[@]}" env HOME="$home" timeout 30 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --pass-fd 7 -- sh -c 'cat <&7; echo changed >/proc/self/fd/7 && echo reopened') 7<"$ro" </dev/null \
        >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
    if ((abi >= 2)); then
        [[ $out == *original* ]] || fail_because "the passed descriptor could not be read"
        [[ $out != *reopened* && $(<"$ro") == original ]] || fail_because "a read-only descriptor was reopened for writing"
        tap_finish "a file passed open for reading only cannot be reopened for writing by name"
    else
        tap_finish "a read-only descriptor reopened for writing # SKIP no Landlock ABI 2 on this kernel (ABI $abi)"
    fi
    # Control: bubblewrap with the same read-only root and no wall.
    rc=0
    (cd "$proj" && "${as[@]}" bwrap --unshare-user --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc \
        -- sh -c 'echo changed >/proc/self/fd/7 && echo reopened') 7<"$ro" </dev/null >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
    [[ $out == *reopened* && $(<"$ro") == changed ]] || fail_because "bare bubblewrap did not let the reopening write"
    tap_finish "control: in bare bubblewrap the same descriptor is reopened and written"
done
tap_end
