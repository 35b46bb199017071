#!/usr/bin/env bash
# TAP: everyday tools inside `sbx run`, with the project's tool cache home
# (include/sbx/rules/tool_cache.hpp). Real tools, nothing from the internet: npm from a
# registry this script serves on 127.0.0.1, go with a vendored dependency, pip
# from a local index (the second install from the cache), ccache hitting on a
# second run of the project, cargo building a crate. And the boundaries: the
# user's own ~/.cache and ~/.npm stay read-only, project B cannot write project
# A's cache home, and with --no-tool-cache npm fails as before (the control).
# As root with SBX_TEST_USER set, every case runs again as that user. A tool that
# is missing skips its cases, saying which (tools/install-deps.sh --tests
# installs them).
# Usage: tools_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX
set -euo pipefail
# The caller's ccache switches (a cold CI run sets CCACHE_DISABLE to time the
# build) are not the tools' under test: ccache must cache here.
unset CCACHE_DISABLE CCACHE_READONLY CCACHE_RECACHE

sbx=$(realpath "${1:?usage: tools_test.sh SBX SBX-LINUX}")
launcher=$(realpath "${2:?usage: tools_test.sh SBX SBX-LINUX}")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../tap.sh"
tap_scratch
trap 'exit 130' INT TERM HUP  # this test's own: 130 on TERM too, and on HUP
server_pid=
# stop_server: on exit, before $tmp is removed, the registry server is killed and
# waited for.
stop_server() {
    [[ -z $server_pid ]] || kill "$server_pid" 2>/dev/null || true
    [[ -z $server_pid ]] || wait "$server_pid" 2>/dev/null || true
}
tap_on_exit stop_server

# tap_skip DESCRIPTION WHY: a case that cannot run here, and why.
tap_skip() {
    n=$((n + 1))
    echo "ok $n - ${TAP_PREFIX-}$1 # SKIP $2"
}

# --- what the tools fetch, served on loopback ------------------------------------

www="$tmp/www"
mkdir -p "$www/tarballs" "$www/simple/sbx-tiny-py" "$www/files"
echo "hello from the dev server" >"$www/hello.txt"
python3 "$here/serve.py" "$www" "$tmp/port" "$tmp/requests.log" 2>"$tmp/server.err" &
server_pid=$!
for _ in $(seq 100); do
    [[ -s $tmp/port ]] && break
    sleep 0.05
done
port=$(<"$tmp/port")
registry="http://127.0.0.1:$port"

have_npm=
if command -v npm >/dev/null && command -v node >/dev/null; then
    have_npm=1
    mkdir -p "$tmp/npm-src/sbx-tiny"
    printf '{"name": "sbx-tiny", "version": "1.0.0", "main": "index.js"}\n' >"$tmp/npm-src/sbx-tiny/package.json"
    printf 'module.exports = "tiny from the loopback registry";\n' >"$tmp/npm-src/sbx-tiny/index.js"
    (cd "$tmp/npm-src/sbx-tiny" && npm_config_cache="$tmp/npm-pack-cache" npm pack --silent --pack-destination "$www/tarballs" >/dev/null)
    python3 - "$www" "$registry" <<'PY'
import base64, hashlib, json, sys
www, registry = sys.argv[1:3]
data = open(www + "/tarballs/sbx-tiny-1.0.0.tgz", "rb").read()
version = {"name": "sbx-tiny", "version": "1.0.0", "dist": {
    "tarball": registry + "/tarballs/sbx-tiny-1.0.0.tgz",
    "shasum": hashlib.sha1(data).hexdigest(),
    "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()}}
json.dump({"name": "sbx-tiny", "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": version}},
          open(www + "/sbx-tiny", "w"))
PY
fi

# A wheel built by hand: one module and its metadata.
python3 - "$www" <<'PY'
import base64, hashlib, sys, zipfile
www = sys.argv[1]
name = "sbx_tiny_py-1.0-py3-none-any.whl"
files = {
    "sbx_tiny_py/__init__.py": "GREETING = 'tiny from the local index'\n",
    "sbx_tiny_py-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: sbx-tiny-py\nVersion: 1.0\n",
    "sbx_tiny_py-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: sbx-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
for path, text in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
    record.append(f"{path},sha256={digest},{len(text.encode())}")
record.append("sbx_tiny_py-1.0.dist-info/RECORD,,")
files["sbx_tiny_py-1.0.dist-info/RECORD"] = "\n".join(record) + "\n"
with zipfile.ZipFile(f"{www}/files/{name}", "w") as z:
    for path, text in files.items():
        z.writestr(path, text)
open(f"{www}/simple/sbx-tiny-py/index.html", "w").write(f'<a href="../../files/{name}">{name}</a>\n')
PY
chmod -R a+rX "$www"

# --- the cases --------------------------------------------------------------------

# run_as DIR CMD...: CMD in DIR as the case's user with its HOME and TMPDIR, at
# most 120 seconds; sets $rc, $out and $err.
run_as() {
    local dir=$1
    shift
    rc=0
    (cd "$dir" && "${as[@]}" env HOME="$home" TMPDIR="$tmpd" timeout 120 "$@") </dev/null >"$tmp/out" 2>"$tmp/err" || rc=$?
    out=$(<"$tmp/out")
    err=$(<"$tmp/err")
}

# sbx_in DIR ARGS... -- COMMAND...: `sbx run ARGS` in project DIR.
sbx_in() {
    local dir=$1
    shift
    run_as "$dir" "$sbx" run --managed-settings "$tmp/empty-managed.json" "$@"
}

# git_fixture SUB DIR: a repository at DIR with the repository SUB as a submodule
# and commits on main and topic, the same to the hash wherever it is made (SUB is
# made once).
git_fixture() {
    local sub=$1 dir=$2
    (
        export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid GIT_COMMITTER_NAME=t
        export GIT_COMMITTER_EMAIL=t@example.invalid GIT_AUTHOR_DATE=2026-01-01T00:00:00Z
        export GIT_COMMITTER_DATE=2026-01-01T00:00:00Z HOME=$home
        if [[ ! -e $sub ]]; then
            git init -q -b main "$sub"
            git -C "$sub" commit -q --allow-empty -m sub
        fi
        git init -q -b main "$dir"
        cd "$dir"
        mkdir src
        echo a >src/a.txt
        echo b >b.txt
        git add . && git commit -q -m first
        # On every branch: .gitmodules is protected, so a checkout that would
        # remove or change it fails inside (README, "git").
        git -c protocol.file.allow=always submodule add -q "$sub" sub 2>/dev/null
        git commit -q -m submodule
        git checkout -q -b topic
        echo t >src/t.txt
        git add . && git commit -q -m topic
        git checkout -q main
        echo c >>b.txt
        git commit -q -am second
    )
}

# cache_of DIR: the project's tool cache home, as `sbx policy --json` names it.
cache_of() {
    (cd "$1" && "${as[@]}" env HOME="$home" "$sbx" policy --managed-settings "$tmp/empty-managed.json" --json) |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["toolCacheHome"]["path"] or "")'
}

expect_rc() { [[ $rc == "$1" ]] || fail_because "status $rc, expected $1"; }
expect_out() { [[ $out == *"$1"* ]] || fail_because "stdout lacks '$1'"; }
expect_err() { [[ $err == *"$1"* ]] || fail_because "stderr lacks '$1'"; }
# files_in DIR: how many regular files lie below DIR (0 when it is not there).
files_in() { find "$1" -type f 2>/dev/null | wc -l; }

tap_users
for who in "${users[@]}"; do
    TAP_PREFIX=
    [[ $who == "$(id -un)" ]] || TAP_PREFIX="as $who: "
    base="$tmp/u-$who"
    home="$base/home"
    tmpd="$base/tmp"
    a="$base/project-a"
    b="$base/project-b"
    mkdir -p "$home" "$tmpd" "$a" "$b"
    git init -q "$a"
    git init -q "$b"
    tap_become "$who" "$base" || continue

    cache=$(cache_of "$a")
    [[ $cache == "$home/.cache/sbx/projects/"* ]] || fail_because "project A's tool cache home is '$cache'"
    [[ $(cache_of "$b") != "$cache" ]] || fail_because "projects A and B share a tool cache home"
    [[ ! -e $cache ]] || fail_because "the cache home exists before any run"
    run_as "$a" "$sbx" policy --managed-settings "$tmp/empty-managed.json"
    expect_out "tool cache home: $cache (not made yet)"
    tap_finish "each project has a tool cache home of its own under ~/.cache/sbx/projects, not made before a run"

    # npm: from the registry on loopback, through the proxy.
    npm_install=(npm install --registry "$registry/" --no-audit --no-fund --no-update-notifier sbx-tiny)
    if [[ -n $have_npm ]]; then
        sbx_in "$a" --allow-host "127.0.0.1:$port" -- "${npm_install[@]}"
        expect_rc 0
        [[ $(cat "$a/node_modules/sbx-tiny/package.json" 2>/dev/null) == *'"version": "1.0.0"'* ]] ||
            fail_because "node_modules holds no sbx-tiny 1.0.0"
        (($(files_in "$cache/npm/_cacache") > 0)) || fail_because "npm's cache in the cache home is empty"
        [[ ! -e $home/.npm ]] || fail_because "~/.npm was made"
        # No variable sbx sets makes npm warn (npm 11 warns of every npm_config_
        # variable it does not know, such as pnpm's store-dir).
        [[ $err != *"npm warn"* ]] || fail_because "npm warned: $(grep 'npm warn' <<<"$err")"
        sbx_in "$a" -- node -e 'console.log(require("sbx-tiny"))'
        expect_out "tiny from the loopback registry"
        tap_finish "npm install from a registry on loopback works, its cache in the project's cache home, and npm warns of nothing"

        rm -rf "$b/node_modules"
        sbx_in "$b" --no-tool-cache --allow-host "127.0.0.1:$port" -- "${npm_install[@]}"
        [[ $rc != 0 ]] || fail_because "npm install succeeded without the tool cache"
        [[ $err == *"$home/.npm"* ]] || fail_because "npm's error does not name ~/.npm"
        [[ ! -e $b/node_modules/sbx-tiny ]] || fail_because "the package was installed"
        tap_finish "control: with --no-tool-cache npm fails on the read-only ~/.npm, as before"
    else
        tap_skip "npm install from a registry on loopback" "no npm or node here"
        tap_skip "control: with --no-tool-cache npm fails" "no npm or node here"
    fi

    # go: a module whose dependency is vendored, no proxy, no network.
    if command -v go >/dev/null; then
        app="$a/goapp"
        mkdir -p "$app/vendor/example.com/dep"
        printf 'module example.com/app\n\ngo 1.19\n\nrequire example.com/dep v1.0.0\n' >"$app/go.mod"
        printf 'package main\n\nimport (\n\t"fmt"\n\n\t"example.com/dep"\n)\n\nfunc main() { fmt.Println(dep.Hello()) }\n' >"$app/main.go"
        printf 'package dep\n\nfunc Hello() string { return "hello from the vendored dependency" }\n' >"$app/vendor/example.com/dep/dep.go"
        printf '# example.com/dep v1.0.0\n## explicit\nexample.com/dep\n' >"$app/vendor/modules.txt"
        [[ -z ${as[*]} ]] || chown -R "$who:" "$app"
        # From the project's root: the root is the directory sbx starts in.
        sbx_in "$a" -- env GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local sh -c 'cd goapp && go build -o app . && ./app'
        expect_rc 0
        expect_out "hello from the vendored dependency"
        (($(files_in "$cache/go-build") > 0)) || fail_because "GOCACHE in the cache home is empty"
        [[ ! -e $home/go ]] || fail_because "~/go was made"
        tap_finish "go build of a module with a vendored dependency works, GOCACHE in the cache home"
    else
        tap_skip "go build of a module with a vendored dependency" "no go here (Debian's golang-go)"
    fi

    # pip: a venv in the project, from the local index; the second install from the cache.
    if python3 -c 'import ensurepip, venv' 2>/dev/null; then
        : >"$tmp/requests.log"
        # pip caches HTTP answers only from https origins and trusted hosts.
        pip_install=(venv/bin/pip install --disable-pip-version-check --index-url "$registry/simple/"
            --trusted-host "127.0.0.1:$port" sbx-tiny-py)
        sbx_in "$a" --allow-host "127.0.0.1:$port" -- sh -c "python3 -m venv venv && ${pip_install[*]} &&
            venv/bin/pip uninstall --disable-pip-version-check -y sbx-tiny-py && ${pip_install[*]} &&
            venv/bin/python -c 'import sbx_tiny_py; print(sbx_tiny_py.GREETING)'"
        expect_rc 0
        expect_out "tiny from the local index"
        expect_out "Using cached"
        wheels=$(grep -c '\.whl$' "$tmp/requests.log" || true)
        [[ $wheels == 1 ]] || fail_because "the wheel was fetched $wheels times, expected once"
        (($(files_in "$cache/pip") > 0)) || fail_because "pip's cache in the cache home is empty"
        tap_finish "pip install from a local index works, and the second install comes from the cache home"
    else
        tap_skip "pip install from a local index" "python3 has no venv and ensurepip (Debian's python3-venv)"
    fi

    # ccache: a miss in one run, a hit in the next run of the project.
    if command -v ccache >/dev/null && command -v cc >/dev/null; then
        printf 'int main(void) { return 0; }\n' >"$a/hello.c"
        [[ -z ${as[*]} ]] || chown "$who:" "$a/hello.c"
        sbx_in "$a" -- ccache cc -c hello.c -o hello.o
        expect_rc 0
        sbx_in "$a" -- sh -c 'rm -f hello.o && ccache cc -c hello.c -o hello.o && ccache --print-stats'
        expect_rc 0
        hits=$(awk '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { n += $2 } END { print n + 0 }' <<<"$out")
        ((hits >= 1)) || fail_because "the second run had no cache hit"
        [[ -e $a/hello.o ]] || fail_because "no hello.o"
        [[ ! -e $home/.ccache ]] || fail_because "~/.ccache was made"
        tap_finish "ccache hits on the project's second run: the cache home persists between runs"
    else
        tap_skip "ccache hits on the project's second run" "no ccache or cc here"
    fi

    # cargo: Debian's, with Debian's rustc (rustup's proxies are not the point here).
    if [[ -x /usr/bin/cargo && -x /usr/bin/rustc ]]; then
        crate="$a/tiny"
        mkdir -p "$crate/src"
        printf '[package]\nname = "tiny"\nversion = "0.1.0"\nedition = "2021"\n' >"$crate/Cargo.toml"
        printf 'fn main() { println!("tiny crate built"); }\n' >"$crate/src/main.rs"
        [[ -z ${as[*]} ]] || chown -R "$who:" "$crate"
        sbx_in "$a" -- sh -c 'cd tiny && RUSTC=/usr/bin/rustc exec /usr/bin/cargo build --offline -q'
        expect_rc 0
        [[ -x $crate/target/debug/tiny ]] && out=$("$crate/target/debug/tiny")
        expect_out "tiny crate built"
        [[ ! -e $home/.cargo ]] || fail_because "~/.cargo was made"
        tap_finish "cargo build of a small crate works, CARGO_HOME in the cache home"
    else
        tap_skip "cargo build of a small crate" "no /usr/bin/cargo and /usr/bin/rustc here (Debian's cargo)"
    fi

    # The user's own caches stay read-only; only the project's directory is writable.
    sbx_in "$a" -- sh -c 'touch "$XDG_CACHE_HOME/mine" || exit 9
        touch "$HOME/.cache/theirs" 2>/dev/null && exit 1
        mkdir "$HOME/.npm" 2>/dev/null && exit 2
        mkdir -p "$HOME/go/pkg/mod" 2>/dev/null && exit 3
        touch "$HOME/.cache/sbx/projects/planted" 2>/dev/null && exit 4
        exit 0'
    expect_rc 0
    [[ -e $cache/mine ]] || fail_because "the write to the cache home did not land"
    for p in "$home/.cache/theirs" "$home/.npm" "$home/go" "$home/.cache/sbx/projects/planted"; do
        [[ ! -e $p ]] || fail_because "$p was made"
    done
    tap_finish "writes to ~/.cache, ~/.npm and ~/go are refused; the project's cache home takes them"

    # Another project's run cannot write project A's cache home (its own works: above).
    sbx_in "$b" -- sh -c 'touch "$1/poison" 2>/dev/null && exit 1; mkdir -p "$1/npm/_cacache/x" 2>/dev/null && exit 2; exit 0' sh "$cache"
    expect_rc 0
    [[ ! -e $cache/poison && ! -e $cache/npm/_cacache/x ]] || fail_because "project B wrote into project A's cache home"
    tap_finish "project B's run cannot write project A's cache home"

    # A planted symlink on the way is refused before anything runs.
    bcache=$(cache_of "$b")
    rm -rf "$bcache"
    mkdir -p "$base/elsewhere" "$(dirname "$bcache")"
    ln -s "$base/elsewhere" "$bcache"
    [[ -z ${as[*]} ]] || chown -h "$who:" "$bcache" "$base/elsewhere"
    sbx_in "$b" -- touch ran
    expect_rc 125
    expect_err "a symlink"
    [[ ! -e $b/ran ]] || fail_because "the command ran"
    # The same at launch: a plan made before the link was planted.
    rm -f "$bcache"
    run_as "$b" "$sbx" plan --managed-settings "$tmp/empty-managed.json" -- touch ran
    printf '%s\n' "$out" >"$base/plan.json"
    ln -s "$base/elsewhere" "$bcache"
    [[ -z ${as[*]} ]] || chown -h "$who:" "$bcache"
    run_as "$b" sh -c '"$1" <"$2"' sh "$launcher" "$base/plan.json"
    expect_rc 125
    expect_err "a symlink (sbx follows none on the way)"
    [[ ! -e $b/ran && -z $(ls -A "$base/elsewhere") ]] || fail_because "the command ran, or wrote through the link"
    rm -f "$bcache"
    sbx_in "$b" -- true
    expect_rc 0
    [[ -d $bcache && ! -L $bcache ]] || fail_because "no cache home was made once the link was gone"
    tap_finish "a symlink at the cache home is refused by sbx and by the launcher (status 125); once it is gone the home is made"

    run_as "$a" "$sbx" policy --managed-settings "$tmp/empty-managed.json"
    [[ $out =~ "tool cache home: $cache ("[0-9]+" bytes in "[0-9]+" files)" ]] || fail_because "sbx policy does not give the size"
    tap_finish "sbx policy says where the cache home is and how large it has grown"

    # Git inside as outside (issue 32): the commands agents run, at the root and in
    # a subdirectory, in two repositories made alike (the same commits, to the
    # hash), one outside and one inside; their output, paths aside, is the same.
    git_fixture "$base/gitsub" "$base/git-out"
    git_fixture "$base/gitsub" "$base/git-in"
    [[ -z ${as[*]} ]] || chown -R "$who:" "$base/gitsub" "$base/git-out" "$base/git-in"
    run_as "$base/git-out" bash "$here/git_session.sh"
    outside=${out//$base\/git-out/REPO}
    sbx_in "$base/git-in" -- bash "$here/git_session.sh"
    inside=${out//$base\/git-in/REPO}
    expect_rc 0
    [[ $err != *"<sandbox_violations>"* ]] || fail_because "refusals inside: $err"
    [[ $outside == *"== git diff HEAD"*"+change"* ]] || fail_because "the session outside did not run as planned: $outside"
    [[ $inside == "$outside" ]] || fail_because "inside and outside differ: $(diff <(echo "$outside") <(echo "$inside") | head -40)"
    tap_finish "git at the root and in a subdirectory (diff, show, log, reset with HEAD, rev-parse, status, stash, cherry-pick, rebase, worktree add and list, submodule status): the same output inside as outside"

    # An agent's session (issue 33) in a Node and Python project, once outside and
    # once inside, compared line by line. The only differences allowed, removed
    # from the inside output here once seen: `ls -A` and tar list the five empty
    # read-only placeholder folders that an agent host or an open editor reads
    # while the command runs, and tar the three placeholders in .git whose mere
    # presence would change what git outside does meanwhile (commondir,
    # config.worktree, info/attributes; README, "protected paths").
    if [[ -n $have_npm ]]; then
        for side in out in; do
            p="$base/agent-$side"
            (
                export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid GIT_COMMITTER_NAME=t
                export GIT_COMMITTER_EMAIL=t@example.invalid GIT_AUTHOR_DATE=2026-01-01T00:00:00Z
                export GIT_COMMITTER_DATE=2026-01-01T00:00:00Z HOME=$home
                git init -q -b main "$p"
                cd "$p"
                printf '{"name": "agent-app", "version": "1.0.0", "dependencies": {"sbx-tiny": "1.0.0"}}\n' >package.json
                printf 'module.exports = require("sbx-tiny");\n' >index.js
                printf 'node_modules/\n' >.gitignore
                git add . && git commit -q -m first
            )
            [[ -z ${as[*]} ]] || chown -R "$who:" "$p"
        done
        author=(env "GIT_AUTHOR_NAME=Ana Author" GIT_AUTHOR_EMAIL=ana@example.invalid "GIT_COMMITTER_NAME=Ana Author"
            GIT_COMMITTER_EMAIL=ana@example.invalid GIT_AUTHOR_DATE=2026-01-02T00:00:00Z
            GIT_COMMITTER_DATE=2026-01-02T00:00:00Z)
        session=(bash "$here/agent_session.sh" "$registry" "$here/serve.py" "$www")
        run_as "$base/agent-out" "${author[@]}" "${session[@]}"
        outside=${out//$base\/agent-out/REPO}
        run_as "$base/agent-in" "${author[@]}" "$sbx" run --managed-settings "$tmp/empty-managed.json" \
            --allow-host "127.0.0.1:$port" -- "${session[@]}"
        expect_rc 0
        [[ $err != *"<sandbox_violations>"* ]] || fail_because "refusals inside: $err"
        [[ $err != *GIT_AUTHOR* ]] || fail_because "sbx left out the author's variables: $err"
        inside=${out//$base\/agent-in/REPO}
        for name in .claude .cogitator .cursor .vscode .zed; do
            [[ $inside == *$'\n'"$name"$'\n'* && $inside == *$'\n'"./$name/"$'\n'* ]] ||
                fail_because "no placeholder $name inside: the allowed difference changed"
        done
        for name in commondir config.worktree info/attributes; do
            [[ $inside == *$'\n'"./.git/$name"$'\n'* ]] || fail_because "no placeholder .git/$name inside"
        done
        inside=$(grep -vxE '(\./)?\.(claude|cogitator|cursor|vscode|zed)/?|\./\.git/(commondir|config\.worktree|info/attributes)' <<<"$inside")
        [[ $outside == *"rc=0"* && $outside == *"Ana Author <ana@example.invalid> / Ana Author"* &&
            $outside == *"tiny from the loopback registry"* && $outside == *"hello from the dev server"* ]] ||
            fail_because "the session outside did not run as planned: $outside"
        [[ $(grep -c '^rc=' <<<"$outside") == $(grep -c '^rc=0$' <<<"$outside") ]] ||
            fail_because "a step failed outside: $outside"
        [[ $inside == "$outside" ]] || fail_because "inside and outside differ: $(diff <(echo "$outside") <(echo "$inside") | head -40)"
        tap_finish "an agent's session (ls -A, npm install, a dev server reached by curl, wget, Python, Node and pip, git commit with GIT_AUTHOR_NAME, tar, npm pack): inside as outside but for the placeholders read live, five folders and three files in .git"
    else
        tap_skip "an agent's session inside as outside" "npm or node is not installed (tools/install-deps.sh --tests)"
    fi
done
tap_end
