// git_files.cpp - git's plumbing commands, run for `sbx diff --base` (git_files.hpp).
#include "git_files.hpp"

#include <cstdlib>
#include <string_view>

#include "shared/run_program.hpp"  // launchers/: find_in_path, run_program

namespace sbx::tools {

namespace {

// Runs git with `args` in the repository's directory, keeping `cap` bytes of
// its output.
launcher::RunOutcome git(const GitRepo& repo, std::vector<std::string> args, std::size_t cap = 64 * 1024) {
    std::vector<std::string> argv{repo.git, "--no-replace-objects", "-c", "core.fsmonitor=false", "-C", repo.dir};
    argv.insert(argv.end(), std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
    launcher::RunLimits limits;
    limits.cap = cap;
    limits.timeout = std::chrono::seconds(60);
    limits.environment = repo.environment;
    return launcher::run_program(argv, {}, limits);
}

// What git said when it failed: its first "fatal:" or "error:" line (git's
// advice may follow it), else its last line, or how it ended.
std::string failure(const launcher::RunOutcome& r) {
    if (!r.spawn_error.empty()) return r.spawn_error;
    if (r.timed_out) return "git did not finish in 60 seconds";
    if (r.signal != 0) return "git was killed by signal " + std::to_string(r.signal);
    std::string_view last;
    for (std::string_view rest = r.err; !rest.empty();) {
        const auto nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
        while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
        if (line.starts_with("fatal: ") || line.starts_with("error: ")) return std::string(line);
        if (!line.empty()) last = line;
    }
    if (last.empty()) return "git exited with status " + std::to_string(r.exit_code);
    return std::string(last);
}

// `rel` as a path git reads relative to the directory it runs in.
std::string here(const std::string& rel) { return "./" + rel; }

}  // namespace

expected<GitRepo> find_git(const std::string& dir) {
    const char* path = std::getenv("PATH");
    auto found = launcher::find_in_path("git", path ? std::optional<std::string>(path) : std::nullopt);
    if (!found.executable)
        return fail(Error(Errc::io_error, "git is not on PATH; sbx diff --base reads the settings at a revision with it"));
    GitRepo repo{found.path, dir, {"LC_ALL=C"}};
    if (const char* home = std::getenv("HOME")) repo.environment.push_back(std::string("HOME=") + home);
    return repo;
}

expected<std::string> resolve_commit(const GitRepo& repo, const std::string& rev) {
    auto r = git(repo, {"rev-parse", "--verify", "--end-of-options", rev + "^{commit}"});
    if (!r.succeeded() || r.out.size() < 41)
        return fail(Error(Errc::invalid_argument, "names no commit here: " + failure(r)).at_key("--base " + rev));
    return r.out.substr(0, r.out.find('\n'));
}

expected<std::optional<std::string>> file_at(const GitRepo& repo, const std::string& commit, const std::string& rev,
                                             const std::string& rel, std::size_t limit) {
    const std::string name = rev + ":" + rel;
    auto listed = git(repo, {"ls-tree", "-z", "--end-of-options", commit, "--", here(rel)});
    if (!listed.succeeded()) return fail(Error(Errc::io_error, "git ls-tree failed: " + failure(listed)).in_file(name));
    if (listed.out.empty()) return std::optional<std::string>{};
    // "MODE TYPE OBJECT\tPATH\0"
    const std::string_view entry = listed.out;
    const auto tab = entry.find('\t');
    const auto first = entry.find(' ');
    const auto second = entry.find(' ', first + 1);
    if (tab == std::string_view::npos || first == std::string_view::npos || second == std::string_view::npos ||
        second > tab)
        return fail(Error(Errc::io_error, "git ls-tree printed what sbx cannot read").in_file(name));
    const std::string_view mode = entry.substr(0, first);
    const std::string object(entry.substr(second + 1, tab - second - 1));
    if (mode != "100644" && mode != "100755")
        return fail(Error(Errc::invalid_settings,
                          std::string(mode == "120000" ? "a symlink" : "not a regular file") +
                              " at this revision; sbx diff reads settings only from regular files")
                        .in_file(name));
    auto blob = git(repo, {"cat-file", "blob", object}, limit + 1);
    if (!blob.succeeded()) return fail(Error(Errc::io_error, "git cat-file failed: " + failure(blob)).in_file(name));
    if (blob.out.size() > limit || blob.out_cut)
        return fail(Error(Errc::invalid_settings, "the file is too large (more than " + std::to_string(limit) + " bytes)")
                        .in_file(name));
    return std::optional<std::string>(std::move(blob.out));
}

bool is_agent_file_name(const std::string& rel) {
    const auto slash = rel.rfind('/');
    const std::string_view name = std::string_view(rel).substr(slash == std::string::npos ? 0 : slash + 1);
    return name == "AGENT.md" || (name.size() > 9 && name.starts_with("AGENT-") && name.ends_with(".md"));
}

namespace {

// The NUL-separated names git printed that are agent files.
std::vector<std::string> agent_names(std::string_view out) {
    std::vector<std::string> names;
    while (!out.empty()) {
        const auto nul = out.find('\0');
        std::string name(out.substr(0, nul));
        out.remove_prefix(nul == std::string_view::npos ? out.size() : nul + 1);
        if (is_agent_file_name(name)) names.push_back(std::move(name));
    }
    return names;
}

}  // namespace

expected<std::vector<std::string>> agent_files_at(const GitRepo& repo, const std::string& commit, const std::string& rev) {
    auto r = git(repo, {"ls-tree", "-r", "-z", "--name-only", "--end-of-options", commit}, kListLimit);
    if (!r.succeeded()) return fail(Error(Errc::io_error, "git ls-tree failed: " + failure(r)).at_key("--base " + rev));
    if (r.out_cut)
        return fail(Error(Errc::invalid_settings, "the revision lists more than " + std::to_string(kListLimit >> 20) +
                                                      " MiB of file names; sbx diff does not look for agent files in a part")
                        .at_key("--base " + rev));
    return agent_names(r.out);
}

expected<std::vector<std::string>> agent_files_in_work_tree(const GitRepo& repo) {
    auto r = git(repo, {"ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ":(glob)**/AGENT.md",
                        ":(glob)**/AGENT-*.md"},
                 kListLimit);
    if (!r.succeeded()) return fail(Error(Errc::io_error, "git ls-files failed: " + failure(r)));
    if (r.out_cut) return fail(Error(Errc::invalid_settings, "the work tree holds too many agent files to compare"));
    return agent_names(r.out);
}

expected<bool> in_index(const GitRepo& repo, const std::string& rel) {
    auto r = git(repo, {"ls-files", "-z", "--", here(rel)});
    if (!r.succeeded()) return fail(Error(Errc::io_error, "git ls-files failed: " + failure(r)).in_file(rel));
    return !r.out.empty();
}

}  // namespace sbx::tools
