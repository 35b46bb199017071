#!/usr/bin/env bash
# TAP: sbx works as a dependency of another project, both ways a project gets it.
#   1-4  the consumer in tests/consumer/ builds with the sbx source tree as
#        subprojects/sbx (found through dependency('sbx'), forced to the
#        subproject so an sbx installed on the machine cannot stand in), with
#        the engine header-only (sbx-every-header: two units that include every
#        header link), its program runs, and its doctest policy check passes
#        under `meson test`;
#   5-9  sbx installs into a prefix, and the same main.cpp and policy check
#        build against the installed headers with the flags of the installed
#        pkg-config file (doctest's header from the system's include path:
#        Debian's doctest-dev has no pkg-config file), and run.
# Usage: build_test.sh SOURCE-ROOT
# shellcheck disable=SC2317  # the functions run through step()
set -euo pipefail

src=$(cd "${1:?usage: build_test.sh SOURCE-ROOT}" && pwd -P)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expected='example.com from project sandbox.network.allowedDomains[0]'
n=0
failed=0
broken=''  # the first step that failed: the steps after it cannot run

# step DESCRIPTION COMMAND...: runs COMMAND with its output in a log, and reports.
# (Inside COMMAND errexit is off, as in any `if`: functions check each command.)
step() {
    local description=$1
    shift
    n=$((n + 1))
    if [[ -n $broken ]]; then
        echo "ok $n - $description # SKIP step $broken failed"
        return 0
    fi
    local log="$tmp/step-$n.log"
    if "$@" >"$log" 2>&1; then
        echo "ok $n - $description"
    else
        echo "not ok $n - $description"
        failed=$((failed + 1))
        broken=$n
        sed 's/^/# /' "$log"
    fi
}

# prints_expected PROGRAM: the program prints exactly the expected line.
prints_expected() {
    local got
    got=$("$1") || { echo "$1 exited with status $?"; return 1; }
    if [[ $got != "$expected" ]]; then
        echo "expected: $expected"
        echo "got:      $got"
        return 1
    fi
}

echo "1..9"

# The consumer, with sbx as a subproject: a symbolic link to this source tree.
# Built plain (no debug information, which costs a sixth of its time here).
cp -R "$src/tests/consumer" "$tmp/consumer"
cp "$src/tests/unit/every_header.hpp" "$tmp/consumer/"
mkdir -p "$tmp/consumer/subprojects"
ln -s "$src" "$tmp/consumer/subprojects/sbx"
step "the consumer configures with sbx as a subproject" \
    meson setup "$tmp/consumer-build" "$tmp/consumer" --wrap-mode=nodownload \
        --force-fallback-for=sbx -Dsbx:launchers=false -Dbuildtype=plain
step "the consumer compiles against dependency('sbx'), header-only (two units with every header link)" \
    meson compile -C "$tmp/consumer-build"
step "the consumer prints the merged value" prints_expected "$tmp/consumer-build/sbx-consumer"
step "the consumer's doctest policy check passes" \
    meson test -C "$tmp/consumer-build" --no-rebuild --print-errorlogs policy-check

# sbx installed into a prefix, used through its pkg-config file alone.
broken=''
prefix="$tmp/prefix"
install_sbx() {
    meson setup "$tmp/sbx-build" "$src" --wrap-mode=nodownload \
        -Dtests=false -Dlaunchers=false -Dbench=disabled --prefix="$prefix" || return 1
    meson install -C "$tmp/sbx-build" || return 1
    [[ -f $prefix/include/sbx/settings/policy.hpp ]] || { echo "no headers in $prefix/include/sbx"; return 1; }
    local pc
    pc=$(find "$prefix" -name sbx.pc -print -quit)
    [[ -n $pc ]] || { echo "no sbx.pc under $prefix"; return 1; }
    echo "${pc%/*}" >"$tmp/pkgconfig-dir"
}
step "sbx installs its headers and sbx.pc into a prefix" install_sbx

# build_installed SOURCE PROGRAM: compiles tests/consumer/SOURCE into PROGRAM
# with the installed pkg-config file's flags.
build_installed() {
    local flags
    flags=$(PKG_CONFIG_PATH=$(<"$tmp/pkgconfig-dir") pkg-config --cflags --libs sbx) || return 1
    echo "pkg-config: $flags"
    # shellcheck disable=SC2086  # the flags are words
    c++ -Wall -Wextra -Wpedantic -Werror "$tmp/consumer/$1" $flags -o "$2"
}
step "main.cpp compiles with the installed pkg-config flags" \
    build_installed main.cpp "$tmp/installed-consumer"
step "the program built against the installed headers prints the merged value" \
    prints_expected "$tmp/installed-consumer"
step "the doctest policy check compiles with the installed pkg-config flags" \
    build_installed policy_check.cpp "$tmp/installed-policy-check"
step "the policy check built against the installed headers passes" "$tmp/installed-policy-check"

exit $((failed > 0))
