#!/usr/bin/env bash
# TAP: `sbx explain` and `sbx plan` run on real directories. explain must say
# whether a path may be read and written and name the rule (the root, a protected
# path, a settings entry with its file and key); plan must print the version 1
# document of docs/plan.md and refuse what it documents as refused. `--pass-fd`,
# which both plan and run take, is checked here too, run's with a stand-in
# launcher that reports what it was given (no sandbox is made).
# Every case gets a fresh HOME, project and TMPDIR under one temporary directory.
# Needs bash, coreutils and grep. A repository is made with `git init` where git is
# installed, and otherwise by hand with the entries sbx looks at (HEAD, objects,
# refs, hooks, config), which is all that the cases below depend on.
# Usage: explain_plan_test.sh PATH-TO-SBX
set -euo pipefail

sbx=${1:?usage: explain_plan_test.sh PATH-TO-SBX}
[[ $sbx != */* || $sbx == /* ]] || sbx=$PWD/$sbx  # one case runs from another directory
source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch  # by its physical path: sbx prints paths with their symlinks resolved

# This machine's managed settings file, if it has one, must not change the answers.
managed=()
if [[ -e /etc/claude-code/managed-settings.json ]]; then
    managed=(--managed-settings "$tmp/empty-managed.json")
fi

# fresh_case: sets $case_dir, $home, $proj and $tmpd for the next case and makes them;
# the project has an empty .claude directory.
fresh_case() {
    case_dir="$tmp/case-$((n + 1))"
    home="$case_dir/home"
    proj="$case_dir/project"
    tmpd="$case_dir/tmp"
    mkdir -p "$home" "$proj/.claude" "$tmpd"
}

# make_repo DIR: DIR becomes a git repository.
make_repo() {
    if command -v git >/dev/null 2>&1; then
        git init -q "$1"
    else
        mkdir -p "$1/.git/hooks" "$1/.git/objects" "$1/.git/refs/heads"
        echo 'ref: refs/heads/main' >"$1/.git/HEAD"
        printf '[core]\n\trepositoryformatversion = 0\n' >"$1/.git/config"
    fi
}

# sbx_run ARGS...: `sbx ARGS` with the case's HOME and TMPDIR, at most ten seconds;
# leaves $rc, $out and $err. A hang ends with status 124.
sbx_run() {
    rc=0
    HOME=$home TMPDIR=$tmpd timeout 10 "$sbx" "$@" </dev/null >"$tmp/out" 2>"$tmp/err" || rc=$?
    out=$(<"$tmp/out")
    err=$(<"$tmp/err")
}

# want_error STATUS REGEX: that status, an empty stdout and a stderr of one line
# matching REGEX.
want_error() {
    want_status "$1"
    [[ -z $out ]] || fail_because "stdout is not empty"
    [[ $(grep -c '' "$tmp/err") == 1 ]] || fail_because "stderr is not exactly one line"
    grep -qE -- "$2" <<<"$err" || fail_because "stderr does not match: $2"
}

# lit TEXT: TEXT as an extended regular expression that matches only itself.
# shellcheck disable=SC2001  # the bracket expression needs sed
lit() { sed 's/[][\.*^$+?(){}|]/\\&/g' <<<"$1"; }

# --- sbx explain --------------------------------------------------------------------
fresh_case
echo '{"sandbox": {"enabled": true}}' >"$proj/.claude/settings.json"
mkdir -p "$proj/src"
echo 'int main() {}' >"$proj/src/main.c"
sbx_run explain --root "$proj" "${managed[@]}" "$proj/src/main.c"
want_status 0
want_line "^$(lit "$proj/src/main.c")\$"
want_line '^  read: allowed  '
want_line "^  write: allowed  inside the root $(lit "$proj")\$"
tap_finish "explain, a file in the root: read allowed, write allowed inside the root"

fresh_case
echo '{"sandbox": {"enabled": true}}' >"$proj/.claude/settings.json"
make_repo "$proj"
sbx_run explain --root "$proj" "${managed[@]}" "$proj/.git/hooks/pre-commit"
want_status 0
want_line '^  read: allowed  '
want_line "^  write: denied  protected: protected path $(lit "$proj/.git/hooks") \(.*hooks"
tap_finish "explain, .git/hooks/pre-commit of a repository: write denied as a protected path"

# core.hooksPath names a folder that does not exist yet: the first missing folder
# on the way is covered, so explain denies every write inside it, and the plan
# has its placeholder.
fresh_case
echo '{"sandbox": {"enabled": true}}' >"$proj/.claude/settings.json"
make_repo "$proj"
printf '[core]\n\thooksPath = tools/git-hooks\n' >>"$proj/.git/config"
sbx_run explain --root "$proj" "${managed[@]}" "$proj/tools/other.txt"
want_status 0
want_line "^  write: denied  protected: protected path $(lit "$proj/tools") \(the first missing folder on the way to $(lit "$proj/tools/git-hooks")"
sbx_run plan --root "$proj" "${managed[@]}" -- true
want_out "{\"path\":\"$proj/tools\",\"kind\":\"directory\","
mkdir "$proj/tools"
sbx_run explain --root "$proj" "${managed[@]}" "$proj/tools/other.txt"
want_line "^  write: allowed  inside the root"
sbx_run explain --root "$proj" "${managed[@]}" "$proj/tools/git-hooks/pre-commit"
want_line "^  write: denied  protected: protected path $(lit "$proj/tools/git-hooks")"
tap_finish "explain and plan agree: a core.hooksPath folder that does not exist yet covers its first missing folder"

# A protected name that is a symbolic link: explain's link: line and the plan's
# ro-link mount say the same of it; a link of no protected name gets neither.
fresh_case
echo '{"sandbox": {"enabled": true}}' >"$proj/.claude/settings.json"
mkdir "$case_dir/shared"
echo '{}' >"$case_dir/shared/mcp.json"
ln -s "$case_dir/shared/mcp.json" "$proj/.mcp.json"
ln -s "$case_dir/shared/mcp.json" "$proj/notes.json"
sbx_run explain --root "$proj" "${managed[@]}" "$proj/.mcp.json"
want_status 0
want_line "^$(lit "$proj/.mcp.json") \(leads to $(lit "$case_dir/shared/mcp.json")\)\$"
want_line "^  link: denied  protected: protected path $(lit "$proj/.mcp.json") \(.*\); the symbolic link itself cannot be removed, renamed or replaced\$"
sbx_run explain --root "$proj" "${managed[@]}" --json "$proj/.mcp.json"
want_out "\"link\":{\"allowed\":false,"
sbx_run plan --root "$proj" "${managed[@]}" -- true
want_out "{\"kind\":\"ro-link\",\"path\":\"$proj/.mcp.json\",\"expect\":{\"exists\":true,\"type\":\"symlink\","
want_no_out "\"path\":\"$proj/notes.json\""
sbx_run explain --root "$proj" "${managed[@]}" "$proj/notes.json"
want_line "^  link: allowed  inside the root $(lit "$proj"); the symbolic link itself can be removed, renamed or replaced\$"
sbx_run explain --root "$proj" "${managed[@]}" "$proj/src"
want_no_out "  link: "
tap_finish "explain and plan agree: a symlinked .mcp.json is protected under its own name (ro-link), a link of no protected name is not"

fresh_case
echo '{"sandbox": {"enabled": true, "filesystem": {"denyRead": ["./build", "secrets"]}}}' \
    >"$proj/.claude/settings.json"
mkdir -p "$proj/secrets"
echo 'token' >"$proj/secrets/api.txt"
settings=$proj/.claude/settings.json
sbx_run explain --root "$proj" "${managed[@]}" "$proj/secrets/api.txt"
want_status 0
want_line "^  read: denied  hidden by filesystem\.denyRead $(lit "$proj/secrets") \[project $(lit "$settings") sandbox\.filesystem\.denyRead\[1\]\]\$"
want_line '^  write: denied  '
tap_finish "explain, a file under a denyRead: read denied, naming the list, the file and the key"

fresh_case
echo '{"sandbox": {"enabled": true, "filesystem": {"denyRead": ["secrets"]}}}' >"$proj/.claude/settings.json"
mkdir -p "$proj/secrets"
sbx_run explain --root "$proj" "${managed[@]}" --json "$proj/secrets/api.txt"
want_status 0
[[ $out == '{'*'}' ]] || fail_because "the output is not one JSON object"
[[ $(grep -c '' "$tmp/out") == 1 ]] || fail_because "the JSON is not one line"
want_out "\"path\":\"$proj/secrets/api.txt\""
want_out '"read":{"allowed":false,'
want_out "\"rule\":{\"list\":\"filesystem.denyRead\",\"entry\":\"$proj/secrets\""
want_out "\"key\":\"sandbox.filesystem.denyRead[0]\""
want_out '"write":{"allowed":false,'
tap_finish "explain --json: allowed false, with the rule's list, entry and key"

fresh_case
echo '{"sandbox": {"enabled": true, "filesystem": {"denyRead": ["notes"]}}}' >"$proj/.claude/settings.json"
mkdir -p "$case_dir/elsewhere/notes" "$proj/notes"
# Run from a directory that has a `notes` of its own: the path must not be read from there.
rc=0
(cd "$case_dir/elsewhere" && HOME=$home TMPDIR=$tmpd timeout 10 "$sbx" explain --root "$proj" "${managed[@]}" \
    notes/todo.txt </dev/null >"$tmp/out" 2>"$tmp/err") || rc=$?
out=$(<"$tmp/out")
err=$(<"$tmp/err")
want_status 0
want_line "^$(lit "$proj/notes/todo.txt")\$"
want_no_out "$case_dir/elsewhere"
want_line '^  read: denied  hidden by filesystem\.denyRead '
tap_finish "explain, a relative PATH: taken relative to --root, not to the current directory"

fresh_case
sbx_run explain --root "$proj" "${managed[@]}"
want_error 64 '^sbx: USAGE: .*path'
tap_finish "explain without a PATH: exit 64, saying the path is missing"

# --- credential stores under settings files ----------------------------------------
fresh_case
echo '{}' >"$proj/.claude/settings.json"
mkdir -p "$home/.ssh" "$home/.aws"
echo key >"$home/.ssh/id_test"
sbx_run explain --root "$proj" "${managed[@]}" "$home/.ssh/id_test"
want_status 0
want_line "^  read: denied  hidden by credential store $(lit "$home/.ssh") \(SSH private keys, and the hosts they log in to\) \[builtin \(built-in\) defaults\.credentialStores\[0\]\]\$"
want_line '^  write: denied  not writable where reads are refused'
sbx_run explain --root "$proj" "${managed[@]}" "$home/.aws/credentials"
want_line "^  read: denied  hidden by credential store $(lit "$home/.aws") "
tap_finish "explain, an empty settings file: a credential store stays hidden, by the builtin layer"

fresh_case
echo '{}' >"$proj/.claude/settings.json"
account_home=$(getent passwd "$(id -u)" | cut -d: -f6)
[[ -n $account_home && $account_home != "$home" ]] || fail_because "the account has no home of its own to test with"
sbx_run explain --root "$proj" "${managed[@]}" "$account_home/.ssh/id_test"
want_status 0
want_line "^  read: denied  hidden by credential store $(lit "$account_home/.ssh") "
tap_finish "explain, HOME elsewhere: the account's own home keeps its stores hidden"

fresh_case
mkdir -p "$home/.claude" "$home/.ssh"
echo '{"sandbox": {"filesystem": {"allowRead": ["~/.ssh/config", "~"]}}}' >"$home/.claude/settings.json"
sbx_run explain --root "$proj" "${managed[@]}" "$home/.ssh/config"
want_status 0
want_line "^  read: allowed  re-opened by filesystem\.allowRead $(lit "$home/.ssh/config") .*, in credential store $(lit "$home/.ssh") .*: an allowRead that names a credential store lifts its built-in denial\$"
sbx_run explain --root "$proj" "${managed[@]}" "$home/.ssh/id_test"
want_line "^  read: denied  hidden by credential store $(lit "$home/.ssh") "
tap_finish "explain: an allowRead naming a path in a store lifts it there; a broad one does not"

# --- sbx plan -----------------------------------------------------------------------
fresh_case
echo '{"sandbox": {"enabled": true, "filesystem": {"denyRead": ["secrets"], "denyWrite": ["Makefile"]}}}' \
    >"$proj/.claude/settings.json"
make_repo "$proj"
mkdir -p "$proj/secrets"
echo 'all:' >"$proj/Makefile"
sbx_run plan --root "$proj" "${managed[@]}" -- true
want_status 0
[[ $out == '{"version":1,'* ]] || fail_because 'the output does not start with {"version":1,'
[[ $(grep -c '' "$tmp/out") == 1 ]] || fail_because "the JSON is not one line"
want_out "\"command\":{\"argv\":[\"true\"],\"cwd\":\"$proj\",\"env\":{"
want_out "\"root\":\"$proj\",\"tmpdir\":\"$tmpd/sbx-"
want_out '"filesystem":{"isolated":true,"mounts":[{"kind":"'
want_out "{\"kind\":\"bind\",\"path\":\"$proj\",\"source\":\"$proj\",\"expect\":{\"exists\":true,\"type\":\"directory\","
want_out "{\"kind\":\"pin\",\"path\":\"$proj/.git\",\"expect\":{\"exists\":true,\"type\":\"directory\","
want_out "{\"kind\":\"mask-dir\",\"path\":\"$proj/secrets\",\"expect\":{\"exists\":true,"
want_out "{\"kind\":\"ro-bind\",\"path\":\"$proj/Makefile\",\"source\":\"$proj/Makefile\","
want_out "{\"kind\":\"ro-bind\",\"path\":\"$proj/.git/hooks\","
want_out "\"placeholders\":[{\"path\":\"$proj/"
want_out "{\"path\":\"$proj/.vscode\",\"kind\":\"directory\",\"parent\":{\"exists\":true,\"type\":\"directory\","
want_out "\"neutralise\":[{\"path\":\"$proj/.bash_login\",\"why\":\"bash login start-up file, read without .bash_profile\"},"
want_out "{\"path\":\"$proj/.git/commondir\",\"kind\":\"commondir\","
want_out "{\"path\":\"$proj/.git/config.worktree\",\"kind\":\"file\","
want_no_out "removeIfCreated"
want_out '"warnings":['
# The mounts in the project in the documented order: writable binds, pins, masks,
# then binds again (re-opened paths) and read-only binds. (Mounts go shallow before
# deep, so a mask over a credential store of the account's own home, such as
# /root/.npmrc, comes before them all, and the pin of .git/info, which holds the
# protected info/attributes, comes after the read-only binds one level up.)
kinds=$(grep -oE '\{"kind":"[a-z-]+","path":"[^"]*"' "$tmp/out" | grep -F "\"path\":\"$proj" |
    sed 's/{"kind":"//; s/","path".*//' | tr '\n' ' ' || true)
[[ $kinds =~ ^(bind\ )+(pin\ )+(mask-dir\ |mask-file\ )+((bind|ro-bind)\ )+pin\ ((bind|ro-bind)\ )+$ ]] ||
    fail_because "the mounts are out of order: $kinds"
tap_finish "plan: version 1, the root bound, .git pinned, a mask, read-only binds, placeholders, in order"

fresh_case
sbx_run plan --root "$proj" "${managed[@]}"
want_error 64 '^sbx: USAGE: .*command'
tap_finish "plan without a command: exit 64, saying the command is missing"

fresh_case
echo '{"sandbox": {"enabled": true, "filesystem": {"denyRead": [".token"]}}}' >"$proj/.claude/settings.json"
echo 'secret' >"$proj/.token"
ln "$proj/.token" "$proj/token-copy"
sbx_run plan --root "$proj" "${managed[@]}" -- true
want_error 65 "^sbx: INVALID_PLAN: $(lit "$proj/.token"): .*2 hard links"
tap_finish "plan, a hidden file with a second hard link: exit 65, naming the file"

fresh_case
mkdir -p "$home/.cache/s"
echo '{"answers": [{"host": "pypi.org", "port": 443, "answer": "allow"}]}' >"$home/.cache/s/ok.json"
sbx_run plan --root "$proj" "${managed[@]}" --answers "$home/.cache/s/ok.json" -- true
want_status 0
[[ $out == *'"answers":[{"host":"pypi.org","port":443,"answer":"allow"}]'* ]] || fail_because "the plan holds no answers: $out"
sbx_run plan --root "$proj" "${managed[@]}" --answers "$home/.cache/s/missing.json" -- true
want_status 0
[[ $out != *'"answers"'* ]] || fail_because "a missing file gave answers"
echo '{"answers": [{"host": "pypi.org", "answer": "maybe"}]}' >"$home/.cache/s/bad.json"
sbx_run plan --root "$proj" "${managed[@]}" --answers "$home/.cache/s/bad.json" -- true
want_error 65 "^sbx: INVALID_SETTINGS: $(lit "$home/.cache/s/bad.json"): answers\[0\]\.answer: 'maybe' is not an answer"
echo '{"answers": []}' >"$proj/answers.json"
sbx_run plan --root "$proj" "${managed[@]}" --answers "$proj/answers.json" -- true
want_error 64 "^sbx: INVALID_ARGUMENT: $(lit "$proj/answers.json"): --answers: the command could write"
tap_finish "plan --answers: the file's answers in network.answers; none when missing; 65 naming the key; 64 where the command writes"
sbx_run explain --root "$proj" "${managed[@]}" --answers "$home/.cache/s/ok.json" --host pypi.org
want_status 0
[[ $out == *"allowed by an answer held for the session (port 443)"* ]] || fail_because "explain does not name the answer: $out"
sbx_run explain --root "$proj" "${managed[@]}" --answers "$home/.cache/s/ok.json" --host pypi.org:80 --json
[[ $out == *'"step":"sandbox-decider"'* ]] || fail_because "an answer for port 443 decided port 80: $out"
tap_finish "explain --host --answers: an answer held for the session decides its host and port, and says so"

fresh_case
echo '{"sandbox": {"enabled": true, "excludedCommands": ["docker *"]}}' >"$proj/.claude/settings.json"
sbx_run plan --root "$proj" "${managed[@]}" -- docker ps
want_status 0
[[ $out == *'"key":"sandbox.excludedCommands[0]","message":"docker ps runs outside the sandbox by the settings'*'sbx run refuses it unless --unsandboxed; this plan confines it"'* ]] ||
    fail_because "no warning for the excluded command: $out"
printf -- '---\nname: t\nskills:\n  - shell: {blocked_commands: [nc]}\n---\n' >"$proj/AGENT.md"
sbx_run plan --root "$proj" "${managed[@]}" --agent-file "$proj/AGENT.md" -- nc -l 8080
want_error 64 "^sbx: INVALID_ARGUMENT: nc -l 8080 is refused: the agent file's shell skill blocks nc, confined or not"
tap_finish "plan: a command excludedCommands sends outside gets a warning naming the pattern; one the shell skill blocks is refused (64)"

fresh_case
echo '{"sandbox": {"network": {"allowedDomains": ["*.github.com"], "deniedDomains": ["evil.github.com"]}}}' \
    >"$proj/.claude/settings.json"
sbx_run explain --root "$proj" "${managed[@]}" --host api.github.com
want_status 0
want_line "^api\.github\.com:443$"
want_line "^  network: allowed  allowed by network\.allowedDomains \*\.github\.com \[project $(lit "$proj/.claude/settings.json") sandbox\.network\.allowedDomains\[0\]\]$"
# Allowed names are resolved here, as the proxy would (whether this machine can
# resolve them or not: the attacks' network table has names that resolve).
[[ $out == *"  resolves to: "* || $out == *"  resolves: not here (api.github.com does not resolve"* ]] ||
    fail_because "explain neither resolved api.github.com nor said it does not resolve"
want_out "  final: "
sbx_run explain --root "$proj" "${managed[@]}" --host evil.github.com:80 --json
want_out '"host":"evil.github.com","port":80,"verdict":"deny","step":"denied-list"'
want_out '"entry":"evil.github.com"'
want_out '"reach":"nothing","resolvedLater":false,"addresses":[],"resolveError":null,"dials":null,"finalVerdict":"deny"'
sbx_run explain --root "$proj" "${managed[@]}" --host 2852039166:80 --allow-host '*'
want_line "^169\.254\.169\.254:80$"
want_out "network: refused  a metadata address is reached only through a pattern that names the address (the call's hosts * does not)"
want_out "  final: refused"
sbx_run explain --root "$proj" "${managed[@]}" --host example.com --on-unknown-host deny
want_out "network: refused  not on the allow list; refused by the sandbox's onUnknownHost"
tap_finish "explain --host: the proxy's decision for a host and port, the rule and settings entry behind it"

# explain --socket: the entry that opens a Unix socket, through a link; the
# refusal of another with the setting that would open it; and its JSON.
mkdir -p "$tmp/socks"
ln -s "$tmp/socks" "$tmp/socks-link"
printf '{"sandbox": {"network": {"allowUnixSockets": ["%s"]}}}' "$tmp/socks/agent.sock" >"$tmp/sockets.json"
sbx_run explain --root "$proj" "${managed[@]}" --settings "$tmp/sockets.json" --socket "$tmp/socks-link/agent.sock"
want_line "^$(lit "$tmp/socks-link/agent.sock") \(leads to $(lit "$tmp/socks/agent.sock")\)\$"
want_out "connect: allowed  allowed by network.allowUnixSockets $tmp/socks/agent.sock [flag $tmp/sockets.json sandbox.network.allowUnixSockets[0]]"
want_out "dials: $tmp/socks/agent.sock"
sbx_run explain --root "$proj" "${managed[@]}" --settings "$tmp/sockets.json" --socket /run/docker.sock --json
want_out '"socket":"/run/docker.sock","realPath":"/run/docker.sock","verdict":"deny","dials":null,"reported":true'
want_out '"why":"not among the Unix sockets open to the command; to allow it: network.allowUnixSockets naming the path'
sbx_run explain --root "$proj" "${managed[@]}" --socket /run/x.sock --host example.com
[[ $rc == 64 ]] || fail_because "--socket with --host: status $rc, not 64"
tap_finish "explain --socket: the entry that opens a Unix socket (through a link), or the refusal and the setting that would open it"

fresh_case
sbx_run explain --root "$proj" "${managed[@]}" --host 'https://x.com'
want_error 64 "^sbx: INVALID_ARGUMENT: --host takes a host name or address"
sbx_run explain --root "$proj" "${managed[@]}"
want_error 64 "^sbx: USAGE: explain needs a path, --host HOST\[:PORT\] or --socket"
tap_finish "explain --host with a URL, or with nothing to explain: exit 64"

fresh_case
sbx_run plan --root / "${managed[@]}" -- true
want_error 64 'the root may not be /'
tap_finish "plan --root /: refused with exit 64, saying the root may not be /"

# --- descriptors: --pass-fd ----------------------------------------------------------
fresh_case
sbx_run plan --root "$proj" "${managed[@]}" --pass-fd 7 -- true 7</dev/null
want_status 0
want_out '"envRemoved":['
want_out '"passFds":[7]},"root":'
sbx_run plan --root "$proj" "${managed[@]}" -- true 7</dev/null
want_status 0
want_no_out '"passFds"'
tap_finish "plan --pass-fd 7, with 7 open: command.passFds is [7]; without the option, no passFds"

fresh_case
sbx_run plan --root "$proj" "${managed[@]}" --pass-fd 7 --pass-fd 7 -- true 7</dev/null
want_status 0
want_out '"passFds":[7]}'
sbx_run plan --root "$proj" "${managed[@]}" --pass-fd 9 --pass-fd 7 --pass-fd 9 -- true 7</dev/null 9</dev/null
want_status 0
want_out '"passFds":[7,9]}'
tap_finish "plan --pass-fd repeated: each descriptor once, in ascending order"

fresh_case
sbx_run plan --root "$proj" "${managed[@]}" --pass-fd 8 -- true 8<&-
want_error 64 '^sbx: INVALID_ARGUMENT: --pass-fd 8: descriptor 8 is not open$'
sbx_run plan --root "$proj" "${managed[@]}" --pass-fd 7 --pass-fd 8 -- true 7</dev/null 8<&-
want_error 64 '^sbx: INVALID_ARGUMENT: --pass-fd 8: descriptor 8 is not open$'
tap_finish "plan --pass-fd 8, with 8 closed: exit 64, naming descriptor 8"

fresh_case
for fd in 2 0 -1 99999999999; do
    sbx_run plan --root "$proj" "${managed[@]}" --pass-fd "$fd" -- true
    want_error 64 "^sbx: INVALID_ARGUMENT: --pass-fd $(lit "$fd"): out of range; give a descriptor from 3 to 2147483647 \(0, 1 and 2 always reach the command\)$"
done
for fd in x 7x '' +7 0x7; do
    sbx_run plan --root "$proj" "${managed[@]}" --pass-fd "$fd" -- true 7</dev/null
    want_error 64 "^sbx: INVALID_ARGUMENT: --pass-fd $(lit "$fd"): not a descriptor number; give an integer from 3 to 2147483647$"
done
tap_finish "plan --pass-fd 2, -1, 99999999999 and x: exit 64, naming the option and the value"

# sbx run with a stand-in for the launcher, which says what it was given: the
# descriptor reaches it open, the plan it reads names it, and the plan comes on
# another descriptor.
fresh_case
cat >"$case_dir/launcher" <<'SH'
#!/bin/sh
[ "$1" = --plan-fd ] || { echo "no --plan-fd" >&2; exit 99; }
if { : <&7; } 2>/dev/null; then echo "descriptor 7 is open"; else echo "descriptor 7 is closed"; fi
[ "$2" != 7 ] && echo "the plan is on another descriptor"
cat <&"$2"
SH
chmod +x "$case_dir/launcher"
sbx_run run --root "$proj" "${managed[@]}" --launcher "$case_dir/launcher" --pass-fd 7 -- true 7</dev/null
want_status 0
want_line '^descriptor 7 is open$'
want_line '^the plan is on another descriptor$'
want_out '"passFds":[7]}'
sbx_run run --root "$proj" "${managed[@]}" --launcher "$case_dir/launcher" --pass-fd x -- true
want_error 125 '^sbx: INVALID_ARGUMENT: --pass-fd x: not a descriptor number'
sbx_run run --root "$proj" "${managed[@]}" --launcher "$case_dir/launcher" --pass-fd 8 -- true 8<&-
want_error 125 '^sbx: INVALID_ARGUMENT: --pass-fd 8: descriptor 8 is not open$'
tap_finish "run --pass-fd 7: the launcher gets 7 open and a plan naming it; a bad one is refused with 125"

# --- the weaker sandbox: asked for in so many words, and only by those who may -------
weaker_left_out='"key":"sandbox.enableWeakerNestedSandbox","message":"only user, managed or --settings settings, or sbx run --weaker-sandbox, can turn on the weaker sandbox; left out"'

fresh_case
sbx_run plan --root "$proj" "${managed[@]}" -- true
want_status 0
want_no_out '"weakerSandbox"'
sbx_run plan --root "$proj" "${managed[@]}" --weaker-sandbox -- true
want_status 0
want_out '"failIfUnavailable":true,"weakerSandbox":true,'
tap_finish "plan: no weakerSandbox unless asked; --weaker-sandbox writes \"weakerSandbox\":true"

fresh_case
echo '{"sandbox": {"enabled": true, "enableWeakerNestedSandbox": true}}' >"$proj/.claude/settings.json"
echo '{"sandbox": {"enableWeakerNestedSandbox": true}}' >"$proj/.claude/settings.local.json"
sbx_run plan --root "$proj" "${managed[@]}" -- true
want_status 0
want_no_out '"weakerSandbox"'
want_out "{\"file\":\"$proj/.claude/settings.json\",$weaker_left_out}"
want_out "{\"file\":\"$proj/.claude/settings.local.json\",$weaker_left_out}"
# The command line still may.
sbx_run plan --root "$proj" "${managed[@]}" --weaker-sandbox -- true
want_status 0
want_out '"weakerSandbox":true'
want_out "{\"file\":\"$proj/.claude/settings.json\",$weaker_left_out}"
tap_finish "plan: the project's and local file's true of enableWeakerNestedSandbox is left out with a warning; --weaker-sandbox still counts"

fresh_case
mkdir -p "$home/.claude"
echo '{"sandbox": {"enableWeakerNestedSandbox": true}}' >"$home/.claude/settings.json"
sbx_run plan --root "$proj" "${managed[@]}" -- true
want_status 0
want_out '"weakerSandbox":true'
echo '{"sandbox": {"enableWeakerNestedSandbox": false}}' >"$home/.claude/settings.json"
echo '{"sandbox": {"enableWeakerNestedSandbox": true}}' >"$case_dir/flag.json"
sbx_run plan --root "$proj" "${managed[@]}" --settings "$case_dir/flag.json" -- true
want_status 0
want_out '"weakerSandbox":true'
tap_finish "plan: a user's or a --settings file's true of enableWeakerNestedSandbox turns it on"

fresh_case
mkdir -p "$home/.claude"
echo '{"sandbox": {"enableWeakerNestedSandbox": true}}' >"$home/.claude/settings.json"
echo '{"sandbox": {"enableWeakerNestedSandbox": false}}' >"$case_dir/managed.json"
sbx_run plan --root "$proj" --managed-settings "$case_dir/managed.json" --weaker-sandbox -- true
want_status 0
want_no_out '"weakerSandbox"'
want_out "{\"file\":\"(command line)\",\"key\":\"--weaker-sandbox\",\"message\":\"left out: managed settings keep the weaker sandbox off (sandbox.enableWeakerNestedSandbox in $case_dir/managed.json)\"}"
tap_finish "plan: a managed false of enableWeakerNestedSandbox holds against the user's true and --weaker-sandbox, with a warning"

fresh_case
echo '{"sandbox": {"enableWeakerNestedSandbox": "yes"}}' >"$proj/.claude/settings.json"
sbx_run plan --root "$proj" "${managed[@]}" -- true
want_error 65 "^sbx: INVALID_SETTINGS: $(lit "$proj/.claude/settings.json"): sandbox\.enableWeakerNestedSandbox: expected a boolean"
tap_finish "plan: a string for enableWeakerNestedSandbox: exit 65, naming the file and the key"

fresh_case
printf '#!/bin/sh\ncat <&"$2"\n' >"$case_dir/launcher"
chmod +x "$case_dir/launcher"
sbx_run run --root "$proj" "${managed[@]}" --launcher "$case_dir/launcher" --weaker-sandbox -- true
want_status 0
want_out '"weakerSandbox":true'
sbx_run run --root "$proj" "${managed[@]}" --launcher "$case_dir/launcher" -- true
want_status 0
want_no_out '"weakerSandbox"'
tap_finish "run --weaker-sandbox: the launcher's plan says weakerSandbox true; without it, nothing"

# sbx plan prints the plan sbx run makes: the same decider for hosts no list
# decides (ask) and the same reading of standard error (not a terminal here),
# with the tmpdir, which is new each time, set aside.
fresh_case
echo '{"sandbox": {"network": {"allowedDomains": ["example.com"]}}}' >"$proj/.claude/settings.json"
printf '#!/bin/sh\ncat <&"$2"\n' >"$case_dir/launcher"
chmod +x "$case_dir/launcher"
sbx_run plan --root "$proj" "${managed[@]}" -- true
want_status 0
want_out '"onUnknownHost":"ask"'
planned=$(sed -E 's/sbx-[0-9a-f]{16}/sbx-TMP/g' <<<"$out")
sbx_run run --root "$proj" "${managed[@]}" --launcher "$case_dir/launcher" -- true
want_status 0
ran=$(sed -E 's/sbx-[0-9a-f]{16}/sbx-TMP/g' <<<"$out")
[[ $planned == "$ran" ]] || fail_because "sbx plan and sbx run made different plans: $(diff <(tr ',' '\n' <<<"$planned") <(tr ',' '\n' <<<"$ran") | head -5)"
tap_finish "plan prints the plan run carries out: onUnknownHost ask, the same document"

tap_end
