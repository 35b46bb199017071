// default_policy() and effective_policy(): the table of credential stores, the
// policy made from it, and the rule that any settings layer replaces the default.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "sbx/defaults.hpp"

namespace {

constexpr std::string_view kHome = "/home/u";

sbx::Settings parsed(sbx::LayerKind k, std::string_view text) {
    sbx::SettingsSource src{k, "/r/.claude/settings.json", {std::string(kHome), "/r"}, "/r"};
    auto s = sbx::parse_settings(text, src);
    REQUIRE_MESSAGE(s.has_value(), (s ? std::string() : sbx::to_string(s.error())));
    return std::move(*s);
}

}  // namespace

TEST_CASE("defaults: every credential store is listed once") {
    std::set<std::string_view> seen;
    for (const auto& c : sbx::kCredentialStores) CHECK_MESSAGE(seen.insert(c.path).second, c.path);
}

TEST_CASE("defaults: every credential store is a normalised relative path with a reason") {
    for (const auto& c : sbx::kCredentialStores) {
        INFO(c.path);
        CHECK_FALSE(c.path.empty());
        CHECK(c.path.front() != '/');
        const std::string abs = "/" + std::string(c.path);
        CHECK(sbx::paths::normalize(abs) == abs);
        CHECK_FALSE(c.reason.empty());
    }
}

TEST_CASE("defaults: no credential store lies under another, which would make it redundant") {
    for (const auto& a : sbx::kCredentialStores)
        for (const auto& b : sbx::kCredentialStores) {
            if (a.path == b.path) continue;
            INFO(a.path << " under " << b.path);
            CHECK_FALSE(sbx::paths::at_or_under("/" + std::string(a.path), "/" + std::string(b.path)));
        }
}

TEST_CASE("defaults: the table holds the stores the reference names, and not Claude Code's own files") {
    std::set<std::string_view> paths;
    for (const auto& c : sbx::kCredentialStores) paths.insert(c.path);
    for (std::string_view want : {".ssh", ".aws", ".config/gcloud", ".gnupg", ".kube", ".docker", ".netrc", ".npmrc",
                                  ".pypirc", ".git-credentials", ".config/gh", ".bash_history", ".zsh_history",
                                  ".pgpass", ".my.cnf", ".azure", ".oci", ".config/doctl", ".config/stripe",
                                  ".cargo/credentials.toml", ".gem/credentials", ".codex/auth.json", ".mozilla",
                                  ".config/google-chrome", ".config/chromium"})
        CHECK_MESSAGE(paths.count(want) == 1, want);
    CHECK(paths.count(".claude.json") == 0);
    CHECK(paths.count(".claude") == 0);
    CHECK(paths.count(".claude/projects") == 0);
}

TEST_CASE("defaults: default_policy denies reading each store, joined to the home directory") {
    const sbx::Policy p = sbx::default_policy(kHome);
    REQUIRE(p.filesystem.deny_read.size() == sbx::kCredentialStores.size());
    for (std::size_t i = 0; i < sbx::kCredentialStores.size(); ++i) {
        const auto& e = p.filesystem.deny_read[i];
        INFO(e.value);
        CHECK(e.value == "/home/u/" + std::string(sbx::kCredentialStores[i].path));
        CHECK(sbx::paths::is_absolute(e.value));
        CHECK(sbx::paths::at_or_under(e.value, kHome));
        CHECK(e.source.layer == sbx::LayerKind::builtin);
        CHECK(e.source.file == "(built-in)");
        CHECK(e.source.key == "defaults.credentialStores[" + std::to_string(i) + "]");
    }
}

TEST_CASE("defaults: a home directory written with a trailing slash still gives clean paths") {
    const sbx::Policy p = sbx::default_policy("/home/u/");
    REQUIRE_FALSE(p.filesystem.deny_read.empty());
    CHECK(p.filesystem.deny_read.front().value == "/home/u/" + std::string(sbx::kCredentialStores.front().path));
}

TEST_CASE("defaults: default_policy is enabled by the builtin layer and fails closed") {
    const sbx::Policy p = sbx::default_policy(kHome);
    CHECK(p.enabled.value);
    REQUIRE(p.enabled.source.has_value());
    CHECK(p.enabled.source->layer == sbx::LayerKind::builtin);
    CHECK(p.enabled.source->file == "(built-in)");
    CHECK(p.fail_if_unavailable.value);
    CHECK_FALSE(p.allow_unsandboxed.value);
    CHECK_FALSE(p.filesystem.disabled.value);
}

TEST_CASE("defaults: default_policy allows no network, no extra writes and no secret variables") {
    const sbx::Policy p = sbx::default_policy(kHome);
    CHECK(p.network.allowed_domains.empty());
    CHECK_FALSE(p.network.allow_local_binding.value);
    CHECK_FALSE(p.network.allow_all_unix_sockets.value);
    CHECK(p.network.allow_unix_sockets.empty());
    CHECK(p.filesystem.allow_write.empty());
    CHECK(p.additional_directories.empty());
    CHECK(p.excluded_commands.empty());
    CHECK(p.credentials.env_vars.empty());
    CHECK(p.warnings.empty());
}

TEST_CASE("defaults: effective_policy with no layers is the default, trust recorded") {
    sbx::MemoryFs fs;
    auto p = sbx::effective_policy({}, sbx::MergeOptions{false}, fs, kHome);
    REQUIRE(p.has_value());
    CHECK(p->enabled.value);
    REQUIRE(p->enabled.source.has_value());
    CHECK(p->enabled.source->layer == sbx::LayerKind::builtin);
    CHECK(p->filesystem.deny_read.size() == sbx::kCredentialStores.size());
    CHECK_FALSE(p->trusted);
    CHECK(sbx::to_json(*p) == sbx::to_json([] {
              auto d = sbx::default_policy(kHome);
              d.trusted = false;
              return d;
          }()));
}

TEST_CASE("defaults: effective_policy with one empty layer is the merge, not the default") {
    sbx::MemoryFs fs;
    std::vector<sbx::Settings> layers;
    layers.push_back(parsed(sbx::LayerKind::project, "{}"));
    auto p = sbx::effective_policy(std::move(layers), sbx::MergeOptions{}, fs, kHome);
    REQUIRE(p.has_value());
    CHECK_FALSE(p->enabled.value);
    CHECK_FALSE(p->enabled.source.has_value());
    CHECK(p->filesystem.deny_read.empty());
}

TEST_CASE("defaults: effective_policy with layers gives what merge gives") {
    sbx::MemoryFs fs;
    auto make = [] {
        std::vector<sbx::Settings> layers;
        layers.push_back(parsed(sbx::LayerKind::project,
                                R"({"sandbox": {"enabled": true, "filesystem": {"denyRead": ["~/.ssh"]}}})"));
        return layers;
    };
    auto via_effective = sbx::effective_policy(make(), sbx::MergeOptions{}, fs, kHome);
    auto via_merge = sbx::merge(make(), sbx::MergeOptions{}, fs);
    REQUIRE(via_effective.has_value());
    REQUIRE(via_merge.has_value());
    CHECK(sbx::to_json(*via_effective) == sbx::to_json(*via_merge));
    CHECK(via_effective->filesystem.deny_read.size() == 1);
}
