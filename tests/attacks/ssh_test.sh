#!/usr/bin/env bash
# TAP: ssh through the sandbox, end to end with `sbx run`, the real launcher,
# bubblewrap and its proxy, against an sshd this test starts on a high port of
# the host's loopback (openssh-server's, with a host key and authorized_keys of
# its own; tools/install-deps.sh --tests unpacks it). The client's key lives in
# an ssh-agent the case's user runs; its known_hosts in the case's home, where
# the rest of ~/.ssh stays hidden.
#   - git push over ssh reaches the server through the port's loopback forward;
#     ssh, git clone and git fetch reach it by name through the ProxyCommand sbx
#     binds into /etc/ssh/ssh_config (the control: ProxyCommand=none fails);
#   - not allowed, the connection is refused and named in the block, on the
#     sandbox's loopback and through the proxy alike;
#   - the agent is reached only where its socket is listed;
#   - ~/.ssh/known_hosts is readable and read-only, the private key beside it
#     hidden; a settings deny of ~/.ssh (the control) hides known_hosts too.
# Every case runs as the current user and, when that is root and SBX_TEST_USER
# names a user, again as that user. sshd runs as a user other than root (as
# root it would need its privilege separation user and /run/sshd): SBX_TEST_USER
# when root, else the current user. --core (the sanitizer build) runs the cases
# as the current user alone: the second user's pass tests permissions, not the
# launcher's code, which the first pass runs through.
# Usage: ssh_test.sh SBX SBX-LINUX [--core]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../tap.sh"
tap_scratch
sshd_pid=
agent_pid=
stop_daemons() {
    [[ -z $agent_pid ]] || kill "$agent_pid" 2>/dev/null || true
    [[ -z $sshd_pid ]] || kill "$sshd_pid" 2>/dev/null || true
    [[ -z $sshd_pid ]] || wait "$sshd_pid" 2>/dev/null || true
}
tap_on_exit stop_daemons

# The binaries may sit where the test user cannot read (a clone under /root).
tap_readable_copies "$tmp/bin" "${1:?usage: ssh_test.sh SBX SBX-LINUX}" "${2:?usage: ssh_test.sh SBX SBX-LINUX}"
sbx=$tmp/bin/sbx
launcher=$tmp/bin/sbx-linux

sshd=
for candidate in /usr/sbin/sshd /opt/sbx-test-tools/openssh-server/usr/sbin/sshd; do
    if [[ -x $candidate ]]; then
        sshd=$candidate
        break
    fi
done
server_user=$(id -un)
((EUID != 0)) || server_user=${SBX_TEST_USER:-}
why_not=
if [[ -z $sshd ]]; then
    why_not="no sshd (tools/install-deps.sh --tests unpacks openssh-server's)"
elif ! command -v ssh >/dev/null || ! command -v ssh-agent >/dev/null || ! command -v ssh-keygen >/dev/null; then
    why_not="openssh-client is not installed (tools/install-deps.sh --tests installs it)"
elif [[ -z $server_user ]]; then
    why_not="as root, sshd runs as SBX_TEST_USER, which is not set"
fi
if [[ -n $why_not ]]; then
    echo "1..0 # SKIP $why_not"
    exit 0
fi

# ---- The server ------------------------------------------------------------------

srv=$tmp/server
mkdir -p "$srv"
ssh-keygen -q -t ed25519 -N '' -C sbx-test-host -f "$srv/host_key"
ssh-keygen -q -t ed25519 -N '' -C sbx-test-client -f "$srv/client_key"
cp "$srv/client_key.pub" "$srv/authorized_keys"
git init -q --bare "$srv/remote.git"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
free_port=$(free_port)  # where nothing listens, the control's
cat >"$srv/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $srv/host_key
PidFile none
AuthorizedKeysFile $srv/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
EOF
server_as=()
[[ $server_user == "$(id -un)" ]] || server_as=(setpriv --reuid="$(id -u "$server_user")" --regid="$(id -g "$server_user")" --init-groups --)
[[ $server_user == "$(id -un)" ]] || chown -R "$server_user:" "$srv"
chmod 600 "$srv/host_key"
"${server_as[@]}" "$sshd" -D -e -f "$srv/sshd_config" >"$tmp/sshd.log" 2>&1 &
sshd_pid=$!
for _ in $(seq 100); do
    grep -q "Server listening" "$tmp/sshd.log" && break
    sleep 0.05
done
grep -q "Server listening" "$tmp/sshd.log" || {
    echo "Bail out! sshd did not start: $(<"$tmp/sshd.log")"
    exit 1
}
# remote_has SUBJECT: the server's branch of the case's user holds a commit so named.
remote_has() {
    local log
    log=$("${server_as[@]}" git --git-dir "$srv/remote.git" log --format=%s "refs/heads/$who" 2>/dev/null) || return 1
    grep -qxF -- "$1" <<<"$log"
}
remote=ssh://$server_user@127.0.0.1:$port$srv/remote.git
remote_by_name=ssh://$server_user@localhost:$port$srv/remote.git
host_key=$(cut -d' ' -f1,2 "$srv/host_key.pub")

# ---- Each user's client ----------------------------------------------------------

# The case user's home: known_hosts naming the server by address and by name,
# and the private key (which ssh-add reads outside); its agent, holding the key;
# settings that list the agent's socket; ssh told where known_hosts is (ssh
# looks in the account's home, not $HOME) and never to ask.
user_client() {
    mkdir -p "$home/.ssh"
    printf '[127.0.0.1]:%s %s\n[localhost]:%s %s\n' "$port" "$host_key" "$port" "$host_key" >"$home/.ssh/known_hosts"
    cp "$srv/client_key" "$home/.ssh/id_ed25519"
    printf '{"sandbox": {"network": {"allowUnixSockets": ["%s"]}}}' "$work/agent.sock" >"$work/agent.json"
    printf '{"sandbox": {"network": {"allowUnixSockets": ["%s"]}, "filesystem": {"denyRead": ["~/.ssh"]}}}' \
        "$work/agent.sock" >"$work/deny-ssh.json"
    chown -R "$(id -u "$who"):$(id -g "$who")" "$work"
    chmod 600 "$home/.ssh/id_ed25519"
    [[ -z $agent_pid ]] || kill "$agent_pid" 2>/dev/null || true
    rm -f "$work/agent.sock"
    "${as[@]}" ssh-agent -D -a "$work/agent.sock" >/dev/null 2>&1 &
    agent_pid=$!
    for _ in $(seq 100); do
        [[ -S $work/agent.sock ]] && break
        sleep 0.05
    done
    "${as[@]}" env SSH_AUTH_SOCK="$work/agent.sock" ssh-add -q "$home/.ssh/id_ed25519" 2>/dev/null
    export SSH_AUTH_SOCK=$work/agent.sock
    ssh_opts="-o UserKnownHostsFile=$home/.ssh/known_hosts -o BatchMode=yes"
    export GIT_SSH_COMMAND="ssh $ssh_opts"
    git config --file "$proj/.git/config" user.email test@example.com
    git config --file "$proj/.git/config" user.name test
}

commit() { echo "git commit -q --allow-empty -m $1"; }

# Over 80 lines: one case after another for a user, each a few lines that end
# in tap_finish, in the order of their TAP numbers.
ssh_cases() {
    local marker=push-forward-$who
    tap_in_sandbox --settings "$work/agent.json" --allow-host "127.0.0.1:$port" -- \
        "$(commit "$marker") && git push -q $remote HEAD:refs/heads/$who 2>&1 && echo pushed"
    want_status 0
    want_out pushed
    remote_has "$marker" || fail_because "the server does not have the commit"
    [[ $err != *"<sandbox_violations>"* ]] || fail_because "violations reported"
    tap_finish "git push over ssh reaches an sshd on the host's loopback through the allowed port's forward"

    marker=push-name-$who
    tap_in_sandbox --settings "$work/agent.json" --allow-host localhost -- "
grep -c '^ *ProxyCommand .* --connect %h %p\$' /etc/ssh/ssh_config
echo 'Host *' 2>/dev/null >>/etc/ssh/ssh_config || echo config-read-only
ssh $ssh_opts $server_user@localhost -p $port echo reached-by-name
$(commit "$marker") && git push -q $remote_by_name HEAD:refs/heads/$who 2>&1 && echo pushed
git clone -q -b $who $remote_by_name clone 2>&1 && git -C clone log --format=%s -1
git fetch -q $remote_by_name $who 2>&1 && echo fetched
rm -rf clone"
    want_status 0
    want_line '^1$'
    want_out config-read-only
    want_out reached-by-name
    want_out pushed
    want_line "^$marker\$"
    want_out fetched
    remote_has "$marker" || fail_because "the server does not have the commit"
    [[ $err != *"<sandbox_violations>"* ]] || fail_because "violations reported"
    tap_finish "ssh, git push, clone and fetch reach it by name through the proxy, by the ProxyCommand in /etc/ssh/ssh_config"

    tap_in_sandbox --settings "$work/agent.json" --allow-host localhost -- \
        "ssh $ssh_opts -o ProxyCommand=none $server_user@localhost -p $port echo reached 2>&1; echo ssh: \$?"
    want_out "Connection refused"
    want_out "ssh: 255"
    want_no_out reached
    tap_finish "control: the same ssh without the ProxyCommand does not reach it (the sandbox's loopback is its own)"

    marker=push-refused-$who
    tap_in_sandbox --settings "$work/agent.json" -- \
        "$(commit "$marker") && git push -q $remote HEAD:refs/heads/$who 2>&1; echo push: \$?"
    want_out "Connection refused"
    want_out "push: 128"
    want_err "deny network-outbound 127.0.0.1:$port (the sandbox's loopback is its own: nothing listens on this port inside, and the host's server on it is reached only through an allowed entry; by ssh); to allow it: network.allowedDomains"
    ! remote_has "$marker" || fail_because "the server has the refused commit"
    tap_finish "attack: git push over ssh to a port not allowed is refused, and the block names the address and the setting"

    tap_in_sandbox -- "ssh $ssh_opts -p $free_port $server_user@127.0.0.1 true 2>&1; echo ssh: \$?"
    want_out "Connection refused"
    want_out "ssh: 255"
    [[ $err != *"<sandbox_violations>"* ]] || fail_because "a refusal reported where the host has nothing on the port"
    tap_finish "control: to a loopback port where the host has nothing either, the refusal is the kernel's alone, unreported"

    # The command's own server on the port the host's sshd has, tried before it is up.
    tap_in_sandbox -- "python3 -c 'import socket
early = socket.socket().connect_ex((\"127.0.0.1\", $port))
server = socket.socket(); server.bind((\"127.0.0.1\", $port)); server.listen()
print(\"early\", early, \"later\", socket.socket().connect_ex((\"127.0.0.1\", $port)))'"
    want_out "early 111 later 0"
    [[ $err != *"<sandbox_violations>"* ]] || fail_because "the early refusal was reported"
    tap_finish "a refusal on the sandbox's loopback that the command's own server answers later is not reported"

    tap_in_sandbox --settings "$work/agent.json" -- "ssh $ssh_opts git@blocked.invalid echo reached 2>&1; echo ssh: \$?"
    want_out "the sandbox's proxy refused blocked.invalid:22: 403 Forbidden"
    want_out "ssh: 255"
    want_err "deny network-outbound blocked.invalid:22 ("
    tap_finish "attack: ssh to a host by a name not allowed is refused by the proxy and named in the block"

    tap_in_sandbox --allow-host "127.0.0.1:$port" -- \
        "SSH_AUTH_SOCK=$work/agent.sock ssh $ssh_opts $server_user@127.0.0.1 -p $port echo reached 2>&1; echo ssh: \$?"
    want_out "Permission denied (publickey)"
    want_out "ssh: 255"
    want_no_out reached
    want_err "deny unix-socket $work/agent.sock (no Unix socket is open to the command; by ssh)"
    tap_finish "attack: without its socket listed, the ssh-agent is out of reach and the login fails"

    tap_in_sandbox --settings "$work/agent.json" -- "
grep -c '^\[localhost\]' $home/.ssh/known_hosts
cat $home/.ssh/id_ed25519 >/dev/null 2>&1 || echo key-hidden
echo 2>/dev/null >>$home/.ssh/known_hosts || echo known-hosts-read-only"
    want_line '^1$'
    want_out key-hidden
    want_out known-hosts-read-only
    tap_finish "~/.ssh/known_hosts is readable and read-only inside; the private key beside it stays hidden"

    tap_in_sandbox --settings "$work/deny-ssh.json" --allow-host "127.0.0.1:$port" -- \
        "ssh $ssh_opts $server_user@127.0.0.1 -p $port echo reached 2>&1; echo ssh: \$?"
    want_out "Host key verification failed"
    want_out "ssh: 255"
    want_no_out reached
    tap_finish "control: a settings denyRead of ~/.ssh hides known_hosts too, and ssh cannot check the server"
}

tap_users
if [[ ${3:-} == --core && ${#users[@]} -gt 1 ]]; then
    echo "ok $((n += 1)) - as ${users[1]}: every case # SKIP --core (the sanitizer build) runs them as $(id -un) alone"
    users=("${users[0]}")
fi
for user in "${users[@]}"; do
    tap_user_project "$user" || continue
    user_client
    ssh_cases
done

tap_end
