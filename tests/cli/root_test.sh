#!/usr/bin/env bash
# TAP: the root sbx chooses with no --root (issue 14): the top of the git work
# tree holding the current directory, else the nearest folder with a .claude
# folder, else the current directory; never the home directory or /. For each
# layout, `sbx policy` (text and JSON), `sbx explain` (text and JSON), `sbx plan`
# and `sbx run` must choose the same root and give the same reason, and the
# command must start in the current directory. Then, inside `sbx run` from a
# subdirectory of a real repository, `git add` and `git commit` must work (the
# commit is checked outside), with the control that `--root .` there fails on
# .git/index.lock; and a .git or .claude the search must not take (another
# user's, a symbolic link) is refused, with the control that the same one of the
# user's own is taken. As the current user and, as root with SBX_TEST_USER set,
# as that user too. Needs bash, coreutils, git, python3 and real bubblewrap.
# Usage: root_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX
set -euo pipefail

sbx=$(realpath "${1:?usage: root_test.sh SBX SBX-LINUX}")
launcher=$(realpath "${2:?usage: root_test.sh SBX SBX-LINUX}")
source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch  # by its physical path: sbx prints paths with their symlinks resolved

for tool in git python3; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "1..0 # SKIP $tool is not installed"
        exit 0
    fi
done
# The layouts below are the only projects on the way up from them: a .git or a
# .claude above the temporary directory would be found first.
for d in "$tmp" $(p=$tmp; while p=$(dirname "$p") && [[ $p != / ]]; do echo "$p"; done); do
    if [[ -e $d/.git || -e $d/.claude ]]; then
        echo "1..0 # SKIP $d holds a .git or .claude, so every layout under $tmp would be inside that project"
        exit 0
    fi
done

# at DIR CMD...: CMD in DIR as the case's user, with its HOME and TMPDIR and a
# PATH, nothing else of the caller's environment (whose variables `sbx run` would
# name when it leaves them out); sets $rc, $out and $err.
at() {
    local dir=$1
    shift
    rc=0
    (cd "$dir" && "${as[@]}" env -i PATH="$PATH" HOME="$home" TMPDIR="$work/tmp" timeout 60 "$@") </dev/null >"$work/out" 2>"$work/err" ||
        rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
    parse_out
}
# parse_out: the top-level values of the JSON on stdout into `top` (null as
# "null", an object or array as "<nested>"), read once for every json call;
# nothing when stdout is no JSON object.
declare -A top
parse_out() {
    top=()
    [[ $out == "{"* ]] || return 0
    local key value
    while IFS= read -r -d '' key && IFS= read -r -d '' value; do
        top[$key]=$value
    done < <(python3 -c 'import json,sys
try:
    d = json.loads(sys.stdin.read())
except ValueError:
    sys.exit(0)
for k, v in d.items():
    v = "null" if v is None else "<nested>" if isinstance(v, (dict, list)) else v
    sys.stdout.write("%s\0%s\0" % (k, v))' <<<"$out")
}
# sbx_at DIR SUBCOMMAND ARGS...: sbx SUBCOMMAND with the empty managed settings.
sbx_at() {
    local dir=$1 sub=$2
    shift 2
    at "$dir" "$sbx" "$sub" --managed-settings "$tmp/empty-managed.json" "$@"
}

# json KEY: the top-level KEY of the JSON on stdout (parse_out's), null as "null".
json() {
    if [[ $out != "{"* ]]; then echo "<not JSON>"; return; fi
    echo "${top[$1]-<missing>}"
}

# expect_root CWD ROOT REASON FROM [SBX-OPTION...]: policy, explain, plan and run
# from CWD choose ROOT for REASON (option, git-work-tree, claude-folder,
# current-directory), decided by FROM (a .git, a .claude, or null), all with the
# same words; the command starts in CWD, and run names the root on stderr when
# it is not CWD and no --root was given.
expect_root() {
    local cwd=$1 root=$2 reason=$3 from=$4
    shift 4
    local why given=0
    [[ " $* " != *" --root "* ]] || given=1

    sbx_at "$cwd" policy --json "$@"
    [[ $rc == 0 ]] || fail_because "policy --json: status $rc"
    [[ $(json root) == "$root" ]] || fail_because "policy --json: root $(json root), not $root"
    [[ $(json rootReason) == "$reason" ]] || fail_because "policy --json: rootReason $(json rootReason), not $reason"
    [[ $(json rootFrom) == "$from" ]] || fail_because "policy --json: rootFrom $(json rootFrom), not $from"
    [[ $(json version) == 1 ]] || fail_because "policy --json lost its own keys"
    why=$(json rootWhy)
    [[ -n $why && $why != null ]] || fail_because "policy --json: no rootWhy"
    [[ $reason != git-work-tree || $why == *"$from"* ]] || fail_because "the reason does not name $from: $why"

    sbx_at "$cwd" policy "$@"
    [[ $rc == 0 ]] || fail_because "policy: status $rc"
    [[ $(head -n1 <<<"$out") == "policy for $root: $why" ]] || fail_because "policy's first line: $(head -n1 <<<"$out")"

    sbx_at "$cwd" explain --json "$@" "$cwd"
    [[ $rc == 0 ]] || fail_because "explain --json: status $rc"
    [[ $(json root) == "$root" && $(json rootReason) == "$reason" && $(json rootWhy) == "$why" ]] ||
        fail_because "explain --json: root $(json root), $(json rootReason), $(json rootWhy)"
    sbx_at "$cwd" explain "$@" --on-unknown-host deny --host example.com
    [[ $rc == 0 ]] || fail_because "explain --host: status $rc"
    [[ $(tail -n1 <<<"$out") == "  root $root: $why" ]] || fail_because "explain's last line: $(tail -n1 <<<"$out")"

    sbx_at "$cwd" plan "$@" -- true
    [[ $rc == 0 ]] || fail_because "plan: status $rc: $err"
    [[ $(json root) == "$root" ]] || fail_because "plan: root $(json root)"
    [[ $(json rootWhy) == "$why" ]] || fail_because "plan: rootWhy $(json rootWhy)"
    local cwd_in_plan
    cwd_in_plan=$(python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["command"]["cwd"])' <<<"$out")
    [[ $cwd_in_plan == "$cwd" ]] || fail_because "plan: cwd $cwd_in_plan, not $cwd"

    sbx_at "$cwd" run "$@" -- pwd
    [[ $rc == 0 ]] || fail_because "run: status $rc"
    [[ $out == "$cwd" ]] || fail_because "run: the command started in '$out', not $cwd"
    if [[ $root != "$cwd" && $given == 0 ]]; then
        [[ $err == "sbx: root $root: $why" ]] || fail_because "run's standard error is not the root line: '$err'"
    else
        [[ -z $err ]] || fail_because "run said something although the root is the current directory or named: '$err'"
    fi
}

# A repository as `git init` leaves it, with one commit and its own identity.
new_repo() {
    git init -q "$1"
    git -C "$1" config user.name "sbx root test"
    git -C "$1" config user.email "root-test@example.invalid"
    git -C "$1" commit -q --allow-empty -m "first"
}
# git_out REPO ARGS...: git outside, as the test (root) runs it in the user's repository.
git_out() { git -c safe.directory='*' -C "$@"; }

tap_users
for who in "${users[@]}"; do
    TAP_PREFIX="as $who: "
    work=$tmp/as-$who
    home=$work/home
    mkdir -p "$work/tmp" "$home"

    # The layouts, made before the tree is given to the user.
    new_repo "$work/repo"
    mkdir -p "$work/repo/src/lib"
    git -C "$work/repo" worktree add -q "$work/linked" 2>/dev/null
    mkdir -p "$work/linked/sub"
    new_repo "$work/outer"
    new_repo "$work/outer/vendor/inner"
    mkdir -p "$work/outer/vendor/inner/src"
    mkdir -p "$work/notes/.claude" "$work/notes/a/b"
    echo secret-words >"$work/notes/secret.txt"
    printf '{"sandbox": {"filesystem": {"denyRead": ["/%s/notes/secret.txt"]}}}\n' "$work" >"$work/notes/.claude/settings.json"
    mkdir -p "$work/plain/a/b"
    new_repo "$work/dots"
    mkdir -p "$work/dots/.claude" "$work/dots/proj/sub"
    echo '{}' >"$work/dots/.claude/settings.json"
    new_repo "$work/commit"
    mkdir -p "$work/commit/src/deep"
    mkdir -p "$work/shared/mine" "$work/linkproj/sub" "$work/realgit"
    new_repo "$work/realgit"
    ln -s "$work/realgit/.git" "$work/linkproj/.git"
    tap_become "$who" "$work" || continue

    expect_root "$work/repo/src/lib" "$work/repo" git-work-tree "$work/repo/.git"
    tap_finish "in a subdirectory of a git work tree: its top, from .git"

    expect_root "$work/linked/sub" "$work/linked" git-work-tree "$work/linked/.git"
    [[ -f $work/linked/.git ]] || fail_because "git worktree add made no .git file"
    tap_finish "in a linked worktree (a .git file): the worktree's top"

    expect_root "$work/outer/vendor/inner/src" "$work/outer/vendor/inner" git-work-tree "$work/outer/vendor/inner/.git"
    expect_root "$work/outer/vendor" "$work/outer" git-work-tree "$work/outer/.git"
    tap_finish "nested repositories: the nearest wins"

    expect_root "$work/notes/a/b" "$work/notes" claude-folder "$work/notes/.claude"
    # The project's settings are read from the subdirectory: the secret is hidden.
    sbx_at "$work/notes/a/b" explain --json "$work/notes/secret.txt"
    python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); r=d["read"]
assert not r["allowed"], r
assert r["rule"]["source"]["file"] == sys.argv[1], r' "$work/notes/.claude/settings.json" <<<"$out" ||
        fail_because "explain does not hide the secret by the project's settings"
    sbx_at "$work/notes/a/b" run -- cat "$work/notes/secret.txt"
    [[ $out != *secret-words* ]] || fail_because "the command read the secret the project's settings hide"
    # Control: with --root at the subdirectory the project's settings are not read.
    sbx_at "$work/notes/a/b" run --root . -- cat "$work/notes/secret.txt"
    [[ $rc == 0 && $out == secret-words ]] || fail_because "control: the secret was not readable with --root . ($rc)"
    tap_finish "a .claude folder above, no git: that folder, and its settings.json hides a file from a subdirectory (control: --root . reads it)"

    expect_root "$work/plain/a/b" "$work/plain/a/b" current-directory null
    sbx_at "$work/plain/a/b" policy --json
    # The walk stops below $work, which holds the case's HOME ($work/home).
    [[ $(json rootWhy) == "the current directory: no git work tree or .claude folder holds it below $work" ]] ||
        fail_because "the reason is '$(json rootWhy)'"
    tap_finish "neither a git work tree nor a .claude folder: the current directory"

    # While a sandbox runs in $work/plain/a, its placeholders (an empty .git and
    # .claude there) are not taken for a project by a run from below.
    # It runs until the checks below are done (the file `go`), and no longer.
    rm -f "$work/go"
    # shellcheck disable=SC2016  # $1 is the inner shell's
    (cd "$work/plain/a" && "${as[@]}" env HOME="$home" TMPDIR="$work/tmp" timeout 60 "$sbx" run --root . \
        --managed-settings "$tmp/empty-managed.json" -- sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done' sh "$work/go") \
        </dev/null >/dev/null 2>&1 &
    first=$!
    for _ in $(seq 100); do [[ -d $work/plain/a/.claude && -d $work/plain/a/.git ]] && break; sleep 0.05; done
    [[ -d $work/plain/a/.claude && -d $work/plain/a/.git ]] || fail_because "the first sandbox made no placeholders"
    sbx_at "$work/plain/a/b" policy --json
    [[ $(json root) == "$work/plain/a/b" && $(json rootReason) == current-directory ]] ||
        fail_because "beside a running sandbox: root $(json root), $(json rootReason)"
    sbx_at "$work/plain/a/b" plan -- true
    [[ $(json root) == "$work/plain/a/b" ]] || fail_because "beside a running sandbox, plan's root is $(json root)"
    touch "$work/go"
    wait "$first" || fail_because "the first sandbox failed"
    [[ ! -e $work/plain/a/.claude && ! -e $work/plain/a/.git ]] || fail_because "the first sandbox's placeholders stayed"
    tap_finish "a running sandbox's placeholders (empty .git and .claude) above are not taken for a project"

    home=$work/dots
    expect_root "$work/dots/proj/sub" "$work/dots/proj/sub" current-directory null
    sbx_at "$work/dots/proj/sub" policy --json
    [[ $(json rootWhy) == *"below $work/dots" ]] || fail_because "the reason is '$(json rootWhy)'"
    [[ $out != *'"layer":"project"'* ]] || fail_because "the home's .claude was read as a project layer"
    sbx_at "$work/dots" policy --json
    [[ $(json root) == "$work/dots" && $(json rootReason) == current-directory ]] ||
        fail_because "in the home itself: root $(json root), $(json rootReason)"
    sbx_at "$work/dots" plan -- true
    [[ $rc == 64 && $err == *"your home directory"* ]] || fail_because "in the home itself, plan was not refused: $rc $err"
    sbx_at "$work/dots" run -- sh -c 'echo ran'
    [[ $rc == 125 && $out != *ran* ]] || fail_because "in the home itself, run was not refused: $rc"
    home=$work/home
    tap_finish "a home that is a git repository with a .claude: never the root of a folder below it; in the home itself, refused as before"

    sbx_at / policy --json
    [[ $rc == 0 && $(json root) == / && $(json rootReason) == current-directory ]] ||
        fail_because "policy in /: $rc root $(json root) $(json rootReason)"
    why=$(json rootWhy)
    sbx_at / explain /etc/hostname
    [[ $(tail -n1 <<<"$out") == "  root /: $why" ]] || fail_because "explain in /: $(tail -n1 <<<"$out")"
    sbx_at / plan -- true
    [[ $rc == 64 && $err == *"may not be /"* ]] || fail_because "plan in / was not refused for /: $rc $err"
    sbx_at / run -- sh -c 'echo ran'
    [[ $rc == 125 && $out != *ran* && $err == *"may not be /"* ]] || fail_because "run in / was not refused for /: $rc"
    tap_finish "in /: the root is / and says why; plan (64) and run (125) refuse it as before"

    expect_root "$work/repo/src/lib" "$work/repo/src/lib" option null --root .
    expect_root "$work/repo/src/lib" "$work/repo/src" option null --root "$work/repo/src"
    tap_finish "--root given: that directory, 'named with --root', and run says nothing"

    # git from a subdirectory of a real repository, inside the sandbox.
    before=$(git_out "$work/commit" rev-parse HEAD)
    sbx_at "$work/commit/src/deep" run -- sh -c 'echo made-inside >new.txt && git add new.txt && git commit -q -m "from inside"'
    [[ $rc == 0 ]] || fail_because "git add and commit inside failed"
    [[ $(git_out "$work/commit" log -1 --format=%s) == "from inside" ]] || fail_because "no commit 'from inside' outside"
    [[ $(git_out "$work/commit" rev-parse HEAD~1 2>/dev/null) == "$before" ]] || fail_because "the commit is not on top of the first"
    [[ $(git_out "$work/commit" show HEAD:src/deep/new.txt 2>/dev/null) == made-inside ]] ||
        fail_because "the commit does not hold src/deep/new.txt"
    [[ -z $(git_out "$work/commit" status --porcelain) ]] || fail_because "the work tree is not clean: $(git_out "$work/commit" status --porcelain)"
    tap_finish "git add and git commit from a subdirectory inside sbx run: the commit holds the file (checked outside)"

    # Control: the subdirectory as the root, as before issue 14.
    head=$(git_out "$work/commit" rev-parse HEAD)
    sbx_at "$work/commit/src/deep" run --root . -- sh -c 'echo again >other.txt && git add other.txt && git commit -q -m "control"'
    [[ $rc != 0 ]] || fail_because "control: git add succeeded with --root ."
    [[ $err == *index.lock* ]] || fail_because "control: git did not fail on .git/index.lock"
    [[ $(git_out "$work/commit" rev-parse HEAD) == "$head" ]] || fail_because "control: a commit was made"
    tap_finish "control: the same with --root . (the subdirectory) fails on .git/index.lock, and nothing is committed"

    # Another user's .claude above the project: planted in a shared folder.
    if ((EUID != 0)); then
        echo "ok $((n += 1)) - ${TAP_PREFIX}another user's .claude folder above is refused # SKIP only root can make a folder of another user's here"
    else
        printf '{"sandbox": {"filesystem": {"allowWrite": ["/%s"]}}}\n' "$work/home" >"$tmp/planted.json"
        mkdir -p "$work/shared/.claude"
        cp "$tmp/planted.json" "$work/shared/.claude/settings.json"
        chown -R 65534:65534 "$work/shared/.claude"
        sbx_at "$work/shared/mine" policy
        [[ $rc == 64 && $err == *"$work/shared/.claude"*"owned by uid 65534"* ]] || fail_because "policy took another user's .claude: $rc"
        sbx_at "$work/shared/mine" run -- sh -c 'echo ran'
        [[ $rc == 125 && $out != *ran* && $err == *"owned by uid 65534"* ]] || fail_because "run was not refused: $rc"
        # Control: the same folder of the user's own is taken, and its settings read.
        chown -R "$(id -u "$who"):$(id -g "$who")" "$work/shared/.claude"
        sbx_at "$work/shared/mine" policy --json
        [[ $rc == 0 && $(json root) == "$work/shared" && $out == *"$work/shared/.claude/settings.json"* ]] ||
            fail_because "control: the user's own .claude was not taken ($rc, root $(json root))"
        rm -rf "$work/shared/.claude"
        tap_finish "another user's .claude folder above is refused (64, run 125), not read (control: the user's own is taken)"
    fi

    sbx_at "$work/linkproj/sub" policy
    [[ $rc == 64 && $err == *"$work/linkproj/.git"*"symbolic link"* ]] || fail_because "a symlinked .git was not refused: $rc"
    sbx_at "$work/linkproj/sub" run -- sh -c 'echo ran'
    [[ $rc == 125 && $out != *ran* ]] || fail_because "run with a symlinked .git was not refused: $rc"
    sbx_at "$work/linkproj/sub" policy --root "$work/linkproj"
    [[ $rc == 0 ]] || fail_because "--root does not get round a symlinked .git: $rc"
    tap_finish "a symlinked .git is refused, naming it and --root (which gets round it)"

    # An agent's command line: no `--`, the command's own options after its name.
    sbx_at "$work/repo/src/lib" run ls -la
    [[ $rc == 0 && $out == *" .."* ]] || fail_because "run ls -la without --: status $rc: $err"
    [[ $err == "sbx: root $work/repo: "* ]] || fail_because "no root line: '$err'"
    sbx_at "$work/repo/src/lib" run --no-pty sh -c 'echo "$0"' word
    [[ $rc == 0 && $out == word ]] || fail_because "run --no-pty sh -c ... without --: status $rc, '$out': $err"
    sbx_at "$work/repo/src/lib" run --bogus ls
    [[ $rc == 125 && $err == *"--bogus"* && $out != *"."* ]] || fail_because "an unknown option before the command: status $rc: $err"
    tap_finish "run COMMAND ARGS without --: the first word that is no option starts the command; an unknown option is still refused"

    # What is left out of the environment is named, values never; --quiet says neither.
    show='echo "${GH_TOKEN-unset} ${GIT_AUTHOR_NAME-unset} ${DATABASE_URL-unset}"'
    at "$work/repo/src/lib" env GH_TOKEN=ghp-not-shown GIT_AUTHOR_NAME=Ana DATABASE_URL='postgres://db/app?password=not-shown' \
        "$sbx" run --managed-settings "$tmp/empty-managed.json" sh -c "$show"
    [[ $rc == 0 && $out == "unset Ana unset" ]] || fail_because "inside: '$out' (status $rc)"
    [[ $err == *"sbx: left out of the command's environment (may hold secrets): GH_TOKEN, DATABASE_URL; pass one with --env NAME"* ]] ||
        fail_because "no line naming what was left out: '$err'"
    [[ $err != *not-shown* ]] || fail_because "a value was printed: '$err'"
    at "$work/repo/src/lib" env GH_TOKEN=ghp-not-shown GIT_AUTHOR_NAME=Ana "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --quiet sh -c "$show"
    [[ $rc == 0 && $out == "unset Ana unset" && -z $err ]] || fail_because "--quiet: '$out', '$err' (status $rc)"
    echo '{"sandbox": {"quiet": true}}' >"$work/quiet.json"
    at "$work/repo/src/lib" env GH_TOKEN=ghp-not-shown "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --settings "$work/quiet.json" sh -c "$show"
    [[ $rc == 0 && -z $err ]] || fail_because "sandbox.quiet: '$err' (status $rc)"
    tap_finish "the variables left out are named in one line, values never; GIT_AUTHOR_NAME passes; --quiet and sandbox.quiet print no root or environment line"

    # Nothing left: no placeholder in the projects, nothing in TMPDIR.
    [[ -z $(ls -A "$work/tmp") ]] || fail_because "left in TMPDIR: $(ls -A "$work/tmp")"
    [[ -z $(git_out "$work/repo" status --porcelain --ignored) ]] || fail_because "left in the repository: $(git_out "$work/repo" status --porcelain --ignored)"
    [[ -z $(ls -A "$work/plain/a/b") ]] || fail_because "left in a root: $(ls -A "$work/plain/a/b")"
    tap_finish "nothing left behind"
done

tap_end
