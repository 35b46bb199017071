#!/usr/bin/env bash
# Installs the Debian 12 packages sbx needs to build and test, and only those that
# are missing: with everything present it changes nothing and asks no mirror.
# With --tests, also what the confinement tests run inside the sandbox: python3
# and python3-venv, strace, gdb, iproute2 (whose ip names this machine's
# addresses for the network table), openssh-client (whose ssh-agent and
# ssh-add the attacks test drives through a listed socket, and whose ssh the ssh test runs), the sshd
# of openssh-server (unpacked, not installed: see below) with libwrap0, which it links, vim and less
# (which the terminal test,
# tests/attacks/pty_test.sh, drives with top, git add -p and the REPLs), and the tools of tests/tools (go, ccache,
# npm, cargo), each installed only when its command is missing, whichever
# package provides it (NodeSource's nodejs brings its own npm, which Debian's npm
# would conflict with), and Clang 14 with libFuzzer (clang, libclang-rt-14-dev)
# for tools/test.sh's Clang build and its fuzz suite. Used by tools/setup.sh and,
# with --tests, by tools/test.sh. Runs as root, or through sudo.
set -euo pipefail

packages=(
    build-essential g++ meson ninja-build pkg-config cmake git
    libsimdjson-dev libcli11-dev libexpected-dev doctest-dev libbenchmark-dev
    libseccomp-dev bubblewrap procps util-linux bsdutils curl
)
# With --tests, tools found by their command, "COMMAND PACKAGE": a command with a
# slash must be that file (the tests run Debian's /usr/bin/cargo, not rustup's).
tools=()
case ${1:-} in
    --tests)
        packages+=(python3 python3-venv strace gdb iproute2 openssh-client libwrap0 vim less clang libclang-rt-14-dev)
        tools+=("/usr/bin/go golang-go" "ccache ccache" "npm npm" "/usr/bin/cargo cargo")
        ;;
    '') ;;
    *)
        echo "usage: install-deps.sh [--tests]" >&2
        exit 2
        ;;
esac

# The ssh test (tests/attacks/ssh_test.sh) starts an sshd of its own on a high
# loopback port. Installing openssh-server would also start the system's sshd on
# port 22, enable it at boot and make host keys; so its package is unpacked under
# $sshd_dir instead, which nothing else reads, and the test runs sshd from there.
sshd_dir=/opt/sbx-test-tools/openssh-server
unpack_sshd=false
if [[ ${1:-} == --tests && ! -x /usr/sbin/sshd && ! -x $sshd_dir/usr/sbin/sshd ]]; then
    unpack_sshd=true
fi

missing=()
for p in "${packages[@]}"; do
    if [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) != installed ]]; then
        missing+=("$p")
    fi
done
for t in ${tools[@]+"${tools[@]}"}; do
    cmd=${t% *}
    if [[ $cmd == */* ]]; then
        [[ -x $cmd ]] && continue
    else
        command -v "$cmd" >/dev/null && continue
    fi
    missing+=("${t#* }")
done
if ((${#missing[@]} == 0)) && ! $unpack_sshd; then
    exit 0
fi

as_root=()
if ((EUID != 0)); then
    if ! command -v sudo >/dev/null; then
        echo "install-deps: missing packages: ${missing[*]}; run this as root to install them" >&2
        exit 1
    fi
    as_root=(sudo)
fi

export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
if ((${#missing[@]} > 0)); then
    echo "install-deps: installing ${missing[*]}"
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi
if $unpack_sshd; then
    echo "install-deps: unpacking openssh-server's sshd under $sshd_dir"
    download=$(mktemp -d)
    trap '"${as_root[@]}" rm -rf -- "$download"' EXIT  # apt's files in it are not the caller's
    "${as_root[@]}" chown _apt "$download" 2>/dev/null || true  # apt downloads as _apt where it can
    (cd "$download" && "${as_root[@]}" apt-get download -q openssh-server)
    "${as_root[@]}" mkdir -p "$sshd_dir"
    "${as_root[@]}" dpkg-deb -x "$download"/openssh-server_*.deb "$sshd_dir"
fi
