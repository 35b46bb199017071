// sbx/plan/said_once.hpp - warnings `sbx run` says once for a root.
//
// Some warnings name what a check left undone that stays so from run to run (the
// hard-link check of a large hidden home stops after its limit: fs_plan.hpp).
// Said before every command they are noise no user can act on each time, so such
// a warning is marked Warning::once, and `sbx run` keeps the ones it has said for
// a root in BASE/sbx/said/NAME (beside the tool cache homes, out of the command's
// reach), one line each, and says only the others. `sbx plan` lists them all
// every time, and a launcher reading a plan prints what it holds.
//
// The file is sbx's own: "sbx said 1\n", then each warning's text (to_string) and
// a line end. One that is not so (another version's, a truncated write) is read
// as empty and written again; so is one that would grow past kMaxBytes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/rules/tool_cache.hpp"

namespace sbx {

namespace said_once {

inline constexpr std::string_view kHeader = "sbx said 1\n";
inline constexpr std::size_t kMaxBytes = std::size_t{1} << 16;

}  // namespace said_once

// BASE/sbx/said/NAME for a root, NAME as tool_cache_name() makes it.
SBX_INLINE std::string said_path(std::string_view base, std::string_view root);

// The warnings a file's text says were said; empty for a text that is not one.
SBX_INLINE std::vector<std::string> parse_said(std::string_view text);

SBX_INLINE std::string said_text(const std::vector<std::string>& said);

// What of `warnings` to say now, and what the file says afterwards: a once
// warning in `said` is left out; one not yet in it is said and added. A warning
// whose text holds a line end is said every time (it cannot be one line).
struct SaidOnce {
    std::vector<Warning> say;
    std::vector<std::string> said;
    bool changed = false;
};

SBX_INLINE SaidOnce say_once(const std::vector<Warning>& warnings, std::vector<std::string> said);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_PLAN)

namespace sbx {

SBX_INLINE std::string said_path(std::string_view base, std::string_view root) {
    return paths::join(paths::join(std::string(base), "sbx/said"), tool_cache_name(root));
}

SBX_INLINE std::vector<std::string> parse_said(std::string_view text) {
    if (!text.starts_with(said_once::kHeader) || text.size() > said_once::kMaxBytes ||
        (text.size() > said_once::kHeader.size() && text.back() != '\n'))
        return {};
    std::vector<std::string> out;
    text.remove_prefix(said_once::kHeader.size());
    while (!text.empty()) {
        const auto end = text.find('\n');
        if (end == 0) return {};
        out.emplace_back(text.substr(0, end));
        text.remove_prefix(end + 1);
    }
    return out;
}

SBX_INLINE std::string said_text(const std::vector<std::string>& said) {
    std::string out(said_once::kHeader);
    for (const auto& s : said) out += s + "\n";
    return out;
}

SBX_INLINE SaidOnce say_once(const std::vector<Warning>& warnings, std::vector<std::string> said) {
    SaidOnce out;
    for (const auto& w : warnings) {
        const std::string text = to_string(w);
        if (!w.once || text.find('\n') != std::string::npos) {
            out.say.push_back(w);
            continue;
        }
        if (std::find(said.begin(), said.end(), text) != said.end()) continue;
        out.say.push_back(w);
        said.push_back(text);
        out.changed = true;
    }
    if (out.changed && said_text(said).size() > said_once::kMaxBytes) {
        // Start again with what was said now.
        said.clear();
        for (const auto& w : out.say)
            if (w.once) said.push_back(to_string(w));
    }
    out.said = std::move(said);
    return out;
}

}  // namespace sbx
#endif
