#!/usr/bin/env bash
# For a person with a Mac: builds sbx and runs, under the real sbx-mac and
# Seatbelt, the attacks the Linux suite (tests/attacks/) runs under bubblewrap
# that apply to macOS, each beside a control that shows the same step working
# where the sandbox allows it. Nothing here runs in CI (no Mac there); see
# docs/seatbelt.md for what was verified on Linux and what only this verifies.
#
#   tests/macos/run.sh            # builds into build-macos/, then runs the cases
#   tests/macos/run.sh BUILD_DIR  # uses an existing build
#
# Needs: Xcode's command line tools, meson, ninja, simdjson, CLI11, tl-expected
# and doctest (Homebrew: brew install meson ninja simdjson cli11 tl-expected
# doctest), curl and python3. Output is TAP; exit 1 when a case failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
build=${1:-$here/build-macos}
if [[ ! -x $build/tools/sbx ]]; then
    meson setup "$build" "$here" -Dbuildtype=release >/dev/null
    ninja -C "$build" tools/sbx launchers/sbx-mac >/dev/null
fi
sbx=$build/tools/sbx
mac=$build/launchers/sbx-mac

source "$here/tests/tap.sh"

if [[ $(uname) != Darwin || ! -x /usr/bin/sandbox-exec ]]; then
    echo "1..0 # SKIP not a Mac with /usr/bin/sandbox-exec"
    exit 0
fi

# /tmp is a symlink to /private/tmp: work under the real path, as the plan does.
tmp=$(cd "$(mktemp -d /tmp/sbx-mac.XXXXXX)" && pwd -P)
server=
cleanup() {
    [[ -z $server ]] || kill "$server" 2>/dev/null || true
    chmod -R u+w "$tmp" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
home=$tmp/home
proj=$tmp/project
mkdir -p "$home/.ssh" "$proj"
echo "secret key" >"$home/.ssh/id_sbx_test"
git init -q "$proj"
echo '{}' >"$tmp/managed.json"

# in_sandbox [SBX-RUN-ARGS...] -- SCRIPT: sets $rc, $out, $err.
in_sandbox() {
    local args=() script
    tap_split "$@"
    rc=0
    (cd "$proj" && HOME=$home TMPDIR=/tmp "$sbx" run --managed-settings "$tmp/managed.json" --launcher "$mac" \
        "${args[@]}" -- /bin/sh -c "$script") </dev/null >"$tmp/out" 2>"$tmp/err" || rc=$?
    out=$(<"$tmp/out")
    err=$(<"$tmp/err")
}
expect_out() { [[ $out == *"$1"* ]] || fail_because "stdout lacks '$1'"; }

# --- the filesystem ---------------------------------------------------------------
in_sandbox -- 'echo inside >made-in-root && cat made-in-root && echo t >"$TMPDIR/t" && echo tmp-ok'
expect_out "inside"
expect_out "tmp-ok"
tap_finish "control: the command writes in the root and in its TMPDIR"

in_sandbox -- "echo x >'$home/outside' 2>/dev/null || echo refused"
expect_out refused
[[ ! -e $home/outside ]] || fail_because "a file outside the root was written"
tap_finish "a write outside the root is refused"

for target in .git/hooks/pre-commit .git/config .bashrc .mcp.json .vscode/settings.json .claude/settings.json HEAD; do
    in_sandbox -- "mkdir -p \"\$(dirname '$target')\" 2>/dev/null; echo x >'$target' 2>/dev/null || echo refused"
    expect_out refused
    tap_finish "the protected path $target cannot be written, existing or not"
done

in_sandbox -- "mv .git moved-git 2>/dev/null || echo refused; rm -rf .git 2>/dev/null; test -d .git && echo still-there"
expect_out refused
expect_out still-there
tap_finish ".git cannot be moved or removed"

mkdir -p "$proj/sub/.claude"
in_sandbox -- "mv sub other 2>/dev/null || echo refused"
expect_out refused
tap_finish "a directory above a protected path cannot be renamed out from under the rules"

in_sandbox -- "cat '$home/.ssh/id_sbx_test' 2>/dev/null || echo refused"
expect_out refused
[[ $out != *"secret key"* ]] || fail_because "the key was read"
tap_finish "~/.ssh is hidden from reads"

in_sandbox -- "ln -s '$home/.ssh/id_sbx_test' link && cat link 2>/dev/null || echo refused"
expect_out refused
tap_finish "a symlink in the root does not reach a hidden file"

in_sandbox -- "name=\$(printf 'q\"uote\\\\back\\nnew'); echo x >\"\$name\" && echo odd-name-ok"
expect_out odd-name-ok
tap_finish "control: a file name with a quote, a backslash and a newline is written (and the profile held)"

# --- the network ----------------------------------------------------------------------
python3 -m http.server 0 --bind 127.0.0.1 >"$tmp/http.log" 2>&1 &
server=$!
for _ in $(seq 50); do grep -q "port" "$tmp/http.log" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$tmp/http.log" | head -n1)

in_sandbox -- "curl -s -m 10 -o /dev/null -w 'code:%{http_code}' http://example.com/"
expect_out "code:403"
[[ $err == *"deny network-outbound example.com:80"* ]] || fail_because "no violation line"
tap_finish "a host no rule allows gets 403 and a <sandbox_violations> line"

in_sandbox --allow-host "127.0.0.1:$port" -- "curl -s -m 10 -o /dev/null -w 'code:%{http_code}' http://127.0.0.1:$port/"
expect_out "code:200"
tap_finish "control: an allowed local server is reached through the proxy"

in_sandbox --allow-host "127.0.0.1:$port" -- "curl -s -m 5 --noproxy '*' http://127.0.0.1:$port/ >/dev/null; echo curl-exit:\$?"
[[ $out != "curl-exit:0" ]] || fail_because "a connection around the proxy got through"
tap_finish "a command that ignores the proxy variables reaches nothing"

in_sandbox -- "curl -s -m 5 --noproxy '*' http://1.1.1.1/ >/dev/null; echo curl-exit:\$?"
[[ $out != "curl-exit:0" ]] || fail_because "a direct connection out got through"
tap_finish "a direct connection to the internet is refused"

printf '{"sandbox": {"network": {"allowLocalBinding": true}}}' >"$tmp/local.json"
in_sandbox --settings "$tmp/local.json" -- "curl -s -m 5 --noproxy '*' -o /dev/null -w 'code:%{http_code}' http://localhost:$port/"
expect_out "code:200"
tap_finish "allowLocalBinding: localhost is reached directly"

in_sandbox -- "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"/var/run/mDNSResponder\")' 2>/dev/null && echo connected || echo refused"
expect_out refused
tap_finish "a Unix socket no setting names cannot be connected"

# --- processes --------------------------------------------------------------------------
in_sandbox -- "(sleep 300; echo late) >/dev/null 2>&1 & echo started"
sleep 1
if pgrep -f "sleep 300" >/dev/null; then fail_because "a background process outlived the command"; fi
tap_finish "what the command leaves running ends with it"

in_sandbox -- "python3 -c 'import fcntl, termios; fd=open(\"/dev/tty\",\"rb\"); fcntl.ioctl(fd, termios.TIOCSTI, b\"x\")' 2>/dev/null && echo injected || echo refused"
expect_out refused
tap_finish "no terminal to push input into (TIOCSTI)"

in_sandbox -- "open -a Calculator 2>/dev/null && echo opened || echo refused; osascript -e 'return 1' 2>/dev/null && echo scripted || echo refused-ae"
expect_out refused
expect_out refused-ae
tap_finish "LaunchServices and Apple Events cannot start programs outside the sandbox"

tap_end
