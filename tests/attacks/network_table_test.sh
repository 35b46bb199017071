#!/usr/bin/env bash
# TAP: one table of host rules and targets, each row decided twice: by
# `sbx explain --host --json` (its finalVerdict) and by the real proxy of
# `sbx run`, reached with real curl over HTTP, CONNECT (curl -p) and SOCKS5
# (socks5h). Both must give the row's answer. A web server of sbx-attack's
# listens on the host's loopback; names come from a private /etc/hosts (a bind
# mount in a mount namespace of the test's own, so root only), under which
# explain runs too, so both resolve alike.
# A refused row: HTTP 403, CONNECT 403, and one violation line for the host
# counting three refusals (one per protocol), the server never reached. An allowed row: no 403, no
# violation; where the server is the target, it saw all three requests. Rows
# whose target is a private address nothing answers (10.255.255.1) end in a
# failed connection when allowed, which is not a 403.
# Every row as root and, with SBX_TEST_USER, as that user.
# Usage: network_table_test.sh SBX SBX-LINUX SBX-ATTACK
set -euo pipefail

sbx=$(realpath "${1:?usage: network_table_test.sh SBX SBX-LINUX SBX-ATTACK}")
launcher=$(realpath "${2:?usage: network_table_test.sh SBX SBX-LINUX SBX-ATTACK}")
attack=$(realpath "${3:?usage: network_table_test.sh SBX SBX-LINUX SBX-ATTACK}")

source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"

if ((EUID != 0)) || ! command -v unshare >/dev/null || ! command -v curl >/dev/null; then
    echo "1..0 # SKIP needs root, unshare and curl: names come from a private /etc/hosts bound in a mount namespace"
    exit 0
fi

tap_scratch
server=
tap_on_exit '[[ -z $server ]] || kill "$server" 2>/dev/null'

"$attack" http-serve "$tmp/http.port" >"$tmp/http.log" 2>&1 &
server=$!
for _ in $(seq 50); do [[ -s $tmp/http.port ]] && break; sleep 0.1; done
port=$(<"$tmp/http.port")

# This machine's own address that is not loopback, if it has one.
own=$(ip -o -4 addr show scope global 2>/dev/null | awk '{sub("/.*", "", $4); print $4; exit}')
private=10.255.255.1  # nothing answers there

{
    # localhost as IPv4 alone: the proxy dials the first address that passes,
    # and the server listens on 127.0.0.1 only.
    echo "127.0.0.1 localhost"
    echo "127.0.0.1 x.localhost"
    echo "127.0.0.1 rebind.sbx-test gitloop.corp.test"
    echo "$private private.sbx-test git.corp.test db.example.test"
    echo "169.254.169.254 metadata.sbx-test"
    [[ -z $own ]] || echo "$own own.sbx-test"
} >"$tmp/hosts"
chmod 644 "$tmp/hosts"
# shellcheck disable=SC2016 # $0 and $@ are the inner shell's
wrap=(unshare --mount --propagation private -- sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$tmp/hosts")
printf '{"sandbox": {"network": {"allowLocalBinding": true}}}' >"$tmp/local.json"
printf '{"sandbox": {"network": {"deniedDomains": ["*"]}}}' >"$tmp/deny-all.json"

# row EXPECT HOST PORT CANONICAL DESCRIPTION -- OPTIONS...: explain and the proxy
# both give EXPECT (allow or deny) for HOST:PORT under OPTIONS (sbx's own:
# --allow-host, --settings, --on-unknown-host; deny unless given). CANONICAL is
# the host as the violation lines name it.
row() {
    local expect=$1 host=$2 tport=$3 canonical=$4 what=$5
    shift 6
    local opts=("$@")
    [[ " ${opts[*]} " == *" --on-unknown-host "* ]] || opts+=(--on-unknown-host deny)
    local tag=row$((n + 1))

    # explain, resolving through the same /etc/hosts, as the same user
    rc=0
    out=$(cd "$proj" && "${wrap[@]}" "${as[@]}" env HOME="$home" "$sbx" explain --managed-settings "$tmp/empty-managed.json" \
        "${opts[@]}" --host "$host:$tport" --json 2>&1) || rc=$?
    err=
    [[ $rc == 0 ]] || fail_because "explain failed with status $rc"
    [[ $out == *"\"finalVerdict\":\"$expect\""* ]] || fail_because "explain's finalVerdict is not $expect"
    local explained=$out

    # the proxy, with real curl over each protocol (--noproxy '': through the
    # proxy even for loopback, which NO_PROXY otherwise sends direct)
    local url="http://$host:$tport/$tag"
    rc=0
    (cd "$proj" && "${wrap[@]}" "${as[@]}" env HOME="$home" timeout 60 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        "${opts[@]}" -- sh -c "
            curl -s -m 3 --noproxy '' -o /dev/null -w 'http:%{http_code} ' '$url-http'
            curl -s -m 3 --noproxy '' -o /dev/null -p -w 'connect:%{http_connect} ' '$url-connect'
            curl -s -m 3 --noproxy '' -o /dev/null -x \"\$ALL_PROXY\" '$url-socks'; echo socks-exit:\$?") \
        </dev/null >"$work/out" 2>"$work/err" || rc=$?
    out="explain: $explained
$(<"$work/out")"
    err=$(<"$work/err")
    local violations
    violations=$(grep -cF "deny network-outbound $canonical:$tport " "$work/err" || true)
    if [[ $expect == deny ]]; then
        [[ $out == *"http:403 "* ]] || fail_because "HTTP was not refused with 403"
        [[ $out == *"connect:403 "* ]] || fail_because "CONNECT was not refused with 403"
        # The same refusal three times is one line of the block, with its count.
        [[ $violations == 1 ]] || fail_because "$violations violation lines for $canonical:$tport, not 1"
        grep -F "deny network-outbound $canonical:$tport " "$work/err" | grep -q ' (3 times)$' ||
            fail_because "the line for $canonical:$tport does not count 3 refusals (HTTP, CONNECT, SOCKS5)"
        if grep -qF "/$tag-" "$tmp/http.log"; then fail_because "the server was reached"; fi
    else
        [[ $out != *"http:403 "* ]] || fail_because "HTTP was refused"
        [[ $out != *"connect:403 "* ]] || fail_because "CONNECT was refused"
        [[ $violations == 0 ]] || fail_because "$violations violation lines for an allowed host"
        if [[ $host != *sbx-test && $host != *corp.test && $host != "$private" ]] || [[ $host == rebind.sbx-test ]]; then
            for p in http connect socks; do
                grep -qF "GET /$tag-$p" "$tmp/http.log" || fail_because "the server did not see the $p request"
            done
        fi
    fi
    tap_finish "$what: $expect, by explain and by the proxy (HTTP, CONNECT, SOCKS5)"
}

table() {
    local P=$port
    row deny localhost "$P" localhost "'*' vs localhost" -- --allow-host '*'
    row deny LOCALHOST. "$P" localhost "'*' vs LOCALHOST." -- --allow-host '*'
    row deny x.localhost "$P" x.localhost "'*' vs x.localhost" -- --allow-host '*'
    row deny 127.0.0.1 "$P" 127.0.0.1 "'*' vs 127.0.0.1" -- --allow-host '*'
    row deny rebind.sbx-test "$P" rebind.sbx-test "'*' vs a name resolving to 127.0.0.1" -- --allow-host '*'
    row deny private.sbx-test "$P" private.sbx-test "'*' vs a name resolving to $private (private)" -- --allow-host '*'
    row deny metadata.sbx-test 80 metadata.sbx-test "'*' vs a name resolving to 169.254.169.254" -- --allow-host '*'
    if [[ -n $own ]]; then
        row deny own.sbx-test "$P" own.sbx-test "'*' vs a name resolving to this machine's $own" -- --allow-host '*'
        row deny "$own" "$P" "$own" "'*' vs this machine's $own" -- --allow-host '*'
    else
        echo "ok $((n += 1)) - ${TAP_PREFIX-}'*' vs this machine's own address # SKIP no global IPv4 address of this machine (or no ip command: tools/install-deps.sh --tests installs iproute2)"
    fi
    row deny db.example.test "$P" db.example.test "'*.example.test' vs a subdomain resolving to $private" -- --allow-host '*.example.test'
    row allow git.corp.test "$P" git.corp.test "exact name vs its private address" -- --allow-host git.corp.test
    row deny gitloop.corp.test "$P" gitloop.corp.test "exact name vs its address 127.0.0.1" -- --allow-host gitloop.corp.test
    row allow 127.0.0.1 "$P" 127.0.0.1 "address pattern 127.0.0.1:PORT" -- --allow-host "127.0.0.1:$P"
    # An address pattern reaches its address by a name that leads there without DNS.
    row allow localhost "$P" localhost "address pattern 127.0.0.1:PORT vs localhost" -- --allow-host "127.0.0.1:$P"
    row allow rebind.sbx-test "$P" rebind.sbx-test "address pattern 127.0.0.1:PORT vs a name /etc/hosts gives 127.0.0.1" -- --allow-host "127.0.0.1:$P"
    row deny db.example.test "$P" db.example.test "address pattern 127.0.0.1:PORT vs a name /etc/hosts gives another address" -- --allow-host "127.0.0.1:$P"
    row allow localhost "$P" localhost "allowLocalBinding vs localhost" -- --settings "$tmp/local.json"
    row deny "$private" "$P" "$private" "allowLocalBinding vs a private address" -- --settings "$tmp/local.json"
    row deny localhost "$P" localhost "--on-unknown-host allow vs localhost" -- --on-unknown-host allow
    row deny "$private" "$P" "$private" "--on-unknown-host allow vs a private address" -- --on-unknown-host allow
    row deny git.corp.test "$P" git.corp.test "deniedDomains '*' vs an allowed exact name" -- --settings "$tmp/deny-all.json" --allow-host git.corp.test
    # Controls: the same targets reached once a pattern names them, so the refusals
    # above are the rules', not a server or name that does not work.
    row allow LOCALHOST. "$P" localhost "control: the name pattern localhost vs LOCALHOST." -- --allow-host localhost
    row allow x.localhost "$P" x.localhost "control: '*.localhost' vs x.localhost" -- --allow-host '*.localhost'
    row allow rebind.sbx-test "$P" rebind.sbx-test "control: '*' and 127.0.0.1:PORT vs a name resolving to 127.0.0.1" -- --allow-host '*' --allow-host "127.0.0.1:$P"
}

# The IANA special-purpose blocks that are not globally reachable: '*' reaches
# none of them, by explain (which names the block) and through the real proxy
# (one run, a 403 for each, each a line of the block); then a control: the
# address pattern naming one reaches the proxy's dial (nothing answers there,
# so no 403 and no line, but a failed connection).
special_ranges() {
    local samples=(192.0.0.170 192.0.0.8 192.0.2.1 192.88.99.1 198.18.0.1 198.19.255.1 198.51.100.1 203.0.113.1
        "[2001::1]" "[2001:2::1]" "[2001:db8::1]" "[3fff::1]" "[64:ff9b:1::1]")
    local a script="" json human
    for a in "${samples[@]}"; do
        json=$(cd "$proj" && "${as[@]}" env HOME="$home" "$sbx" explain --managed-settings "$tmp/empty-managed.json" \
            --allow-host '*' --host "$a:80" --json 2>&1) || true
        [[ $json == *'"finalVerdict":"deny"'* && $json == *'"step":"local-address"'* ]] ||
            fail_because "explain does not refuse $a for '*': $json"
        script+="curl -s -m 3 --noproxy '' -o /dev/null -w '$a:%{http_code} ' 'http://$a:80/'; "
    done
    human=$(cd "$proj" && "${as[@]}" env HOME="$home" "$sbx" explain --managed-settings "$tmp/empty-managed.json" \
        --allow-host '*' --host 198.18.0.1:80 2>&1) || true
    [[ $human == *"a reserved address (benchmarking (RFC 2544)"* ]] || fail_because "explain does not name the block: $human"
    rc=0
    (cd "$proj" && "${as[@]}" env HOME="$home" timeout 60 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --allow-host '*' -- sh -c "$script") </dev/null >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
    for a in "${samples[@]}"; do
        [[ $out == *"$a:403 "* ]] || fail_because "the proxy did not refuse $a with 403"
        grep -qF "deny network-outbound $a:80 (a reserved address" "$work/err" ||
            grep -qF "deny network-outbound $a:80 (a private address" "$work/err" ||
            fail_because "no line of the block for $a"
    done
    tap_finish "'*' reaches none of the special-purpose blocks that are not globally reachable (explain and the proxy)"

    rc=0
    (cd "$proj" && "${as[@]}" env HOME="$home" timeout 60 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --allow-host 198.18.0.1:80 -- curl -s -m 3 --noproxy '' -o /dev/null -w '%{http_code}' http://198.18.0.1:80/) \
        </dev/null >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
    [[ $out != 403 ]] || fail_because "the address pattern did not open 198.18.0.1"
    ! grep -qF "deny network-outbound 198.18.0.1:80" "$work/err" || fail_because "a line of the block for an allowed address"
    tap_finish "control: --allow-host 198.18.0.1:80 lets the proxy dial it"
}

tap_users
for who in "${users[@]}"; do
    tap_user_project "$who" || continue
    table
    special_ranges
done

tap_end
