#!/usr/bin/env bash
# TAP: sbx-mac where there is no Seatbelt (this is run on Linux). What can be
# shown here: it reads and refuses plans as sbx-linux does, prints the profile it
# would use, refuses to run anything without sandbox-exec (125,
# SANDBOX_UNAVAILABLE naming why), runs unconfined only when the plan allows it
# and says so, warns of a TMPDIR too long for a Unix socket, and leaves nothing
# behind. That the profile confines is for a Mac: tests/macos/.
# Usage: mac_test.sh PATH-TO-SBX PATH-TO-SBX-MAC
set -euo pipefail

sbx=$(realpath "${1:?usage: mac_test.sh SBX SBX-MAC}")
mac=$(realpath "${2:?usage: mac_test.sh SBX SBX-MAC}")
source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch

if [[ -x /usr/bin/sandbox-exec ]]; then
    echo "1..0 # SKIP this machine has sandbox-exec: run tests/macos/run.sh instead"
    exit 0
fi

home=$tmp/home
proj=$tmp/project
tmpd=$tmp/tmp
mkdir -p "$home" "$proj" "$tmpd"
git init -q "$proj"

# make_plan FILE [SBX-PLAN-ARGS...] -- COMMAND...: `sbx plan` in the project into FILE.
make_plan() {
    local file=$1
    shift
    (cd "$proj" && HOME=$home TMPDIR=$tmpd "$sbx" plan --managed-settings "$tmp/empty-managed.json" "$@") >"$file"
}
# run_mac ARGS... < $plan: sets $rc, $out, $err.
run_mac() {
    rc=0
    (cd "$proj" && timeout 20 "$mac" "$@") <"${plan_file:-/dev/null}" >"$tmp/out" 2>"$tmp/err" || rc=$?
    out=$(<"$tmp/out")
    err=$(<"$tmp/err")
}
expect_rc() { [[ $rc == "$1" ]] || fail_because "status $rc, expected $1"; }
expect_out() { [[ $out == *"$1"* ]] || fail_because "stdout lacks '$1'"; }
expect_err() { [[ $err == *"$1"* ]] || fail_because "stderr lacks '$1'"; }
nothing_left() {
    [[ -z $(ls -A "$tmpd") ]] || fail_because "left in TMPDIR: $(ls -A "$tmpd")"
}

make_plan "$tmp/plan.json" -- sh -c "touch '$tmp/ran'"
plan_file=$tmp/plan.json
run_mac --print-profile
expect_rc 0
[[ $(grep -v '^;' <<<"$out" | head -n1) == "(version 1)" ]] || fail_because "the profile's first form is not (version 1)"
expect_out "(deny default)"
expect_out "\"$proj\""
[[ ! -e $tmp/ran ]] || fail_because "--print-profile ran the command"
nothing_left
tap_finish "--print-profile prints the Seatbelt profile for the plan, on any platform, and runs nothing"

run_mac
expect_rc 125
expect_err "SANDBOX_UNAVAILABLE"
expect_err "/usr/bin/sandbox-exec"
[[ ! -e $tmp/ran ]] || fail_because "the command ran without a sandbox"
nothing_left
tap_finish "without sandbox-exec: 125, SANDBOX_UNAVAILABLE naming why, nothing run, nothing left"

run_mac --report-fd 3 3>"$tmp/report"
out=$(<"$tmp/report")
expect_out '"event":"error","code":"UNAVAILABLE"'
tap_finish "the report gets the error event"

printf '{"sandbox": {"failIfUnavailable": false}}' >"$tmp/unconfined.json"
make_plan "$tmp/plan-open.json" --settings "$tmp/unconfined.json" -- sh -c 'touch "$TMPDIR/made"; echo "ran in $TMPDIR"; exit 4'
plan_file=$tmp/plan-open.json
run_mac --report-fd 3 3>"$tmp/report"
expect_rc 4
expect_out "ran in $tmpd/sbx-"
expect_err "WITHOUT a sandbox"
grep -q '"event":"exit","sandboxed":false,"unsandboxedReason":"unavailable","status":4' "$tmp/report" ||
    fail_because "no unsandboxed exit event: $(<"$tmp/report")"
nothing_left
tap_finish "failIfUnavailable false: the command runs unconfined with a warning and the report saying so; TMPDIR removed"

# A warning the plan tags as Linux's ("platform": "linux", a limit of
# sbx-linux's sandbox) is left out by sbx-mac, which shows the plan's others.
make_plan "$tmp/plan-tagged.json" -- true
python3 - "$tmp/plan-tagged.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
plan["warnings"].append({"file": "", "key": "", "message": "a limit of Linux's sandbox", "platform": "linux"})
plan["warnings"].append({"file": "", "key": "", "message": "a warning for every launcher"})
json.dump(plan, open(sys.argv[1], "w"))
PY
plan_file=$tmp/plan-tagged.json
run_mac
expect_rc 125
[[ $err != *"a limit of Linux's sandbox"* ]] || fail_because "sbx-mac showed Linux's warning: $err"
expect_err "sbx-mac: warning: a warning for every launcher"
tap_finish "a warning the plan tags as Linux's is not sbx-mac's to show; the others are shown"

plan_file=/dev/null
printf '{"version": 1, "command": {}}' >"$tmp/bad.json"
plan_file=$tmp/bad.json
run_mac
expect_rc 125
expect_err "INVALID_PLAN"
tap_finish "an invalid plan: 125, INVALID_PLAN, as sbx-linux"

python3 - "$tmp/plan.json" "$tmp/no-rules.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
del plan["filesystem"]["rules"]
json.dump(plan, open(sys.argv[2], "w"))
PY
plan_file=$tmp/no-rules.json
run_mac --print-profile
expect_rc 125
expect_err "rules"
tap_finish "a plan without filesystem.rules cannot become a profile: 125, saying so"

long=$tmp/$(printf 'd%.0s' $(seq 90))
mkdir -p "$long"
(cd "$proj" && HOME=$home TMPDIR=$long "$sbx" plan --managed-settings "$tmp/empty-managed.json" -- true) >"$tmp/long.json"
plan_file=$tmp/long.json
run_mac
expect_rc 125
expect_err "104-byte limit"
expect_err "TMPDIR=/tmp"
tap_finish "a TMPDIR too long for a Unix socket inside is reported with the fix"

plan_file=/dev/null
run_mac --doctor
expect_rc 1
expect_out "FAIL"
expect_out "sandbox-exec"
tap_finish "sbx-mac --doctor says the sandbox cannot run here, and exits 1"

rc=0
(cd "$proj" && HOME=$home TMPDIR=$tmpd timeout 20 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
    --launcher "$mac" -- sh -c "touch '$tmp/ran'") </dev/null >"$tmp/out" 2>"$tmp/err" || rc=$?
err=$(<"$tmp/err")
expect_rc 125
expect_err "SANDBOX_UNAVAILABLE"
[[ ! -e $tmp/ran ]] || fail_because "the command ran"
tap_finish "sbx run --launcher sbx-mac: the same refusal through sbx run"

tap_end
