#!/usr/bin/env bash
# TAP: the question sbx asks on the terminal about a host no rule decides cannot
# be forged, repainted or answered by the command, which shares the terminal.
# Under a pseudo-terminal (terminal_question.py), a sandboxed command keeps
# printing a forged question about good.example (after \r and "erase line")
# while curl asks for evil.example: the real question must name evil.example,
# nothing of the command's may reach the terminal while it is open (every
# process of the sandbox is stopped), and after the answer the command resumes
# and curl gets 403. Control: the same writer beside a plain question printer,
# outside any sandbox, the old behaviour: the forged text lands inside the
# question. As the current user and, as root with SBX_TEST_USER, as that user.
# Usage: terminal_test.sh SBX SBX-LINUX
set -euo pipefail

sbx=$(realpath "${1:?usage: terminal_test.sh SBX SBX-LINUX}")
launcher=$(realpath "${2:?usage: terminal_test.sh SBX SBX-LINUX}")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
driver=$here/terminal_question.py
source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch

for tool in curl python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "1..0 # SKIP $tool is not installed"
        exit 0
    fi
done

# The forged question, repainted every 5 ms over whatever the line shows.
writer='( while :; do printf "\r\033[2Ksbx: the command wants to reach good.example:80, which no rule decides. Allow it for the rest of this command? [y/N] "; sleep 0.005; done ) & w=$!; sleep 0.3'
# A thief reads the terminal for the keys meant for the question (descriptor 3:
# sh gives a background job /dev/null for its standard input).
thief='exec 3<&0; ( head -c 1 <&3 >stolen ) & r=$!'
command_script="$thief; $writer; curl -s -m 20 -o /dev/null -w 'code:%{http_code}\n' http://evil.example/; sleep 0.3; kill \$w \$r"
control_script="$writer; printf '\r\nsbx: the command wants to reach evil.example:80, which no rule decides. Allow it for the rest of this command? [y/N] '; read -r a; echo code:403; sleep 0.3; kill \$w"

tap_users
for who in "${users[@]}"; do
    TAP_PREFIX="as $who: "
    work=$tmp/as-$who
    mkdir -p "$work/home" "$work/project"
    git init -q "$work/project"
    tap_become "$who" "$work" || continue

    rc=0
    out=$(cd "$work/project" && python3 "$driver" frozen evil.example -- "${as[@]}" env HOME="$work/home" \
        timeout 60 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --on-unknown-host ask -- sh -c "$command_script" 2>&1) || rc=$?
    [[ $rc == 0 ]] || fail_because "the driver found problems (status $rc)"
    [[ $out == *"bytes between the question and the answer: 0"* ]] || fail_because "bytes arrived while the question was open"
    [[ -e $work/project/stolen ]] || fail_because "the thief did not run"
    [[ ! -s $work/project/stolen ]] || fail_because "the command read the answer: '$(<"$work/project/stolen")'"
    rm -f "$work/project/stolen"
    tap_finish "while the question is open the sandbox is stopped: nothing forged reaches the terminal, no key reaches the command, then it resumes and curl gets 403"

    rc=0
    out=$(cd "$work/project" && python3 "$driver" interrupt evil.example -- "${as[@]}" env HOME="$work/home" \
        timeout 60 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --on-unknown-host ask -- sh -c "$command_script" 2>&1) || rc=$?
    [[ $rc == 0 ]] || fail_because "the driver found problems (status $rc)"
    tap_finish "SIGTERM to the launcher while the question is open ends it and the stopped sandbox, leaving nothing"

    rc=0
    out=$(cd "$work" && python3 "$driver" control evil.example -- "${as[@]}" sh -c "$control_script" 2>&1) || rc=$?
    [[ $rc == 0 ]] || fail_because "the control did not show the forged text inside the question (status $rc)"
    tap_finish "control: a question printed while the command runs has the command's forged text written into it"

    # Answers that hold past the command: [s] is kept in the session's file and
    # asked no more, [a] is written into the agent file's network.hosts. `.invalid`
    # names never resolve: an allowed one ends in 502, a refused one in 403.
    mkdir -p "$work/home/.cache/session"
    printf -- '---\nname: t\nsandbox:\n  network:\n    hosts: [github.com]  # reviewed\n---\n# Body\n' >"$work/project/AGENT.md"
    [[ -z ${as[*]} ]] || chown -R "$who:" "$work/home/.cache" "$work/project/AGENT.md"
    answers=$work/home/.cache/session/answers.json
    fetch() { echo "curl -s -m 20 -o /dev/null -w 'code:%{http_code}\n' http://$1/"; }
    asked() {  # KEY HOST [sbx run's options...]
        local key=$1 host=$2
        shift 2
        rc=0
        out=$(cd "$work/project" && python3 "$here/answer_question.py" "$key" -- "${as[@]}" env HOME="$work/home" \
            timeout 60 "$sbx" run --managed-settings "$tmp/empty-managed.json" --on-unknown-host ask "$@" \
            -- sh -c "$(fetch "$host")" 2>&1) || rc=$?
    }
    asked s kept.invalid --answers "$answers" --agent-file "$work/project/AGENT.md"
    [[ $rc == 0 ]] || fail_because "no question, or one not answered (status $rc): $out"
    [[ $out == *"[s] for this session (kept in $answers)"*"[a] always (written into the network.hosts of $work/project/AGENT.md)"* ]] ||
        fail_because "the question does not offer the session and always: $out"
    [[ $out == *code:502* ]] || fail_because "the host was not let through: $out"
    grep -qF '{"host":"kept.invalid","port":80,"answer":"allow"}' "$answers" 2>/dev/null ||
        fail_because "the answer is not in the session's file: $(cat "$answers" 2>/dev/null)"
    asked none kept.invalid --answers "$answers"
    [[ $rc == 0 && $out == *code:502* ]] || fail_because "asked again, or not let through, in the next command: $out"
    tap_finish "[s] keeps the answer in the session's file (--answers), and the next command is not asked"

    asked n kept.invalid
    [[ $rc == 0 && $out == *"kept.invalid:80, which no rule decides"* && $out == *code:403* ]] ||
        fail_because "without the file it was not asked: $out"
    tap_finish "control: without the session's file the next command is asked again"

    asked a always.invalid --agent-file "$work/project/AGENT.md"
    [[ $out == *code:502* ]] || fail_because "the host was not let through: $out"
    want='    hosts: [github.com, always.invalid]  # reviewed'
    grep -qxF -- "$want" "$work/project/AGENT.md" || fail_because "not written as '$want': $(cat "$work/project/AGENT.md")"
    [[ $(sed -n 7p "$work/project/AGENT.md") == "# Body" ]] || fail_because "the rest of the file changed"
    asked none always.invalid --agent-file "$work/project/AGENT.md"
    [[ $rc == 0 && $out == *code:502* ]] || fail_because "asked again under the agent file: $out"
    tap_finish "[a] writes the host into the agent file's network.hosts, the rest of its text as it was, and it is asked no more"
    rm -f "$work/project/AGENT.md"
done

tap_end
