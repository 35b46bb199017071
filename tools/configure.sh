#!/usr/bin/env bash
# configure.sh DIR OPTIONS...: `meson setup` of DIR with OPTIONS, or a reconfigure
# of a build directory that exists; one that cannot be reconfigured (an older
# Meson made it) is wiped. Used by tools/setup.sh and tools/test.sh.
set -euo pipefail
dir=$1
shift
if [[ -f $dir/meson-private/coredata.dat ]]; then
    # Meson 1.0's reconfigure keeps the compiler's arguments (cpp_args,
    # cpp_link_args) as they were: they are set first, as every option is.
    if meson configure "$dir" "$@" >/dev/null 2>&1; then
        meson setup --reconfigure "$dir" "$@"
    else
        meson setup --wipe "$dir" "$@"
    fi
else
    meson setup "$dir" "$@"
fi
