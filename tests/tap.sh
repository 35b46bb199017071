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

tap_end() {
    echo "1..$n"
    exit $((failed > 0))
}
