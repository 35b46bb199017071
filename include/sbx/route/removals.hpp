// sbx/route/removals.hpp - the removals in a command line that always ask.
//
// Whatever the mode and whatever the sandbox, a person decides about a command
// line that removes, or moves away, something no one gets back, or whose
// operands no one can see before it runs. From a line read by read_shell_line
// (shell_line.hpp) and where it runs (RemovalPlace), this finds:
//   - `rm`, `rmdir` and `unlink` of a critical path, an `mv` that moves one
//     away, an `rsync --delete` (or --remove-source-files) into or out of one;
//   - a critical path is `/`, the home directory, the workspace root or a
//     directory above it, and a `.git` directory or anything in it (`.GIT`
//     too where the filesystem folds case);
//   - an operand the shell decides ($DIR, ~user, ~+, {a,b}, {1..3}), a relative
//     operand after a `cd` the reader cannot follow, and a wildcard over a
//     critical path (`rm -rf *` in the root, `.*` anywhere above it, `.g*`);
//   - removals whose operands come from elsewhere: a remover under `xargs`,
//     `find -delete`, a remover under `find -exec` (`{}` is find's to decide);
//   - each of those behind the wrappers that run a command as it is (env,
//     nice, timeout, nohup, sudo, doas, stdbuf, ionice, chrt, taskset, setsid,
//     caffeinate, command, exec, busybox, watch, flock), and in the code of
//     `sh -c`, `bash -c` (any of the usual shells) and `eval`, read again.
// Paths are compared by their text, made absolute and clean (`.`, `..`): the
// check reads no disk. A reading that is not whole, or code in `sh -c` it cannot
// read, makes the check incomplete (RemovalCheck::complete): the caller decides
// what a line it could not read in full gets (route.hpp: it asks).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/ascii.hpp"
#include "sbx/core/glob.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/route/shell_line.hpp"

namespace sbx::route {

// Where the line runs.
struct RemovalPlace {
    std::string root;         // the workspace root: absolute and clean
    std::string home;         // the user's home: absolute and clean
    std::string cwd;          // where the line starts; empty: the root
    bool folds_case = false;  // the filesystem ignores case (macOS's default)
};

struct CriticalRemoval {
    std::string program;  // the remover: rm, rmdir, unlink, mv, rsync, find, or xargs's command
    std::string operand;  // the operand as the program gets it; empty where there is none (find -delete)
    std::string why;      // what makes it critical, in a few words
    std::size_t at = 0;   // the byte of the line where the operand (or the command) starts
};

// A path a removal takes away, whether critical or not, for what asks about
// removals outside the workspace (route.hpp).
struct Removed {
    std::string program;
    std::string path;       // absolute and clean; for a wildcard, the directory it is in
    std::size_t at = 0;     // as CriticalRemoval::at
    bool through = false;   // what `path` leads to is removed too: a wildcard's directory, or `dir/`
};

struct RemovalCheck {
    std::vector<CriticalRemoval> critical;
    std::vector<Removed> removed;  // every operand whose path the line shows
    bool complete = true;  // false: some of the line, or of code it runs, could not be read
};

// The removals that always ask in the line `r` was read from, in its order (each
// finding's `at` is a byte of that line).
SBX_INLINE RemovalCheck critical_removals(const Reading& r, const RemovalPlace& place);

// Reads `line` and checks it.
inline RemovalCheck critical_removals(std::string_view line, const RemovalPlace& place) {
    return critical_removals(read_shell_line(line), place);
}

// Why `path` (absolute and clean) is critical, if it is.
SBX_INLINE std::optional<std::string> critical_path(std::string_view path, const RemovalPlace& place);

namespace detail {

// A command as it runs: the wrappers in front of it stepped over.
struct Unwrapped {
    std::size_t program = 0;   // the index of the program's word; words.size(): none
    bool chdir = false;        // a wrapper changes the directory (env -C, sudo -D)
    bool from_stdin = false;   // xargs: the operands come from its input
    bool split = false;        // env -S, flock -c: the command is one string, the word at `program`
    std::size_t split_at = 0;  // where in that word the string starts (-S'...' is one word)
};

// Steps over the wrappers in `words` from `first`.
SBX_INLINE Unwrapped unwrap(const std::vector<Word>& words, std::size_t first);

// The name a program word runs: its last path component.
SBX_INLINE std::string program_name(const Word& w);

// How deep sh -c and eval may nest before the check gives up (incomplete).
inline constexpr int kMaxNesting = 8;

class RemovalChecker {
public:
    RemovalChecker(const RemovalPlace& place, RemovalCheck& out) : place_(place), out_(out) {}
    struct Context {
        std::optional<std::string> cwd;  // nullopt: a `cd` the check cannot follow
        std::size_t base = 0;  // the outermost line's byte where this line's byte 0 is
        bool exact = true;     // false: code inside a word, whose findings point at the word
        int nesting = 0;       // how many sh -c and eval this code is inside
    };
    // Checks the commands of `r`, starting in `start`.
    void check_line(const Reading& r, Context start);

private:
    // What a remover's words say: its operands, and the options that matter.
    struct RemoverArgs {
        std::vector<const Word*> operands;
        bool deletes = false;          // rsync --delete (--del...)
        bool removes_sources = false;  // rsync --remove-source-files
        bool target_dir = false;       // mv -t: every operand is a source
        bool parents = false;          // rmdir -p
    };
    void check_command(const std::vector<Word>& words, std::size_t first, const Context& c, bool from_find);
    // Code a command runs from a word (sh -c, eval, env -S): checked, and true.
    bool check_code_of(const std::string& name, const std::vector<Word>& words, const Unwrapped& u, const Context& c);
    static RemoverArgs remover_args(const std::string& name, const std::vector<Word>& words, std::size_t first);
    void check_remover(const std::string& name, const RemoverArgs& a, const Context& c);
    void check_operand(const std::string& program, const Word& w, const Context& c);
    void check_find(const std::vector<Word>& words, std::size_t first, const Context& c);
    void check_code(const std::string& code, const Word& at, const Context& c);
    void add(std::string program, std::string operand, std::string why, const Word& w, const Context& c);
    std::size_t where(const Word& w, const Context& c) const { return c.exact ? c.base + w.begin : c.base; }

    const RemovalPlace& place_;
    RemovalCheck& out_;
    bool stdin_read_ = false;  // the command's standard input is a here-document, checked as code
};

}  // namespace detail

}  // namespace sbx::route

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_ROUTE)

namespace sbx::route {

SBX_INLINE std::optional<std::string> critical_path(std::string_view path, const RemovalPlace& place) {
    auto fold = [&](std::string_view s) { return place.folds_case ? sbx::ascii_lower(s) : std::string(s); };
    const std::string p = fold(path);
    if (p == "/") return std::string("/");
    if (!place.home.empty() && p == fold(place.home)) return std::string("the home directory");
    const std::string root = fold(place.root);
    if (!root.empty() && p == root) return std::string("the workspace root");
    if (!root.empty() && paths::at_or_under(root, p)) return std::string("a directory above the workspace root");
    for (const auto c : paths::components(p))
        if (c == ".git") return std::string("a .git directory or something in it");
    return std::nullopt;
}

SBX_INLINE RemovalCheck critical_removals(const Reading& r, const RemovalPlace& place) {
    RemovalCheck out;
    detail::RemovalChecker::Context start;
    start.cwd = place.cwd.empty() ? place.root : place.cwd;
    detail::RemovalChecker(place, out).check_line(r, start);
    return out;
}

namespace detail {

// A wrapper: the options that take the next word as their value (a short one
// also takes the rest of its word: -n10), how many words come before the
// command, and the options that change the directory or split a string.
struct Wrapper {
    std::string_view name;
    std::string_view short_values;                 // letters of short options with a value
    std::array<std::string_view, 12> long_values;  // long options with a value (also --x=v)
    int positionals;                               // words before the command: timeout's duration
    std::string_view chdir;                        // short letters that change the directory
    std::string_view split;                        // short letters whose value is the whole command
};

inline constexpr Wrapper kWrappers[] = {
    {"env", "uCS", {"--unset", "--chdir", "--split-string"}, 0, "C", "S"},
    {"nice", "n", {"--adjustment"}, 0, "", ""},
    {"timeout", "sk", {"--signal", "--kill-after"}, 1, "", ""},
    {"nohup", "", {}, 0, "", ""},
    {"sudo", "CDghprRTtUu", {"--close-from", "--chdir", "--group", "--host", "--prompt", "--role", "--chroot",
                            "--command-timeout", "--type", "--other-user", "--user"}, 0, "DR", ""},
    {"doas", "uC", {}, 0, "", ""},
    {"stdbuf", "ioe", {"--input", "--output", "--error"}, 0, "", ""},
    {"ionice", "cnpPu", {"--class", "--classdata", "--pid", "--pgid", "--uid"}, 0, "", ""},
    {"chrt", "TPD", {"--sched-runtime", "--sched-period", "--sched-deadline"}, 1, "", ""},
    {"taskset", "", {}, 1, "", ""},
    {"setsid", "", {}, 0, "", ""},
    {"caffeinate", "tw", {}, 0, "", ""},
    {"command", "", {}, 0, "", ""},
    {"exec", "a", {}, 0, "", ""},
    {"busybox", "", {}, 0, "", ""},
    {"watch", "nd", {"--interval", "--differences"}, 0, "", ""},
    {"flock", "wEc", {"--timeout", "--conflict-exit-code", "--command"}, 1, "", "c"},
    {"xargs", "adEILnPs", {"--arg-file", "--delimiter", "--eof", "--replace", "--max-lines", "--max-args",
                           "--max-procs", "--max-chars", "--process-slot-var"}, 0, "", ""},
};

inline const Wrapper* wrapper_of(std::string_view name) {
    for (const auto& w : kWrappers)
        if (w.name == name) return &w;
    return nullptr;
}

inline constexpr std::string_view kRemovers[] = {"rm", "rmdir", "unlink", "mv", "rsync"};
inline constexpr std::string_view kShells[] = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"};

inline bool is_one_of(std::string_view name, std::span<const std::string_view> names) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

inline bool is_name_assignment(std::string_view t) {
    const auto eq = t.find('=');
    if (eq == 0 || eq == std::string_view::npos) return false;
    for (std::size_t k = 0; k < eq; ++k) {
        const char c = t[k];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || (k > 0 && c >= '0' && c <= '9')))
            return false;
    }
    return true;
}

// A component that matches every name, or every dotted one: *, **, ?*, .*, .??*.
inline bool wide_wildcard(std::string_view comp) {
    if (!comp.empty() && comp.front() == '.') comp.remove_prefix(1);
    return !comp.empty() && comp.find('*') != std::string_view::npos &&
           comp.find_first_not_of("*?") == std::string_view::npos;
}

SBX_INLINE std::string program_name(const Word& w) {
    const auto slash = w.text.rfind('/');
    return slash == std::string::npos ? w.text : w.text.substr(slash + 1);
}

SBX_INLINE Unwrapped unwrap(const std::vector<Word>& words, std::size_t first) {
    Unwrapped u;
    std::size_t k = first;
    for (int hops = 0; k < words.size() && hops < 16; ++hops) {
        const Wrapper* w = words[k].literal() ? wrapper_of(program_name(words[k])) : nullptr;
        if (w == nullptr) break;
        if (w->name == "xargs") u.from_stdin = true;
        ++k;
        int positionals = w->positionals;
        while (k < words.size()) {
            const std::string& t = words[k].text;
            if (t == "--") {
                ++k;
                break;
            }
            if (w->name == "env" && (is_name_assignment(t) || t == "-")) {
                ++k;
                continue;
            }
            if (t.size() > 2 && t.compare(0, 2, "--") == 0) {
                const auto eq = t.find('=');
                const std::string name = t.substr(0, eq);
                const bool takes = std::find(w->long_values.begin(), w->long_values.end(), name) != w->long_values.end();
                if (name == "--chdir") u.chdir = true;
                if ((w->name == "env" && name == "--split-string") || (w->name == "flock" && name == "--command")) {
                    u.split = true;
                    u.split_at = eq == std::string::npos ? 0 : eq + 1;
                    if (eq == std::string::npos) ++k;
                    break;
                }
                k += takes && eq == std::string::npos ? 2 : 1;
                continue;
            }
            if (t.size() > 1 && t[0] == '-' && !(w->name == "nice" && t[1] >= '0' && t[1] <= '9')) {
                // A cluster of short options: the first with a value takes the rest, or the next word.
                std::size_t skip = 1;
                for (std::size_t j = 1; j < t.size(); ++j) {
                    if (w->chdir.find(t[j]) != std::string_view::npos) u.chdir = true;
                    if (w->split.find(t[j]) != std::string_view::npos) {
                        u.split = true;
                        u.split_at = j + 1 == t.size() ? 0 : j + 1;
                        skip = j + 1 == t.size() ? 1 : 0;
                        break;
                    }
                    if (w->short_values.find(t[j]) != std::string_view::npos) {
                        if (j + 1 == t.size()) skip = 2;
                        break;
                    }
                }
                k += skip;
                if (u.split) break;
                continue;
            }
            if (w->name == "nice" && t.size() > 1 && t[0] == '-') {  // nice -10
                ++k;
                continue;
            }
            if (positionals > 0) {
                --positionals;
                ++k;
                continue;
            }
            break;
        }
        if (u.split) break;
    }
    u.program = std::min(k, words.size());
    return u;
}

SBX_INLINE void RemovalChecker::add(std::string program, std::string operand, std::string why, const Word& w,
                                    const Context& c) {
    out_.critical.push_back(CriticalRemoval{std::move(program), std::move(operand), std::move(why), where(w, c)});
}

SBX_INLINE void RemovalChecker::check_line(const Reading& r, Context c) {
    if (!r.readable()) out_.complete = false;
    for (std::size_t i = 0; i < r.commands.size(); ++i) {
        const Command& cmd = r.commands[i];
        if (cmd.words.empty()) continue;
        // A command of a pipeline, in the background or in a ( ) group runs in a
        // subshell of its own: a cd there does not last.
        auto piped = [](Joint j) { return j == Joint::pipe || j == Joint::pipe_all; };
        const bool own_shell = cmd.subshell || piped(cmd.joint) || cmd.joint == Joint::background ||
                               (i > 0 && piped(r.commands[i - 1].joint));
        const Unwrapped u = unwrap(cmd.words, 0);
        if (u.program < cmd.words.size()) {
            const Word& prog = cmd.words[u.program];
            const std::string name = program_name(prog);
            // A cd lasts for the commands after it. One the check cannot follow
            // (pushd, popd, cd -, a target the shell decides), or one in a
            // subshell (whose end the check does not track), leaves the directory
            // unknown: relative operands after it are critical.
            if (name == "cd" || name == "pushd" || name == "popd") {
                const bool one = u.program + 2 == cmd.words.size();
                const Word* to = one ? &cmd.words[u.program + 1] : nullptr;
                if (name == "cd" && u.program + 1 == cmd.words.size()) {
                    c.cwd = own_shell ? std::nullopt : std::optional<std::string>(place_.home);
                } else if (name == "cd" && to != nullptr && to->literal() && to->text != "-" && !own_shell && c.cwd) {
                    c.cwd = paths::is_absolute(to->text) ? paths::normalize(to->text) : paths::join(*c.cwd, to->text);
                } else {
                    c.cwd = std::nullopt;
                }
                continue;
            }
        }
        // A shell that reads its code from a here-document: that code, read again.
        stdin_read_ = false;
        if (u.program < cmd.words.size() && is_one_of(program_name(cmd.words[u.program]), kShells))
            for (const Redirect& rd : cmd.redirects)
                if ((rd.fd == -1 || rd.fd == 0) && (rd.op == "<<" || rd.op == "<<-")) {
                    check_code(rd.body, cmd.words[u.program], c);
                    stdin_read_ = true;
                }
        check_command(cmd.words, 0, c, false);
    }
}

SBX_INLINE void RemovalChecker::check_command(const std::vector<Word>& words, std::size_t first, const Context& c,
                                              bool from_find) {
    const Unwrapped u = unwrap(words, first);
    if (u.program >= words.size()) return;
    const Word& prog = words[u.program];
    const std::string name = program_name(prog);
    Context here = c;
    if (u.chdir) here.cwd = std::nullopt;
    if (check_code_of(name, words, u, here)) return;
    if (name == "find") return check_find(words, u.program + 1, here);
    if (!is_one_of(name, kRemovers) || !prog.literal()) return;
    const RemoverArgs args = remover_args(name, words, u.program + 1);
    if (u.from_stdin || from_find) {
        if (name != "rsync" || args.deletes || args.removes_sources)
            add(name, "", u.from_stdin ? "operands from xargs's input" : "operands find decides ({})", prog, here);
        return;
    }
    check_remover(name, args, here);
}

SBX_INLINE bool RemovalChecker::check_code_of(const std::string& name, const std::vector<Word>& words,
                                              const Unwrapped& u, const Context& c) {
    const Word& prog = words[u.program];
    auto code = [&](const std::string& text, const Word& at, bool literal) {
        if (literal) check_code(text, at, c);
        else out_.complete = false;
        return true;
    };
    // env -S 'rm -rf x', flock -c '...': the command is one string.
    if (u.split) return code(prog.text.substr(std::min(u.split_at, prog.text.size())), prog, prog.literal());
    if (name == "eval") {
        std::string text;
        bool literal = true;
        for (std::size_t k = u.program + 1; k < words.size(); ++k) {
            literal = literal && words[k].literal();
            text += (k > u.program + 1 ? " " : "") + words[k].text;
        }
        return u.program + 1 < words.size() ? code(text, words[u.program + 1], literal) : true;
    }
    if (!is_one_of(name, kShells)) return false;
    // sh -c CODE: the first operand after -c (or a cluster with c) is code.
    for (std::size_t k = u.program + 1; k < words.size(); ++k) {
        const std::string& t = words[k].text;
        if (t.empty() || t[0] != '-' || t == "-" || t == "--") break;
        if (t[1] != '-' && t.find('c') != std::string::npos)
            return k + 1 < words.size() ? code(words[k + 1].text, words[k + 1], words[k + 1].literal()) : true;
    }
    // Code from standard input (a pipe, a file, a here-document, -s), which the
    // line does not show: the check cannot see what it removes. A script is a
    // program like any other.
    bool script = false, from_stdin = false;
    for (std::size_t k = u.program + 1; k < words.size() && !script; ++k) {
        const std::string& t = words[k].text;
        if (t == "--" || t.size() < 2 || (t[0] != '-' && t[0] != '+')) script = t != "--" || k + 1 < words.size();
        else if (t[1] != '-' && t.find('s') != std::string::npos) from_stdin = true;
        else if (t == "-o" || t == "+o" || t == "-O" || t == "+O" || t == "--rcfile" || t == "--init-file") ++k;
    }
    if ((from_stdin || !script) && !stdin_read_) out_.complete = false;
    return true;
}

SBX_INLINE RemovalChecker::RemoverArgs RemovalChecker::remover_args(const std::string& name,
                                                                    const std::vector<Word>& words, std::size_t first) {
    RemoverArgs a;
    bool options = true;
    for (std::size_t k = first; k < words.size(); ++k) {
        const Word& w = words[k];
        const std::string& t = w.text;
        if (options && t == "--") {
            options = false;
            continue;
        }
        if (!options || t.size() < 2 || t[0] != '-') {
            a.operands.push_back(&w);
            continue;
        }
        if (name == "rsync") {
            if (t.rfind("--del", 0) == 0) a.deletes = true;
            if (t == "--remove-source-files") a.removes_sources = true;
            if (t == "-e" || t == "-f" || t == "-B" || t == "-T") ++k;  // a value follows
        } else if (name == "mv") {
            if (t == "-t" || t == "--target-directory" || t.rfind("--target-directory=", 0) == 0) a.target_dir = true;
            if (t == "-t" || t == "--target-directory" || t == "-S" || t == "--suffix") ++k;
        } else if (name == "rmdir") {
            // rmdir -p a/b removes a too.
            if (t == "--parents" || (t[1] != '-' && t.find('p') != std::string::npos)) a.parents = true;
        }
    }
    return a;
}

SBX_INLINE void RemovalChecker::check_remover(const std::string& name, const RemoverArgs& a, const Context& c) {
    if (name == "rm" || name == "unlink") {
        for (const Word* w : a.operands) check_operand(name, *w, c);
    } else if (name == "rmdir") {
        for (const Word* w : a.operands) {
            check_operand(name, *w, c);
            if (!a.parents || !w->literal()) continue;
            for (std::string p = w->text; p.find('/') != std::string::npos;) {  // each parent is an operand
                p = p.substr(0, p.rfind('/'));
                if (p.empty()) break;
                Word parent = *w;
                parent.text = p;
                check_operand(name, parent, c);
            }
        }
    } else if (name == "mv") {
        // What it moves away: every operand but the destination.
        const std::size_t n = a.operands.size();
        const std::size_t sources = a.target_dir ? n : (n == 0 ? 0 : n - 1);
        for (std::size_t k = 0; k < sources; ++k) check_operand(name, *a.operands[k], c);
    } else if (name == "rsync" && !a.operands.empty()) {
        // host:path is another machine's.
        auto local = [](const Word& w) {
            return !w.text.empty() && (w.text.find(':') == std::string::npos || w.text.front() == '/');
        };
        if (a.deletes && local(*a.operands.back())) check_operand(name, *a.operands.back(), c);
        if (a.removes_sources)
            for (std::size_t k = 0; k + 1 < a.operands.size(); ++k)
                if (local(*a.operands[k])) check_operand(name, *a.operands[k], c);
    }
}

SBX_INLINE void RemovalChecker::check_operand(const std::string& program, const Word& w, const Context& c) {
    if ((w.expansions & (kParameter | kBrace)) != 0) return add(program, w.text, "an operand the shell decides", w, c);
    std::string text = w.text;
    if ((w.expansions & kTilde) != 0) {
        if (text == "~") text = place_.home;
        else if (text.rfind("~/", 0) == 0) text = place_.home + text.substr(1);
        else return add(program, w.text, "an operand the shell decides", w, c);
    }
    if (text.empty()) return;
    if (!paths::is_absolute(text) && !c.cwd)
        return add(program, w.text, "a relative operand after a cd the check cannot follow", w, c);
    const std::string path = paths::is_absolute(text) ? paths::normalize(text) : paths::join(*c.cwd, text);
    if ((w.expansions & kGlob) != 0) {
        // Bash's wildcards: a leading dot is matched only by a dot. A wide one
        // (*, .*) over a critical directory, or one that can match .git, is critical.
        const auto comps = paths::components(path);
        auto folded = [&](std::string_view comp) { return place_.folds_case ? sbx::ascii_lower(comp) : std::string(comp); };
        for (const auto comp : comps)
            if (!glob::has_wildcard(comp) && folded(comp) == ".git")
                return add(program, w.text, "a .git directory or something in it", w, c);
        std::string dir = "/";
        bool literal_so_far = true;
        for (const auto comp : comps) {
            if (!glob::has_wildcard(comp)) {
                if (literal_so_far) dir = paths::join(dir, comp);
                continue;
            }
            if (comp.front() == '.' && glob::detail::match_component(folded(comp), ".git"))
                return add(program, w.text, "a wildcard that matches .git", w, c);
            if (literal_so_far && wide_wildcard(comp))
                if (auto why = critical_path(dir, place_)) return add(program, w.text, "a wildcard over " + *why, w, c);
            literal_so_far = false;
        }
        out_.removed.push_back(Removed{program, dir, where(w, c), true});
        return;
    }
    out_.removed.push_back(Removed{program, path, where(w, c), text.back() == '/'});
    if (auto why = critical_path(path, place_)) add(program, w.text, *why, w, c);
}

SBX_INLINE void RemovalChecker::check_find(const std::vector<Word>& words, std::size_t first, const Context& c) {
    for (std::size_t k = first; k < words.size(); ++k) {
        const std::string& t = words[k].text;
        if (t == "-delete") {
            add("find", "", "find -delete removes what find finds", words[k], c);
        } else if (t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir") {
            // The command runs to `;` or `+`; a remover there removes what find finds.
            std::vector<Word> command;
            std::size_t j = k + 1;
            for (; j < words.size() && words[j].text != ";" && words[j].text != "+"; ++j) command.push_back(words[j]);
            check_command(command, 0, c, true);
            k = j;
        }
    }
}

SBX_INLINE void RemovalChecker::check_code(const std::string& code, const Word& at, const Context& c) {
    if (c.nesting + 1 > kMaxNesting) {
        out_.complete = false;
        return;
    }
    // Offsets inside the code are not the line's: each finding points at the word.
    Context inner = c;
    inner.base = where(at, c);
    inner.exact = false;
    inner.nesting = c.nesting + 1;
    check_line(read_shell_line(code), inner);
}

}  // namespace detail

}  // namespace sbx::route
#endif
