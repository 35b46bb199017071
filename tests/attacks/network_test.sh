#!/usr/bin/env bash
# TAP: the network of a sandboxed command, end to end with `sbx run`, the real
# launcher, bubblewrap and its proxy. A web server of sbx-attack's listens on the
# host's loopback; the command inside uses curl. The proxy's own protocol cases
# (SOCKS address types, malformed requests, many connections) are in
# tests/launcher/proxy_test.cpp; here: what reaches the command, what the proxy
# lets through, and that nothing else leaves the sandbox.
# Every case runs as the current user and, when that is root and SBX_TEST_USER
# names a user (tools/test.sh makes sbx-test), again as that user.
# Usage: network_test.sh SBX SBX-LINUX SBX-ATTACK
set -euo pipefail

sbx=$(realpath "${1:?usage: network_test.sh SBX SBX-LINUX SBX-ATTACK}")
launcher=$(realpath "${2:?usage: network_test.sh SBX SBX-LINUX SBX-ATTACK}")
attack=$(realpath "${3:?usage: network_test.sh SBX SBX-LINUX SBX-ATTACK}")
source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch
server=
tap_on_exit '[[ -z $server ]] || kill "$server" 2>/dev/null'

if ! command -v curl >/dev/null; then
    echo "1..0 # SKIP curl is not installed (tools/install-deps.sh installs it)"
    exit 0
fi

# The server outside: every request it answers is one line in its log.
"$attack" http-serve "$tmp/http.port" >"$tmp/http.log" 2>&1 &
server=$!
for _ in $(seq 50); do [[ -s $tmp/http.port ]] && break; sleep 0.1; done
port=$(<"$tmp/http.port")

# A second server on this machine's own address that is not loopback, for the
# programs that dial an address themselves; none where there is no such address.
own=$(ip -o -4 addr show scope global 2>/dev/null | awk '{sub("/.*", "", $4); print $4; exit}')
own_server=
if [[ -n $own ]]; then
    "$attack" http-serve "$tmp/own.port" "$own" >"$tmp/own.log" 2>&1 &
    own_server=$!
    tap_on_exit '[[ -z $server ]] || kill "$server" 2>/dev/null; [[ -z $own_server ]] || kill "$own_server" 2>/dev/null'
    for _ in $(seq 50); do [[ -s $tmp/own.port ]] && break; sleep 0.1; done
    own_port=$(<"$tmp/own.port")
fi

server_saw() { grep -qF -- "$1" "$tmp/http.log"; }
expect_out() { [[ $out == *"$1"* ]] || fail_because "stdout lacks '$1'"; }
expect_err() { [[ $err == *"$1"* ]] || fail_because "stderr lacks '$1'"; }

# Over 80 lines: one case after another for a user (each a few lines that end
# in tap_finish), in the order of their TAP numbers; later cases reuse the
# clients and settings files earlier ones set up.
network_cases() {
    tap_in_sandbox -- 'env | grep -i -E "^(http|https|all|no)_proxy=" | sort'
    [[ $rc == 0 ]] || fail_because "status $rc"
    expect_out "HTTP_PROXY=http://127.0.0.1:"
    expect_out "HTTPS_PROXY=http://127.0.0.1:"
    expect_out "ALL_PROXY=socks5h://127.0.0.1:"
    expect_out "http_proxy=http://127.0.0.1:"
    expect_out "all_proxy=socks5h://127.0.0.1:"
    grep -qx 'NO_PROXY=localhost,127.0.0.1,::1' <<<"$out" || fail_because "NO_PROXY does not name loopback"
    grep -qx 'no_proxy=localhost,127.0.0.1,::1' <<<"$out" || fail_because "no_proxy does not name loopback"
    tap_finish "the command gets HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (socks5h), in both cases, and NO_PROXY naming loopback"

    # A server the command starts, on a port of its choosing, reached by every
    # client in the same command: its loopback is its own.
    local clients="python3 -m http.server 18080 --bind 127.0.0.1 >/dev/null 2>&1 & server=\$!
for i in \$(seq 100); do curl -s -o /dev/null http://127.0.0.1:18080/ && break; sleep 0.1; done
curl -s -m 10 -o /dev/null -w 'curl:%{http_code} ' http://127.0.0.1:18080/
curl -s -m 10 -o /dev/null -w 'curl-localhost:%{http_code} ' http://localhost:18080/
python3 -c 'import urllib.request; print(\"python:%d\" % urllib.request.urlopen(\"http://127.0.0.1:18080/\").status, end=\" \")'
wget -q -O /dev/null http://127.0.0.1:18080/ && printf 'wget:ok '
if command -v node >/dev/null; then node -e 'fetch(\"http://127.0.0.1:18080/\").then(r => console.log(\"node:\" + r.status))'; else echo node:none; fi
kill \$server"
    tap_in_sandbox -- "$clients"
    expect_out "curl:200 curl-localhost:200 python:200 wget:ok node:"
    [[ $out == *"node:200"* || $out == *"node:none"* ]] || fail_because "Node's fetch did not reach it"
    [[ $err != *"<sandbox_violations>"* ]] || fail_because "violations reported"
    tap_finish "a server the command starts is reached by curl, Python, wget and Node's fetch in the same command"

    # The control: where loopback goes through the proxy (allowLocalBinding, so
    # NO_PROXY is empty), the same clients reach the host's loopback instead.
    printf '{"sandbox": {"network": {"allowLocalBinding": true}}}' >"$tmp/local.json"
    tap_in_sandbox --settings "$tmp/local.json" -- "echo \"no_proxy=[\$NO_PROXY]\"; $clients"
    expect_out "no_proxy=[]"
    [[ $out != *"curl:200"* ]] || fail_because "curl reached the command's own server through the proxy"
    tap_finish "control: with allowLocalBinding, NO_PROXY is empty and curl through the proxy misses the command's own server"

    tap_in_sandbox -- "curl -s -m 10 -o /dev/null -w 'code:%{http_code}' http://example.com/"
    expect_out "code:403"
    expect_err "<sandbox_violations>"
    expect_err "deny network-outbound example.com:80 (not on the allow list"
    expect_err "</sandbox_violations>"
    tap_finish "a host no rule names is refused with 403, and sbx run lists it in <sandbox_violations>"

    tap_in_sandbox --allow-host "127.0.0.1:$port" -- \
        "curl -s -m 10 --noproxy '' http://127.0.0.1:$port/via-http; curl -s -m 10 --noproxy '' -p http://127.0.0.1:$port/via-connect;
         curl -s -m 10 --noproxy '' -x \"\$ALL_PROXY\" http://127.0.0.1:$port/via-socks5"
    expect_out "sbx-test-server GET /via-http"
    expect_out "sbx-test-server GET /via-connect"
    expect_out "sbx-test-server GET /via-socks5"
    [[ $err != *"<sandbox_violations>"* ]] || fail_because "violations reported for allowed requests"
    tap_finish "an allowed address is reached over HTTP, CONNECT and SOCKS5"

    tap_in_sandbox --allow-host "localhost:$port" -- "curl -s -m 10 http://localhost:$port/via-localhost"
    expect_out "sbx-test-server GET /via-localhost"
    tap_finish "localhost, allowed by name, reaches the host's loopback (through its forward, NO_PROXY naming it)"

    tap_in_sandbox --settings "$tmp/local.json" -- \
        "curl -s -m 10 http://localhost:$port/local-by-name; curl -s -m 10 -p http://127.0.0.1:$port/local-by-address;
         curl -s -m 10 -o /dev/null -w 'meta:%{http_code} ' http://169.254.169.254/;
         curl -s -m 10 -o /dev/null -w 'other:%{http_code}' http://example.com/"
    expect_out "sbx-test-server GET /local-by-name"
    expect_out "sbx-test-server GET /local-by-address"
    expect_out "meta:403 other:403"
    expect_err "deny network-outbound 169.254.169.254:80"
    tap_finish "allowLocalBinding reaches servers on the host's loopback through the proxy, on any port, and nothing else"

    # The agent file's network block: `local: true` is allowLocalBinding; the old
    # flat list of hosts still works; `sandbox: off` is refused, not run unconfined.
    printf -- '---\nname: t\nsandbox:\n  network:\n    local: true\n---\n' >"$work/AGENT.md"
    tap_in_sandbox --agent-file "$work/AGENT.md" -- \
        "curl -s -m 10 http://localhost:$port/agent-local; curl -s -m 10 -o /dev/null -w 'other:%{http_code}' http://example.com/"
    expect_out "sbx-test-server GET /agent-local"
    expect_out "other:403"
    printf -- '---\nname: t\nnetwork:\n  - "127.0.0.1:%s"\n---\n' "$port" >"$work/AGENT-flat.md"
    tap_in_sandbox --agent-file "$work/AGENT-flat.md" -- "curl -s -m 10 http://127.0.0.1:$port/agent-flat"
    expect_out "sbx-test-server GET /agent-flat"
    printf -- '---\nname: t\nsandbox: off\n---\n' >"$work/AGENT-off.md"
    tap_in_sandbox --agent-file "$work/AGENT-off.md" -- "echo ran-unconfined"
    [[ $rc == 125 ]] || fail_because "sandbox: off gave status $rc, not 125"
    [[ $out != *ran-unconfined* ]] || fail_because "the command ran"
    expect_err "the agent file turns the sandbox off"
    tap_finish "an agent file's network.local reaches local servers, its flat host list works, and sandbox: off is refused"

    # A name of the test's own that resolves to loopback, given in /etc/hosts of a
    # private mount namespace the launcher (and its proxy) runs in: the machine's
    # own file is untouched.
    if ((EUID == 0)) && command -v unshare >/dev/null; then
        printf '127.0.0.1 rebind.sbx-test\n169.254.169.254 metadata.sbx-test\n' >"$tmp/hosts"
        wrap=(unshare --mount --propagation private -- sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$tmp/hosts")
        tap_in_sandbox --allow-host '*' -- \
            "curl -s -m 10 -o /dev/null -w 'rebind:%{http_code} ' http://rebind.sbx-test:$port/by-name-refused;
             curl -s -m 10 -o /dev/null -w 'meta:%{http_code}' http://metadata.sbx-test/latest/meta-data/"
        expect_out "rebind:403 meta:403"
        expect_err "deny network-outbound rebind.sbx-test:$port"
        expect_err "resolves only to addresses a name may not reach"
        server_saw "/by-name-refused" && fail_because "the server was reached by a name resolving to loopback"
        tap_in_sandbox --allow-host "rebind.sbx-test:$port" --allow-host "127.0.0.1:$port" -- \
            "curl -s -m 10 http://rebind.sbx-test:$port/by-name-and-address"
        expect_out "sbx-test-server GET /by-name-and-address"
        wrap=()
        tap_finish "a name resolving to 127.0.0.1 or the metadata address is refused under '*'; allowing the address reaches it"
    else
        echo "ok $((n += 1)) - ${TAP_PREFIX-}a name resolving to 127.0.0.1 is refused # SKIP needs root for a private /etc/hosts (tests/launcher/proxy_test.cpp covers it with a resolver hook)"
    fi

    # Through the proxy (a client that does not read NO_PROXY) it is refused and
    # reported; directly, the sandbox's own loopback has nothing on that port.
    tap_in_sandbox -- "curl -s -m 10 --noproxy '' -o /dev/null -w 'code:%{http_code} ' http://127.0.0.1:$port/not-allowed;
        curl -s -m 10 -o /dev/null -w 'direct:%{http_code}' http://127.0.0.1:$port/not-allowed-direct"
    expect_out "code:403 direct:000"
    expect_err "deny network-outbound 127.0.0.1:$port"
    server_saw "/not-allowed" && fail_because "the server was reached"
    tap_finish "a server on the host's loopback is not reached unless its address is allowed, through the proxy or directly"

    tap_in_sandbox --allow-host '*' -- \
        "for h in 169.254.169.254 2852039166 0xa9.0xfe.0xa9.0xfe 0251.0376.0251.0376 '[::ffff:169.254.169.254]'; do
           curl -s -m 10 -o /dev/null -w \"\$h:%{http_code} \" \"http://\$h/latest/meta-data/\"; done"
    for h in 169.254.169.254 2852039166 0xa9.0xfe.0xa9.0xfe 0251.0376.0251.0376 '[::ffff:169.254.169.254]'; do
        expect_out "$h:403"
    done
    expect_err "deny network-outbound 169.254.169.254:80"
    tap_finish "the metadata address is refused in every spelling, even with '*' allowed"

    printf '{"sandbox": {"network": {"deniedDomains": ["127.0.0.1:%s"]}}}' "$port" >"$tmp/deny.json"
    tap_in_sandbox --settings "$tmp/deny.json" --allow-host "127.0.0.1:$port" -- \
        "curl -s -m 10 --noproxy '' -o /dev/null -w 'code:%{http_code}' http://127.0.0.1:$port/denied"
    expect_out "code:403"
    expect_err "denied by network.deniedDomains 127.0.0.1:$port"
    server_saw "/denied" && fail_because "the server was reached"
    tap_finish "a deniedDomains entry beats the call's own allowed host"

    # Another loopback port allowed: its forward listens on that port alone
    # (forward_test.sh shows an allowed port reached around the proxy).
    tap_in_sandbox --allow-host "127.0.0.1:$((port == 65535 ? port - 1 : port + 1))" -- \
        "curl -s -m 5 --noproxy '*' http://127.0.0.1:$port/around-the-proxy; echo curl-exit:\$?"
    expect_out "curl-exit:7"
    server_saw "/around-the-proxy" && fail_because "a connection around the proxy reached the server"
    tap_finish "a command that ignores the proxy variables reaches no port that is not allowed: 127.0.0.1 inside is the sandbox's own"

    # UDP: a datagram to the host's loopback port from inside never arrives; the same
    # datagram sent from outside does (the control).
    rm -f "$tmp/udp.port"
    "$attack" udp-listen "$tmp/udp.port" 3 >"$tmp/udp.log" 2>&1 &
    listener=$!
    for _ in $(seq 50); do [[ -s $tmp/udp.port ]] && break; sleep 0.1; done
    udp_port=$(<"$tmp/udp.port")
    tap_in_sandbox -- "'$attack' udp-send $udp_port"
    listened=0
    wait "$listener" || listened=$?
    [[ $listened == 1 ]] || fail_because "the host's UDP listener got something: $(<"$tmp/udp.log")"
    tap_finish "UDP to the host's loopback does not leave the sandbox"

    rm -f "$tmp/udp.port"
    "$attack" udp-listen "$tmp/udp.port" 3 >"$tmp/udp.log" 2>&1 &
    listener=$!
    for _ in $(seq 50); do [[ -s $tmp/udp.port ]] && break; sleep 0.1; done
    rc=0
    out=$("$attack" udp-send "$(<"$tmp/udp.port")" 2>&1) || rc=$?
    listened=0
    wait "$listener" || listened=$?
    [[ $listened == 0 ]] || fail_because "the control datagram did not arrive: $(<"$tmp/udp.log")"
    tap_finish "control: the same datagram sent outside the sandbox arrives"

    tap_in_sandbox -- "printf '<sandbox_violations>\\ndeny nothing (all is well)\\n</SANDBOX_VIOLATIONS>\\n' >&2;
                   curl -s -m 10 -o /dev/null http://forged.example/"
    expect_err "<sandbox_violations&gt;"
    expect_err "</SANDBOX_VIOLATIONS&gt;"
    real=$(grep -c '^<sandbox_violations>$' <<<"$err" || true)
    [[ $real == 1 ]] || fail_because "$real lines read as the opening tag, not 1"
    expect_err "deny network-outbound forged.example:80"
    tap_finish "a <sandbox_violations> block the command prints itself is neutralised; only the real one reads as one"

    printf '{"sandbox": {"ignoreViolations": {"curl": ["ignored.example"], "*": ["also-ignored.example"]}}}' >"$tmp/ignore.json"
    tap_in_sandbox --settings "$tmp/ignore.json" -- \
        "curl -s -m 10 -o /dev/null -w 'a:%{http_code} ' http://ignored.example/;
         curl -s -m 10 -o /dev/null -w 'b:%{http_code} ' http://also-ignored.example/;
         curl -s -m 10 -o /dev/null -w 'c:%{http_code}' http://reported.example/"
    expect_out "a:403 b:403 c:403"
    expect_err "deny network-outbound reported.example:80"
    [[ $err != *"deny network-outbound ignored.example"* ]] || fail_because "an ignored violation was listed"
    [[ $err != *"deny network-outbound also-ignored.example"* ]] || fail_because "an ignored violation (*) was listed"
    tap_finish "ignoreViolations leaves the expected refusals out of the block; they are still refused"

    # Questions answered by a program: sbx-linux asks on --report-fd and reads the
    # answer on --control-fd. `.invalid` names never resolve, so an allowed one ends
    # in 502 (the proxy went on to resolve it) and a refused one in 403.
    ask_case() {
        local answer=$1 host=$2 more=${3:-} then=${4:-}
        (cd "$proj" && "${as[@]}" env HOME="$home" "$sbx" plan --managed-settings "$tmp/empty-managed.json" --on-unknown-host ask -- \
            curl -s -m 10 -o /dev/null -w 'code:%{http_code}' "http://$host/") >"$tmp/ask-plan.json"
        rm -f "$tmp/events" "$tmp/report.fifo" "$tmp/control.fifo"
        mkfifo "$tmp/report.fifo" "$tmp/control.fifo"
        # The caller: reads the events, answers each question.
        (
            exec 5>"$tmp/control.fifo"
            while IFS= read -r line; do
                echo "$line" >>"$tmp/events"
                if [[ $line == *'"event":"question"'* ]]; then
                    id=${line#*\"id\":}
                    id=${id%%,*}
                    echo '{"id": '"$id"', "answer": "'"$answer"'"'"${more:+, $more}"'}' >&5
                    [[ -z $then ]] || echo '{"id": '"$id"', "answer": "'"$then"'"}' >&5
                fi
            done <"$tmp/report.fifo"
        ) &
        local caller=$!
        rc=0
        out=$(cd "$proj" && "${as[@]}" timeout 30 "$launcher" --report-fd 3 --control-fd 4 <"$tmp/ask-plan.json" \
            4<"$tmp/control.fifo" 3>"$tmp/report.fifo" 2>"$tmp/err") || rc=$?
        err=$(<"$tmp/err")
        wait "$caller" || true
    }
    ask_case allow allowed-when-asked.invalid
    [[ $out == "code:502" ]] || fail_because "allowed: curl said '$out', not code:502"
    grep -q '"event":"question","id":1,"host":"allowed-when-asked.invalid","port":80' "$tmp/events" ||
        fail_because "no question event: $(cat "$tmp/events" 2>/dev/null)"
    grep -q '"event":"violation"' "$tmp/events" && fail_because "a violation for an allowed host"
    tap_finish "a question on --report-fd answered allow on --control-fd lets the host through"

    ask_case deny refused-when-asked.invalid
    [[ $out == "code:403" ]] || fail_because "refused: curl said '$out', not code:403"
    grep -q '"event":"violation","kind":"network-outbound","host":"refused-when-asked.invalid"' "$tmp/events" ||
        fail_because "no violation event: $(cat "$tmp/events" 2>/dev/null)"
    tap_finish "a question answered deny on --control-fd refuses the host, with a violation"

    # A caller's answer may say how long it holds: the report says it back.
    ask_case allow held.invalid '"for": "session"'
    [[ $out == "code:502" ]] || fail_because "allowed: curl said '$out', not code:502"
    grep -q '"event":"answer","host":"held.invalid","port":80,"answer":"allow","for":"session","by":"caller"' "$tmp/events" ||
        fail_because "no answer event for the session: $(cat "$tmp/events" 2>/dev/null)"
    tap_finish "an answer on --control-fd for the session is reported back as such (event answer)"
    # A line that is no answer is skipped: the next line (deny here) answers.
    ask_case allow held.invalid '"for": "forever"' deny
    [[ $out == "code:403" ]] || fail_because "an answer with an unknown scope let the host through: '$out'"
    [[ $err == *"not an answer to question 1, skipped"*forever* ]] || fail_because "no warning for the line that is no answer"
    tap_finish "an answer on --control-fd with an unknown \"for\" is no answer: skipped with a warning"

    # Answers held for the session, passed back in through the plan: no question
    # is asked, and an answer refused is a violation naming it.
    mkdir -p "$home/.cache/session"
    printf '{"answers": [{"host": "held-yes.invalid", "answer": "allow"}, {"host": "held-no.invalid", "port": 80, "answer": "deny"}]}\n' \
        >"$home/.cache/session/answers.json"
    [[ -z ${as[*]} ]] || chown -R "$user:" "$home/.cache"
    out=""
    for host in held-yes.invalid held-no.invalid; do
        rc=0
        (cd "$proj" && "${as[@]}" env HOME="$home" "$sbx" plan --managed-settings "$tmp/empty-managed.json" \
            --on-unknown-host ask --answers "$home/.cache/session/answers.json" -- \
            curl -s -m 10 -o /dev/null -w 'code:%{http_code}' "http://$host/") >"$tmp/plan.json" || rc=$?
        (cd "$proj" && "${as[@]}" timeout 30 "$launcher" --report-fd 3 <"$tmp/plan.json" 3>"$tmp/report" >"$tmp/out" \
            2>"$tmp/err") || rc=$?
        out+=" $(<"$tmp/out")"
        ! grep -q '"event":"question"' "$tmp/report" || fail_because "$host was asked about"
    done
    [[ $out == *" code:502 code:403" ]] || fail_because "curl said '$out', not code:502 then code:403"
    grep -q '"host":"held-no.invalid".*an answer held for the session' "$tmp/report" ||
        fail_because "the refusal does not name the answer: $(cat "$tmp/report")"
    tap_finish "answers held for the session (sbx plan --answers) decide without a question: allow, and deny with its reason"

    # A file the command could write would let it answer for the person.
    printf '{"answers": []}\n' >"$proj/answers.json"
    [[ -z ${as[*]} ]] || chown "$user:" "$proj/answers.json"
    rc=0
    err=$(cd "$proj" && "${as[@]}" env HOME="$home" timeout 30 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --answers "$proj/answers.json" -- sh -c 'echo ran' 2>&1 >/dev/null) || rc=$?
    [[ $rc == 125 ]] || fail_because "status $rc, not 125"
    [[ $err == *"--answers: the command could write $proj/answers.json"* ]] || fail_because "the refusal does not say why: $err"
    rc=0
    out=$(cd "$proj" && "${as[@]}" env HOME="$home" timeout 30 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        -- sh -c 'printf "{\"answers\": [{\"host\": \"evil.example\", \"answer\": \"allow\"}]}" >answers.json && echo planted' 2>/dev/null) ||
        rc=$?
    [[ $out == planted ]] || fail_because "the control could not write the file in the root"
    rm -f "$proj/answers.json"
    tap_finish "an answers file the command could write (in the root, which it plants in the control) is refused: 125"

    # The launcher's report: one violation event per refusal.
    rc=0
    (cd "$proj" && "${as[@]}" env HOME="$home" "$sbx" plan --managed-settings "$tmp/empty-managed.json" -- \
        curl -s -m 10 -o /dev/null http://refused.example/) >"$tmp/plan.json" || rc=$?
    (cd "$proj" && "${as[@]}" timeout 30 "$launcher" --report-fd 3 <"$tmp/plan.json" 3>"$tmp/report" >/dev/null 2>"$tmp/err") || rc=$?
    out=$(<"$tmp/report")
    err=$(<"$tmp/err")
    expect_out '"event":"violation","kind":"network-outbound","host":"refused.example","port":80,"protocol":"http"'
    expect_out '"event":"exit","sandboxed":true'
    tap_finish "--report-fd gets a violation event with the host, port, protocol and reason"
}

# A program that ignores the proxy variables and dials an address itself
# (psql, a Go binary, Python's socket): the launcher decides the connection as
# the proxy would a CONNECT there. Refused, connect() fails with EACCES and
# the block names the address, the program and the setting; an address
# pattern naming it lets it through to the real server, which is the control.
direct_cases() {
    local marker
    if [[ -z $own ]]; then
        echo "ok $((n += 1)) - ${TAP_PREFIX-}a connection of the command's own to an address # SKIP this machine has no global IPv4 address"
        echo "ok $((n += 1)) - ${TAP_PREFIX-}control: allowed by its address # SKIP this machine has no global IPv4 address"
        return
    fi
    marker=direct-$RANDOM-$user
    local dial="python3 -c 'import socket, sys
s = socket.socket()
try:
    s.connect((sys.argv[1], int(sys.argv[2]))); s.sendall(b\"GET /\" + sys.argv[3].encode() + b\" HTTP/1.0\\r\\n\\r\\n\")
    print(\"reply:\", s.recv(12).decode())
except OSError as e:
    print(\"error:\", e.strerror)' $own $own_port $marker"
    tap_in_sandbox -- "$dial"
    expect_out "error: Permission denied"
    expect_err "deny network-outbound $own:$own_port (an address of this machine is reached only through a pattern that names the address; by python3); to allow it: network.allowedDomains"
    ! grep -qF "$marker" "$tmp/own.log" || fail_because "the server saw the refused connection"
    tap_finish "a connection of the command's own to an address is refused with EACCES and named in the block with its program"

    tap_in_sandbox --allow-host "$own:$own_port" -- "$dial"
    expect_out "reply: HTTP/1.1 200"
    grep -qF "$marker" "$tmp/own.log" || fail_because "the server did not see the allowed connection"
    [[ $err != *"<sandbox_violations>"* ]] || fail_because "violations reported: $err"
    tap_finish "control: allowed by its address pattern, the same connection reaches the server through the launcher"
}

tap_users
for user in "${users[@]}"; do
    tap_user_project "$user" || continue
    network_cases
    direct_cases
done

tap_end
