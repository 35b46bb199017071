// Fuzzing parse_check_file(), a check file of `sbx check`, and parse_call(), a
// call of `sbx route --request-json`: the two JSON files review and routing
// read, fed the same bytes; and json::locate_key() on the same text.
//
// Any bytes come back as a CheckFile or as an error with a message and the check
// file's name; nothing throws. A check file that parses has at least one
// expectation, each with its key and a line, a path that is absolute and
// normalised, a host with a port, or a command with an approval or a where.
// Where the text is JSON, locate_key() of any key names a line and column
// inside it. A call comes back, or an error with a message and the file's
// name; one that parses has only well-formed rules, each with its key.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"
#include "sbx/review/check_file.hpp"
#include "sbx/route/request.hpp"

namespace {

using sbx::fuzz::check;

void check_call(std::string_view text) {
    const std::string file = "call.json";
    auto call = sbx::route::parse_call(text, file);
    if (!call) {
        sbx::fuzz::check_error(call.error(), file);
        return;
    }
    check(!call->command || !call->command->empty(), "a call's command is not empty");
    for (const auto* list : {&call->request.allow, &call->request.deny, &call->request.ask})
        for (const auto& r : *list) {
            check(r.source.key.starts_with("permissions.") && r.source.file == file, "a call's rule names its key");
            auto rule = sbx::parse_bash_rule(r.value);
            check(rule.has_value() && rule->has_value(), "a call's rule is a well-formed Bash rule");
        }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_call(text);
    const std::string file = "policy-check.json";
    auto c = sbx::review::parse_check_file(text, file, sbx::paths::Base{"/home/u", "/home/u/proj"});
    if (!c) {
        sbx::fuzz::check_error(c.error(), file);
        return 0;
    }
    check(!c->expect.empty(), "a check file that parses expects something");
    const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    using Subject = sbx::review::Expectation::Subject;
    for (const auto& e : c->expect) {
        check(e.key.starts_with("expect["), "an expectation names its key");
        check(e.line >= 1 && e.line <= lines, "an expectation's line is in the file");
        if (e.subject == Subject::host) {
            check(e.target.port != 0 && !e.target.host.empty(), "a host has a name and a port");
        } else if (e.subject == Subject::command) {
            check(!e.text.empty() && (e.approval || e.where), "a command expects an approval or a where");
        } else {
            check(e.path.starts_with('/') && sbx::paths::normalize(e.path) == e.path, "a path is absolute and normalised");
        }
        if (e.subject != Subject::command) check(!e.approval && !e.where && !e.mode, "only a command has a route");
        for (const std::string& key : {e.key, e.key + "." + std::string(sbx::review::subject_name(e.subject)), e.key + ".why"})
            if (auto at = sbx::json::locate_key(text, key))
                check(at->line >= 1 && at->line <= lines && at->column >= 1, "a located key is inside the text");
    }
    return 0;
}
