#!/usr/bin/env bash
# git_audit.sh BUILD_DIR [RUNS] - what the audit after a run (filesystem.gitAudit)
# costs: `sbx-linux` running `true` with the plan `sbx plan` makes, and with the same
# plan less its gitAudit, in an empty repository and in one with a node_modules of
# 50 000 files (2 500 directories of 20), RUNS times each (default 30) after 3
# warm-up runs, interleaved. Prints the median wall time of each and the
# difference. Builds nothing; the projects live in a temporary directory removed
# at exit. Needs git and python3.
set -euo pipefail

if (($# < 1)); then
    echo "usage: git_audit.sh BUILD_DIR [RUNS]" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
runs=${2:-30}
sbx=$build/tools/sbx
sbx_linux=$build/launchers/sbx-linux

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tmp=$(cd "$tmp" && pwd -P)
export HOME=$tmp/home
mkdir -p "$HOME"

# make_project NAME: a git repository at $tmp/NAME.
make_project() {
    git init -q "$tmp/$1"
}

# plans NAME: $tmp/NAME.audit.json and $tmp/NAME.none.json, with and without gitAudit.
plans() {
    "$sbx" plan --root "$tmp/$1" -- true >"$tmp/$1.audit.json"
    python3 - "$tmp/$1.audit.json" "$tmp/$1.none.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
assert plan["filesystem"].pop("gitAudit") == [plan["root"]]
json.dump(plan, open(sys.argv[2], "w"))
PY
}

# once PLAN: the wall time in microseconds of one sbx-linux run of PLAN.
once() {
    local start end
    start=$(date +%s%N)
    "$sbx_linux" --plan-fd 0 <"$1" >/dev/null
    end=$(date +%s%N)
    echo $(((end - start) / 1000))
}

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

make_project empty
make_project modules
python3 - "$tmp/modules/node_modules" <<'PY'
import os, sys
root = sys.argv[1]
for d in range(2500):
    pkg = os.path.join(root, "pkg%04d" % d, "lib")
    os.makedirs(pkg)
    for f in range(20):
        with open(os.path.join(pkg, "f%02d.js" % f), "w") as out:
            out.write("module.exports = 1;\n")
PY
echo "node_modules: $(find "$tmp/modules/node_modules" -type f | wc -l) files"

for p in empty modules; do
    plans "$p"
    for _ in 1 2 3; do
        once "$tmp/$p.audit.json" >/dev/null
        once "$tmp/$p.none.json" >/dev/null
    done
    : >"$tmp/$p.audit.times"
    : >"$tmp/$p.none.times"
    for _ in $(seq "$runs"); do
        once "$tmp/$p.audit.json" >>"$tmp/$p.audit.times"
        once "$tmp/$p.none.json" >>"$tmp/$p.none.times"
    done
    with=$(median <"$tmp/$p.audit.times")
    without=$(median <"$tmp/$p.none.times")
    printf '%-8s with gitAudit %6d us   without %6d us   audit %6d us (median of %d)\n' \
        "$p" "$with" "$without" $((with - without)) "$runs"
done
