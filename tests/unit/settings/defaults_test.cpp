// default_policy() and effective_policy(): the table of credential stores, the
// policy made from it, the rule that any settings layer replaces the default but
// for the credential denies, which stay under every layer and every home given,
// and the warning on an allowRead entry that lifts one.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "sbx/settings/defaults.hpp"

namespace {

constexpr std::string_view kHome = "/home/u";
const std::vector<std::string> kHomes{std::string(kHome)};

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
    const sbx::Policy p = sbx::default_policy(kHomes);
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
    const sbx::Policy p = sbx::default_policy({"/home/u/"});
    REQUIRE_FALSE(p.filesystem.deny_read.empty());
    CHECK(p.filesystem.deny_read.front().value == "/home/u/" + std::string(sbx::kCredentialStores.front().path));
}

TEST_CASE("defaults: default_policy is enabled by the builtin layer and fails closed") {
    const sbx::Policy p = sbx::default_policy(kHomes);
    CHECK(p.enabled.value);
    REQUIRE(p.enabled.source.has_value());
    CHECK(p.enabled.source->layer == sbx::LayerKind::builtin);
    CHECK(p.enabled.source->file == "(built-in)");
    CHECK(p.fail_if_unavailable.value);
    CHECK_FALSE(p.allow_unsandboxed.value);
    CHECK_FALSE(p.filesystem.disabled.value);
}

TEST_CASE("defaults: default_policy allows no network, no extra writes and no secret variables") {
    const sbx::Policy p = sbx::default_policy(kHomes);
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
    auto p = sbx::effective_policy({}, sbx::MergeOptions{false}, fs, kHomes);
    REQUIRE(p.has_value());
    CHECK(p->enabled.value);
    REQUIRE(p->enabled.source.has_value());
    CHECK(p->enabled.source->layer == sbx::LayerKind::builtin);
    CHECK(p->filesystem.deny_read.size() == sbx::kCredentialStores.size());
    CHECK_FALSE(p->trusted);
    CHECK(sbx::to_json(*p) == sbx::to_json([] {
              auto d = sbx::default_policy(kHomes);
              d.trusted = false;
              return d;
          }()));
    CHECK_FALSE(p->weaker_sandbox.value);  // the default does not ask for it
}

TEST_CASE("defaults: --weaker-sandbox counts with no layers too, and beside the files") {
    sbx::MemoryFs fs;
    auto p = sbx::effective_policy({}, sbx::MergeOptions{true, true}, fs, kHomes);
    REQUIRE(p.has_value());
    CHECK(p->weaker_sandbox.value);
    REQUIRE(p->weaker_sandbox.source.has_value());
    CHECK(p->weaker_sandbox.source->key == "--weaker-sandbox");
    CHECK(p->enabled.value);  // the rest is the default still
    std::vector<sbx::Settings> layers;
    layers.push_back(parsed(sbx::LayerKind::user, "{}"));
    auto q = sbx::effective_policy(std::move(layers), sbx::MergeOptions{true, true}, fs, kHomes);
    REQUIRE(q.has_value());
    CHECK(q->weaker_sandbox.value);
    CHECK(q->weaker_sandbox.source->key == "--weaker-sandbox");
}

namespace {

// The builtin layer's deny of each store under `home`, as effective_policy puts it.
std::size_t builtin_denies(const sbx::Policy& p, std::string_view home) {
    std::size_t n = 0;
    for (const auto& e : p.filesystem.deny_read)
        if (e.source.layer == sbx::LayerKind::builtin && sbx::paths::at_or_under(e.value, home) &&
            sbx::credential_store_of(e.source) != nullptr)
            ++n;
    return n;
}

std::vector<std::string> messages(const sbx::Policy& p) {
    std::vector<std::string> out;
    for (const auto& w : p.warnings) out.push_back(w.file + " " + w.key + ": " + w.message);
    return out;
}

}  // namespace

TEST_CASE("defaults: an empty settings file decides everything but the credential stores, which stay denied") {
    sbx::MemoryFs fs;
    std::vector<sbx::Settings> layers;
    layers.push_back(parsed(sbx::LayerKind::project, "{}"));
    auto p = sbx::effective_policy(std::move(layers), sbx::MergeOptions{}, fs, kHomes);
    REQUIRE(p.has_value());
    CHECK_FALSE(p->enabled.value);  // the rest of the default is not merged under a file
    CHECK_FALSE(p->enabled.source.has_value());
    REQUIRE(p->filesystem.deny_read.size() == sbx::kCredentialStores.size());
    for (std::size_t i = 0; i < sbx::kCredentialStores.size(); ++i) {
        const auto& e = p->filesystem.deny_read[i];
        CHECK(e.value == "/home/u/" + std::string(sbx::kCredentialStores[i].path));
        CHECK(e.source.layer == sbx::LayerKind::builtin);
        CHECK(e.source.file == "(built-in)");
        CHECK(e.source.key == "defaults.credentialStores[" + std::to_string(i) + "]");
        CHECK(sbx::credential_store_of(e.source) == &sbx::kCredentialStores[i]);
    }
    CHECK(p->warnings.empty());
}

TEST_CASE("defaults: the stores are denied under every home given, each once") {
    sbx::MemoryFs fs;
    for (const bool with_layer : {false, true}) {
        INFO("with a layer: " << with_layer);
        std::vector<sbx::Settings> layers;
        if (with_layer) layers.push_back(parsed(sbx::LayerKind::user, "{}"));
        auto p = sbx::effective_policy(std::move(layers), sbx::MergeOptions{}, fs,
                                       {"/elsewhere", "/home/u", "/home/u/", "/elsewhere"});
        REQUIRE(p.has_value());
        CHECK(p->filesystem.deny_read.size() == 2 * sbx::kCredentialStores.size());
        CHECK(builtin_denies(*p, "/elsewhere") == sbx::kCredentialStores.size());
        CHECK(builtin_denies(*p, "/home/u") == sbx::kCredentialStores.size());
    }
}

TEST_CASE("defaults: a settings deny equal to a store is kept beside the builtin one") {
    sbx::MemoryFs fs;
    std::vector<sbx::Settings> layers;
    layers.push_back(parsed(sbx::LayerKind::user, R"({"sandbox": {"filesystem": {"denyRead": ["~/.ssh"]}}})"));
    auto p = sbx::effective_policy(std::move(layers), sbx::MergeOptions{}, fs, kHomes);
    REQUIRE(p.has_value());
    std::vector<sbx::LayerKind> ssh;
    for (const auto& e : p->filesystem.deny_read)
        if (e.value == "/home/u/.ssh") ssh.push_back(e.source.layer);
    CHECK(ssh == std::vector{sbx::LayerKind::user, sbx::LayerKind::builtin});
}

TEST_CASE("defaults: an allowRead entry naming a store, or a path in it, is warned about with the store's reason") {
    sbx::MemoryFs fs;
    std::vector<sbx::Settings> layers;
    layers.push_back(parsed(sbx::LayerKind::user,
                            R"({"sandbox": {"filesystem": {"allowRead": ["~/.aws", "~/.ssh/config", "~", "/",
                                 "~/.config", "~/**", "~/*/credentials", "~/.ssh/*.pub"]}}})"));
    auto p = sbx::effective_policy(std::move(layers), sbx::MergeOptions{}, fs, kHomes);
    REQUIRE(p.has_value());
    const auto m = messages(*p);
    INFO(m.size());
    REQUIRE(m.size() == 3);
    CHECK(m[0] == "/r/.claude/settings.json sandbox.filesystem.allowRead[0]: filesystem.allowRead ~/.aws lifts the "
                  "built-in denial of ~/.aws (AWS access keys and SSO tokens): commands can read it");
    CHECK(m[1].starts_with("/r/.claude/settings.json sandbox.filesystem.allowRead[1]: filesystem.allowRead "
                           "~/.ssh/config lifts the built-in denial of ~/.ssh (SSH private keys"));
    CHECK(m[2].starts_with("/r/.claude/settings.json sandbox.filesystem.allowRead[7]: filesystem.allowRead "
                           "~/.ssh/*.pub lifts the built-in denial of ~/.ssh"));
}

TEST_CASE("defaults: an allowRead naming another home's store is no lift of the account's") {
    sbx::MemoryFs fs;
    std::vector<sbx::Settings> layers;
    // `~` is $HOME (/elsewhere): only that home's store is lifted and warned about.
    sbx::SettingsSource src{sbx::LayerKind::user, "/elsewhere/.claude/settings.json", {"/elsewhere", "/r"}, "/r"};
    auto s = sbx::parse_settings(R"({"sandbox": {"filesystem": {"allowRead": ["~/.ssh"]}}})", src);
    REQUIRE(s.has_value());
    layers.push_back(std::move(*s));
    auto p = sbx::effective_policy(std::move(layers), sbx::MergeOptions{}, fs, {"/elsewhere", "/home/u"});
    REQUIRE(p.has_value());
    REQUIRE(p->warnings.size() == 1);
    CHECK(p->warnings[0].message.starts_with("filesystem.allowRead ~/.ssh lifts the built-in denial of ~/.ssh ("));
}

TEST_CASE("defaults: a repository's allowRead into a store is left out, trusted or not; an untrusted one too") {
    sbx::MemoryFs fs;
    for (const bool trusted : {true, false}) {
        INFO("trusted: " << trusted);
        std::vector<sbx::Settings> layers;
        layers.push_back(parsed(sbx::LayerKind::project,
                                R"({"sandbox": {"filesystem": {"allowRead": ["~/.ssh", "~/.aws/config"]}}})"));
        auto p = sbx::effective_policy(std::move(layers), sbx::MergeOptions{trusted}, fs, kHomes);
        REQUIRE(p.has_value());
        REQUIRE(p->filesystem.allow_read.size() == 1);  // sbx's own opening alone
        CHECK(sbx::is_store_opening(p->filesystem.allow_read[0].source));
        const auto m = messages(*p);
        REQUIRE(m.size() == 2);
        for (const auto& w : m) {
            INFO(w);
            CHECK(w.find("lifts") == std::string::npos);
            if (trusted) CHECK(w.find("a credential store sbx hides") != std::string::npos);
            else CHECK(w.find("not trusted") != std::string::npos);
        }
    }
}

TEST_CASE("defaults: with allowManagedReadPathsOnly only a managed allowRead lifts a store") {
    sbx::MemoryFs fs;
    std::vector<sbx::Settings> layers;
    layers.push_back(parsed(sbx::LayerKind::user, R"({"sandbox": {"filesystem": {"allowRead": ["~/.ssh"]}}})"));
    layers.push_back(parsed(sbx::LayerKind::managed,
                            R"({"sandbox": {"filesystem": {"allowManagedReadPathsOnly": true, "allowRead": ["~/.kube"]}}})"));
    auto p = sbx::effective_policy(std::move(layers), sbx::MergeOptions{}, fs, kHomes);
    REQUIRE(p.has_value());
    REQUIRE(p->filesystem.allow_read.size() == 1);
    CHECK(p->filesystem.allow_read[0].value == "/home/u/.kube");
    std::size_t lifts = 0;
    for (const auto& w : p->warnings) lifts += w.message.find("lifts the built-in denial of ~/.kube") != std::string::npos;
    CHECK(lifts == 1);
    for (const auto& w : p->warnings) CHECK(w.message.find("denial of ~/.ssh") == std::string::npos);
}

TEST_CASE("defaults: an allowRead that another deny names exactly lifts nothing and is not warned about") {
    sbx::MemoryFs fs;
    std::vector<sbx::Settings> layers;
    layers.push_back(
        parsed(sbx::LayerKind::user, R"({"sandbox": {"filesystem": {"denyRead": ["~/.ssh"], "allowRead": ["~/.ssh"]}}})"));
    auto p = sbx::effective_policy(std::move(layers), sbx::MergeOptions{}, fs, kHomes);
    REQUIRE(p.has_value());
    CHECK(p->warnings.empty());
}

TEST_CASE("defaults: effective_policy with layers gives what merge gives over the builtin layer") {
    sbx::MemoryFs fs;
    auto make = [] {
        std::vector<sbx::Settings> layers;
        layers.push_back(parsed(sbx::LayerKind::project,
                                R"({"sandbox": {"enabled": true, "filesystem": {"denyRead": ["~/.ssh"]}}})"));
        return layers;
    };
    auto via_effective = sbx::effective_policy(make(), sbx::MergeOptions{}, fs, kHomes);
    auto layers = make();
    sbx::Settings builtin;
    builtin.layer = sbx::LayerKind::builtin;
    builtin.file = "(built-in)";
    builtin.filesystem.deny_read = sbx::credential_store_denies(kHomes);
    layers.push_back(std::move(builtin));
    auto via_merge = sbx::merge(std::move(layers), sbx::MergeOptions{}, fs);
    REQUIRE(via_effective.has_value());
    REQUIRE(via_merge.has_value());
    CHECK(sbx::to_json(*via_effective) == sbx::to_json(*via_merge));
    CHECK(via_effective->filesystem.deny_read.size() == 1 + sbx::kCredentialStores.size());
}

TEST_CASE("defaults: ~/.ssh/known_hosts stays readable under each home, unless a settings deny covers it") {
    sbx::MemoryFs fs;
    auto opened = [](const sbx::Policy& p) {
        std::vector<std::string> out;
        for (const auto& a : p.filesystem.allow_read)
            if (sbx::is_store_opening(a.source)) out.push_back(a.value);
        return out;
    };
    const auto none = sbx::default_policy(kHomes);
    CHECK(opened(none) == std::vector<std::string>{"/home/u/.ssh/known_hosts"});
    CHECK(none.warnings.empty());

    std::vector<sbx::Settings> layers;
    layers.push_back(parsed(sbx::LayerKind::user, "{}"));
    auto p = sbx::effective_policy(std::move(layers), sbx::MergeOptions{}, fs, {"/home/u", "/root"});
    REQUIRE(p.has_value());
    CHECK(opened(*p) == std::vector<std::string>{"/home/u/.ssh/known_hosts", "/root/.ssh/known_hosts"});
    CHECK(p->warnings.empty());  // sbx's own opening is no lift to warn about

    // The control: a user's own deny of ~/.ssh (or a pattern reaching it) keeps all of it hidden.
    for (const char* deny : {"~/.ssh", "~/.ssh/known_hosts", "~/.*", "/home/*/.ssh"}) {
        INFO(deny);
        std::vector<sbx::Settings> denied;
        denied.push_back(parsed(sbx::LayerKind::user,
                                std::string(R"({"sandbox": {"filesystem": {"denyRead": [")") + deny + R"("]}}})"));
        auto q = sbx::effective_policy(std::move(denied), sbx::MergeOptions{}, fs, kHomes);
        REQUIRE(q.has_value());
        CHECK(opened(*q).empty());
    }
    // Nor where managed settings alone open reads.
    std::vector<sbx::Settings> managed;
    managed.push_back(parsed(sbx::LayerKind::managed,
                             R"({"sandbox": {"filesystem": {"allowManagedReadPathsOnly": true}}})"));
    auto m = sbx::effective_policy(std::move(managed), sbx::MergeOptions{}, fs, kHomes);
    REQUIRE(m.has_value());
    CHECK(opened(*m).empty());
}
