# bench/grown_project.sh - sourced by the benchmarks that show how a cost grows
# with the policy (startup.sh, session.sh).
#
# grow_project WORK PROJECT DENY_READ REPOS: in the git repository PROJECT, a
# .claude/settings.json hiding DENY_READ files made under WORK/secrets (each
# hidden by its own mount), and REPOS nested git repositories PROJECT/subN
# (each with its hooks, config and placeholders protected). Nothing for 0.
grow_project() {
    local work=$1 project=$2 deny_read=$3 repos=$4 i list=
    if ((deny_read > 0)); then
        mkdir "$work/secrets" "$project/.claude"
        for ((i = 0; i < deny_read; i++)); do
            : >"$work/secrets/s$i"
            list+="${list:+,}\"$work/secrets/s$i\""
        done
        printf '{"sandbox": {"enabled": true, "filesystem": {"denyRead": [%s]}}}\n' "$list" >"$project/.claude/settings.json"
    fi
    for ((i = 0; i < repos; i++)); do
        git init -q "$project/sub$i" || return 1
    done
}
