#!/usr/bin/env bash
# Quick start, step two: the whole test suite, run twice with `meson test`: in
# build/, optimised as by default but with NDEBUG and without debugging
# information, and in build-asan/, built by Clang 14 with AddressSanitizer and
# UndefinedBehaviorSanitizer (all but the consumer suite), whose first error fails
# the test it happens in; there the libFuzzer harnesses (the fuzz suite) run too.
# build-asan/ compiles, at the lowest priority, while build/'s tests run.
# Installs missing packages first (tools/install-deps.sh --tests). Prints the logs of the
# tests that fail (standard error, and a TAP test's "not ok" lines with the
# diagnostics under them), then one line "N passed, N failed" counting the tests of both
# runs (a build that fails counts as one failed), and exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tools/install-deps.sh --tests

# Confinement tests run the launchers as an unprivileged user, named to the tests
# in SBX_TEST_USER. As root, make sure that user exists.
if ((EUID == 0)); then
    SBX_TEST_USER=${SBX_TEST_USER:-sbx-test}
    if ! id -u "$SBX_TEST_USER" >/dev/null 2>&1; then
        useradd --create-home --shell /bin/bash --comment "sbx confinement tests" "$SBX_TEST_USER"
    fi
    export SBX_TEST_USER
fi

# What is left on exit, however it comes: the sanitized build's compiler, should
# it still run (it runs in a session of its own, below), and temporary files.
background=""
scratch=()
clean_up() {
    if [[ -n $background ]]; then
        kill -TERM -- "-$background" 2>/dev/null || true
        wait "$background" 2>/dev/null || true
    fi
    if ((${#scratch[@]} > 0)); then
        rm -rf "${scratch[@]}"
    fi
}
trap clean_up EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The tests start python3 some hundreds of times (TAP helpers, the terminal
# drivers, JSON checks). A version manager's python3 first on PATH (pyenv's
# shim, a shell script that runs pyenv) costs 0.2 to 1 s a start where Debian's
# costs 40 ms: for the tests (not the builds, which keep the python3 they were
# configured with), Debian's, which tools/install-deps.sh installs, goes first,
# from a folder of its own that holds nothing else (removed on exit).
test_path=$PATH
if [[ -x /usr/bin/python3 && $(command -v python3) != /usr/bin/python3 ]]; then
    python_bin=$(mktemp -d)
    scratch+=("$python_bin")
    chmod 755 "$python_bin"  # the test user looks there too
    ln -s /usr/bin/python3 "$python_bin/python3"
    test_path=$python_bin:$PATH
fi

# Only the sanitized build reads these; Meson passes them on to every test.
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1

passed=0
failed=0
skipped=0

# count LOG RESULT...: how many tests in Meson's testlog.json ended in one of RESULT.
count() {
    local log=$1
    shift
    local results
    results=$(IFS='|' && echo "$*")
    grep -cE "\"result\": \"($results)\"" "$log" || true
}

# failures LOG: for each test in Meson's testlog.json that did not pass, its
# "not ok" lines and the diagnostic lines after them (--print-errorlogs prints a
# test's standard error only, where a TAP test says little), at most 40 a test.
failures() {
    python3 - "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    test = json.loads(line)
    if test["result"] in ("OK", "EXPECTEDFAIL", "SKIP"):
        continue
    shown, keep = [], False
    for text in test.get("stdout", "").splitlines():
        if text.startswith("not ok") or text.startswith("Bail out"):
            keep = True
        elif not text.startswith("#"):
            keep = False
        if keep:
            shown.append(text)
    print("==> %s: %s; what it said of its failures:" % (test["name"], test["result"]))
    for text in shown[:40] or ["(no 'not ok' line: see its log)"]:
        print("    " + text)
PY
}

# build DIR OPTIONS...: configures DIR with OPTIONS and builds it.
build() {
    local dir=$1
    shift
    tools/configure.sh "$dir" --wrap-mode=nodownload "$@" && meson compile -C "$dir"
}

# run_tests DIR: runs every test in DIR, or only the suites named in the array
# `suites` (meson test's --suite options), and counts them.
suites=()
run_tests() {
    local dir=$1 began=$SECONDS
    local log=$dir/meson-logs/testlog.json
    rm -f "$log"
    echo "==> $dir: meson test"
    if ! PATH=$test_path meson test -C "$dir" --no-rebuild --print-errorlogs ${suites[@]+"${suites[@]}"}; then
        echo "==> $dir: tests failed; every test's full output is in $dir/meson-logs/testlog.txt"
        failures "$log" || true
    fi
    echo "==> $dir: tested in $((SECONDS - began))s"
    if [[ ! -s $log ]]; then
        echo "==> $dir: meson test wrote no $log"
        failed=$((failed + 1))
        return 0
    fi
    local ok skip all
    ok=$(count "$log" OK EXPECTEDFAIL)
    skip=$(count "$log" SKIP)
    all=$(grep -c '"result": ' "$log" || true)
    passed=$((passed + ok))
    skipped=$((skipped + skip))
    failed=$((failed + all - ok - skip))
}

# A build that fails counts as one failed test; its tests do not run.
build_failed() {
    echo "==> $1: the build failed; its tests did not run"
    failed=$((failed + 1))
}

# Options a build directory may have kept from an earlier configure are set again.
# Warnings are errors here, as they are not in a user's build (meson.build).
all_suites=(-Dtests=true -Dlaunchers=true -Dwerror=true)
# build/: optimised as by default, without debugging information (which changes no
# code and took a third of the compiler's time) and with NDEBUG, as in a user's
# release build: what is only used in an assertion must still build without a
# warning. The assertions themselves run in build-asan.
# The benchmarks (bench/) are built in build-asan, where Clang at -O0 builds them
# in about half the time; CI only checks that they build.
release=("${all_suites[@]}" -Db_sanitize=none -Ddebug=false -Db_ndebug=true -Dbench=disabled)
# build-asan/: unoptimised, with Clang 14: the sanitizers check as much, the build
# is quicker than at -O2, and the second compiler's warnings are errors too. The
# libFuzzer harnesses (tests/fuzz), which need Clang, build and run here. The
# consumer suite builds a project of its own with the compiler's own flags: once
# is enough.
# Its programs are linked as position-dependent executables (-no-pie): the
# dynamic loader then has none of the sanitizers' data to relocate at each start
# (`sbx --version` 88 ms of CPU against 103, `sbx run -- true` 230 against 245),
# and the tests start sbx some thousands of times. A user's build stays
# position-independent.
sanitized=("${all_suites[@]}" -Db_sanitize=address,undefined -Db_lundef=false
           -Dbench=enabled -Dbuildtype=debug -Dfuzz=enabled -Dcpp_link_args=-no-pie)

began=$SECONDS
echo "==> build: configure and build"
build_ok=true
build build "${release[@]}" || build_ok=false
echo "==> build: built in $((SECONDS - began))s"

# build-asan is configured and compiled while build's tests run, at the lowest
# priority: those tests wait on servers, terminals and timeouts, leaving about a
# third of two cores idle (243 of 682 core-seconds in one run), which the
# compiler takes. The tests still slow down (the cores share their caches): on
# the 2-core machine they took 421 s beside it against 304 to 341 s alone, and
# the whole run about 100 s less. Its output is printed when the tests are done.
# In a session of its own, so that it ends with this script (clean_up); setsid
# makes it the leader of its group and session without a fork, as this script's
# jobs are no group leaders (job control is off). Where the kernel schedules
# each session as a group (autogroup), a nice value counts only inside the
# group: the session's group gets the lowest priority too (with nice alone the
# tests ran half as slow again).
asan_log=$(mktemp)
scratch+=("$asan_log")
asan_began=$SECONDS
CXX=clang++ setsid nice -n 19 bash -c "$(declare -f build)"'
    if [[ -w /proc/self/autogroup ]]; then echo 19 > /proc/self/autogroup || true; fi
    build "$@"' build build-asan "${sanitized[@]}" > "$asan_log" 2>&1 &
background=$!

if $build_ok; then
    run_tests build
else
    build_failed build
fi

echo "==> build-asan: configure and build (begun beside build's tests)"
asan_ok=true
wait "$background" || asan_ok=false
background=""
cat "$asan_log"
echo "==> build-asan: built $((SECONDS - asan_began))s after it began"
suites=(--no-suite consumer)
if $asan_ok; then
    run_tests build-asan
else
    build_failed build-asan
fi
suites=()

echo
echo "tools/test.sh took ${SECONDS}s"
if ((skipped > 0)); then
    echo "$skipped skipped"
fi
echo "$passed passed, $failed failed"
exit $((failed > 0))
