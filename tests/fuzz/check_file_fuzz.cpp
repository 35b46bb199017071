// Fuzzing parse_check_file(): a check file of `sbx check`, and json::locate_key()
// on the same text.
//
// Any bytes come back as a CheckFile or as an error with a message and the check
// file's name; nothing throws. A check file that parses has at least one
// expectation, each with its key and a line, a path that is absolute and
// normalised or a host with a port. Where the text is JSON, locate_key() of any
// key names a line and column inside it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"
#include "sbx/review/check_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using sbx::fuzz::check;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::string file = "policy-check.json";
    auto c = sbx::review::parse_check_file(text, file, sbx::paths::Base{"/home/u", "/home/u/proj"});
    if (!c) {
        sbx::fuzz::check_error(c.error(), file);
        return 0;
    }
    check(!c->expect.empty(), "a check file that parses expects something");
    const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    for (const auto& e : c->expect) {
        check(e.key.starts_with("expect["), "an expectation names its key");
        check(e.line >= 1 && e.line <= lines, "an expectation's line is in the file");
        if (e.subject == sbx::review::Expectation::Subject::host) {
            check(e.target.port != 0 && !e.target.host.empty(), "a host has a name and a port");
        } else {
            check(e.path.starts_with('/') && sbx::paths::normalize(e.path) == e.path, "a path is absolute and normalised");
        }
        for (const std::string& key : {e.key, e.key + "." + std::string(sbx::review::subject_name(e.subject)), e.key + ".why"})
            if (auto at = sbx::json::locate_key(text, key))
                check(at->line >= 1 && at->line <= lines && at->column >= 1, "a located key is inside the text");
    }
    return 0;
}
