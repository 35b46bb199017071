#!/usr/bin/env bash
# TAP: the built-in credential stores stay unreadable inside `sbx run` whatever the
# settings say. With a project settings file that holds only `{}`, a planted
# ~/.ssh/id_test and ~/.aws/credentials cannot be read; with HOME pointing at
# another directory, the account's real home keeps its stores hidden; a broad
# allowRead (`~`, `/`, `~/*/credentials`) opens none; a project's allowRead naming
# a store opens nothing either. Controls: the same files read outside the sandbox,
# and inside it once the user's settings name the store in allowRead (with the
# warning sbx prints), so every check can fail.
# Files are planted in a scratch home per case (HOME points there). The account-home
# case plants one file in the real home of SBX_TEST_USER (a .ssh folder made for
# the test and removed by the trap), never in root's: as root alone it is skipped.
# Every case runs as the current user and, when that is root and SBX_TEST_USER names
# a user, again as that user. Needs bash, coreutils, util-linux (setpriv), getent
# and bubblewrap; where bubblewrap cannot make a sandbox, a user's cases are skipped.
# Usage: credentials_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX PATH-TO-SBX-ATTACK
set -euo pipefail

if (($# != 3)); then
    echo "usage: credentials_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX PATH-TO-SBX-ATTACK" >&2
    exit 2
fi

source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch
planted_dirs=()  # .ssh folders this test made in a real home: removed whatever happens
# remove_planted: on exit, before $tmp is removed, the .ssh folders go.
remove_planted() {
    local d
    for d in "${planted_dirs[@]}"; do rm -rf -- "$d"; done
}
tap_on_exit remove_planted

# The binaries may sit where the test user cannot read (a clone under /root).
bin=$tmp/bin
tap_readable_copies "$bin" "$1" "$2" "$3"
sbx=$bin/sbx
sbx_linux=$bin/sbx-linux
attack=$bin/sbx-attack

# This machine's managed settings file, if it has one, must not change the answers;
# an empty one is a layer too, under which the stores must stay hidden all the same.
managed=(--managed-settings "$tmp/empty-managed.json")


skip() {
    n=$((n + 1))
    echo "ok $n - ${TAP_PREFIX-}$1 # SKIP $2"
    problems=()
}

# fresh_case: $case_dir, $home (a scratch HOME), $proj (with an empty settings
# file), $tmpd, and a secret planted in $home/.ssh/id_test and $home/.aws/credentials.
cases=0
fresh_case() {
    cases=$((cases + 1))
    case_dir=$work/case-$cases
    home=$case_dir/home
    proj=$case_dir/project
    tmpd=$case_dir/tmp
    mkdir -p "$home/.claude" "$proj/.claude" "$tmpd"
    echo '{}' >"$proj/.claude/settings.json"
    secret="sbx credentials secret $RANDOM$RANDOM"
    mkdir -m 700 "$home/.ssh" "$home/.aws"
    echo "$secret ssh" >"$home/.ssh/id_test"
    echo "$secret aws" >"$home/.aws/credentials"
    ((${#as[@]} == 0)) || chown -R "$who:" "$case_dir"
}

# user_settings JSON: the case's user settings file ($HOME/.claude/settings.json).
user_settings() {
    echo "$1" >"$home/.claude/settings.json"
    ((${#as[@]} == 0)) || chown "$who:" "$home/.claude/settings.json"
}

# capture COMMAND...: COMMAND as the case's user with the case's HOME and TMPDIR;
# leaves $rc, $out and $err.
capture() {
    rc=0
    "${as[@]}" env HOME="$home" TMPDIR="$tmpd" "$@" </dev/null >"$case_dir/out" 2>"$case_dir/err" || rc=$?
    out=$(<"$case_dir/out")
    err=$(<"$case_dir/err")
}

# sbx_run [OPTION...] -- COMMAND...: `sbx run` with the case's project as the root.
sbx_run() { capture timeout 20 "$sbx" run --root "$proj" "${managed[@]}" "$@"; }

# refused_both: reads the planted ssh key, then the aws credentials, inside the
# sandbox; each must be refused without the secret showing.
refused_both() {
    local f
    for f in "$home/.ssh/id_test" "$home/.aws/credentials"; do
        sbx_run -- "$attack" read "$f"
        want_refused
        want_no_out "$secret"
    done
}

tap_users
for who in "${users[@]}"; do
    tap_become "$who" || continue
    TAP_PREFIX="as $who: "
    work=$tmp/as-$who
    mkdir -m 755 "$work"
    ((${#as[@]} == 0)) || chown "$who:" "$work"

    # Can a sandbox run at all? If not, say why and skip this user's cases.
    fresh_case
    sbx_run -- true
    if ((rc != 0)); then
        skip "credential stores" "sbx run cannot make a sandbox here: $(head -n1 <<<"$err")"
        continue
    fi

    fresh_case
    capture "$attack" read "$home/.ssh/id_test"
    want_succeeded
    want_out "$secret ssh"
    capture "$attack" read "$home/.aws/credentials"
    want_succeeded
    want_out "$secret aws"
    tap_finish "control: outside the sandbox the planted ~/.ssh/id_test and ~/.aws/credentials read"

    fresh_case
    refused_both
    tap_finish "with a project settings file of {}, ~/.ssh/id_test and ~/.aws/credentials cannot be read"

    fresh_case
    user_settings '{"sandbox": {"filesystem": {"allowRead": ["~/.ssh"]}}}'
    sbx_run -- "$attack" read "$home/.ssh/id_test"
    want_succeeded
    want_out "$secret ssh"
    want_err "filesystem.allowRead ~/.ssh lifts the built-in denial of ~/.ssh"
    sbx_run -- "$attack" read "$home/.aws/credentials"
    want_refused
    want_no_out "$secret"
    tap_finish "control: a user allowRead naming ~/.ssh reads it, with the warning; ~/.aws stays hidden"

    for broad in '["~"]' '["/"]' '["~/*/credentials", "~/*/id_test"]' '["~/**"]'; do
        fresh_case
        user_settings "{\"sandbox\": {\"filesystem\": {\"allowRead\": $broad}}}"
        refused_both
        want_no_err "lifts the built-in denial"
        tap_finish "a broad allowRead $broad in the user's settings opens neither store"
    done

    fresh_case
    echo '{"sandbox": {"filesystem": {"allowRead": ["~/.ssh", "~/.aws"]}}}' >"$proj/.claude/settings.json"
    ((${#as[@]} == 0)) || chown "$who:" "$proj/.claude/settings.json"
    refused_both
    want_err "a credential store sbx hides"
    tap_finish "a project's allowRead naming ~/.ssh and ~/.aws opens neither (left out, with a warning)"

    fresh_case
    user_settings '{"sandbox": {"filesystem": {"allowWrite": ["~"]}}}'
    refused_both
    tap_finish "a writable home (allowWrite ~) does not make the stores readable"

    # HOME elsewhere: the account's real home keeps its stores hidden.
    account_home=$(getent passwd "$who" | cut -d: -f6)
    if [[ $who == root || $(id -u "$who") == 0 ]]; then
        skip "HOME elsewhere: the account home's ~/.ssh stays hidden" \
            "nothing is planted in root's real home; the case runs as SBX_TEST_USER"
        continue
    fi
    if [[ -z $account_home || ! -d $account_home || -e $account_home/.ssh || -L $account_home/.ssh ]]; then
        skip "HOME elsewhere: the account home's ~/.ssh stays hidden" \
            "$who's home ${account_home:-(none)} is missing or has a .ssh of its own, which the test does not touch"
        continue
    fi
    fresh_case
    planted_dirs+=("$account_home/.ssh")
    mkdir -m 700 "$account_home/.ssh"
    echo "$secret account" >"$account_home/.ssh/id_test"
    chown -R "$who:" "$account_home/.ssh"
    capture "$attack" read "$account_home/.ssh/id_test"
    want_succeeded
    want_out "$secret account"
    tap_finish "control: outside the sandbox $account_home/.ssh/id_test reads"

    sbx_run -- "$attack" read "$account_home/.ssh/id_test"
    want_refused
    want_no_out "$secret"
    tap_finish "HOME elsewhere, a {} settings file: $account_home/.ssh/id_test cannot be read"

    user_settings '{"sandbox": {"filesystem": {"allowRead": ["~/.ssh", "~"]}}}'
    sbx_run -- "$attack" read "$account_home/.ssh/id_test"
    want_refused
    want_no_out "$secret"
    tap_finish "HOME elsewhere: an allowRead of ~/.ssh names HOME's store, not the account's"
    rm -rf -- "$account_home/.ssh"
done

tap_end
