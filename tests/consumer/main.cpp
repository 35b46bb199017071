// Uses the sbx policy engine as a library: parses one settings text, makes the
// effective policy of it as the only layer (the built-in credential denies under
// it) and prints one value of the policy with the key that set it.
// tests/consumer/build_test.sh checks the line it prints.
#include <iostream>
#include <string_view>
#include <vector>

#include "sbx/core/fs_view.hpp"
#include "sbx/settings/defaults.hpp"
#include "sbx/settings/settings.hpp"

int main() {
    constexpr std::string_view text = R"({
        "sandbox": {
            "enabled": true,
            "network": {"allowedDomains": ["example.com"]}
        }
    })";
    const sbx::SettingsSource source{
        sbx::LayerKind::project,
        "/project/.claude/settings.json",
        sbx::paths::Base{"/home/user", "/project"},
        "/project",
    };
    auto settings = sbx::parse_settings(text, source);
    if (!settings) {
        std::cerr << "sbx-consumer: " << sbx::to_string(settings.error()) << "\n";
        return 1;
    }
    std::vector<sbx::Settings> layers{*settings};
    const sbx::MemoryFs fs;
    auto policy = sbx::effective_policy(std::move(layers), sbx::MergeOptions{}, fs, {"/home/user"});
    if (!policy) {
        std::cerr << "sbx-consumer: " << sbx::to_string(policy.error()) << "\n";
        return 1;
    }
    if (policy->network.allowed_domains.empty()) {
        std::cerr << "sbx-consumer: the policy allows no domain\n";
        return 1;
    }
    if (policy->filesystem.deny_read.empty()) {
        std::cerr << "sbx-consumer: the policy hides no credential store\n";
        return 1;
    }
    const auto& domain = policy->network.allowed_domains.front();
    std::cout << domain.value << " from " << sbx::layer_name(domain.source.layer) << " " << domain.source.key << "\n";
    return 0;
}
