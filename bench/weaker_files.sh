#!/usr/bin/env bash
# weaker_files.sh BUILD_DIR [FILES] [RUNS] - what the weaker sandbox's file
# broker (launchers/linux/file_broker.hpp) costs. In an outer `bwrap --unshare-user
# --disable-userns` (user namespaces refused, as in Docker), a shell makes and
# then removes FILES files (default 2000): in a folder Landlock grants (src/:
# each call stops in the broker, which lets the kernel go on) and at the root's
# top (the broker makes each itself); and, for comparison, the same with no
# sandbox. RUNS times each (default 10), interleaved; prints the median wall
# time of each, and per file the difference from no sandbox with the empty
# command's time taken out. Builds nothing; the project lives in a temporary
# directory removed at exit. Needs bwrap and python3.
set -euo pipefail

if (($# < 1)); then
    echo "usage: weaker_files.sh BUILD_DIR [FILES] [RUNS]" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
files=${2:-2000}
runs=${3:-10}
sbx=$build/tools/sbx

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tmp=$(cd "$tmp" && pwd -P)
export HOME=$tmp/home
mkdir -p "$HOME" "$tmp/project/src"
git init -q "$tmp/project"
echo '{"sandbox": {"enableWeakerNestedSandbox": true}}' >"$tmp/weaker.json"
echo '{}' >"$tmp/managed.json"
outer=(bwrap --dev-bind / / --unshare-user --disable-userns --)
weaker=("$sbx" run --managed-settings "$tmp/managed.json" --settings "$tmp/weaker.json" --quiet --)
# Makes and removes $files files in the folder given (dash: `:` and `rm` each one call).
loop='cd "$1" && i=0; while [ $i -lt '$files' ]; do : >f$i; i=$((i+1)); done; rm -f f*'

# time_ms COMMAND...: the wall time of one run, in milliseconds.
time_ms() {
    local t0 t1
    t0=$(date +%s%N)
    (cd "$tmp/project" && "$@") >/dev/null 2>&1 </dev/null || { echo "failed: $*" >&2; exit 1; }
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000000))
}

declare -A times
for ((r = 0; r < runs; r++)); do
    times[plain-empty]+="$(time_ms "${outer[@]}" sh -c true) "
    times[plain-src]+="$(time_ms "${outer[@]}" sh -c "$loop" sh src) "
    times[plain-top]+="$(time_ms "${outer[@]}" sh -c "$loop" sh .) "
    times[weaker-empty]+="$(time_ms "${outer[@]}" "${weaker[@]}" sh -c true) "
    times[weaker-src]+="$(time_ms "${outer[@]}" "${weaker[@]}" sh -c "$loop" sh src) "
    times[weaker-top]+="$(time_ms "${outer[@]}" "${weaker[@]}" sh -c "$loop" sh .) "
done

median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "# $files files made and removed, median of $runs runs (ms)"
for k in plain-empty plain-src plain-top weaker-empty weaker-src weaker-top; do
    printf '%-14s %6s\n' "$k" "$(median "${times[$k]}")"
done
for where in src top; do
    extra=$(( ($(median "${times[weaker-$where]}") - $(median "${times[weaker-empty]}")) - \
        ($(median "${times[plain-$where]}") - $(median "${times[plain-empty]}")) ))
    echo "per file, $where: $(python3 -c "print(f'{$extra * 1000 / ($files * 2):.1f}')") us more per call than without a sandbox"
done
