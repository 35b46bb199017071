#!/usr/bin/env bash
# TAP: sbx's own programs in a writable place (sbx/rules/own_programs.hpp). With
# sbx, sbx-linux and sbx-stage installed inside the project (a project-local
# prefix: copies in PROJECT/bin; or a build: PROJECT/bin/sbx -> ../build/sbx), a
# command run by `PROJECT/bin/sbx run` tries to replace them (write, rename,
# remove, a new file beside them); every attempt must be refused and the files
# unchanged, and the next `PROJECT/bin/sbx run` is still confined. The control: the
# same replacement done by a command that an sbx installed outside the project
# runs works, and the next `PROJECT/bin/sbx run` then runs the replacement, with
# no sandbox. Also: `sbx explain` and `sbx policy` give the reason, and `sbx
# doctor` says where the install lies. Each case runs as the current user and,
# as root with SBX_TEST_USER set, as that user too.
# Usage: own_programs_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX
set -euo pipefail

if (($# != 2)); then
    echo "usage: own_programs_test.sh PATH-TO-SBX PATH-TO-SBX-LINUX" >&2
    exit 2
fi
source "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
tap_scratch

# The install outside every project: the control's sbx.
bin=$tmp/bin
tap_readable_copies "$bin" "$1" "$2"
[[ -x $bin/sbx-stage ]] || {
    echo "Bail out! no sbx-stage beside $2"
    exit 1
}
managed=(--managed-settings "$tmp/empty-managed.json")

# The replacement a command plants: run as sbx, it runs the command with no sandbox.
replacement='#!/bin/sh
echo REPLACED-SBX
exit 0'

# run_with SBX SCRIPT: `SBX run -- sh -c SCRIPT` in the case's project as its
# user; sets rc, out, err.
run_with() {
    rc=0
    (cd "$proj" && "${as[@]}" env HOME="$home" timeout 60 "$1" run "${managed[@]}" -- sh -c "$2") </dev/null \
        >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
}

# cli SBX ARGS...: `SBX ARGS` in the case's project as its user; sets rc, out, err.
cli() {
    local s=$1
    shift
    rc=0
    (cd "$proj" && "${as[@]}" env HOME="$home" timeout 120 "$s" "$@") </dev/null >"$work/out" 2>"$work/err" || rc=$?
    out=$(<"$work/out")
    err=$(<"$work/err")
}

# The attempts, each printing DONE-NAME when it worked. DIR is the folder of the
# name sbx is started by, TARGET the folder of the programs themselves.
attempts() {
    local dir=$1 target=$2
    cat <<EOF
printf '%s\n' '$replacement' >$target/sbx 2>/dev/null && echo DONE-write-sbx
printf '%s\n' '$replacement' >$target/sbx-stage 2>/dev/null && echo DONE-write-stage
mv $target/sbx-linux $target/moved 2>/dev/null && echo DONE-rename-launcher
rm -f $target/sbx-stage 2>/dev/null && [ ! -e $target/sbx-stage ] && echo DONE-remove-stage
printf '%s\n' '$replacement' >$dir/new-sbx 2>/dev/null && chmod +x $dir/new-sbx && mv -f $dir/new-sbx $dir/sbx 2>/dev/null && echo DONE-replace-name
rm -f $dir/sbx 2>/dev/null && printf '%s\n' '$replacement' >$dir/sbx && chmod +x $dir/sbx && echo DONE-remove-name
printf '%s\n' '$replacement' >$target/fake 2>/dev/null && echo DONE-add-beside
printf '%s\n' '$replacement' >$dir/fake-name 2>/dev/null && echo DONE-add-beside-name
echo attempts-over
EOF
}

# sums DIR...: a line per file below DIRs with its kind and content (what must not change).
sums() {
    local f
    for f in $(find "$@" -mindepth 1 | sort); do
        if [[ -L $f ]]; then echo "$f -> $(readlink "$f")"; else echo "$f $(sha256sum <"$f" | cut -c1-16)"; fi
    done
}

tap_users
for who in "${users[@]}"; do
    tap_user_project "$who" || continue
    for form in copies symlinked; do
        rm -rf "${proj:?}/bin" "$proj/build"
        mkdir -p "$proj/bin"
        if [[ $form == copies ]]; then
            cp -p "$bin/sbx" "$bin/sbx-linux" "$bin/sbx-stage" "$proj/bin/"
            target=$proj/bin
        else
            mkdir -p "$proj/build"
            cp -p "$bin/sbx" "$bin/sbx-linux" "$bin/sbx-stage" "$proj/build/"
            for p in sbx sbx-linux sbx-stage; do ln -s "../build/$p" "$proj/bin/$p"; done
            target=$proj/build
        fi
        [[ -z ${as[*]} ]] || chown -R "$who:" "$work"
        local_sbx=$proj/bin/sbx
        before=$(sums "$proj/bin" "$target")

        # The attack, from inside the project's own sbx.
        run_with "$local_sbx" "$(attempts "$proj/bin" "$target")"
        want_status 0
        want_out attempts-over
        [[ $out != *DONE-* ]] || fail_because "an attempt worked: $(grep DONE- <<<"$out" | tr '\n' ' ')"
        [[ $(sums "$proj/bin" "$target") == "$before" ]] || fail_because "the install changed"
        tap_finish "$form in the project: writing, renaming, removing or adding sbx's programs is refused"

        # The next run is still sbx, and confined.
        run_with "$local_sbx" 'echo x >/usr/sbx-own-probe 2>/dev/null && echo UNCONFINED; echo ran'
        want_status 0
        want_out ran
        want_no_out REPLACED-SBX
        want_no_out UNCONFINED
        tap_finish "$form in the project: the next run is sbx's, confined"

        # sbx explain and sbx policy give the reason.
        cli "$local_sbx" explain "${managed[@]}" "$proj/bin/sbx"
        want_status 0
        want_line "^  write: denied  protected: protected path $target \(the folder of sbx's own programs"
        cli "$local_sbx" explain "${managed[@]}" "$proj/bin/new"
        want_line "^  write: denied  protected: protected path $proj/bin \(the folder of sbx's own programs"
        cli "$local_sbx" explain "${managed[@]}" "$target/sbx"
        want_line "^  write: denied  protected: protected path $target \(the folder of sbx's own programs"
        cli "$local_sbx" explain "${managed[@]}" "$proj/src.c"
        want_line '^  write: allowed  inside the root'
        tap_finish "$form: sbx explain says why the programs are not writable, and the rest of the root is"
        cli "$local_sbx" policy "${managed[@]}"
        want_status 0
        want_line "^sbx's own programs: $proj/bin/sbx"
        want_line "^  protected: $proj/bin \(the folder of sbx's own programs"
        want_line "^  protected: $target \(the folder of sbx's own programs"
        tap_finish "$form: sbx policy lists the programs and what of them runs protect"
        cli "$local_sbx" doctor
        want_line "^     install: $proj/bin/sbx, .*; they lie where commands of the project at $proj may write, so .*$target.* read-only during its runs"
        doctor_rc=$rc
        cli "$bin/sbx" doctor
        [[ $rc == "$doctor_rc" ]] || fail_because "the doctor's status ($doctor_rc) differs from an outside install's ($rc)"
        want_line "^     install: $bin/sbx, .*; outside every place commands of the project at $proj may write"
        tap_finish "$form: sbx doctor says where the install lies and that runs protect it, its status unchanged"

        # The control: an sbx installed outside the project runs the same command,
        # which replaces the project's sbx; the project's sbx then runs no sandbox.
        run_with "$bin/sbx" "$(attempts "$proj/bin" "$target")"
        want_status 0
        want_out DONE-write-sbx
        want_out DONE-add-beside
        [[ $(sums "$proj/bin" "$target") != "$before" ]] || fail_because "the install did not change"
        tap_finish "control ($form): run by an sbx installed outside, the command replaces the project's sbx"
        run_with "$local_sbx" 'echo ran'
        want_out REPLACED-SBX
        want_no_out ran
        tap_finish "control ($form): the next run of the project's sbx is the replacement's, with no sandbox"
    done
    rm -rf "${proj:?}/bin" "$proj/build"
done
tap_end
