#!/usr/bin/env bash
# session.sh BUILD_DIR [--runs N] [--deny-read N] [--repos N] [--sessions K] - what a
# session's command costs (docs/sessions.md), in one run beside a bare fork
# and exec, bare bubblewrap and a one-shot `sbx run`.
#
# Usage:
#   meson compile -C build-bench            # a --buildtype=release build
#   bench/session.sh build-bench            # or: meson test -C build-bench --benchmark session
#   bench/session.sh build-bench --deny-read 1000 --repos 100 --sessions 50
#
# In a fresh temporary project (removed at exit; --deny-read N hides N files
# by its settings, --repos N makes N nested repositories in it) it:
#   1. starts a session and times it;
#   2. runs BUILD_DIR/bench/session_bench on its control socket: `true` N times
#      (default 200) through the socket and, round-robin, by posix_spawnp from
#      the same process (median, p90, p99), then N at once from 50 clients;
#   3. runs BUILD_DIR/bench/startup_bench on `true`, bare bubblewrap, `sbx run
#      --session ID -- true` and `sbx run -- true` (median and p90 wall, CPU, peak RSS);
#   4. prints the private memory (Private_Clean + Private_Dirty of
#      /proc/PID/smaps_rollup) of each process the session keeps: its holder,
#      the holder's reaper, bubblewrap's two and the fork server; and, each
#      apart, of a command's client;
#   5. starts K more sessions at once (--sessions, default 50), runs a command in
#      each at once, times `true` through the first session's socket meanwhile,
#      and stops them all;
# then stops the session and checks that nothing of it is left, and prints
# the private memory of a one-shot `sbx run`'s own processes. The load
# average is printed first. Exit status: 0 every command and session worked;
# 1 one did not, or something was left; 64 usage.
set -euo pipefail

die() {
    echo "session.sh: $*" >&2
    exit 1
}
if [[ $# -lt 1 || $1 == -* ]]; then
    echo "usage: bench/session.sh BUILD_DIR [--runs N] [--deny-read N] [--repos N] [--sessions K]" >&2
    exit 64
fi
build_dir=$(cd "$1" && pwd) || die "no build directory $1"
shift
runs=200 deny_read=0 repos=0 sessions=50
while (($# > 0)); do
    [[ ${2-} =~ ^[0-9]+$ ]] || { echo "session.sh: $1 needs a number" >&2; exit 64; }
    case $1 in
        --runs) runs=$2 ;;
        --deny-read) deny_read=$2 ;;
        --repos) repos=$2 ;;
        --sessions) sessions=$2 ;;
        *) echo "session.sh: unknown option $1" >&2; exit 64 ;;
    esac
    shift 2
done
sbx=$build_dir/tools/sbx
session_bench=$build_dir/bench/session_bench
startup_bench=$build_dir/bench/startup_bench
[[ -x $sbx && -x $session_bench && -x $startup_bench ]] ||
    die "$sbx, $session_bench or $startup_bench is missing: configure with -Dlaunchers=true -Dbench=enabled"

work=$(mktemp -d "${TMPDIR:-/tmp}/sbx-session-bench.XXXXXX")
ids=()
stop_all() {
    local id
    for id in "${ids[@]}"; do "$sbx" session stop "$id" >/dev/null 2>&1 || true; done
    rm -rf "$work"
}
trap stop_all EXIT
project=$work/project
mkdir "$project"
git init -q "$project"
source "$(dirname "${BASH_SOURCE[0]}")/grown_project.sh"
grow_project "$work" "$project" "$deny_read" "$repos" || die "cannot make the project's nested repositories"
export XDG_CACHE_HOME=$work/cache
mkdir "$XDG_CACHE_HOME"
cd "$project"

read -r load _ </proc/loadavg
echo "load average $load on $(nproc) CPUs; $deny_read hidden files, $repos nested repositories"

ms() { date +%s%N; }
t=$(ms)
id=$("$sbx" session start) || die "sbx session start failed"
echo "session start: $(((($(ms) - t)) / 1000000)) ms"
ids+=("$id")
dir=$(dirname "$(ss -xlpn | grep -F "/session-$id/control.sock " | awk '{print $5}')")
socket=$dir/control.sock
[[ -S $socket ]] || die "no control socket for $id"

status=0
"$session_bench" --socket "$socket" --runs "$runs" --at-once 50 || status=1

bwrap_cmd=(bwrap bwrap --unshare-user --unshare-all --disable-userns --die-with-parent --new-session
    --cap-drop ALL --ro-bind / / --dev /dev --proc /proc --chdir "$project" -- true)
"$startup_bench" --runs 60 -- true true ';' "${bwrap_cmd[@]}" ';' session "$sbx" run --session "$id" -- true \
    ';' sbx "$sbx" run -- true || status=1

# The session's resident cost: its holder (the process on the socket), its
# reaper, bubblewrap's two and the fork server (its descendants).
holder=$(ss -xlpn | grep -F "/session-$id/control.sock " | sed -n 's/.*pid=\([0-9]*\),.*/\1/p' | head -1)
private_kib() { awk '/^Private_(Clean|Dirty):/ {s += $2} END {print s + 0}' "/proc/$1/smaps_rollup" 2>/dev/null || echo "?"; }
descendants() {
    local p
    for p in $(cat "/proc/$1/task/"*/children 2>/dev/null); do
        echo "$p"
        descendants "$p"
    done
}
total=0
echo "private memory of the session's processes (KiB):"
for p in "$holder" $(descendants "$holder"); do
    kib=$(private_kib "$p")
    echo "  $kib  $(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-60)"
    [[ $kib == "?" ]] || total=$((total + kib))
done
echo "  $total  in all"

# own_memory LABEL COMMAND...: COMMAND runs `sleep 1` in the sandbox; meanwhile
# the private memory of each of its processes that is sbx: Private_Dirty (what
# it allocated, relocations and stack included) and Private_Clean (pages of the
# program and its libraries that no other process maps now).
own_memory() {
    local label=$1 p
    shift
    "$@" >/dev/null 2>&1 &
    local pid=$!
    sleep 0.7
    for p in "$pid" $(descendants "$pid"); do
        [[ $(readlink "/proc/$p/exe" 2>/dev/null) == "$sbx" ]] || continue
        awk -v l="$label" -v p="$p" '/^Private_Clean:/ {c = $2} /^Private_Dirty:/ {d = $2}
            END {printf "  %-40s pid %-7s dirty %5d KiB, clean %5d KiB\n", l, p, d, c}' "/proc/$p/smaps_rollup"
    done
    wait "$pid" || status=1
}
echo "private memory of a command's own sbx processes (the session's holder maps the same program):"
own_memory "sbx run --session ID (its client)" "$sbx" run --session "$id" -- sleep 1

if ((sessions > 0)); then
    t=$(ms)
    more=()
    for ((i = 0; i < sessions; i++)); do
        ("$sbx" session start >"$work/id$i" 2>"$work/err$i") &
        more+=($!)
    done
    bad=0
    for p in "${more[@]}"; do wait "$p" || bad=$((bad + 1)); done
    for ((i = 0; i < sessions; i++)); do [[ -s $work/id$i ]] && ids+=("$(<"$work/id$i")"); done
    echo "$sessions sessions started at once in $(((($(ms) - t)) / 1000000)) ms, $bad failed"
    pids=()
    for ((i = 1; i < ${#ids[@]}; i++)); do
        ("$sbx" run --session "${ids[$i]}" -- true) &
        pids+=($!)
    done
    "$session_bench" --socket "$socket" --runs "$runs" --warmup 5 | sed -n 's/^socket/socket beside them/p' || status=1
    for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
    ((bad == 0)) || status=1
    echo "a command in each at once: $bad failed"
    t=$(ms)
    for ((i = 1; i < ${#ids[@]}; i++)); do "$sbx" session stop "${ids[$i]}" >/dev/null 2>&1 & done
    wait
    echo "$sessions sessions stopped in $(((($(ms) - t)) / 1000000)) ms"
    ids=("$id")
fi

"$sbx" session stop "$id" || status=1
ids=()
for ((i = 0; i < 20; i++)); do
    kill -0 "$holder" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$holder" 2>/dev/null || [[ -e $dir ]]; then
    echo "session.sh: the session left its holder or its folder" >&2
    status=1
fi
echo "private memory of a one-shot run's sbx processes, no session running (sbx, its reaper):"
own_memory "sbx run -- sleep 1" "$sbx" run -- sleep 1
exit "$status"
