#!/usr/bin/env bash
# TAP: loopback forwards, end to end with `sbx run`, the real launcher, bubblewrap
# and its proxy. Clients that ignore the proxy variables (a Python program with a
# socket of its own, Go's http.Get, which never proxies loopback, Node 20's
# fetch) reach a server on the host's loopback through the listener the sandbox
# makes on its own loopback for an allowed 127.0.0.1:PORT, [::1]:PORT or
# localhost:PORT; each connection is still decided by the proxy and a refusal
# reported. Attacks: a forward reaches only its own target, nothing outside the
# sandbox can connect to it, a port not allowed gets none. Controls: the same
# programs outside reach the server; inside without the entry they do not.
# Every case runs as the current user and, when that is root and SBX_TEST_USER
# names a user, again as that user.
# Usage: forward_test.sh SBX SBX-LINUX
set -euo pipefail

sbx=$(realpath "${1:?usage: forward_test.sh SBX SBX-LINUX}")
launcher=$(realpath "${2:?usage: forward_test.sh SBX SBX-LINUX}")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../tap.sh"
tap_scratch
trap 'exit 130' INT TERM HUP  # this test's own: 130 on TERM too, and on HUP
servers=()
holder=
# stop_servers: on exit, before $tmp is removed, the port holder and the servers
# are killed and waited for.
stop_servers() {
    local pid
    [[ -z $holder ]] || kill "$holder" 2>/dev/null || true
    for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${servers[@]}"; do wait "$pid" 2>/dev/null || true; done
}
tap_on_exit stop_servers

# ---- The programs ----------------------------------------------------------------

# A server on the host's 127.0.0.1 and, where the machine has it, ::1, on one
# free port: each request is answered "forward-test NAME FAMILY METHOD PATH" and
# logged. Usage: server.py NAME PORT-FILE LOG
cat >"$tmp/server.py" <<'PY'
import os, socket, sys, threading
name, port_file, log = sys.argv[1], sys.argv[2], sys.argv[3]
lock = threading.Lock()
def serve(sock, family):
    while True:
        c, _ = sock.accept()
        threading.Thread(target=answer, args=(c, family), daemon=True).start()
def answer(c, family):
    with c:
        c.settimeout(10)
        data = b""
        try:
            while b"\r\n\r\n" not in data and len(data) < 65536:
                got = c.recv(4096)
                if not got:
                    break
                data += got
        except OSError:
            return
        words = data.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
        line = "forward-test %s %s %s %s" % (name, family, words[0], words[1] if len(words) > 1 else "-")
        with lock, open(log, "a") as f:
            f.write(line + "\n")
        body = (line + "\n").encode()
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
for _ in range(50):
    v4 = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    v4.bind(("127.0.0.1", 0))
    port = v4.getsockname()[1]
    v6 = None
    try:
        v6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        v6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        v6.bind(("::1", port))
    except OSError as e:
        if v6 is not None:
            v6.close()
        v6 = None
        if e.errno == 98:  # the port is taken on ::1: another one
            v4.close()
            continue
    break
for s, fam in ((v4, "v4"), (v6, "v6")):
    if s is not None:
        s.listen(64)
        threading.Thread(target=serve, args=(s, fam), daemon=True).start()
with open(port_file + ".tmp", "w") as f:
    f.write("%d %s\n" % (port, "v6" if v6 is not None else "v4-only"))
os.rename(port_file + ".tmp", port_file)
threading.Event().wait()
PY

# A client with a socket of its own, no proxy: GET PATH from HOST:PORT, the
# reply's body, or "closed-empty" (accepted and closed), or "error: ERRNO".
# Usage: client.py HOST PORT PATH [RAW-FIRST-LINE]
cat >"$tmp/client.py" <<'PY'
import errno, socket, sys
host, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
first = sys.argv[4] if len(sys.argv) > 4 else "GET %s HTTP/1.0" % path
try:
    s = socket.create_connection((host, port), timeout=10)
except OSError as e:
    print("error: %s" % errno.errorcode.get(e.errno, e))
    sys.exit(1)
try:
    s.sendall((first + "\r\nHost: x\r\n\r\n").encode())
    data = b""
    while True:
        got = s.recv(65536)
        if not got:
            break
        data += got
except OSError as e:
    print("error: %s" % errno.errorcode.get(e.errno, e))
    sys.exit(1)
if not data:
    print("closed-empty")
    sys.exit(1)
print(data.split(b"\r\n\r\n", 1)[-1].decode().strip())
PY

# Connects to HOST:PORT, says whether a listener took the connection
# ("inside-accepted": connected, or reset by the proxy once it could not dial
# the target; "inside-refused": nothing listens there), then waits until `go`
# appears. Usage: hold.py HOST PORT GO-FILE READY-FILE
cat >"$tmp/hold.py" <<'PY'
import errno, os, socket, sys, time
host, port, go, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
try:
    s = socket.create_connection((host, port), timeout=10)
    print("inside-accepted")
except OSError as e:
    print("inside-accepted (reset)" if e.errno == errno.ECONNRESET else "inside-refused %s" % e)
open(ready, "w").close()
for _ in range(200):
    if os.path.exists(go):
        break
    time.sleep(0.05)
PY

# Java's own HTTP client: its default http.nonProxyHosts sends loopback direct.
cat >"$tmp/Get.java" <<'JAVA'
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

public class Get {
    public static void main(String[] args) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(
            HttpRequest.newBuilder(URI.create(args[0])).build(), HttpResponse.BodyHandlers.ofString());
        System.out.print(r.body());
    }
}
JAVA

node_fetch='fetch(process.argv[1]).then(r => r.text()).then(t => process.stdout.write(t),
  e => { console.log("error: " + ((e.cause && e.cause.code) || e)); process.exitCode = 1; })'

# Go's http.Get, built here, outside the sandbox, with a cache of its own.
go_get=
go_why="go is not installed (/usr/bin/go)"
if command -v go >/dev/null; then
    mkdir -p "$tmp/go"
    cat >"$tmp/go/main.go" <<'GO'
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
)

func main() {
	r, err := http.Get(os.Args[1])
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	fmt.Print(string(b))
}
GO
    if (cd "$tmp/go" && env GO111MODULE=off GOCACHE="$tmp/go/cache" GOPATH="$tmp/go/path" go build -o "$tmp/go-get" main.go) \
        >"$tmp/go/build.log" 2>&1; then
        go_get=$tmp/go-get
        chmod 755 "$go_get"
    else
        go_why="go build failed: $(tr '\n' ' ' <"$tmp/go/build.log")"
    fi
fi
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
node_minor=$(node -p 'process.versions.node.split(".")[1]' 2>/dev/null || echo 0)

# ---- The servers -----------------------------------------------------------------

start_server() {  # NAME: it writes "PORT v6" (or "PORT v4-only") to $tmp/NAME.port
    python3 "$tmp/server.py" "$1" "$tmp/$1.port" "$tmp/$1.log" &
    servers+=($!)
    for _ in $(seq 100); do [[ -s $tmp/$1.port ]] && break; sleep 0.05; done
    [[ -s $tmp/$1.port ]] || { echo "Bail out! the $1 server did not start"; exit 1; }
}
start_server main
start_server other
read -r P v6 <"$tmp/main.port"  # whether the machine has ::1: v6
read -r O _ <"$tmp/other.port"
# A port with nothing on the host's loopback: free when this ran.
free=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# ---- Running inside ----------------------------------------------------------------

# outside SCRIPT: the same user, no sandbox.
outside() {
    rc=0
    (cd "$proj" && "${as[@]}" env HOME="$home" timeout 30 sh -c "$1") </dev/null >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
}
expect_out() { [[ $out == *"$1"* ]] || fail_because "stdout lacks '$1'"; }
expect_err() { [[ $err == *"$1"* ]] || fail_because "stderr lacks '$1'"; }
no_violations() { [[ $err != *"<sandbox_violations>"* ]] || fail_because "violations reported for allowed connections"; }
py="python3 $tmp/client.py"

# Over 80 lines: one case after another for a user (each a few lines that end
# in tap_finish), in the order of their TAP numbers, sharing the servers above.
forward_cases() {
    # Controls: outside, every client reaches the server directly.
    outside "$py 127.0.0.1 $P /py-outside; node -e '$node_fetch' http://127.0.0.1:$P/node-outside"
    expect_out "forward-test main v4 GET /py-outside"
    expect_out "forward-test main v4 GET /node-outside"
    tap_finish "control: outside the sandbox, a socket of its own and Node's fetch reach the server"

    # Controls: inside, without the entry, no client reaches it, and nothing is reported
    # (the client never reaches the proxy).
    tap_in_sandbox -- "$py 127.0.0.1 $P /py-none; node -e '$node_fetch' http://127.0.0.1:$P/node-none"
    expect_out "error: ECONNREFUSED"
    [[ $out != *forward-test* ]] || fail_because "reached without the entry"
    tap_finish "control: inside, without the entry allowed, those clients are refused (ECONNREFUSED)"

    # The settings' allowedDomains.
    printf '{"sandbox": {"network": {"allowedDomains": ["127.0.0.1:%s"]}}}' "$P" >"$work/allow.json"
    tap_in_sandbox --settings "$work/allow.json" -- "$py 127.0.0.1 $P /py-inside"
    [[ $rc == 0 ]] || fail_because "status $rc"
    expect_out "forward-test main v4 GET /py-inside"
    no_violations
    tap_finish "a program with its own socket reaches an allowed 127.0.0.1:PORT (allowedDomains) through the forward"

    # The call's hosts; Node 20's fetch ignores HTTP_PROXY and opens its own socket.
    tap_in_sandbox --allow-host "127.0.0.1:$P" -- "node -e '$node_fetch' http://127.0.0.1:$P/node-inside"
    expect_out "forward-test main v4 GET /node-inside"
    no_violations
    tap_finish "Node's fetch reaches an allowed 127.0.0.1:PORT (--allow-host) through the forward"

    if [[ -n $go_get ]]; then
        outside "$go_get http://127.0.0.1:$P/go-outside"
        expect_out "forward-test main v4 GET /go-outside"
        tap_in_sandbox -- "$go_get http://127.0.0.1:$P/go-none"
        expect_out "connection refused"
        tap_in_sandbox --allow-host "127.0.0.1:$P" -- "$go_get http://127.0.0.1:$P/go-inside"
        expect_out "forward-test main v4 GET /go-inside"
        no_violations
        tap_finish "Go's http.Get (never proxied to loopback) reaches an allowed 127.0.0.1:PORT; refused without it, direct outside"
    else
        echo "ok $((n += 1)) - ${TAP_PREFIX}Go's http.Get through a forward # SKIP $go_why"
    fi

    if command -v java >/dev/null; then
        tap_in_sandbox --allow-host "127.0.0.1:$P" -- "java $tmp/Get.java http://127.0.0.1:$P/java-inside"
        expect_out "forward-test main v4 GET /java-inside"
        no_violations
        tap_finish "Java's HttpClient (loopback never proxied) reaches an allowed 127.0.0.1:PORT through the forward"
    else
        echo "ok $((n += 1)) - ${TAP_PREFIX}Java's HttpClient through a forward # SKIP java is not installed"
    fi

    # localhost:PORT listens on both loopbacks inside; the agent file's network.hosts.
    if [[ $v6 == v6 ]]; then
        printf -- '---\nname: t\nsandbox:\n  network:\n    hosts: ["localhost:%s"]\n---\n' "$P" >"$work/AGENT.md"
        tap_in_sandbox --agent-file "$work/AGENT.md" -- "$py 127.0.0.1 $P /by-v4; $py ::1 $P /by-v6; node -e '$node_fetch' http://localhost:$P/by-name"
        expect_out "GET /by-v4"
        expect_out "GET /by-v6"
        expect_out "GET /by-name"
        no_violations
        tap_in_sandbox --allow-host "127.0.0.1:$P" -- "$py ::1 $P /v6-not-allowed"
        expect_out "error: ECONNREFUSED"
        tap_finish "localhost:PORT (the agent file's network.hosts) is forwarded on 127.0.0.1 and ::1; 127.0.0.1:PORT on 127.0.0.1 only"

        tap_in_sandbox --allow-host "[::1]:$P" -- "$py ::1 $P /v6-literal"
        expect_out "forward-test main v6 GET /v6-literal"
        tap_finish "[::1]:PORT reaches the server's ::1 through a forward on the sandbox's ::1"
    else
        echo "ok $((n += 1)) - ${TAP_PREFIX}localhost:PORT on both loopbacks # SKIP this machine has no ::1"
    fi

    # A refusal: the same entry also in deniedDomains. The forward exists (the
    # connection is accepted) and the proxy refuses it: reset, and reported.
    printf '{"sandbox": {"network": {"allowedDomains": ["127.0.0.1:%s"], "deniedDomains": ["127.0.0.1:%s"]}}}' "$P" "$P" >"$work/deny.json"
    lines_before=$(wc -l <"$tmp/main.log")
    tap_in_sandbox --settings "$work/deny.json" -- "$py 127.0.0.1 $P /denied"
    expect_out "error: ECONNRESET"
    expect_err "<sandbox_violations>"
    expect_err "deny network-outbound 127.0.0.1:$P (denied by network.deniedDomains 127.0.0.1:$P"
    (($(wc -l <"$tmp/main.log") == lines_before)) || fail_because "the server saw a request"
    tap_finish "an allowed entry also in deniedDomains: the forward's connection is reset and listed in <sandbox_violations>"

    # The report: a violation event with protocol "forward".
    (cd "$proj" && "${as[@]}" env HOME="$home" "$sbx" plan --managed-settings "$tmp/empty-managed.json" \
        --settings "$work/deny.json" -- python3 "$tmp/client.py" 127.0.0.1 "$P" /reported) >"$work/plan.json"
    grep -q '"forwards":\[{"listen":"127.0.0.1","port":'"$P"',"target":"127.0.0.1","targetPort":'"$P" "$work/plan.json" ||
        fail_because "sbx plan does not list the forward"
    rc=0
    (cd "$proj" && "${as[@]}" timeout 30 "$launcher" --report-fd 3 <"$work/plan.json" 3>"$work/report" >"$work/out" 2>"$work/err") || rc=$?
    out=$(<"$work/report")
    err=$(<"$work/err")
    expect_out '"event":"violation","kind":"network-outbound","host":"127.0.0.1","port":'"$P"',"protocol":"forward","rule":"127.0.0.1:'"$P"'"'
    expect_out '"event":"exit","sandboxed":true'
    tap_finish "sbx plan lists network.forwards, and --report-fd gets the forward's refusal with protocol forward"

    # Attack: through a forward, another port or host. The forward leads to its
    # own target whatever the client sends: a CONNECT to the other server is
    # answered by the main one, which logs it.
    tap_in_sandbox --allow-host "127.0.0.1:$P" -- \
        "$py 127.0.0.1 $P - 'CONNECT 127.0.0.1:$O HTTP/1.1'; $py 127.0.0.1 $P - 'GET http://127.0.0.1:$O/absolute HTTP/1.1'"
    expect_out "forward-test main v4 CONNECT 127.0.0.1:$O"
    expect_out "forward-test main v4 GET http://127.0.0.1:$O/absolute"
    [[ $out != *"forward-test other"* ]] || fail_because "the other server was reached"
    tap_finish "attack: a forward cannot be steered to another port (CONNECT, absolute URL): its own target answers"

    # Attack: a port not allowed gets no listener; control: outside it is there.
    tap_in_sandbox --allow-host "127.0.0.1:$P" -- "$py 127.0.0.1 $O /other; $py 127.0.0.2 $P /other-address"
    [[ $out == *"error: ECONNREFUSED"*"error: ECONNREFUSED"* ]] || fail_because "another port or address was not refused"
    [[ $out != *forward-test* ]] || fail_because "reached a server not allowed"
    outside "$py 127.0.0.1 $O /other-outside"
    expect_out "forward-test other v4 GET /other-outside"
    tap_finish "attack: a port (or loopback address) not allowed has no listener inside; control: outside it answers"

    # Attack: the forward's listener from outside. Allowed, with nothing on the
    # host at that port: inside, a listener takes the connection (the sandbox's;
    # the proxy then resets it, since nothing answers on the host); outside, at
    # the same moment, the same port refuses.
    rm -f "$proj/ready" "$proj/go"
    (cd "$proj" && "${as[@]}" env HOME="$home" timeout 30 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --allow-host "127.0.0.1:$free" -- python3 "$tmp/hold.py" 127.0.0.1 "$free" "$proj/go" "$proj/ready") \
        </dev/null >"$work/hold.out" 2>"$work/hold.err" &
    holder=$!
    for _ in $(seq 200); do [[ -e $proj/ready ]] && break; sleep 0.05; done
    outside_says=$(python3 "$tmp/client.py" 127.0.0.1 "$free" /from-outside 2>&1 || true)
    "${as[@]}" touch "$proj/go"
    wait "$holder" || true
    holder=
    rm -f "$proj/ready" "$proj/go"
    out=$(<"$work/hold.out")
    err=$(<"$work/hold.err")
    expect_out "inside-accepted"
    [[ $outside_says == "error: ECONNREFUSED" ]] || fail_because "outside, the port said '$outside_says'"
    control=$(python3 "$tmp/client.py" 127.0.0.1 "$P" /control-outside 2>&1 || true)
    [[ $control == *"forward-test main v4 GET /control-outside"* ]] || fail_because "control: outside, the server said '$control'"
    tap_finish "attack: the forward's port is inside the sandbox: outside, the same port refuses while the command is connected"

    # A port below 1024: no forward (the sandbox cannot listen there), a warning.
    tap_in_sandbox --allow-host "127.0.0.1:80" -- "$py 127.0.0.1 80 /low"
    expect_out "error: ECONNREFUSED"
    expect_err "127.0.0.1:80 gets no loopback forward"
    tap_finish "a port below 1024 gets no forward, and the plan says so"

    # A listener the stage cannot make stops the run before the command, naming
    # the entry: a plan edited to forward port 80, which no sandbox can listen on.
    (cd "$proj" && "${as[@]}" env HOME="$home" "$sbx" plan --managed-settings "$tmp/empty-managed.json" \
        --allow-host "127.0.0.1:$P" -- sh -c 'echo command-ran') >"$work/plan.json"
    sed -e 's/"port":'"$P"',"target":"127.0.0.1","targetPort":'"$P"',"why":"[^"]*"/"port":80,"target":"127.0.0.1","targetPort":80,"why":"the edited entry"/' \
        "$work/plan.json" >"$work/plan80.json"
    rc=0
    (cd "$proj" && "${as[@]}" timeout 30 "$launcher" <"$work/plan80.json" >"$work/out" 2>"$work/err") || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
    grep -q '"port":80,' "$work/plan80.json" || fail_because "the plan was not edited"
    [[ $rc == 125 ]] || fail_because "status $rc, not 125"
    [[ $out != *command-ran* ]] || fail_because "the command ran"
    expect_err "cannot listen on 127.0.0.1:80 inside the sandbox for the forward of the edited entry: Permission denied"
    tap_finish "a forward's listener that cannot be made stops the run before the command (125), naming the entry"

    # The variables for tools that read their own.
    tap_in_sandbox -- 'echo "node=$NODE_USE_ENV_PROXY grpc=$grpc_proxy java=${JAVA_TOOL_OPTIONS-unset}"; java -version 2>&1 | head -1'
    [[ $out == *"node=1 grpc=http://127.0.0.1:"* ]] || fail_because "NODE_USE_ENV_PROXY or grpc_proxy missing"
    expect_out "java=unset"
    expect_out 'openjdk version "'
    tap_finish "the command gets NODE_USE_ENV_PROXY=1 and grpc_proxy; no JAVA_TOOL_OPTIONS, and java -version starts with its version"

    if ((node_major >= 24 || (node_major == 22 && node_minor >= 21))); then
        tap_in_sandbox --allow-host "localhost:$P" -- "node -e '$node_fetch' http://localhost:$P/node-env-proxy"
        expect_out "GET /node-env-proxy"
        tap_finish "Node's fetch of a name goes through the proxy under NODE_USE_ENV_PROXY"
    else
        echo "ok $((n += 1)) - ${TAP_PREFIX}Node's fetch through NODE_USE_ENV_PROXY # SKIP node $node_major.$node_minor ignores NODE_USE_ENV_PROXY (fetch honours it from 24.0 and 22.21)"
    fi
}

tap_users
for user in "${users[@]}"; do
    tap_user_project "$user" || continue
    forward_cases
done
tap_end
