// sbx/rules/git_audit.hpp - what the audit after a run neutralises in git directories.
//
// A command may make or change a git repository inside its writable root (`git init
// sub`, a planted `sub/.git/config`), and git run outside later runs what such a
// repository's config names: `git status` in the root runs git in every gitlinked
// repository, a user's `git add -A` adds any nested repository as a gitlink. Neither
// bubblewrap nor seccomp can refuse a file by its name in a writable directory, so the
// launcher audits the plan's `filesystem.gitAudit` directories once the command is
// over, and renames what the command wrote there that would make git run a program.
// This header holds the decisions, pure and testable without a disk:
//   - kGitRunners: the config keys that make git run a program, one reason each;
//     config_runners() finds them, with their lines, in a config file's text;
//   - kAuditedFiles: which files of a git directory are looked at, and when a
//     changed one is renamed;
//   - disabled_name(): the name a neutralised file gets (NAME.sbx-disabled, .1, .2...,
//     then one made unique by the launcher's pid and clock);
//   - gitdir_target(): what a `.git` file names;
//   - git_audit_line(), git_audit_failure_line(): the lines of the
//     <sandbox_violations> block, for what was renamed and for what could not be
//     made safe (which also sets the run's exit status, kAuditFailedStatus).
// The walk, the clock and the renames are the launcher's (launchers/linux/git_audit.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/ascii.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/rules/git_config.hpp"

namespace sbx {

namespace git_audit {

// Which subsections a rule matches.
enum class Sub {
    none,   // `[section]` only: section.name
    any,    // `[section "x"]` only: section.x.name
    either, // both
    named,  // exactly the rule's `subsection`
};

// Which values make the key run a program.
enum class Value {
    any,          // every value (a bare key too)
    not_boolean,  // a value that is no boolean (true/false/yes/no/on/off/1/0, or bare): a command
    bang,         // a value that starts with `!`: a shell command
};

struct Runner {
    std::string_view section;     // lower case
    Sub sub;
    std::string_view subsection;  // for Sub::named
    std::string_view name;        // lower case; "*" any name
    Value value;
    std::string_view reason;
};

// The config keys with which git runs a program (git-config(1) and git's sources).
// Also where a key names another file of configuration (`include.path`): what that
// file says cannot be checked here.
inline constexpr Runner kGitRunners[] = {
    {"core", Sub::none, "", "fsmonitor", Value::not_boolean, "runs a program on every git command"},
    {"core", Sub::none, "", "hookspath", Value::any, "makes git run hooks from another directory"},
    {"core", Sub::none, "", "sshcommand", Value::any, "runs a program for every ssh transport"},
    {"core", Sub::none, "", "pager", Value::any, "runs a program for every paged output"},
    {"core", Sub::none, "", "editor", Value::any, "runs a program whenever git asks for text"},
    {"core", Sub::none, "", "askpass", Value::any, "runs a program whenever git asks for a password"},
    {"core", Sub::none, "", "gitproxy", Value::any, "runs a program for git:// connections"},
    {"core", Sub::none, "", "alternaterefscommand", Value::any, "runs a program on fetch and push"},
    {"sequence", Sub::none, "", "editor", Value::any, "runs a program on an interactive rebase"},
    {"diff", Sub::none, "", "external", Value::any, "runs a program for every diff"},
    {"diff", Sub::any, "", "textconv", Value::any, "runs a program to convert files for diff, log and blame"},
    {"diff", Sub::any, "", "command", Value::any, "runs a program as a diff driver"},
    {"merge", Sub::any, "", "driver", Value::any, "runs a program as a merge driver"},
    {"filter", Sub::any, "", "clean", Value::any, "runs a program on add, status and diff"},
    {"filter", Sub::any, "", "smudge", Value::any, "runs a program on checkout"},
    {"filter", Sub::any, "", "process", Value::any, "runs a long-running filter program"},
    {"credential", Sub::either, "", "helper", Value::any, "runs a program whenever git needs credentials"},
    {"alias", Sub::none, "", "*", Value::bang, "a shell command run as a git subcommand"},
    {"include", Sub::none, "", "path", Value::any, "reads configuration from another file, unchecked"},
    {"includeif", Sub::any, "", "path", Value::any, "reads configuration from another file, unchecked"},
    {"gpg", Sub::none, "", "program", Value::any, "runs a program to sign and verify"},
    {"gpg", Sub::any, "", "program", Value::any, "runs a program to sign and verify"},
    {"gpg", Sub::named, "ssh", "defaultkeycommand", Value::any, "runs a program to find a signing key"},
    {"pager", Sub::none, "", "*", Value::not_boolean, "runs a program as that command's pager"},
    {"uploadpack", Sub::none, "", "packobjectshook", Value::any, "runs a program when objects are served"},
    {"remote", Sub::any, "", "uploadpack", Value::any, "runs a program for fetches from that remote"},
    {"remote", Sub::any, "", "receivepack", Value::any, "runs a program for pushes to that remote"},
    {"protocol", Sub::none, "", "allow", Value::any, "can allow the ext:: transport, which runs a program"},
    {"protocol", Sub::named, "ext", "allow", Value::any, "allows the ext:: transport, which runs a program"},
    {"submodule", Sub::any, "", "update", Value::bang, "a shell command run by git submodule update"},
    {"web", Sub::none, "", "browser", Value::any, "runs a program for git web--browse and help"},
    {"browser", Sub::any, "", "cmd", Value::any, "runs a program as a browser"},
    {"browser", Sub::any, "", "path", Value::any, "runs a program as a browser"},
    {"man", Sub::any, "", "cmd", Value::any, "runs a program for git help"},
    {"man", Sub::any, "", "path", Value::any, "runs a program for git help"},
    {"mergetool", Sub::any, "", "cmd", Value::any, "runs a program for git mergetool"},
    {"mergetool", Sub::any, "", "path", Value::any, "runs a program for git mergetool"},
    {"difftool", Sub::any, "", "cmd", Value::any, "runs a program for git difftool"},
    {"difftool", Sub::any, "", "path", Value::any, "runs a program for git difftool"},
    {"guitool", Sub::any, "", "cmd", Value::any, "runs a program from git gui"},
    {"interactive", Sub::none, "", "difffilter", Value::any, "runs a program on git add -p"},
    {"sendemail", Sub::either, "", "smtpserver", Value::any, "may name a program git send-email runs"},
    {"sendemail", Sub::either, "", "sendmailcmd", Value::any, "runs a program for git send-email"},
    {"sendemail", Sub::either, "", "tocmd", Value::any, "runs a program for git send-email"},
    {"sendemail", Sub::either, "", "cccmd", Value::any, "runs a program for git send-email"},
    {"sendemail", Sub::either, "", "headercmd", Value::any, "runs a program for git send-email"},
    {"imap", Sub::none, "", "tunnel", Value::any, "runs a program for git imap-send"},
    {"trailer", Sub::any, "", "command", Value::any, "runs a program on commit --trailer"},
    {"trailer", Sub::any, "", "cmd", Value::any, "runs a program on commit --trailer"},
    {"hook", Sub::any, "", "command", Value::any, "runs a program as a configured hook"},
    {"instaweb", Sub::none, "", "httpd", Value::any, "runs a program for git instaweb"},
};

// Names and sections are compared in lower case, as git does.
constexpr bool lower_case(std::string_view s) {
    for (char c : s)
        if (c >= 'A' && c <= 'Z') return false;
    return true;
}
constexpr bool runners_lower_case() {
    for (const auto& r : kGitRunners)
        if (!lower_case(r.section) || !lower_case(r.name)) return false;
    return true;
}
static_assert(runners_lower_case());

// What the audit does with a file of a git directory that was made or changed
// during the run (its ctime at or after the run's start).
enum class Check {
    config_keys,  // renamed when config_runners() finds anything in it
    always,       // renamed: its presence alone changes what git runs
};

// What of an audited name the audit renames.
enum class Scope {
    file,        // the file itself
    each_entry,  // a directory: each entry made or changed in it
};

struct AuditedFile {
    std::string_view name;  // in the git directory
    std::string_view kind;  // as the violation line names it
    Check check;
    Scope scope;
    std::string_view reason;
};

inline constexpr AuditedFile kAuditedFiles[] = {
    {"config", "git-config", Check::config_keys, Scope::file, "git's configuration"},
    {"config.worktree", "git-config", Check::config_keys, Scope::file, "per-worktree configuration"},
    {"commondir", "git-commondir", Check::always, Scope::file,
     "made during the run: points git at another git directory, whose config and hooks it then uses"},
    {"hooks", "git-hook", Check::always, Scope::each_entry, "made during the run: git runs a hook by its name"},
};

// The protected names in the root that the audit renames after the run
// (filesystem.neutralise) only when git would run a program through what they
// say, not merely for being there: `.gitmodules`, which git itself writes when a
// checkout brings a branch with submodules, in git's config syntax (a
// `submodule.NAME.update = !command`). A regular file of one of these names
// that config_runners() finds nothing in is left alone.
inline constexpr std::string_view kCheckedRootNames[] = {".gitmodules"};

// The suffix of a neutralised file, and how many numbered names are tried after it
// before one made unique (disabled_unique_name()).
inline constexpr std::string_view kDisabledSuffix = ".sbx-disabled";
inline constexpr int kMaxDisabledNames = 100;
// The exit status of a run after which the audit could not make every git
// directory safe (a directory it could not look into, a file it could not rename):
// the command's own status is in the report and the block, this one says that git
// outside may run what it planted there.
inline constexpr int kAuditFailedStatus = 122;
// The largest config file and `.git` file or `commondir` the audit reads (as
// protected_paths() reads them); a larger config made during the run is renamed.
inline constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 20;
inline constexpr std::size_t kMaxPointerBytes = 4096;
// A hook whose name ends so is one git ships as an example and never runs.
inline constexpr std::string_view kSampleHookSuffix = ".sample";

}  // namespace git_audit

// A key config_runners() found, or a part of the file it could not read.
struct GitRunnerFinding {
    std::string key;     // as git names it: "core.fsmonitor", "alias.st"; empty for a problem
    std::size_t line = 0;
    std::string reason;  // the table's reason, or the problem
};

namespace audit_detail {

SBX_INLINE bool is_boolean(const std::optional<std::string>& v);

SBX_INLINE bool matches(const git_audit::Runner& r, const GitConfigEntry& e);

}  // namespace audit_detail

// The keys of the git config text `text` that make git run a program, each with
// its line and reason, in the file's order; and, as findings without a key, what
// git would refuse in the file (a parser that disagreed with git there could miss
// a key, so such a file is no safer than one with a key) and keys outside any
// section. Empty: nothing in it runs a program.
SBX_INLINE std::vector<GitRunnerFinding> config_runners(std::string_view text);

// The name to rename `name` to on attempt `attempt` (0: NAME.sbx-disabled, then
// NAME.sbx-disabled.1 ...); nullopt past kMaxDisabledNames.
SBX_INLINE std::optional<std::string> disabled_name(std::string_view name, int attempt);

// The name tried once every numbered one is taken: unique to this launcher (`pid`)
// and moment (`nanoseconds`), so that a command cannot have made it in advance.
SBX_INLINE std::string disabled_unique_name(std::string_view name, long pid, long long nanoseconds);

// Whether a hooks directory's entry `name` is one git could run: every name but
// git's own examples (`*.sample`), `.` and `..`, and names already neutralised.
SBX_INLINE bool hook_git_runs(std::string_view name);

// The path a `.git` file's text names, as git reads it ("gitdir: PATH", trailing
// newlines and carriage returns dropped), not yet joined to the file's directory;
// nullopt when the text is not one such line.
SBX_INLINE std::optional<std::string> gitdir_target(std::string_view text);

// Whether a `commondir` (its text, in the git directory `git_dir`) names exactly
// `main`, the root's own main git directory, whose config and hooks are protected
// while the command runs: what `git worktree add` writes in a linked worktree's git
// directory. Lexical: the audit reaches `git_dir` without following a symlink, and
// a target with a `..` after a symlink is no exact match of `main` anyway unless it
// reads as one. Paths absolute and normalised.
SBX_INLINE bool commondir_names(std::string_view text, std::string_view git_dir, std::string_view main);

// One neutralised file: which kind (kAuditedFiles' kind, or "git-pointer" for a
// `.git` entry), where it was, why, and its new name.
struct GitNeutralised {
    std::string kind;
    std::string path;
    std::string why;
    std::string renamed_to;
};

// What the audit could not make safe: a directory it could not look into, a file
// it could not rename; where, and why.
struct GitAuditFailure {
    std::string path;
    std::string why;
    // "git": in a git directory; "protected": a protected name in the root
    // (filesystem.neutralise), which a later program reads.
    std::string kind = "git";
};

// A path or reason as one line of the block: a byte below 0x20, 0x7f and the
// backslash written as C escapes (\n, \t, \\, \xNN), so that a name holding a
// line end cannot add lines of its own to the block.
SBX_INLINE std::string printable_line_part(std::string_view s);

// Its line in the <sandbox_violations> block:
// "neutralised git-config /r/sub/.git/config (core.fsmonitor line 7: runs a program
// on every git command) -> /r/sub/.git/config.sbx-disabled".
SBX_INLINE std::string git_audit_line(const GitNeutralised& n);

// A failure's line: "unchecked git /r/x (cannot look into it: Permission denied);
// git run there may run what the command planted", or for a protected name
// "unchecked protected /r/.envrc (...); a program that reads it later may run
// what the command planted".
SBX_INLINE std::string git_audit_failure_line(const GitAuditFailure& f);

// The `why` of a config file for its findings: the first finding, and how many more.
SBX_INLINE std::string runners_why(const std::vector<GitRunnerFinding>& findings);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_RULES)

namespace sbx::audit_detail {

SBX_INLINE bool is_boolean(const std::optional<std::string>& v) {
    if (!v) return true;  // a bare key is true
    const std::string s = ascii_lower(*v);
    for (std::string_view b : {"true", "false", "yes", "no", "on", "off", "1", "0", ""})
        if (s == b) return true;
    return false;
}

SBX_INLINE bool matches(const git_audit::Runner& r, const GitConfigEntry& e) {
    using git_audit::Sub;
    using git_audit::Value;
    if (e.section != r.section) return false;
    switch (r.sub) {
        case Sub::none:
            if (e.subsection) return false;
            break;
        case Sub::any:
            if (!e.subsection) return false;
            break;
        case Sub::either: break;
        case Sub::named:
            if (!e.subsection || *e.subsection != r.subsection) return false;
            break;
    }
    if (r.name != "*" && e.name != r.name) return false;
    switch (r.value) {
        case Value::any: return true;
        case Value::not_boolean: return !is_boolean(e.value);
        case Value::bang: return e.value && !e.value->empty() && e.value->front() == '!';
    }
    return true;
}

}  // namespace sbx::audit_detail

namespace sbx {

SBX_INLINE std::vector<GitRunnerFinding> config_runners(std::string_view text) {
    std::vector<GitRunnerFinding> out;
    const GitConfigFacts facts = GitConfigParser(text).parse();
    for (const auto& e : facts.entries) {
        if (e.section.empty()) {
            out.push_back(GitRunnerFinding{e.name, e.line, "a key outside any section, which git cannot read"});
            continue;
        }
        for (const auto& r : git_audit::kGitRunners)
            if (audit_detail::matches(r, e)) {
                out.push_back(GitRunnerFinding{e.key(), e.line, std::string(r.reason)});
                break;
            }
    }
    for (const auto& p : facts.problems) out.push_back(GitRunnerFinding{"", 0, "git cannot read it: " + p});
    return out;
}

SBX_INLINE std::optional<std::string> disabled_name(std::string_view name, int attempt) {
    if (attempt < 0 || attempt > git_audit::kMaxDisabledNames) return std::nullopt;
    std::string out = std::string(name) + std::string(git_audit::kDisabledSuffix);
    if (attempt > 0) out += "." + std::to_string(attempt);
    return out;
}

SBX_INLINE std::string disabled_unique_name(std::string_view name, long pid, long long nanoseconds) {
    return std::string(name) + std::string(git_audit::kDisabledSuffix) + "." + std::to_string(pid) + "-" +
           std::to_string(nanoseconds);
}

SBX_INLINE bool hook_git_runs(std::string_view name) {
    if (name.empty() || name == "." || name == "..") return false;
    if (name.ends_with(git_audit::kSampleHookSuffix)) return false;
    return name.find(git_audit::kDisabledSuffix) == std::string_view::npos;
}

SBX_INLINE std::optional<std::string> gitdir_target(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    constexpr std::string_view prefix = "gitdir: ";
    if (!text.starts_with(prefix)) return std::nullopt;
    text.remove_prefix(prefix.size());
    if (text.empty()) return std::nullopt;
    for (unsigned char c : text)
        if (c < 0x20 || c == 0x7f) return std::nullopt;
    return std::string(text);
}

SBX_INLINE bool commondir_names(std::string_view text, std::string_view git_dir, std::string_view main) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    if (text.empty()) return false;
    for (unsigned char c : text)
        if (c < 0x20 || c == 0x7f) return false;
    const std::string joined = text.front() == '/' ? std::string(text) : std::string(git_dir) + "/" + std::string(text);
    return paths::normalize(joined) == main;  // `..` takes away the component before it
}

SBX_INLINE std::string printable_line_part(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (unsigned char c : s) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            constexpr char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else out += static_cast<char>(c);
    }
    return out;
}

SBX_INLINE std::string git_audit_line(const GitNeutralised& n) {
    return "neutralised " + n.kind + " " + printable_line_part(n.path) + " (" + printable_line_part(n.why) + ") -> " +
           printable_line_part(n.renamed_to);
}

SBX_INLINE std::string git_audit_failure_line(const GitAuditFailure& f) {
    const bool git = f.kind == "git";
    return "unchecked " + std::string(git ? "git " : "protected ") + printable_line_part(f.path) + " (" +
           printable_line_part(f.why) + "); " + (git ? "git run there" : "a program that reads it later") +
           " may run what the command planted";
}

SBX_INLINE std::string runners_why(const std::vector<GitRunnerFinding>& findings) {
    if (findings.empty()) return {};
    const auto& f = findings.front();
    std::string why = f.key.empty() ? f.reason : f.key + " line " + std::to_string(f.line) + ": " + f.reason;
    if (findings.size() > 1) why += "; " + std::to_string(findings.size() - 1) + " more";
    return why;
}

}  // namespace sbx
#endif
