# tests/tap.sh - the TAP bookkeeping the shell tests share. Source it, then for
# each case: note what went wrong with fail_because MESSAGE (as often as needed),
# leave the last command's status, standard output and error in $rc, $out and
# $err, and end the case with tap_finish DESCRIPTION. tap_end prints the plan
# line ("1..N", after the cases, as TAP allows) and exits 1 if any case failed.
# TAP_PREFIX, when set, starts every description ("as sbx-test: ").

n=0
failed=0
problems=()
rc=0
out=
err=

fail_because() { problems+=("$1"); }

# The checks of the last command's $rc, $out and $err most cases make: each
# notes what is wrong with fail_because. want_out and want_err take TEXT as
# written; want_line takes an extended regular expression for a line of stdout.
want_status() { [[ $rc == "$1" ]] || fail_because "exit status $rc, not $1"; }
want_out() { grep -qF -- "$1" <<<"$out" || fail_because "stdout does not hold: $1"; }
want_no_out() { ! grep -qF -- "$1" <<<"$out" || fail_because "stdout holds: $1"; }
want_line() { grep -qE -- "$1" <<<"$out" || fail_because "no stdout line matches: $1"; }
want_err() { grep -qF -- "$1" <<<"$err" || fail_because "stderr does not hold: $1"; }
want_no_err() { ! grep -qF -- "$1" <<<"$err" || fail_because "stderr holds: $1"; }

# want_refused [ERRNO], want_succeeded: sbx-attack's verdict on the last command
# (tests/attacks/attack.cpp): refused (with ERRNO), or the escape worked.
want_refused() {
    want_status 1
    grep -qE -- ": refused: ${1:-}" <<<"$out" || fail_because "stdout does not say: refused: ${1:-...}"
}
want_succeeded() {
    want_status 0
    grep -qF -- ": succeeded: " <<<"$out" || fail_because "stdout does not say: succeeded"
}

# tap_finish DESCRIPTION: "ok N - ..." or "not ok N - ..." with, under it, each
# problem and the last command's status and output.
tap_finish() {
    n=$((n + 1))
    if ((${#problems[@]} == 0)); then
        echo "ok $n - ${TAP_PREFIX-}$1"
        return
    fi
    failed=$((failed + 1))
    echo "not ok $n - ${TAP_PREFIX-}$1"
    local p line
    for p in "${problems[@]}"; do echo "#   $p"; done
    echo "#   exit status: $rc"
    [[ -z $out ]] || while IFS= read -r line; do echo "#   stdout: $line"; done <<<"$out"
    [[ -z $err ]] || while IFS= read -r line; do echo "#   stderr: $line"; done <<<"$err"
    problems=()
}

# tap_users: `users` holds who the confinement cases run as: the current user
# and, as root with SBX_TEST_USER set, that user too.
tap_users() {
    users=("$(id -un)")
    if ((EUID == 0)) && [[ -n ${SBX_TEST_USER:-} ]]; then
        users+=("$SBX_TEST_USER")
    fi
}

# tap_become WHO [PATH...]: `as` becomes the prefix that runs a command as WHO
# (nothing for the current user), and WHO is given the PATHs. When WHO does not
# exist, a case fails saying so and it returns 1: `tap_become "$who" || continue`.
tap_become() {
    local who=$1
    shift
    as=()
    [[ $who != "$(id -un)" ]] || return 0
    if ! id -u "$who" >/dev/null 2>&1; then
        fail_because "SBX_TEST_USER names no user"
        tap_finish "the test user $who exists"
        return 1
    fi
    as=(setpriv --reuid="$(id -u "$who")" --regid="$(id -g "$who")" --init-groups --)
    (($# == 0)) || chown -R "$who:" "$@"
}

# tap_user_project WHO: the cases that follow run as WHO, in a home and a project
# (a new git repository) of its own under $tmp/as-WHO: sets TAP_PREFIX, work,
# home, proj and `as` (tap_become); returns 1 as tap_become does.
tap_user_project() {
    who=$1
    TAP_PREFIX="as $who: "
    work=$tmp/as-$who
    home=$work/home
    proj=$work/project
    mkdir -p "$home" "$proj"
    git init -q "$proj"
    tap_become "$who" "$work"
}

# tap_split ARGS... -- SCRIPT: a helper's `sbx run` options into `args` and the
# script it runs into `script` (both declared local by the caller).
tap_split() {
    while [[ $1 != -- ]]; do
        args+=("$1")
        shift
    done
    script=$2
}

# tap_in_sandbox ARGS... -- SCRIPT: `sbx run ARGS -- sh -c SCRIPT` as the case's
# user (tap_user_project), with $sbx, $launcher and $tmp/empty-managed.json, under
# the command in `wrap` when there is one (a private mount namespace, say: set
# it before a call and empty it after); sets $rc, $out and $err.
tap_in_sandbox() {
    local args=() script
    tap_split "$@"
    rc=0
    (cd "$proj" && "${wrap[@]}" "${as[@]}" env HOME="$home" timeout 30 "$sbx" run --managed-settings "$tmp/empty-managed.json" \
        --launcher "$launcher" "${args[@]}" -- sh -c "$script") </dev/null >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
}
wrap=()

# tap_scratch: the test's temporary directory in $tmp, by its physical path and
# mode 755 (the test user walks through it to its own cases), holding
# empty-managed.json: `{}`, mode 644, which stands in for this machine's managed
# settings. tap_cleanup runs when the script exits, also when meson's timeout
# sends TERM (143) or on INT (130).
tap_scratch() {
    tmp=$(mktemp -d)
    trap tap_cleanup EXIT
    trap 'exit 143' TERM
    trap 'exit 130' INT
    chmod 755 "$tmp"
    tmp=$(cd "$tmp" && pwd -P)
    echo '{}' >"$tmp/empty-managed.json"
    chmod 644 "$tmp/empty-managed.json"
}

# tap_on_exit STEP: STEP, a command line or a function's name, runs when the
# script exits, before $tmp is removed (a server killed, a mount undone); the
# steps run in the order they were added. Quote it so that its variables are
# read then: tap_on_exit '[[ -z $server ]] || kill "$server"'.
tap_on_exit() { tap_exit_steps+=("$1"); }
tap_exit_steps=()

# tap_cleanup: the EXIT trap tap_scratch sets. It runs each tap_on_exit step (one
# that fails stops neither the next nor the removal), then removes $tmp.
tap_cleanup() {
    local step
    set +u  # nor does one that reads an unset variable
    for step in "${tap_exit_steps[@]}"; do
        eval "$step" || true
    done
    rm -rf "$tmp"
}

# tap_readable_copies DIR PATH...: each PATH copied into DIR (made) under its own
# name, readable and runnable by anyone: the binaries may sit where the test user
# cannot read them (a clone under /root). The static stage, sbx-stage, comes along
# from beside any PATH that has it, as sbx and sbx-linux look for it beside themselves.
tap_readable_copies() {
    local dir=$1 path
    shift
    mkdir -p "$dir"
    cp "$@" "$dir/"
    for path in "$@"; do
        if [[ -x $(dirname "$path")/sbx-stage ]]; then
            cp "$(dirname "$path")/sbx-stage" "$dir/"
            break
        fi
    done
    chmod 755 "$dir" "$dir"/*
}

# tap_users_at_once FUNCTION: FUNCTION's cases for each of `users` (tap_users)
# at once, each user's in a subshell of its own after tap_user_project: for a
# test whose cases mostly wait. Their TAP lines then come in the users' order,
# numbered on from $n, their failures counted; any other line they print
# becomes a comment, and a subshell that stopped before its last case is a
# failing case of its own.
tap_users_at_once() {
    local fn=$1 who i pids=() line
    for i in "${!users[@]}"; do
        who=${users[i]}
        (
            n=0
            tap_user_project "$who" || exit 0
            "$fn"
            echo "# tap-users-done"
        ) >"$tmp/tap-users-$i" 2>&1 &
        pids+=("$!")
    done
    for i in "${!users[@]}"; do
        wait "${pids[i]}" || true
        local done=0
        while IFS= read -r line; do
            if [[ $line =~ ^(not\ )?ok\ [0-9]+\ (.*)$ ]]; then
                n=$((n + 1))
                [[ -z ${BASH_REMATCH[1]} ]] || failed=$((failed + 1))
                echo "${BASH_REMATCH[1]}ok $n ${BASH_REMATCH[2]}"
            elif [[ $line == "# tap-users-done" ]]; then
                done=1
            elif [[ $line == "#"* ]]; then
                echo "$line"
            else
                echo "#   $line"
            fi
        done <"$tmp/tap-users-$i"
        if ((done == 0)) && [[ $(head -c 7 "$tmp/tap-users-$i") != "not ok " ]]; then
            n=$((n + 1))
            failed=$((failed + 1))
            echo "not ok $n - as ${users[i]}: the cases stopped before their end (the lines above are what they said)"
        fi
    done
}

tap_end() {
    echo "1..$n"
    exit $((failed > 0))
}
