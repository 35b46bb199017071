// compile_fs_rules(), decide() and explain(): read and write decisions with their rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sbx/fs_rules.hpp"
#include "sbx/plan.hpp"

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
