// sbx/route/request.hpp - a call to route, read strictly from JSON.
//
// What a host hands `sbx route --request-json FILE`, or reads itself before calling
// route() (every key but "command" may be left out):
//   {"command": "git push origin main",
//    "mode": "acceptEdits",
//    "dangerouslyDisableSandbox": false,
//    "allowedDomains": ["registry.npmjs.org"],
//    "permissions": {"allow": ["Bash(npm test)"], "deny": [], "ask": []},
//    "caller": "owner"}
// "command" is the line as the host received it, one string (newlines and tabs
// allowed, as in here-documents; no other control character); "mode" a
// permission mode's name; "allowedDomains" the hosts the call names for itself
// (host patterns, as sandbox.network.allowedDomains takes them); "permissions"
// the host's own Bash rules for its session (a person's earlier answers), each
// checked here and kept with its key ("permissions.allow[0]") in the flag layer;
// "caller" "owner" (the default) or "other", who gets only confined commands.
// An unknown key, a key given twice, a wrong type, an unknown mode, a malformed
// rule or host, an empty or control-character string: each is an error naming
// the file, line, column and key (INVALID_SETTINGS), never a default.
// Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sbx/core/error.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/json.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/net/host_pattern.hpp"
#include "sbx/route/route.hpp"
#include "sbx/settings/bash_rule.hpp"
#include "sbx/settings/layer.hpp"

namespace sbx::route {

// A call as a host hands it over: its line, when the file gives one, and its request.
struct Call {
    std::optional<std::string> command;
    Request request;
};

// Reads one call's text. `file` names it in messages and in the rules' sources.
SBX_INLINE expected<Call> parse_call(std::string_view text, const std::string& file);

namespace detail {

class CallReader {
public:
    CallReader(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

    expected<Call> read(simdjson::dom::element root) const;

private:
    std::string_view text_;
    std::string file_;

    tl::unexpected<Error> error(const std::string& key, std::string message) const;
    // A non-empty string without control characters; a command line (`line`)
    // may hold newlines and tabs, as here-documents and scripts do.
    expected<std::string_view> text(simdjson::dom::element v, const std::string& key, bool line = false) const;
    expected<std::vector<std::string>> strings(simdjson::dom::element v, const std::string& key) const;
    expected<void> member(Call& out, std::string_view name, simdjson::dom::element v) const;
    expected<void> permissions(Request& out, simdjson::dom::element v) const;
};

}  // namespace detail

}  // namespace sbx::route

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_ROUTE)

namespace sbx::route::detail {

using simdjson::dom::element;
using simdjson::dom::element_type;

SBX_INLINE tl::unexpected<Error> CallReader::error(const std::string& key, std::string message) const {
    return fail(json::error_at_key(text_, file_, key, std::move(message)));
}

SBX_INLINE expected<std::string_view> CallReader::text(element v, const std::string& key, bool line) const {
    if (v.type() != element_type::STRING)
        return error(key, "expected a string, got " + std::string(json::type_name(v.type())));
    const std::string_view s = v.get_string().value_unsafe();
    if (auto why = json::string_problem(s, line); !why.empty()) return error(key, std::string(why));
    return s;
}

SBX_INLINE expected<std::vector<std::string>> CallReader::strings(element v, const std::string& key) const {
    if (v.type() != element_type::ARRAY)
        return error(key, "expected an array of strings, got " + std::string(json::type_name(v.type())));
    std::vector<std::string> out;
    for (auto item : simdjson::dom::array(v)) {
        auto s = text(item, key + "[" + std::to_string(out.size()) + "]");
        SBX_TRY(s);
        out.emplace_back(*s);
    }
    return out;
}

SBX_INLINE expected<void> CallReader::member(Call& out, std::string_view name, element v) const {
    const std::string key(name);
    if (name == "command") {
        auto s = text(v, key, true);
        SBX_TRY(s);
        out.command = std::string(*s);
    } else if (name == "mode") {
        auto s = text(v, key);
        SBX_TRY(s);
        out.request.mode = permission_mode(*s);
        if (!out.request.mode) return error(key, "unknown mode \"" + std::string(*s) + "\"");
    } else if (name == "dangerouslyDisableSandbox") {
        if (v.type() != element_type::BOOL)
            return error(key, "expected a boolean (true or false), got " + std::string(json::type_name(v.type())));
        out.request.dangerously_disable_sandbox = bool(v.get_bool().value_unsafe());
    } else if (name == "allowedDomains") {
        auto hosts = strings(v, key);
        SBX_TRY(hosts);
        for (std::size_t i = 0; i < hosts->size(); ++i)
            if (auto p = net::parse_host_pattern((*hosts)[i]); !p)
                return error(key + "[" + std::to_string(i) + "]", p.error().message);
        out.request.allowed_domains = std::move(*hosts);
    } else if (name == "permissions") {
        return permissions(out.request, v);
    } else if (name == "caller") {
        auto s = text(v, key);
        SBX_TRY(s);
        if (*s != "owner" && *s != "other") return error(key, "expected \"owner\" or \"other\", got \"" + std::string(*s) + "\"");
        out.request.owner = *s == "owner";
    } else {
        return error(key, "unknown key; a call has 'command', 'mode', 'dangerouslyDisableSandbox', "
                          "'allowedDomains', 'permissions' and 'caller'");
    }
    return {};
}

SBX_INLINE expected<void> CallReader::permissions(Request& out, element v) const {
    if (v.type() != element_type::OBJECT)
        return error("permissions", "expected an object {\"allow\": [...], \"deny\": [...], \"ask\": [...]}, got " +
                                        std::string(json::type_name(v.type())));
    std::vector<std::string_view> seen;
    for (auto field : simdjson::dom::object(v)) {
        const std::string key = "permissions." + std::string(field.key);
        for (auto s : seen)
            if (s == field.key) return error(key, "the key appears twice");
        seen.push_back(field.key);
        SourcedList* list = field.key == "allow" ? &out.allow
                            : field.key == "deny" ? &out.deny
                            : field.key == "ask"  ? &out.ask
                                                  : nullptr;
        if (list == nullptr) return error(key, "unknown key; permissions has 'allow', 'deny' and 'ask'");
        auto rules = strings(field.value, key);
        SBX_TRY(rules);
        for (std::size_t i = 0; i < rules->size(); ++i) {
            const std::string at = key + "[" + std::to_string(i) + "]";
            auto rule = parse_bash_rule((*rules)[i]);
            if (!rule) return error(at, rule.error().message);
            if (!*rule) return error(at, "'" + (*rules)[i] + "' is not a Bash rule: a call carries only its Bash rules");
            list->push_back({std::move((*rules)[i]), Source{LayerKind::flag, FileName(file_), at}});
        }
    }
    return {};
}

SBX_INLINE expected<Call> CallReader::read(element root) const {
    if (root.type() != element_type::OBJECT)
        return error("", "expected an object {\"command\": LINE, ...}, got " + std::string(json::type_name(root.type())));
    Call out;
    std::vector<std::string_view> seen;
    for (auto field : simdjson::dom::object(root)) {
        for (auto s : seen)
            if (s == field.key) return error(std::string(field.key), "the key appears twice");
        seen.push_back(field.key);
        SBX_TRY(member(out, field.key, field.value));
    }
    return out;
}

}  // namespace sbx::route::detail

namespace sbx::route {

SBX_INLINE expected<Call> parse_call(std::string_view text, const std::string& file) {
    auto doc = json::parse(text, file);
    SBX_TRY(doc);
    return detail::CallReader(text, file).read((*doc)->root());
}

}  // namespace sbx::route
#endif
