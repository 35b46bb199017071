#!/usr/bin/env bash
# parallel.sh [SBX] [--total N] [--at-once N] - many `sbx run` at once in one
# project (issue 13): do they all succeed, keep the protected files protected,
# leave nothing behind, and how much longer does each take than a run alone?
#
# Usage:
#   bench/parallel.sh build/tools/sbx                 # 200 runs, 50 at a time
#   TOTAL=500 AT_ONCE=100 bench/parallel.sh build/tools/sbx
#
# SBX defaults to ../build/tools/sbx beside this script; the launcher is sbx's
# own default (sbx-linux beside it) or, in a build directory, BUILD/launchers/sbx-linux
# (SBX_LAUNCHER overrides). It builds nothing. In a fresh temporary project (`git
# init`, a .claude/settings.json of {}, removed at exit), with a temporary HOME and
# managed settings of {} so that this machine's settings do not change the answers:
#   alone     20 runs of `sbx run -- true`, one after another;
#   parallel  TOTAL (200) runs of `sbx run -- sh -c 'echo x > .vscode/settings.json ... exit 3'`,
#             AT_ONCE (50) running at a time (xargs -P); exit 3 means the write to
#             the protected .vscode got through, and counts as a failure.
# It prints median and p99 wall time of each kind, their ratio, the failures (with
# their first lines of standard error), then checks that nothing is left: only .git
# and .claude/settings.json in the project, no directory of sbx's lock files
# (/run/user/UID/sbx, /tmp/sbx-UID), no new /tmp/sbx-* or ${TMPDIR:-/tmp}/sbx-*.
#
# Exit status: 0 all runs succeeded and nothing was left; 1 otherwise; 64 usage.
set -euo pipefail

die() { echo "parallel.sh: $*" >&2; exit 1; }
usage() { echo "usage: bench/parallel.sh [SBX] [--total N] [--at-once N]" >&2; exit 64; }

sbx=$(dirname "${BASH_SOURCE[0]}")/../build/tools/sbx
[[ $# -gt 0 && $1 != -* ]] && { sbx=$1; shift; }
total=${TOTAL:-200} at_once=${AT_ONCE:-50}
while [[ $# -gt 0 ]]; do
    case $1 in
    --total) total=${2:-}; shift 2 || usage ;;
    --at-once) at_once=${2:-}; shift 2 || usage ;;
    *) usage ;;
    esac
done
[[ $total =~ ^[1-9][0-9]*$ && $at_once =~ ^[1-9][0-9]*$ ]] || usage
[[ -x $sbx ]] || die "$sbx is missing: run ninja -C BUILD_DIR"
sbx=$(realpath "$sbx")
launcher=${SBX_LAUNCHER:-}  # empty: sbx's own default
d=$(dirname "$sbx") && [[ -z $launcher && ! -x $d/sbx-linux && -x $d/../launchers/sbx-linux ]] &&
    launcher=$d/../launchers/sbx-linux
[[ -z $launcher ]] || launcher=$(realpath "$launcher")

uid=$(id -u) tmp=${TMPDIR:-/tmp}
work=$(mktemp -d "$tmp/sbx-parallel.XXXXXX")
trap 'rm -rf "$work"' EXIT
locks=("/run/user/$uid/sbx" "/tmp/sbx-$uid")  # the directories of sbx's lock files
leftovers() {  # sbx's lock directories and temporary directories, but for $work
    { ls -d "${locks[@]}" 2>/dev/null || true; find /tmp "$tmp" -mindepth 1 -maxdepth 1 -name 'sbx-*' ! -path "$work"; } | sort -u
}
leftovers >"$work/before"
project=$work/project
mkdir -p "$work/home" "$work/runs" "$project/.claude"
git init -q "$project" || die "git init failed in $project"
echo '{}' >"$project/.claude/settings.json"
echo '{}' >"$work/managed.json"
cd "$project"

# run_one NAME CMD...: `sbx run -- CMD` here, in the project; writes "STATUS NANOSECONDS"
# to runs/NAME and its standard error to runs/NAME.err.
run_one() {
    local name=$1 t0 t1 rc=0
    shift
    t0=$(date +%s%N)
    env HOME="$work/home" "$sbx" run --managed-settings "$work/managed.json" \
        ${launcher:+--launcher "$launcher"} -- "$@" </dev/null >/dev/null 2>"$work/runs/$name.err" || rc=$?
    t1=$(date +%s%N)
    echo "$rc $((t1 - t0))" >"$work/runs/$name"
}
export -f run_one
export work sbx launcher

# stats KIND: "MEDIAN P99" in ms of the wall times of runs/KIND-N (nearest rank).
stats() {
    awk '{print $2}' "$work"/runs/"$1"-*[0-9] | sort -n |
        awk '{t[NR]=$1} END {p=int(NR*0.99); if (p<NR*0.99) p++; printf "%.1f %.1f\n", t[int((NR+1)/2)]/1e6, t[p]/1e6}'
}

read -r load _ </proc/loadavg || load=unknown
echo "parallel.sh: $sbx${launcher:+ --launcher $launcher}; load average $load on $(nproc) CPUs"
for i in $(seq 20); do run_one "alone-$i" true; done
read -r alone_med alone_p99 < <(stats alone)
echo "alone:    20 runs of \`sbx run -- true\`, one at a time: median $alone_med ms, p99 $alone_p99 ms"

cmd='echo x > .vscode/settings.json 2>/dev/null && exit 3; exit 0'
start=$(date +%s%N)
# shellcheck disable=SC2016 # $1 and $2 are bash -c's
seq "$total" | xargs -P "$at_once" -I{} bash -c 'run_one "par-$1" sh -c "$2"' _ {} "$cmd"
elapsed=$(($(date +%s%N) - start))
read -r par_med par_p99 < <(stats par)
echo "parallel: $total runs of \`sbx run -- sh -c '$cmd'\`, $at_once at a time: median $par_med ms, p99 $par_p99 ms"
awk -v t="$total" -v e="$elapsed" -v a="$alone_med" -v b="$alone_p99" -v c="$par_med" -v d="$par_p99" 'BEGIN {
    printf "          all %d done in %.1f s: %.1f runs/s (one at a time: %.1f runs/s)\n", t, e/1e9, t*1e9/e, 1000/a
    printf "ratio:    parallel/alone %.1fx at the median, %.1fx at p99\n", c/a, d/b }'

status=0 failed=0
for f in $(printf '%s\n' "$work"/runs/*-*[0-9] | sort -V); do
    read -r rc _ <"$f"
    [[ $rc == 0 ]] && continue
    failed=$((failed + 1))
    [[ $failed -le 5 ]] || continue
    why="exit $rc" && [[ $rc == 3 ]] && why="exit 3: the write to .vscode/settings.json got through"
    echo "failed:   run ${f##*/} ($why):" && head -n 5 "$f.err" | sed 's/^/  | /'
done
echo "failures: $failed of $((total + 20)) runs"
[[ $failed == 0 ]] || status=1

left=$({ find . -mindepth 1 -maxdepth 1 ! -name .git ! -name .claude
    find .claude -mindepth 1 ! -path .claude/settings.json; } 2>&1 | sed 's|^\./||; s|^|in the project: |' || true)
while read -r d; do  # a lock directory is reported even when it was there before
    if grep -qxF "$d" "$work/before"; then
        [[ $d == "${locks[0]}" || $d == "${locks[1]}" ]] || continue
        d+=" (there before the run too)"
    fi
    left+=$'\n'"$d"
done < <(leftovers)
left=$(sed '/^$/d' <<<"$left")
if [[ -n $left ]]; then
    echo "left behind:" && sed 's/^/  | /' <<<"$left" && status=1
else
    echo "left behind: nothing (project holds .git and .claude only; no lock or temporary directories)"
fi
exit "$status"
