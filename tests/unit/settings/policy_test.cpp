// merge(): every layering, lock and trust rule, one test or more each.
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "sbx/settings/policy.hpp"
#include "sbx/settings/policy_fields.hpp"

namespace {

using sbx::LayerKind;

// Where each layer's file lives in these tests: HOME is /home/u, the root is /r.
sbx::SettingsSource source_for(LayerKind k) {
    switch (k) {
        case LayerKind::managed:
            return {k, "/etc/claude-code/managed-settings.json", {"/home/u", "/etc/claude-code"}, "/r"};
        case LayerKind::builtin:  // no file: sbx's own default
        case LayerKind::user: return {k, "/home/u/.claude/settings.json", {"/home/u", "/home/u"}, "/r"};
        case LayerKind::project: return {k, "/r/.claude/settings.json", {"/home/u", "/r"}, "/r"};
        case LayerKind::local: return {k, "/r/.claude/settings.local.json", {"/home/u", "/r"}, "/r"};
        case LayerKind::flag: return {k, "/opt/extra.json", {"/home/u", "/opt"}, "/r"};
    }
    return {};
}

struct Layers {
    std::vector<sbx::Settings> list;
    Layers& add(LayerKind k, std::string_view text) {
        auto s = sbx::parse_settings(text, source_for(k));
        REQUIRE_MESSAGE(s.has_value(), (s ? std::string() : sbx::to_string(s.error())));
        list.push_back(std::move(*s));
        return *this;
    }
};

sbx::Policy merged(const Layers& l, bool trusted = true, const sbx::FsView* fs = nullptr) {
    sbx::MemoryFs empty;
    auto p = sbx::merge(l.list, sbx::MergeOptions{trusted}, fs ? *fs : empty);
    REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : sbx::to_string(p.error())));
    return *p;
}

std::vector<std::string> values(const sbx::SourcedList& l) {
    std::vector<std::string> out;
    for (const auto& e : l) out.push_back(e.value);
    return out;
}

bool contains(const sbx::SourcedList& l, std::string_view v) {
    return std::any_of(l.begin(), l.end(), [&](const auto& e) { return e.value == v; });
}

// A warning about `key` in the file of layer `k`, whose message holds `text`.
bool warned(const sbx::Policy& p, LayerKind k, std::string_view key, std::string_view text) {
    auto file = source_for(k).file;
    return std::any_of(p.warnings.begin(), p.warnings.end(), [&](const sbx::Warning& w) {
        return w.file == file && w.key == key && w.message.find(text) != std::string::npos;
    });
}

constexpr auto kManagedAdmin = R"J({"sandbox": {"allowUnsandboxedCommands": false}})J";

}  // namespace

TEST_CASE("policy: the defaults, on the safe side") {
    auto p = merged(Layers{});
    CHECK_FALSE(p.enabled.value);
    CHECK(p.fail_if_unavailable.value);  // true once enabled
    CHECK_FALSE(p.allow_unsandboxed.value);
    CHECK(p.auto_allow.value);
    CHECK_FALSE(p.filesystem.disabled.value);
    CHECK_FALSE(p.network.strict_allowlist.value);
    CHECK_FALSE(p.network.allow_local_binding.value);
    CHECK_FALSE(p.network.allow_all_unix_sockets.value);
    CHECK_FALSE(p.admin_required.value);
    CHECK_FALSE(p.enabled.source);
    CHECK(p.network.allowed_domains.empty());
    CHECK(p.warnings.empty());
    // Enabling alone keeps failIfUnavailable true.
    auto q = merged(Layers{}.add(LayerKind::project, R"J({"sandbox": {"enabled": true}})J"));
    CHECK(q.enabled.value);
    CHECK(q.fail_if_unavailable.value);
}

TEST_CASE("policy: a boolean comes from the highest layer that sets it") {
    // Each row: which layers set `autoAllowBashIfSandboxed`, and to what; the winner.
    struct Row {
        std::vector<std::pair<LayerKind, bool>> set;
        LayerKind winner;
        bool value;
    };
    const Row rows[] = {
        {{{LayerKind::user, false}}, LayerKind::user, false},
        {{{LayerKind::user, true}, {LayerKind::project, false}}, LayerKind::project, false},
        {{{LayerKind::project, true}, {LayerKind::local, false}}, LayerKind::local, false},
        {{{LayerKind::local, true}, {LayerKind::flag, false}}, LayerKind::flag, false},
        {{{LayerKind::flag, true}, {LayerKind::managed, false}}, LayerKind::managed, false},
        {{{LayerKind::managed, false}, {LayerKind::user, true}, {LayerKind::local, true}}, LayerKind::managed, false},
        {{{LayerKind::user, false}, {LayerKind::local, false}, {LayerKind::project, true}}, LayerKind::local, false},
    };
    for (const auto& row : rows) {
        Layers l;
        for (auto [k, v] : row.set)
            l.add(k, std::string(R"J({"sandbox": {"autoAllowBashIfSandboxed": )J") + (v ? "true" : "false") + "}}");
        auto p = merged(l);
        CAPTURE(sbx::layer_name(row.winner));
        CHECK(p.auto_allow.value == row.value);
        REQUIRE(p.auto_allow.source);
        CHECK(p.auto_allow.source->layer == row.winner);
        CHECK(p.auto_allow.source->file == source_for(row.winner).file);
        CHECK(p.auto_allow.source->key == "sandbox.autoAllowBashIfSandboxed");
    }
    // Layers may come in any order.
    auto p = merged(Layers{}
                        .add(LayerKind::managed, R"J({"sandbox": {"enabled": true}})J")
                        .add(LayerKind::user, R"J({"sandbox": {"enabled": false}})J"));
    CHECK(p.enabled.value);
}

TEST_CASE("policy: lists are combined across layers, duplicates once, each entry with its source") {
    auto p = merged(Layers{}
                        .add(LayerKind::user, R"J({"sandbox": {"filesystem": {"denyRead": ["~/.aws", "~/.ssh"]},
                                                    "network": {"deniedDomains": ["a.example"]}}})J")
                        .add(LayerKind::project, R"J({"sandbox": {"filesystem": {"denyRead": ["secrets", "~/.ssh"]},
                                                       "network": {"allowedDomains": ["github.com"]}}})J")
                        .add(LayerKind::managed, R"J({"sandbox": {"network": {"deniedDomains": ["b.example"]}}})J"));
    auto deny = values(p.filesystem.deny_read);
    std::sort(deny.begin(), deny.end());
    CHECK(deny == std::vector<std::string>{"/home/u/.aws", "/home/u/.ssh", "/r/secrets"});
    // ~/.ssh appears in two layers: it is kept once, with the higher layer's source.
    for (const auto& e : p.filesystem.deny_read)
        if (e.value == "/home/u/.ssh") CHECK(e.source.layer == LayerKind::project);
    CHECK(values(p.network.denied_domains) == std::vector<std::string>{"b.example", "a.example"});
    CHECK(values(p.network.allowed_domains) == std::vector<std::string>{"github.com"});
}

TEST_CASE("policy: Edit, Read and WebFetch permission rules add their paths and hosts") {
    auto p = merged(Layers{}
                        .add(LayerKind::user, R"J({"permissions": {"deny": ["Read(~/.ssh/**)"]}})J")
                        .add(LayerKind::project, R"J({"permissions": {
                            "allow": ["Edit(build/**)", "WebFetch(domain:docs.example.com)"],
                            "deny": ["Edit(.claude/**)", "WebFetch(domain:evil.example)"]}})J"));
    CHECK(contains(p.filesystem.deny_read, "/home/u/.ssh/**"));
    CHECK(contains(p.filesystem.allow_write, "/r/build/**"));
    CHECK(contains(p.filesystem.deny_write, "/r/.claude/**"));
    CHECK(contains(p.network.allowed_domains, "docs.example.com"));
    CHECK(contains(p.network.denied_domains, "evil.example"));
}

TEST_CASE("policy: allowManagedDomainsOnly keeps only the managed allowedDomains") {
    auto p = merged(Layers{}
                        .add(LayerKind::managed, R"J({"sandbox": {"network": {"allowManagedDomainsOnly": true,
                                                       "allowedDomains": ["corp.example"]}}})J")
                        .add(LayerKind::user, R"J({"sandbox": {"network": {"allowedDomains": ["mine.example"],
                                                    "deniedDomains": ["bad.example"]}}})J")
                        .add(LayerKind::project, R"J({"permissions": {"allow": ["WebFetch(domain:repo.example)"]}})J"));
    CHECK(p.network.managed_domains_only.value);
    CHECK(values(p.network.allowed_domains) == std::vector<std::string>{"corp.example"});
    CHECK(warned(p, LayerKind::user, "sandbox.network.allowedDomains[0]", "allowManagedDomainsOnly"));
    CHECK(warned(p, LayerKind::project, "permissions.allow[0]", "left out"));
    // Denies still combine.
    CHECK(values(p.network.denied_domains) == std::vector<std::string>{"bad.example"});
}

TEST_CASE("policy: the managed-only switches count from managed settings only") {
    auto p = merged(Layers{}.add(LayerKind::user, R"J({"sandbox": {
        "network": {"allowManagedDomainsOnly": true}, "filesystem": {"allowManagedReadPathsOnly": true},
        "bwrapPath": "/home/u/bin/bwrap", "socatPath": "/home/u/bin/socat"}})J"));
    CHECK_FALSE(p.network.managed_domains_only.value);
    CHECK_FALSE(p.filesystem.managed_read_paths_only.value);
    CHECK_FALSE(p.admin_required.value);
    CHECK_FALSE(p.bwrap_path);
    CHECK_FALSE(p.socat_path);
    CHECK(warned(p, LayerKind::user, "sandbox.network.allowManagedDomainsOnly", "managed settings"));
    CHECK(warned(p, LayerKind::user, "sandbox.filesystem.allowManagedReadPathsOnly", "managed settings"));
    CHECK(warned(p, LayerKind::user, "sandbox.bwrapPath", "managed settings"));
    CHECK(warned(p, LayerKind::user, "sandbox.socatPath", "managed settings"));

    auto q = merged(Layers{}
                        .add(LayerKind::managed, R"J({"sandbox": {"bwrapPath": "/opt/bwrap/bin/bwrap"}})J")
                        .add(LayerKind::project, R"J({"sandbox": {"bwrapPath": "/r/evil-bwrap"}})J"));
    REQUIRE(q.bwrap_path);
    CHECK(q.bwrap_path->value == "/opt/bwrap/bin/bwrap");
    CHECK(q.bwrap_path->source.layer == LayerKind::managed);
    CHECK(warned(q, LayerKind::project, "sandbox.bwrapPath", "managed"));
}

TEST_CASE("policy: allowManagedReadPathsOnly keeps only the managed allowRead") {
    auto p = merged(Layers{}
                        .add(LayerKind::managed, R"J({"sandbox": {"filesystem": {"allowManagedReadPathsOnly": true,
                                                       "denyRead": ["/home"], "allowRead": ["/home/u/work"]}}})J")
                        .add(LayerKind::user, R"J({"sandbox": {"filesystem": {"allowRead": ["~/notes"]}}})J"));
    CHECK(values(p.filesystem.allow_read) == std::vector<std::string>{"/home/u/work"});
    CHECK(warned(p, LayerKind::user, "sandbox.filesystem.allowRead[0]", "allowManagedReadPathsOnly"));
}

TEST_CASE("policy: admin-required mode, and what a repository file then cannot loosen") {
    constexpr auto repo = R"J({
      "sandbox": {
        "enabled": false, "failIfUnavailable": false,
        "excludedCommands": ["docker *"], "ignoreViolations": {"*": ["x"]},
        "filesystem": {"allowWrite": ["/opt/out"], "denyWrite": ["/r/keep"]},
        "network": {"allowedDomains": ["repo.example"], "allowUnixSockets": ["/run/docker.sock"],
                    "allowLocalBinding": true, "allowAllUnixSockets": true, "deniedDomains": ["d.example"]}
      },
      "permissions": {"allow": ["Edit(/opt/edit)"], "additionalDirectories": ["/opt/extra"]}
    })J";
    for (auto mode : {kManagedAdmin, R"J({"sandbox": {"network": {"allowManagedDomainsOnly": true}}})J"}) {
        for (auto k : {LayerKind::project, LayerKind::local}) {
            CAPTURE(mode);
            CAPTURE(sbx::layer_name(k));
            auto p = merged(Layers{}
                                .add(LayerKind::managed, mode)
                                .add(LayerKind::user, R"J({"sandbox": {"enabled": true}})J")
                                .add(k, repo));
            CHECK(p.admin_required.value);
            REQUIRE(p.admin_required.source);
            CHECK(p.admin_required.source->layer == LayerKind::managed);
            CHECK(p.enabled.value);  // the repository's false does not beat the user's true
            CHECK(warned(p, k, "sandbox.enabled", "cannot loosen"));
            CHECK(p.fail_if_unavailable.value);
            CHECK(warned(p, k, "sandbox.failIfUnavailable", "cannot loosen"));
            CHECK(p.excluded_commands.empty());
            CHECK(warned(p, k, "sandbox.excludedCommands[0]", "cannot loosen"));
            CHECK(p.ignore_violations.empty());
            CHECK(warned(p, k, "sandbox.ignoreViolations.*", "cannot loosen"));
            CHECK(p.filesystem.allow_write.empty());
            CHECK(warned(p, k, "sandbox.filesystem.allowWrite[0]", "cannot loosen"));
            CHECK(warned(p, k, "permissions.allow[0]", "cannot loosen"));
            CHECK(p.additional_directories.empty());
            CHECK(warned(p, k, "permissions.additionalDirectories[0]", "cannot loosen"));
            CHECK(p.network.allowed_domains.empty());
            CHECK(p.network.allow_unix_sockets.empty());
            CHECK_FALSE(p.network.allow_local_binding.value);
            CHECK(warned(p, k, "sandbox.network.allowLocalBinding", "cannot loosen"));
            CHECK_FALSE(p.network.allow_all_unix_sockets.value);
            // What tightens still counts.
            CHECK(contains(p.filesystem.deny_write, "/r/keep"));
            CHECK(contains(p.network.denied_domains, "d.example"));
        }
    }
}

TEST_CASE("policy: in admin-required mode a repository `false` of enabled stands when the user set nothing") {
    auto p = merged(Layers{}
                        .add(LayerKind::managed, kManagedAdmin)
                        .add(LayerKind::project, R"J({"sandbox": {"enabled": false}})J"));
    CHECK_FALSE(p.enabled.value);
    REQUIRE(p.enabled.source);
    CHECK(p.enabled.source->layer == LayerKind::project);
}

TEST_CASE("policy: admin-required mode leaves the user's own settings alone") {
    auto p = merged(Layers{}
                        .add(LayerKind::managed, kManagedAdmin)
                        .add(LayerKind::user, R"J({"sandbox": {"filesystem": {"allowWrite": ["~/.kube"]},
                                                    "network": {"allowedDomains": ["github.com"]},
                                                    "failIfUnavailable": false}})J"));
    CHECK(contains(p.filesystem.allow_write, "/home/u/.kube"));
    CHECK(contains(p.network.allowed_domains, "github.com"));
    CHECK_FALSE(p.fail_if_unavailable.value);
}

TEST_CASE("policy: without admin-required mode a trusted repository may loosen") {
    auto p = merged(Layers{}
                        .add(LayerKind::managed, R"J({"sandbox": {"allowUnsandboxedCommands": true}})J")
                        .add(LayerKind::project, R"J({"sandbox": {"failIfUnavailable": false,
                            "filesystem": {"allowWrite": ["/opt/out"]}, "network": {"allowedDomains": ["r.example"],
                            "allowLocalBinding": true}}})J"));
    CHECK_FALSE(p.admin_required.value);
    CHECK_FALSE(p.fail_if_unavailable.value);
    CHECK(contains(p.filesystem.allow_write, "/opt/out"));
    CHECK(contains(p.network.allowed_domains, "r.example"));
    CHECK(p.network.allow_local_binding.value);
}

TEST_CASE("policy: strictAllowlist counts from user and managed settings only") {
    auto p = merged(Layers{}.add(LayerKind::project, R"J({"sandbox": {"network": {"strictAllowlist": true}}})J"));
    CHECK_FALSE(p.network.strict_allowlist.value);
    CHECK(warned(p, LayerKind::project, "sandbox.network.strictAllowlist", "user and managed"));
    // A repository `false` cannot switch off the user's `true` either.
    auto q = merged(Layers{}
                        .add(LayerKind::user, R"J({"sandbox": {"network": {"strictAllowlist": true}}})J")
                        .add(LayerKind::local, R"J({"sandbox": {"network": {"strictAllowlist": false}}})J"));
    CHECK(q.network.strict_allowlist.value);
    CHECK(q.network.strict_allowlist.source->layer == LayerKind::user);
    auto m = merged(Layers{}.add(LayerKind::managed, R"J({"sandbox": {"network": {"strictAllowlist": true}}})J"));
    CHECK(m.network.strict_allowlist.value);
}

TEST_CASE("policy: filesystem.disabled counts from user and managed settings, from managed alone once they configure the filesystem") {
    auto repo = merged(Layers{}.add(LayerKind::project, R"J({"sandbox": {"filesystem": {"disabled": true}}})J"));
    CHECK_FALSE(repo.filesystem.disabled.value);
    CHECK(warned(repo, LayerKind::project, "sandbox.filesystem.disabled", "user and managed"));

    auto user = merged(Layers{}.add(LayerKind::user, R"J({"sandbox": {"filesystem": {"disabled": true}}})J"));
    CHECK(user.filesystem.disabled.value);

    // Managed settings that touch the filesystem without disabling it: the user's true no longer counts.
    auto locked = merged(Layers{}
                             .add(LayerKind::managed, R"J({"sandbox": {"filesystem": {"denyRead": ["/srv/secret"]}}})J")
                             .add(LayerKind::user, R"J({"sandbox": {"filesystem": {"disabled": true}}})J"));
    CHECK_FALSE(locked.filesystem.disabled.value);
    CHECK(warned(locked, LayerKind::user, "sandbox.filesystem.disabled", "managed settings configure the filesystem"));

    // Managed settings that do not configure the filesystem leave the user's choice.
    auto open = merged(Layers{}
                           .add(LayerKind::managed, R"J({"sandbox": {"network": {"deniedDomains": ["x.example"]}}})J")
                           .add(LayerKind::user, R"J({"sandbox": {"filesystem": {"disabled": true}}})J"));
    CHECK(open.filesystem.disabled.value);

    auto managed = merged(Layers{}.add(LayerKind::managed, R"J({"sandbox": {"filesystem": {"disabled": true}}})J"));
    CHECK(managed.filesystem.disabled.value);
}

TEST_CASE("policy: a user or managed `false` of allowUnsandboxedCommands holds against a repository's `true`") {
    for (auto k : {LayerKind::user, LayerKind::managed, LayerKind::flag}) {
        CAPTURE(sbx::layer_name(k));
        auto p = merged(Layers{}
                            .add(k, R"J({"sandbox": {"allowUnsandboxedCommands": false}})J")
                            .add(LayerKind::local, R"J({"sandbox": {"allowUnsandboxedCommands": true}})J"));
        CHECK_FALSE(p.allow_unsandboxed.value);
        CHECK(p.allow_unsandboxed.source->layer == k);
    }
    auto p = merged(Layers{}.add(LayerKind::project, R"J({"sandbox": {"allowUnsandboxedCommands": true}})J"));
    CHECK(p.allow_unsandboxed.value);
}

TEST_CASE("policy: repository reads and writes at or under a path the user denies reading are left out") {
    sbx::MemoryFs fs;
    fs.dir("/home/u/.ssh").file("/home/u/.ssh/id_ed25519").dir("/r/src").dir("/home/u/.aws");
    fs.symlink("/r/keys", "/home/u/.ssh");           // a link in the repository into a denied directory
    fs.symlink("/r/aws-link", "../home/u/.aws");     // relative link
    fs.symlink("/r/cfg", "/home/u/.config/secret");  // leads to a path that does not exist yet
    auto p = merged(Layers{}
                        .add(LayerKind::user, R"J({"sandbox": {"filesystem": {"denyRead": ["~/.ssh", "~/.config"]},
                                                    "credentials": {"files": ["~/.aws"]}}})J")
                        .add(LayerKind::project, R"J({
                            "sandbox": {"filesystem": {
                                "allowRead": ["~/.ssh", "~/.ssh/id_ed25519", "keys", "src", "aws-link/credentials"],
                                "allowWrite": ["keys/x", "cfg", "/tmp/out"]}},
                            "permissions": {"additionalDirectories": ["keys"], "allow": ["Edit(~/.config/**)"]}})J"),
                    true, &fs);
    CHECK(values(p.filesystem.allow_read) == std::vector<std::string>{"/r/src"});
    CHECK(values(p.filesystem.allow_write) == std::vector<std::string>{"/tmp/out"});
    CHECK(p.additional_directories.empty());
    CHECK(warned(p, LayerKind::project, "sandbox.filesystem.allowRead[0]", "user settings deny reading"));
    CHECK(warned(p, LayerKind::project, "sandbox.filesystem.allowRead[2]", "it leads to /home/u/.ssh"));
    CHECK(warned(p, LayerKind::project, "sandbox.filesystem.allowRead[4]", "/home/u/.aws"));
    CHECK(warned(p, LayerKind::project, "sandbox.filesystem.allowWrite[1]", "/home/u/.config"));
    CHECK(warned(p, LayerKind::project, "permissions.additionalDirectories[0]", "deny reading"));
    CHECK(warned(p, LayerKind::project, "permissions.allow[0]", "deny reading"));
}

TEST_CASE("policy: the denied-reach rule follows a symlinked deny and glob denies") {
    sbx::MemoryFs fs;
    fs.dir("/data/vault").symlink("/home/u/vault", "/data/vault").dir("/home/u/proj");
    auto p = merged(Layers{}
                        .add(LayerKind::managed, R"J({"sandbox": {"filesystem": {"denyRead": ["~/vault", "~/**/.env",
                                                       "~/.ssh"]}}})J")
                        .add(LayerKind::local, R"J({"sandbox": {"filesystem": {
                            "allowRead": ["/data/vault/db", "~/proj/.env", "~/proj", "~/proj/*", "~/*/id_rsa"]}}})J"),
                    true, &fs);
    // /data/vault is where the denied link leads; ~/proj/.env matches the glob. ~/proj/* stays: a glob
    // against a glob deny is settled path by path, where a tie goes to the deny.
    CHECK(values(p.filesystem.allow_read) == std::vector<std::string>{"/home/u/proj", "/home/u/proj/*"});
    CHECK(warned(p, LayerKind::local, "sandbox.filesystem.allowRead[0]", "managed settings deny reading"));
    CHECK(warned(p, LayerKind::local, "sandbox.filesystem.allowRead[1]", "~/**/.env") == false);
    CHECK(warned(p, LayerKind::local, "sandbox.filesystem.allowRead[1]", "/home/u/**/.env"));
    // A pattern that can name a path inside a plain deny reaches into it.
    CHECK(warned(p, LayerKind::local, "sandbox.filesystem.allowRead[4]", "managed settings deny reading"));
}

TEST_CASE("policy: the denied-reach rule does not touch the user's or managed settings' own entries") {
    auto p = merged(Layers{}.add(LayerKind::user, R"J({"sandbox": {"filesystem": {
                                    "denyRead": ["~/"], "allowRead": ["~/projects"]}}})J"));
    CHECK(values(p.filesystem.allow_read) == std::vector<std::string>{"/home/u/projects"});
    // A repository's own deny does not leave out its own allow (narrower wins, decided later).
    auto q = merged(Layers{}.add(LayerKind::project, R"J({"sandbox": {"filesystem": {
                                    "denyRead": ["~/"], "allowRead": ["~/projects"]}}})J"));
    CHECK(values(q.filesystem.allow_read) == std::vector<std::string>{"/home/u/projects"});
}

TEST_CASE("policy: an entry whose symlinks cannot be resolved is left out") {
    sbx::MemoryFs fs;
    fs.symlink("/r/loop", "/r/loop2").symlink("/r/loop2", "/r/loop");
    auto p = merged(Layers{}
                        .add(LayerKind::user, R"J({"sandbox": {"filesystem": {"denyRead": ["~/.ssh"]}}})J")
                        .add(LayerKind::project, R"J({"sandbox": {"filesystem": {"allowRead": ["loop/x"]}}})J"),
                    true, &fs);
    CHECK(p.filesystem.allow_read.empty());
    CHECK(warned(p, LayerKind::project, "sandbox.filesystem.allowRead[0]", "could not be resolved"));
}

TEST_CASE("policy: an untrusted project keeps only what tightens") {
    constexpr auto loose = R"J({
      "sandbox": {
        "enabled": false, "failIfUnavailable": false, "allowUnsandboxedCommands": true,
        "autoAllowBashIfSandboxed": true, "excludedCommands": ["make"], "ignoreViolations": {"*": ["x"]},
        "filesystem": {"allowWrite": ["/opt"], "allowRead": ["~/.ssh"], "denyRead": ["/r/private"],
                       "denyWrite": ["/r/ro"]},
        "network": {"allowedDomains": ["r.example"], "deniedDomains": ["d.example"],
                    "allowUnixSockets": ["/run/x.sock"], "allowLocalBinding": true, "allowAllUnixSockets": true},
        "credentials": {"envVars": ["SECRET_X"], "files": ["/r/key.pem"]}
      },
      "permissions": {"additionalDirectories": ["/opt/extra"], "deny": ["Read(/secret)"]}
    })J";
    auto p = merged(Layers{}
                        .add(LayerKind::user, R"J({"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": false}})J")
                        .add(LayerKind::project, loose),
                    false);
    CHECK_FALSE(p.trusted);
    CHECK(p.enabled.value);
    CHECK(p.fail_if_unavailable.value);
    CHECK_FALSE(p.allow_unsandboxed.value);
    CHECK_FALSE(p.auto_allow.value);
    CHECK(p.excluded_commands.empty());
    CHECK(p.ignore_violations.empty());
    CHECK(p.filesystem.allow_write.empty());
    CHECK(p.filesystem.allow_read.empty());
    CHECK(p.network.allowed_domains.empty());
    CHECK(p.network.allow_unix_sockets.empty());
    CHECK_FALSE(p.network.allow_local_binding.value);
    CHECK_FALSE(p.network.allow_all_unix_sockets.value);
    CHECK(p.additional_directories.empty());
    CHECK(warned(p, LayerKind::project, "sandbox.filesystem.allowWrite[0]", "not trusted"));
    CHECK(warned(p, LayerKind::project, "sandbox.enabled", "not trusted"));
    // Tightening survives.
    CHECK(contains(p.filesystem.deny_read, "/r/private"));
    CHECK(contains(p.filesystem.deny_read, "/r/secret"));
    CHECK(contains(p.filesystem.deny_write, "/r/ro"));
    CHECK(contains(p.network.denied_domains, "d.example"));
    CHECK(contains(p.credentials.env_vars, "SECRET_X"));
    CHECK(contains(p.credentials.files, "/r/key.pem"));

    // An untrusted project may still switch the sandbox on and tighten booleans.
    auto q = merged(Layers{}
                        .add(LayerKind::user, R"J({"sandbox": {"network": {"allowLocalBinding": true}}})J")
                        .add(LayerKind::local, R"J({"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": false,
                            "network": {"allowLocalBinding": false}}})J"),
                    false);
    CHECK(q.enabled.value);
    CHECK_FALSE(q.auto_allow.value);
    CHECK_FALSE(q.network.allow_local_binding.value);
    // Trust touches only the repository's files: the user's own loosening stands.
    auto r = merged(Layers{}.add(LayerKind::user, R"J({"sandbox": {"filesystem": {"allowWrite": ["/opt"]}}})J"), false);
    CHECK(contains(r.filesystem.allow_write, "/opt"));
}

TEST_CASE("policy: the flag layer sits between the repository and managed settings") {
    auto p = merged(Layers{}
                        .add(LayerKind::local, R"J({"sandbox": {"enabled": false}})J")
                        .add(LayerKind::flag, R"J({"sandbox": {"enabled": true, "network": {"strictAllowlist": true}}})J"));
    CHECK(p.enabled.value);
    CHECK(p.enabled.source->layer == LayerKind::flag);
    CHECK(p.network.strict_allowlist.value);  // like the user's own file
}

TEST_CASE("policy: file warnings come through, each naming its file and key") {
    auto p = merged(Layers{}
                        .add(LayerKind::user, R"J({"sandbox": {"ripgrep": {}}})J")
                        .add(LayerKind::project, R"J({"sandbox": {"enabeld": true}})J"));
    CHECK(warned(p, LayerKind::user, "sandbox.ripgrep", "not supported"));
    CHECK(warned(p, LayerKind::project, "sandbox.enabeld", "did you mean 'enabled'"));
    for (const auto& w : p.warnings) {
        CHECK_FALSE(w.file.empty());
        CHECK_FALSE(w.key.empty());
    }
}

TEST_CASE("policy: two files for one layer are refused") {
    Layers l;
    l.add(LayerKind::user, "{}").add(LayerKind::user, "{}");
    sbx::MemoryFs fs;
    auto p = sbx::merge(l.list, {}, fs);
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error().code == sbx::Errc::invalid_argument);
}

TEST_CASE("policy: to_json names every value's source and is valid JSON") {
    auto p = merged(Layers{}
                        .add(LayerKind::project, R"J({"sandbox": {"enabled": true, "filesystem": {"denyRead": ["a\"b"]},
                                                       "ripgrep": 1}})J"));
    auto text = sbx::to_json(p);
    auto doc = sbx::json::parse(text);
    REQUIRE(doc.has_value());
    auto root = (*doc)->root();
    CHECK(bool(root["enabled"]["value"].get_bool().value()));
    CHECK(std::string_view(root["enabled"]["source"]["layer"].get_string().value()) == "project");
    CHECK(std::string_view(root["enabled"]["source"]["key"].get_string().value()) == "sandbox.enabled");
    CHECK(root["autoAllow"]["source"].is_null());
    CHECK(std::string_view(root["filesystem"]["denyRead"].at(0)["value"].get_string().value()) == "/r/a\"b");
    CHECK(std::string_view(root["warnings"].at(0)["key"].get_string().value()) == "sandbox.ripgrep");
}

TEST_CASE("policy: several flag files rank by their order, a later one above an earlier one") {
    sbx::SettingsSource first{LayerKind::flag, "/opt/first.json", {"/home/u", "/opt"}, "/r"};
    sbx::SettingsSource second{LayerKind::flag, "/opt/second.json", {"/home/u", "/opt"}, "/r"};
    std::vector<sbx::Settings> layers;
    layers.push_back(*sbx::parse_settings(R"J({"sandbox": {"enabled": false, "excludedCommands": ["a"]}})J", first));
    layers.push_back(*sbx::parse_settings(R"J({"sandbox": {"enabled": true, "excludedCommands": ["b"]}})J", second));
    sbx::MemoryFs fs;
    auto p = sbx::merge(layers, {}, fs);
    REQUIRE(p.has_value());
    CHECK(p->enabled.value);
    CHECK(p->enabled.source->file == "/opt/second.json");
    CHECK(values(p->excluded_commands) == std::vector<std::string>{"b", "a"});
}

TEST_CASE("merge: toolCache is on by default; any layer turns it off; a repository cannot turn it back on") {
    CHECK(merged(Layers{}.add(LayerKind::user, "{}")).tool_cache.value);
    for (auto k : {LayerKind::user, LayerKind::project, LayerKind::local, LayerKind::flag, LayerKind::managed}) {
        CAPTURE(sbx::layer_name(k));
        const auto p = merged(Layers{}.add(k, R"({"sandbox": {"toolCache": false}})"));
        CHECK_FALSE(p.tool_cache.value);
        REQUIRE(p.tool_cache.source.has_value());
        CHECK(p.tool_cache.source->key == "sandbox.toolCache");
    }
    // The user's false holds against the repository's true, which is left out with a warning.
    const auto held = merged(Layers{}
                                 .add(LayerKind::user, R"({"sandbox": {"toolCache": false}})")
                                 .add(LayerKind::project, R"({"sandbox": {"toolCache": true}})"));
    CHECK_FALSE(held.tool_cache.value);
    CHECK(std::any_of(held.warnings.begin(), held.warnings.end(), [](const sbx::Warning& w) {
        return w.key == "sandbox.toolCache" && w.message.find("holds against a repository's `true`") != std::string::npos;
    }));
    // A flag file, chosen by the person who runs sbx, may turn it back on over the user's.
    CHECK(merged(Layers{}
                     .add(LayerKind::user, R"({"sandbox": {"toolCache": false}})")
                     .add(LayerKind::flag, R"({"sandbox": {"toolCache": true}})"))
              .tool_cache.value);
    // The repository's own false counts, trusted or not.
    CHECK_FALSE(merged(Layers{}.add(LayerKind::project, R"({"sandbox": {"toolCache": false}})"), false).tool_cache.value);
}

TEST_CASE("merge: quiet is off by default and comes from the highest layer that says, with its source") {
    CHECK_FALSE(merged(Layers{}.add(LayerKind::user, "{}")).quiet.value);
    const auto p = merged(Layers{}
                              .add(LayerKind::user, R"({"sandbox": {"quiet": true}})")
                              .add(LayerKind::local, R"({"sandbox": {"quiet": false}})"));
    CHECK_FALSE(p.quiet.value);
    REQUIRE(p.quiet.source.has_value());
    CHECK(p.quiet.source->key == "sandbox.quiet");
    CHECK(p.quiet.source->layer == LayerKind::local);
    CHECK(merged(Layers{}.add(LayerKind::user, R"({"sandbox": {"quiet": true}})")).quiet.value);
}

namespace {

constexpr auto kWeakerOn = R"J({"sandbox": {"enableWeakerNestedSandbox": true}})J";
constexpr auto kWeakerOff = R"J({"sandbox": {"enableWeakerNestedSandbox": false}})J";
constexpr std::string_view kWeakerKey = "sandbox.enableWeakerNestedSandbox";
constexpr std::string_view kWeakerRefused =
    "only user, managed or --settings settings, or sbx run --weaker-sandbox, can turn on the weaker sandbox; left out";

sbx::Policy merged_with(const Layers& l, const sbx::MergeOptions& options) {
    sbx::MemoryFs empty;
    auto p = sbx::merge(l.list, options, empty);
    REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : sbx::to_string(p.error())));
    return *p;
}

bool is_command_line(const std::optional<sbx::Source>& s) {
    return s && s->layer == LayerKind::flag && s->file == "(command line)" && s->key == "--weaker-sandbox";
}

}  // namespace

TEST_CASE("merge: the weaker sandbox is off by default, and a user, --settings or managed `true` turns it on") {
    const auto none = merged(Layers{}.add(LayerKind::user, "{}"));
    CHECK_FALSE(none.weaker_sandbox.value);
    CHECK_FALSE(none.weaker_sandbox.source);
    for (auto k : {LayerKind::user, LayerKind::flag, LayerKind::managed}) {
        CAPTURE(sbx::layer_name(k));
        const auto p = merged(Layers{}.add(k, kWeakerOn));
        CHECK(p.weaker_sandbox.value);
        REQUIRE(p.weaker_sandbox.source);
        CHECK(p.weaker_sandbox.source->layer == k);
        CHECK(p.weaker_sandbox.source->file == source_for(k).file);
        CHECK(p.weaker_sandbox.source->key == kWeakerKey);
        CHECK(p.warnings.empty());
    }
}

TEST_CASE("merge: a project's, a local file's or an agent file's `true` of the weaker sandbox is left out, with a warning") {
    for (auto k : {LayerKind::project, LayerKind::local}) {
        CAPTURE(sbx::layer_name(k));
        for (bool trusted : {true, false}) {
            const auto p = merged(Layers{}.add(k, kWeakerOn), trusted);
            CHECK_FALSE(p.weaker_sandbox.value);
            CHECK_FALSE(p.weaker_sandbox.source);
            CHECK(warned(p, k, kWeakerKey, kWeakerRefused));
        }
        // Beneath it, the user's own `true` still counts.
        const auto user = merged(Layers{}.add(LayerKind::user, kWeakerOn).add(k, kWeakerOn));
        CHECK(user.weaker_sandbox.value);
        CHECK(user.weaker_sandbox.source->layer == LayerKind::user);
        CHECK(warned(user, k, kWeakerKey, kWeakerRefused));
    }
    // An agent file is a flag layer, but it may come with the project: its `true`
    // is left out as a repository's is. (Its own schema has no key for it; this
    // is the merge's guard should a layer of one ever hold it.)
    Layers agent;
    agent.add(LayerKind::flag, kWeakerOn);
    agent.list.back().from = sbx::LayerFile::agent;
    const auto p = merged(agent);
    CHECK_FALSE(p.weaker_sandbox.value);
    CHECK(warned(p, LayerKind::flag, kWeakerKey, kWeakerRefused));
    // A --settings file beside it may.
    sbx::SettingsSource extra{LayerKind::flag, "/opt/weaker.json", {"/home/u", "/opt"}, "/r"};
    agent.list.push_back(*sbx::parse_settings(kWeakerOn, extra));
    const auto q = merged(agent);
    CHECK(q.weaker_sandbox.value);
    CHECK(q.weaker_sandbox.source->file == "/opt/weaker.json");
}

TEST_CASE("merge: a `false` of the weaker sandbox counts from any layer; a managed `false` holds against all") {
    for (auto k : {LayerKind::project, LayerKind::local, LayerKind::flag, LayerKind::managed}) {
        CAPTURE(sbx::layer_name(k));
        const auto p = merged(Layers{}.add(LayerKind::user, kWeakerOn).add(k, kWeakerOff));
        CHECK_FALSE(p.weaker_sandbox.value);
        REQUIRE(p.weaker_sandbox.source);
        CHECK(p.weaker_sandbox.source->layer == k);
        CHECK(p.warnings.empty());
    }
    const auto managed = merged(Layers{}
                                    .add(LayerKind::user, kWeakerOn)
                                    .add(LayerKind::flag, kWeakerOn)
                                    .add(LayerKind::managed, kWeakerOff));
    CHECK_FALSE(managed.weaker_sandbox.value);
    CHECK(managed.weaker_sandbox.source->layer == LayerKind::managed);
}

TEST_CASE("merge: --weaker-sandbox turns it on from the command line, over every file but a managed `false`") {
    const sbx::MergeOptions asked{true, true};
    const auto bare = merged_with(Layers{}.add(LayerKind::user, "{}"), asked);
    CHECK(bare.weaker_sandbox.value);
    CHECK(is_command_line(bare.weaker_sandbox.source));
    // Over a user's, a repository's or a --settings file's `false`.
    for (auto k : {LayerKind::user, LayerKind::project, LayerKind::local, LayerKind::flag}) {
        CAPTURE(sbx::layer_name(k));
        const auto p = merged_with(Layers{}.add(k, kWeakerOff), asked);
        CHECK(p.weaker_sandbox.value);
        CHECK(is_command_line(p.weaker_sandbox.source));
    }
    // A repository's `true` is still left out with its warning; the command line counts.
    const auto project = merged_with(Layers{}.add(LayerKind::project, kWeakerOn), asked);
    CHECK(project.weaker_sandbox.value);
    CHECK(is_command_line(project.weaker_sandbox.source));
    CHECK(warned(project, LayerKind::project, kWeakerKey, kWeakerRefused));
    // Untrusted: the same.
    CHECK(merged_with(Layers{}.add(LayerKind::project, "{}"), sbx::MergeOptions{false, true}).weaker_sandbox.value);
    // Managed settings' `false` holds, and a warning says so, naming their file and key.
    const auto held = merged_with(Layers{}.add(LayerKind::managed, kWeakerOff), asked);
    CHECK_FALSE(held.weaker_sandbox.value);
    CHECK(held.weaker_sandbox.source->layer == LayerKind::managed);
    CHECK(std::any_of(held.warnings.begin(), held.warnings.end(), [](const sbx::Warning& w) {
        return w.file == "(command line)" && w.key == "--weaker-sandbox" &&
               w.message.find("managed settings keep the weaker sandbox off (sandbox.enableWeakerNestedSandbox in "
                              "/etc/claude-code/managed-settings.json)") != std::string::npos;
    }));
    // A managed `true` is on already; the command line changes nothing but the source.
    CHECK(merged_with(Layers{}.add(LayerKind::managed, kWeakerOn), asked).weaker_sandbox.value);
}

TEST_CASE("policy: to_json writes weakerSandbox with its source") {
    auto p = merged(Layers{}.add(LayerKind::user, kWeakerOn));
    auto doc = sbx::json::parse(sbx::to_json(p));
    REQUIRE(doc.has_value());
    auto root = (*doc)->root();
    CHECK(bool(root["weakerSandbox"]["value"].get_bool().value()));
    CHECK(std::string_view(root["weakerSandbox"]["source"]["layer"].get_string().value()) == "user");
    CHECK(std::string_view(root["weakerSandbox"]["source"]["key"].get_string().value()) == kWeakerKey);
    auto off = sbx::json::parse(sbx::to_json(merged(Layers{})));
    REQUIRE(off.has_value());
    CHECK_FALSE(bool((*off)->root()["weakerSandbox"]["value"].get_bool().value()));
    CHECK((*off)->root()["weakerSandbox"]["source"].is_null());
}

TEST_CASE("merge: Bash rules combine across layers; an untrusted project keeps its deny and ask rules only") {
    Layers l;
    l.add(LayerKind::user, R"J({"permissions": {"allow": ["Bash(npm test)"], "deny": ["Bash(curl:*)"]}})J")
        .add(LayerKind::project,
             R"J({"permissions": {"allow": ["Bash(make *)"], "deny": ["Bash(wget:*)"], "ask": ["Bash(git push *)"]}})J");
    auto trusted = merged(l);
    CHECK(values(trusted.permissions.allow) == std::vector<std::string>{"Bash(make *)", "Bash(npm test)"});
    CHECK(values(trusted.permissions.deny) == std::vector<std::string>{"Bash(wget:*)", "Bash(curl:*)"});
    CHECK(trusted.permissions.ask.at(0).source.layer == LayerKind::project);
    auto untrusted = merged(l, false);
    CHECK(values(untrusted.permissions.allow) == std::vector<std::string>{"Bash(npm test)"});
    CHECK(values(untrusted.permissions.deny).size() == 2);
    CHECK(values(untrusted.permissions.ask) == std::vector<std::string>{"Bash(git push *)"});
    CHECK(warned(untrusted, LayerKind::project, "permissions.allow[0]", "not trusted"));
}

TEST_CASE("merge: defaultMode from the highest layer; a repository cannot choose bypassPermissions") {
    auto p = merged(Layers{}
                        .add(LayerKind::user, R"J({"permissions": {"defaultMode": "acceptEdits"}})J")
                        .add(LayerKind::project, R"J({"permissions": {"defaultMode": "plan"}})J"));
    REQUIRE(p.permissions.default_mode);
    CHECK(p.permissions.default_mode->value == "plan");
    auto q = merged(Layers{}
                        .add(LayerKind::user, R"J({"permissions": {"defaultMode": "acceptEdits"}})J")
                        .add(LayerKind::local, R"J({"permissions": {"defaultMode": "bypassPermissions"}})J"));
    REQUIRE(q.permissions.default_mode);
    CHECK(q.permissions.default_mode->value == "acceptEdits");
    CHECK(warned(q, LayerKind::local, "permissions.defaultMode", "only user, flag or managed settings"));
    auto u = merged(Layers{}.add(LayerKind::project, R"J({"permissions": {"defaultMode": "acceptEdits"}})J"), false);
    CHECK_FALSE(u.permissions.default_mode);
    auto v = merged(Layers{}.add(LayerKind::project, R"J({"permissions": {"defaultMode": "dontAsk"}})J"), false);
    REQUIRE(v.permissions.default_mode);
    CHECK(v.permissions.default_mode->value == "dontAsk");
    auto m = merged(Layers{}.add(LayerKind::user, R"J({"permissions": {"defaultMode": "bypassPermissions"}})J"));
    CHECK(m.permissions.default_mode->value == "bypassPermissions");
}

TEST_CASE("merge: disableBypassPermissionsMode of any layer holds") {
    auto p = merged(Layers{}
                        .add(LayerKind::user, R"J({"permissions": {"defaultMode": "bypassPermissions"}})J")
                        .add(LayerKind::project, R"J({"permissions": {"disableBypassPermissionsMode": "disable"}})J"),
                    false);
    CHECK(p.permissions.bypass_disabled.value);
    REQUIRE(p.permissions.bypass_disabled.source);
    CHECK(p.permissions.bypass_disabled.source->layer == LayerKind::project);
}

TEST_CASE("merge: a read-only root (a strict agent file's) holds under any layer, and names its source") {
    Layers l;
    l.add(LayerKind::user, "{}").add(LayerKind::managed, R"({"sandbox": {"enabled": true}})");
    CHECK_FALSE(merged(l).filesystem.root_read_only.value);
    sbx::Settings agent;
    agent.layer = LayerKind::flag;
    agent.file = "/w/AGENT.md";
    agent.filesystem.root_read_only = sbx::Sourced<bool>{true, {LayerKind::flag, sbx::FileName("/w/AGENT.md"), "sandbox.preset"}};
    l.list.insert(l.list.begin() + 1, agent);
    const auto p = merged(l);
    CHECK(p.filesystem.root_read_only.value);
    REQUIRE(p.filesystem.root_read_only.source);
    CHECK(p.filesystem.root_read_only.source->key == "sandbox.preset");
}

namespace {

using sbx::Limit;

const sbx::Value<std::optional<std::uint64_t>>& limit_of(const sbx::Policy& p, Limit l) {
    return p.limits[static_cast<std::size_t>(l)];
}

std::string limits_json(std::string_view members) {
    return std::string(R"J({"sandbox": {"limits": {)J") + std::string(members) + "}}}";
}

}  // namespace

TEST_CASE("limits: sbx's defaults where no layer sets one: 4096 processes, nothing else") {
    const auto p = merged(Layers{}.add(LayerKind::user, "{}"));
    for (const auto& spec : sbx::kLimits) {
        CAPTURE(spec.key);
        CHECK(limit_of(p, spec.which).value == spec.fallback);
        CHECK_FALSE(limit_of(p, spec.which).source);
    }
    CHECK(limit_of(p, Limit::processes).value == std::optional<std::uint64_t>(4096));
    CHECK_FALSE(limit_of(p, Limit::timeout).value);
}

TEST_CASE("limits: the layers the project neither writes nor ships set one, the lowest winning; managed caps a user's") {
    const auto user = merged(Layers{}.add(LayerKind::user, limits_json(R"J("processes": 10000, "timeoutSeconds": 600)J")));
    CHECK(limit_of(user, Limit::processes).value == std::optional<std::uint64_t>(10000));  // above the default: the user's to raise
    REQUIRE(limit_of(user, Limit::timeout).source);
    CHECK(limit_of(user, Limit::timeout).source->key == "sandbox.limits.timeoutSeconds");
    const auto capped = merged(Layers{}
                                   .add(LayerKind::user, limits_json(R"J("processes": 10000)J"))
                                   .add(LayerKind::managed, limits_json(R"J("processes": 2000)J")));
    CHECK(limit_of(capped, Limit::processes).value == std::optional<std::uint64_t>(2000));
    CHECK(limit_of(capped, Limit::processes).source->layer == LayerKind::managed);
    const auto lower = merged(Layers{}
                                  .add(LayerKind::user, limits_json(R"J("processes": 100)J"))
                                  .add(LayerKind::managed, limits_json(R"J("processes": 2000)J")));
    CHECK(limit_of(lower, Limit::processes).value == std::optional<std::uint64_t>(100));
    CHECK(limit_of(lower, Limit::processes).source->layer == LayerKind::user);
}

TEST_CASE("limits: the project's files lower a limit and cannot raise one, even with nothing above them") {
    for (auto k : {LayerKind::project, LayerKind::local}) {
        CAPTURE(sbx::layer_name(k));
        const auto lowered = merged(Layers{}.add(LayerKind::user, limits_json(R"J("timeoutSeconds": 600)J"))
                                        .add(k, limits_json(R"J("timeoutSeconds": 60)J")));
        CHECK(limit_of(lowered, Limit::timeout).value == std::optional<std::uint64_t>(60));
        CHECK(limit_of(lowered, Limit::timeout).source->layer == k);
        const auto set = merged(Layers{}.add(k, limits_json(R"J("timeoutSeconds": 60)J")));
        CHECK(limit_of(set, Limit::timeout).value == std::optional<std::uint64_t>(60));  // below "no limit"
        const auto raised = merged(Layers{}.add(k, limits_json(R"J("processes": 100000)J")));
        CHECK(limit_of(raised, Limit::processes).value == std::optional<std::uint64_t>(4096));
        CHECK(warned(raised, k, "sandbox.limits.processes",
                     "left out: the project's files can lower a limit, not raise it over 4096 (sbx's default)"));
        const auto over_user = merged(Layers{}.add(LayerKind::user, limits_json(R"J("memoryMiB": 512)J"))
                                          .add(k, limits_json(R"J("memoryMiB": 4096)J")));
        CHECK(limit_of(over_user, Limit::memory).value == std::optional<std::uint64_t>(512));
        CHECK(limit_of(over_user, Limit::memory).source->layer == LayerKind::user);
    }
}

TEST_CASE("limits: the command line counts with the user's and managed settings, the lowest winning") {
    sbx::MergeOptions o;
    o.limits[static_cast<std::size_t>(Limit::timeout)] = 30;
    o.limits[static_cast<std::size_t>(Limit::processes)] = 9000;
    const auto p = merged_with(Layers{}.add(LayerKind::managed, limits_json(R"J("processes": 5000)J")), o);
    CHECK(limit_of(p, Limit::timeout).value == std::optional<std::uint64_t>(30));
    REQUIRE(limit_of(p, Limit::timeout).source);
    CHECK(limit_of(p, Limit::timeout).source->file == "(command line)");
    CHECK(limit_of(p, Limit::timeout).source->key == "--limit timeoutSeconds");
    CHECK(limit_of(p, Limit::processes).value == std::optional<std::uint64_t>(5000));  // managed caps it
}

TEST_CASE("limits: a key that is no limit, a value that is no whole number in range, refuse the file, naming the key") {
    const auto src = source_for(LayerKind::user);
    struct Bad {
        std::string text, key, says;
    };
    for (const auto& b : std::vector<Bad>{
             {limits_json(R"J("timeoutSecond": 5)J"), "sandbox.limits.timeoutSecond", "did you mean 'timeoutSeconds'?"},
             {limits_json(R"J("processes": 0)J"), "sandbox.limits.processes", "from 1 to 4194304"},
             {limits_json(R"J("processes": -3)J"), "sandbox.limits.processes", "from 1 to 4194304"},
             {limits_json(R"J("memoryMiB": 1.5)J"), "sandbox.limits.memoryMiB", "a whole number"},
             {limits_json(R"J("cpuSeconds": "60")J"), "sandbox.limits.cpuSeconds", "a whole number"},
             {limits_json(R"J("fileSizeMiB": 99999999999)J"), "sandbox.limits.fileSizeMiB", "from 1 to 16777216"},
             {R"J({"sandbox": {"limits": [1]}})J", "sandbox.limits", "an object"},
             {limits_json(R"J("processes": 5, "processes": 6)J"), "sandbox.limits.processes", ""},
         }) {
        CAPTURE(b.text);
        auto s = sbx::parse_settings(b.text, src);
        REQUIRE_FALSE(s.has_value());
        CHECK(s.error().code == sbx::Errc::invalid_settings);
        CHECK(s.error().key == b.key);
        CHECK(s.error().message.find(b.says) != std::string::npos);
    }
}

TEST_CASE("limits: sbx policy's JSON shows each with its value (null: none) and its source (null: the default)") {
    const auto before = merged(Layers{}.add(LayerKind::user, limits_json(R"J("timeoutSeconds": 60)J")));
    const auto after = merged(Layers{}.add(LayerKind::user, limits_json(R"J("timeoutSeconds": 600)J")));
    const std::string json = sbx::to_json(before);
    CHECK(json.find(R"J("limits":{"timeoutSeconds":{"value":60,"source":{)J") != std::string::npos);
    CHECK(json.find(R"J("memoryMiB":{"value":null,"source":null})J") != std::string::npos);
    CHECK(json.find(R"J("processes":{"value":4096,"source":null})J") != std::string::npos);
}
