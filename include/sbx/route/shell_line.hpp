// sbx/route/shell_line.hpp - what a command line says, read strictly.
//
// A host hands sbx the command line its agent wrote, to be run by `bash -c`.
// Before anything decides about it (route.hpp: where it runs, whether it asks),
// this reader takes it apart as bash would: into simple commands, each with its
// assignments, its words and its redirections, joined by `;`, `&&`, `||`, `|`,
// `|&`, `&` and newlines, inside `( )` and `{ }` groups. Quoting, backslash
// escapes, line continuations, comments and here-documents are undone as bash
// undoes them, so a word's text is what the program receives.
//
// It reads conservatively. Where the program a word names or the value it has is
// decided when the line runs, not by its text, the word says so (Word::expansions:
// a parameter, a tilde, a wildcard, a brace expansion). Where bash would run code
// the line does not show, or where the syntax is more than this reader takes
// apart, the whole line is unreadable (Reading::unreadable, naming the construct
// and the byte it starts at), never guessed:
//   - command and process substitutions ($(...), `...`, <(...), >(...)), and
//     arithmetic ($((...)), ((...)));
//   - compound commands (if, for, while, until, case, select, [[ ]], function
//     definitions, coproc, time);
//   - ANSI-C and locale quoting ($'...', $"..."), parameter expansions with an
//     operator (${X:-...}, ${X#...}), array assignments, named descriptors
//     ({fd}>), and a here-document whose body would expand a substitution;
//   - what bash itself refuses: an unterminated quote, an operator with no
//     command on one side, a `)` or `}` that closes nothing;
//   - a line longer than kMaxLineBytes, nested deeper than kMaxDepth, or with
//     more than kMaxCommands commands (limits a caller cannot push the reader
//     past: it stops and says so).
// History expansion (`!`) is not done: `bash -c` does none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/inline.hpp"

namespace sbx::route {

// What in a word is decided when the line runs, one bit each.
enum Expansion : unsigned {
    kParameter = 1u << 0,  // $NAME, ${NAME}, $1, $@ ...: the variable's value
    kTilde = 1u << 1,      // ~, ~user, ~+ at the start (or after name= and :)
    kGlob = 1u << 2,       // an unquoted *, ? or [: the names that match
    kBrace = 1u << 3,      // an unquoted {a,b} or {1..3}: several words
};

struct Word {
    // The word with its quoting undone. Where it expands, the expansions stay as
    // written ("$HOME/x", "*.o"): the text the program would get is not known.
    std::string text;
    unsigned expansions = 0;  // Expansion bits
    bool quoted = false;      // some of it was quoted or escaped
    std::size_t begin = 0;    // its bytes in the line: [begin, end)
    std::size_t end = 0;

    // What the program receives is `text`, whatever runs it.
    bool literal() const { return expansions == 0; }
};

struct Redirect {
    std::string op;  // <  >  >>  >|  <>  <&  >&  &>  &>>  <<  <<-  <<<
    int fd = -1;     // the descriptor written before the operator (2>), or -1
    Word target;     // the file, the descriptor, or a here-document's delimiter
    std::string body;  // a here-document's text (for << and <<-)
};

// What follows a command.
enum class Joint {
    end,         // the end of the line, or of a ( ) or { } group
    semicolon,   // ;
    newline,     // a newline
    and_if,      // &&
    or_if,       // ||
    pipe,        // |
    pipe_all,    // |& (standard error too)
    background,  // &
};

struct Command {
    std::vector<Word> assignments;  // NAME=value (and NAME+=value) before the first word
    std::vector<Word> words;        // the program and its arguments
    std::vector<Redirect> redirects;
    bool negated = false;   // after `!`
    unsigned depth = 0;     // inside how many ( ) and { } groups
    bool subshell = false;  // inside a ( ) group at some depth: a `cd` there ends with it
    Joint joint = Joint::end;
    std::size_t begin = 0;  // the bytes from its first word to its last
    std::size_t end = 0;
};

struct Unreadable {
    std::string why;     // the construct, in a few words: "a command substitution $(...)"
    std::size_t at = 0;  // the byte where it starts
};

struct Reading {
    std::vector<Command> commands;
    std::optional<Unreadable> unreadable;  // set: `commands` is only what came before it

    bool readable() const { return !unreadable; }
};

inline constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;
inline constexpr unsigned kMaxDepth = 64;
inline constexpr std::size_t kMaxCommands = 4096;

// Reads `line` as bash -c would, by the rules above.
SBX_INLINE Reading read_shell_line(std::string_view line);

// The text of a joint as it is written ("&&", "\n" for a newline, "" for the end).
SBX_INLINE std::string_view joint_text(Joint j);

namespace detail {

// One pass over a line: the position, what is read so far, and the first
// reason it is unreadable.
class LineReader {
public:
    explicit LineReader(std::string_view s) : s_(s) {}
    Reading read();

private:
    struct PendingBody {
        std::size_t command, redirect;  // where its Redirect is
        std::string delimiter;
        bool strip_tabs, expands;
    };

    bool fail(std::string why, std::size_t at);
    bool at_end() const { return i_ >= s_.size(); }
    char peek(std::size_t ahead = 0) const { return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0'; }
    bool starts(std::string_view text) const { return s_.substr(i_, text.size()) == text; }
    static bool blank(char c) { return c == ' ' || c == '\t'; }
    static bool operator_char(char c) {
        return c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>';
    }
    static bool name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
    static bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

    void skip_blanks();
    bool read_word(Word& w);
    bool read_dollar(Word& w, std::vector<bool>& quoted_at, bool in_quotes);
    bool read_double_quoted(Word& w, std::vector<bool>& quoted_at);
    static void mark_tilde_and_brace(Word& w, const std::vector<bool>& quoted_at);
    bool read_redirect(std::size_t command, int fd);
    bool read_operator();
    bool read_bare_redirect();
    bool read_command_word();
    bool finish_line();
    bool open_group(char kind, std::size_t at);
    bool close_group(char kind, std::size_t at);
    bool read_bodies();
    bool finish_command(Joint j, std::size_t at);
    bool word_at_command_position(Word w);

    std::string_view s_;
    std::size_t i_ = 0;
    Reading out_;
    Command current_;
    bool have_current_ = false;  // current_ has a word, an assignment, a redirect or `!`
    bool need_command_ = false;  // an operator that needs a command after it was read
    std::size_t need_at_ = 0;
    std::string need_op_;
    bool after_group_ = false;  // a group just closed: an operator or a redirection may follow
    struct Group {
        char kind;             // '(' or '{'
        std::size_t commands;  // how many commands there were when it opened
    };
    std::vector<Group> groups_;
    std::vector<PendingBody> bodies_;
};

}  // namespace detail

}  // namespace sbx::route

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_ROUTE)

namespace sbx::route {

SBX_INLINE std::string_view joint_text(Joint j) {
    switch (j) {
        case Joint::end: return "";
        case Joint::semicolon: return ";";
        case Joint::newline: return "\n";
        case Joint::and_if: return "&&";
        case Joint::or_if: return "||";
        case Joint::pipe: return "|";
        case Joint::pipe_all: return "|&";
        case Joint::background: return "&";
    }
    return "";
}

SBX_INLINE Reading read_shell_line(std::string_view line) { return detail::LineReader(line).read(); }

namespace detail {

SBX_INLINE bool LineReader::fail(std::string why, std::size_t at) {
    if (!out_.unreadable) out_.unreadable = Unreadable{std::move(why), at};
    return false;
}

SBX_INLINE void LineReader::skip_blanks() {
    for (;;) {
        while (!at_end() && blank(peek())) ++i_;
        if (peek() == '\\' && peek(1) == '\n') {
            i_ += 2;  // a line continuation is removed, not a separator
            continue;
        }
        return;
    }
}

// Bash's words: up to an unquoted blank, newline or operator character.
SBX_INLINE bool LineReader::read_word(Word& w) {
    w = Word{};
    w.begin = i_;
    std::vector<bool> quoted_at;  // for each byte of w.text, whether it was quoted
    auto add = [&](char c, bool quoted) {
        w.text += c;
        quoted_at.push_back(quoted);
    };
    while (!at_end()) {
        const char c = peek();
        if (blank(c) || c == '\n' || operator_char(c)) break;
        if (c == '\\') {
            if (peek(1) == '\n') {
                i_ += 2;
                continue;
            }
            if (i_ + 1 >= s_.size()) return fail("a backslash at the end of the line", i_);
            add(s_[i_ + 1], true);
            w.quoted = true;
            i_ += 2;
            continue;
        }
        if (c == '\'') {
            const std::size_t close = s_.find('\'', i_ + 1);
            if (close == std::string_view::npos) return fail("a ' without its end", i_);
            for (std::size_t k = i_ + 1; k < close; ++k) add(s_[k], true);
            w.quoted = true;
            i_ = close + 1;
            continue;
        }
        if (c == '"') {
            if (!read_double_quoted(w, quoted_at)) return false;
            continue;
        }
        if (c == '$') {
            if (!read_dollar(w, quoted_at, false)) return false;
            continue;
        }
        if (c == '`') return fail("a command substitution `...`", i_);
        if (c == '*' || c == '?' || c == '[') w.expansions |= kGlob;
        add(c, false);
        ++i_;
    }
    w.end = i_;
    mark_tilde_and_brace(w, quoted_at);
    return true;
}

// "...": a backslash escapes only $ ` " \ and a newline; $ still expands.
SBX_INLINE bool LineReader::read_double_quoted(Word& w, std::vector<bool>& quoted_at) {
    const std::size_t open = i_++;
    w.quoted = true;
    while (!at_end()) {
        const char c = peek();
        if (c == '"') {
            ++i_;
            return true;
        }
        if (c == '\\') {
            const char next = peek(1);
            if (next == '\n') {
                i_ += 2;
                continue;
            }
            if (next == '$' || next == '`' || next == '"' || next == '\\') {
                w.text += next;
                quoted_at.push_back(true);
                i_ += 2;
                continue;
            }
        }
        if (c == '$') {
            if (!read_dollar(w, quoted_at, true)) return false;
            continue;
        }
        if (c == '`') return fail("a command substitution `...`", i_);
        w.text += c;
        quoted_at.push_back(true);
        ++i_;
    }
    return fail("a \" without its end", open);
}

// At a `$`: a parameter (kept as written, the word marked), a literal `$`, or
// something unreadable.
SBX_INLINE bool LineReader::read_dollar(Word& w, std::vector<bool>& quoted_at, bool in_quotes) {
    const std::size_t at = i_;
    const char next = peek(1);
    auto keep = [&](std::size_t length) {
        for (std::size_t k = 0; k < length; ++k) {
            w.text += s_[at + k];
            quoted_at.push_back(in_quotes);
        }
        i_ = at + length;
        w.expansions |= kParameter;
        return true;
    };
    if (next == '(') {
        if (peek(2) == '(') return fail("an arithmetic expansion $((...))", at);
        return fail("a command substitution $(...)", at);
    }
    if (next == '[') return fail("an arithmetic expansion $[...]", at);
    if (next == '\'' && !in_quotes) return fail("ANSI-C quoting $'...'", at);
    if (next == '"' && !in_quotes) return fail("locale quoting $\"...\"", at);
    if (next == '{') {
        std::size_t k = at + 2;
        if (k < s_.size() && s_[k] == '#' && k + 1 < s_.size() && s_[k + 1] != '}') ++k;  // ${#NAME}: its length
        const std::size_t name = k;
        if (k < s_.size() && name_start(s_[k])) {
            while (k < s_.size() && name_char(s_[k])) ++k;
        } else if (k < s_.size() && s_[k] >= '0' && s_[k] <= '9') {
            while (k < s_.size() && s_[k] >= '0' && s_[k] <= '9') ++k;
        } else if (k < s_.size() && std::string_view("@*#?-$!").find(s_[k]) != std::string_view::npos) {
            ++k;
        }
        if (k == name || k >= s_.size()) return fail("a parameter expansion ${...} this reader does not take", at);
        if (s_[k] != '}') return fail("a parameter expansion with an operator ${...}", at);
        return keep(k + 1 - at);
    }
    if (name_start(next)) {
        std::size_t k = at + 1;
        while (k < s_.size() && name_char(s_[k])) ++k;
        return keep(k - at);
    }
    if ((next >= '0' && next <= '9') || std::string_view("@*#?-$!").find(next) != std::string_view::npos) {
        if (next != '\0') return keep(2);
    }
    // A `$` that starts nothing is itself.
    w.text += '$';
    quoted_at.push_back(in_quotes);
    ++i_;
    return true;
}

// A tilde bash expands: at the start of the word, or after `NAME=` and after
// each `:` of what follows it (bash does this in any word that looks like an
// assignment). A brace expansion: an unquoted { with an unquoted , or .. in it
// and its unquoted }.
SBX_INLINE void LineReader::mark_tilde_and_brace(Word& w, const std::vector<bool>& quoted_at) {
    const std::string& t = w.text;
    auto unquoted = [&](std::size_t k, char c) { return k < t.size() && t[k] == c && !quoted_at[k]; };
    if (unquoted(0, '~')) w.expansions |= kTilde;
    std::size_t k = 0;
    if (k < t.size() && name_start(t[k]) && !quoted_at[k]) {
        while (k < t.size() && name_char(t[k]) && !quoted_at[k]) ++k;
        if (unquoted(k, '+')) ++k;
        if (unquoted(k, '=')) {
            for (std::size_t j = k; j < t.size(); ++j)
                if ((unquoted(j, '=') || unquoted(j, ':')) && unquoted(j + 1, '~')) w.expansions |= kTilde;
        }
    }
    // One pass: for each unquoted { still open, whether a , or .. stands in it.
    std::vector<bool> open;
    for (std::size_t j = 0; j < t.size(); ++j) {
        if (unquoted(j, '{')) {
            open.push_back(false);
        } else if (unquoted(j, '}') && !open.empty()) {
            if (open.back()) {
                w.expansions |= kBrace;
                return;
            }
            open.pop_back();
        } else if (!open.empty() && (unquoted(j, ',') || (unquoted(j, '.') && unquoted(j + 1, '.')))) {
            open.back() = true;
        }
    }
}

SBX_INLINE bool LineReader::read_redirect(std::size_t command, int fd) {
    const std::size_t at = i_;
    Command& c = command < out_.commands.size() ? out_.commands[command] : current_;
    static constexpr std::string_view kOps[] = {"&>>", "<<<", "<<-", "&>", ">>", ">|", "<>", "<&", ">&", "<<", "<", ">"};
    std::string_view op;
    for (auto o : kOps)
        if (starts(o)) {
            op = o;
            break;
        }
    if (op.empty()) return fail("an operator this reader does not take", at);
    if ((op == "<" || op == ">") && peek(1) == '(') return fail("a process substitution", at);
    i_ += op.size();
    skip_blanks();
    Redirect r;
    r.op = std::string(op);
    r.fd = fd;
    // (A # there starts a comment, as anywhere a word would start.)
    if (at_end() || peek() == '\n' || peek() == '#' || operator_char(peek()))
        return fail("a redirection " + r.op + " with no word after it", at);
    if (!read_word(r.target)) return false;
    c.end = r.target.end;
    if (op == "<<" || op == "<<-") {
        if (!r.target.literal()) return fail("a here-document delimiter that expands", r.target.begin);
        bodies_.push_back(PendingBody{command, c.redirects.size(), r.target.text, op == "<<-", !r.target.quoted});
    }
    c.redirects.push_back(std::move(r));
    return true;
}

// The here-documents of the line just ended, in order: each body up to its
// delimiter's line.
SBX_INLINE bool LineReader::read_bodies() {
    for (const auto& b : bodies_) {
        const std::size_t start = i_;
        std::string body;
        bool closed = false;
        while (!at_end()) {
            const std::size_t eol = s_.find('\n', i_);
            const std::size_t stop = eol == std::string_view::npos ? s_.size() : eol;
            std::string_view text = s_.substr(i_, stop - i_);
            i_ = eol == std::string_view::npos ? s_.size() : eol + 1;
            if (b.strip_tabs)
                while (!text.empty() && text.front() == '\t') text.remove_prefix(1);
            if (text == b.delimiter) {
                closed = true;
                break;
            }
            body.append(text);
            body += '\n';
        }
        if (!closed) return fail("a here-document without its delimiter line", start);
        if (b.expands) {
            for (std::size_t k = 0; k < body.size(); ++k) {
                if (body[k] == '\\') {
                    ++k;
                    continue;
                }
                if (body[k] == '`' || (body[k] == '$' && k + 1 < body.size() && (body[k + 1] == '(' || body[k + 1] == '[')))
                    return fail("a here-document whose body runs a substitution", start);
                if (body[k] == '$' && k + 1 < body.size() && body[k + 1] == '{') {
                    const std::size_t close = body.find('}', k);
                    const std::string_view inside =
                        std::string_view(body).substr(k + 2, close == std::string::npos ? 0 : close - k - 2);
                    if (close == std::string::npos || inside.find_first_of("$`(:#%/^,@") != std::string_view::npos)
                        return fail("a here-document whose body has a parameter expansion with an operator", start);
                }
            }
        }
        out_.commands[b.command].redirects[b.redirect].body = std::move(body);
    }
    bodies_.clear();
    return true;
}

SBX_INLINE bool LineReader::finish_command(Joint j, std::size_t at) {
    if (!have_current_ && after_group_ && j != Joint::end) {
        // The operator after a group joins its last command to what follows.
        after_group_ = false;
        if (j != Joint::newline) out_.commands.back().joint = j;
        need_command_ = j == Joint::and_if || j == Joint::or_if || j == Joint::pipe || j == Joint::pipe_all;
        need_at_ = at;
        need_op_ = std::string(joint_text(j));
        return true;
    }
    if (!have_current_) {
        if (j == Joint::newline || (j == Joint::end && !need_command_)) return true;
        return fail("no command before " + (j == Joint::end ? std::string("the end") : "'" + std::string(joint_text(j)) + "'"), at);
    }
    if (current_.words.empty() && current_.negated && current_.assignments.empty() && current_.redirects.empty())
        return fail("a ! with no command after it", current_.begin);
    if (out_.commands.size() >= kMaxCommands) return fail("more than " + std::to_string(kMaxCommands) + " commands", at);
    current_.joint = j;
    current_.depth = static_cast<unsigned>(groups_.size());
    for (const Group& g : groups_) current_.subshell = current_.subshell || g.kind == '(';
    out_.commands.push_back(std::move(current_));
    current_ = Command{};
    have_current_ = false;
    need_command_ = j == Joint::and_if || j == Joint::or_if || j == Joint::pipe || j == Joint::pipe_all;
    need_at_ = at;
    need_op_ = std::string(joint_text(j));
    return true;
}

SBX_INLINE bool LineReader::open_group(char kind, std::size_t at) {
    if (after_group_) return fail(std::string("a ") + kind + " right after a group", at);
    if (groups_.size() >= kMaxDepth) return fail("groups nested deeper than " + std::to_string(kMaxDepth), at);
    groups_.push_back(Group{kind, out_.commands.size()});
    return true;
}

// Closes the innermost group, which must be of `kind` ('(' or '{') and hold a
// command; a { } group's last command must end in ;, & or a newline.
SBX_INLINE bool LineReader::close_group(char kind, std::size_t at) {
    const char close = kind == '(' ? ')' : '}';
    if (groups_.empty() || groups_.back().kind != kind)
        return fail(std::string("a ") + close + " that closes no " + kind, at);
    const bool empty = !have_current_ && out_.commands.size() == groups_.back().commands;
    if (empty || (!have_current_ && need_command_))
        return fail(std::string("a ") + close + " with no command before it", at);
    if (kind == '(' && !finish_command(Joint::end, at)) return false;
    if (kind == '{') {
        const Joint last = out_.commands.back().joint;
        if (last != Joint::semicolon && last != Joint::newline && last != Joint::background)
            return fail("a } that does not follow ;, & or a newline", at);
        out_.commands.back().joint = Joint::end;
    }
    groups_.pop_back();
    after_group_ = true;
    return true;
}

// A word where a command may start: a reserved word, a group's brace, `!`, an
// assignment, or the program.
SBX_INLINE bool LineReader::word_at_command_position(Word w) {
    if (!w.quoted) {  // a reserved word is unquoted (`[[` reads as a wildcard too)
        static constexpr std::string_view kCompound[] = {"if", "then", "else", "elif", "fi", "do", "done", "case",
                                                         "esac", "while", "until", "for", "select", "function",
                                                         "coproc", "time", "[[", "]]", "in"};
        for (auto k : kCompound)
            if (w.text == k) return fail("a compound command (" + w.text + ")", w.begin);
        if (w.text == "{" && !have_current_) return open_group('{', w.begin);
        if (w.text == "}" && !have_current_) return close_group('{', w.begin);
        // `!` negates a pipeline where it starts one; after a variable or a
        // redirection it is a word like any other.
        if (w.text == "!" && (!have_current_ || (current_.negated && current_.assignments.empty() &&
                                                 current_.redirects.empty()))) {
            if (current_.negated) return fail("a second !", w.begin);
            current_.negated = true;
            current_.begin = w.begin;
            have_current_ = true;
            return true;
        }
    }
    // NAME=value and NAME+=value, the name and the = unquoted.
    const std::string& t = w.text;
    std::size_t k = 0;
    const std::string_view raw = s_.substr(w.begin, w.end - w.begin);
    if (!raw.empty() && name_start(raw[0])) {
        while (k < raw.size() && name_char(raw[k])) ++k;
        if (k < raw.size() && raw[k] == '[') return fail("an array assignment", w.begin);
        if (k + 1 < raw.size() && raw[k] == '+' && raw[k + 1] == '=') ++k;
        if (k < raw.size() && raw[k] == '=' && t.size() > k && t.compare(0, k + 1, raw.substr(0, k + 1)) == 0) {
            if (!have_current_) current_.begin = w.begin;
            current_.end = w.end;
            current_.assignments.push_back(std::move(w));
            have_current_ = true;
            return true;
        }
    }
    if (!have_current_) current_.begin = w.begin;
    current_.end = w.end;
    current_.words.push_back(std::move(w));
    have_current_ = true;
    return true;
}

// An operator that joins commands or opens or closes a ( ) group, at i_.
SBX_INLINE bool LineReader::read_operator() {
    const std::size_t at = i_;
    auto joint = [&](Joint j, std::size_t length) {
        i_ += length;
        return finish_command(j, at);
    };
    if (starts(";;") || starts(";&")) return fail("a case terminator " + std::string(s_.substr(at, 2)), at);
    if (peek() == ';') return joint(Joint::semicolon, 1);
    if (starts("&&")) return joint(Joint::and_if, 2);
    if (starts("||")) return joint(Joint::or_if, 2);
    if (starts("|&")) return joint(Joint::pipe_all, 2);
    if (peek() == '|') return joint(Joint::pipe, 1);
    if (peek() == '&') return joint(Joint::background, 1);
    if (peek() == ')') {
        ++i_;
        return close_group('(', at);
    }
    if (peek(1) == '(') return fail("an arithmetic command ((...))", at);
    if (have_current_) return fail("a ( inside a command (a function definition, or a syntax error)", at);
    ++i_;
    return open_group('(', at);
}

// A redirection with no descriptor number in front, at i_.
SBX_INLINE bool LineReader::read_bare_redirect() {
    // After a group, its redirections apply to its last command.
    if (after_group_ && !have_current_) return read_redirect(out_.commands.size() - 1, -1);
    if (!have_current_) {
        current_.begin = i_;
        have_current_ = true;
    }
    return read_redirect(out_.commands.size(), -1);
}

// A word, at i_: a descriptor number before a redirection, or part of the command.
SBX_INLINE bool LineReader::read_command_word() {
    if (after_group_ && !have_current_) return fail("a word right after a group", i_);
    Word w;
    if (!read_word(w)) return false;
    const bool digits = !w.text.empty() && !w.quoted && w.text.find_first_not_of("0123456789") == std::string::npos;
    const bool redirect_next = peek() == '<' || peek() == '>';
    if (redirect_next && digits) {
        if (w.text.size() > 4) return fail("a descriptor number too large", w.begin);
        if (!have_current_) current_.begin = w.begin;
        have_current_ = true;
        return read_redirect(out_.commands.size(), std::stoi(w.text));
    }
    if (redirect_next && w.text.size() > 2 && w.text.front() == '{' && w.text.back() == '}' && !w.quoted)
        return fail("a redirection to a named descriptor {NAME}", w.begin);
    if (current_.words.empty()) return word_at_command_position(std::move(w));
    current_.end = w.end;
    current_.words.push_back(std::move(w));
    return true;
}

// What must hold once the line has ended.
SBX_INLINE bool LineReader::finish_line() {
    if (have_current_) {
        if (!finish_command(Joint::end, i_)) return false;
    } else if (need_command_) {
        return fail("no command after '" + need_op_ + "'", need_at_);
    }
    if (!groups_.empty()) return fail(std::string("a ") + groups_.back().kind + " without its end", i_);
    if (!bodies_.empty()) return fail("a here-document without its body", i_);
    return true;
}

SBX_INLINE Reading LineReader::read() {
    if (s_.size() > kMaxLineBytes) {
        fail("a line longer than " + std::to_string(kMaxLineBytes) + " bytes", kMaxLineBytes);
        return std::move(out_);
    }
    if (const auto nul = s_.find('\0'); nul != std::string_view::npos) {
        fail("a NUL byte", nul);
        return std::move(out_);
    }
    bool ok = true;
    while (ok) {
        skip_blanks();
        if (at_end()) break;
        const char c = peek();
        if (c == '#') {  // a comment: only where a word would start
            while (!at_end() && peek() != '\n') ++i_;
            continue;
        }
        if (c == '\n') {
            ++i_;
            ok = finish_command(Joint::newline, i_ - 1) && read_bodies();
            continue;
        }
        if (c == '<' || c == '>' || (c == '&' && peek(1) == '>')) ok = read_bare_redirect();
        else if (operator_char(c)) ok = read_operator();
        else ok = read_command_word();
        if (ok && have_current_) need_command_ = false;
    }
    if (ok) finish_line();
    return std::move(out_);
}

}  // namespace detail

}  // namespace sbx::route
#endif
