#!/usr/bin/env bash
# One agent session's commands in a Node and Python project (tools_test.sh makes
# it): look at the project, install from the registry, start a dev server in the
# background and reach it with curl, wget, Python, Node's fetch and pip in the
# same command, commit with the author the caller's environment names, pack.
# Each step prints the command, its output and its status, so that a run inside
# sbx and one outside can be compared line by line.
# Usage: agent_session.sh REGISTRY SERVE_PY WWW
set -u
registry=$1 serve_py=$2 www=$3
step() {
    echo "== $*"
    "$@" 2>&1
    echo "rc=$?"
}
# What changes from run to run: npm's timings, the dev server's port, TMPDIR.
steady() {
    sed -E -e 's/ in [0-9.]+m?s$/ in T/; s/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g; s/localhost:[0-9]+/localhost:PORT/g' \
        -e "s|$TMPDIR|TMPDIR|g"
}

step ls -A
step npm install --registry "$registry/" --no-audit --no-fund --no-update-notifier 2>&1 | steady
step node -e 'console.log(require("sbx-tiny"))'

# A dev server of the command's own, on a port the kernel picks.
rm -f "$TMPDIR/dev-port"
python3 "$serve_py" "$www" "$TMPDIR/dev-port" "$TMPDIR/dev.log" &
server=$!
for _ in $(seq 100); do
    [[ -s $TMPDIR/dev-port ]] && break
    sleep 0.05
done
port=$(cat "$TMPDIR/dev-port")
url="http://127.0.0.1:$port/hello.txt"
{
    step curl -sS "$url"
    step curl -sS "http://localhost:$port/hello.txt"
    if command -v wget >/dev/null; then step wget -q -O - "$url"; else echo "== wget: not installed"; fi
    step python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode(), end="")' "$url"
    step node -e 'fetch(process.argv[1]).then(r => r.text()).then(t => process.stdout.write(t))' "$url"
    step python3 -m pip download -q --no-deps --disable-pip-version-check --index-url "http://127.0.0.1:$port/simple" \
        -d "$TMPDIR/wheels" sbx-tiny-py
    step ls "$TMPDIR/wheels"
} 2>&1 | steady
kill "$server"
wait "$server" 2>/dev/null

echo 'print("hello from the app")' >app.py
step git add app.py
step git commit -q -m 'add the app'
step git log -1 --format='%an <%ae> / %cn <%ce>'
step git status --porcelain
step ls -A
step sh -c 'tar c --exclude=./node_modules . | tar t | sort'
step npm pack --dry-run --json --no-update-notifier
