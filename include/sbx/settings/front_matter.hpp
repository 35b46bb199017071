// sbx/settings/front_matter.hpp - the YAML front matter of a Markdown file, read strictly into a small tree.
//
// A file such as an agent file opens with front matter: from a first line `---` to
// the next line that is exactly `---`. front_matter::parse() reads it into Nodes
// (mappings, lists and scalars, each with its 1-based line and column) and knows
// nothing of what the keys mean: the caller names the top-level keys it reads, and
// may refuse a top-level key as the scan meets it; agent_file.hpp holds the schema.
// Pure: the text is handed in; nothing is opened.
//
// Every other top-level entry (name, skills, model, ...) is skipped unparsed: an
// entry is a line at column 1 reading `key:` and the indented or blank lines after
// it (an indentless `- item` list under an empty `key:` included), so front matter
// written for other tools in YAML this reader refuses still reads.
//
// The YAML subset, inside what is read: block mappings by indentation (spaces
// only), block lists (`- item`, also indentless under their key), a list item
// that is one `key: value` on its line (`- shell: {blocked_commands: [nc]}`),
// one-line flow lists of scalars (`[a, "b"]`, `[]`), one-line flow mappings of
// scalars and such lists (`{a: 1, b: [x, y]}`, `{}`), plain, 'single-quoted'
// ('' is a quote) and "double-quoted" scalars (escapes \\ \" \/ \n \t only),
// and `#` comments at a line's start or after a space. Refused, with the file,
// the 1-based line and the key path: tabs, control characters, NUL (anywhere in
// the front matter), anchors `&`, aliases `*`, tags `!`, flow mappings anywhere
// but as a value, nesting beyond a list in a flow mapping, block scalars `|` `>`,
// multi-line values, quoted or complex keys, duplicate keys and `...`. A leading UTF-8 byte
// order mark is skipped; CRLF line ends are read as LF. Whether `true`, `~` or
// `null` is text is the schema's to say: a Node records whether it was quoted.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sbx/core/ascii.hpp"
#include "sbx/core/error.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"

namespace sbx::front_matter {

// One value of the front matter: a scalar, a list, a mapping, or nothing (`key:` alone).
struct Node {
    enum class Kind { null, scalar, list, map };
    Kind kind = Kind::null;
    bool plain = false;           // a scalar written without quotes
    std::string text;             // a scalar's value
    std::string key;              // an entry of a map: its key
    std::vector<Node> children;   // list items, or map entries
    std::size_t line = 0, column = 0;
    std::size_t key_column = 0;   // an entry of a map: where its key starts
};

// Key paths as errors name them: `sandbox.files.write[1]`.
SBX_INLINE std::string index_key(std::string_view parent, std::size_t i);

SBX_INLINE std::string join_key(std::string_view parent, std::string_view key);

// An error (INVALID_SETTINGS) about `file` at a 1-based line and column and a key path.
SBX_INLINE tl::unexpected<Error> error_at(const std::string& file, std::size_t line, std::size_t column, std::string key,
                                      std::string message);

// A control character, refused anywhere in what is read.
SBX_INLINE bool is_control(char c);

// What parse() reads of the front matter's top level.
struct Keys {
    std::span<const std::string_view> read;  // the entries parsed; every other one is skipped unparsed
    // Called with each top-level key, in order, as the scan meets it; a non-empty
    // answer refuses the key with that message, at the key's line. May be null.
    std::string (*refuse)(std::string_view key) = nullptr;
};

namespace detail {

// One line of the front matter that is read, with its indentation taken off.
struct Line {
    std::size_t number = 0;  // 1-based, in the file
    std::size_t indent = 0;
    std::string_view text;   // after the indentation, trailing spaces removed; never empty
};

inline bool is_item(std::string_view t) { return t == "-" || t.starts_with("- "); }

// Why a value or key may not start with `c`, or empty when it may.
SBX_INLINE std::string_view indicator_refusal(std::string_view s);

// Reads the block structure of the lines it is given into Nodes.
class Parser {
public:
    Parser(const std::vector<Line>& lines, const std::string& file) : lines_(lines), file_(file) {}

    expected<Node> root();

private:
    const std::vector<Line>& lines_;
    const std::string& file_;
    std::size_t i_ = 0;

    tl::unexpected<Error> error(const Line& l, std::size_t offset, std::string key, std::string message) const {
        return error_at(file_, l.number, l.indent + offset + 1, std::move(key), std::move(message));
    }

    expected<Node> block(std::size_t indent, const std::string& path) {
        if (is_item(lines_[i_].text)) return list(indent, path);
        return map(indent, path);
    }

    // Where a key ends: the first ':' followed by a space or the end of the line.
    static std::size_t key_end(std::string_view t);

    static bool key_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    }

    // The rest of a line after `key:` or `- `, from `from`: empty when only a comment.
    static std::size_t value_start(std::string_view t, std::size_t from);

    expected<Node> map(std::size_t indent, const std::string& path);

    expected<Node> list(std::size_t indent, const std::string& path);

    // After a closing quote or bracket: spaces, then a comment or nothing.
    expected<void> rest_is_comment(const Line& l, std::size_t from, const std::string& path) const;

    // A quoted scalar starting at `at`; `end` is set past its closing quote.
    expected<Node> quoted(const Line& l, std::size_t at, std::size_t& end, const std::string& path) const;

    // A plain scalar, `text`, found at offset `at` of the line: trimmed and checked.
    expected<Node> plain(const Line& l, std::size_t at, std::string_view text, const std::string& path) const;

    expected<Node> scalar_or_flow(const Line& l, std::size_t at, const std::string& path);

    // `[a, "b"]` on one line. With `end`, it may be followed by more (inside a
    // flow mapping): `*end` is set past its `]`; without, only by a comment.
    expected<Node> flow(const Line& l, std::size_t at, const std::string& path, std::size_t* end = nullptr) const;

    // A one-line [ list or { mapping `outer`, opened at `at` and closed by
    // `close`, that does not close.
    tl::unexpected<Error> unclosed(const Line& l, std::size_t at, char close, const std::string& outer) const {
        return error(l, at, outer, close == ']' ? "a [ list must close on its own line; write a longer list as `- item` lines"
                                                : "a { mapping must close on its own line");
    }

    // A scalar, `path`, inside the one-line [ list or { mapping `outer` opened
    // at `at`, which `close` ends: quoted, or plain up to the next `,` or
    // `close`. `p` moves past it.
    expected<Node> flow_scalar(const Line& l, std::size_t at, std::size_t& p, char close, const std::string& outer,
                               const std::string& path) const;

    // `{a: 1, b: [x, y]}` on one line, then only a comment.
    expected<Node> flow_map(const Line& l, std::size_t at, const std::string& path) const;

    // A list item that is one `key: value` (or `key:`) on its line, as a
    // mapping of that one entry; nullopt when the item is no such thing.
    std::optional<expected<Node>> item_map(const Line& l, std::size_t at, const std::string& path);
};

// The key of a top-level `key: value` line (the colon is the first one followed
// by a space or the line's end), or the error for a line that is none.
SBX_INLINE expected<std::string_view> top_level_key(std::string_view line, const std::string& file, std::size_t number);

// A line of an entry that is read, as the parser gets it: spaces only for
// indentation, no control character, no trailing spaces.
SBX_INLINE expected<Line> entry_line(std::string_view line, const std::string& file, std::size_t number);

// The front matter's lines that belong to the entries `keys` reads, in order;
// every other entry is skipped unlooked-at but for its key.
SBX_INLINE expected<std::vector<Line>> read_lines(std::string_view text, const std::string& file, const Keys& keys);

}  // namespace detail

// Reads the front matter at the start of `text` (named `file` in errors). Promises:
// the root mapping of the entries keys.read names, in file order, or an Error
// (INVALID_SETTINGS) naming `file`, the 1-based line and column and the key path.
// A file without front matter, or whose front matter does not close, is an error.
SBX_INLINE expected<Node> parse(std::string_view text, const std::string& file, const Keys& keys);

}  // namespace sbx::front_matter

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_SETTINGS)

namespace sbx::front_matter {

SBX_INLINE std::string index_key(std::string_view parent, std::size_t i) {
    return std::string(parent) + "[" + std::to_string(i) + "]";
}

SBX_INLINE std::string join_key(std::string_view parent, std::string_view key) {
    return parent.empty() ? std::string(key) : std::string(parent) + "." + std::string(key);
}

SBX_INLINE tl::unexpected<Error> error_at(const std::string& file, std::size_t line, std::size_t column, std::string key,
                                      std::string message) {
    return fail(Error(Errc::invalid_settings, std::move(message)).in_file(file).at_key(std::move(key)).at(line, column));
}

SBX_INLINE bool is_control(char c) { return ascii_control(c); }

}  // namespace sbx::front_matter

namespace sbx::front_matter::detail {

SBX_INLINE std::string_view indicator_refusal(std::string_view s) {
    if (s.empty()) return {};
    const bool alone = s.size() == 1 || s[1] == ' ';
    switch (s.front()) {
        case '&': return "an anchor (&) is not read; write the value itself";
        case '*': return "an alias (*) is not read; a value that starts with * is quoted, as in \"*.example.com\"";
        case '!': return "a tag (!) is not read; write the value alone";
        case '{': return "a flow mapping ({...}) is read only as a value, on one line";
        case '|':
        case '>': return "a multi-line value (| or >) is not read; write the value on one line";
        case '%':
        case '@':
        case '`': return "a plain value cannot start with this character; quote it";
        case ',':
        case ']':
        case '}': return "a stray bracket or comma";
        case '?': return alone ? "a complex key (?) is not read" : std::string_view();
        case '-': return alone ? "a list item must start its own line" : std::string_view();
        default: return {};
    }
}

SBX_INLINE expected<Node> Parser::root() {
    if (lines_.empty()) {
        Node empty;
        empty.kind = Node::Kind::map;
        empty.line = empty.column = 1;
        return empty;
    }
    return map(0, "");
}

SBX_INLINE std::size_t Parser::key_end(std::string_view t) {
    for (std::size_t p = t.find(':'); p != std::string_view::npos; p = t.find(':', p + 1))
        if (p + 1 == t.size() || t[p + 1] == ' ') return p;
    return std::string_view::npos;
}

SBX_INLINE std::size_t Parser::value_start(std::string_view t, std::size_t from) {
    while (from < t.size() && t[from] == ' ') ++from;
    if (from < t.size() && t[from] == '#') return t.size();
    return from;
}

SBX_INLINE expected<Node> Parser::map(std::size_t indent, const std::string& path) {
    Node node;
    node.kind = Node::Kind::map;
    node.line = lines_[i_].number;
    node.column = indent + 1;
    while (i_ < lines_.size() && lines_[i_].indent >= indent) {
        const Line& l = lines_[i_];
        if (l.indent > indent) return error(l, 0, path, "unexpected indentation");
        if (is_item(l.text)) return error(l, 0, path, "a list item where a key was expected");
        const std::string_view t = l.text;
        if (t.front() == '"' || t.front() == '\'')
            return error(l, 0, path, "a quoted key is not read; write the key plain");
        if (auto why = indicator_refusal(t); !why.empty()) return error(l, 0, path, std::string(why));
        const std::size_t end = key_end(t);
        if (end == std::string_view::npos) {
            const bool glued = t.find(':') != std::string_view::npos;
            return error(l, 0, path,
                         glued ? "expected `key: value`, with a space after the colon"
                               : "expected `key: value`, got a value alone");
        }
        const std::string_view key = t.substr(0, end);
        if (key.empty() || !std::all_of(key.begin(), key.end(), key_char))
            return error(l, 0, path, "'" + std::string(key) + "' is not a key: keys are letters, digits, _ and -");
        const std::string child_path = join_key(path, key);
        for (const auto& c : node.children)
            if (c.key == key)
                return error(l, 0, child_path, "the key appears twice (first on line " + std::to_string(c.line) + ")");
        ++i_;
        const std::size_t v = value_start(t, end + 1);
        expected<Node> value;
        if (v == t.size()) {
            if (i_ < lines_.size() && lines_[i_].indent > indent) {
                value = block(lines_[i_].indent, child_path);
                if (value) value->column = l.indent + 1;
            } else if (i_ < lines_.size() && lines_[i_].indent == indent && is_item(lines_[i_].text)) {
                value = list(indent, child_path);  // an indentless list, as YAML allows under a key
                if (value) value->column = l.indent + 1;
            } else {
                value = Node{};
                value->column = l.indent + end + 2;
            }
        } else {
            value = scalar_or_flow(l, v, child_path);
            if (value && i_ < lines_.size() && lines_[i_].indent > indent)
                return error(lines_[i_], 0, child_path,
                             "unexpected indentation: a value written on its key's line cannot go on below it");
        }
        SBX_TRY(value);
        value->key = std::string(key);
        value->line = l.number;  // an entry is where its key is
        value->key_column = l.indent + 1;
        node.children.push_back(std::move(*value));
    }
    return node;
}

SBX_INLINE expected<Node> Parser::list(std::size_t indent, const std::string& path) {
    Node node;
    node.kind = Node::Kind::list;
    node.line = lines_[i_].number;
    node.column = indent + 1;
    while (i_ < lines_.size() && lines_[i_].indent == indent && is_item(lines_[i_].text)) {
        const Line& l = lines_[i_];
        const std::string item_path = index_key(path, node.children.size());
        ++i_;
        const std::size_t v = value_start(l.text, 1);
        if (i_ < lines_.size() && lines_[i_].indent > indent)
            return error(lines_[i_], 0, item_path,
                         "unexpected indentation: a list item here is one value on the item's line");
        if (v == l.text.size()) {
            Node empty;
            empty.line = l.number;
            empty.column = l.indent + 2;
            node.children.push_back(std::move(empty));
            continue;
        }
        if (auto m = item_map(l, v, item_path)) {
            SBX_TRY(*m);
            node.children.push_back(std::move(**m));
            continue;
        }
        auto item = scalar_or_flow(l, v, item_path);
        SBX_TRY(item);
        node.children.push_back(std::move(*item));
    }
    return node;
}

SBX_INLINE std::optional<expected<Node>> Parser::item_map(const Line& l, std::size_t at, const std::string& path) {
    const std::string_view rest = l.text.substr(at);
    const std::size_t end = key_end(rest);
    if (end == std::string_view::npos || end == 0) return std::nullopt;
    const std::string_view key = rest.substr(0, end);
    if (!std::all_of(key.begin(), key.end(), key_char)) return std::nullopt;  // a value, judged as one
    const std::string child_path = join_key(path, key);
    Node node;
    node.kind = Node::Kind::map;
    node.line = l.number;
    node.column = l.indent + at + 1;
    const std::size_t v = value_start(rest, end + 1);
    expected<Node> value;
    if (v == rest.size()) {
        value = Node{};
        value->column = l.indent + at + end + 2;
    } else {
        value = scalar_or_flow(l, at + v, child_path);
        if (!value) return value;
    }
    value->key = std::string(key);
    value->line = l.number;
    value->key_column = l.indent + at + 1;
    node.children.push_back(std::move(*value));
    return node;
}

SBX_INLINE expected<void> Parser::rest_is_comment(const Line& l, std::size_t from, const std::string& path) const {
    std::size_t p = from;
    while (p < l.text.size() && l.text[p] == ' ') ++p;
    if (p == l.text.size() || (l.text[p] == '#' && p > from)) return {};
    return error(l, p, path, "unexpected text after the value");
}

SBX_INLINE expected<Node> Parser::quoted(const Line& l, std::size_t at, std::size_t& end, const std::string& path) const {
    const std::string_view t = l.text;
    const char q = t[at];
    Node node;
    node.kind = Node::Kind::scalar;
    node.line = l.number;
    node.column = l.indent + at + 1;
    std::size_t p = at + 1;
    while (true) {
        if (p >= t.size()) return error(l, at, path, "a quoted value must close on its own line");
        const char c = t[p];
        if (q == '\'') {
            if (c == '\'') {
                if (p + 1 < t.size() && t[p + 1] == '\'') {
                    node.text += '\'';
                    p += 2;
                    continue;
                }
                break;
            }
        } else if (c == '"') {
            break;
        } else if (c == '\\') {
            if (p + 1 >= t.size()) return error(l, p, path, "a quoted value must close on its own line");
            switch (t[p + 1]) {
                case '\\': node.text += '\\'; break;
                case '"': node.text += '"'; break;
                case '/': node.text += '/'; break;
                case 'n': node.text += '\n'; break;
                case 't': node.text += '\t'; break;
                default:
                    return error(l, p, path,
                                 std::string("the escape \\") + t[p + 1] +
                                     " is not read; sbx reads \\\\, \\\", \\/, \\n and \\t");
            }
            p += 2;
            continue;
        }
        node.text += c;
        ++p;
    }
    end = p + 1;
    return node;
}

SBX_INLINE expected<Node> Parser::plain(const Line& l, std::size_t at, std::string_view text, const std::string& path) const {
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    if (text.empty()) return error(l, at, path, "an empty value");
    if (auto why = indicator_refusal(text); !why.empty()) return error(l, at, path, std::string(why));
    if (text.find(": ") != std::string_view::npos || text.back() == ':')
        return error(l, at, path, "a `key: value` where a single value was expected");
    Node node;
    node.kind = Node::Kind::scalar;
    node.plain = true;
    node.text = std::string(text);
    node.line = l.number;
    node.column = l.indent + at + 1;
    return node;
}

SBX_INLINE expected<Node> Parser::scalar_or_flow(const Line& l, std::size_t at, const std::string& path) {
    const std::string_view t = l.text;
    if (t[at] == '"' || t[at] == '\'') {
        std::size_t end = 0;
        auto node = quoted(l, at, end, path);
        SBX_TRY(node);
        SBX_TRY(rest_is_comment(l, end, path));
        return node;
    }
    if (t[at] == '[') return flow(l, at, path);
    if (t[at] == '{') return flow_map(l, at, path);
    std::size_t stop = t.find(" #", at);
    if (stop == std::string_view::npos) stop = t.size();
    return plain(l, at, t.substr(at, stop - at), path);
}

SBX_INLINE expected<Node> Parser::flow(const Line& l, std::size_t at, const std::string& path, std::size_t* end) const {
    const std::string_view t = l.text;
    Node node;
    node.kind = Node::Kind::list;
    node.line = l.number;
    node.column = l.indent + at + 1;
    std::size_t p = at + 1;
    auto skip = [&] {
        while (p < t.size() && t[p] == ' ') ++p;
    };
    skip();
    auto closed = [&](std::size_t after) -> expected<Node> {
        if (end != nullptr) *end = after;
        else SBX_TRY(rest_is_comment(l, after, path));
        return node;
    };
    if (p < t.size() && t[p] == ']') return closed(p + 1);
    while (true) {
        skip();
        if (p >= t.size()) return unclosed(l, at, ']', path);
        const std::string item_path = index_key(path, node.children.size());
        const char c = t[p];
        if (c == ',' || c == ']') return error(l, p, item_path, "an empty entry in a [ list");
        if (c == '[') return error(l, p, item_path, "a list inside a list is not read");
        auto item = flow_scalar(l, at, p, ']', path, item_path);
        SBX_TRY(item);
        node.children.push_back(std::move(*item));
        skip();
        if (p >= t.size()) return unclosed(l, at, ']', path);
        if (t[p] == ']') return closed(p + 1);
        if (t[p] != ',') return error(l, p, item_path, "expected , or ] after an entry of a [ list");
        ++p;
    }
}

SBX_INLINE expected<Node> Parser::flow_scalar(const Line& l, std::size_t at, std::size_t& p, char close,
                                          const std::string& outer, const std::string& path) const {
    const std::string_view t = l.text;
    if (t[p] == '"' || t[p] == '\'') {
        std::size_t after = 0;
        auto node = quoted(l, p, after, path);
        SBX_TRY(node);
        p = after;
        return node;
    }
    std::size_t q = p;
    while (q < t.size() && t[q] != ',' && t[q] != close && !(t[q] == '#' && t[q - 1] == ' ')) {
        if (std::string_view("[]{}").find(t[q]) != std::string_view::npos)
            return error(l, q, path, close == ']' ? "a bracket inside a [ list entry; quote the entry"
                                                  : "a bracket inside a { mapping's value; quote the value");
        ++q;
    }
    if (q >= t.size() || t[q] == '#') return unclosed(l, at, close, outer);
    auto node = plain(l, p, t.substr(p, q - p), path);
    SBX_TRY(node);
    p = q;
    return node;
}

SBX_INLINE expected<Node> Parser::flow_map(const Line& l, std::size_t at, const std::string& path) const {
    const std::string_view t = l.text;
    Node node;
    node.kind = Node::Kind::map;
    node.line = l.number;
    node.column = l.indent + at + 1;
    std::size_t p = at + 1;
    auto skip = [&] {
        while (p < t.size() && t[p] == ' ') ++p;
    };
    skip();
    if (p < t.size() && t[p] == '}') {
        SBX_TRY(rest_is_comment(l, p + 1, path));
        return node;
    }
    while (true) {
        skip();
        if (p >= t.size()) return unclosed(l, at, '}', path);
        std::size_t k = p;
        while (k < t.size() && key_char(t[k])) ++k;
        if (k == p || k >= t.size() || t[k] != ':' || k + 1 >= t.size() || t[k + 1] != ' ')
            return error(l, p, path, "expected `key: value` in a { mapping; keys are letters, digits, _ and -");
        const std::string_view key = t.substr(p, k - p);
        const std::string child_path = join_key(path, key);
        for (const auto& c : node.children)
            if (c.key == key) return error(l, p, child_path, "the key appears twice in the { mapping");
        const std::size_t key_at = p;
        p = k + 2;
        skip();
        if (p >= t.size()) return unclosed(l, at, '}', path);
        expected<Node> value;
        const char c = t[p];
        if (c == ',' || c == '}') return error(l, p, child_path, "an empty value in a { mapping");
        if (c == '{') return error(l, p, child_path, "a mapping inside a { mapping is not read");
        if (c == '[') {
            value = flow(l, p, child_path, &p);
        } else {
            value = flow_scalar(l, at, p, '}', path, child_path);
        }
        SBX_TRY(value);
        value->key = std::string(key);
        value->line = l.number;
        value->key_column = l.indent + key_at + 1;
        node.children.push_back(std::move(*value));
        skip();
        if (p >= t.size()) return unclosed(l, at, '}', path);
        if (t[p] == '}') {
            SBX_TRY(rest_is_comment(l, p + 1, path));
            return node;
        }
        if (t[p] != ',') return error(l, p, child_path, "expected , or } after an entry of a { mapping");
        ++p;
    }
}

SBX_INLINE expected<std::string_view> top_level_key(std::string_view line, const std::string& file, std::size_t number) {
    if (line == "..." || line.starts_with("... "))
        return error_at(file, number, 1, "", "a document end `...`; the front matter ends with a line `---`");
    std::size_t colon = line.find(':');
    while (colon != std::string_view::npos && colon + 1 < line.size() && line[colon + 1] != ' ')
        colon = line.find(':', colon + 1);
    const std::string_view key = colon == std::string_view::npos ? std::string_view() : line.substr(0, colon);
    const auto bad = [](char c) {
        return c == ' ' || c == '#' || c == '"' || c == '\'' || c == '[' || c == ']' || c == '{' || c == '}' ||
               c == ',' || c == '&' || c == '*' || c == '!' || c == '|' || c == '>' || c == '\t' || is_control(c);
    };
    const bool key_ok = !key.empty() && key.front() != '-' && key.front() != '?' && key.front() != '%' &&
                        key.front() != '@' && key.front() != '`' && std::none_of(key.begin(), key.end(), bad);
    if (!key_ok) {
        auto why = indicator_refusal(line);
        return error_at(file, number, 1, "", why.empty() ? "expected a top-level `key:` at column 1" : std::string(why));
    }
    return key;
}

SBX_INLINE expected<Line> entry_line(std::string_view line, const std::string& file, std::size_t number) {
    std::size_t indent = 0;
    while (indent < line.size() && line[indent] == ' ') ++indent;
    if (indent < line.size() && line[indent] == '\t')
        return error_at(file, number, indent + 1, "", "a tab in the indentation; indent with spaces");
    for (std::size_t k = indent; k < line.size(); ++k)
        if (is_control(line[k]))
            return error_at(file, number, k + 1, "",
                            line[k] == '\t' ? "a tab; write spaces" : "a control character in the front matter");
    std::string_view body = line.substr(indent);
    while (!body.empty() && body.back() == ' ') body.remove_suffix(1);
    return Line{.number = number, .indent = indent, .text = body};
}

SBX_INLINE expected<std::vector<Line>> read_lines(std::string_view text, const std::string& file, const Keys& keys) {
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a byte order mark, as some editors write
    std::size_t pos = 0, number = 0;
    auto next = [&](std::string_view& line) {
        if (pos >= text.size()) return false;
        const std::size_t nl = text.find('\n', pos);
        const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
        line = text.substr(pos, end - pos);
        if (line.ends_with('\r')) line.remove_suffix(1);
        pos = end + 1;
        ++number;
        return true;
    };
    std::string_view line;
    if (!next(line) || line != "---")
        return error_at(file, 1, 1, "", "an agent file starts with a line `---` that opens its front matter");

    std::vector<Line> out;
    struct Entry {
        std::string_view key;
        std::size_t line;
        bool read;
        bool empty_value;
    };
    std::vector<Entry> entries;
    bool closed = false;
    while (next(line)) {
        if (line == "---") {
            closed = true;
            break;
        }
        if (line.find('\0') != std::string_view::npos)
            return error_at(file, number, line.find('\0') + 1, "", "a NUL byte in the front matter");
        const std::size_t first = line.find_first_not_of(" \t");
        if (first == std::string_view::npos || line[first] == '#') continue;  // blank, or a comment

        const Entry* current = entries.empty() ? nullptr : &entries.back();
        bool continues = first > 0;
        if (!continues && is_item(line)) {
            // `- item` at column 1 continues a `key:` with nothing after it (an indentless list).
            if (!current || !current->empty_value)
                return error_at(file, number, 1, "", "a list item at column 1 that belongs to no `key:`");
            continues = true;
        }
        if (continues) {
            if (!current) return error_at(file, number, 1, "", "an indented line before the first key");
            if (!current->read) continue;  // another key's: skipped unread
        } else {
            auto top = top_level_key(line, file, number);
            SBX_TRY(top);
            const std::string_view key = *top;
            for (const auto& e : entries)
                if (e.key == key)
                    return error_at(file, number, 1, std::string(key),
                                    "the key appears twice (first on line " + std::to_string(e.line) + ")");
            if (keys.refuse != nullptr)
                if (std::string why = keys.refuse(key); !why.empty())
                    return error_at(file, number, 1, std::string(key), std::move(why));
            std::size_t v = key.size() + 1;  // after the colon
            while (v < line.size() && (line[v] == ' ' || line[v] == '\t')) ++v;
            const bool read = std::find(keys.read.begin(), keys.read.end(), key) != keys.read.end();
            const bool empty_value = v == line.size() || line[v] == '#';
            entries.push_back(Entry{.key = key, .line = number, .read = read, .empty_value = empty_value});
            if (!read) continue;
        }
        auto taken = entry_line(line, file, number);
        SBX_TRY(taken);
        out.push_back(*taken);
    }
    if (!closed)
        return error_at(file, 1, 1, "",
                        "the front matter opened on line 1 has no closing line `---` (the file ends at line " +
                            std::to_string(number) + ")");
    return out;
}

}  // namespace sbx::front_matter::detail

namespace sbx::front_matter {

SBX_INLINE expected<Node> parse(std::string_view text, const std::string& file, const Keys& keys) {
    auto lines = detail::read_lines(text, file, keys);
    SBX_TRY(lines);
    return detail::Parser(*lines, file).root();
}

}  // namespace sbx::front_matter
#endif
