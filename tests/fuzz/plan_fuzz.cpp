// Fuzzing parse_plan(), and a session's protocol (sbx/plan/session_protocol.hpp).
//
// Any bytes come back as a Plan or as an error with a message and the plan's
// origin. A plan that parses writes (to_json) a document that parses again and
// writes the same bytes: reading loses nothing that writing puts out. The same
// bytes as a session's request line, and as its event line: each is refused with
// a message, or read and written as one line that reads back as itself.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/plan/plan_json.hpp"
#include "sbx/plan/read_plan.hpp"
#include "sbx/plan/session_protocol.hpp"

namespace {

using sbx::fuzz::check;

void check_session(std::string_view text) {
    namespace s = sbx::session;
    if (auto r = s::parse_request(text)) {
        const std::string line = s::request_line(*r);
        check(line.find('\n') == line.size() - 1, "a request is written as one line");
        auto back = s::parse_request(std::string_view(line).substr(0, line.size() - 1));
        check(back && *back == *r, "a request read back is itself");
    } else {
        check(!r.error().message.empty(), "a refused request says why");
    }
    if (auto e = s::parse_event(text)) {
        const std::string line = s::event_line(*e);
        check(line.find('\n') == line.size() - 1, "an event is written as one line");
        auto back = s::parse_event(std::string_view(line).substr(0, line.size() - 1));
        check(back && *back == *e, "an event read back is itself");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_session(text);
    const std::string origin = "plan.json";
    auto plan = sbx::parse_plan(text, origin);
    if (!plan) {
        sbx::fuzz::check_error(plan.error(), origin);
        return 0;
    }
    const std::string once = sbx::to_json(*plan);
    auto again = sbx::parse_plan(once, origin);
    check(again.has_value(), "the JSON of a plan that parsed parses");
    check(sbx::to_json(*again) == once, "the JSON of a plan read back is the same bytes");
    return 0;
}
