#!/bin/sh
# Stands in for /usr/bin/sandbox-exec in sbx-mac-fake-seatbelt, a test build of
# sbx-mac (tests/launcher/meson.build), where there is no Seatbelt: it checks
# the arguments and the profile's first form, saves the profile for the test to
# read ($SBX_FAKE_SEATBELT_SAVE, when set), and runs the command. It confines
# nothing: only sbx-mac's own work around Seatbelt is tested with it.
set -eu
[ "$1" = "-p" ] || { echo "fake-sandbox-exec: expected -p PROFILE" >&2; exit 71; }
profile=$2
[ "$3" = "--" ] || { echo "fake-sandbox-exec: expected -- after the profile" >&2; exit 71; }
shift 3
printf '%s\n' "$profile" | grep -v '^;' | head -n 1 | grep -qx '(version 1)' ||
    { echo "fake-sandbox-exec: the profile does not begin with (version 1)" >&2; exit 71; }
if [ -n "${SBX_FAKE_SEATBELT_SAVE:-}" ]; then printf '%s' "$profile" >"$SBX_FAKE_SEATBELT_SAVE"; fi
unset SBX_FAKE_SEATBELT_SAVE
exec "$@"
