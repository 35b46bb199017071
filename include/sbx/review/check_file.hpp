// sbx/review/check_file.hpp - a check file: what a team expects its sandbox to decide.
//
// parse_check_file() reads, strictly, the list of expectations `sbx check`
// decides with the engine:
//   {"expect": [
//     {"read": "~/.aws/credentials", "allowed": false, "why": "cloud keys stay out"},
//     {"write": ".git/hooks/pre-commit", "allowed": false},
//     {"host": "github.com:443", "verdict": "allow"},
//     {"command": "git push origin main", "approval": "ask", "where": "inside"}
//   ]}
// Each entry names one subject: `read` or `write` a path (absolute, `~/...`, or
// relative to the root, as settings take paths) with `allowed` true or false, or
// `host` (HOST, HOST:PORT, [V6]:PORT, port 443 when none, as `sbx explain --host`
// takes it) with `verdict` "allow", "deny" or "ask", or `command` (a command
// line as a host would hand it to `sbx route`) with `approval` (auto, allow,
// ask, deny, normal), `where` (inside, outside, excluded, unsandboxed,
// sandbox-off; `outside` is any of the last three) or both, and optionally the
// call's `mode`. `why`, a reason shown when the expectation fails, is optional.
// Strictness: malformed JSON is an error naming the line and column; anything
// else wrong (an unknown or repeated key, a wrong type, an entry with two
// subjects or none, a path or host that names nothing, an empty list, which would
// check nothing) is an error naming the key and the line it is on. Errors are
// INVALID_SETTINGS: a check file is read like a settings file.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/json.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/net/host_pattern.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/route/route.hpp"
#include "sbx/settings/layer.hpp"

namespace sbx::review {

// One expectation of a check file.
struct Expectation {
    enum class Subject { read, write, host, command };
    Subject subject = Subject::read;
    std::string text;  // the path or host as the file writes it
    std::string path;  // read, write: absolute and normalised
    net::HostTarget target;  // host: canonical
    bool allowed = false;    // read, write: what the file expects
    net::HostDecision::Verdict verdict = net::HostDecision::Verdict::deny;  // host: what the file expects
    // command: what the file expects (at least one of the two), and the call's mode.
    std::optional<route::Approval> approval;
    std::optional<std::string> where;  // a route::where_name(), or "outside"
    std::optional<PermissionMode> mode;
    std::string why;        // the file's reason; may be empty
    std::string key;        // where it is: "expect[3]"
    std::size_t line = 0;   // the line its entry starts on
};

constexpr std::string_view subject_name(Expectation::Subject s) noexcept {
    switch (s) {
        case Expectation::Subject::read: return "read";
        case Expectation::Subject::write: return "write";
        case Expectation::Subject::host: return "host";
        case Expectation::Subject::command: return "command";
    }
    return "?";
}

struct CheckFile {
    std::string file;
    std::vector<Expectation> expect;  // in the file's order, never empty
};

namespace detail {

using simdjson::dom::element;
using simdjson::dom::element_type;

class CheckReader {
public:
    CheckReader(std::string_view text, std::string file, const paths::Base& base)
        : text_(text), file_(std::move(file)), base_(base) {}

    expected<CheckFile> read(element root);

private:
    std::string_view text_;
    std::string file_;
    const paths::Base& base_;

    tl::unexpected<Error> error(const std::string& key, std::string message) const;

    tl::unexpected<Error> type_error(const std::string& key, std::string_view want, element got) const {
        return error(key, "expected " + std::string(want) + ", got " + std::string(json::type_name(got.type())));
    }

    // A non-empty string without control characters; a command line (`line`)
    // may hold newlines and tabs, as here-documents do.
    expected<std::string_view> text(element v, const std::string& key, bool line = false) const;

    expected<Expectation> entry(element v, const std::string& key) const;

    // A command's approval, where and mode, from the members entry() kept.
    expected<void> command_members(Expectation& out, const std::string& key, std::optional<element> approval,
                                   std::optional<element> where, std::optional<element> mode) const;
};

}  // namespace detail

// Reads one check file's text. `file` is only a name for messages; `base` says
// where `~/` and relative paths lead (the home directory and the root). Pure.
SBX_INLINE expected<CheckFile> parse_check_file(std::string_view text, const std::string& file, const paths::Base& base);

}  // namespace sbx::review

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_REVIEW)

namespace sbx::review::detail {

SBX_INLINE expected<CheckFile> CheckReader::read(element root) {
    CheckFile out;
    out.file = file_;
    if (root.type() != element_type::OBJECT) return type_error("", "an object {\"expect\": [...]}", root);
    std::optional<element> list;
    for (auto field : simdjson::dom::object(root)) {
        if (field.key != "expect") return error(std::string(field.key), "unknown key; a check file has only 'expect'");
        if (list) return error("expect", "the key appears twice");
        list = field.value;
    }
    if (!list) return error("", "no 'expect' list");
    if (list->type() != element_type::ARRAY) return type_error("expect", "an array of expectations", *list);
    std::size_t i = 0;
    for (auto item : simdjson::dom::array(*list)) {
        auto e = entry(item, "expect[" + std::to_string(i++) + "]");
        SBX_TRY(e);
        out.expect.push_back(std::move(*e));
    }
    if (out.expect.empty()) return error("expect", "the list is empty, so it would check nothing");
    return out;
}

SBX_INLINE tl::unexpected<Error> CheckReader::error(const std::string& key, std::string message) const {
    return fail(json::error_at_key(text_, file_, key, std::move(message)));
}

SBX_INLINE expected<std::string_view> CheckReader::text(element v, const std::string& key, bool line) const {
    if (v.type() != element_type::STRING) return type_error(key, "a string", v);
    const std::string_view s = v.get_string().value_unsafe();
    if (auto why = json::string_problem(s, line); !why.empty()) return error(key, std::string(why));
    return s;
}

SBX_INLINE expected<Expectation> CheckReader::entry(element v, const std::string& key) const {
    if (v.type() != element_type::OBJECT)
        return type_error(key, "an object such as {\"read\": PATH, \"allowed\": false}", v);
    Expectation out;
    out.key = key;
    out.line = json::locate_key(text_, key).value_or(json::Location{}).line;
    std::vector<std::string_view> seen;
    std::optional<element> allowed, verdict, approval, where, mode;
    std::optional<Expectation::Subject> subject;
    for (auto field : simdjson::dom::object(v)) {
        const std::string k = key + "." + std::string(field.key);
        for (auto s : seen)
            if (s == field.key) return error(k, "the key appears twice");
        seen.push_back(field.key);
        std::optional<Expectation::Subject> named;
        if (field.key == "read") named = Expectation::Subject::read;
        else if (field.key == "write") named = Expectation::Subject::write;
        else if (field.key == "host") named = Expectation::Subject::host;
        else if (field.key == "command") named = Expectation::Subject::command;
        if (named) {
            if (subject)
                return error(k, "an entry names one subject: '" + std::string(subject_name(*subject)) +
                                    "' is here already");
            subject = named;
            auto s = text(field.value, k, *named == Expectation::Subject::command);
            SBX_TRY(s);
            out.subject = *named;
            out.text = *s;
        } else if (field.key == "allowed") {
            allowed = field.value;
        } else if (field.key == "verdict") {
            verdict = field.value;
        } else if (field.key == "approval") {
            approval = field.value;
        } else if (field.key == "where") {
            where = field.value;
        } else if (field.key == "mode") {
            mode = field.value;
        } else if (field.key == "why") {
            auto s = text(field.value, k);
            SBX_TRY(s);
            out.why = *s;
        } else {
            return error(k, "unknown key; an entry has 'read', 'write', 'host' or 'command', then 'allowed', "
                            "'verdict', or 'approval' and 'where' (and 'mode'), and may have 'why'");
        }
    }
    if (!subject) return error(key, "the entry names no subject: give 'read', 'write', 'host' or 'command'");
    if (*subject != Expectation::Subject::command)
        for (const auto& [name, given] : {std::pair{"approval", approval}, std::pair{"where", where}, std::pair{"mode", mode}})
            if (given)
                return error(key + "." + name, "'" + std::string(name) + "' is a command's: this entry names a " +
                                                   std::string(subject_name(*subject)));
    if (*subject == Expectation::Subject::command) {
        if (allowed || verdict)
            return error(key + (allowed ? ".allowed" : ".verdict"),
                         "a command expects 'approval' or 'where', not 'allowed' or 'verdict'");
        SBX_TRY(command_members(out, key, approval, where, mode));
        return out;
    }
    if (*subject == Expectation::Subject::host) {
        if (allowed) return error(key + ".allowed", "a host expects a 'verdict' (allow, deny or ask), not 'allowed'");
        if (!verdict) return error(key, "no 'verdict': give \"allow\", \"deny\" or \"ask\"");
        const std::string k = key + ".verdict";
        auto s = text(*verdict, k);
        SBX_TRY(s);
        auto named = net::parse_verdict(*s);
        if (!named) return error(k, "expected \"allow\", \"deny\" or \"ask\", got \"" + std::string(*s) + "\"");
        out.verdict = *named;
        auto target = net::named_target(out.text);
        if (!target) return error(key + ".host", "'" + out.text + "' names no host: " + target.error().message);
        out.target = std::move(*target);
        return out;
    }
    if (verdict) return error(key + ".verdict", "a path expects 'allowed' (true or false), not 'verdict'");
    if (!allowed) return error(key, "no 'allowed': give true or false");
    if (allowed->type() != element_type::BOOL)
        return type_error(key + ".allowed", "a boolean (true or false)", *allowed);
    out.allowed = bool(allowed->get_bool().value_unsafe());
    const std::string k = key + "." + std::string(subject_name(out.subject));
    auto p = paths::resolve(out.text, base_);
    if (!p) return error(k, p.error().message);
    out.path = std::move(*p);
    return out;
}

SBX_INLINE expected<void> CheckReader::command_members(Expectation& out, const std::string& key,
                                                      std::optional<element> approval, std::optional<element> where,
                                                      std::optional<element> mode) const {
    if (!approval && !where) return error(key, "a command expects an 'approval', a 'where', or both");
    if (approval) {
        auto s = text(*approval, key + ".approval");
        SBX_TRY(s);
        out.approval = route::parse_approval(*s);
        if (!out.approval)
            return error(key + ".approval",
                         "expected \"auto\", \"allow\", \"ask\", \"deny\" or \"normal\", got \"" + std::string(*s) + "\"");
    }
    if (where) {
        auto s = text(*where, key + ".where");
        SBX_TRY(s);
        bool known = *s == "outside";
        for (auto w : {route::Where::inside, route::Where::excluded, route::Where::unsandboxed, route::Where::sandbox_off})
            known = known || *s == route::where_name(w);
        if (!known)
            return error(key + ".where", "expected \"inside\", \"outside\", \"excluded\", \"unsandboxed\" or "
                                         "\"sandbox-off\", got \"" + std::string(*s) + "\"");
        out.where = std::string(*s);
    }
    if (mode) {
        auto s = text(*mode, key + ".mode");
        SBX_TRY(s);
        out.mode = permission_mode(*s);
        if (!out.mode) return error(key + ".mode", "unknown mode \"" + std::string(*s) + "\"");
    }
    return {};
}

}  // namespace sbx::review::detail

namespace sbx::review {

SBX_INLINE expected<CheckFile> parse_check_file(std::string_view text, const std::string& file, const paths::Base& base) {
    auto doc = json::parse(text, file);
    SBX_TRY(doc);
    return detail::CheckReader(text, file, base).read((*doc)->root());
}

}  // namespace sbx::review
#endif
