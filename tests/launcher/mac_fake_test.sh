#!/usr/bin/env bash
# TAP: sbx-mac's own work around Seatbelt, run here with a stand-in for
# sandbox-exec (fake-sandbox-exec.sh, compiled into the test build
# sbx-mac-fake-seatbelt). The stand-in confines nothing; what is tested is what
# sbx-mac does itself: the proxy on 127.0.0.1 and its variables, the profile it
# hands over naming the proxy's ports, the report, stderr scanning, the
# <sandbox_violations> block, ending the command's whole process group, cleaning
# up after a signal, the command's own terminal. Usage: mac_fake_test.sh SBX SBX-MAC-FAKE-SEATBELT SBX-ATTACK
set -euo pipefail

sbx=$(realpath "${1:?usage: mac_fake_test.sh SBX SBX-MAC-FAKE SBX-ATTACK}")
mac=$(realpath "${2:?usage: mac_fake_test.sh SBX SBX-MAC-FAKE SBX-ATTACK}")
attack=$(realpath "${3:?usage: mac_fake_test.sh SBX SBX-MAC-FAKE SBX-ATTACK}")
source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch
server=
# On exit, before $tmp is removed: the server and the test's `sleep 3017` are killed.
tap_on_exit '[[ -z $server ]] || kill "$server" 2>/dev/null'
tap_on_exit 'pkill -f "sleep 3017" 2>/dev/null'

if ! command -v curl >/dev/null; then
    echo "1..0 # SKIP curl is not installed (tools/install-deps.sh installs it)"
    exit 0
fi

home=$tmp/home
proj=$tmp/project
tmpd=$tmp/tmp
mkdir -p "$home" "$proj" "$tmpd"
git init -q "$proj"

"$attack" http-serve "$tmp/http.port" >"$tmp/http.log" 2>&1 &
server=$!
for _ in $(seq 50); do [[ -s $tmp/http.port ]] && break; sleep 0.1; done
port=$(<"$tmp/http.port")

# in_sandbox ARGS... -- SCRIPT: `sbx run --launcher FAKE ARGS -- sh -c SCRIPT`.
in_sandbox() {
    local args=() script
    tap_split "$@"
    rc=0
    (cd "$proj" && HOME=$home TMPDIR=$tmpd SBX_FAKE_SEATBELT_SAVE=$tmp/profile.sb timeout 30 "$sbx" run \
        --managed-settings "$tmp/empty-managed.json" --launcher "$mac" "${args[@]}" -- sh -c "$script") \
        </dev/null >"$tmp/out" 2>"$tmp/err" || rc=$?
    out=$(<"$tmp/out")
    err=$(<"$tmp/err")
}
expect_out() { [[ $out == *"$1"* ]] || fail_because "stdout lacks '$1'"; }
expect_err() { [[ $err == *"$1"* ]] || fail_because "stderr lacks '$1'"; }
nothing_left() { [[ -z $(ls -A "$tmpd") ]] || fail_because "left in TMPDIR: $(ls -A "$tmpd")"; }

in_sandbox --allow-host "127.0.0.1:$port" -- \
    "echo \"proxy=\$HTTP_PROXY\"; curl -s -m 10 http://127.0.0.1:$port/through-proxy;
     curl -s -m 10 -o /dev/null -w 'refused:%{http_code}' http://example.com/"
expect_out "sbx-test-server GET /through-proxy"
expect_out "refused:403"
expect_err "deny network-outbound example.com:80"
# The loopback forwards are Linux's: here the command shares the host's loopback.
expect_err "no loopback forwards on macOS (127.0.0.1:$port)"
proxy_port=$(sed -n 's|^proxy=http://sbx:[0-9a-f]\{32\}@127.0.0.1:\([0-9]*\)$|\1|p' <<<"$out")
[[ -n $proxy_port ]] || fail_because "HTTP_PROXY is not http://sbx:SECRET@127.0.0.1:PORT (32 hex digits)"
first_proxy=$(sed -n 's|^proxy=||p' <<<"$out")
grep -qF "(allow network-outbound (remote ip \"localhost:$proxy_port\"))" "$tmp/profile.sb" 2>/dev/null ||
    fail_because "the profile does not open the proxy's port $proxy_port"
grep -qF "\"$proj\"" "$tmp/profile.sb" 2>/dev/null || fail_because "the profile does not name the root"
nothing_left
tap_finish "the proxy on 127.0.0.1 decides hosts; the profile handed to sandbox-exec opens just its ports"

# Other programs of the machine reach those ports too: the proxy serves only
# clients that present the command's secret, which its proxy variables carry,
# fresh for each command. A client without it is no violation, but counted.
in_sandbox --allow-host "127.0.0.1:$port" -- \
    "echo \"proxy=\$HTTP_PROXY\"; echo \"socks=\$ALL_PROXY\";
     curl -s -m 10 -x \"\$ALL_PROXY\" http://127.0.0.1:$port/through-socks;
     curl -s -m 10 -o /dev/null -w 'bare:%{http_code}' -x \"http://\${HTTP_PROXY##*@}\" http://127.0.0.1:$port/bare-http;
     curl -s -m 10 -x \"socks5h://\${ALL_PROXY##*@}\" http://127.0.0.1:$port/bare-socks || echo ' bare-socks:refused'"
second_proxy=$(sed -n 's|^proxy=||p' <<<"$out")
[[ $(sed -n 's|^socks=socks5h://sbx:\([0-9a-f]*\)@127.0.0.1:[0-9]*$|\1|p' <<<"$out") == "$(sed -n 's|^http://sbx:\([0-9a-f]*\)@.*|\1|p' <<<"$second_proxy")" ]] ||
    fail_because "ALL_PROXY does not carry HTTP_PROXY's secret"
expect_out "sbx-test-server GET /through-socks"
expect_out "bare:407"
expect_out "bare-socks:refused"
expect_err "sbx: warning: the proxy refused 2 clients without the command's proxy credentials"
[[ $err != *"deny network-outbound"* ]] || fail_because "a client without the secret was reported as a violation"
! grep -q "bare" "$tmp/http.log" || fail_because "a request without the secret reached the server"
[[ -n $first_proxy && ${first_proxy%@*} != "${second_proxy%@*}" ]] || fail_because "two commands got one secret"
nothing_left
tap_finish "the proxy serves only clients with the command's secret (407, SOCKS refusal, a warning), fresh for each command"

# git's ssh: Seatbelt binds no file, so GIT_SSH_COMMAND names `sbx-mac --connect`
# as ssh's ProxyCommand, whose relay presents the command's secret. Run as ssh
# would run it (%h and %p filled in), it carries a request to the allowed
# server; to one not allowed, the proxy refuses it (403, not 407).
relay="eval \"set -- \$GIT_SSH_COMMAND\"; pc=\${3#ProxyCommand }
    printf 'GET /through-relay HTTP/1.0\\r\\n\\r\\n' | eval \"\$(printf '%s' \"\$pc\" | sed 's/%h/127.0.0.1/; s/%p/$port/')\""
in_sandbox --allow-host "127.0.0.1:$port" -- "echo \"\$GIT_SSH_COMMAND\"; $relay"
expect_out "ssh -o 'ProxyCommand '\\''$(realpath "$mac")'\\'' --connect %h %p'"
expect_out "sbx-test-server GET /through-relay"
in_sandbox -- "$relay"
[[ $rc == 1 ]] || fail_because "the refused relay exited $rc, not 1"
expect_err "sbx-mac: the sandbox's proxy refused 127.0.0.1:$port: 403"
# The caller's own ssh for git is kept.
GIT_SSH_COMMAND="ssh -v" in_sandbox -- 'echo "git-ssh=$GIT_SSH_COMMAND"'
expect_out "git-ssh=ssh -v"
tap_finish "git's ssh gets sbx-mac --connect as its ProxyCommand (GIT_SSH_COMMAND), which passes the secret to an allowed host only"

# With a settings file (the empty managed one, and one that lifts ~/.aws), the
# credential stores are still in the profile, under HOME and the account's home.
echo '{"sandbox": {"filesystem": {"allowRead": ["~/.aws"]}}}' >"$tmp/lift-aws.json"
in_sandbox --settings "$tmp/lift-aws.json" -- "true"
account_home=$(getent passwd "$(id -u)" | cut -d: -f6)
for store in "$home/.ssh" "$account_home/.ssh" "$account_home/.aws"; do
    grep -qF "(deny file-read* (subpath \"$store\"))" "$tmp/profile.sb" 2>/dev/null ||
        fail_because "the profile does not hide $store"
done
grep -qF "(allow file-read* (require-all (subpath \"$home/.aws\") (subpath \"$home/.aws\")))" "$tmp/profile.sb" \
    2>/dev/null || fail_because "the profile does not lift $home/.aws where the allowRead names it"
expect_err "filesystem.allowRead ~/.aws lifts the built-in denial of ~/.aws"
nothing_left
tap_finish "with settings files the profile still hides the credential stores; an allowRead naming one lifts it"

rc=0
(cd "$proj" && HOME=$home TMPDIR=$tmpd "$sbx" plan --managed-settings "$tmp/empty-managed.json" -- \
    sh -c 'exit 6') >"$tmp/plan.json"
(cd "$proj" && timeout 20 "$mac" --report-fd 3 <"$tmp/plan.json" 3>"$tmp/report" >/dev/null 2>"$tmp/err") || rc=$?
out=$(<"$tmp/report")
[[ $rc == 6 ]] || fail_because "status $rc, not 6"
expect_out '{"event":"exit","sandboxed":true,"status":6}'
tap_finish "the command's status, and an exit event saying it ran sandboxed"

in_sandbox -- "echo \"touch: cannot touch '.bashrc': Read-only file system\" >&2; echo done"
expect_out done
expect_err "deny file-access .bashrc (touch: cannot touch '.bashrc': Read-only file system)"
tap_finish "file refusals the command prints are read from its standard error, as on Linux"

# The caller's descriptors: only those --pass-fd names reach the command.
rc=0
(cd "$proj" && exec 7</dev/null 9</dev/null && HOME=$home TMPDIR=$tmpd timeout 30 "$sbx" run \
    --managed-settings "$tmp/empty-managed.json" --launcher "$mac" --pass-fd 9 -- "$attack" fds) \
    </dev/null >"$tmp/out" 2>"$tmp/err" || rc=$?
out=$(<"$tmp/out")
err=$(<"$tmp/err")
[[ $rc == 0 ]] || fail_because "status $rc, not 0 (sbx-attack fds saw nothing beyond 0-2)"
expect_out "open beyond 0-2: 9"
[[ $out != *" 7"* ]] || fail_because "the caller's descriptor 7 reached the command"
nothing_left
tap_finish "the command gets 0-2 and what --pass-fd names (9), not the caller's 7"

in_sandbox -- "sleep 3017 >/dev/null 2>&1 & echo started"
expect_out started
sleep 0.3
if pgrep -f "sleep 3017" >/dev/null; then fail_because "a background process outlived the command"; fi
nothing_left
tap_finish "what the command leaves running in its process group ends with it"

rc=0
(cd "$proj" && HOME=$home TMPDIR=$tmpd "$sbx" plan --managed-settings "$tmp/empty-managed.json" -- \
    sh -c 'sleep 3017 & sleep 3017') >"$tmp/plan.json"
(cd "$proj" && exec "$mac" <"$tmp/plan.json" >/dev/null 2>&1) &
launcher=$!
for _ in $(seq 50); do pgrep -f "sleep 3017" >/dev/null && break; sleep 0.1; done
kill -TERM "$launcher"
wait "$launcher" || rc=$?
[[ $rc == 143 ]] || fail_because "sbx-mac ended with status $rc, not 143 (SIGTERM)"
sleep 0.3
if pgrep -f "sleep 3017" >/dev/null; then fail_because "the command survived SIGTERM to sbx-mac"; fi
nothing_left
tap_finish "SIGTERM to sbx-mac ends the command's group, removes TMPDIR, and sbx-mac dies of it"

rc=0
(cd "$proj" && exec "$mac" <"$tmp/plan.json" >/dev/null 2>&1) &
launcher=$!
for _ in $(seq 50); do pgrep -f "sleep 3017" >/dev/null && break; sleep 0.1; done
kill -KILL "$launcher"
wait "$launcher" 2>/dev/null || true
for _ in $(seq 30); do pgrep -f "sleep 3017" >/dev/null || break; sleep 0.1; done
if pgrep -f "sleep 3017" >/dev/null; then fail_because "the command survived SIGKILL to sbx-mac"; fi
for _ in $(seq 30); do [[ -z $(ls -A "$tmpd") ]] && break; sleep 0.1; done
nothing_left
tap_finish "SIGKILL to sbx-mac: its reaper ends the command's group and removes TMPDIR"

# The command's terminal: run from one, the command gets a pseudo-terminal of
# its own, as under sbx-linux (tests/attacks/pty_driver.py types into bash -i).
driver=$(cd "$(dirname "${BASH_SOURCE[0]}")/../attacks" && pwd)/pty_driver.py
if command -v python3 >/dev/null && command -v bash >/dev/null; then
    for mode in jobs ctrl-c ctrl-z resize exit sigterm sigkill; do
        # bash -i ignores the SIGTERM sbx passes it, as outside: killed after --grace.
        grace=()
        [[ $mode != sigterm ]] || grace=(--grace 1)
        rc=0
        out=$(cd "$proj" && HOME=$home TMPDIR=$tmpd TERM=xterm python3 "$driver" "$mode" -- "$sbx" run \
            --managed-settings "$tmp/empty-managed.json" --launcher "$mac" "${grace[@]}" -- bash --norc --noprofile -i 2>&1) ||
            rc=$?
        [[ $rc == 0 ]] || fail_because "$mode: $(grep '^problem' <<<"$out" | tr '\n' ' ')"
    done
    for _ in $(seq 30); do [[ -z $(ls -A "$tmpd") ]] && break; sleep 0.1; done
    nothing_left
    tap_finish "run from a terminal the command gets one of its own: job control, Ctrl-C, Ctrl-Z, resizes, raw mode, and the modes back after exit, SIGTERM and SIGKILL"
else
    n=$((n + 1))
    echo "ok $n - the command's own terminal # SKIP python3 or bash is not installed"
fi

# The limits sbx-mac holds: the timeout (the TERM trap runs), CPU time and
# file size, each with its line and 124 (the command's rlimits are set before
# sandbox-exec, here the fake, runs it).
in_sandbox --limit timeoutSeconds=1 --grace 5 -- "trap 'echo trapped; exit 3' TERM; sleep 30 & wait"
want_status 124
expect_out trapped
expect_err "limit timeoutSeconds 1s: the command ran that long and was sent SIGTERM (set by --limit timeoutSeconds on the command line;"
in_sandbox --limit cpuSeconds=1 -- "while :; do :; done"
want_status 124
expect_err "limit cpuSeconds 1s: the command used that much CPU time and was ended (SIGXCPU)"
in_sandbox --limit fileSizeMiB=1 -- 'head -c 2097152 /dev/zero >"$TMPDIR/f"'
want_status 124
expect_err "limit fileSizeMiB 1MiB: the command wrote a file up to that size and was ended (SIGXFSZ)"
[[ $err != *"does not hold"* ]] || fail_because "a warning about limits it holds: $err"
in_sandbox -- 'head -c 2097152 /dev/zero >"$TMPDIR/f" && wc -c <"$TMPDIR/f"'
want_status 0
expect_out 2097152
nothing_left
tap_finish "sbx-mac holds the timeout (its TERM trap runs), CPU time and file size: each its line and 124 (control: the writer writes 2 MiB without the limit)"

# Those it does not hold are named when asked for, once; sbx's defaults
# (processes, TMPDIR's size), which no one asked for, are not.
in_sandbox --limit memoryMiB=512 --limit processes=100 --limit timeoutSeconds=60 -- "echo ran"
expect_out ran
expect_err "warning: sbx-mac does not hold these limits (memoryMiB, processes): the command runs without them"
in_sandbox -- "echo ran"
[[ $err != *"does not hold"* ]] || fail_because "a warning about limits no one asked for: $err"
tap_finish "sbx-mac names the limits it does not hold, those asked for alone"

tap_end
