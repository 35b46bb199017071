// own_program_paths() through command_fs_rules(): sbx's own programs protected
// where a command could replace them, over in-memory trees.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sbx/plan/command_fs_rules.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "sbx/rules/own_programs.hpp"

namespace {

using sbx::MemoryFs;

sbx::Policy policy_of(const sbx::FsView& fs, const std::string& settings = "{}") {
    sbx::SettingsSource src{sbx::LayerKind::user, "/home/u/.claude/settings.json", {"/home/u", "/home/u"}, "/r"};
    auto parsed = sbx::parse_settings(settings, src);
    REQUIRE_MESSAGE(parsed.has_value(), (parsed ? std::string() : sbx::to_string(parsed.error())));
    std::vector<sbx::Settings> layers;
    layers.push_back(std::move(*parsed));
    auto policy = sbx::merge(std::move(layers), {}, fs);
    REQUIRE(policy.has_value());
    return std::move(*policy);
}

sbx::CommandFsRules rules_for(const sbx::FsView& fs, const std::vector<std::string>& programs,
                              const std::string& settings = "{}") {
    sbx::CachedFs cached(fs);
    auto r = sbx::command_fs_rules(policy_of(fs, settings), {"/r", "/tmp/sbx-test", "/home/u"}, std::nullopt, cached,
                                   programs);
    REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : sbx::to_string(r.error())));
    return std::move(*r);
}

sbx::FsDecision write_of(const sbx::CommandFsRules& r, const std::string& path) {
    return sbx::decide(r.rules, path, sbx::Access::write);
}

// Whether `path` is refused for writing as one of sbx's own programs or their folder.
bool protected_as_own(const sbx::CommandFsRules& r, const std::string& path) {
    const auto d = write_of(r, path);
    return !d.allowed && d.because == sbx::FsDecision::Because::protected_path &&
           d.rule->note.find("sbx's own program") != std::string::npos;
}

bool ro_bound(const sbx::FsPlan& p, const std::string& path) {
    for (const auto& m : p.mounts)
        if (m.kind == sbx::MountKind::ro_bind && m.path == path) return true;
    return false;
}

sbx::FsPlan plan_of(const sbx::CommandFsRules& r, const sbx::FsView& fs) {
    auto p = sbx::make_fs_plan(r.rules, fs);
    REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : sbx::to_string(p.error())));
    return std::move(*p);
}

MemoryFs project() {
    MemoryFs fs;
    fs.dir("/r").dir("/r/src").dir("/home/u").dir("/tmp").dir("/usr/bin");
    return fs;
}

}  // namespace

TEST_CASE("programs installed in a folder of the root: the folder and the programs are read-only") {
    MemoryFs fs = project();
    fs.dir("/r/bin").file("/r/bin/sbx").file("/r/bin/sbx-stage").file("/r/bin/sbx-linux");
    const auto r = rules_for(fs, {"/r/bin/sbx", "/r/bin/sbx-stage", "/r/bin/sbx-linux"});
    CHECK(protected_as_own(r, "/r/bin/sbx"));
    CHECK(protected_as_own(r, "/r/bin/sbx-stage"));
    CHECK(protected_as_own(r, "/r/bin/new-program"));  // nothing added beside them
    CHECK(write_of(r, "/r/src/main.c").allowed);        // the rest of the root stays writable
    REQUIRE(r.own_programs.size() == 1);                 // the folder covers the programs
    CHECK(r.own_programs.front().path == "/r/bin");
    CHECK(r.own_programs.front().reason.find("without a sandbox") != std::string::npos);
    CHECK(r.own_program_warnings.empty());
    const auto plan = plan_of(r, fs);
    CHECK(ro_bound(plan, "/r/bin"));
}

TEST_CASE("a program reached through a symlink in the root: both folders are read-only") {
    MemoryFs fs = project();
    fs.dir("/r/bin").dir("/r/build").file("/r/build/sbx").file("/r/build/sbx-stage");
    fs.symlink("/r/bin/sbx", "../build/sbx");
    // What sbx hands over: the name it was started by, its own path, its stage.
    const auto r = rules_for(fs, {"/r/bin/sbx", "/r/build/sbx", "/r/build/sbx-stage"});
    CHECK(protected_as_own(r, "/r/bin/sbx"));
    CHECK(protected_as_own(r, "/r/build/sbx"));
    CHECK(protected_as_own(r, "/r/build/sbx-stage"));
    const auto plan = plan_of(r, fs);
    CHECK(ro_bound(plan, "/r/bin"));
    CHECK(ro_bound(plan, "/r/build"));
}

TEST_CASE("the name alone, its target in the root: where it leads is protected too") {
    MemoryFs fs = project();
    fs.dir("/r/bin").dir("/r/build").file("/r/build/sbx");
    fs.symlink("/r/bin/sbx", "../build/sbx");
    const auto r = rules_for(fs, {"/r/bin/sbx"});
    CHECK(protected_as_own(r, "/r/build/sbx"));
    CHECK(protected_as_own(r, "/r/build/sbx-stage"));
}

TEST_CASE("a symlink in the root to an install outside: only the folder of the link is protected") {
    MemoryFs fs = project();
    fs.dir("/r/bin").file("/usr/bin/sbx").symlink("/r/bin/sbx", "/usr/bin/sbx");
    const auto r = rules_for(fs, {"/r/bin/sbx", "/usr/bin/sbx"});
    CHECK(protected_as_own(r, "/r/bin/sbx"));
    REQUIRE(r.own_programs.size() == 1);
    CHECK(r.own_programs.front().path == "/r/bin");
    // Outside every writable place: no protected path, the read-only view keeps it.
    CHECK(write_of(r, "/usr/bin/sbx").because == sbx::FsDecision::Because::no_writable_root);
}

TEST_CASE("programs outside every writable place add nothing") {
    MemoryFs fs = project();
    fs.file("/usr/bin/sbx").file("/usr/bin/sbx-stage");
    const auto r = rules_for(fs, {"/usr/bin/sbx", "/usr/bin/sbx-stage"});
    CHECK(r.own_programs.empty());
    CHECK(r.own_program_warnings.empty());
    CHECK(write_of(r, "/usr/bin/sbx").because == sbx::FsDecision::Because::no_writable_root);
}

TEST_CASE("programs at the top of the root: the programs only, and a warning") {
    MemoryFs fs = project();
    fs.file("/r/sbx").file("/r/sbx-stage");
    const auto r = rules_for(fs, {"/r/sbx", "/r/sbx-stage"});
    CHECK(protected_as_own(r, "/r/sbx"));
    CHECK(protected_as_own(r, "/r/sbx-stage"));
    CHECK(write_of(r, "/r/src/main.c").allowed);  // the root is not made read-only
    CHECK(write_of(r, "/r/other").allowed);
    REQUIRE(r.own_program_warnings.size() == 1);
    CHECK(r.own_program_warnings.front().file == "/r");
    CHECK(r.own_program_warnings.front().message.find("is the root /r") != std::string::npos);
    const auto plan = plan_of(r, fs);
    CHECK(ro_bound(plan, "/r/sbx"));
    CHECK(!ro_bound(plan, "/r"));
}

TEST_CASE("programs in an allowWrite folder: protected there; a folder that is the allowWrite entry keeps it writable") {
    MemoryFs fs = project();
    fs.dir("/data").dir("/data/tools").dir("/data/tools/bin").file("/data/tools/bin/sbx");
    {
        const auto r = rules_for(fs, {"/data/tools/bin/sbx"}, R"({"sandbox":{"filesystem":{"allowWrite":["/data"]}}})");
        CHECK(protected_as_own(r, "/data/tools/bin/sbx"));
        CHECK(protected_as_own(r, "/data/tools/bin/sbx-stage"));
        CHECK(write_of(r, "/data/other").allowed);
        CHECK(ro_bound(plan_of(r, fs), "/data/tools/bin"));
    }
    {
        const auto r =
            rules_for(fs, {"/data/tools/bin/sbx"}, R"({"sandbox":{"filesystem":{"allowWrite":["/data/tools/bin"]}}})");
        CHECK(protected_as_own(r, "/data/tools/bin/sbx"));
        CHECK(write_of(r, "/data/tools/bin/other").allowed);
        REQUIRE(r.own_program_warnings.size() == 1);
        CHECK(r.own_program_warnings.front().message.find("filesystem.allowWrite /data/tools/bin") != std::string::npos);
    }
}

TEST_CASE("a program inside a folder already protected adds nothing of its own") {
    MemoryFs fs = project();
    fs.dir("/r/.vscode").file("/r/.vscode/sbx");
    const auto r = rules_for(fs, {"/r/.vscode/sbx"});
    CHECK(r.own_programs.empty());
    CHECK(write_of(r, "/r/.vscode/sbx").rule->note.find("editor settings") != std::string::npos);
}

TEST_CASE("a program path that is not absolute and normalised is refused") {
    MemoryFs fs = project();
    sbx::CachedFs cached(fs);
    for (const std::string bad : {"bin/sbx", "/r/bin/../bin/sbx", "/r/bin/"}) {
        const std::vector<std::string> programs{bad};
        auto r = sbx::command_fs_rules(policy_of(fs), {"/r", "/tmp/sbx-test", "/home/u"}, std::nullopt, cached, programs);
        REQUIRE(!r.has_value());
        CHECK(r.error().code == sbx::Errc::invalid_argument);
    }
}

TEST_CASE("filesystem.disabled: nothing to protect, nothing added") {
    MemoryFs fs = project();
    fs.dir("/r/bin").file("/r/bin/sbx");
    const auto r = rules_for(fs, {"/r/bin/sbx"}, R"({"sandbox":{"filesystem":{"disabled":true}}})");
    CHECK(r.own_programs.empty());
}
