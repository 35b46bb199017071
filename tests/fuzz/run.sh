#!/usr/bin/env bash
# run.sh HARNESS SEEDS DICT SECONDS CRASHES: runs a libFuzzer harness for SECONDS
# over a fresh corpus in a temporary directory, then the seeds in SEEDS (read
# only: libFuzzer adds what it finds to the first directory it is given, so it
# never writes into the source tree). DICT is used when the file exists. Fails
# when the harness crashes, leaks, overruns its time per input or its memory;
# the input that did it is kept in CRASHES (in the build directory) and shown.
# Prints libFuzzer's final statistics either way. The temporary corpus is
# removed on every exit.
set -euo pipefail
harness=$1 seeds=$2 dict=$3 seconds=$4 crashes=$5

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sbx-fuzz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
rm -rf "$crashes"  # only this run's findings
mkdir -p "$crashes"

options=(
    -max_total_time="$seconds"
    -timeout=10          # seconds for one input: a parser that takes longer is a finding
    -rss_limit_mb=2048   # and so is one that needs more memory
    -max_len=4096
    -print_final_stats=1
    -artifact_prefix="$crashes/"
)
if [[ -f $dict ]]; then
    options+=(-dict="$dict")
fi

status=0
"$harness" "${options[@]}" "$tmp" "$seeds" >"$tmp/log" 2>&1 || status=$?
# The end of the run: the last status line (#N DONE cov: ... ft: ... corp: ...,
# or where it stopped), and the final statistics.
grep -E '^#[0-9]+' "$tmp/log" | tail -n 1 || true
grep -E '^(stat::|Done )' "$tmp/log" || true
if ((status != 0)); then
    echo "run.sh: $(basename "$harness") failed (status $status); its output:"
    tail -n 60 "$tmp/log"
    for f in "$crashes"/*; do
        [[ -f $f ]] || continue
        echo "run.sh: the input, kept in $f:"
        od -A d -c "$f" | head -n 40
    done
fi
exit "$status"
