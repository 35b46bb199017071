// Fuzzing parse_settings(), and merge() of what it reads.
//
// Any bytes come back as a Settings layer or as an error with a message and the
// file it is about; nothing throws. A layer that parses merges, alone on top of
// nothing, into a Policy or an error with a message.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/settings/policy.hpp"
#include "sbx/settings/settings.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using sbx::fuzz::check;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::string file = "/home/dev/work/app/.claude/settings.json";
    const sbx::SettingsSource src{sbx::LayerKind::project, file,
                                  sbx::paths::Base{"/home/dev", sbx::settings_project_dir(file)}, "/home/dev/work/app"};
    auto layer = sbx::parse_settings(text, src);
    if (!layer) {
        sbx::fuzz::check_error(layer.error(), file);
        return 0;
    }
    const sbx::MemoryFs fs;
    for (const bool trusted : {true, false}) {
        std::vector<sbx::Settings> layers{*layer};
        auto policy = sbx::merge(std::move(layers), sbx::MergeOptions{trusted}, fs);
        if (!policy) sbx::fuzz::check_error(policy.error(), "");
    }
    return 0;
}
