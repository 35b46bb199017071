#!/usr/bin/env bash
# startup.sh BUILD_DIR [STARTUP_BENCH OPTIONS...] - what `sbx run -- true` costs
# next to bare bubblewrap and, where it can be had, next to srt.
#
# Usage:
#   meson compile -C build-bench            # a --buildtype=release build
#   bench/startup.sh build-bench            # or: meson test -C build-bench --benchmark startup
#   bench/startup.sh build-bench --runs 200 --json
#   bench/startup.sh build-bench --breakdown [--runs N] [--warmup N] [--jobs K] [--json]
#   bench/startup.sh build-bench [--breakdown] --deny-read 100 --repos 10 ...
#
# --breakdown times nothing against anything: in the same fresh project it runs
# bench/startup_breakdown.py, which adds `sbx run --trace-fd N` and prints the
# median of each step sbx, the launcher and the stage trace (docs/plan.md), with
# the gaps between them; --jobs K starts K runs at once. It needs python3.
# --deny-read N adds a .claude/settings.json hiding N files outside the project,
# --repos N makes N nested git repositories in it: how the cost grows.
#
# It builds nothing. In a fresh temporary project (made by `git init`, removed at
# exit) it times, with BUILD_DIR/bench/startup_bench, 5 warm-up and 50 timed runs
# (change with --runs N / --warmup N) of:
#   bwrap  bwrap --unshare-user --unshare-all --disable-userns --die-with-parent
#          --new-session --cap-drop ALL --ro-bind / / --dev /dev --proc /proc
#          --chdir PROJECT -- true          (the namespaces sbx uses; the baseline)
#   sbx    BUILD_DIR/tools/sbx run --root PROJECT -- true   (which runs the launcher's
#          steps in its own process, with BUILD_DIR/launchers/sbx-stage as the stage)
#   srt    env TMPDIR=TEMP srt -s SETTINGS -c true   (Anthropic's sandbox-runtime, if
#          it runs; it leaves a socket in TMPDIR per run, so TEMP is removed at exit)
# and prints median and p90 wall time, median CPU time (the whole process tree) and
# median peak RSS of each, with ratios to bwrap, then the verdict on the target:
# sbx's median wall time within 1.5x bwrap's (SBX_BENCH_TARGET changes the 1.5).
#
# srt is installed with npm into ${XDG_CACHE_HOME:-$HOME/.cache}/sbx-bench/srt, once
# (remove that directory to update it). On Linux it needs socat and ripgrep besides
# bwrap; when they are missing and this runs as root with apt-get, they are installed
# (the script says so), otherwise srt is left out. It runs with a settings file made
# here ({"filesystem": {"allowWrite": ["."]}, "network": {"allowedDomains": []}}),
# so that ~/.srt-settings.json does not change the figures. srt is left out, with
# the reason printed, whenever npm, the install or a first `srt -c true` fails;
# SBX_BENCH_SRT=0 leaves it out without trying.
#
# Exit status: 0 all runs succeeded and sbx met the target; 1 a run failed, a tool
# is missing, or sbx could not be measured; 2 sbx missed the target; 64 usage.
set -euo pipefail

die() {
    echo "startup.sh: $*" >&2
    exit 1
}

if [[ $# -lt 1 || $1 == -* ]]; then
    echo "usage: bench/startup.sh BUILD_DIR [--breakdown] [--deny-read N] [--repos N] [--runs N] [--warmup N] [--jobs K] [--json]" >&2
    exit 64
fi
build_dir=$(cd "$1" && pwd) || die "no build directory $1"
bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
shift
breakdown=0
deny_read=0
repos=0
while [[ ${1-} == --breakdown || ${1-} == --deny-read || ${1-} == --repos ]]; do
    case $1 in
        --breakdown) breakdown=1 ;;
        --deny-read | --repos)
            [[ ${2-} =~ ^[0-9]+$ ]] || { echo "startup.sh: $1 needs a number" >&2; exit 64; }
            if [[ $1 == --deny-read ]]; then deny_read=$2; else repos=$2; fi
            shift
            ;;
    esac
    shift
done
bench=$build_dir/bench/startup_bench
sbx=$build_dir/tools/sbx
stage=$build_dir/launchers/sbx-stage
target=${SBX_BENCH_TARGET:-1.5}

[[ $breakdown == 1 || -x $bench ]] || die "$bench is missing: configure with -Dbench=enabled and run meson compile -C $build_dir"
command -v bwrap >/dev/null || die "bwrap is not installed (apt-get install bubblewrap)"

work=$(mktemp -d "${TMPDIR:-/tmp}/sbx-startup.XXXXXX")
trap 'rm -rf "$work"' EXIT
project=$work/project
mkdir "$project"
git init -q "$project" || die "git init failed in $project"
# How the cost grows: N hidden files and N nested repositories.
source "$bench_dir/grown_project.sh"
grow_project "$work" "$project" "$deny_read" "$repos" || die "cannot make the project's nested repositories"
# srt stays installed in the user's cache; the project's tool cache home, which
# every run makes and binds, goes in the work folder and goes with it.
srt_cache=${XDG_CACHE_HOME:-$HOME/.cache}/sbx-bench/srt
export XDG_CACHE_HOME=$work/cache
mkdir "$XDG_CACHE_HOME"

# The commands; each array is one entry for startup_bench after `--`.
bwrap_cmd=(bwrap bwrap --unshare-user --unshare-all --disable-userns --die-with-parent --new-session
    --cap-drop ALL --ro-bind / / --dev /dev --proc /proc --chdir "$project" -- true)
sbx_cmd=(sbx "$sbx" run --root "$project" -- true)
srt_cmd=()

# Runs "$@" once in the project; on failure prints why (with the output) and fails.
first_run() {
    local what=$1 out rc=0
    shift
    out=$(cd "$project" && "$@" </dev/null 2>&1) || rc=$?
    [[ $rc == 0 ]] && return 0
    echo "startup.sh: leaving $what out: a first run failed (exit $rc): $*" >&2
    [[ -n $out ]] && printf '%s\n' "$out" | sed 's/^/  | /' >&2
    return 1
}

if [[ $breakdown == 1 ]]; then
    command -v python3 >/dev/null || die "--breakdown needs python3"
    [[ -x $sbx && -x $stage ]] || die "$sbx or $stage is missing (configure with -Dlaunchers=true)"
    first_run sbx "${sbx_cmd[@]:1}" || die "\`sbx run -- true\` failed"
    read -r load _ </proc/loadavg || load=unknown
    echo "startup.sh: load average $load on $(nproc) CPUs" >&2
    cd "$project"
    status=0
    python3 "$bench_dir/startup_breakdown.py" "$@" -- "${sbx_cmd[@]:1}" || status=$?
    exit "$status"
fi

sbx_missing=
if [[ ! -x $sbx ]]; then
    sbx_missing="$sbx is missing (configure with -Dlaunchers=true)"
elif [[ ! -x $stage ]]; then
    sbx_missing="$stage is missing"
elif ! first_run sbx "${sbx_cmd[@]:1}"; then
    sbx_missing="\`sbx run -- true\` failed"
fi
[[ -n $sbx_missing ]] && echo "startup.sh: not measuring sbx: $sbx_missing" >&2

# srt: install it into the cache, check what it needs, then try it once.
find_srt() {
    local cache=$srt_cache
    local srt=$cache/node_modules/.bin/srt
    if [[ ${SBX_BENCH_SRT:-1} == 0 ]]; then
        echo "startup.sh: leaving srt out: SBX_BENCH_SRT=0" >&2
        return 1
    fi
    if [[ ! -x $srt ]]; then
        if ! command -v npm >/dev/null; then
            echo "startup.sh: leaving srt out: npm is not installed" >&2
            return 1
        fi
        echo "startup.sh: installing @anthropic-ai/sandbox-runtime into $cache" >&2
        mkdir -p "$cache"
        local log=$work/npm.log
        if ! npm install --prefix "$cache" --no-audit --no-fund @anthropic-ai/sandbox-runtime >"$log" 2>&1 ||
            [[ ! -x $srt ]]; then
            echo "startup.sh: leaving srt out: npm install @anthropic-ai/sandbox-runtime failed:" >&2
            tail -n 20 "$log" | sed 's/^/  | /' >&2
            return 1
        fi
    fi
    local version
    version=$(node -p 'require(process.argv[1]).version' \
        "$cache/node_modules/@anthropic-ai/sandbox-runtime/package.json" 2>/dev/null || echo unknown)
    echo "startup.sh: srt is @anthropic-ai/sandbox-runtime $version from $cache" >&2

    # On Linux srt refuses to start without socat and ripgrep.
    local missing=() tool
    for tool in socat:socat rg:ripgrep; do
        command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
    done
    if [[ ${#missing[@]} -gt 0 ]]; then
        if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
            echo "startup.sh: srt needs ${missing[*]}: apt-get install ${missing[*]}" >&2
            if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
                >"$work/apt.log" 2>&1; then
                apt-get update -q >>"$work/apt.log" 2>&1 || true
                DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
                    >>"$work/apt.log" 2>&1 || {
                    echo "startup.sh: leaving srt out: apt-get install ${missing[*]} failed:" >&2
                    tail -n 10 "$work/apt.log" | sed 's/^/  | /' >&2
                    return 1
                }
            fi
        else
            echo "startup.sh: leaving srt out: it needs ${missing[*]} (apt-get install ${missing[*]})" >&2
            return 1
        fi
    fi

    local settings=$work/srt-settings.json
    printf '%s\n' '{"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []},' \
        ' "network": {"allowedDomains": [], "deniedDomains": []}}' >"$settings"
    # srt leaves a socket (srt-mux-PID-0.sock) in TMPDIR after every run: keep them in $work.
    mkdir "$work/srt-tmp"
    srt_cmd=(srt env "TMPDIR=$work/srt-tmp" "$srt" -s "$settings" -c true)
    first_run srt "${srt_cmd[@]:1}" || { srt_cmd=(); return 1; }
}
find_srt || true

args=(-- "${bwrap_cmd[@]}")
[[ -z $sbx_missing ]] && args+=(";" "${sbx_cmd[@]}")
[[ ${#srt_cmd[@]} -gt 0 ]] && args+=(";" "${srt_cmd[@]}")
targets=()
[[ -z $sbx_missing ]] && targets=(--target "sbx=$target")

# Wall time of a namespace sandbox is mostly waiting in the kernel, and stretches
# when the CPUs are busy; CPU time holds steadier. Say how busy they are.
read -r load _ </proc/loadavg || load=unknown
echo "startup.sh: load average $load on $(nproc) CPUs; wall times stretch when that is near or above the CPU count" >&2

cd "$project"
status=0
"$bench" "$@" "${targets[@]}" "${args[@]}" || status=$?
if [[ -n $sbx_missing ]]; then
    echo "startup.sh: sbx/bwrap wall ratio: not measured ($sbx_missing)" >&2
    [[ $status == 0 ]] && status=1
fi
exit "$status"
