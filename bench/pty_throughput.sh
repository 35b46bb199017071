#!/usr/bin/env bash
# pty_throughput.sh BUILD_DIR [SIZE [LINE]] - how fast output crosses the launcher's
# pseudo-terminal relay, next to a pseudo-terminal read directly.
#
# Usage:
#   bench/pty_throughput.sh build            # SIZE 256M
#   bench/pty_throughput.sh build 1G         # SIZE as head -c takes it: N, NK, NM, NG (powers of 1024)
#   bench/pty_throughput.sh build 1G LINE    # yes LINE: longer lines, fewer \n for onlcr to expand
#
# It builds nothing. tests/attacks/pty_driver.py (throughput mode) holds a
# pseudo-terminal and runs, on it:
#   direct  sh -c 'yes [LINE] | head -c SIZE'
#   sbx     BUILD_DIR/tools/sbx run --launcher BUILD_DIR/launchers/sbx-linux
#           -- sh -c 'yes [LINE] | head -c SIZE'     (in a fresh `git init` project)
# and times each from the start until it has read SIZE bytes from its master.
# It counts the bytes other than \r: onlcr turns each \n into \r\n on the way,
# once or twice depending on the path, and yes prints no \r of its own. The sbx
# time includes sbx's start-up. It prints MB/s (10^6 bytes) of each and the
# ratio; there is no target. Exit status: 0 both runs read every byte, 1 not,
# 64 usage.
set -euo pipefail

usage() {
    sed -n 's/^#   //p' "${BASH_SOURCE[0]}" | head -2 >&2
    exit 64
}
(($# >= 1 && $# <= 3)) || usage
build=$(realpath "$1")
size=${2:-256M}
line=${3:-}
[[ $line =~ ^[A-Za-z0-9._-]*$ ]] || usage
case $size in
*K) bytes=$((${size%K} * 1024)) ;;
*M) bytes=$((${size%M} * 1024 * 1024)) ;;
*G) bytes=$((${size%G} * 1024 * 1024 * 1024)) ;;
*[!0-9]* | "") usage ;;
*) bytes=$size ;;
esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
driver=$here/../tests/attacks/pty_driver.py
sbx=$build/tools/sbx
launcher=$build/launchers/sbx-linux
for f in "$sbx" "$launcher" "$driver"; do
    [[ -e $f ]] || { echo "pty_throughput.sh: $f is missing" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git init -q "$tmp/project"
echo '{}' >"$tmp/empty-managed.json"
cmd="yes $line | head -c $size"

# run LABEL COMMAND...: the driver's line for COMMAND; sets mbs and status.
status=0
run() {
    local label=$1 line
    shift
    line=$(cd "$tmp/project" && python3 "$driver" throughput "$bytes" -- "$@") || status=1
    printf '%-7s %s\n' "$label" "$line"
    mbs=${line##* }
}

echo "SIZE $size ($bytes bytes) of yes${line:+ $line} through a pseudo-terminal"
run direct sh -c "$cmd"
direct=$mbs
run sbx "$sbx" run --managed-settings "$tmp/empty-managed.json" --launcher "$launcher" -- sh -c "$cmd"
through=$mbs
awk -v a="$through" -v b="$direct" 'BEGIN { if (b > 0) printf "ratio   sbx/direct %.2f\n", a / b }'
exit $status
