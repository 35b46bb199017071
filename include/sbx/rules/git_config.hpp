// sbx/rules/git_config.hpp - git's config file syntax, read as git reads it.
//
// GitConfigParser reads the text of one git config file (no I/O: the caller reads
// it, through an FsView or otherwise) and returns what it says: the keys that
// protected_paths() follows (hooks path, includes, worktree) and every entry with
// its full name and line, which the audit after a run (git_audit.hpp) checks for keys
// that make git run a program. Where git would refuse the file, a problem names the
// line.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sbx/core/ascii.hpp"
#include "sbx/core/inline.hpp"

namespace sbx {

// One value of a git config key, with the line its key is on.
struct GitConfigValue {
    std::string value;
    std::size_t line = 0;
};

// One key of a git config file as git names it: section and key lower-cased, the
// subsection as written in `[section "subsection"]` (lower-cased in the older
// `[section.subsection]`), and its value; a bare `key` (a boolean true) has none.
// A key before any header (git refuses the file) has an empty section.
struct GitConfigEntry {
    std::string section;
    std::optional<std::string> subsection;
    std::string name;
    std::optional<std::string> value;
    std::size_t line = 0;

    // "section.subsection.name", or "section.name" without a subsection.
    std::string key() const { return section + "." + (subsection ? *subsection + "." : std::string()) + name; }
};

// What a git config file says that protected_paths() follows, in the file's order, and
// what in it could not be read, one "line N: ..." message each.
struct GitConfigFacts {
    std::vector<GitConfigEntry> entries;      // every key, in the file's order
    std::vector<GitConfigValue> hooks_paths;  // core.hooksPath
    std::vector<GitConfigValue> includes;     // include.path, includeIf.<condition>.path
    std::vector<GitConfigValue> worktrees;    // core.worktree
    std::vector<std::string> problems;
};

// Reads git's config syntax as git's own parser does (config.c), keeping the keys of
// GitConfigFacts: `[section]`, `[section "subsection"]` and the older
// `[section.subsection]`, section and key names case-insensitive; `key = value`, or a
// bare `key` (a boolean, nothing to follow); in a value, double quotes, the escapes
// \" \\ \n \t \b, a backslash ending a line to go on with the next, `#` and `;`
// starting a comment outside quotes, blanks around it dropped. Where git would refuse
// the file, a problem names the line and reading goes on with the next line, so that
// every value in the file is still seen. Keys after a header it cannot read, or before
// any header, are not kept.
class GitConfigParser {
public:
    explicit GitConfigParser(std::string_view text) : s_(text) {
        if (s_.substr(0, 3) == "\xEF\xBB\xBF") s_.remove_prefix(3);  // a UTF-8 byte order mark, skipped as git does
    }

    GitConfigFacts parse() &&;

private:
    // The sections whose keys are kept; `other` and `none` (before any header, or after
    // one that could not be read) keep nothing.
    enum class Section { none, core, include, include_if, other };

    std::string_view s_;
    std::size_t i_ = 0;
    std::size_t line_ = 1;  // the line of the next character
    std::size_t at_ = 1;    // the line of the character last read
    int last_ = 0;          // the character last read
    bool eof_ = false;
    GitConfigFacts out_;
    // The header in force: its section name and subsection, as GitConfigEntry has them.
    std::string section_name_;
    std::optional<std::string> subsection_;

    static bool is_space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
    static bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
    static bool is_keychar(int c) { return is_alpha(c) || (c >= '0' && c <= '9') || c == '-'; }
    static char lower(int c) { return ascii_lower(static_cast<char>(c)); }

    // The next byte, "\r\n" read as "\n", and "\n" again and again at the end (as git).
    int next();

    // Notes what git would refuse at the line last read, and skips the rest of it.
    void problem(const std::string& what) {
        out_.problems.push_back("line " + std::to_string(at_) + ": " + what);
        while (last_ != '\n') next();
    }

    // After `[`: the section, or none with a problem.
    Section header();

    Section bad_header();

    // The rest of `[section "subsection"]`, after the blank that ends the name.
    bool subsection();

    // A key, its first character read, and its value: one entry, and kept among the
    // followed keys when `section` wants it. After a header that could not be read
    // nothing is kept (git refuses the file; the problem says so).
    void entry(int first, Section section);

    // A value, after its `=`, up to the end of its (perhaps continued) line.
    std::optional<std::string> value();
};


}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_RULES)

namespace sbx {

SBX_INLINE GitConfigFacts GitConfigParser::parse() && {
    Section section = Section::none;
    bool comment = false;
    for (;;) {
        const int c = next();
        if (c == '\n') {
            if (eof_) break;
            comment = false;
            continue;
        }
        if (comment || is_space(c)) continue;
        if (c == '#' || c == ';') {
            comment = true;
            continue;
        }
        if (c == '[') {
            section = header();
            continue;
        }
        if (!is_alpha(c)) {
            problem("expected a [section] header, a 'key = value' line or a comment");
            continue;
        }
        entry(c, section);
    }
    return std::move(out_);
}

SBX_INLINE int GitConfigParser::next() {
    at_ = line_;
    if (i_ >= s_.size()) {
        eof_ = true;
        return last_ = '\n';
    }
    int c = static_cast<unsigned char>(s_[i_++]);
    if (c == '\r' && i_ < s_.size() && s_[i_] == '\n') {
        ++i_;
        c = '\n';
    }
    if (c == '\n') ++line_;
    return last_ = c;
}

SBX_INLINE GitConfigParser::Section GitConfigParser::header() {
    std::string name;
    bool sub = false;
    section_name_.clear();
    subsection_.reset();
    for (;;) {
        const int c = next();
        if (c == ']') break;
        if (c != '\n' && is_space(c)) {
            if (!subsection()) return bad_header();
            sub = true;
            break;
        }
        if (!is_keychar(c) && c != '.') return bad_header();
        name += lower(c);
    }
    if (name.empty()) return bad_header();
    if (const auto dot = name.find('.'); dot != std::string::npos) {  // [section.subsection]
        sub = true;
        subsection_ = name.substr(dot + 1);
        name.resize(dot);
    }
    section_name_ = name;
    if (name == "core" && !sub) return Section::core;
    if (name == "include" && !sub) return Section::include;
    if (name == "includeif" && sub) return Section::include_if;
    return Section::other;
}

SBX_INLINE GitConfigParser::Section GitConfigParser::bad_header() {
    section_name_.clear();
    subsection_.reset();
    problem("a section header git cannot read (it takes [section] or [section \"subsection\"]); "
            "the keys below it are not followed");
    return Section::none;
}

SBX_INLINE bool GitConfigParser::subsection() {
    int c = next();
    while (c != '\n' && is_space(c)) c = next();
    if (c != '"') return false;
    std::string sub;
    for (;;) {
        c = next();
        if (c == '\n') return false;
        if (c == '"') break;
        if (c == '\\' && (c = next()) == '\n') return false;  // a backslash takes the next byte as it is
        sub += static_cast<char>(c);
    }
    subsection_ = std::move(sub);
    return next() == ']';
}

SBX_INLINE void GitConfigParser::entry(int first, Section section) {
    const std::size_t line = at_;
    std::string key(1, lower(first));
    int c = next();
    while (is_keychar(c)) {
        key += lower(c);
        c = next();
    }
    while (c == ' ' || c == '\t') c = next();
    const bool kept = section != Section::none || out_.problems.empty();
    auto record = [&](std::optional<std::string> v) {
        if (kept) out_.entries.push_back(GitConfigEntry{section_name_, subsection_, key, std::move(v), line});
    };
    if (c == '\n') {  // a bare key: a boolean true
        record(std::nullopt);
        return;
    }
    if (c != '=') {
        problem("expected '=' or the end of the line after the key '" + key + "'");
        return;
    }
    auto v = value();
    if (!v) return;
    record(*v);
    std::vector<GitConfigValue>* to = nullptr;
    if (section == Section::core && key == "hookspath") to = &out_.hooks_paths;
    if (section == Section::core && key == "worktree") to = &out_.worktrees;
    if ((section == Section::include || section == Section::include_if) && key == "path") to = &out_.includes;
    if (to != nullptr) to->push_back(GitConfigValue{std::move(*v), line});
}

SBX_INLINE std::optional<std::string> GitConfigParser::value() {
    std::string v;
    std::string blanks;  // blanks after some text, kept only if more text follows
    bool quote = false;
    bool comment = false;
    for (;;) {
        int c = next();
        if (c == '\n') {
            if (quote) {
                problem("a quoted value must end on its line");
                return std::nullopt;
            }
            return v;
        }
        if (comment) continue;
        if (is_space(c) && !quote) {
            if (!v.empty()) blanks += static_cast<char>(c);
            continue;
        }
        if (!quote && (c == '#' || c == ';')) {
            comment = true;
            continue;
        }
        v += blanks;
        blanks.clear();
        if (c == '\\') {
            c = next();
            switch (c) {
                case '\n': continue;  // the value goes on with the next line
                case 't': c = '\t'; break;
                case 'b': c = '\b'; break;
                case 'n': c = '\n'; break;
                case '\\':
                case '"': break;
                default:
                    problem(c > 0x20 && c < 0x7f ? "an unknown escape '\\" + std::string(1, static_cast<char>(c)) + "'"
                                                 : std::string("an unknown escape after a backslash"));
                    return std::nullopt;
            }
            v += static_cast<char>(c);
            continue;
        }
        if (c == '"') {
            quote = !quote;
            continue;
        }
        v += static_cast<char>(c);
    }
}

}  // namespace sbx
#endif
