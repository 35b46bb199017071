#!/usr/bin/env bash
# TAP: the weaker sandbox (README, "The weaker sandbox"), where user namespaces
# are refused. Every case runs inside an outer `bwrap --dev-bind / /
# --unshare-user --disable-userns`, which refuses them as Docker's and Ubuntu's
# profiles do, as the current user and, as root with SBX_TEST_USER set, as that
# user too. Without the switch, `sbx run` exits 125 naming it. With it, each
# escape attempt is refused, and each has a control: the same attempt in the
# same outer sandbox with no sbx, which works. The attempts: a write outside the
# root, a read of ~/.ssh, a write of .git/config, a missing protected name made
# (directly, by rename, through a link, by hard link, through a folder of the
# command's, with its name flipped by another thread), .git moved away,
# curl --noproxy '*' to a server on 127.0.0.1, a UDP socket, a Unix socket by
# path to a server outside, the proxy used
# without its secret, a signal to a process outside, something left running,
# another terminal of the user's read or its line discipline set, /dev/tty
# opening the caller's terminal, an ioctl on a device opened inside (ABI 5).
# Also: what the command may do still works (the root's top and folders,
# TMPDIR, the proxy with the address allowed), one session's file and git work
# gives what it gives outside, the report says "mode":"landlock", and one
# warning line names what the mode lacks. Skipped, saying why, where the kernel
# has no Landlock ABI 4 (then the switch must still give 125).
# Usage: weaker_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX PATH-TO-SBX-ATTACK
set -euo pipefail

if (($# != 3)); then
    echo "usage: weaker_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX PATH-TO-SBX-ATTACK" >&2
    exit 2
fi
source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch
marker=sbxweaker-$(basename "$tmp" | tr -dc 'A-Za-z0-9')
bg_pids=()
# stop_and_remove_shm, on exit before $tmp is removed: what the test started is
# killed, and the files it left in /dev/shm removed.
stop_and_remove_shm() {
    local pid
    for pid in "${bg_pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    for pid in $(pgrep -f "$marker" || true); do kill -KILL "$pid" 2>/dev/null || true; done
    rm -rf "/dev/shm/$marker"-*
}
tap_on_exit stop_and_remove_shm

for tool in curl bwrap python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "1..0 # SKIP $tool is not installed (tools/install-deps.sh installs it)"
        exit 0
    fi
done

bin=$tmp/bin
tap_readable_copies "$bin" "$1" "$2" "$3"
cp "$(dirname "${BASH_SOURCE[0]}")/tty_attack.py" "$bin/"
chmod 755 "$bin/tty_attack.py"
# Debian's python3, which the test user can run (a python3 first on the
# caller's PATH may live in root's home).
ttyattack="/usr/bin/python3 $bin/tty_attack.py"
sbx=$bin/sbx
sbx_linux=$bin/sbx-linux
attack=$bin/sbx-attack
conf=$tmp/conf
mkdir "$conf"
echo '{"sandbox": {"enableWeakerNestedSandbox": true}}' >"$conf/weaker.json"
chmod 755 "$conf"
chmod 644 "$conf"/*

# The outer sandbox: user namespaces refused inside, the rest of the machine as it is.
outer=(bwrap --dev-bind / / --unshare-user --disable-userns --)

abi=$(python3 -c '
import ctypes
v = ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1)
print(v if v > 0 else 0)')
echo "# this kernel's Landlock ABI: $abi"

# A server on the host's loopback: every request it answers is a line of its log.
"$attack" http-serve "$tmp/http.port" >"$tmp/http.log" 2>&1 &
bg_pids+=($!)
for _ in $(seq 50); do [[ -s $tmp/http.port ]] && break; sleep 0.1; done
port=$(<"$tmp/http.port")

# weaker ARGS... -- SCRIPT: `sbx run ARGS -- sh -c SCRIPT` as the case's user in
# the outer sandbox, in its project; sets rc, out, err.
weaker() {
    local args=() script
    tap_split "$@"
    rc=0
    (cd "$proj" && "${as[@]}" "${outer[@]}" env HOME="$home" timeout 30 "$sbx" run \
        --managed-settings "$tmp/empty-managed.json" "${args[@]}" -- sh -c "$script") \
        </dev/null >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
}
# plain SCRIPT: the control, the same in the outer sandbox without sbx.
plain() {
    rc=0
    (cd "$proj" && "${as[@]}" "${outer[@]}" env HOME="$home" timeout 30 sh -c "$1") </dev/null >"$work/out" \
        2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
}
on=(--settings "$conf/weaker.json")

tap_users
for who in "${users[@]}"; do
    tap_user_project "$who" || continue
    mkdir -p "$home/.ssh" "$work/outside" "$proj/src"
    echo PRIVATE-KEY >"$home/.ssh/id_rsa"
    echo '# project' >"$proj/README"
    [[ -z ${as[*]} ]] || chown -R "$who:" "$work"

    weaker -- 'echo ran'
    [[ $rc == 125 && $out != *ran* ]] || fail_because "status $rc, expected 125 and nothing run"
    [[ $err == *"enableWeakerNestedSandbox: true"* && $err == *--weaker-sandbox* ]] ||
        fail_because "the message does not name the switch"
    [[ $err == *"user namespaces"* ]] || fail_because "the message does not name the reason"
    tap_finish "without the switch: 125, naming the reason and the switch"

    rc=0
    (cd "$proj" && "${as[@]}" "${outer[@]}" env HOME="$home" timeout 60 "$sbx" doctor) </dev/null >"$work/out" \
        2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
    [[ $rc == 1 ]] || fail_because "sbx doctor exited $rc, not 1"
    [[ $out == *"FAIL user namespaces"* ]] || fail_because "sbx doctor does not fail user namespaces"
    if ((abi >= 4)); then
        [[ $out == *"weaker sandbox: could run here (Landlock ABI $abi)"*"no PID namespace"* ]] ||
            fail_because "sbx doctor does not say the weaker sandbox could run, and what it lacks"
    else
        [[ $out == *"weaker sandbox: cannot run here"* ]] || fail_because "sbx doctor does not say the weaker sandbox cannot run"
    fi
    tap_finish "sbx doctor: user namespaces fail, and whether the weaker sandbox could run here"

    # A kernel without Landlock (a filter answers its first call with ENOSYS):
    # the switch must not run the command at all.
    rc=0
    (cd "$proj" && "${as[@]}" "${outer[@]}" env HOME="$home" timeout 30 "$attack" without-landlock -- "$sbx" run \
        --managed-settings "$tmp/empty-managed.json" "${on[@]}" -- sh -c 'echo ran') </dev/null >"$work/out" \
        2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
    [[ $rc == 125 && $out != *ran* ]] || fail_because "status $rc, expected 125 and nothing run"
    [[ $err == *"Landlock ABI 4"*"no Landlock"* ]] || fail_because "the message does not name Landlock ABI 4"
    tap_finish "with the switch on a kernel without Landlock: 125, naming what it needs"

    if ((abi < 4)); then
        weaker "${on[@]}" -- 'echo ran'
        [[ $rc == 125 && $err == *"Landlock ABI 4"* ]] || fail_because "status $rc, expected 125 naming Landlock ABI 4"
        tap_finish "with the switch below Landlock ABI 4: 125, naming it"
        continue
    fi

    weaker --weaker-sandbox -- 'echo ran; grep CapEff /proc/self/status'
    [[ $rc == 0 && $out == *ran* ]] || fail_because "the command did not run"
    [[ $out == *"CapEff:	0000000000000000"* ]] || fail_because "the command holds capabilities"
    [[ $(grep -c "weaker sandbox" <<<"$err") == 1 && $err == *"no PID namespace"* ]] ||
        fail_because "not one warning line naming what it lacks"
    tap_finish "with --weaker-sandbox: it runs, without capabilities, and one warning line names what it lacks"

    # The launcher's report, for a plan piped to sbx-linux.
    (cd "$proj" && "${as[@]}" "${outer[@]}" env HOME="$home" "$sbx" plan --managed-settings "$tmp/empty-managed.json" "${on[@]}" \
        -- true) >"$work/plan.json" 2>/dev/null || true
    rc=0
    (cd "$proj" && "${as[@]}" "${outer[@]}" env HOME="$home" timeout 30 "$sbx_linux" --report-fd 3 \
        3>"$work/report") <"$work/plan.json" >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/report")
    err=$(<"$work/err")
    [[ $rc == 0 ]] || fail_because "status $rc"
    grep -q '"event":"exit","sandboxed":true,"mode":"landlock","landlock":'"$abi" "$work/report" ||
        fail_because "the report does not say mode landlock"
    tap_finish "the report's exit event: sandboxed, mode landlock, the ABI"

    # Writes.
    weaker "${on[@]}" -- "echo x >'$work/outside/planted' && echo wrote-outside; echo x >>.git/config && echo wrote-config;
        echo x >new-at-top && echo wrote-top; echo x >src/ok && echo wrote-src; echo x >\"\$TMPDIR/t\" && echo wrote-tmp"
    [[ $out != *wrote-outside* && ! -e $work/outside/planted ]] || fail_because "wrote outside the root"
    [[ $out != *wrote-config* ]] && ! grep -q '^x$' "$proj/.git/config" || fail_because "wrote .git/config"
    [[ $out == *wrote-top* && -e $proj/new-at-top ]] || fail_because "could not make a file at the root's top"
    [[ $out == *wrote-src* && $out == *wrote-tmp* ]] || fail_because "could not write the root's folder or TMPDIR"
    rm -f "$proj/new-at-top"
    tap_finish "no write outside the root or to .git/config; the root's top, its folders and TMPDIR write"
    plain "echo x >'$work/outside/planted' && echo wrote-outside; cp .git/config '$work/config'; echo x >>.git/config &&
        echo wrote-config; cp '$work/config' .git/config; echo x >new-at-top && echo wrote-top; rm -f new-at-top"
    [[ $out == *wrote-outside*wrote-config*wrote-top* ]] || fail_because "the control could not write"
    rm -f "$work/outside/planted"
    tap_finish "control: without sbx the same writes work"

    # What git or a shell outside would run: a hook, the git directory moved away.
    weaker "${on[@]}" -- 'echo "#!/bin/sh" >.git/hooks/pre-commit && echo wrote-hook; mv .git moved-git && echo moved-git'
    [[ $out != *wrote-hook* && ! -e $proj/.git/hooks/pre-commit ]] || fail_because "planted a hook"
    [[ $out != *moved-git* && -d $proj/.git ]] || fail_because "moved .git away"
    tap_finish "no hook planted, .git not moved away"
    plain 'echo "#!/bin/sh" >.git/hooks/pre-commit && echo wrote-hook; rm .git/hooks/pre-commit; mv .git moved-git &&
        echo moved-git; mv moved-git .git'
    [[ $out == *wrote-hook*moved-git* ]] || fail_because "the control could not"
    tap_finish "control: without sbx the hook is written and .git moved"

    # Missing protected names (README, "Protected paths"): a file direnv or an
    # MCP host would run, git hooks husky points at, an editor's settings.
    # Made directly, by renaming a folder or file of the command's, through a
    # symbolic link at the last step or on the way, inside a folder made at the
    # top; a hard link to .git/config made where it could be written, or
    # .git/config exchanged with a file of the command's.
    plant='echo x >.envrc && echo made-envrc; echo "{}" >.mcp.json && echo made-mcp
        mkdir d && mv d .husky && echo moved-husky; echo x >f && mv f .envrc && echo moved-envrc
        ln -s "$PWD/src" .vscode && echo linked-vscode; ln -s .envrc to-envrc; echo x >to-envrc && echo through-link
        mkdir -p n; ln -s .. n/up; echo x >n/up/.mcp.json && echo through-folder-link
        ln .git/config n/config && echo x >>n/config && echo linked-config
        echo x >swap; python3 -c "import ctypes, os; l = ctypes.CDLL(None, use_errno=True)
r = l.renameat2(-100, b\"swap\", -100, b\".git/config\", 2)
print(\"exchanged\" if r == 0 else \"exchange-refused\")"
        mv .git moved-git && echo moved-git'
    weaker "${on[@]}" -- "$plant"
    # What the script prints for each attempt that worked.
    planted=(made-envrc made-mcp moved-husky moved-envrc linked-vscode through-link through-folder-link linked-config
        exchanged moved-git)
    for made in "${planted[@]}"; do
        [[ $out != *"$made"* ]] || fail_because "$made"
    done
    [[ ! -e $proj/.envrc && ! -e $proj/.mcp.json && ! -e $proj/.husky && ! -L $proj/.vscode && -d $proj/.git ]] ||
        fail_because "a protected name stands in the root: $(ls -A "$proj" | tr '\n' ' ')"
    ! grep -q '^x$' "$proj/.git/config" || fail_because ".git/config was written"
    [[ -d $proj/n && -e $proj/f && -e $proj/swap ]] || fail_because "the command's own files were not made"
    tap_finish "no missing protected name made: directly, by rename, through a link, inside a folder of the command's; .git/config neither linked nor exchanged"
    rm -rf "$proj/n" "$proj/f" "$proj/d" "$proj/swap" "$proj/to-envrc"
    cp "$proj/.git/config" "$work/config"
    plain "$plant; rm -rf .envrc .mcp.json .husky .vscode n to-envrc swap; [ -d moved-git ] && mv moved-git .git"
    for made in "${planted[@]}"; do
        [[ $out == *"$made"* ]] || fail_because "the control did not get $made"
    done
    cp "$work/config" "$proj/.git/config"
    tap_finish "control: without sbx each of them is made"

    # Under an agent file, an AGENT-<name>.md no path rule covered when the plan
    # was made (Linux refuses paths, not patterns): the broker refuses the
    # pattern's names while the command runs, and says so; bubblewrap's sandbox
    # renames them after (attacks_test.sh).
    printf -- '---\nname: t\n---\n' >"$proj/AGENT.md"
    [[ -z ${as[*]} ]] || chown "$who:" "$proj/AGENT.md"
    agent_plant='echo x >AGENT-evil.md && echo made-file; echo y >notes && mv notes AGENT-moved.md && echo moved
        mkdir AGENT-dir.md && echo made-dir; ln -s notes AGENT-link.md && echo made-link; echo z >AGENT-notes.txt && echo other'
    weaker "${on[@]}" --agent-file "$proj/AGENT.md" -- "$agent_plant"
    for made in made-file moved made-dir made-link; do
        [[ $out != *"$made"* ]] || fail_because "$made"
    done
    [[ $out == *other* ]] || fail_because "a name the pattern does not match was not made"
    [[ $err == *"deny file-access AGENT-evil.md"*"denied by filesystem.denyWrite $proj/AGENT-*.md"* ]] ||
        fail_because "the refusal of AGENT-evil.md is not reported with its rule"
    for made in AGENT-evil.md AGENT-moved.md AGENT-dir.md AGENT-link.md; do
        [[ ! -e $proj/$made && ! -L $proj/$made && ! -e $proj/$made.sbx-disabled ]] || fail_because "$made stands"
    done
    tap_finish "under an agent file, no AGENT-<name>.md made: directly, by rename, as a folder or a link; refused and reported"
    rm -f "$proj/notes" "$proj/AGENT-notes.txt"
    plain "$agent_plant; rm -rf AGENT-evil.md AGENT-moved.md AGENT-dir.md AGENT-link.md AGENT-notes.txt"
    for made in made-file moved made-dir made-link; do
        [[ $out == *"$made"* ]] || fail_because "the control did not get $made"
    done
    rm -f "$proj/AGENT.md"
    tap_finish "control: without sbx each of them is made"

    # The broker reads a path once and the kernel, going on, reads it again: a
    # second thread flips the name between the two readings.
    weaker "${on[@]}" -- "'$attack' flip-create xenvrc .envrc 1500"
    [[ $rc == 1 && $out == *refused* && ! -e $proj/.envrc ]] || fail_because "status $rc: $out"
    tap_finish "a name flipped by another thread while the broker reads it: .envrc never made"
    plain "'$attack' flip-create xenvrc .envrc 50"
    [[ $rc == 0 && -e $proj/.envrc ]] || fail_because "the control made no .envrc (status $rc: $out)"
    rm -rf "$proj/.envrc" "$proj/xenvrc"
    tap_finish "control: without sbx the same threads make .envrc"

    # One session's file and git work, the same inside as outside: the part of
    # tools/agent_session.sh the weaker sandbox can do (it has no loopback of
    # its own for a dev server).
    session='step() { echo "== $*"; "$@" 2>&1; echo "rc=$?"; }
        step mkdir src2 lib; step sh -c "echo int main >src2/main.c"; step mkdir -p lib/a/b
        step sh -c "echo deep >lib/a/b/c.txt"; step sh -c "echo notes >notes.md"
        step sed -i s/project/Project/ README; step cat README; step mv notes.md NOTES.md
        step ln -s NOTES.md notes-link; step cat notes-link; step sh -c "echo more >>NOTES.md"
        step touch empty; step rm empty; step mkfifo fifo; step rm fifo
        step python3 -c "import os; os.truncate(\"NOTES.md\", 3)"; step cat NOTES.md
        step git add -A; step git -c user.name=T -c user.email=t@example.com commit -q -m session
        step git log -1 --format=%s; step git status --porcelain; step rm -r lib; step git mv README README.md
        step git -c user.name=T -c user.email=t@example.com commit -qam rename; step git log --format=%s
        step git status --porcelain; step ls -A; step sh -c "tar c --exclude=./.git . | tar t | sort"'
    saved=$proj
    for side in in out; do
        proj=$work/session-$side
        rm -rf "$proj"
        mkdir -p "$proj"
        (cd "$proj" && git init -q && echo '# project' >README && git add README &&
            git -c user.name=T -c user.email=t@example.com commit -qm start)
        [[ -z ${as[*]} ]] || chown -R "$who:" "$proj"
        if [[ $side == in ]]; then weaker "${on[@]}" -- "$session"; else plain "$session"; fi
        echo "$out" >"$work/session-$side.out"
        [[ $side == out || $rc == 0 ]] || fail_because "status $rc: $err"
    done
    proj=$saved
    diff "$work/session-out.out" "$work/session-in.out" >"$work/session.diff" ||
        fail_because "inside differs from outside: $(head -c 2000 "$work/session.diff")"
    grep -q '^== git log --format=%s$' "$work/session-in.out" && grep -qx rename "$work/session-in.out" ||
        fail_because "the session did not commit"
    tap_finish "a session's file and git work at the root's top gives what it gives outside"

    # Reads.
    weaker "${on[@]}" -- 'cat "$HOME/.ssh/id_rsa"; cat README'
    [[ $out != *PRIVATE-KEY* && $out == *"# project"* ]] || fail_because "~/.ssh readable, or the root not"
    tap_finish "~/.ssh/id_rsa unreadable, the root readable"
    plain 'cat "$HOME/.ssh/id_rsa"'
    [[ $out == *PRIVATE-KEY* ]] || fail_because "the control could not read it"
    tap_finish "control: without sbx ~/.ssh/id_rsa is read"

    # Another terminal of the same user's (a shell, a tmux pane), typed into.
    rm -f "$work/pty-name"
    "${as[@]}" $ttyattack hold "$work/pty-name" 60 &
    holder=$!
    bg_pids+=("$holder")
    for _ in $(seq 50); do [[ -s $work/pty-name ]] && break; sleep 0.1; done
    pts=$(<"$work/pty-name")
    "${as[@]}" sh -c "echo shm-secret >/dev/shm/$marker-$who"
    weaker "${on[@]}" -- "$ttyattack read $pts; $ttyattack setd $pts 27;
        cat /dev/shm/$marker-$who 2>/dev/null; $ttyattack dev-ioctl; echo x >/dev/null && echo null-ok"
    [[ $out != *typed-secret* && $(grep -c 'refused: errno 13' <<<"$out") -ge 2 ]] ||
        fail_because "$pts was read or its line discipline set"
    [[ $out != *shm-secret* ]] || fail_because "another program's /dev/shm was read"
    if ((abi >= 5)); then
        [[ $out == *"ioctl: ok"* ]] && fail_because "a device opened inside took an ioctl (Landlock ABI $abi handles them)"
    fi
    [[ $out == *null-ok* ]] || fail_because "/dev/null could not be written"
    tap_finish "another terminal of the user's is neither read nor set, /dev/shm not read, devices opened inside take no ioctl (ABI 5+)"
    plain "cat /dev/shm/$marker-$who; $ttyattack read $pts; $ttyattack setd $pts 27 &&
        $ttyattack setd $pts 0; $ttyattack dev-ioctl"
    [[ $out == *typed-secret* ]] || fail_because "the control did not read what was typed"
    [[ $out == *shm-secret* ]] || fail_because "the control did not read /dev/shm"
    [[ $out == *"setd: ok"* && $out == *"ioctl: ok"* ]] || fail_because "the control could not set the line discipline or the ioctl"
    tap_finish "control: without sbx the same process reads what is typed there and sets its line discipline"
    kill "$holder" 2>/dev/null || true
    wait "$holder" 2>/dev/null || true
    rm -f "/dev/shm/$marker-$who"

    # The caller's terminal by name: sbx under a terminal (its controlling
    # terminal), the command's streams none.
    rc=0
    rm -f "$work/tty.out"
    (cd "$proj" && $ttyattack term 0 -- "${as[@]}" "${outer[@]}" sh -c "exec env HOME='$home' timeout 30 \
        '$sbx' run --managed-settings '$tmp/empty-managed.json' ${on[*]} -- $ttyattack read /dev/tty \
        </dev/null >'$work/tty.out' 2>&1") >/dev/null 2>&1 </dev/null || rc=$?
    out=$(cat "$work/tty.out" 2>/dev/null || true)
    [[ $out == *"refused: errno 6"* ]] || fail_because "/dev/tty opened the caller's terminal"
    tap_finish "/dev/tty does not open the caller's terminal (a session of its own, ENXIO)"
    rc=0
    rm -f "$work/tty.out"
    (cd "$proj" && $ttyattack term 0 -- "${as[@]}" "${outer[@]}" sh -c "exec $ttyattack \
        read /dev/tty </dev/null >'$work/tty.out' 2>&1") >/dev/null 2>&1 </dev/null || rc=$?
    out=$(cat "$work/tty.out" 2>/dev/null || true)
    [[ $out == *"read: "* ]] || fail_because "the control could not open /dev/tty"
    tap_finish "control: without sbx the same process opens the caller's terminal by /dev/tty"

    # The launcher's environment (the caller's, secrets and all) through /proc:
    # Landlock refuses ptrace-mode access to a process outside the domain.
    weaker "${on[@]}" -- 'tr "\0" "\n" </proc/$PPID/environ | grep -c = || echo refused'
    [[ $out == *refused* ]] || fail_because "read the launcher's environment: $out"
    tap_finish "the launcher's /proc/PID/environ unreadable"
    plain 'sh -c "tr \"\\0\" \"\\n\" </proc/\$PPID/environ | grep -c =" || echo refused'
    [[ $out != *refused* && $out -gt 0 ]] || fail_because "the control could not read its parent's environment"
    tap_finish "control: without sbx a process reads its parent's environment"

    # The network.
    weaker "${on[@]}" --allow-host "127.0.0.1:$port" -- "curl -s -m 5 --noproxy '*' http://127.0.0.1:$port/$marker-direct-$who;
        echo direct=\$?; curl -s -m 5 http://127.0.0.1:$port/$marker-proxied-$who; echo proxied=\$?;
        python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)' 2>/dev/null && echo udp-made"
    grep -q "$marker-direct-$who" "$tmp/http.log" && fail_because "the server saw the direct connection"
    grep -q "$marker-proxied-$who" "$tmp/http.log" || fail_because "the proxied request did not reach the server"
    [[ $out != *udp-made* ]] || fail_because "a UDP socket was made"
    [[ $err == *"deny network-outbound 127.0.0.1:$port (a connection of its own, past the proxy"*"; by curl)"* ]] ||
        fail_because "the direct connection is not in the block: $err"
    tap_finish "curl --noproxy '*' to 127.0.0.1 refused and reported, through the proxy with the address allowed served, no UDP"
    plain "curl -s -m 5 --noproxy '*' http://127.0.0.1:$port/$marker-control-$who >/dev/null; python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)' && echo udp-made"
    grep -q "$marker-control-$who" "$tmp/http.log" || fail_because "the control's direct request did not arrive"
    [[ $out == *udp-made* ]] || fail_because "the control made no UDP socket"
    tap_finish "control: without sbx the direct connection and a UDP socket work"

    # git's ssh: no ssh_config can be bound here, so GIT_SSH_COMMAND names the
    # ProxyCommand, whose relay presents the proxy's secret. Run as ssh would
    # run it (%h and %p filled in), it carries a request to the allowed server;
    # to one not allowed, the proxy refuses it (403, not 407: the secret passed).
    relay="eval \"set -- \$GIT_SSH_COMMAND\"; pc=\${3#ProxyCommand }
        printf 'GET /$marker-relay-$who HTTP/1.0\\r\\n\\r\\n' | eval \"\$(printf '%s' \"\$pc\" | sed 's/%h/127.0.0.1/; s/%p/$port/')\""
    weaker "${on[@]}" --allow-host "127.0.0.1:$port" -- "echo \"\$GIT_SSH_COMMAND\"; $relay"
    want_line "^ssh -o 'ProxyCommand '.*' --connect %h %p'\$"
    want_out "HTTP/1.1 200"
    grep -q "$marker-relay-$who" "$tmp/http.log" || fail_because "the relayed request did not reach the server"
    weaker "${on[@]}" -- "$relay"
    want_status 1
    want_err "the sandbox's proxy refused 127.0.0.1:$port: 403"
    tap_finish "git's ssh gets a ProxyCommand in GIT_SSH_COMMAND, whose relay passes the proxy's secret to an allowed host only"

    # A Unix socket by path to a server outside (the user's agent, a daemon's socket).
    rm -f "$work/sock" "$work/ready"
    "${as[@]}" "$attack" unix-serve "$work/sock" "$work/ready" >"$work/unix.log" 2>&1 &
    server=$!
    for _ in $(seq 50); do [[ -e $work/ready ]] && break; sleep 0.1; done
    weaker "${on[@]}" -- "'$attack' unix-connect '$work/sock'"
    [[ $rc == 1 && $out == *"refused: EACCES"* ]] || fail_because "status $rc: not refused with EACCES: $out"
    sleep 0.2
    grep -q 'accepted a connection' "$work/unix.log" && fail_because "the server outside accepted a connection"
    [[ $err == *"deny unix-socket $work/sock (no Unix socket is open to the command; by sbx-attack); to allow it: network.allowUnixSockets"* ]] ||
        fail_because "the refusal is not in the block: $err"
    tap_finish "no Unix socket by path to a server outside; the block names it"
    # Listed, it is reached, and a link the command makes to it too; nothing else.
    printf '{"sandbox": {"enabled": true, "enableWeakerNestedSandbox": true, "network": {"allowUnixSockets": ["%s"]}}}' \
        "$work/sock" >"$work/listed.json"
    chmod 644 "$work/listed.json"
    weaker --settings "$work/listed.json" -- "'$attack' unix-connect '$work/sock'; ln -s '$work/sock' \"\$TMPDIR/l\";
        '$attack' unix-connect \"\$TMPDIR/l\"; python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"\\0sbx-weaker\")' 2>&1 | tail -1"
    sleep 0.2
    [[ $(grep -c 'accepted a connection' "$work/unix.log") == 2 ]] || fail_because "the listed socket was not reached twice: $out"
    [[ $out == *PermissionError* && $err == *"deny unix-socket @sbx-weaker (an abstract Unix socket is the host's"* ]] ||
        fail_because "an abstract socket, the host's here, was not refused and reported: $out $err"
    tap_finish "a socket allowUnixSockets lists is reached, by a link too; an abstract one (the host's) is refused"
    plain "'$attack' unix-connect '$work/sock'"
    [[ $rc == 0 ]] || fail_because "the control could not connect (status $rc)"
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    tap_finish "control: without sbx the same connection is made"

    # The proxy from outside, without the secret and with it.
    (cd "$proj" && "${as[@]}" "${outer[@]}" env HOME="$home" timeout 30 "$sbx" run \
        --managed-settings "$tmp/empty-managed.json" "${on[@]}" --allow-host "127.0.0.1:$port" \
        -- sh -c "echo \"\$HTTP_PROXY\" >src/proxy-url; for i in \$(seq 200); do [ -e src/go ] && break; sleep 0.1; done") \
        </dev/null >/dev/null 2>"$work/held.err" &
    held=$!
    for _ in $(seq 100); do [[ -s $proj/src/proxy-url ]] && break; sleep 0.1; done
    url=$(cat "$proj/src/proxy-url" 2>/dev/null || true)
    bare=http://127.0.0.1:${url##*@127.0.0.1:}
    code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 -x "$bare" "http://127.0.0.1:$port/$marker-nosecret-$who" || true)
    [[ $code == 407 ]] || fail_because "without the secret the proxy answered $code, not 407"
    grep -q "$marker-nosecret-$who" "$tmp/http.log" && fail_because "the server saw the request without the secret"
    tap_finish "a client outside without the secret is refused (407), and nothing reaches the server"
    code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 -x "$url" "http://127.0.0.1:$port/$marker-secret-$who" || true)
    [[ $code == 200 ]] || fail_because "with the secret the proxy answered $code"
    tap_finish "control: the same client with the secret is served"
    touch "$proj/src/go"
    wait "$held" || fail_because "the command holding the proxy ended with status $?"
    grep -q "the proxy refused 1 client without the command's proxy credentials" "$work/held.err" ||
        fail_because "no warning of the client refused for want of the secret"
    tap_finish "the command holding the proxy ended as it should, warning of the client refused"

    # A process outside, and one left behind.
    "${as[@]}" sleep 60 &
    victim=$!
    weaker "${on[@]}" -- "kill $victim && echo killed; python3 -c 'import time; time.sleep(60)' $marker-left & echo left"
    if ((abi >= 6)); then
        kill -0 "$victim" 2>/dev/null || fail_because "the process outside was killed"
        [[ $out != *killed* ]] || fail_because "kill said it worked"
        tap_finish "no signal to a process outside (Landlock ABI $abi's scope)"
    else
        tap_finish "no signal to a process outside # SKIP Landlock ABI $abi has no signal scope (6)"
    fi
    pgrep -f "$marker-left" >/dev/null && fail_because "what the command left running is still running"
    tap_finish "nothing the command started is left running"
    plain "python3 -c 'import time; time.sleep(60)' $marker-ctl-$who >/dev/null 2>&1 & echo left"
    pgrep -f "$marker-ctl-$who" >/dev/null || fail_because "the control's process did not outlive its shell"
    pkill -f "$marker-ctl-$who" || true
    tap_finish "control: without sbx the same process outlives the shell"
    plain "kill $victim && echo killed"
    [[ $out == *killed* ]] || fail_because "the control could not signal it"
    wait "$victim" 2>/dev/null || true
    tap_finish "control: without sbx the signal is delivered"

    # SIGTERM sent to sbx reaches the command's group here too, whose trap runs;
    # with --grace 0 (the control) the sandbox is killed at once.
    for grace in 10 0; do
        rm -f "$proj/src/trapped"
        rc=0
        (cd "$proj" && "${as[@]}" "${outer[@]}" env HOME="$home" timeout -s TERM 5 "$sbx" run \
            --managed-settings "$tmp/empty-managed.json" "${on[@]}" --grace "$grace" \
            -- sh -c "trap 'echo trapped >src/trapped; exit 7' TERM; sleep 60 & wait") </dev/null >"$work/out" \
            2>"$work/err" || rc=$?
        [[ $rc == 124 ]] || fail_because "status $rc, not timeout's 124"
        if ((grace > 0)); then
            [[ $(cat "$proj/src/trapped" 2>/dev/null) == trapped ]] || fail_because "the command's trap did not run"
            tap_finish "SIGTERM from timeout reaches the command's group: its trap runs"
        else
            [[ ! -e $proj/src/trapped ]] || fail_because "the trap ran"
            tap_finish "control: with --grace 0 the sandbox is killed at once, and the trap never runs"
        fi
    done
    rm -f "$proj/src/trapped"
done
tap_end
