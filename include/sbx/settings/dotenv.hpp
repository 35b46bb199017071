// sbx/settings/dotenv.hpp - the variables of a `.env` file, read strictly.
//
// An agent file's `env:` list names variables the command gets; one the shell
// does not export is taken from `./.env`, then from the agent folder's `.env`
// (the agent-file reference, "Environment"). parse_dotenv() reads such a file;
// the caller passes on only the names the list asks for.
//
// The format, one assignment per line:
//   # a comment, and blank lines
//   NAME=value            unquoted: up to a ` #` comment, spaces around it trimmed
//   export NAME=value     `export ` is allowed and ignored
//   NAME='literal'        single quotes: nothing inside is special
//   NAME="a\nb"           double quotes: \n \r \t \" \\ are escapes, and the value
//                         may go on over several lines until the closing quote
// NAME is a shell name ([A-Za-z_][A-Za-z0-9_]*); spaces may stand around `=`. No
// `$VAR` is expanded. A later assignment of a name replaces an earlier one. Any
// other line, a NUL byte or text that is not UTF-8 is an error naming the file
// and line: a value read wrong would reach the command silently.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/error.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/json_write.hpp"

namespace sbx {

struct DotenvEntry {
    std::string name;
    std::string value;
    std::size_t line = 0;  // where the assignment starts, from 1
};

namespace detail {

inline bool dotenv_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
inline bool dotenv_name_char(char c) { return dotenv_name_start(c) || (c >= '0' && c <= '9'); }
inline bool dotenv_blank(char c) { return c == ' ' || c == '\t'; }

class DotenvReader {
public:
    DotenvReader(std::string_view text, const std::string& file) : s_(text), file_(file) {}

    expected<std::vector<DotenvEntry>> run();

private:
    std::string_view s_;
    const std::string& file_;
    std::size_t i_ = 0;
    std::size_t line_ = 1;

    tl::unexpected<Error> error_at(std::size_t line, const std::string& what) const {
        return fail(Error(Errc::invalid_settings, what).in_file(file_).at_key("line " + std::to_string(line)));
    }
    std::size_t line_of(std::size_t at) const;
    void skip_blanks() {
        while (i_ < s_.size() && dotenv_blank(s_[i_])) ++i_;
    }
    bool at_end_of_line() const {
        return i_ >= s_.size() || s_[i_] == '\n' || (s_[i_] == '\r' && i_ + 1 < s_.size() && s_[i_ + 1] == '\n') ||
               (s_[i_] == '\r' && i_ + 1 == s_.size());
    }
    void skip_to_end_of_line() {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
    }
    void next_line();
    // After a value: blanks, then the end of the line or a comment.
    expected<void> rest_of_line(const std::string& name);

    expected<DotenvEntry> assignment();
};

}  // namespace detail

// The assignments of a `.env` file's text, in order, each name once (the last
// assignment of it). `file` names the file in errors (INVALID_SETTINGS, with
// the line).
SBX_INLINE expected<std::vector<DotenvEntry>> parse_dotenv(std::string_view text, const std::string& file);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_SETTINGS)

namespace sbx::detail {

SBX_INLINE expected<std::vector<DotenvEntry>> DotenvReader::run() {
    if (s_.find('\0') != std::string_view::npos) return error_at(line_of(s_.find('\0')), "a NUL byte");
    if (!json::detail::valid_utf8(s_)) return fail(Error(Errc::invalid_settings, "not UTF-8 text").in_file(file_));
    std::vector<DotenvEntry> out;
    while (i_ < s_.size()) {
        skip_blanks();
        if (at_end_of_line()) {
            next_line();
            continue;
        }
        if (s_[i_] == '#') {
            skip_to_end_of_line();
            next_line();
            continue;
        }
        auto e = assignment();
        SBX_TRY(e);
        // A later assignment replaces an earlier one, as a shell would.
        std::erase_if(out, [&](const DotenvEntry& d) { return d.name == e->name; });
        out.push_back(std::move(*e));
    }
    return out;
}

SBX_INLINE std::size_t DotenvReader::line_of(std::size_t at) const {
    std::size_t n = 1;
    for (std::size_t k = 0; k < at && k < s_.size(); ++k)
        if (s_[k] == '\n') ++n;
    return n;
}

SBX_INLINE void DotenvReader::next_line() {
    skip_to_end_of_line();
    if (i_ < s_.size()) {
        ++i_;
        ++line_;
    }
}

SBX_INLINE expected<void> DotenvReader::rest_of_line(const std::string& name) {
    skip_blanks();
    if (!at_end_of_line() && s_[i_] != '#')
        return error_at(line_, "text after the closing quote of " + name + " (only a # comment may follow)");
    next_line();
    return {};
}

SBX_INLINE expected<DotenvEntry> DotenvReader::assignment() {
    const std::size_t start = line_;
    if (s_.substr(i_).starts_with("export") && i_ + 6 < s_.size() && dotenv_blank(s_[i_ + 6])) {
        i_ += 6;
        skip_blanks();
    }
    DotenvEntry e;
    e.line = start;
    if (i_ >= s_.size() || !dotenv_name_start(s_[i_]))
        return error_at(start, "expected NAME=VALUE, a comment (#) or a blank line");
    while (i_ < s_.size() && dotenv_name_char(s_[i_])) e.name += s_[i_++];
    skip_blanks();
    if (i_ >= s_.size() || s_[i_] != '=')
        return error_at(start, "expected NAME=VALUE, a comment (#) or a blank line; a name is letters, digits "
                               "and _, not starting with a digit");
    ++i_;
    skip_blanks();
    if (i_ < s_.size() && s_[i_] == '\'') {
        const std::size_t close = s_.find('\'', i_ + 1);
        const std::size_t eol = s_.find('\n', i_ + 1);
        if (close == std::string_view::npos || close > eol)
            return error_at(start, "no closing ' on the line of " + e.name);
        e.value = std::string(s_.substr(i_ + 1, close - i_ - 1));
        i_ = close + 1;
        SBX_TRY(rest_of_line(e.name));
        return e;
    }
    if (i_ < s_.size() && s_[i_] == '"') {
        ++i_;
        for (;;) {
            if (i_ >= s_.size()) return error_at(start, "no closing \" for " + e.name);
            const char c = s_[i_++];
            if (c == '"') break;
            if (c == '\n') ++line_;
            if (c != '\\') {
                e.value += c;
                continue;
            }
            if (i_ >= s_.size()) return error_at(start, "no closing \" for " + e.name);
            const char x = s_[i_++];
            switch (x) {
                case 'n': e.value += '\n'; break;
                case 'r': e.value += '\r'; break;
                case 't': e.value += '\t'; break;
                case '"': e.value += '"'; break;
                case '\\': e.value += '\\'; break;
                default:
                    return error_at(line_, std::string("unknown escape \\") + x + " in the value of " + e.name +
                                               " (known: \\n \\r \\t \\\" \\\\)");
            }
        }
        SBX_TRY(rest_of_line(e.name));
        return e;
    }
    // Unquoted: up to the end of the line or a comment that follows a blank.
    std::size_t end = i_;
    while (end < s_.size() && s_[end] != '\n' && !(s_[end] == '#' && end > i_ && dotenv_blank(s_[end - 1]))) ++end;
    std::string_view v = s_.substr(i_, end - i_);
    while (!v.empty() && (dotenv_blank(v.back()) || v.back() == '\r')) v.remove_suffix(1);
    e.value = std::string(v);
    i_ = end;
    next_line();
    return e;
}

}  // namespace sbx::detail

namespace sbx {

SBX_INLINE expected<std::vector<DotenvEntry>> parse_dotenv(std::string_view text, const std::string& file) {
    return detail::DotenvReader(text, file).run();
}

}  // namespace sbx
#endif
