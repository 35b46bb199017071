// sbx/settings/agent_file_edit.hpp - an agent file's text with one more host in its network.hosts.
//
// When a person answers `always` about a host the proxy asked about, the host
// goes where the policy came from: the agent file's `sandbox.network.hosts` (or
// the older top-level `network:` list, where the file spells it so), where it
// can be seen and reviewed. The rest of the file's text stays as it was: its
// comments, order, quoting, line ends and the Markdown after the front matter.
// One line changes (a flow list `[a, b]` gains `, host`), or one to three
// lines are inserted: a block list's item after its last, `hosts: [host]`
// under `network:`, `network:` with it under `sandbox:`, or the block at the
// front matter's end where the file declares its sandbox by an older key
// alone. A file that declares no sandbox block is not given one: its skill
// scripts run strict (agent_file.hpp), and a block would change that.
// A flow mapping (`network: {local: true}`) is not rewritten either. The new
// text is read again before it is returned: its hosts must be the old ones and
// the new, and everything else it decides the same, or nothing is returned.
// Pure: the text is handed in and out.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/settings/agent_file.hpp"
#include "sbx/settings/front_matter.hpp"

namespace sbx {

// `text` (the agent file `src.file`) with `host` added to its network hosts;
// `text` itself when a host entry is `host` already. `host` is a host as an
// answer names it (sbx::net::answer_host_problem). Fails, naming the file,
// where the file cannot be read, or cannot take the host as written
// (INVALID_SETTINGS), or when the result would not read back as it should
// (INTERNAL).
SBX_INLINE expected<std::string> add_agent_file_host(std::string_view text, const AgentFileSource& src,
                                                     std::string_view host);

}  // namespace sbx

#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_SETTINGS)

namespace sbx::detail::agent_file_edit {

struct Lines {
    std::string bom;                 // a byte order mark the text starts with
    std::vector<std::string> lines;  // without their ends
    std::string end = "\n";          // "\r\n" when the text uses it
    bool final_end = true;           // the text ends with a line end

    explicit Lines(std::string_view text) {
        if (text.starts_with("\xEF\xBB\xBF")) {
            bom = "\xEF\xBB\xBF";
            text.remove_prefix(3);
        }
        if (text.find("\r\n") != std::string_view::npos) end = "\r\n";
        final_end = text.empty() || text.back() == '\n';
        std::size_t pos = 0;
        while (pos < text.size()) {
            const std::size_t nl = text.find('\n', pos);
            std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
            if (line.ends_with('\r')) line.remove_suffix(1);
            lines.emplace_back(line);
            if (nl == std::string_view::npos) break;
            pos = nl + 1;
        }
    }
    // 1-based, as front matter nodes count.
    std::string& at(std::size_t number) { return lines.at(number - 1); }
    void insert_after(std::size_t number, std::string line) {
        lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(number), std::move(line));
    }
    std::string text() const {
        std::string out = bom;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            out += lines[i];
            if (i + 1 < lines.size() || final_end) out += end;
        }
        return out;
    }
};

// A host as a plain scalar where one reads back as written, else double-quoted
// (an IPv6 address; the reader refuses a plain `*` as an alias anyway).
inline std::string scalar(std::string_view host) {
    const bool plain = !host.empty() && std::all_of(host.begin(), host.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    });
    return plain ? std::string(host) : "\"" + std::string(host) + "\"";
}

inline const front_matter::Node* child(const front_matter::Node& map, std::string_view key) {
    for (const auto& c : map.children)
        if (c.key == key) return &c;
    return nullptr;
}

// A list or mapping written on its key's line (`[a]`, `{}`), not as a block below it.
inline bool flow(const front_matter::Node& n) { return n.children.empty() || n.children.front().line == n.line; }

inline tl::unexpected<Error> cannot(const std::string& file, std::size_t line, std::string key, std::string why) {
    return fail(Error(Errc::invalid_settings, std::move(why)).in_file(file).at(line, 0).at_key(std::move(key)));
}

// Adds `item` to the list `n` (an entry of its map, at its key's line).
SBX_INLINE expected<void> add_to_list(Lines& lines, const front_matter::Node& n, const std::string& item,
                                      const std::string& file, const std::string& key) {
    std::string& line = lines.at(n.line);
    if (n.kind != front_matter::Node::Kind::list) return cannot(file, n.line, key, "is not a list");
    if (!flow(n)) {  // an item after the last, indented as it is
        const auto& last = n.children.back();
        lines.insert_after(last.line, lines.at(last.line).substr(0, last.column - 1) + item);
        return {};
    }
    // The `]` that closes the list opened after the key, quotes skipped.
    std::size_t open = line.find('[', n.key_column - 1);
    if (open == std::string::npos) return cannot(file, n.line, key, "its flow list was not found on its line");
    char quote = 0;
    for (std::size_t i = open + 1; i < line.size(); ++i) {
        const char c = line[i];
        if (quote != 0) {
            if (c == '\\' && quote == '"') ++i;
            else if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == ']') {
            const bool empty = line.find_first_not_of(' ', open + 1) == i;
            line.insert(i, empty ? item : ", " + item);
            return {};
        }
    }
    return cannot(file, n.line, key, "its flow list does not close on its line");
}

// Whether `a` and `b` decide the same but for their hosts.
SBX_INLINE bool same_but_hosts(const AgentFile& a, const AgentFile& b) {
    auto values = [](const SourcedList& l) {
        std::vector<std::string> v;
        for (const auto& e : l) v.push_back(e.value);
        return v;
    };
    auto read = [&](const AgentFile& f) { return f.files.read ? std::optional(values(*f.files.read)) : std::nullopt; };
    auto local = [](const AgentFile& f) { return f.network.local && f.network.local->value; };
    return a.declared == b.declared && a.preset == b.preset && a.strict_for_skill_script == b.strict_for_skill_script &&
           values(a.files.write) == values(b.files.write) && read(a) == read(b) &&
           values(a.files.deny) == values(b.files.deny) && local(a) == local(b) &&
           values(a.network.sockets) == values(b.network.sockets) && values(a.env) == values(b.env) &&
           values(a.blocked_commands) == values(b.blocked_commands) && a.reads_scoped == b.reads_scoped &&
           a.settings.filesystem.root_read_only.has_value() == b.settings.filesystem.root_read_only.has_value();
}

}  // namespace sbx::detail::agent_file_edit

namespace sbx {

SBX_INLINE expected<std::string> add_agent_file_host(std::string_view text, const AgentFileSource& src,
                                                     std::string_view host) {
    using namespace detail::agent_file_edit;
    using Kind = front_matter::Node::Kind;
    auto old = parse_agent_file(text, src);
    SBX_TRY(old);
    const std::string& file = old->file;
    if (auto why = net::answer_host_problem(host); !why.empty())
        return fail(Error(Errc::invalid_argument, why).in_file(file));
    // As a host pattern writes it: an IPv6 address in brackets.
    const std::string entry = host.find(':') != std::string_view::npos ? "[" + std::string(host) + "]" : std::string(host);
    for (const auto& h : old->network.hosts)
        if (h.value == entry) return std::string(text);
    auto root = front_matter::parse(text, file,
                                    front_matter::Keys{detail::agent_file::kTopKeys, detail::agent_file::refuse_misplaced_key});
    SBX_TRY(root);
    Lines lines(text);
    const std::string item = scalar(entry);
    const front_matter::Node* sandbox = child(*root, "sandbox");
    if (!old->declared || (sandbox != nullptr && sandbox->kind == Kind::scalar))
        return cannot(file, sandbox ? sandbox->line : 1, "sandbox",
                      "declares no sandbox block: one written now would change how its skill scripts run (strict); "
                      "add sandbox: network: hosts: by hand");
    if (const front_matter::Node* flat = child(*root, "network"))  // the older spelling: a top-level list
        SBX_TRY(add_to_list(lines, *flat, item, file, "network"));
    else if (sandbox == nullptr) {
        // Declared by another older key: the block goes at the front matter's end.
        std::size_t close = 2;
        while (close <= lines.lines.size() && lines.at(close) != "---") ++close;
        if (close > lines.lines.size()) return cannot(file, 1, "", "the front matter does not close");
        lines.insert_after(close - 1, "sandbox:");
        lines.insert_after(close, "  network:");
        lines.insert_after(close + 1, "    hosts: [" + item + "]");
    } else if (sandbox->kind == Kind::map && !flow(*sandbox)) {
        const std::size_t indent = sandbox->children.front().key_column - 1;
        const front_matter::Node* network = child(*sandbox, "network");
        if (network == nullptr) {
            lines.insert_after(sandbox->line, std::string(indent, ' ') + "network:");
            lines.insert_after(sandbox->line + 1, std::string(indent + 2, ' ') + "hosts: [" + item + "]");
        } else if (network->kind == Kind::map && !flow(*network)) {
            if (const front_matter::Node* hosts = child(*network, "hosts")) {
                SBX_TRY(add_to_list(lines, *hosts, item, file, "sandbox.network.hosts"));
            } else {
                const std::size_t under = network->children.front().key_column - 1;
                lines.insert_after(network->line, std::string(under, ' ') + "hosts: [" + item + "]");
            }
        } else {
            return cannot(file, network->line, "sandbox.network",
                          "is written as a flow mapping, which is not rewritten; add the host by hand");
        }
    } else {
        return cannot(file, sandbox->line, "sandbox",
                      "is written as a flow mapping, which is not rewritten; add the host by hand");
    }
    std::string out = lines.text();
    auto now = parse_agent_file(out, src);
    std::vector<std::string> want, got;
    for (const auto& h : old->network.hosts) want.push_back(h.value);
    want.push_back(entry);
    if (now)
        for (const auto& h : now->network.hosts) got.push_back(h.value);
    if (!now || got != want || !detail::agent_file_edit::same_but_hosts(*old, *now))
        return fail(Error(Errc::internal, "adding " + std::string(host) + " to the network hosts would change more: " +
                                              (now ? std::string("the file's other settings") : to_string(now.error())))
                        .in_file(file));
    return out;
}

}  // namespace sbx
#endif
