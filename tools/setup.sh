#!/usr/bin/env bash
# Quick start, step one: installs what sbx needs (Debian 12, as root), builds it in
# build/, prints what `sbx doctor` finds, and runs a real command in the sandbox
# with the default policy in a fresh git repository, removed afterwards. Safe to
# run again: it reconfigures and rebuilds. Exits non-zero if the sandbox cannot
# run here (sbx doctor says why) or the demonstration does not behave.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tools/install-deps.sh

tools/configure.sh build --wrap-mode=nodownload
meson compile -C build

echo
echo "$ build/tools/sbx doctor"
build/tools/sbx doctor

base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT
demo=$base/project
git init -q "$demo"
# With no settings file anywhere, sbx uses its built-in default policy; a home of
# the demonstration's own keeps a user settings file out of it.
export HOME=$base/home
mkdir -p "$HOME/.ssh"
echo "not a real key" >"$HOME/.ssh/id_ed25519"

echo
echo "$ cd $demo && build/tools/sbx run -- sh -c '...'"
cd "$demo"
"$OLDPWD/build/tools/sbx" run -- sh -c '
    echo "inside: $(id -un), $(ls /proc | grep -c "^[0-9]") processes visible, TMPDIR=$TMPDIR"
    echo hello >made-inside && echo "wrote $PWD/made-inside"
    echo "#!/bin/sh" 2>/dev/null >.git/hooks/pre-commit || echo "refused: writing .git/hooks/pre-commit"
    cat ~/.ssh/id_ed25519 2>/dev/null || echo "refused: reading ~/.ssh/id_ed25519"
    unshare -U true 2>/dev/null || echo "refused: unshare -U"
    [ -w /proc/sys/kernel/core_pattern ] || echo "refused: writing /proc/sys/kernel/core_pattern"
'
test -f made-inside
test ! -e .git/hooks/pre-commit
echo "back outside: $demo/made-inside is there, .git/hooks/pre-commit is not"
