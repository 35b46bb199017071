// Fuzzing parse_plan().
//
// Any bytes come back as a Plan or as an error with a message and the plan's
// origin. A plan that parses writes (to_json) a document that parses again and
// writes the same bytes: reading loses nothing that writing puts out.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/plan/plan_json.hpp"
#include "sbx/plan/read_plan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using sbx::fuzz::check;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
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
