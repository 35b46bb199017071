#!/usr/bin/env bash
# TAP: `sbx policy` as a person runs it: real files in temporary directories, the
# text and JSON it prints, its one-line errors and its exit statuses.
# Each case has its own HOME (so the user layer is the case's own), its own project
# and, where it needs one, its own managed settings file. Needs bash, coreutils, grep.
# Usage: policy_test.sh PATH-TO-SBX
set -euo pipefail

sbx=${1:?usage: policy_test.sh PATH-TO-SBX}
source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch  # by its physical path: sbx prints resolved paths

# Cases that are not about managed settings must not see this machine's own file.
no_managed=()
if [[ -e /etc/claude-code/managed-settings.json ]]; then
    no_managed=(--managed-settings "$tmp/empty-managed.json")
fi

# new_case: a fresh HOME and project for the next case, in $home and $proj.
new_case() {
    local dir="$tmp/case-$((n + 1))"
    home="$dir/home"
    proj="$dir/project"
    mkdir -p "$home" "$proj/.claude"
}

# run ARGS...: runs `sbx ARGS` with the case's HOME under a time limit, and sets
# $rc, $out and $err. A hang shows as status 124.
run() {
    rc=0
    HOME=$home timeout 10 "$sbx" "$@" </dev/null >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
    out=$(<"$tmp/stdout")
    err=$(<"$tmp/stderr")
}

expect_status() { [[ $rc == "$1" ]] || fail_because "exit status $rc, expected $1"; }
# expect_out TEXT / expect_err TEXT: the output holds TEXT, taken literally.
expect_out() { grep -qF -- "$1" <<<"$out" || fail_because "stdout lacks: $1"; }
expect_err() { grep -qF -- "$1" <<<"$err" || fail_because "stderr lacks: $1"; }
# expect_line REGEX: some line of stdout matches the extended regular expression.
expect_line() { grep -qE -- "$1" <<<"$out" || fail_because "no stdout line matches: $1"; }
expect_no_line() { ! grep -qE -- "$1" <<<"$out" || fail_because "a stdout line matches: $1"; }
# expect_error STATUS REGEX: the exit status, nothing on stdout, and exactly one
# line on stderr that matches REGEX.
expect_error() {
    expect_status "$1"
    [[ -z $out ]] || fail_because "stdout is not empty"
    [[ $(grep -c '' "$tmp/stderr") == 1 ]] || fail_because "stderr is not one line"
    grep -qE -- "$2" <<<"$err" || fail_because "stderr does not match: $2"
}

# skip DESCRIPTION REASON: a case this machine cannot run, said so in the TAP line.
skip() {
    n=$((n + 1))
    echo "ok $n - $1 # SKIP $2"
}

# re TEXT: a regular expression matching TEXT literally.
# shellcheck disable=SC2001  # a bracket expression: beyond ${var//...}
re() { sed 's/[][\.*^$+?(){}|]/\\&/g' <<<"$1"; }

# --- the built-in default, and the settings that replace it ------------------------
# With no settings file at all, sbx uses its built-in default policy. A machine with a
# managed settings file always has a layer, so there these cases cannot run.
builtin_src='{"layer":"builtin","file":"(built-in)","key":'

new_case
if ((${#no_managed[@]})); then
    skip "no settings files: the built-in default" "this machine has /etc/claude-code/managed-settings.json"
else
    run policy --root "$proj"
    expect_status 0
    expect_line "^policy for $(re "$proj"): named with --root\$"
    expect_line '^  enabled +true +builtin +\(built-in\) +defaults\.enabled$'
    expect_line '^  failIfUnavailable +true +default$'
    expect_line '^  allowUnsandboxed +false +default$'
    expect_line "^    $(re "$home/.ssh") +builtin +\(built-in\) +defaults\.credentialStores\[[0-9]+\]\$"
    expect_line "^    $(re "$home/.aws") +builtin +\(built-in\) +defaults\.credentialStores\[[0-9]+\]\$"
    expect_line '^  filesystem\.allowWrite: none$'
    expect_line '^  network\.allowedDomains: none$'
    expect_line '^warnings: none$'
    tap_finish "no settings files: the built-in default, enabled, credential stores denied, no network"
fi

new_case
if ((${#no_managed[@]})); then
    skip "no settings files, --json: the built-in default" "this machine has /etc/claude-code/managed-settings.json"
else
    run policy --root "$proj" --json
    expect_status 0
    expect_out "\"enabled\":{\"value\":true,\"source\":$builtin_src\"defaults.enabled\"}}"
    expect_out "{\"value\":\"$home/.ssh\",\"source\":$builtin_src\"defaults.credentialStores["
    expect_out '"allowedDomains":[]'
    expect_out '"warnings":[]'
    [[ $(grep -c '' "$tmp/stdout") == 1 ]] || fail_because "the JSON is not one line"
    [[ $out == '{'*'}' ]] || fail_because "the JSON is not one object"
    tap_finish "no settings files, --json: the built-in default, each value with the builtin source"
fi

new_case
echo '{}' >"$proj/.claude/settings.json"
run policy --root "$proj" "${no_managed[@]}"
expect_status 0
expect_line '^  enabled +false +default$'
expect_line '^  failIfUnavailable +true +default$'
expect_line "^    $(re "$home/.ssh") +builtin +\(built-in\) +defaults\.credentialStores\[0\]\$"
expect_line "^    $(re "$home/.aws") +builtin +\(built-in\) +defaults\.credentialStores\[[0-9]+\]\$"
expect_line '^  network\.allowedDomains: none$'
expect_no_line '^  [a-zA-Z.]+ +(true|false) +builtin '  # no other value of the default
expect_line '^warnings: none$'
tap_finish "an empty project settings file: the settings decide, sandbox not enabled, credential stores still denied"

new_case
mkdir -p "$home/.claude"
echo '{}' >"$home/.claude/settings.json"
run policy --root "$proj" "${no_managed[@]}" --json
expect_status 0
expect_out '"enabled":{"value":false,"source":null}'
expect_out "\"denyRead\":[{\"value\":\"$home/.ssh\",\"source\":$builtin_src\"defaults.credentialStores[0]\"}}"
expect_out "{\"value\":\"$home/.aws\",\"source\":$builtin_src\"defaults.credentialStores["
tap_finish "an empty user settings file, --json: the settings decide, the credential stores keep the builtin source"

# --- the credential stores under every settings file --------------------------------
# The account's own home (the password database's), which HOME does not name here.
account_home=$(getent passwd "$(id -u)" | cut -d: -f6)

new_case
echo '{}' >"$proj/.claude/settings.json"
run policy --root "$proj" "${no_managed[@]}"
expect_status 0
expect_line "^    $(re "$home/.ssh") +builtin +\(built-in\) +defaults\.credentialStores\[0\]\$"
if [[ -n $account_home && $account_home != "$home" ]]; then
    expect_line "^    $(re "$account_home/.ssh") +builtin +\(built-in\) +defaults\.credentialStores\[0\]\$"
    expect_line "^    $(re "$account_home/.aws") +builtin +\(built-in\) +defaults\.credentialStores\[[0-9]+\]\$"
else
    fail_because "the account has no home of its own to test with"
fi
tap_finish "HOME elsewhere: the stores are denied under HOME and under the account's own home"

new_case
mkdir -p "$home/.claude"
echo '{"sandbox": {"filesystem": {"allowRead": ["~/.aws", "~/.ssh/config", "~", "~/*/credentials"]}}}' \
    >"$home/.claude/settings.json"
user_file=$(re "$home/.claude/settings.json")
run policy --root "$proj" "${no_managed[@]}"
expect_status 0
expect_line "^  $user_file: sandbox\.filesystem\.allowRead\[0\]: filesystem\.allowRead ~/\.aws lifts the built-in denial of ~/\.aws \(AWS access keys and SSO tokens\): commands can read it\$"
expect_line "^  $user_file: sandbox\.filesystem\.allowRead\[1\]: filesystem\.allowRead ~/\.ssh/config lifts the built-in denial of ~/\.ssh \(SSH private keys"
expect_no_line 'allowRead\[[23]\]: '  # a broad entry lifts nothing
expect_line "^    $(re "$home/.aws") +builtin +\(built-in\) +defaults\.credentialStores\[[0-9]+\]\$"  # still listed
run policy --root "$proj" "${no_managed[@]}" --json
expect_out "\"key\":\"sandbox.filesystem.allowRead[0]\",\"message\":\"filesystem.allowRead ~/.aws lifts the built-in denial of ~/.aws (AWS access keys and SSO tokens): commands can read it\"}"
tap_finish "a user allowRead naming a store lifts it with a warning naming entry, store and reason; broad ones do not"

new_case
echo '{"sandbox": {"filesystem": {"allowRead": ["~/.ssh", "~/.aws/config"]}}}' >"$proj/.claude/settings.json"
pfile=$(re "$proj/.claude/settings.json")
run policy --root "$proj" "${no_managed[@]}"
expect_status 0
expect_line "^    $(re "$home/.ssh/known_hosts") +builtin +\(built-in\) +defaults\.readableInStores\[0\]\$"  # sbx's own opening alone
expect_no_line "^    $(re "$home/.ssh") +project"
expect_line "^  $pfile: sandbox\.filesystem\.allowRead\[0\]: left out: $(re "$home/.ssh") is at or under $(re "$home/.ssh"), a credential store sbx hides \(SSH private keys"
expect_line "^  $pfile: sandbox\.filesystem\.allowRead\[1\]: left out: .*only user, flag and managed settings can open one\$"
expect_no_line 'lifts the built-in'
run policy --root "$proj" "${no_managed[@]}" --untrusted
expect_line "^    $(re "$home/.ssh/known_hosts") +builtin +\(built-in\) +defaults\.readableInStores\[0\]\$"  # sbx's own opening alone
expect_no_line "^    $(re "$home/.ssh") +project"
expect_line "^  $pfile: sandbox\.filesystem\.allowRead\[0\]: left out: the project is not trusted"
tap_finish "a project's allowRead cannot lift a store, trusted or not: left out with a warning"

# --- a project file, with provenance ------------------------------------------------
project_settings='{
  "sandbox": {
    "enabled": true,
    "filesystem": { "allowWrite": ["build"], "denyRead": ["~/.ssh"] },
    "network": { "allowedDomains": ["github.com"] }
  },
  "permissions": { "deny": ["Read(./.env)"] }
}'

new_case
echo "$project_settings" >"$proj/.claude/settings.json"
file=$(re "$proj/.claude/settings.json")
run policy --root "$proj" "${no_managed[@]}"
expect_status 0
expect_line "^  enabled +true +project +$file +sandbox\.enabled\$"
expect_line "^    $(re "$proj/build") +project +$file +sandbox\.filesystem\.allowWrite\[0\]\$"
expect_line "^    $(re "$home/.ssh") +project +$file +sandbox\.filesystem\.denyRead\[0\]\$"
expect_line "^    $(re "$proj/.env") +project +$file +permissions\.deny\[0\]\$"
expect_line "^    github\.com +project +$file +sandbox\.network\.allowedDomains\[0\]\$"
expect_line '^warnings: none$'
tap_finish "a project file: its values, paths made absolute, each with layer, file and key"

new_case
echo "$project_settings" >"$proj/.claude/settings.json"
run policy --root "$proj" "${no_managed[@]}" --json
src="{\"layer\":\"project\",\"file\":\"$proj/.claude/settings.json\""
expect_status 0
expect_out '"trusted":true'
expect_out "\"enabled\":{\"value\":true,\"source\":$src,\"key\":\"sandbox.enabled\"}}"
expect_out "{\"value\":\"$proj/build\",\"source\":$src,\"key\":\"sandbox.filesystem.allowWrite[0]\"}}"
expect_out "\"allowedDomains\":[{\"value\":\"github.com\",\"source\":$src,\"key\":\"sandbox.network.allowedDomains[0]\"}}]"
tap_finish "a project file, --json: the same values and sources"

new_case
mkdir -p "$home/.claude"
echo '{"sandbox": {"network": {"deniedDomains": ["tracker.example"]}}}' >"$home/.claude/settings.json"
echo '{"sandbox": {"enabled": true}}' >"$proj/.claude/settings.json"
echo '{"sandbox": {"network": {"allowLocalBinding": true}}}' >"$proj/.claude/settings.local.json"
echo '{"sandbox": {"enabled": false}}' >"$tmp/flag.json"
run policy --root "$proj" "${no_managed[@]}" --settings "$tmp/flag.json"
expect_status 0
expect_line "^    tracker\.example +user +$(re "$home/.claude/settings.json") +sandbox\.network\.deniedDomains\[0\]\$"
expect_line "^  network\.allowLocalBinding +true +local +$(re "$proj/.claude/settings.local.json") "
expect_line "^  enabled +false +flag +$(re "$tmp/flag.json") +sandbox\.enabled\$"
tap_finish "user, project, local and --settings layers: each value names its own layer"

# --- the weaker sandbox --------------------------------------------------------------
new_case
mkdir -p "$home/.claude"
echo '{"sandbox": {"enableWeakerNestedSandbox": true}}' >"$home/.claude/settings.json"
run policy --root "$proj" "${no_managed[@]}"
expect_status 0
expect_line "^  weakerSandbox +true +user +$(re "$home/.claude/settings.json") +sandbox\.enableWeakerNestedSandbox\$"
expect_line '^warnings: none$'
run policy --root "$proj" "${no_managed[@]}" --json
expect_out "\"weakerSandbox\":{\"value\":true,\"source\":{\"layer\":\"user\",\"file\":\"$home/.claude/settings.json\",\"key\":\"sandbox.enableWeakerNestedSandbox\"}}"
tap_finish "enableWeakerNestedSandbox from the user's file: weakerSandbox true, with its layer, file and key"

new_case
echo '{"sandbox": {"enableWeakerNestedSandbox": true}}' >"$proj/.claude/settings.json"
run policy --root "$proj" "${no_managed[@]}"
expect_status 0
expect_line '^  weakerSandbox +false +default$'
expect_line "^  $(re "$proj/.claude/settings.json"): sandbox\.enableWeakerNestedSandbox: only user, managed or --settings settings, or sbx run --weaker-sandbox, can turn on the weaker sandbox; left out\$"
expect_no_line 'not supported'
tap_finish "enableWeakerNestedSandbox true in the project's file: left out, with a warning naming who may set it"

new_case
echo '{"sandbox": {"enableWeakerNestedSandbox": 1}}' >"$tmp/weaker-number.json"
run policy --root "$proj" "${no_managed[@]}" --settings "$tmp/weaker-number.json"
expect_error 65 "^sbx: INVALID_SETTINGS: $(re "$tmp/weaker-number.json"): sandbox\.enableWeakerNestedSandbox: .*boolean"
tap_finish "a number for enableWeakerNestedSandbox: exit 65, naming the file and the key"

# --- invalid files ------------------------------------------------------------------
new_case
printf '{\n  "sandbox": {\n    "enabled": yes\n  }\n}\n' >"$proj/.claude/settings.json"
run policy --root "$proj" "${no_managed[@]}"
expect_error 65 "^sbx: INVALID_SETTINGS: $(re "$proj/.claude/settings.json"):3:16: "
tap_finish "malformed JSON: exit 65, the file with line and column of the bad byte"

new_case
echo '{"sandbox": {"enabled": "yes"}}' >"$proj/.claude/settings.json"
run policy --root "$proj" "${no_managed[@]}"
expect_error 65 "^sbx: INVALID_SETTINGS: $(re "$proj/.claude/settings.json"): sandbox\.enabled: .*boolean"
tap_finish "a string where a boolean belongs: exit 65, naming the key and the type"

new_case
echo '{"sandbox": {"network": {"allowedDomains": ["github.com", 443]}}}' >"$tmp/wrong-type.json"
run policy --root "$proj" "${no_managed[@]}" --settings "$tmp/wrong-type.json"
expect_error 65 "^sbx: INVALID_SETTINGS: $(re "$tmp/wrong-type.json"): sandbox\.network\.allowedDomains\[1\]: .*string"
tap_finish "a number in a list of domains: exit 65, naming the entry and the type"

new_case
echo '{"sandbox": {"enabeld": true, "network": {"allowedDomain": ["github.com"]}}}' >"$proj/.claude/settings.json"
run policy --root "$proj" "${no_managed[@]}"
expect_status 0
expect_out "sandbox.enabeld: unknown key; did you mean 'enabled'?"
expect_out "sandbox.network.allowedDomain: unknown key; did you mean 'allowedDomains'?"
expect_line '^  enabled +false +default$'
expect_line '^  network\.allowedDomains: none$'
tap_finish "misspelt keys: left out, each with a warning that says did you mean"

# --- files that cannot be read ------------------------------------------------------
new_case
run policy --root "$proj" "${no_managed[@]}" --settings "$tmp/no-such-file.json"
expect_error 66 "^sbx: IO_ERROR: $(re "$tmp/no-such-file.json"): "
tap_finish "--settings naming a missing file: exit 66"

new_case
run policy --root "$proj" --managed-settings "$tmp/no-such-managed.json"
expect_error 66 "^sbx: IO_ERROR: $(re "$tmp/no-such-managed.json"): "
tap_finish "--managed-settings naming a missing file: exit 66"

new_case
mkfifo "$tmp/fifo.json"
run policy --root "$proj" "${no_managed[@]}" --settings "$tmp/fifo.json"
[[ $rc != 124 ]] || fail_because "sbx hung on the FIFO"
expect_error 66 "^sbx: IO_ERROR: $(re "$tmp/fifo.json"): "
tap_finish "--settings naming a FIFO: refused at once, exit 66"

new_case
mkfifo "$proj/.claude/settings.json"
run policy --root "$proj" "${no_managed[@]}"
[[ $rc != 124 ]] || fail_because "sbx hung on the FIFO"
expect_error 66 "^sbx: IO_ERROR: $(re "$proj/.claude/settings.json"): "
tap_finish "a project settings file that is a FIFO: refused at once, exit 66"

# --- managed settings and trust -----------------------------------------------------
new_case
echo '{"sandbox": {"enabled": true, "network": {"allowedDomains": ["github.com"]}}}' >"$proj/.claude/settings.json"
echo '{"sandbox": {"allowUnsandboxedCommands": false,
                   "network": {"allowedDomains": ["pypi.org"]}}}' >"$home/managed.json"
run policy --root "$proj" --managed-settings "$home/managed.json"
managed=$(re "$home/managed.json")
expect_status 0
expect_line "^  adminRequired +true +managed +$managed +sandbox\.allowUnsandboxedCommands\$"
expect_line "^    pypi\.org +managed +$managed +sandbox\.network\.allowedDomains\[0\]\$"
expect_no_line '^    github\.com '
expect_line "^  $(re "$proj/.claude/settings.json"): sandbox\.network\.allowedDomains\[0\]: left out: managed settings require the sandbox"
tap_finish "managed settings in admin-required mode: the project's allowedDomains left out, with a warning"

new_case
echo "$project_settings" >"$proj/.claude/settings.json"
run policy --root "$proj" "${no_managed[@]}" --untrusted
expect_status 0
expect_line "^policy for $(re "$proj"): named with --root; untrusted project\$"
expect_line '^  filesystem\.allowWrite: none$'
expect_line "^    $(re "$home/.ssh") +project "
expect_out "sandbox.filesystem.allowWrite[0]: left out: the project is not trusted"
tap_finish "--untrusted: the project's allowWrite left out with a warning, its denyRead kept"

new_case
echo "$project_settings" >"$proj/.claude/settings.json"
run policy --root "$proj" "${no_managed[@]}" --untrusted --json
expect_status 0
expect_out '"trusted":false'
expect_out '"allowWrite":[]'
tap_finish "--untrusted, --json: trusted false, allowWrite empty"

# --- agent files -------------------------------------------------------------------
new_case
printf -- '---\nname: t\nsandbox:\n  network:\n    hosts: [github, "*.example.com"]\n    local: true\n---\nBody\n' >"$proj/AGENT.md"
run policy --root "$proj" "${no_managed[@]}" --agent-file "$proj/AGENT.md"
expect_status 0
expect_line "^    api\.github\.com +flag +$(re "$proj/AGENT.md") +sandbox\.network\.hosts\[0\]"
expect_line "^    \*\.example\.com +flag "
expect_line "^  network\.allowLocalBinding +true +flag +$(re "$proj/AGENT.md") +sandbox\.network\.local"
expect_line "^    $(re "$proj/AGENT.md") +flag .*sandbox \(built-in\)"
tap_finish "--agent-file: its hosts (groups expanded), local and the agent file's own protection, each with its key"

new_case
printf -- '---\nsandbox:\n  preset: strict\n  allowed_imports: [numpy]\n  allowed_commands: [ls]\n---\n' >"$proj/AGENT.md"
run policy --root "$proj" "${no_managed[@]}" --agent-file "$proj/AGENT.md"
expect_status 0
expect_line "^agent file: $(re "$proj/AGENT.md"): preset strict, written at sandbox\.preset$"
expect_line "^  $(re "$proj/AGENT.md"): sandbox\.allowed_imports: does nothing: "
expect_line "^  $(re "$proj/AGENT.md"): sandbox\.allowed_commands: gates nothing: "
run policy --root "$proj" "${no_managed[@]}" --agent-file "$proj/AGENT.md" --json
expect_status 0
expect_out '"agentFile":{"file":"'"$proj"'/AGENT.md","preset":"strict","presetSource":{"layer":"flag","file":"'"$proj"'/AGENT.md","key":"sandbox.preset"},"declared":true,"skillScript":false,"allowedCommands":["ls"],"allowedImports":["numpy"]}'
printf -- '---\nname: t\n---\n' >"$proj/AGENT.md"
run policy --root "$proj" "${no_managed[@]}" --agent-file "$proj/AGENT.md"
expect_line "^agent file: $(re "$proj/AGENT.md"): preset development, the default \(the file has no sandbox block\)$"
run doctor --agent-file "$proj/AGENT.md"
expect_line "^     agent file: $(re "$proj/AGENT.md"): preset development, the default \(the file has no sandbox block\)$"
printf -- '---\nsandbox: off\n---\n' >"$proj/AGENT.md"
run doctor --agent-file "$proj/AGENT.md"
expect_line "^     agent file: $(re "$proj/AGENT.md"): preset off, written at sandbox; sbx refuses to run its commands"
run doctor --agent-file "$proj/NO-SUCH.md"
expect_error 66 "^sbx: IO_ERROR: $(re "$proj/NO-SUCH.md")"
tap_finish "--agent-file: sbx policy and sbx doctor name the preset and where it came from; allowed_imports and allowed_commands are kept, said to confine nothing"

new_case
printf -- '---\nsandbox:\n  network:\n    hosts: [https://x.com]\n---\n' >"$proj/AGENT.md"
run policy --root "$proj" "${no_managed[@]}" --agent-file "$proj/AGENT.md"
expect_error 65 "^sbx: INVALID_SETTINGS: $(re "$proj/AGENT.md"):4:[0-9]+: sandbox\.network\.hosts\[0\]: .*not a host pattern"
tap_finish "--agent-file with a URL for a host: exit 65, naming the file, line and entry"

new_case
printf -- '---\nsandbox:\n\tpreset: strict\n---\n' >"$proj/AGENT.md"
run policy --root "$proj" "${no_managed[@]}" --agent-file "$proj/AGENT.md"
expect_error 65 "^sbx: INVALID_SETTINGS: $(re "$proj/AGENT.md"):3"
tap_finish "--agent-file with a tab for indentation: exit 65, naming the line"

new_case
run policy --root "$proj" "${no_managed[@]}" --agent-file "$proj/NO-SUCH.md"
expect_error 66 "^sbx: IO_ERROR: $(re "$proj/NO-SUCH.md")"
tap_finish "--agent-file naming nothing: exit 66"

# --- srt's settings format ------------------------------------------------------------
new_case
printf '{"network": {"allowedDomains": ["srt.example"]}, "filesystem": {"denyRead": ["%s/srt-secret"]}}' "$tmp" \
    >"$tmp/srt-settings.json"
run policy --root "$proj" "${no_managed[@]}" --settings "$tmp/srt-settings.json"
expect_status 0
expect_line "srt\.example +flag +$(re "$tmp/srt-settings.json") +network\.allowedDomains\[0\]"
expect_line "srt-secret +flag +$(re "$tmp/srt-settings.json") +filesystem\.denyRead\[0\]"
tap_finish "a settings file in srt's format is read as srt reads it, each value named by the file's own key"

new_case
printf '{"sandbox": {"enabled": true}, "network": {"allowedDomains": ["srt.example"]}}' >"$tmp/both.json"
run policy --root "$proj" "${no_managed[@]}" --settings "$tmp/both.json"
expect_error 65 "^sbx: INVALID_SETTINGS: $(re "$tmp/both.json"): network: srt's settings format"
tap_finish "a file in both formats: exit 65, naming the key"

# --- the command line ---------------------------------------------------------------
new_case
echo '{}' >"$tmp/a-file"
run policy --root "$tmp/a-file" "${no_managed[@]}"
expect_error 64 "^sbx: INVALID_ARGUMENT: $(re "$tmp/a-file"): .*not a directory"
tap_finish "--root naming a file: exit 64"

new_case
run policy --root "$tmp/no-such-dir" "${no_managed[@]}"
expect_status 64
expect_err "$tmp/no-such-dir"
tap_finish "--root naming nothing: exit 64"

new_case
run policy --root "$proj" --bogus
expect_status 64
[[ -z $out ]] || fail_because "stdout is not empty"
expect_err "--bogus"
tap_finish "an unknown option: exit 64, naming it"

new_case
run
expect_status 64
[[ -z $out ]] || fail_because "stdout is not empty"
expect_err "subcommand"
tap_finish "no subcommand: exit 64, saying one is needed"

tap_end
