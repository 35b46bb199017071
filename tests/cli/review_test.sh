#!/usr/bin/env bash
# TAP: policy checks in review (issue 19).
#   sbx check: a check file with each kind of expectation, holding and not, as
#   TAP and as JSON; every exit status (0, 1, 64, 65, 66); malformed files named
#   by file, line and key; command lines routed (approval, where, mode).
#   sbx route: a line's route as text and JSON, from the command line, a
#   request file and standard input; removal through a link to home; refusals.
#   sbx diff: two commits of a real git repository (a host added, a denyRead
#   removed, a denyWrite added), read with git, not checked out; the work tree's
#   own change; agent files of the repository added and widened; --fail-on-widening
#   both ways; two files compared directly; every
#   refusal with its status.
#   check and run agree: what `sbx check` calls refused is refused inside
#   `sbx run` and what it calls allowed works there (a credential store, a denied
#   folder, a git hook, a source file, a server on loopback), as the current user
#   and, as root with SBX_TEST_USER set, as that user too; the control is the
#   same action outside the sandbox, which works.
#   route and run agree: a command an excludedCommands pattern sends outside is
#   refused by sbx run (125) and not run; with --unsandboxed it runs unconfined
#   (it writes the home directory, which confined it cannot), said before and
#   after, its TERM trap runs and its status is sbx's; as both users.
# Needs bash, coreutils, git, python3 and curl; the agreement cases need real
# bubblewrap.
# Usage: review_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX
set -euo pipefail

[[ -n ${2:-} ]] || { echo "usage: review_test.sh SBX SBX-LINUX" >&2; exit 64; }
source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch  # by its physical path: sbx prints paths with their symlinks resolved
server_pid=
tap_on_exit '[[ -z $server_pid ]] || kill "$server_pid" 2>/dev/null'

# The binaries may sit where the test user cannot read (a clone under /root).
tap_readable_copies "$tmp/bin" "$1" "$2"
sbx=$tmp/bin/sbx
launcher=$tmp/bin/sbx-linux

for tool in git python3 curl; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "1..0 # SKIP $tool is not installed"
        exit 0
    fi
done

# The cases before the agreement ones run as the current user in one project.
work=$tmp/review
home=$work/home
proj=$work/project
mkdir -p "$home" "$proj/src" "$proj/secrets"

# sbx_in DIR ARGS...: `sbx ARGS` in DIR with the case's HOME and the empty
# managed settings after the subcommand; sets $rc, $out and $err.
sbx_in() {
    local dir=$1 sub=$2
    shift 2
    rc=0
    (cd "$dir" && HOME=$home timeout 60 "$sbx" "$sub" --managed-settings "$tmp/empty-managed.json" "$@") \
        </dev/null >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
}
# want_error STATUS TEXT: that status, nothing on stdout, and one line on stderr holding TEXT.
want_error() {
    want_status "$1"
    [[ -z $out ]] || fail_because "stdout is not empty"
    [[ $(grep -c '' <<<"$err") == 1 ]] || fail_because "stderr is not exactly one line"
    grep -qF -- "$2" <<<"$err" || fail_because "stderr does not hold: $2"
}
# want_json PYTHON: the expression holds of the JSON on stdout (bound to d).
want_json() {
    python3 -c 'import json, sys
d = json.loads(sys.stdin.read())
sys.exit(0 if eval(sys.argv[1]) else 1)' "$1" <<<"$out" 2>/dev/null || fail_because "the JSON does not satisfy: $1"
}
git_in() { git -C "$proj" -c user.email=review@sbx.test -c user.name=review "$@" >/dev/null; }

# --- sbx check ------------------------------------------------------------------------
git init -q "$proj"
mkdir -p "$proj/.claude"
cat >"$proj/.claude/settings.json" <<'EOF'
{"sandbox": {"filesystem": {"denyRead": ["secrets"]},
             "network": {"allowedDomains": ["github.com"], "deniedDomains": ["bad.example"]}}}
EOF
cat >"$work/holds.json" <<'EOF'
{"expect": [
  {"read": "~/.aws/credentials", "allowed": false, "why": "cloud keys stay out"},
  {"read": "secrets/key", "allowed": false},
  {"write": ".git/hooks/pre-commit", "allowed": false},
  {"write": "src/main.c", "allowed": true},
  {"read": "src/main.c", "allowed": true},
  {"host": "github.com:443", "verdict": "allow"},
  {"host": "bad.example", "verdict": "deny"},
  {"host": "169.254.169.254:80", "verdict": "deny"},
  {"host": "unlisted.example", "verdict": "ask"}
]}
EOF
sbx_in "$proj" check "$work/holds.json"
want_status 0
want_out "1..9"
[[ $(grep -c '^ok ' <<<"$out") == 9 ]] || fail_because "not nine ok lines"
want_line '^ok 1 - read ~/\.aws/credentials: denied$'
want_out "credential store $home/.aws"
want_line '^ok 2 - read secrets/key: denied$'
want_out "filesystem.denyRead $proj/secrets [project $proj/.claude/settings.json sandbox.filesystem.denyRead[0]]"
want_line '^ok 3 - write \.git/hooks/pre-commit: denied$'
want_out "protected: protected path $proj/.git/hooks"
want_line '^ok 4 - write src/main\.c: allowed$'
want_line '^ok 6 - host github\.com:443: allow$'
want_out "allowed by network.allowedDomains github.com [project $proj/.claude/settings.json sandbox.network.allowedDomains[0]]"
want_line '^ok 7 - host bad\.example: deny$'
want_out "denied by network.deniedDomains bad.example"
want_line '^ok 8 - host 169\.254\.169\.254:80: deny$'
want_line '^ok 9 - host unlisted\.example: ask$'
want_out "# all 9 expectations hold"
tap_finish "check: every kind of expectation holds, each line naming the rule behind the decision (exit 0)"

cat >"$work/fails.json" <<'EOF'
{"expect": [
  {"read": "secrets/key", "allowed": true, "why": "the build reads it"},
  {"write": "src/main.c", "allowed": true},
  {"host": "github.com", "verdict": "deny"},
  {"write": ".git/hooks/pre-commit", "allowed": true}
]}
EOF
sbx_in "$proj" check "$work/fails.json"
want_status 1
want_out "1..4"
want_line '^not ok 1 - read secrets/key: expected allowed, got denied$'
want_out "#   expected because: the build reads it"
want_out "#   at $work/fails.json:2 (expect[0])"
want_line '^ok 2 - write src/main\.c: allowed$'
want_line '^not ok 3 - host github\.com: expected deny, got allow$'
want_out "#   at $work/fails.json:4 (expect[2])"
want_line '^not ok 4 - write \.git/hooks/pre-commit: expected allowed, got denied$'
want_out "# 3 of 4 expectations do not hold"
tap_finish "check: expectations that do not hold are 'not ok' with the decision, the file's reason and the line (exit 1)"

sbx_in "$proj" check --json "$work/fails.json"
want_status 1
want_json 'd["expectations"] == 4 and d["failed"] == 3 and d["file"].endswith("/fails.json")'
want_json '[r["holds"] for r in d["results"]] == [False, True, False, False]'
want_json 'd["results"][0]["decision"]["rule"]["source"]["key"] == "sandbox.filesystem.denyRead[0]"'
want_json 'd["results"][0]["why"] == "the build reads it" and d["results"][0]["line"] == 2'
want_json 'd["results"][2]["decision"]["verdict"] == "allow" and d["results"][2]["expected"] == "deny"'
want_json 'd["results"][2]["port"] == 443 and d["results"][2]["decision"]["step"] == "allowed-list"'
want_json 'd["warnings"] == []'
tap_finish "check --json: the same results as one document, each with its rule (exit 1)"

printf '{"expect": [\n  {"read": "a", "allowed": false},\n  {"read": "b", "allowed": "no"}\n]}\n' >"$work/bad-type.json"
sbx_in "$proj" check "$work/bad-type.json"
want_error 65 "$work/bad-type.json:3:28: expect[1].allowed: expected a boolean (true or false), got a string"
tap_finish "check: a value of the wrong type is refused naming the file, line and key (exit 65)"

printf '{"expect": [\n  {"read": "a", "allowed": false},\n]}\n' >"$work/bad-json.json"
sbx_in "$proj" check "$work/bad-json.json"
want_error 65 "$work/bad-json.json:3:1: invalid JSON: trailing comma before ']'"
tap_finish "check: malformed JSON is refused naming the line and column (exit 65)"

for text in '{"expect": [{"read": "a", "write": "b", "allowed": true}]}' \
    '{"expect": [{"host": "https://github.com", "verdict": "allow"}]}' \
    '{"expect": [{"read": "a", "allowed": true, "colour": "red"}]}' \
    '{"expect": []}' '{"expect": [{"host": "a", "verdict": "maybe"}]}'; do
    printf '%s\n' "$text" >"$work/bad.json"
    sbx_in "$proj" check "$work/bad.json"
    want_error 65 "$work/bad.json:1:"
done
tap_finish "check: two subjects, a URL for a host, an unknown key, an empty list and an unknown verdict are each refused (exit 65)"

echo '{"sandbox": {"filesystem": {"denyReed": ["src"]}}}' >"$work/typo.json"
sbx_in "$proj" check --settings "$work/typo.json" "$work/holds.json"
want_status 0
want_line "^# warning: $work/typo.json: sandbox\.filesystem\.denyReed: unknown key; did you mean 'denyRead'"
tap_finish "check: what the settings left out is said before the results"

sbx_in "$proj" check "$work/missing.json"
want_error 66 "$work/missing.json: no such file"
tap_finish "check: a check file that is not there (exit 66)"

sbx_in "$proj" check
want_error 64 "USAGE"
sbx_in "$proj" check "$work/holds.json" "$work/fails.json"
want_error 64 "USAGE"
sbx_in "$proj" check --frobnicate "$work/holds.json"
want_error 64 "USAGE"
tap_finish "check: no file, two files or an unknown option is a wrong command line (exit 64)"

echo '{"sandbox": {"network": {"allowedDomains": [1]}}}' >"$work/bad-settings.json"
sbx_in "$proj" check --settings "$work/bad-settings.json" "$work/holds.json"
want_error 65 "sandbox.network.allowedDomains[0]"
tap_finish "check: invalid settings are refused as sbx run refuses them (exit 65)"

# A command expectation routes the line as a host would: where it runs and how it is approved.
routed=$work/routed
mkdir -p "$routed/.claude"
git init -q "$routed"
cat >"$routed/.claude/settings.json" <<'EOF'
{"sandbox": {"enabled": true, "excludedCommands": ["docker *"]},
 "permissions": {"ask": ["Bash(git push *)"], "deny": ["Bash(curl:*)"]}}
EOF
cat >"$work/routes.json" <<'EOF'
{"expect": [
  {"command": "git push origin main", "approval": "ask"},
  {"command": "npm test", "approval": "auto", "where": "inside"},
  {"command": "docker ps", "where": "excluded", "approval": "normal"},
  {"command": "rm -rf ~", "approval": "deny", "mode": "dontAsk"},
  {"command": "curl https://example.com", "approval": "ask", "why": "curl is asked about"},
  {"command": "npm test", "where": "outside"}
]}
EOF
sbx_in "$routed" check "$work/routes.json"
want_status 1
want_out "1..6"
want_line '^ok 1 - command git push origin main: ask$'
want_out "an ask rule matches [Bash(git push *), project $routed/.claude/settings.json permissions.ask[0]]"
want_line '^ok 2 - command npm test: auto inside$'
want_line '^ok 3 - command docker ps: normal excluded$'
want_out "an excludedCommands pattern matches docker ps [docker *, project $routed/.claude/settings.json sandbox.excludedCommands[0]]"
want_line '^ok 4 - command rm -rf ~: deny$'
want_out "rm ~ removes the home directory: a person decides, in every mode; dontAsk refuses what would ask"
want_line '^not ok 5 - command curl https://example\.com: expected ask, got deny$'
want_out "#   expected because: curl is asked about"
want_out "a deny rule matches [Bash(curl:*), project $routed/.claude/settings.json permissions.deny[0]]"
want_line '^not ok 6 - command npm test: expected outside, got inside$'
want_out "# 2 of 6 expectations do not hold"
sbx_in "$routed" check --json "$work/routes.json"
want_status 1
want_json 'd["failed"] == 2 and d["results"][2]["decision"]["where"] == "excluded"'
want_json 'd["results"][0]["decision"]["approvalBecause"]["source"]["key"] == "permissions.ask[0]"'
want_json 'd["results"][3]["decision"]["mode"] == "dontAsk" and d["results"][3]["decision"]["approval"] == "deny"'
want_json 'd["results"][1]["expected"] == {"approval": "auto", "where": "inside"}'
tap_finish "check: command expectations are routed (ask rule, auto inside, excluded, dontAsk, deny), each naming its rule (exit 1)"

for text in '{"expect": [{"command": "ls"}]}' '{"expect": [{"command": "ls", "approval": "maybe"}]}' \
    '{"expect": [{"command": "ls", "where": "somewhere"}]}' \
    '{"expect": [{"command": "ls", "where": "inside", "mode": "yolo"}]}' \
    '{"expect": [{"command": "ls", "allowed": true}]}' \
    '{"expect": [{"read": "a", "allowed": true, "approval": "ask"}]}'; do
    printf '%s\n' "$text" >"$work/bad.json"
    sbx_in "$routed" check "$work/bad.json"
    want_error 65 "$work/bad.json:1:"
done
tap_finish "check: a command with nothing expected, an unknown approval, where or mode, and a route on a path are each refused (exit 65)"

# --- sbx route ------------------------------------------------------------------------
sbx_in "$routed" route 'git push origin main'
want_status 0
want_line '^git push origin main$'
want_line '^  where: inside  the sandbox is enabled, and nothing takes the command out'
want_out "  approval: ask  an ask rule matches [Bash(git push *), project $routed/.claude/settings.json permissions.ask[0]]"
want_line '^  mode: default  neither the call nor the settings name a mode$'
want_line "^  root $routed: the top of the git work tree"
sbx_in "$routed" route --json 'docker ps'
want_status 0
want_json 'd["command"] == "docker ps" and d["route"]["where"] == "excluded" and not d["route"]["inside"]'
want_json 'd["route"]["whereBecause"]["source"]["key"] == "sandbox.excludedCommands[0]" and d["root"] == "'"$routed"'"'
want_json 'd["route"]["approval"] == "normal" and d["warnings"] == []'
tap_finish "route: an ask rule asks, an excluded command runs outside, each naming its rule and layer (exit 0)"

# A link in the project that leads to the home directory: removing through it asks a person.
ln -s "$home" "$routed/home-link"
sbx_in "$routed" route 'rm -rf home-link/'
want_status 0
want_out "  approval: ask (a person)  rm $routed/home-link removes the home directory (through a link: $home)"
sbx_in "$routed" route 'rm -rf home-link'
want_line '^  approval: auto  '
rm "$routed/home-link"
sbx_in "$routed" route --mode dontAsk 'FOO=1 npm test'
want_line '^  approval: deny  '
want_line '^  note: hidden code: a variable in front \(FOO\)$'
# Words, as sbx run takes them, are quoted into one line: sh's code stays one word.
sbx_in "$routed" route sh -c 'rm -rf ~'
want_line "^sh -c 'rm -rf ~'\$"
want_line '^  approval: ask \(a person\)  rm ~ removes the home directory'
sbx_in "$routed" route -- git push "origin" 'it'"'"'s'
[[ $(head -n 1 <<<"$out") == "git push origin 'it'\\''s'" ]] || fail_because "the words are not quoted into one line"
want_line '^  approval: ask  an ask rule matches'
tap_finish "route: a removal through a link to home asks a person (the link itself not); a variable in front is not auto; words are quoted into one line"

printf '%s\n' '{"command": "docker ps", "mode": "acceptEdits",' \
    ' "permissions": {"allow": ["Bash(docker ps)"]}}' >"$work/call.json"
sbx_in "$routed" route --request-json "$work/call.json"
want_status 0
want_line '^  mode: acceptEdits  the mode the call names'
want_out "  approval: allow  an allow rule matches the command [Bash(docker ps), flag $work/call.json permissions.allow[0]]"
rc=0
(cd "$routed" && HOME=$home timeout 60 "$sbx" route --managed-settings "$tmp/empty-managed.json" --request-json - --json \
    <<<'{"command": "npm test", "allowedDomains": ["registry.npmjs.org"]}' >"$work/out" 2>"$work/err") || rc=$?
out=$(<"$work/out")
want_status 0
want_json 'd["route"]["approval"] == "ask" and "registry.npmjs.org" in d["route"]["approvalBecause"]["why"]'
tap_finish "route --request: a call from a file with the session's rules (flag layer), and from standard input"

sbx_in "$routed" route
want_error 64 "no command line"
sbx_in "$routed" route --request-json "$work/call.json" 'ls'
want_error 64 "the line is given twice"
sbx_in "$routed" route --mode yolo 'ls'
want_error 64 "USAGE"
sbx_in "$routed" route --request-json "$work/call.json" --mode plan 'ls'
want_error 64 "USAGE"
echo '{"command": "ls", "mod": "plan"}' >"$work/bad-call.json"
sbx_in "$routed" route --request-json "$work/bad-call.json"
want_error 65 "$work/bad-call.json:1:26: mod: unknown key"
echo '{"command": "ls", "permissions": {"deny": ["Bash(rm"]}}' >"$work/bad-call.json"
sbx_in "$routed" route --request-json "$work/bad-call.json"
want_error 65 "permissions.deny[0]"
sbx_in "$routed" route --request-json "$work/no-call.json"
want_error 66 "$work/no-call.json: no such file"
echo '{"permissions": {"disableBypassPermissionsMode": "disable"}}' >"$work/no-bypass.json"
sbx_in "$routed" route --settings "$work/no-bypass.json" --mode bypassPermissions 'ls'
want_error 64 "disableBypassPermissionsMode"
tap_finish "route: no line, a line twice, an unknown mode, a malformed call, a missing file, a disabled mode are each refused"

# --- sbx diff -------------------------------------------------------------------------
git_in add .claude/settings.json
git_in commit -qm "settings: secrets hidden, github.com"
cat >"$proj/.claude/settings.json" <<'EOF'
{"sandbox": {"filesystem": {"denyWrite": ["src/generated"]},
             "network": {"allowedDomains": ["github.com", "evil.example"], "deniedDomains": ["bad.example"]}}}
EOF
git_in commit -qam "settings: evil.example, secrets readable, src/generated read-only"
sbx_in "$proj" diff --base HEAD~1
want_status 0
want_out "sbx diff: the policy at HEAD~1 ("
want_out "widens  added network.allowedDomains evil.example (commands may reach the host)  [project $proj/.claude/settings.json sandbox.network.allowedDomains[1]]"
want_out "widens  removed filesystem.denyRead $proj/secrets (commands may not read there)  [project HEAD~1:.claude/settings.json sandbox.filesystem.denyRead[0]]"
want_out "narrows added filesystem.denyWrite $proj/src/generated"
want_out "evil.example:443 became reachable  (network.allowedDomains evil.example)"
want_out "$proj/secrets became readable"
want_out "was: denied  hidden by filesystem.denyRead $proj/secrets [project HEAD~1:.claude/settings.json sandbox.filesystem.denyRead[0]]"
want_out "$proj/src/generated stopped being writable"
want_out ".claude/settings.local.json: not tracked by git, the work tree's on both sides"
want_line '^[0-9]+ changes widen the sandbox$'
want_no_out "github.com:443"
tap_finish "diff --base: a host added, a denyRead removed and a denyWrite added, in values and in decisions, each side's entry named"

sbx_in "$proj" diff --base HEAD~1 --fail-on-widening
want_status 1
grep -qF "sbx: the change widens the sandbox" <<<"$err" || fail_because "stderr does not say it widens"
tap_finish "diff --fail-on-widening: a change that widens exits 1"

cat >"$proj/.claude/settings.json" <<'EOF'
{"sandbox": {"filesystem": {"denyWrite": ["src/generated", "src/vendor"]},
             "network": {"allowedDomains": ["github.com", "evil.example"], "deniedDomains": ["bad.example", "*.tracker.example"]}}}
EOF
sbx_in "$proj" diff --base HEAD --fail-on-widening
want_status 0
want_out "narrows added filesystem.denyWrite $proj/src/vendor"
want_out "narrows added network.deniedDomains *.tracker.example"
want_out "sbx-sample.tracker.example:443 stopped being reachable"
want_out "nothing became more open"
tap_finish "diff --fail-on-widening: the work tree's own change, which only narrows, exits 0"

sbx_in "$proj" diff --base HEAD~1 --json
want_status 0
want_json 'd["before"]["revision"] == "HEAD~1" and len(d["before"]["commit"]) == 40 and d["after"]["workTree"]'
want_json 'd["sharedFiles"] == [".claude/settings.local.json"]'
want_json 'any(v["name"] == "network.allowedDomains" and v["after"] == "evil.example" and v["direction"] == "widens" and v["afterSource"]["key"] == "sandbox.network.allowedDomains[1]" for v in d["values"])'
want_json 'any(v["name"] == "filesystem.denyRead" and v["what"] == "removed" and v["beforeSource"]["file"] == "HEAD~1:.claude/settings.json" for v in d["values"])'
want_json 'any(c["aspect"] == "read" and c["subject"].endswith("/secrets") and c["before"] == "denied" and c["after"] == "allowed" for c in d["decisions"])'
want_json 'd["widening"] > 0 and d["probes"] > 0'
tap_finish "diff --json: the same as one document"

git_in checkout -q -- .claude/settings.json
sbx_in "$proj" diff --base HEAD --fail-on-widening
want_status 0
want_out "values: no change"
want_out "decisions: no change"
tap_finish "diff --base HEAD of a clean work tree: no change"

proj2=$work/project2
git init -q "$proj2"
git -C "$proj2" -c user.email=review@sbx.test -c user.name=review commit -q --allow-empty -m "no settings"
mkdir -p "$proj2/.claude"
echo '{"sandbox": {"network": {"allowedDomains": ["evil.example"]}}}' >"$proj2/.claude/settings.json"
echo '{"sandbox": {"network": {"allowLocalBinding": true}}}' >"$proj2/.claude/settings.local.json"
sbx_in "$proj2" diff --base HEAD --fail-on-widening
want_status 1
want_out "widens  added network.allowedDomains evil.example"
want_out ".claude/settings.local.json: not tracked by git, the work tree's on both sides"
want_no_out "allowLocalBinding"
git -C "$proj2" add .claude/settings.local.json
sbx_in "$proj2" diff --base HEAD
want_status 0
want_out "widens  changed network.allowLocalBinding false -> true"
want_no_out "not tracked by git"
tap_finish "diff --base: a settings.json not yet added to git is part of the change; settings.local.json only once git tracks it"

# Agent files of the repository: each one whose text changed is compared with
# its layer over each side's settings.
proj3=$work/project3
mkdir -p "$proj3/agents/r"
git init -q "$proj3"
printf -- '---\nname: r\nsandbox:\n  network:\n    hosts: [github]\n---\n' >"$proj3/agents/r/AGENT.md"
git -C "$proj3" add -A
git -C "$proj3" -c user.email=review@sbx.test -c user.name=review commit -qm "an agent"
sbx_in "$proj3" diff --base HEAD --fail-on-widening
want_status 0
want_no_out "agent file"
printf -- '---\nname: r\nsandbox:\n  network:\n    hosts: [github, pypi]\n---\n' >"$proj3/agents/r/AGENT.md"
printf -- '---\nname: n\nsandbox:\n  network:\n    hosts: ["*.example.com"]\n---\n' >"$proj3/AGENT-new.md"
sbx_in "$proj3" diff --base HEAD --fail-on-widening
want_status 1
want_line '^agent file agents/r/AGENT\.md \(changed\): what commands run under it meet$'
want_out "widens  added network.allowedDomains pypi.org (commands may reach the host)  [flag $proj3/agents/r/AGENT.md sandbox.network.hosts[1]]"
want_out "pypi.org:443 became reachable"
want_line '^agent file AGENT-new\.md \(added\): what commands run under it meet$'
want_out "widens  added network.allowedDomains *.example.com"
want_line '^  and [0-9]+ changes that narrow or open nothing'
want_no_out "narrows added filesystem.denyRead"
grep -qF "sbx: the change widens the sandbox" <<<"$err" || fail_because "stderr does not say it widens"
sbx_in "$proj3" diff --base HEAD --json
want_json '[(a["path"], a["change"]) for a in d["agentFiles"]] == [("AGENT-new.md", "added"), ("agents/r/AGENT.md", "changed")]'
want_json 'd["widening"] == sum(a["widening"] for a in d["agentFiles"]) and d["widening"] > 0'
want_json 'any(v["direction"] == "narrows" for v in d["agentFiles"][0]["values"])'
tap_finish "diff --base: an agent file added or widened is a widening, in its own section with its lines"

# sbx check: an expected refusal holds under each agent file of the repository too.
echo '{"sandbox": {"network": {"strictAllowlist": true}}}' >"$work/strict.json"
printf '%s\n' '{"expect": [{"host": "pypi.org", "verdict": "deny"}, {"host": "evil.example", "verdict": "deny"},' \
    ' {"write": "src/x.c", "allowed": true}]}' >"$work/agents-check.json"
sbx_in "$proj3" check --settings "$work/strict.json" "$work/agents-check.json"
want_status 1
want_line '^# expected refusals hold under the agent file agents/r/AGENT\.md too$'
want_line '^not ok 1 - host pypi\.org: expected deny, got allow under the agent file agents/r/AGENT\.md$'
want_out "allowed by network.allowedDomains pypi.org [flag $proj3/agents/r/AGENT.md sandbox.network.hosts[1]]"
want_line '^ok 2 - host evil\.example: deny$'
want_line '^ok 3 - write src/x\.c: allowed$'
sbx_in "$proj3" check --settings "$work/strict.json" --json "$work/agents-check.json"
want_json 'd["agentFiles"] == ["AGENT-new.md", "agents/r/AGENT.md"] and d["results"][0]["agentFile"] == "agents/r/AGENT.md"'
want_json 'd["results"][1]["agentFile"] is None and d["failed"] == 1'
# The control: the agent file named, only it and the settings decide; without agent files pypi.org is refused.
sbx_in "$proj3" check --settings "$work/strict.json" --agent-file "$proj3/AGENT-new.md" "$work/agents-check.json"
want_status 0
want_no_out "under the agent file"
tap_finish "check: an expected refusal must hold under each of the repository's agent files too, and says which lets it through"

printf -- '---\nname: n\nsandbox:\n  network:\n    hosts: ["*"]\n---\n' >"$proj3/AGENT-new.md"
sbx_in "$proj3" diff --base HEAD --fail-on-widening
want_error 65 "AGENT-new.md:5:"
tap_finish "diff --base: an agent file that admits every host is refused (65), naming it"

git -C "$proj" show HEAD~1:.claude/settings.json >"$work/old.json"
cp "$proj/.claude/settings.json" "$work/new.json"
sbx_in "$proj" diff "$work/old.json" "$work/new.json" --fail-on-widening
want_status 1
want_out "widens  added network.allowedDomains evil.example (commands may reach the host)  [project $work/new.json"
want_out "[project $work/old.json sandbox.filesystem.denyRead[0]]"
sbx_in "$proj" diff "$work/new.json" "$work/old.json"
want_status 0
want_out "narrows evil.example:443 is now asked about"
want_out "widens  $proj/src/generated became writable"
tap_finish "diff OLD.json NEW.json: two files compared directly, each way"

sbx_in "$proj" diff
want_error 64 "diff needs --base REV, or two settings files"
sbx_in "$proj" diff "$work/old.json"
want_error 64 "diff needs --base REV, or two settings files"
sbx_in "$proj" diff --base HEAD "$work/old.json" "$work/new.json"
want_error 64 "USAGE"
sbx_in "$proj" diff --base no-such-revision
want_error 64 "--base no-such-revision: names no commit here"
sbx_in "$proj" diff "--base=--output=$work/written"
want_error 64 "names no commit here"
[[ ! -e $work/written ]] || fail_because "a revision that looks like an option reached git as one"
mkdir -p "$work/not-a-repo"
sbx_in "$work/not-a-repo" diff --base HEAD
want_error 64 "not a git repository"
tap_finish "diff: no revision and no files, one file, both, an unknown revision, one that looks like an option and a folder outside git are each a wrong command line (exit 64)"

echo '{"sandbox": {"network": {"allowedDomains": "github.com"}}}' >"$proj/.claude/settings.json"
git_in commit -qam "settings: broken"
echo '{"sandbox": {}}' >"$proj/.claude/settings.json"
sbx_in "$proj" diff --base HEAD
want_error 65 "HEAD:.claude/settings.json: sandbox.network.allowedDomains: expected an array of strings"
cp "$work/new.json" "$work/kept.json"
ln -sf "$work/kept.json" "$proj/.claude/settings.json"
git_in commit -qam "settings: a symlink"
sbx_in "$proj" diff --base HEAD
want_error 65 "HEAD:.claude/settings.json: a symlink at this revision"
rm "$proj/.claude/settings.json"
cp "$work/kept.json" "$proj/.claude/settings.json"
git_in commit -qam "settings: a file again"
sbx_in "$proj" diff "$work/old.json" "$work/missing.json"
want_error 66 "$work/missing.json: no such file"
tap_finish "diff: invalid settings and a symlink at the revision are named REV:FILE (exit 65); a file that is not there (exit 66)"

# --- check and run agree ----------------------------------------------------------------
# A server on loopback for the host cases.
python3 -m http.server --bind 127.0.0.1 0 --directory "$tmp" >"$tmp/server.log" 2>&1 &
server_pid=$!
port=
for _ in $(seq 50); do
    port=$(grep -oE 'port [0-9]+' "$tmp/server.log" | head -1 | cut -d' ' -f2 || true)
    [[ -z $port ]] || break
    sleep 0.1
done
[[ -n $port ]] || { fail_because "the loopback server did not start"; tap_finish "a server on loopback"; tap_end; }
echo hello >"$tmp/greeting.txt"
chmod 644 "$tmp/greeting.txt"

tap_users
for who in "${users[@]}"; do
    tap_user_project "$who" || continue
    mkdir -p "$home/.aws" "$proj/.claude" "$proj/src" "$proj/secrets"
    echo secret-key >"$home/.aws/credentials"
    echo key >"$proj/secrets/key"
    echo 'int main(void) { return 0; }' >"$proj/src/main.c"
    cat >"$proj/.claude/settings.json" <<EOF
{"sandbox": {"filesystem": {"denyRead": ["secrets"]}, "network": {"allowedDomains": ["127.0.0.1:$port"]}}}
EOF
    cat >"$work/agree.json" <<EOF
{"expect": [
  {"read": "~/.aws/credentials", "allowed": false},
  {"read": "secrets/key", "allowed": false},
  {"write": ".git/hooks/pre-commit", "allowed": false},
  {"write": "src/main.c", "allowed": true},
  {"host": "127.0.0.1:$port", "verdict": "allow"},
  {"host": "127.0.0.1:$((port == 65535 ? port - 1 : port + 1))", "verdict": "deny"}
]}
EOF
    [[ -z ${as[*]} ]] || chown -R "$who:" "$work"
    rc=0
    (cd "$proj" && "${as[@]}" env HOME="$home" timeout 60 "$sbx" check --managed-settings "$tmp/empty-managed.json" \
        "$work/agree.json") </dev/null >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
    want_status 0
    tap_finish "check: the credential store, the denied folder and the hook refused, the source file and the allowed server not"

    # The control: outside the sandbox the same user does all of it.
    rc=0
    (cd "$proj" && "${as[@]}" env HOME="$home" sh -c "cat '$home/.aws/credentials' secrets/key &&
        : >>.git/hooks/pre-commit && rm .git/hooks/pre-commit &&
        curl -sS --noproxy '*' -o /dev/null http://127.0.0.1:$port/greeting.txt") </dev/null >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
    want_status 0
    tap_finish "control: outside the sandbox each refused action works"

    tap_in_sandbox -- "cat '$home/.aws/credentials'"
    [[ $rc != 0 && $out != *secret-key* ]] || fail_because "the credential store was read inside the sandbox"
    tap_finish "run agrees: ~/.aws/credentials, refused by check, cannot be read"
    tap_in_sandbox -- "cat secrets/key"
    [[ $rc != 0 && $out != *key* ]] || fail_because "the denied folder was read inside the sandbox"
    tap_finish "run agrees: secrets/key, refused by check, cannot be read"
    tap_in_sandbox -- "echo 'echo pwned' >.git/hooks/pre-commit"
    [[ $rc != 0 && ! -s $proj/.git/hooks/pre-commit ]] || fail_because "the hook was written inside the sandbox"
    tap_finish "run agrees: .git/hooks/pre-commit, refused by check, cannot be written"
    tap_in_sandbox -- "echo '/* changed */' >>src/main.c"
    want_status 0
    grep -qF 'changed' "$proj/src/main.c" || fail_because "src/main.c was not changed"
    tap_finish "run agrees: src/main.c, allowed by check, is written"
    tap_in_sandbox -- "curl -sS http://127.0.0.1:$port/greeting.txt"
    want_status 0
    want_out hello
    tap_finish "run agrees: 127.0.0.1:$port, allowed by check, is reached"
    other=$((port == 65535 ? port - 1 : port + 1))
    tap_in_sandbox -- "curl -fsS -o /dev/null http://127.0.0.1:$other/"
    [[ $rc != 0 ]] || fail_because "127.0.0.1:$other was reached"
    tap_finish "run agrees: 127.0.0.1:$other, refused by check, is not reached"

    # --- route and run agree: a command excludedCommands sends outside ----------------
    cat >"$proj/.claude/settings.json" <<'EOF'
{"sandbox": {"enabled": true, "excludedCommands": ["touch *", "sh -c *"]}}
EOF
    [[ -z ${as[*]} ]] || chown -R "$who:" "$proj/.claude"
    sbx_run_as() {
        rc=0
        (cd "$proj" && timeout 60 "${as[@]}" env HOME="$home" "$sbx" run --managed-settings "$tmp/empty-managed.json" \
            "$@") </dev/null >"$work/out" 2>"$work/err" || rc=$?
        out=$(<"$work/out")
        err=$(<"$work/err")
    }
    sbx_run_as -- touch "$home/made-outside"
    want_status 125
    [[ ! -e $home/made-outside ]] || fail_because "the excluded command ran"
    want_err "touch $home/made-outside runs outside the sandbox by the settings: an excludedCommands pattern matches"
    want_err "[touch *, project $proj/.claude/settings.json sandbox.excludedCommands[0]]"
    want_err "pass --unsandboxed to run it outside"
    tap_finish "run: a command excludedCommands sends outside is refused (125) naming the pattern, and does not run"

    sbx_run_as --unsandboxed -- touch "$home/made-outside"
    want_status 0
    [[ -e $home/made-outside ]] || fail_because "the command did not run outside"
    want_err "sbx: UNSANDBOXED: touch $home/made-outside runs outside the sandbox, unconfined, as you asked (--unsandboxed)"
    want_err "sbx: UNSANDBOXED: touch $home/made-outside ran outside the sandbox and exited with status 0"
    # The control: confined (env in front: no pattern matches), the same write is refused.
    sbx_run_as -- env touch "$home/made-inside"
    [[ $rc != 0 && ! -e $home/made-inside ]] || fail_because "the home directory was written inside the sandbox"
    tap_finish "run --unsandboxed: the excluded command runs unconfined (writes the home directory), said before and after; confined it cannot"

    rm -f "$work/ready" "$work/trapped"
    (cd "$proj" && exec timeout 60 "${as[@]}" env HOME="$home" "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --unsandboxed -- sh -c "trap 'echo trapped >$work/trapped; exit 7' TERM; echo >$work/ready; while :; do sleep 0.1; done") \
        </dev/null >"$work/out" 2>"$work/err" &
    outside_pid=$!
    for _ in $(seq 100); do [[ -e $work/ready ]] && break; sleep 0.1; done
    kill -TERM "$outside_pid"
    rc=0
    wait "$outside_pid" || rc=$?
    err=$(<"$work/err")
    want_status 7
    [[ -e $work/trapped ]] || fail_because "the command's TERM trap did not run"
    want_err "ran outside the sandbox and exited with status 7"
    sbx_run_as --unsandboxed -- sh -c 'kill -KILL $$'
    want_status 137
    want_err "ran outside the sandbox and died of signal 9"
    tap_finish "run --unsandboxed: SIGTERM reaches the command, whose trap runs; its status is sbx's (7; 137 for SIGKILL)"

    # A caller other than the agent file's owner gets only confined commands.
    printf -- '---\nname: t\n---\n' >"$work/AGENT.md"
    chmod 755 "$work"
    chmod 644 "$work/AGENT.md"
    chown nobody "$work/AGENT.md"
    rm -f "$home/made-outside"
    sbx_run_as --agent-file "$work/AGENT.md" --unsandboxed -- touch "$home/made-outside"
    want_status 125
    [[ ! -e $home/made-outside ]] || fail_because "the command ran outside for a caller who does not own the agent file"
    want_err "--unsandboxed is refused: you (uid $(id -u "$who")) do not own the agent file"
    tap_finish "run --unsandboxed under an agent file another user owns: refused (125), nothing runs outside"
    chown "$who" "$work/AGENT.md"
    sbx_run_as --agent-file "$work/AGENT.md" --unsandboxed -- touch "$home/made-outside"
    want_status 0
    [[ -e $home/made-outside ]] || fail_because "the owner's command did not run outside"
    tap_finish "control: the agent file's owner runs the same command outside"
done
TAP_PREFIX=
tap_end
