// compile_fs_rules(), decide() and explain(): read and write decisions with their rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sbx/plan/make_plan.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/rules/fs_rules.hpp"
#include "sbx/settings/defaults.hpp"

namespace {

using sbx::Access;

// A policy from one user settings file (HOME /home/u, root /r).
sbx::Policy policy_of(std::string_view user_json) {
    sbx::SettingsSource src{sbx::LayerKind::user, "/home/u/.claude/settings.json", {"/home/u", "/home/u"}, "/r"};
    auto s = sbx::parse_settings(user_json, src);
    REQUIRE_MESSAGE(s.has_value(), (s ? std::string() : sbx::to_string(s.error())));
    std::vector<sbx::Settings> layers;
    layers.push_back(std::move(*s));
    sbx::MemoryFs none;
    auto p = sbx::merge(std::move(layers), {}, none);
    REQUIRE(p.has_value());
    return std::move(*p);
}

sbx::FsRules rules_of(std::string_view user_json, const sbx::FsView& fs, std::vector<sbx::ProtectedPath> prot = {}) {
    auto r = sbx::compile_fs_rules(policy_of(user_json), {"/r", "/tmp/sbx-1", "/home/u"}, std::move(prot), fs);
    REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : sbx::to_string(r.error())));
    return std::move(*r);
}

bool can(const sbx::FsRules& r, std::string_view path, Access a) { return sbx::decide(r, path, a).allowed; }

}  // namespace

TEST_CASE("fs_rules: the reference's three examples") {
    sbx::MemoryFs fs;
    // "denyRead": ["~/"], "allowRead": ["~/projects"]: ~/projects readable, the rest of home hidden.
    auto a = rules_of(R"J({"sandbox": {"filesystem": {"denyRead": ["~/"], "allowRead": ["~/projects"]}}})J", fs);
    CHECK(can(a, "/home/u/projects", Access::read));
    CHECK(can(a, "/home/u/projects/x/y.c", Access::read));
    CHECK_FALSE(can(a, "/home/u/.bashrc", Access::read));
    CHECK_FALSE(can(a, "/home/u", Access::read));
    CHECK(can(a, "/etc/passwd", Access::read));
    // "allowRead": ["~/"], "denyRead": ["~/.env"]: a broad allow re-exposes none.
    auto b = rules_of(R"J({"sandbox": {"filesystem": {"allowRead": ["~/"], "denyRead": ["~/.env"]}}})J", fs);
    CHECK_FALSE(can(b, "/home/u/.env", Access::read));
    CHECK(can(b, "/home/u/notes", Access::read));
    auto d = sbx::decide(b, "/home/u/.env", Access::read);
    REQUIRE(d.rule != nullptr);
    CHECK(d.rule->list == "filesystem.denyRead");
    CHECK(d.rule->source->key == "sandbox.filesystem.denyRead[0]");
    // "allowRead": ["~/"], "denyRead": ["~/**/.env"]: every .env under home hidden.
    auto c = rules_of(R"J({"sandbox": {"filesystem": {"allowRead": ["~/"], "denyRead": ["~/**/.env"]}}})J", fs);
    CHECK_FALSE(can(c, "/home/u/.env", Access::read));
    CHECK_FALSE(can(c, "/home/u/a/b/c/.env", Access::read));
    CHECK(can(c, "/home/u/a/b/c/env", Access::read));
}

TEST_CASE("fs_rules: between a deny and an allow the narrower wins, a tie goes to the deny") {
    sbx::MemoryFs fs;
    auto r = rules_of(R"J({"sandbox": {"filesystem": {
        "denyRead": ["/data", "/data/open/secret", "/srv/**"], "allowRead": ["/data/open", "/srv", "/srv/pub"]}}})J",
                      fs);
    CHECK(can(r, "/data/open/file", Access::read));
    CHECK_FALSE(can(r, "/data/open/secret/key", Access::read));
    CHECK_FALSE(can(r, "/data/other", Access::read));
    CHECK_FALSE(can(r, "/srv/x", Access::read));  // /srv/** names /srv: same depth as the allow
    CHECK(can(r, "/srv/pub/index.html", Access::read));
}

TEST_CASE("fs_rules: writes only inside writable roots; denyWrite wins over every allow") {
    sbx::MemoryFs fs;
    auto r = rules_of(R"J({"sandbox": {"filesystem": {"allowWrite": ["/opt/cache", "/var/out/**"],
                                                     "denyWrite": ["/r/vendor", "/opt/cache/locked", "/r/**/*.lock"]}}})J",
                      fs);
    CHECK(can(r, "/r/src/main.c", Access::write));
    CHECK(can(r, "/tmp/sbx-1/scratch", Access::write));
    CHECK(can(r, "/opt/cache/x", Access::write));
    CHECK(can(r, "/var/out/x/y", Access::write));  // a trailing /** names the directory
    CHECK_FALSE(can(r, "/r/vendor/lib.c", Access::write));
    CHECK_FALSE(can(r, "/opt/cache/locked/f", Access::write));
    CHECK_FALSE(can(r, "/r/Cargo.lock", Access::write));
    CHECK_FALSE(can(r, "/etc/passwd", Access::write));
    CHECK_FALSE(can(r, "/tmp/other", Access::write));
    auto d = sbx::decide(r, "/etc/passwd", Access::write);
    CHECK(d.rule == nullptr);
    CHECK(sbx::why(d) == "not inside a writable root");
    auto w = sbx::decide(r, "/r/src", Access::write);
    REQUIRE(w.rule != nullptr);
    CHECK(w.rule->list == "the root");
}

TEST_CASE("fs_rules: a root made read-only (a strict agent file) is not writable; the write folders and TMPDIR are") {
    sbx::MemoryFs fs;
    sbx::Policy policy = policy_of(R"({"sandbox": {"filesystem": {"allowWrite": ["/r/out"]}}})");
    policy.filesystem.root_read_only = {true, sbx::Source{sbx::LayerKind::flag, sbx::FileName("/r/AGENT.md"), "sandbox.preset"}};
    auto r = sbx::compile_fs_rules(policy, {"/r", "/tmp/sbx-1", "/home/u"}, {}, fs);
    REQUIRE(r.has_value());
    CHECK_FALSE(can(*r, "/r/src/main.c", Access::write));
    CHECK(sbx::decide(*r, "/r/src/main.c", Access::write).because == sbx::FsDecision::Because::no_writable_root);
    CHECK(can(*r, "/r/src/main.c", Access::read));
    CHECK(can(*r, "/r/out/a.o", Access::write));
    CHECK(can(*r, "/tmp/sbx-1/scratch", Access::write));
    // The control: the same policy with the root as it comes.
    policy.filesystem.root_read_only = {false, std::nullopt};
    auto open = sbx::compile_fs_rules(policy, {"/r", "/tmp/sbx-1", "/home/u"}, {}, fs);
    REQUIRE(open.has_value());
    CHECK(can(*open, "/r/src/main.c", Access::write));
}

TEST_CASE("fs_rules: a write-list wildcard that cannot be mounted is refused with a warning") {
    sbx::MemoryFs fs;
    auto r = rules_of(R"J({"sandbox": {"filesystem": {"allowWrite": ["/opt/*/cache", "/var/**"]}}})J", fs);
    CHECK_FALSE(can(r, "/opt/a/cache/x", Access::write));
    CHECK(can(r, "/var/log/x", Access::write));
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0].key == "sandbox.filesystem.allowWrite[0]");
    CHECK(r.warnings[0].message.find("/opt/*/cache") != std::string::npos);
}

TEST_CASE("fs_rules: a path hidden from reads is not writable, even in the root") {
    sbx::MemoryFs fs;
    auto r = rules_of(R"J({"sandbox": {"filesystem": {"denyRead": ["/r/.env"]}}})J", fs);
    CHECK_FALSE(can(r, "/r/.env", Access::write));
    CHECK(can(r, "/r/other", Access::write));
}

TEST_CASE("fs_rules: a denied path reached through a symlink is denied where it leads") {
    sbx::MemoryFs fs;
    fs.dir("/data/aws").file("/data/aws/credentials").symlink("/home/u/.aws", "/data/aws");
    fs.symlink("/r/creds", "/data/aws/credentials");
    auto r = rules_of(R"J({"sandbox": {"filesystem": {"denyRead": ["~/.aws"]}}})J", fs);
    CHECK_FALSE(can(r, "/data/aws/credentials", Access::read));
    auto d = sbx::decide(r, "/data/aws/credentials", Access::read);
    REQUIRE(d.rule != nullptr);
    CHECK(d.rule->note == "where /home/u/.aws leads");
    // explain() resolves a link the command names: /r/creds leads into the denied directory.
    auto e = sbx::explain(r, "/r/creds", Access::read, fs);
    REQUIRE(e.has_value());
    CHECK(e->real_path == "/data/aws/credentials");
    CHECK_FALSE(e->decision.allowed);
    auto rel = sbx::explain(r, "creds", Access::read, fs);
    REQUIRE(rel.has_value());
    CHECK(rel->path == "/r/creds");
    CHECK_FALSE(rel->decision.allowed);
}

TEST_CASE("fs_rules: an allowRead that reaches into a deny only through a symlink is ignored with a warning") {
    sbx::MemoryFs fs;
    fs.dir("/home/u/.ssh").symlink("/r/keys", "/home/u/.ssh");
    auto r = rules_of(R"J({"sandbox": {"filesystem": {"denyRead": ["~/.ssh"], "allowRead": ["/r/keys", "~/.ssh/known_hosts"]}}})J",
                      fs);
    CHECK_FALSE(can(r, "/home/u/.ssh/id_ed25519", Access::read));
    CHECK(can(r, "/home/u/.ssh/known_hosts", Access::read));  // named inside: re-opened
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0].key == "sandbox.filesystem.allowRead[0]");
    CHECK(r.warnings[0].message.find("only through a symlink") != std::string::npos);
    auto e = sbx::explain(r, "/r/keys/id_ed25519", Access::read, fs);
    REQUIRE(e.has_value());
    CHECK_FALSE(e->decision.allowed);
}

TEST_CASE("fs_rules: protected paths refuse writes; allowWrite cannot lift them; filesystem.disabled does") {
    sbx::MemoryFs fs;
    fs.dir("/r/.git/hooks");
    std::vector<sbx::ProtectedPath> prot{
        {"/r/.git", sbx::Guard::pin, sbx::Placeholder::directory, "the repository"},
        {"/r/.git/hooks", sbx::Guard::read_only, sbx::Placeholder::directory, "git runs hooks"},
        {"/r/.bashrc", sbx::Guard::read_only, sbx::Placeholder::file, "shells run it"},
    };
    auto r = rules_of(R"J({"sandbox": {"filesystem": {"allowWrite": ["/r/.git/hooks"]}}})J", fs, prot);
    CHECK_FALSE(can(r, "/r/.git/hooks/pre-commit", Access::write));
    CHECK_FALSE(can(r, "/r/.bashrc", Access::write));
    CHECK(can(r, "/r/.git/index", Access::write));  // pinned, not read-only
    CHECK(can(r, "/r/.git/hooks/pre-commit", Access::read));
    auto d = sbx::decide(r, "/r/.bashrc", Access::write);
    REQUIRE(d.rule != nullptr);
    CHECK(d.rule->note == "shells run it");
    auto off = rules_of(R"J({"sandbox": {"filesystem": {"disabled": true, "denyRead": ["/x"]}}})J", fs, prot);
    CHECK(can(off, "/r/.bashrc", Access::write));
    CHECK(can(off, "/etc/passwd", Access::write));
    CHECK(can(off, "/x", Access::read));
}

TEST_CASE("fs_rules: credentials.files hide like denyRead, and a writable root re-opens reads inside a deny") {
    sbx::MemoryFs fs;
    auto r = rules_of(R"J({"sandbox": {"filesystem": {"denyRead": ["~/"], "allowWrite": ["~/.cache"]},
                                      "credentials": {"files": ["/r/secrets.json"]}}})J",
                      fs);
    CHECK_FALSE(can(r, "/r/secrets.json", Access::read));
    CHECK(can(r, "/home/u/.cache/x", Access::read));
    CHECK(can(r, "/home/u/.cache/x", Access::write));
    CHECK_FALSE(can(r, "/home/u/.profile", Access::read));
    auto d = sbx::decide(r, "/r/secrets.json", Access::read);
    REQUIRE(d.rule != nullptr);
    CHECK(d.rule->list == "credentials.files");
}

TEST_CASE("fs_rules: the root, TMPDIR and protected paths are paths, whatever characters they hold") {
    sbx::MemoryFs fs;
    fs.dir("/w/a*b").dir("/w/aXb").dir("/w/a*b/.git/hooks").dir("/tmp/s?x");
    const std::vector<sbx::ProtectedPath> prot{{"/w/a*b/.git/hooks", sbx::Guard::read_only, sbx::Placeholder::directory, "git hooks"}};
    auto r = sbx::compile_fs_rules(policy_of("{}"), {"/w/a*b", "/tmp/s?x", "/home/u"}, prot, fs);
    REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : sbx::to_string(r.error())));
    CHECK(can(*r, "/w/a*b/file", Access::write));
    CHECK_FALSE(can(*r, "/w/aXb/file", Access::write));  // `*` in the root's name is no wildcard
    CHECK_FALSE(can(*r, "/w/ab/file", Access::write));
    CHECK(can(*r, "/tmp/s?x/f", Access::write));
    CHECK_FALSE(can(*r, "/tmp/sox/f", Access::write));
    CHECK_FALSE(can(*r, "/w/a*b/.git/hooks/pre-commit", Access::write));

    // In a plan they are patterns that match exactly them.
    sbx::PlanRequest req;
    req.argv = {"true"};
    req.root = "/w/a*b";
    req.home = "/home/u";
    req.tmpdir = "/tmp/s?x/t";
    auto plan = sbx::make_plan(policy_of("{}"), req, fs);
    REQUIRE_MESSAGE(plan.has_value(), (plan ? std::string() : sbx::to_string(plan.error())));
    const bool escaped_root = std::any_of(plan->rules.begin(), plan->rules.end(), [](const sbx::PlanRule& pr) {
        return pr.kind == sbx::FsRule::Kind::writable && pr.pattern == "/w/a\\*b";
    });
    CHECK(escaped_root);
    CHECK(sbx::glob::match("/w/a\\*b", "/w/a*b"));
    CHECK_FALSE(sbx::glob::match("/w/a\\*b", "/w/aXb"));
}

// ---------------------------------------------------------------------------
// Credential stores: the builtin layer under every settings file.

namespace {

// The effective policy (credential stores included) of one layer's settings.
sbx::Policy effective_of(sbx::LayerKind layer, std::string_view json, const sbx::FsView& fs,
                         std::vector<std::string> homes = {"/home/u"}, bool trusted = true) {
    const std::string file = layer == sbx::LayerKind::user ? "/home/u/.claude/settings.json" : "/r/.claude/settings.json";
    sbx::SettingsSource src{layer, file, {homes.front(), layer == sbx::LayerKind::user ? homes.front() : "/r"}, "/r"};
    auto s = sbx::parse_settings(json, src);
    REQUIRE_MESSAGE(s.has_value(), (s ? std::string() : sbx::to_string(s.error())));
    std::vector<sbx::Settings> layers;
    layers.push_back(std::move(*s));
    auto p = sbx::effective_policy(std::move(layers), sbx::MergeOptions{trusted}, fs, homes);
    REQUIRE(p.has_value());
    return std::move(*p);
}

sbx::FsRules store_rules(std::string_view user_json, const sbx::FsView& fs, std::vector<std::string> homes = {"/home/u"}) {
    auto r = sbx::compile_fs_rules(effective_of(sbx::LayerKind::user, user_json, fs, homes),
                                   {"/r", "/tmp/sbx-1", homes.front()}, {}, fs);
    REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : sbx::to_string(r.error())));
    return std::move(*r);
}

}  // namespace

TEST_CASE("fs_rules: with an empty settings file the credential stores stay hidden, by their builtin rule") {
    sbx::MemoryFs fs;
    auto r = store_rules("{}", fs);
    for (const char* p : {"/home/u/.ssh/id_ed25519", "/home/u/.aws/credentials", "/home/u/.config/gh/hosts.yml",
                          "/home/u/.bash_history", "/home/u/.cargo/credentials.toml"}) {
        INFO(p);
        auto d = sbx::decide(r, p, Access::read);
        CHECK_FALSE(d.allowed);
        REQUIRE(d.rule != nullptr);
        CHECK(d.rule->deny == sbx::FsRule::Deny::credential_store);
        CHECK(d.rule->list == "credential store");
        REQUIRE(d.rule->source.has_value());
        CHECK(d.rule->source->layer == sbx::LayerKind::builtin);
        CHECK(d.rule->source->key.starts_with("defaults.credentialStores["));
        CHECK_FALSE(can(r, p, Access::write));
    }
    CHECK(can(r, "/home/u/.bashrc", Access::read));
    CHECK(can(r, "/home/u/.cargo/registry/index", Access::read));
    CHECK(sbx::why(sbx::decide(r, "/home/u/.aws/config", Access::read)).find("AWS access keys") != std::string::npos);
}

TEST_CASE("fs_rules: the stores are hidden under $HOME and under the account's home alike") {
    sbx::MemoryFs fs;
    auto r = store_rules("{}", fs, {"/elsewhere", "/home/u"});
    CHECK_FALSE(can(r, "/elsewhere/.ssh/id_rsa", Access::read));
    CHECK_FALSE(can(r, "/home/u/.ssh/id_rsa", Access::read));
    CHECK_FALSE(can(r, "/home/u/.aws/credentials", Access::read));
    CHECK(can(r, "/home/u/notes.txt", Access::read));
}

TEST_CASE("fs_rules: an allowRead that names a store, or a path in it, lifts the store's deny there") {
    sbx::MemoryFs fs;
    auto r = store_rules(R"J({"sandbox": {"filesystem": {"allowRead": ["~/.aws", "~/.ssh/config", "~/.kube/**"]}}})J", fs);
    auto d = sbx::decide(r, "/home/u/.aws/credentials", Access::read);
    CHECK(d.allowed);
    CHECK(d.because == sbx::FsDecision::Because::lifted);
    REQUIRE(d.other != nullptr);
    CHECK(d.other->deny == sbx::FsRule::Deny::credential_store);
    CHECK(sbx::why(d).find("lifts its built-in denial") != std::string::npos);
    CHECK(can(r, "/home/u/.aws", Access::read));  // a tie: the allowRead names the store itself
    CHECK(can(r, "/home/u/.ssh/config", Access::read));
    CHECK_FALSE(can(r, "/home/u/.ssh/id_ed25519", Access::read));  // only what it names
    CHECK_FALSE(can(r, "/home/u/.ssh", Access::read));
    CHECK(can(r, "/home/u/.kube/config", Access::read));
    // Reading is not writing: no writable root holds them.
    CHECK_FALSE(can(r, "/home/u/.aws/credentials", Access::write));
}

TEST_CASE("fs_rules: a broad allowRead does not lift a store, whatever its depth") {
    sbx::MemoryFs fs;
    for (const char* broad : {"~", "/", "~/.config", "~/**", "~/*/credentials", "~/.a*", "~/.*/id_*", "/home/*/.ssh"}) {
        INFO(broad);
        auto r = store_rules(std::string(R"J({"sandbox": {"filesystem": {"allowRead": [")J") + broad + "\"]}}}", fs);
        CHECK_FALSE(can(r, "/home/u/.aws/credentials", Access::read));
        CHECK_FALSE(can(r, "/home/u/.aws", Access::read));
        CHECK_FALSE(can(r, "/home/u/.ssh/id_rsa", Access::read));
        CHECK_FALSE(can(r, "/home/u/.config/gh/hosts.yml", Access::read));
    }
}

TEST_CASE("fs_rules: a writable root over a store does not re-open it; one inside it is refused") {
    sbx::MemoryFs fs;
    fs.dir("/home/u/.kube/cache").dir("/home/u/.aws");
    auto r = store_rules(R"J({"sandbox": {"filesystem": {"allowWrite": ["~", "~/.aws", "~/.kube/cache"]}}})J", fs);
    CHECK(can(r, "/home/u/notes.txt", Access::write));
    CHECK_FALSE(can(r, "/home/u/.aws/credentials", Access::read));
    CHECK_FALSE(can(r, "/home/u/.aws/credentials", Access::write));
    CHECK_FALSE(can(r, "/home/u/.kube/cache/x", Access::read));
    CHECK_FALSE(can(r, "/home/u/.kube/cache/x", Access::write));
    bool refused = false;
    for (const auto& w : r.warnings)
        refused = refused || (w.key == "sandbox.filesystem.allowWrite[2]" && w.message.starts_with("refused:") &&
                              w.message.find("credential store") != std::string::npos);
    CHECK(refused);
    // Lifted by an allowRead, the store is written where a writable root around it says.
    auto l = store_rules(R"J({"sandbox": {"filesystem": {"allowWrite": ["~/.aws"], "allowRead": ["~/.aws"]}}})J", fs);
    CHECK(can(l, "/home/u/.aws/credentials", Access::read));
    CHECK(can(l, "/home/u/.aws/credentials", Access::write));
}

TEST_CASE("fs_rules: a root or temporary directory inside a credential store is an error") {
    sbx::MemoryFs fs;
    auto policy = effective_of(sbx::LayerKind::user, "{}", fs);
    auto r = sbx::compile_fs_rules(policy, {"/home/u/.config/gcloud/proj", "/tmp/sbx-1", "/home/u"}, {}, fs);
    REQUIRE_FALSE(r.has_value());
    CHECK(sbx::to_string(r.error()).find("credential store") != std::string::npos);
    auto t = sbx::compile_fs_rules(policy, {"/r", "/home/u/.docker/tmp", "/home/u"}, {}, fs);
    CHECK_FALSE(t.has_value());
}

TEST_CASE("fs_rules: inside a lifted store other denies hold, and only allowReads in the store re-open them") {
    sbx::MemoryFs fs;
    auto r = store_rules(R"J({"sandbox": {"filesystem": {"allowRead": ["~/.aws", "~/.aws/sso/cache/a", "~/*/sso/cache"],
                                                        "denyRead": ["~/.aws/sso", "~/**/*.pem", "~/x"]}}})J",
                         fs);
    CHECK(can(r, "/home/u/.aws/config", Access::read));
    CHECK_FALSE(can(r, "/home/u/.aws/sso/token", Access::read));
    CHECK_FALSE(can(r, "/home/u/.aws/sso/cache/b", Access::read));  // ~/*/sso/cache does not count in the store
    CHECK(can(r, "/home/u/.aws/sso/cache/a", Access::read));
    CHECK_FALSE(can(r, "/home/u/.aws/key.pem", Access::read));
    // Outside every store the broad allow counts as usual.
    CHECK(can(r, "/home/u/x/sso/cache/f", Access::read));
    CHECK_FALSE(can(r, "/home/u/x/other", Access::read));
}

TEST_CASE("fs_rules: a repository's allowRead never lifts a store, even when it reaches the rules") {
    sbx::MemoryFs fs;
    // Through merge() it is left out (defaults_test); here it is handed over as if it had not been.
    auto policy = effective_of(sbx::LayerKind::user, "{}", fs);
    policy.filesystem.allow_read.push_back(
        {"/home/u/.ssh", sbx::Source{sbx::LayerKind::project, sbx::FileName("/r/.claude/settings.json"),
                                     "sandbox.filesystem.allowRead[0]"}});
    auto r = sbx::compile_fs_rules(policy, {"/r", "/tmp/sbx-1", "/home/u"}, {}, fs);
    REQUIRE(r.has_value());
    CHECK_FALSE(can(*r, "/home/u/.ssh/id_rsa", Access::read));
    // The same entry from the user's file lifts it.
    policy.filesystem.allow_read.back().source.layer = sbx::LayerKind::user;
    auto u = sbx::compile_fs_rules(policy, {"/r", "/tmp/sbx-1", "/home/u"}, {}, fs);
    REQUIRE(u.has_value());
    CHECK(can(*u, "/home/u/.ssh/id_rsa", Access::read));
}

TEST_CASE("fs_rules: a deny of another layer equal to a store holds against an allowRead of it") {
    sbx::MemoryFs fs;
    auto r = store_rules(R"J({"sandbox": {"filesystem": {"denyRead": ["~/.ssh"], "allowRead": ["~/.ssh"]}}})J", fs);
    auto d = sbx::decide(r, "/home/u/.ssh/id_rsa", Access::read);
    CHECK_FALSE(d.allowed);
    REQUIRE(d.rule != nullptr);
    CHECK(d.rule->list == "filesystem.denyRead");
}

TEST_CASE("fs_rules: a symlinked store is hidden where it leads, and lifted there by naming it") {
    sbx::MemoryFs fs;
    fs.dir("/home/u/dotfiles/ssh").file("/home/u/dotfiles/ssh/id_rsa").symlink("/home/u/.ssh", "/home/u/dotfiles/ssh");
    fs.dir("/home/u/.aws").file("/home/u/.aws/credentials").symlink("/home/u/.ssh-extra", "/home/u/.aws/credentials");
    auto hidden = store_rules("{}", fs);
    for (const char* p : {"/home/u/.ssh/id_rsa", "/home/u/dotfiles/ssh/id_rsa"}) {
        auto e = sbx::explain(hidden, p, Access::read, fs);
        REQUIRE(e.has_value());
        CHECK_FALSE(e->decision.allowed);
    }
    auto lifted = store_rules(R"J({"sandbox": {"filesystem": {"allowRead": ["~/.ssh"]}}})J", fs);
    for (const char* p : {"/home/u/.ssh/id_rsa", "/home/u/dotfiles/ssh/id_rsa"}) {
        INFO(p);
        auto e = sbx::explain(lifted, p, Access::read, fs);
        REQUIRE(e.has_value());
        CHECK(e->decision.allowed);
    }
    // An allowRead outside every store that leads into one is ignored, as for any deny.
    auto other = store_rules(R"J({"sandbox": {"filesystem": {"allowRead": ["~/.ssh-extra"]}}})J", fs);
    auto e = sbx::explain(other, "/home/u/.ssh-extra", Access::read, fs);
    REQUIRE(e.has_value());
    CHECK_FALSE(e->decision.allowed);
}
