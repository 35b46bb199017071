#!/usr/bin/env bash
# Quick start, step one: installs what sbx needs (Debian 12, as root), builds it in
# build/ and prints the effective policy of the example project in
# tests/data/example-project/. Safe to run again: it reconfigures and rebuilds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tools/install-deps.sh

tools/configure.sh build --wrap-mode=nodownload
meson compile -C build

echo
echo "$ build/tools/sbx policy --root tests/data/example-project"
build/tools/sbx policy --root tests/data/example-project
