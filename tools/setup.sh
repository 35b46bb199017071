#!/usr/bin/env bash
# Quick start, step one: installs what sbx needs (Debian 12, as root), builds it in
# build/ and prints the effective policy of the example project in
# tests/data/example-project/. Safe to run again: it reconfigures and rebuilds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tools/install-deps.sh

# configure DIR OPTIONS...: `meson setup`, or a reconfigure of a build directory
# that exists; one that cannot be reconfigured (an older Meson made it) is wiped.
configure() {
    local dir=$1
    shift
    if [[ -f $dir/meson-private/coredata.dat ]]; then
        meson setup --reconfigure "$dir" "$@" || meson setup --wipe "$dir" "$@"
    else
        meson setup "$dir" "$@"
    fi
}

configure build --wrap-mode=nodownload
meson compile -C build

echo
echo "$ build/tools/sbx policy --root tests/data/example-project"
build/tools/sbx policy --root tests/data/example-project
