#!/usr/bin/env bash
# configure.sh DIR OPTIONS...: `meson setup` of DIR with OPTIONS, or a reconfigure
# of a build directory that exists; one that cannot be reconfigured (an older
# Meson made it) is wiped. Used by tools/setup.sh and tools/test.sh.
set -euo pipefail
dir=$1
shift
if [[ -f $dir/meson-private/coredata.dat ]]; then
    meson setup --reconfigure "$dir" "$@" || meson setup --wipe "$dir" "$@"
else
    meson setup "$dir" "$@"
fi
