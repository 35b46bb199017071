// parse_plan() and to_json(): plans made by make_plan() come back field for field
// and byte for byte, and every document the reader's contract (read_plan.hpp,
// docs/plan.md) calls wrong is refused as INVALID_PLAN naming the key it is about.
//
// Most cases edit one hand-written, valid document (kBase) in one place: an edit
// must match exactly once, and a refused edit must still be well-formed JSON
// (the error has no line), so a typo in a case cannot pass for a refusal.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/fs_view.hpp"
#include "sbx/io/fs_view_disk.hpp"
#include "sbx/plan/git_exclude.hpp"
#include "sbx/plan/make_plan.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/plan/plan_json.hpp"
#include "sbx/plan/read_plan.hpp"
#include "sbx/plan/verify_plan.hpp"
#include "sbx/settings/defaults.hpp"
#include "sbx/settings/settings.hpp"
#include "temp_dir.hpp"

namespace {

constexpr std::string_view kOrigin = "fd 3";
constexpr std::string_view kTmp = "/tmp/sbx-0123456789abcdef";

// A plan with every key, every mount kind, every identity type, and both kinds of
// placeholder. Its mounts keep the documented order (shallow before deep).
constexpr std::string_view kBase = R"J({
  "version": 1,
  "command": {
    "argv": ["make", "test"],
    "cwd": "/r/src",
    "env": {"PATH": "/usr/bin:/bin", "HOME": "/home/u", "TMPDIR": "/tmp/sbx-0123456789abcdef"},
    "loaderEnv": {"LD_PRELOAD": "/opt/lib/libfast.so", "GCONV_PATH": "/opt/gconv"},
    "envRemoved": [{"name": "GITHUB_TOKEN", "why": "the name contains TOKEN"}, {"name": "PGURL", "why": "listed"}], "passFds": [3, 7, 2147483647]
  },
  "root": "/r", "rootWhy": "the top of the git work tree holding the current directory (/r/.git)",
  "tmpdir": "/tmp/sbx-0123456789abcdef",
  "bwrapPath": "/usr/bin/bwrap",
  "enabled": true,
  "failIfUnavailable": false,
  "seccomp": {"allowUnixSockets": true}, "unixSockets": {"all": true, "paths": []},
  "network": {"mode": "none"},
  "filesystem": {
    "isolated": true,
    "mounts": [
      {"kind": "bind", "path": "/r", "source": "/r", "expect": {"exists": true, "type": "directory", "dev": 2049, "ino": 11, "nlink": 6}, "why": "the root"},
      {"kind": "bind", "path": "/tmp/sbx-0123456789abcdef", "source": "/tmp/sbx-0123456789abcdef", "expect": {"exists": false}, "why": "the command's temporary directory"},
      {"kind": "pin", "path": "/r/.git", "expect": {"exists": true, "type": "directory", "dev": 2049, "ino": 12, "nlink": 7}, "why": "pinned: the root's .git directory"},
      {"kind": "ro-bind", "path": "/r/.bashrc", "source": "/r/.bashrc", "expect": {"exists": false}, "why": "placeholder: bash start-up file"},
      {"kind": "ro-bind", "path": "/r/.vscode", "source": "/r/.vscode", "expect": {"exists": false}, "why": "placeholder: editor settings"},
      {"kind": "mask-dir", "path": "/home/u/.ssh", "expect": {"exists": true, "type": "directory", "dev": 2049, "ino": 13, "nlink": 2}, "why": "hidden: ~/.ssh"},
      {"kind": "mask-file", "path": "/home/u/.netrc", "expect": {"exists": true, "type": "file", "dev": 2049, "ino": 14, "nlink": 1}, "why": "hidden: ~/.netrc"},
      {"kind": "mask-file", "path": "/home/u/.pgpass", "expect": {"exists": true, "type": "symlink", "dev": 2049, "ino": 15, "nlink": 1}, "why": "hidden: ~/.pgpass"},
      {"kind": "mask-file", "path": "/home/u/.agent.sock", "expect": {"exists": true, "type": "other", "dev": 2049, "ino": 16, "nlink": 1}, "why": "hidden: a socket"},
      {"kind": "ro-bind", "path": "/r/.git/hooks", "source": "/r/.git/hooks", "expect": {"exists": true, "type": "directory", "dev": 2049, "ino": 17, "nlink": 2}, "why": "protected: git hooks"},
      {"kind": "ro-bind", "path": "/home/u/.ssh/known_hosts", "source": "/srv/known_hosts", "expect": {"exists": true, "type": "file", "dev": 2050, "ino": 18, "nlink": 1}, "why": "re-opened through a symlink"},
      {"kind": "ro-bind", "path": "/r/.git/commondir", "source": "/r/.git/commondir", "expect": {"exists": false}, "why": "placeholder: points git at another git directory"},
      {"kind": "ro-link", "path": "/r/.mcp.json", "expect": {"exists": true, "type": "symlink", "dev": 2049, "ino": 24, "nlink": 1}, "why": "protected symbolic link: MCP servers"}
    ],
    "placeholders": [
      {"path": "/r/.bashrc", "kind": "file", "parent": {"exists": true, "type": "directory", "dev": 2049, "ino": 21, "nlink": 6}, "why": "bash start-up file"},
      {"path": "/r/.vscode", "kind": "directory", "parent": {"exists": true, "type": "directory", "dev": 2049, "ino": 22, "nlink": 6}, "why": "editor settings"},
      {"path": "/r/.git/commondir", "kind": "commondir", "parent": {"exists": true, "type": "directory", "dev": 2049, "ino": 23, "nlink": 8}, "why": "points git at another git directory"}
    ],
    "gitAudit": ["/r", "/r/src"]
  },
  "warnings": [
    {"file": "/home/u/.claude/settings.json", "key": "sandbox.network.allowedDomains[0]", "message": "no network proxy yet"}
  ]
})J";

// The smallest plan there is, for the exhaustive mutations.
constexpr std::string_view kSmall =
    R"J({"version":1,"command":{"argv":["sh"],"cwd":"/r","env":{"TMPDIR":"/t/x"},"loaderEnv":{}},"root":"/r",)J"
    R"J("tmpdir":"/t/x","enabled":true,"failIfUnavailable":true,"seccomp":{"allowUnixSockets":false},)J"
    R"J("network":{"mode":"none"},"filesystem":{"isolated":true,"mounts":[{"kind":"pin","path":"/r/.git",)J"
    R"J("expect":{"exists":true,"type":"directory","dev":1,"ino":2,"nlink":3}},{"kind":"ro-bind","path":"/r/a",)J"
    R"J("source":"/r/a","expect":{"exists":false}}],"placeholders":[{"path":"/r/a",)J"
    R"J("kind":"file","parent":{"exists":true,"type":"directory","dev":1,"ino":4,"nlink":2}}]}})J";

// `text` with the one occurrence of `from` replaced by `to`.
std::string edit(std::string_view text, std::string_view from, std::string_view to) {
    const auto at = text.find(from);
    REQUIRE_MESSAGE(at != std::string_view::npos, "not in the document: " << from);
    REQUIRE_MESSAGE(text.find(from, at + 1) == std::string_view::npos, "more than once in the document: " << from);
    std::string out(text.substr(0, at));
    out += to;
    out += text.substr(at + from.size());
    return out;
}

// `text` without the span from the one `from` through the first `through` after it.
std::string cut(std::string_view text, std::string_view from, std::string_view through) {
    const auto at = text.find(from);
    REQUIRE_MESSAGE(at != std::string_view::npos, "not in the document: " << from);
    REQUIRE(text.find(from, at + 1) == std::string_view::npos);
    const auto end = text.find(through, at + from.size());
    REQUIRE_MESSAGE(end != std::string_view::npos, "not after " << from << ": " << through);
    return std::string(text.substr(0, at)) + std::string(text.substr(end + through.size()));
}

// `text` with every occurrence of `from` replaced by `to`.
std::string replace_all(std::string text, std::string_view from, std::string_view to) {
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

// `text` with the span from the one `from` through the first `through` after it
// replaced by `with`.
std::string splice(std::string_view text, std::string_view from, std::string_view through, std::string_view with) {
    const auto at = text.find(from);
    REQUIRE(at != std::string_view::npos);
    return cut(text, from, through).insert(at, with);
}

sbx::Plan parsed(std::string_view text) {
    auto p = sbx::parse_plan(text, std::string(kOrigin));
    REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : sbx::to_string(p.error())));
    return std::move(*p);
}

void check_accepted(std::string_view text) {
    auto p = sbx::parse_plan(text, std::string(kOrigin));
    CHECK_MESSAGE(p.has_value(), (p ? std::string() : sbx::to_string(p.error())));
}

// The document is well-formed JSON but refused for `key`.
void check_refused(std::string_view text, std::string_view key) {
    auto p = sbx::parse_plan(text, std::string(kOrigin));
    REQUIRE_FALSE_MESSAGE(p.has_value(), "accepted: " << text);
    INFO(sbx::to_string(p.error()));
    CHECK(p.error().code == sbx::Errc::invalid_plan);
    CHECK(p.error().key == key);
    CHECK(p.error().file == kOrigin);
    CHECK(p.error().line == 0);  // not a JSON error: the case itself is well-formed
    CHECK_FALSE(p.error().message.empty());
}

// The document is not JSON; the error says where.
void check_malformed(std::string_view text, std::size_t line, std::size_t column) {
    auto p = sbx::parse_plan(text, std::string(kOrigin));
    REQUIRE_FALSE_MESSAGE(p.has_value(), "accepted");
    INFO(sbx::to_string(p.error()));
    CHECK(p.error().code == sbx::Errc::invalid_plan);
    CHECK(p.error().file == kOrigin);
    CHECK(p.error().key.empty());
    CHECK(p.error().line == line);
    CHECK(p.error().column == column);
}

// One edit of kBase and the key it must be refused for.
struct Refusal {
    std::string from, to, key;
};

void check_refusals(const std::vector<Refusal>& cases) {
    for (const auto& c : cases) {
        CAPTURE(c.from);
        CAPTURE(c.to);
        check_refused(edit(kBase, c.from, c.to), c.key);
    }
}

// Paths that are not absolute and normalised, made from a good one.
std::vector<std::string> unclean_variants(const std::string& good) {
    return {good.substr(1), good + "/", "/" + good, good + "//x", good + "/./x", good + "/../x", good + "/..",
            good + "/.", "/./" + good.substr(1), "/x/../" + good.substr(1), "", ".", "~" + good};
}

void check_same(const sbx::Identity& a, const sbx::Identity& b) {
    CHECK(a.exists == b.exists);
    if (!a.exists) return;
    CHECK(a.type == b.type);
    CHECK(a.dev == b.dev);
    CHECK(a.ino == b.ino);
    CHECK(a.nlink == b.nlink);
}

// Over 80 lines: one CHECK per field of the plan.
void check_same(const sbx::Plan& a, const sbx::Plan& b) {
    CHECK(a.version == b.version);
    CHECK(a.argv == b.argv);
    CHECK(a.root_why == b.root_why);
    CHECK(a.cwd == b.cwd);
    CHECK(a.root == b.root);
    CHECK(a.tmpdir == b.tmpdir);
    CHECK(a.hints == b.hints);
    CHECK(a.env == b.env);
    CHECK(a.loader_env == b.loader_env);
    CHECK(a.pass_fds == b.pass_fds);
    REQUIRE(a.env_removed.size() == b.env_removed.size());
    for (std::size_t i = 0; i < a.env_removed.size(); ++i) {
        CHECK(a.env_removed[i].name == b.env_removed[i].name);
        CHECK(a.env_removed[i].why == b.env_removed[i].why);
    }
    CHECK(a.bwrap_path == b.bwrap_path);
    CHECK(a.enabled == b.enabled);
    CHECK(a.fail_if_unavailable == b.fail_if_unavailable);
    CHECK(a.weaker_sandbox == b.weaker_sandbox);
    CHECK(a.allow_unix_sockets == b.allow_unix_sockets);
    CHECK(a.all_unix_sockets == b.all_unix_sockets);
    CHECK(a.unix_socket_paths == b.unix_socket_paths);
    CHECK(a.network.mode == b.network.mode);
    CHECK(a.network.rules.allowed.size() == b.network.rules.allowed.size());
    CHECK(a.network.rules.denied.size() == b.network.rules.denied.size());
    CHECK(a.network.rules.strict == b.network.rules.strict);
    CHECK(a.network.rules.local == b.network.rules.local);
    CHECK(a.network.strict_why == b.network.strict_why);
    CHECK(a.network.local_why == b.network.local_why);
    CHECK(a.network.forwards == b.network.forwards);
    REQUIRE(a.rules.size() == b.rules.size());
    for (std::size_t i = 0; i < a.rules.size(); ++i) {
        CHECK(a.rules[i].kind == b.rules[i].kind);
        CHECK(a.rules[i].pattern == b.rules[i].pattern);
        CHECK(a.rules[i].why == b.rules[i].why);
        CHECK(a.rules[i].deny == b.rules[i].deny);
    }
    CHECK(a.filesystem.isolated == b.filesystem.isolated);
    REQUIRE(a.filesystem.mounts.size() == b.filesystem.mounts.size());
    for (std::size_t i = 0; i < a.filesystem.mounts.size(); ++i) {
        const auto& m = a.filesystem.mounts[i];
        const auto& n = b.filesystem.mounts[i];
        CAPTURE(m.path);
        CHECK(m.kind == n.kind);
        CHECK(m.path == n.path);
        if (m.kind == sbx::MountKind::bind || m.kind == sbx::MountKind::ro_bind) {
            CHECK(m.source == n.source);
        } else {
            // The document has a source for binds only. make_fs_plan() also fills
            // it in for a pin (with the path itself), and nothing reads it there.
            CHECK(n.source.empty());
            CHECK((m.source.empty() || m.source == m.path));
        }
        check_same(m.expect, n.expect);
        CHECK(m.why == n.why);
    }
    REQUIRE(a.filesystem.placeholders.size() == b.filesystem.placeholders.size());
    for (std::size_t i = 0; i < a.filesystem.placeholders.size(); ++i) {
        const auto& p = a.filesystem.placeholders[i];
        const auto& q = b.filesystem.placeholders[i];
        CAPTURE(p.path);
        CHECK(p.path == q.path);
        CHECK(p.kind == q.kind);
        check_same(p.parent, q.parent);
        CHECK(p.why == q.why);
    }
    CHECK(a.filesystem.git_audit == b.filesystem.git_audit);
    CHECK(a.filesystem.git_record == b.filesystem.git_record);
    REQUIRE(a.tool_cache.has_value() == b.tool_cache.has_value());
    if (a.tool_cache) {
        CHECK(a.tool_cache->path == b.tool_cache->path);
        CHECK(a.tool_cache->set == b.tool_cache->set);
        REQUIRE(a.tool_cache->kept.size() == b.tool_cache->kept.size());
        for (std::size_t i = 0; i < a.tool_cache->kept.size(); ++i) {
            CHECK(a.tool_cache->kept[i].name == b.tool_cache->kept[i].name);
            CHECK(a.tool_cache->kept[i].why == b.tool_cache->kept[i].why);
        }
    }
    CHECK(b.filesystem.warnings.empty());  // a plan's warnings are all at the top
    REQUIRE(a.warnings.size() == b.warnings.size());
    for (std::size_t i = 0; i < a.warnings.size(); ++i) {
        CHECK(a.warnings[i].file == b.warnings[i].file);
        CHECK(a.warnings[i].key == b.warnings[i].key);
        CHECK(a.warnings[i].message == b.warnings[i].message);
        CHECK(a.warnings[i].scope == b.warnings[i].scope);
    }
}

// Whether `p` is absolute and normalised.
bool clean(const std::string& p) { return sbx::paths::is_absolute(p) && sbx::paths::normalize(p) == p; }

bool has_nul(std::string_view s) { return s.find('\0') != std::string_view::npos; }

// What every accepted plan promises a launcher (read_plan.hpp, docs/plan.md).
// Counts violations instead of asserting each, so the fuzz loops stay cheap.
std::vector<std::string> broken_promises(const sbx::Plan& p) {
    std::vector<std::string> out;
    auto expect = [&](bool ok, std::string what) {
        if (!ok) out.push_back(std::move(what));
    };
    expect(p.version == 1, "version");
    expect(!p.argv.empty() && !p.argv.front().empty(), "argv");
    for (const auto& a : p.argv) expect(!has_nul(a), "NUL in argv");
    expect(clean(p.root) && p.root != "/", "root");
    expect(clean(p.tmpdir), "tmpdir");
    expect(clean(p.cwd), "cwd");
    expect(p.bwrap_path.empty() || clean(p.bwrap_path), "bwrapPath");
    expect(!sbx::paths::at_or_under(p.root, p.tmpdir) && !sbx::paths::at_or_under(p.tmpdir, p.root), "root/tmpdir");
    for (const auto& v : p.env) expect(sbx::valid_env_name(v.name) && !sbx::is_loader_variable(v.name) && !has_nul(v.value), "env " + v.name);
    for (const auto& v : p.loader_env) expect(sbx::valid_env_name(v.name) && sbx::is_loader_variable(v.name) && !has_nul(v.value), "loaderEnv " + v.name);
    for (std::size_t i = 0; i < p.pass_fds.size(); ++i)
        expect(p.pass_fds[i] >= 3 && (i == 0 || p.pass_fds[i - 1] < p.pass_fds[i]), "passFds");
    for (const auto& m : p.filesystem.mounts) {
        expect(clean(m.path) && m.path != "/", "mount path " + m.path);
        const bool binds = m.kind == sbx::MountKind::bind || m.kind == sbx::MountKind::ro_bind;
        expect(binds ? clean(m.source) : m.source.empty(), "mount source " + m.path);
        if (m.kind == sbx::MountKind::pin || m.kind == sbx::MountKind::mask_dir)
            expect(m.expect.exists && m.expect.type == sbx::FileType::directory, "pin/mask-dir expect " + m.path);
        if (m.kind == sbx::MountKind::mask_file)
            expect(m.expect.exists && m.expect.type != sbx::FileType::directory, "mask-file expect " + m.path);
        expect(m.expect.exists || (m.expect.dev == 0 && m.expect.ino == 0 && m.expect.nlink == 0), "identity " + m.path);
        expect(!has_nul(m.why), "why " + m.path);
    }
    for (const auto& ph : p.filesystem.placeholders) {
        expect(clean(ph.path) && ph.path != "/" && ph.path != p.root, "placeholder " + ph.path);
        expect(!sbx::paths::at_or_under(ph.path, p.tmpdir), "placeholder in tmpdir " + ph.path);
        expect(ph.parent.exists && ph.parent.type == sbx::FileType::directory, "placeholder parent " + ph.path);
    }
    for (const auto& w : p.warnings) expect(!has_nul(w.file) && !has_nul(w.key) && !has_nul(w.message), "warning");
    return out;
}

// to_json, parse_plan, compare every field, and to_json again: the same bytes.
void check_round_trip(const sbx::Plan& plan) {
    const std::string text = sbx::to_json(plan);
    auto back = sbx::parse_plan(text, std::string(kOrigin));
    REQUIRE_MESSAGE(back.has_value(), (back ? std::string() : sbx::to_string(back.error())) << "\n" << text);
    check_same(plan, *back);
    CHECK(sbx::to_json(*back) == text);
    const auto broken = broken_promises(*back);
    CHECK_MESSAGE(broken.empty(), (broken.empty() ? std::string() : broken.front()));
}

// Any bytes: a plan that keeps every promise and writes back to itself, or an
// INVALID_PLAN error about `kOrigin`. Returns whether the text was accepted;
// `bad` collects a description of each input that broke the contract.
bool parse_any(const std::string& text, std::vector<std::string>& bad) {
    auto p = sbx::parse_plan(text, std::string(kOrigin));
    if (!p) {
        if (p.error().code != sbx::Errc::invalid_plan || p.error().file != kOrigin || p.error().message.empty())
            bad.push_back("wrong error " + sbx::to_string(p.error()) + " for " + sbx::json::quote(text));
        return false;
    }
    for (const auto& why : broken_promises(*p)) bad.push_back("accepted (" + why + "): " + sbx::json::quote(text));
    const std::string once = sbx::to_json(*p);
    auto again = sbx::parse_plan(once, std::string(kOrigin));
    if (!again) bad.push_back("its own JSON is refused: " + sbx::json::quote(text));
    else if (sbx::to_json(*again) != once) bad.push_back("its JSON changes when read back: " + sbx::json::quote(text));
    return true;
}

// A small deterministic generator, so a failing mutation reproduces.
struct Lcg {
    std::uint64_t state;
    std::uint32_t next() {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<std::uint32_t>(state >> 33);
    }
    std::size_t below(std::size_t n) { return n == 0 ? 0 : next() % n; }
};

// A settings file parsed for `kind` in the layout of these tests: HOME /home/u, root /r.
sbx::Settings settings(sbx::LayerKind kind, const std::string& file, const std::string& home, const std::string& root,
                       std::string_view text) {
    const std::string dir = sbx::paths::parent(sbx::paths::parent(file));
    sbx::SettingsSource src{kind, file, {home, kind == sbx::LayerKind::managed ? sbx::paths::parent(file) : dir}, root};
    auto s = sbx::parse_settings(text, src);
    REQUIRE_MESSAGE(s.has_value(), (s ? std::string() : sbx::to_string(s.error())));
    return std::move(*s);
}

sbx::Plan make(const sbx::Policy& policy, const sbx::PlanRequest& req, const sbx::FsView& fs) {
    auto p = sbx::make_plan(policy, req, fs);
    REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : sbx::to_string(p.error())));
    return std::move(*p);
}

bool has_mount(const sbx::Plan& p, sbx::MountKind kind, std::string_view path) {
    for (const auto& m : p.filesystem.mounts)
        if (m.kind == kind && m.path == path) return true;
    return false;
}

}  // namespace

// ---------------------------------------------------------------------------
// Round trips

TEST_CASE("plan: the hand-written document reads as written") {
    auto p = parsed(kBase);
    CHECK(p.version == 1);
    CHECK(p.argv == std::vector<std::string>{"make", "test"});
    CHECK(p.cwd == "/r/src");
    CHECK(p.root == "/r");
    CHECK(p.root_why == "the top of the git work tree holding the current directory (/r/.git)");
    CHECK(p.tmpdir == kTmp);
    CHECK(p.env == std::vector<sbx::EnvVar>{{"PATH", "/usr/bin:/bin"}, {"HOME", "/home/u"}, {"TMPDIR", std::string(kTmp)}});
    CHECK(p.loader_env == std::vector<sbx::EnvVar>{{"LD_PRELOAD", "/opt/lib/libfast.so"}, {"GCONV_PATH", "/opt/gconv"}});
    REQUIRE(p.env_removed.size() == 2);
    CHECK(p.env_removed[1].name == "PGURL");
    CHECK(p.env_removed[1].why == "listed");
    CHECK(p.pass_fds == std::vector<int>{3, 7, 2147483647});
    CHECK(p.bwrap_path == "/usr/bin/bwrap");
    CHECK(p.enabled);
    CHECK_FALSE(p.fail_if_unavailable);
    CHECK(p.allow_unix_sockets);
    CHECK(p.network.mode == sbx::NetworkMode::none);
    CHECK(p.filesystem.isolated);
    REQUIRE(p.filesystem.mounts.size() == 13);
    const auto& pin = p.filesystem.mounts[2];
    CHECK(pin.kind == sbx::MountKind::pin);
    CHECK(pin.path == "/r/.git");
    CHECK(pin.source.empty());
    CHECK(pin.expect.exists);
    CHECK(pin.expect.type == sbx::FileType::directory);
    CHECK(pin.expect.dev == 2049);
    CHECK(pin.expect.ino == 12);
    CHECK(pin.expect.nlink == 7);
    CHECK(pin.why == "pinned: the root's .git directory");
    CHECK(p.filesystem.mounts[1].expect.exists == false);
    CHECK(p.filesystem.mounts[5].kind == sbx::MountKind::mask_dir);
    CHECK(p.filesystem.mounts[6].kind == sbx::MountKind::mask_file);
    CHECK(p.filesystem.mounts[6].expect.type == sbx::FileType::regular);
    CHECK(p.filesystem.mounts[7].expect.type == sbx::FileType::symlink);
    CHECK(p.filesystem.mounts[8].expect.type == sbx::FileType::other);
    CHECK(p.filesystem.mounts[10].kind == sbx::MountKind::ro_bind);
    CHECK(p.filesystem.mounts[10].source == "/srv/known_hosts");
    const auto& link = p.filesystem.mounts[12];
    CHECK(link.kind == sbx::MountKind::ro_link);
    CHECK(link.path == "/r/.mcp.json");
    CHECK(link.source.empty());
    CHECK(link.expect.type == sbx::FileType::symlink);
    CHECK(link.expect.ino == 24);
    REQUIRE(p.filesystem.placeholders.size() == 3);
    CHECK(p.filesystem.placeholders[0].kind == sbx::Placeholder::file);
    CHECK(p.filesystem.placeholders[1].kind == sbx::Placeholder::directory);
    CHECK(p.filesystem.placeholders[1].parent.ino == 22);
    CHECK(p.filesystem.placeholders[1].why == "editor settings");
    CHECK(p.filesystem.placeholders[2].kind == sbx::Placeholder::commondir);
    CHECK(p.filesystem.placeholders[2].path == "/r/.git/commondir");
    REQUIRE(p.warnings.size() == 1);
    CHECK(p.warnings[0].key == "sandbox.network.allowedDomains[0]");
    check_round_trip(p);
}

TEST_CASE("plan: a plan from make_plan over a repository and a home comes back field for field and byte for byte") {
    sbx::MemoryFs fs;
    fs.dir("/r/src").file("/r/src/main.c");
    fs.dir("/r/.git/objects").dir("/r/.git/refs").file("/r/.git/HEAD", "ref: refs/heads/main\n");
    fs.file("/r/.git/config").dir("/r/.git/hooks").file("/r/.git/hooks/pre-commit.sample");
    fs.dir("/home/u/.ssh").file("/home/u/.ssh/id_ed25519").file("/home/u/.ssh/known_hosts");
    fs.dir("/home/u/.claude").file("/home/u/.bashrc").file("/home/u/.netrc");
    std::vector<sbx::Settings> layers;
    layers.push_back(settings(sbx::LayerKind::user, "/home/u/.claude/settings.json", "/home/u", "/r", R"J({"sandbox": {
        "enabled": true, "failIfUnavailable": false,
        "filesystem": {"denyRead": ["~/.ssh", "~/.netrc"], "allowRead": ["~/.ssh/known_hosts"]},
        "network": {"allowUnixSockets": ["/run/user/1000/bus"], "allowedDomains": ["example.com", "localhost:3000", "[::1]:8080"], "allowLocalBinding": true},
        "credentials": {"envVars": ["PGURL"]}}})J"));
    layers.push_back(settings(sbx::LayerKind::managed, "/etc/claude-code/managed-settings.json", "/home/u", "/r",
                              R"J({"sandbox": {"bwrapPath": "/usr/bin/bwrap"}})J"));
    auto policy = sbx::effective_policy(std::move(layers), {}, fs, {"/home/u"});
    REQUIRE_MESSAGE(policy.has_value(), (policy ? std::string() : sbx::to_string(policy.error())));

    const std::vector<std::string> vars{"PATH=/usr/bin:/bin", "HOME=/home/u",  "GITHUB_TOKEN=ghp_x",
                                           "PGURL=postgres://db", "LD_PRELOAD=/opt/x.so", "TMPDIR=/var/tmp",
                                           "LANG=C.UTF-8",       "XDG_SESSION_TYPE=wayland", "WEIRD=caf\xe9",
                                           "QUOTE=say \"hi\"\\\t\x01", "UNI=\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"};
    const std::vector<std::string> pass{"XDG_SESSION_TYPE"};
    sbx::PlanRequest req{{"make", "-j2", "test suite", ""}, "/r", "/r/src", "/home/u", std::string(kTmp), vars, pass, std::nullopt, std::nullopt};
    auto plan = make(*policy, req, fs);

    // The plan holds something of every part, or the round trip proves little.
    CHECK(plan.bwrap_path == "/usr/bin/bwrap");
    CHECK(plan.enabled);
    CHECK_FALSE(plan.fail_if_unavailable);
    // A listed socket is the launcher's to decide: the filter keeps its rules.
    CHECK_FALSE(plan.allow_unix_sockets);
    CHECK(plan.unix_socket_paths == std::vector<std::string>{"/run/user/1000/bus"});
    CHECK(plan.cwd == "/r/src");
    CHECK_FALSE(plan.loader_env.empty());
    CHECK(plan.env_removed.size() == 3);  // GITHUB_TOKEN, PGURL, WEIRD
    CHECK_FALSE(plan.warnings.empty());
    // Linux opens exactly the listed socket now: nothing to warn of.
    CHECK(std::none_of(plan.warnings.begin(), plan.warnings.end(),
                       [](const sbx::Warning& w) { return w.message.find("Unix socket") != std::string::npos; }));
    CHECK(plan.network.mode == sbx::NetworkMode::proxy);
    CHECK_FALSE(plan.network.rules.allowed.empty());
    CHECK(plan.network.rules.local);
    CHECK(plan.network.local_why == "/home/u/.claude/settings.json sandbox.network.allowLocalBinding");
    // localhost:3000 on both loopbacks, [::1]:8080 on its own.
    REQUIRE(plan.network.forwards.size() == 3);
    CHECK(sbx::net::to_string(plan.network.forwards[0].listen) == "::1");
    CHECK(plan.network.forwards[0].port == 8080);
    CHECK(plan.network.forwards[1].target == "localhost");
    CHECK(has_mount(plan, sbx::MountKind::pin, "/r/.git"));
    CHECK(has_mount(plan, sbx::MountKind::mask_dir, "/home/u/.ssh"));
    CHECK(has_mount(plan, sbx::MountKind::mask_file, "/home/u/.netrc"));
    CHECK(has_mount(plan, sbx::MountKind::ro_bind, "/home/u/.ssh/known_hosts"));
    CHECK(has_mount(plan, sbx::MountKind::ro_bind, "/r/.git/hooks"));
    CHECK(has_mount(plan, sbx::MountKind::bind, std::string(kTmp)));
    CHECK_FALSE(plan.filesystem.placeholders.empty());
    CHECK(std::any_of(plan.filesystem.placeholders.begin(), plan.filesystem.placeholders.end(),
                      [](const sbx::PlaceholderOp& ph) { return ph.kind == sbx::Placeholder::commondir; }));
    CHECK(plan.filesystem.git_audit == std::vector<std::string>{"/r"});  // audited after the command
    // The rules the mounts were made from travel too, for sbx-mac.
    auto has_rule = [&](sbx::FsRule::Kind k, std::string_view pattern) {
        return std::any_of(plan.rules.begin(), plan.rules.end(),
                           [&](const sbx::PlanRule& r) { return r.kind == k && r.pattern == pattern; });
    };
    CHECK(has_rule(sbx::FsRule::Kind::writable, "/r"));
    CHECK(has_rule(sbx::FsRule::Kind::deny_read, "/home/u/.ssh"));
    CHECK(has_rule(sbx::FsRule::Kind::allow_read, "/home/u/.ssh/known_hosts"));
    CHECK(std::any_of(plan.rules.begin(), plan.rules.end(), [](const sbx::PlanRule& r) {
        return r.deny == sbx::FsRule::Deny::credential_store && r.pattern == "/home/u/.aws";
    }));
    CHECK(has_rule(sbx::FsRule::Kind::protect, "/r/.git/hooks"));
    check_round_trip(plan);
}

TEST_CASE("plan: a plan made on the real disk, with its real device and inode numbers, comes back") {
    sbx_test::TempDir tmp("sbx-plan-parse");
    tmp.mkdir("proj/.git/hooks");
    tmp.mkdir("proj/.git/objects");
    tmp.write("proj/.git/HEAD", "ref: refs/heads/main\n");
    tmp.write("proj/.git/config", "[core]\n");
    tmp.write("proj/src/main.c", "int main(void) { return 0; }\n");
    tmp.mkdir("home/.ssh");
    tmp.write("home/.ssh/id_ed25519", "secret\n");
    tmp.write("home/.aws/credentials", "[default]\n");
    const std::string root = tmp.at("proj"), home = tmp.at("home");
    std::vector<sbx::Settings> layers;
    layers.push_back(settings(sbx::LayerKind::user, home + "/.claude/settings.json", home, root,
                              R"J({"sandbox": {"filesystem": {"denyRead": ["~/.ssh", "~/.aws/credentials"]}}})J"));
    sbx::DiskFs fs;
    auto policy = sbx::merge(std::move(layers), {}, fs);
    REQUIRE(policy.has_value());
    const std::vector<std::string> vars{"PATH=/bin", "HOME=" + home};
    sbx::PlanRequest req{{"true"}, root, "", home, tmp.at("sbx-run"), vars, {}, std::nullopt, std::nullopt};
    auto plan = make(*policy, req, fs);
    CHECK(plan.cwd == root);
    CHECK_FALSE(plan.enabled);
    CHECK(has_mount(plan, sbx::MountKind::mask_dir, home + "/.ssh"));
    CHECK(has_mount(plan, sbx::MountKind::mask_file, home + "/.aws/credentials"));
    struct stat st {};
    REQUIRE(::lstat((root + "/.git").c_str(), &st) == 0);
    bool found = false;
    for (const auto& m : plan.filesystem.mounts)
        if (m.path == root + "/.git") {
            found = true;
            CHECK(m.expect.dev == static_cast<std::uint64_t>(st.st_dev));
            CHECK(m.expect.ino == static_cast<std::uint64_t>(st.st_ino));
        }
    CHECK(found);
    check_round_trip(plan);
}

TEST_CASE("plan: a plan with filesystem.disabled, and one with empty lists, come back") {
    sbx::MemoryFs fs;
    fs.dir("/r").dir("/home/u");
    std::vector<sbx::Settings> layers;
    layers.push_back(settings(sbx::LayerKind::user, "/home/u/.claude/settings.json", "/home/u", "/r",
                              R"J({"sandbox": {"filesystem": {"disabled": true}}})J"));
    auto policy = sbx::merge(std::move(layers), {}, fs);
    REQUIRE(policy.has_value());
    sbx::PlanRequest req{{"sh", "-c", "echo hi"}, "/r", "", "/home/u", std::string(kTmp), {}, {}, std::nullopt, std::nullopt};
    auto plan = make(*policy, req, fs);
    CHECK_FALSE(plan.filesystem.isolated);
    CHECK(plan.filesystem.mounts.empty());
    CHECK(plan.filesystem.git_audit.empty());  // the command may write anywhere: there is nothing to audit apart
    check_round_trip(plan);

    sbx::Plan bare;  // every list empty, no bwrapPath
    bare.argv = {"x"};
    bare.root = "/r";
    bare.cwd = "/";
    bare.tmpdir = "/t";
    check_round_trip(bare);
}

TEST_CASE("plan: identity numbers come back exactly, up to 2^64-1") {
    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1} << 53, (std::uint64_t{1} << 53) + 1,
                            std::uint64_t{1} << 63, max - 1, max}) {
        CAPTURE(n);
        sbx::Plan p;
        p.argv = {"x"};
        p.root = "/r";
        p.cwd = "/r";
        p.tmpdir = "/t";
        p.filesystem.mounts.push_back({sbx::MountKind::pin, "/r/.git", "", {true, sbx::FileType::directory, n, n, n}, "why"});
        p.filesystem.mounts.push_back({sbx::MountKind::ro_bind, "/r/a", "/r/a", {}, ""});
        p.filesystem.placeholders.push_back({"/r/a", sbx::Placeholder::file, {true, sbx::FileType::directory, n, n, n}, ""});
        check_round_trip(p);
        const auto s = std::to_string(n);
        CHECK(sbx::to_json(p).find("\"dev\":" + s + ",\"ino\":" + s + ",\"nlink\":" + s) != std::string::npos);
    }
    // Written by hand, 2^64-1 is read exactly in each of the three places.
    const std::string ident = R"J("dev": 2049, "ino": 12, "nlink": 7)J";
    for (const char* field : {"2049", "12", "7"}) {
        CAPTURE(field);
        std::string to = ident;
        const auto at = to.find(std::string(": ") + field);
        to.replace(at + 2, std::string_view(field).size(), "18446744073709551615");
        const auto e = parsed(edit(kBase, ident, to)).filesystem.mounts[2].expect;
        CHECK(e.dev == (std::string_view(field) == "2049" ? max : 2049));
        CHECK(e.ino == (std::string_view(field) == "12" ? max : 12));
        CHECK(e.nlink == (std::string_view(field) == "7" ? max : 7));
    }
}

TEST_CASE("plan: strings with every escape and any Unicode come back unchanged") {
    sbx::Plan p;
    p.argv = {"printf", "%s\\n", "\"quoted\"", "tab\there", "nl\nhere", "\x01\x1f\x7f", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
              "/slash/", "\xe2\x80\xa8\xe2\x80\xa9"};
    p.root = "/r/\xc3\xa9t\xc3\xa9 \"x\"";
    p.cwd = p.root + "/sub dir";
    p.tmpdir = "/tmp/\\back";
    p.env = {{"A", ""}, {"B", "\"\\/\b\f\n\r\t"}, {"TMPDIR", p.tmpdir}};
    p.env_removed = {{"C", ""}};
    p.warnings = {{"", "", "a warning with neither file nor key"}};
    check_round_trip(p);
}

TEST_CASE("plan: a warning's platform says which launcher shows it; plans without one read as before") {
    // The hand-written plan's warning has none: it is for every launcher, and written back without one.
    auto p = parsed(kBase);
    REQUIRE(p.warnings.size() == 1);
    CHECK(p.warnings[0].scope == sbx::WarningScope::any);
    CHECK(sbx::to_json(p).find("\"platform\"") == std::string::npos);

    auto linux_only = parsed(edit(kBase, R"J("message": "no network proxy yet")J",
                                  R"J("message": "no network proxy yet", "platform": "linux")J"));
    REQUIRE(linux_only.warnings.size() == 1);
    CHECK(linux_only.warnings[0].scope == sbx::WarningScope::linux_only);
    CHECK(sbx::to_json(linux_only).find(R"J("platform":"linux")J") != std::string::npos);
    check_round_trip(linux_only);

    // Another platform's name, or no string, is refused at the key.
    check_refused(edit(kBase, R"J("message": "no network proxy yet")J", R"J("message": "no network proxy yet", "platform": "mac")J"),
                  "warnings[0].platform");
    check_refused(edit(kBase, R"J("message": "no network proxy yet")J", R"J("message": "no network proxy yet", "platform": 1)J"),
                  "warnings[0].platform");
}

// ---------------------------------------------------------------------------
// Optional keys

// Over 80 lines: one SUBCASE per optional key, each a few lines.
TEST_CASE("plan: optional keys may be left out") {
    SUBCASE("rootWhy") {
        auto p = parsed(edit(kBase, R"J( "rootWhy": "the top of the git work tree holding the current directory (/r/.git)",)J", ""));
        CHECK(p.root_why.empty());
        // Written only when there is one: plans made without a reason read as before.
        CHECK(sbx::to_json(p).find("rootWhy") == std::string::npos);
        check_round_trip(p);
    }
    SUBCASE("bwrapPath") {
        auto p = parsed(edit(kBase, R"J("bwrapPath": "/usr/bin/bwrap",)J", ""));
        CHECK(p.bwrap_path.empty());
    }
    SUBCASE("warnings") {
        auto p = parsed(cut(kBase, ",\n  \"warnings\": [", "\n  ]"));
        CHECK(p.warnings.empty());
    }
    SUBCASE("command.envRemoved") {
        auto p = parsed(cut(kBase, ",\n    \"envRemoved\": [", "]"));
        CHECK(p.env_removed.empty());
    }
    SUBCASE("command.passFds") {
        auto p = parsed(edit(kBase, ", \"passFds\": [3, 7, 2147483647]", ""));
        CHECK(p.pass_fds.empty());
        // Written only when there is one: plans that pass none read as before.
        CHECK(sbx::to_json(p).find("passFds") == std::string::npos);
        check_round_trip(p);
    }
    SUBCASE("command.envRemoved[i].why") {
        auto p = parsed(edit(kBase, R"J(, "why": "listed")J", ""));
        CHECK(p.env_removed[1].why.empty());
        CHECK(p.env_removed[0].why == "the name contains TOKEN");
    }
    SUBCASE("filesystem.mounts[i].why") {
        auto p = parsed(edit(kBase, R"J(, "why": "pinned: the root's .git directory")J", ""));
        CHECK(p.filesystem.mounts[2].why.empty());
    }
    SUBCASE("filesystem.placeholders[i].why") {
        auto p = parsed(edit(kBase, R"J(, "why": "editor settings")J", ""));
        CHECK(p.filesystem.placeholders[1].why.empty());
    }
    SUBCASE("a commondir placeholder's why") {
        auto p = parsed(edit(kBase, R"J(, "why": "points git at another git directory")J", ""));
        CHECK(p.filesystem.placeholders[2].why.empty());
    }
    SUBCASE("warnings[i].file and .key") {
        auto p = parsed(edit(kBase, R"J("file": "/home/u/.claude/settings.json", "key": "sandbox.network.allowedDomains[0]", )J", ""));
        REQUIRE(p.warnings.size() == 1);
        CHECK(p.warnings[0].file.empty());
        CHECK(p.warnings[0].key.empty());
        CHECK(p.warnings[0].message == "no network proxy yet");
    }
    SUBCASE("all of them at once, and empty lists") {
        std::string t = edit(kBase, R"J("bwrapPath": "/usr/bin/bwrap",)J", "");
        t = cut(t, ",\n  \"warnings\": [", "\n  ]");
        t = cut(t, ",\n    \"envRemoved\": [", "]");
        t = edit(t, ", \"passFds\": [3, 7, 2147483647]", "");
        t = edit(t, R"J("loaderEnv": {"LD_PRELOAD": "/opt/lib/libfast.so", "GCONV_PATH": "/opt/gconv"})J", R"J("loaderEnv": {})J");
        t = edit(t, R"J("env": {"PATH": "/usr/bin:/bin", "HOME": "/home/u", "TMPDIR": "/tmp/sbx-0123456789abcdef"})J", R"J("env": {})J");
        t = cut(t, "\"mounts\": [\n", "\n    ],");
        t = cut(t, "\"placeholders\": [\n", "\n    ],");
        t = cut(t, "\n    \"gitAudit\": [", "]");
        t = edit(t, "\"isolated\": true,\n    ", "\"isolated\": true, \"mounts\": [], \"placeholders\": []");
        auto p = parsed(t);
        CHECK(p.env.empty());
        CHECK(p.filesystem.mounts.empty());
        CHECK(p.filesystem.placeholders.empty());
        CHECK(p.filesystem.git_audit.empty());
        check_round_trip(p);
    }
    SUBCASE("filesystem.gitAudit") {
        auto p = parsed(cut(kBase, ",\n    \"gitAudit\": [", "]"));
        CHECK(p.filesystem.git_audit.empty());
        // Written only when there is one: a plan without reads as before.
        CHECK(sbx::to_json(p).find("gitAudit") == std::string::npos);
        check_round_trip(p);
    }
    SUBCASE("the order of keys within an object does not matter, nor white space") {
        auto p = parsed(R"J(  {"filesystem":{"placeholders":[],"mounts":[],"isolated":false},
            "network":{"mode":"none"},"seccomp":{"allowUnixSockets":false},"failIfUnavailable":true,"enabled":false,
            "tmpdir":"/t","root":"/r","command":{"loaderEnv":{},"env":{},"cwd":"/","argv":["x"]},"version":1}
        )J");
        CHECK(p.argv == std::vector<std::string>{"x"});
        CHECK_FALSE(p.filesystem.isolated);
    }
}

// ---------------------------------------------------------------------------
// Strictness: keys

TEST_CASE("plan: an unknown key is refused, at any depth") {
    check_refusals({
        {R"J("version": 1,)J", R"J("version": 1, "extra": 0,)J", "extra"},
        {R"J("version": 1,)J", R"J("version": 1, "Version": 1,)J", "Version"},
        {R"J("cwd": "/r/src",)J", R"J("cwd": "/r/src", "foo": 1,)J", "command.foo"},
        {R"J(, "why": "the root"})J", R"J(, "why": "the root", "bar": null})J", "filesystem.mounts[0].bar"},
        {R"J("ino": 12,)J", R"J("ino": 12, "baz": 0,)J", "filesystem.mounts[2].expect.baz"},
        {R"J("source": "/r/.bashrc", "expect": {"exists": false})J", R"J("source": "/r/.bashrc", "expect": {"exists": false, "baz": 1})J",
         "filesystem.mounts[3].expect.baz"},
        {R"J({"allowUnixSockets": true})J", R"J({"allowUnixSockets": true, "allowAll": true})J", "seccomp.allowAll"},
        {R"J({"mode": "none"})J", R"J({"mode": "none", "proxy": "http://127.0.0.1:3128"})J", "network.proxy"},
        {R"J("isolated": true,)J", R"J("isolated": true, "extra": [],)J", "filesystem.extra"},
        {R"J("why": "editor settings")J", R"J("why": "editor settings", "mode": 1)J", "filesystem.placeholders[1].mode"},
        {R"J("ino": 22,)J", R"J("ino": 22, "mode": 16877,)J", "filesystem.placeholders[1].parent.mode"},
        {R"J("why": "points git at another git directory")J", R"J("why": "points git at another git directory", "x": 1)J",
         "filesystem.placeholders[2].x"},
        {R"J("why": "listed")J", R"J("why": "listed", "value": "secret")J", "command.envRemoved[1].value"},
        {R"J("message": "no network proxy yet")J", R"J("message": "no network proxy yet", "line": 3)J", "warnings[0].line"},
    });
}

TEST_CASE("plan: a missing required key is refused, naming it") {
    const std::string t(kBase);
    struct Missing {
        std::string text;
        std::string key;
    };
    const std::vector<Missing> cases{
        {edit(t, R"J("version": 1,)J", ""), "version"},
        {cut(t, "\"command\": {", "\n  },"), "command"},
        {edit(t, R"J("argv": ["make", "test"],)J", ""), "command.argv"},
        {edit(t, R"J("cwd": "/r/src",)J", ""), "command.cwd"},
        {edit(t, R"J("env": {"PATH": "/usr/bin:/bin", "HOME": "/home/u", "TMPDIR": "/tmp/sbx-0123456789abcdef"},)J", ""), "command.env"},
        {edit(t, R"J("loaderEnv": {"LD_PRELOAD": "/opt/lib/libfast.so", "GCONV_PATH": "/opt/gconv"},)J", ""), "command.loaderEnv"},
        {edit(t, R"J("root": "/r",)J", ""), "root"},
        {edit(t, R"J("tmpdir": "/tmp/sbx-0123456789abcdef",)J", ""), "tmpdir"},
        {edit(t, R"J("enabled": true,)J", ""), "enabled"},
        {edit(t, R"J("failIfUnavailable": false,)J", ""), "failIfUnavailable"},
        {edit(t, R"J("seccomp": {"allowUnixSockets": true},)J", ""), "seccomp"},
        {edit(t, R"J({"allowUnixSockets": true})J", "{}"), "seccomp.allowUnixSockets"},
        {edit(t, R"J("network": {"mode": "none"},)J", ""), "network"},
        {edit(t, R"J({"mode": "none"})J", "{}"), "network.mode"},
        {cut(t, "\"filesystem\": {", "\n  },"), "filesystem"},
        {edit(t, R"J("isolated": true,)J", ""), "filesystem.isolated"},
        {cut(t, "\"mounts\": [", "\n    ],"), "filesystem.mounts"},
        {cut(t, ",\n    \"placeholders\": [", "\n    ]"), "filesystem.placeholders"},
        {edit(t, R"J("kind": "pin", )J", ""), "filesystem.mounts[2].kind"},
        {edit(t, R"J("path": "/r/.git", )J", ""), "filesystem.mounts[2].path"},
        {edit(t, R"J("expect": {"exists": true, "type": "directory", "dev": 2049, "ino": 12, "nlink": 7}, )J", ""),
         "filesystem.mounts[2].expect"},
        {edit(t, R"J({"exists": true, "type": "directory", "dev": 2049, "ino": 12)J", R"J({"type": "directory", "dev": 2049, "ino": 12)J"),
         "filesystem.mounts[2].expect.exists"},
        {edit(t, R"J("type": "directory", "dev": 2049, "ino": 12)J", R"J("dev": 2049, "ino": 12)J"), "filesystem.mounts[2].expect.type"},
        {edit(t, R"J("dev": 2049, "ino": 12, )J", R"J("ino": 12, )J"), "filesystem.mounts[2].expect.dev"},
        {edit(t, R"J("ino": 12, )J", ""), "filesystem.mounts[2].expect.ino"},
        {edit(t, R"J(, "nlink": 7})J", "}"), "filesystem.mounts[2].expect.nlink"},
        {edit(t, R"J({"path": "/r/.vscode", "kind")J", R"J({"kind")J"), "filesystem.placeholders[1].path"},
        {edit(t, R"J("kind": "directory", "parent")J", R"J("parent")J"), "filesystem.placeholders[1].kind"},
        {edit(t, R"J("parent": {"exists": true, "type": "directory", "dev": 2049, "ino": 22, "nlink": 6}, )J", ""),
         "filesystem.placeholders[1].parent"},
        {edit(t, R"J("ino": 22, )J", ""), "filesystem.placeholders[1].parent.ino"},
        {edit(t, R"J({"path": "/r/.git/commondir", "kind")J", R"J({"kind")J"), "filesystem.placeholders[2].path"},
        {edit(t, R"J("name": "PGURL", )J", ""), "command.envRemoved[1].name"},
        {edit(t, R"J(, "message": "no network proxy yet")J", ""), "warnings[0].message"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.key);
        check_refused(c.text, c.key);
    }
}

TEST_CASE("plan: a key given twice is refused, however it is spelled") {
    check_refusals({
        {R"J("enabled": true,)J", R"J("enabled": true, "enabled": true,)J", "enabled"},
        {R"J("enabled": true,)J", R"J("enabled": true, "enabled": false,)J", "enabled"},
        {R"J("version": 1,)J", R"J("version": 1, "version": 1,)J", "version"},
        {R"J("cwd": "/r/src",)J", R"J("cwd": "/r/src", "cwd": "/r",)J", "command.cwd"},
        {R"J("cwd": "/r/src",)J", R"J("cwd": "/r/src", "c\u0077d": "/r",)J", "command.cwd"},
        {R"J("ino": 12,)J", R"J("ino": 12, "ino": 13,)J", "filesystem.mounts[2].expect.ino"},
        {R"J({"exists": false}, "why": "placeholder: bash)J", R"J({"exists": false, "exists": false}, "why": "placeholder: bash)J",
         "filesystem.mounts[3].expect.exists"},
        {R"J({"PATH": "/usr/bin:/bin",)J", R"J({"PATH": "/usr/bin:/bin", "PATH": "/evil",)J", "command.env.PATH"},
        {R"J({"PATH": "/usr/bin:/bin",)J", R"J({"PATH": "/usr/bin:/bin", "P\u0041TH": "/evil",)J", "command.env.PATH"},
        {R"J("GCONV_PATH": "/opt/gconv")J", R"J("GCONV_PATH": "/opt/gconv", "LD_PRELOAD": "/evil.so")J", "command.loaderEnv.LD_PRELOAD"},
        {R"J("kind": "pin", )J", R"J("kind": "pin", "kind": "bind", )J", "filesystem.mounts[2].kind"},
        {R"J("isolated": true,)J", R"J("isolated": true, "isolated": false,)J", "filesystem.isolated"},
        {R"J({"mode": "none"})J", R"J({"mode": "none", "mode": "none"})J", "network.mode"},
        {R"J("why": "editor settings")J", R"J("why": "editor settings", "why": "")J", "filesystem.placeholders[1].why"},
    });
    // The same value twice in a list is not a duplicated key.
    check_accepted(edit(kBase, R"J(["make", "test"])J", R"J(["make", "make", "make"])J"));
}

// ---------------------------------------------------------------------------
// Strictness: values

TEST_CASE("plan: only version 1, as a JSON integer, is read") {
    for (const char* v : {"0", "2", "-1", "\"1\"", "1.0", "1e0", "10e-1", "true", "null", "[1]", "{}", "18446744073709551615",
                          "9223372036854775807", "-9223372036854775808", "-0"}) {
        CAPTURE(v);
        check_refused(edit(kBase, R"J("version": 1,)J", std::string("\"version\": ") + v + ","), "version");
    }
    // A number JSON cannot hold is malformed JSON, located.
    auto p = sbx::parse_plan(edit(kBase, R"J("version": 1,)J", R"J("version": 18446744073709551616,)J"), std::string(kOrigin));
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error().code == sbx::Errc::invalid_plan);
    CHECK(p.error().line == 2);
}

TEST_CASE("plan: a document of another version is refused for its version, not for its keys") {
    const std::string v2 = edit(kBase, R"J("version": 1,)J", R"J("version": 2, "proxy": {"port": 3128},)J");
    check_refused(v2, "version");
    check_refused(edit(edit(kBase, R"J("version": 1,)J", R"J("version": 2,)J"), R"J("seccomp": {"allowUnixSockets": true},)J", ""),
                  "version");
    // Placed last, and with a version of the wrong type.
    check_refused(edit(edit(kBase, R"J("version": 1,)J", ""), "\n}", ",\n  \"version\": 3, \"x\": 1\n}"), "version");
    check_refused(edit(kBase, R"J("version": 1,)J", R"J("version": "2", "proxy": 1,)J"), "version");
}

TEST_CASE("plan: a value of the wrong type is refused, naming its key") {
    check_refusals({
        {R"J("enabled": true,)J", R"J("enabled": "true",)J", "enabled"},
        {R"J("enabled": true,)J", R"J("enabled": 1,)J", "enabled"},
        {R"J("enabled": true,)J", R"J("enabled": null,)J", "enabled"},
        {R"J("failIfUnavailable": false,)J", R"J("failIfUnavailable": "no",)J", "failIfUnavailable"},
        {R"J("allowUnixSockets": true)J", R"J("allowUnixSockets": "yes")J", "seccomp.allowUnixSockets"},
        {R"J("isolated": true,)J", R"J("isolated": 0,)J", "filesystem.isolated"},
        {R"J("exists": false}, "why": "the command's)J", R"J("exists": "false"}, "why": "the command's)J",
         "filesystem.mounts[1].expect.exists"},
        {R"J("root": "/r",)J", R"J("root": 5,)J", "root"},
        {R"J("root": "/r",)J", R"J("root": ["/r"],)J", "root"},
        {R"J("rootWhy": "the top of the git work tree holding the current directory (/r/.git)",)J", R"J("rootWhy": 5,)J", "rootWhy"},
        {R"J("rootWhy": "the top of the git work tree holding the current directory (/r/.git)",)J", R"J("rootWhy": null,)J", "rootWhy"},
        {R"J("rootWhy": "the top of)J", R"J("rootWhy": "\u0000 of)J", "rootWhy"},
        {R"J("tmpdir": "/tmp/sbx-0123456789abcdef",)J", R"J("tmpdir": null,)J", "tmpdir"},
        {R"J("cwd": "/r/src",)J", R"J("cwd": {},)J", "command.cwd"},
        {R"J("bwrapPath": "/usr/bin/bwrap",)J", R"J("bwrapPath": false,)J", "bwrapPath"},
        {R"J("mode": "none")J", R"J("mode": 0)J", "network.mode"},
        {R"J(["make", "test"])J", R"J({"0": "make"})J", "command.argv"},
        {R"J(["make", "test"])J", R"J("make test")J", "command.argv"},
        {R"J(["make", "test"])J", R"J(["make", 7])J", "command.argv[1]"},
        {R"J(["make", "test"])J", R"J([["make"]])J", "command.argv[0]"},
        {R"J({"PATH": "/usr/bin:/bin", "HOME": "/home/u", "TMPDIR": "/tmp/sbx-0123456789abcdef"})J", "[]", "command.env"},
        {R"J("/usr/bin:/bin")J", R"J(["/usr/bin", "/bin"])J", "command.env.PATH"},
        {R"J("/usr/bin:/bin")J", R"J(null)J", "command.env.PATH"},
        {R"J("LD_PRELOAD": "/opt/lib/libfast.so")J", R"J("LD_PRELOAD": 1)J", "command.loaderEnv.LD_PRELOAD"},
        {R"J({"LD_PRELOAD": "/opt/lib/libfast.so", "GCONV_PATH": "/opt/gconv"})J", R"J("LD_PRELOAD")J", "command.loaderEnv"},
        {R"J({"name": "PGURL", "why": "listed"})J", R"J("PGURL")J", "command.envRemoved[1]"},
        {R"J("name": "PGURL")J", R"J("name": 1)J", "command.envRemoved[1].name"},
        {R"J("why": "listed")J", R"J("why": ["listed"])J", "command.envRemoved[1].why"},
        {R"J("seccomp": {"allowUnixSockets": true})J", R"J("seccomp": true)J", "seccomp"},
        {R"J("network": {"mode": "none"})J", R"J("network": "none")J", "network"},
        {R"J({"file": "/home/u/.claude/settings.json")J", R"J("a warning", {"file": "/home/u/.claude/settings.json")J", "warnings[0]"},
        {R"J("message": "no network proxy yet")J", R"J("message": 3)J", "warnings[0].message"},
        {R"J("key": "sandbox.network.allowedDomains[0]")J", R"J("key": ["sandbox"])J", "warnings[0].key"},
        {R"J("file": "/home/u/.claude/settings.json")J", R"J("file": null)J", "warnings[0].file"},
        {R"J({"kind": "pin")J", R"J("pin", {"kind": "pin")J", "filesystem.mounts[2]"},
        {R"J("kind": "pin")J", R"J("kind": 2)J", "filesystem.mounts[2].kind"},
        {R"J("path": "/r/.git", )J", R"J("path": ["/r/.git"], )J", "filesystem.mounts[2].path"},
        {R"J("source": "/srv/known_hosts")J", R"J("source": 1)J", "filesystem.mounts[10].source"},
        {R"J("expect": {"exists": true, "type": "directory", "dev": 2049, "ino": 12, "nlink": 7})J", R"J("expect": true)J",
         "filesystem.mounts[2].expect"},
        {R"J("why": "the root")J", R"J("why": 0)J", "filesystem.mounts[0].why"},
        {R"J("dev": 2049, "ino": 12)J", R"J("dev": "2049", "ino": 12)J", "filesystem.mounts[2].expect.dev"},
        {R"J("ino": 12)J", R"J("ino": null)J", "filesystem.mounts[2].expect.ino"},
        {R"J("nlink": 7)J", R"J("nlink": true)J", "filesystem.mounts[2].expect.nlink"},
        {R"J("type": "symlink", "dev": 2049, "ino": 15)J", R"J("type": 1, "dev": 2049, "ino": 15)J", "filesystem.mounts[7].expect.type"},
        {R"J({"path": "/r/.vscode", "kind")J", R"J({"path": 1, "kind")J", "filesystem.placeholders[1].path"},
        {R"J("kind": "directory", "parent")J", R"J("kind": true, "parent")J", "filesystem.placeholders[1].kind"},
        {R"J("parent": {"exists": true, "type": "directory", "dev": 2049, "ino": 22, "nlink": 6})J", R"J("parent": "/r")J",
         "filesystem.placeholders[1].parent"},
        {R"J("why": "editor settings")J", R"J("why": {})J", "filesystem.placeholders[1].why"},
        {R"J({"path": "/r/.git/commondir", "kind")J", R"J({"path": 0, "kind")J", "filesystem.placeholders[2].path"},
        {R"J("why": "points git at another git directory")J", R"J("why": false)J", "filesystem.placeholders[2].why"},
    });
    // Whole objects and arrays of the wrong type.
    struct Block {
        std::string text, key;
    };
    for (const auto& b : {Block{splice(kBase, "\"command\": {", "\n  },", "\"command\": [],"), "command"},
                          Block{splice(kBase, "\"filesystem\": {", "\n  },", "\"filesystem\": null,"), "filesystem"},
                          Block{splice(kBase, "\"mounts\": [", "\n    ],", "\"mounts\": {},"), "filesystem.mounts"},
                          Block{splice(kBase, "\"placeholders\": [", "\n    ]", "\"placeholders\": \"none\""),
                                "filesystem.placeholders"},
                          Block{splice(kBase, "\"warnings\": [", "\n  ]", "\"warnings\": {}"), "warnings"},
                          Block{splice(kBase, "\"envRemoved\": [", "]", "\"envRemoved\": {}"), "command.envRemoved"}}) {
        CAPTURE(b.key);
        check_refused(b.text, b.key);
    }
    // A document that is not an object at all.
    for (const char* doc : {"null", "[]", "1", "\"plan\"", "true", "[{\"version\": 1}]"}) {
        CAPTURE(doc);
        check_refused(doc, "");
    }
}

TEST_CASE("plan: every path is absolute and normalised") {
    struct Field {
        std::string context;  // the JSON around the path, with @ for it
        std::string good;
        std::string key;
    };
    const std::vector<Field> fields{
        {R"J("root": "@",)J", "/r", "root"},
        {R"J("tmpdir": "@",)J", std::string(kTmp), "tmpdir"},
        {R"J("cwd": "@",)J", "/r/src", "command.cwd"},
        {R"J("bwrapPath": "@",)J", "/usr/bin/bwrap", "bwrapPath"},
        {R"J("kind": "pin", "path": "@",)J", "/r/.git", "filesystem.mounts[2].path"},
        {R"J("kind": "mask-dir", "path": "@",)J", "/home/u/.ssh", "filesystem.mounts[5].path"},
        {R"J("path": "/r/.git/hooks", "source": "@",)J", "/r/.git/hooks", "filesystem.mounts[9].source"},
        {R"J("source": "@",)J", "/srv/known_hosts", "filesystem.mounts[10].source"},
        {R"J({"path": "@", "kind": "directory")J", "/r/.vscode", "filesystem.placeholders[1].path"},
        {R"J({"path": "@", "kind": "commondir")J", "/r/.git/commondir", "filesystem.placeholders[2].path"},
    };
    for (const auto& f : fields) {
        const auto at = f.context.find('@');
        const std::string good = f.context.substr(0, at) + f.good + f.context.substr(at + 1);
        for (const auto& bad : unclean_variants(f.good)) {
            CAPTURE(f.key);
            CAPTURE(bad);
            check_refused(edit(kBase, good, f.context.substr(0, at) + bad + f.context.substr(at + 1)), f.key);
        }
    }
}

TEST_CASE("plan: the root and the temporary directory") {
    check_refusals({
        {R"J("root": "/r",)J", R"J("root": "/",)J", "root"},
        {R"J("tmpdir": "/tmp/sbx-0123456789abcdef",)J", R"J("tmpdir": "/r/tmp",)J", "tmpdir"},
        {R"J("tmpdir": "/tmp/sbx-0123456789abcdef",)J", R"J("tmpdir": "/r",)J", "tmpdir"},
        {R"J("tmpdir": "/tmp/sbx-0123456789abcdef",)J", R"J("tmpdir": "/",)J", "tmpdir"},
        {R"J("root": "/r",)J", R"J("root": "/tmp/sbx-0123456789abcdef/r",)J", "tmpdir"},
        {R"J("root": "/r",)J", R"J("root": "/tmp",)J", "tmpdir"},
    });
    // Holding each other is by whole components: /r and /rtmp are apart.
    check_accepted(replace_all(std::string(kBase), kTmp, "/rtmp"));
    check_accepted(replace_all(std::string(kBase), kTmp, "/r2/t"));
}

TEST_CASE("plan: the command") {
    check_refusals({
        {R"J(["make", "test"])J", "[]", "command.argv"},
        {R"J(["make", "test"])J", R"J(["", "test"])J", "command.argv[0]"},
        {R"J(["make", "test"])J", R"J([""])J", "command.argv[0]"},
        {R"J(["make", "test"])J", R"J(["ma\u0000ke", "test"])J", "command.argv[0]"},
        {R"J(["make", "test"])J", R"J(["make", "te\u0000st"])J", "command.argv[1]"},
        {R"J(["make", "test"])J", R"J(["make", "test", "\u0000"])J", "command.argv[2]"},
        {R"J("cwd": "/r/src",)J", R"J("cwd": "/r/s\u0000rc",)J", "command.cwd"},
        {R"J("root": "/r",)J", R"J("root": "/r\u0000",)J", "root"},
        {R"J("root": "/r",)J", R"J("root": "/r\u0000/x",)J", "root"},
        {R"J("path": "/r/.git", )J", R"J("path": "/r/.g\u0000it", )J", "filesystem.mounts[2].path"},
        {R"J("source": "/srv/known_hosts")J", R"J("source": "/srv/\u0000")J", "filesystem.mounts[10].source"},
        {R"J("bwrapPath": "/usr/bin/bwrap",)J", R"J("bwrapPath": "/usr/bin/bwrap\u0000",)J", "bwrapPath"},
        {R"J({"path": "/r/.vscode", "kind")J", R"J({"path": "/r/.vs\u0000code", "kind")J", "filesystem.placeholders[1].path"},
        {R"J("why": "the root")J", R"J("why": "the\u0000root")J", "filesystem.mounts[0].why"},
        {R"J("message": "no network proxy yet")J", R"J("message": "no\u0000")J", "warnings[0].message"},
        {R"J("name": "PGURL")J", R"J("name": "PG\u0000URL")J", "command.envRemoved[1].name"},
    });
    // An empty argument after the command's name is an argument like any other.
    CHECK(parsed(edit(kBase, R"J(["make", "test"])J", R"J(["make", ""])J")).argv == std::vector<std::string>{"make", ""});
}

TEST_CASE("plan: the command's environment") {
    check_refusals({
        {R"J({"PATH": "/usr/bin:/bin",)J", R"J({"PA=TH": "/usr/bin:/bin",)J", "command.env.PA=TH"},
        {R"J({"PATH": "/usr/bin:/bin",)J", R"J({"=PATH": "/usr/bin:/bin",)J", "command.env.=PATH"},
        {R"J({"PATH": "/usr/bin:/bin",)J", R"J({"": "/usr/bin:/bin",)J", "command.env."},
        {R"J({"PATH": "/usr/bin:/bin",)J", R"J({"PATH": "/usr/bin\u0000:/bin",)J", "command.env.PATH"},
        {R"J({"PATH": "/usr/bin:/bin",)J", R"J({"PATH": "/usr/bin:/bin", "LD_PRELOAD": "/evil.so",)J", "command.env.LD_PRELOAD"},
        {R"J({"PATH": "/usr/bin:/bin",)J", R"J({"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": "/x",)J", "command.env.LD_LIBRARY_PATH"},
        {R"J({"PATH": "/usr/bin:/bin",)J", R"J({"PATH": "/usr/bin:/bin", "LD_AUDIT": "/x",)J", "command.env.LD_AUDIT"},
        {R"J({"PATH": "/usr/bin:/bin",)J", R"J({"PATH": "/usr/bin:/bin", "GCONV_PATH": "/x",)J", "command.env.GCONV_PATH"},
        {R"J({"LD_PRELOAD": "/opt/lib/libfast.so",)J", R"J({"HOME": "/x", "LD_PRELOAD": "/opt/lib/libfast.so",)J",
         "command.loaderEnv.HOME"},
        {R"J({"LD_PRELOAD": "/opt/lib/libfast.so",)J", R"J({"ld_preload": "/x", "LD_PRELOAD": "/opt/lib/libfast.so",)J",
         "command.loaderEnv.ld_preload"},
        {R"J({"LD_PRELOAD": "/opt/lib/libfast.so",)J", R"J({"LD_=X": "/x", "LD_PRELOAD": "/opt/lib/libfast.so",)J",
         "command.loaderEnv.LD_=X"},
    });
    check_refused(edit(kBase, R"J({"PATH": "/usr/bin:/bin",)J", R"J({"PA\u0000TH": "/usr/bin:/bin",)J"),
                  std::string("command.env.PA\0TH", 17));
    // Any other name and any value, empty ones included, is the command's.
    auto p = parsed(edit(kBase, R"J({"PATH": "/usr/bin:/bin",)J", R"J({"PATH": "", "ld_preload": "x", "A B": "\n",)J"));
    CHECK(p.env.front() == sbx::EnvVar{"PATH", ""});
    CHECK(p.env[1] == sbx::EnvVar{"ld_preload", "x"});
    CHECK(p.env[2] == sbx::EnvVar{"A B", "\n"});
}

TEST_CASE("plan: mounts") {
    check_refusals({
        {R"J("kind": "pin")J", R"J("kind": "overlay")J", "filesystem.mounts[2].kind"},
        {R"J("kind": "pin")J", R"J("kind": "PIN")J", "filesystem.mounts[2].kind"},
        {R"J("kind": "pin")J", R"J("kind": "")J", "filesystem.mounts[2].kind"},
        {R"J("kind": "mask-dir")J", R"J("kind": "mask_dir")J", "filesystem.mounts[5].kind"},
        {R"J("kind": "mask-dir")J", R"J("kind": "tmpfs")J", "filesystem.mounts[5].kind"},
        // A source only on a bind, and always on one.
        {R"J("kind": "pin", "path": "/r/.git", )J", R"J("kind": "pin", "path": "/r/.git", "source": "/r/.git", )J",
         "filesystem.mounts[2].source"},
        {R"J("kind": "mask-dir", "path": "/home/u/.ssh", )J", R"J("kind": "mask-dir", "path": "/home/u/.ssh", "source": "/x", )J",
         "filesystem.mounts[5].source"},
        {R"J("kind": "mask-file", "path": "/home/u/.netrc", )J",
         R"J("kind": "mask-file", "path": "/home/u/.netrc", "source": "/dev/null", )J", "filesystem.mounts[6].source"},
        {R"J("path": "/r", "source": "/r", )J", R"J("path": "/r", )J", "filesystem.mounts[0].source"},
        {R"J("source": "/srv/known_hosts", )J", "", "filesystem.mounts[10].source"},
        {R"J("kind": "pin")J", R"J("kind": "ro-bind")J", "filesystem.mounts[2].source"},
        // Nothing goes over /.
        {R"J("path": "/r", "source": "/r", )J", R"J("path": "/", "source": "/r", )J", "filesystem.mounts[0].path"},
        {R"J("path": "/r", "source": "/r", )J", R"J("path": "/", "source": "/", )J", "filesystem.mounts[0].path"},
        {R"J("kind": "pin", "path": "/r/.git", )J", R"J("kind": "pin", "path": "/", )J", "filesystem.mounts[2].path"},
        {R"J("kind": "mask-dir", "path": "/home/u/.ssh", )J", R"J("kind": "mask-dir", "path": "/", )J",
         "filesystem.mounts[5].path"},
        // A pin or a mask-dir is of an existing directory, a mask-file of an existing non-directory.
        {R"J("expect": {"exists": true, "type": "directory", "dev": 2049, "ino": 12, "nlink": 7})J", R"J("expect": {"exists": false})J",
         "filesystem.mounts[2].expect"},
        {R"J("type": "directory", "dev": 2049, "ino": 12)J", R"J("type": "file", "dev": 2049, "ino": 12)J", "filesystem.mounts[2].expect"},
        {R"J("type": "directory", "dev": 2049, "ino": 12)J", R"J("type": "symlink", "dev": 2049, "ino": 12)J",
         "filesystem.mounts[2].expect"},
        {R"J("type": "directory", "dev": 2049, "ino": 13)J", R"J("type": "other", "dev": 2049, "ino": 13)J",
         "filesystem.mounts[5].expect"},
        {R"J("expect": {"exists": true, "type": "directory", "dev": 2049, "ino": 13, "nlink": 2})J", R"J("expect": {"exists": false})J",
         "filesystem.mounts[5].expect"},
        {R"J("type": "file", "dev": 2049, "ino": 14)J", R"J("type": "directory", "dev": 2049, "ino": 14)J", "filesystem.mounts[6].expect"},
        {R"J("expect": {"exists": true, "type": "file", "dev": 2049, "ino": 14, "nlink": 1})J", R"J("expect": {"exists": false})J",
         "filesystem.mounts[6].expect"},
        // A ro-link is of an existing symbolic link, bound over itself: no source.
        {R"J("kind": "ro-link")J", R"J("kind": "ro_link")J", "filesystem.mounts[12].kind"},
        {R"J("kind": "ro-link", "path": "/r/.mcp.json", )J",
         R"J("kind": "ro-link", "path": "/r/.mcp.json", "source": "/r/.mcp.json", )J", "filesystem.mounts[12].source"},
        {R"J("type": "symlink", "dev": 2049, "ino": 24)J", R"J("type": "file", "dev": 2049, "ino": 24)J",
         "filesystem.mounts[12].expect"},
        {R"J("type": "symlink", "dev": 2049, "ino": 24)J", R"J("type": "directory", "dev": 2049, "ino": 24)J",
         "filesystem.mounts[12].expect"},
        {R"J("expect": {"exists": true, "type": "symlink", "dev": 2049, "ino": 24, "nlink": 1})J",
         R"J("expect": {"exists": false})J", "filesystem.mounts[12].expect"},
        {R"J("kind": "ro-link", "path": "/r/.mcp.json", )J", R"J("kind": "ro-link", "path": "/", )J",
         "filesystem.mounts[12].path"},
        {R"J("kind": "ro-link", "path": "/r/.mcp.json", )J", R"J("kind": "ro-link", "path": "/proc/self/root", )J",
         "filesystem.mounts[12].path"},
    });
    // A bind may be of anything, or of nothing yet (the temporary directory, a placeholder).
    for (const char* type : {"file", "symlink", "other"}) {
        CAPTURE(type);
        auto p = parsed(edit(kBase, R"J("type": "directory", "dev": 2049, "ino": 17)J",
                             std::string("\"type\": \"") + type + "\", \"dev\": 2049, \"ino\": 17"));
        CHECK(p.filesystem.mounts[9].expect.type != sbx::FileType::directory);
    }
}

TEST_CASE("plan: only the temporary directory and the placeholders may be missing, each bound from itself") {
    check_refusals({
        // A bind of something that is not there would make a mount point on the host.
        {R"J({"exists": true, "type": "directory", "dev": 2049, "ino": 17, "nlink": 2})J", R"J({"exists": false})J",
         "filesystem.mounts[9].expect"},
        {R"J("expect": {"exists": true, "type": "file", "dev": 2050, "ino": 18, "nlink": 1})J", R"J("expect": {"exists": false})J",
         "filesystem.mounts[10].expect"},
        {R"J("path": "/r", "source": "/r", "expect": {"exists": true, "type": "directory", "dev": 2049, "ino": 11, "nlink": 6})J",
         R"J("path": "/r", "source": "/r", "expect": {"exists": false})J", "filesystem.mounts[0].expect"},
        // The placeholder's ro-bind and the temporary directory's bind are of themselves.
        {R"J("path": "/r/.vscode", "source": "/r/.vscode")J", R"J("path": "/r/.vscode", "source": "/r/.idea")J",
         "filesystem.mounts[4].expect"},
        {R"J("source": "/tmp/sbx-0123456789abcdef")J", R"J("source": "/tmp/sbx-other")J", "filesystem.mounts[1].expect"},
    });
    // A placeholder's mount without the placeholder.
    check_refused(cut(kBase, ",\n      {\"path\": \"/r/.vscode\"", "\"why\": \"editor settings\"}"), "filesystem.mounts[4].expect");
    // A placeholder is bound read-only: a writable bind of it would let the command fill it.
    check_refused(edit(kBase, R"J({"kind": "ro-bind", "path": "/r/.vscode")J", R"J({"kind": "bind", "path": "/r/.vscode")J"),
                  "filesystem.placeholders[1].path");
    // A ro-bind of the temporary directory is of something the launcher makes.
    check_accepted(edit(kBase, R"J({"kind": "bind", "path": "/tmp/sbx-0123456789abcdef")J",
                        R"J({"kind": "ro-bind", "path": "/tmp/sbx-0123456789abcdef")J"));
}

TEST_CASE("plan: identities") {
    check_refusals({
        // Nothing there: nothing else to say.
        {R"J({"exists": false}, "why": "the command's)J", R"J({"exists": false, "type": "directory"}, "why": "the command's)J",
         "filesystem.mounts[1].expect"},
        {R"J({"exists": false}, "why": "the command's)J", R"J({"exists": false, "dev": 0, "ino": 0, "nlink": 0}, "why": "the command's)J",
         "filesystem.mounts[1].expect"},
        {R"J({"exists": false}, "why": "the command's)J", R"J({}, "why": "the command's)J", "filesystem.mounts[1].expect.exists"},
        {R"J({"exists": false}, "why": "the command's)J", R"J({"exists": null}, "why": "the command's)J",
         "filesystem.mounts[1].expect.exists"},
        // Something there: all of it.
        {R"J("ino": 11, )J", "", "filesystem.mounts[0].expect.ino"},
        {R"J("type": "directory", "dev": 2049, "ino": 11)J", R"J("type": "fifo", "dev": 2049, "ino": 11)J",
         "filesystem.mounts[0].expect.type"},
        {R"J("type": "directory", "dev": 2049, "ino": 11)J", R"J("type": "dir", "dev": 2049, "ino": 11)J",
         "filesystem.mounts[0].expect.type"},
        {R"J("type": "directory", "dev": 2049, "ino": 11)J", R"J("type": "Directory", "dev": 2049, "ino": 11)J",
         "filesystem.mounts[0].expect.type"},
        {R"J("type": "directory", "dev": 2049, "ino": 11)J", R"J("type": "regular", "dev": 2049, "ino": 11)J",
         "filesystem.mounts[0].expect.type"},
        {R"J("type": "directory", "dev": 2049, "ino": 11)J", R"J("type": "", "dev": 2049, "ino": 11)J",
         "filesystem.mounts[0].expect.type"},
    });
    // The numbers: unsigned 64-bit integers, nothing else.
    struct Number {
        const char* from;
        const char* key;
    };
    for (const auto& n : {Number{R"J("dev": 2049, "ino": 11)J", "filesystem.mounts[0].expect.dev"},
                          Number{R"J("ino": 11,)J", "filesystem.mounts[0].expect.ino"},
                          Number{R"J("ino": 11, "nlink": 6)J", "filesystem.mounts[0].expect.nlink"},
                          Number{R"J("ino": 22, "nlink": 6)J", "filesystem.placeholders[1].parent.nlink"}}) {
        for (const char* bad : {"-1", "-9223372036854775808", "1.5", "0.0", "1e3", "1E2", "2.0e0", "\"7\"", "null"}) {
            const std::string key = n.key, value = bad;
            CAPTURE(key);
            CAPTURE(value);
            std::string to = n.from;
            const std::string field = std::string(n.key).substr(std::string(n.key).rfind('.') + 1);
            const auto at = to.find("\"" + field + "\": ");
            REQUIRE(at != std::string::npos);
            const auto num = at + field.size() + 4;
            const auto end = to.find_first_of(",}", num);
            to.replace(num, (end == std::string::npos ? to.size() : end) - num, bad);
            check_refused(edit(kBase, n.from, to), n.key);
        }
    }
    // 2^64 and beyond do not fit the JSON numbers sbx reads: malformed, with the place.
    for (const char* big : {"18446744073709551616", "99999999999999999999", "1e400"}) {
        CAPTURE(big);
        auto p = sbx::parse_plan(edit(kBase, R"J("ino": 11,)J", std::string("\"ino\": ") + big + ","), std::string(kOrigin));
        REQUIRE_FALSE(p.has_value());
        INFO(sbx::to_string(p.error()));
        CHECK(p.error().code == sbx::Errc::invalid_plan);
        CHECK(p.error().file == kOrigin);
        CHECK(p.error().line == 20);
        CHECK(p.error().column > 1);
    }
    // 2^64-1 and 2^63 are read exactly (above the int64 range, and at its edge).
    auto p = parsed(edit(kBase, R"J("dev": 2049, "ino": 11, "nlink": 6)J",
                         R"J("dev": 18446744073709551615, "ino": 9223372036854775808, "nlink": 9223372036854775807)J"));
    CHECK(p.filesystem.mounts[0].expect.dev == std::numeric_limits<std::uint64_t>::max());
    CHECK(p.filesystem.mounts[0].expect.ino == (std::uint64_t{1} << 63));
    CHECK(p.filesystem.mounts[0].expect.nlink == (std::uint64_t{1} << 63) - 1);
    auto zero = parsed(edit(kBase, R"J("dev": 2049, "ino": 11, "nlink": 6)J", R"J("dev": 0, "ino": 0, "nlink": 0)J"));
    CHECK(zero.filesystem.mounts[0].expect.exists);
    CHECK(zero.filesystem.mounts[0].expect.dev == 0);
}

TEST_CASE("plan: placeholders") {
    check_refusals({
        {R"J("kind": "directory", "parent")J", R"J("kind": "socket", "parent")J", "filesystem.placeholders[1].kind"},
        {R"J("kind": "file", "parent")J", R"J("kind": "symlink", "parent")J", "filesystem.placeholders[0].kind"},
        {R"J("kind": "file", "parent")J", R"J("kind": "File", "parent")J", "filesystem.placeholders[0].kind"},
        // The parent is an existing directory.
        {R"J("parent": {"exists": true, "type": "directory", "dev": 2049, "ino": 22, "nlink": 6})J", R"J("parent": {"exists": false})J",
         "filesystem.placeholders[1].parent"},
        {R"J("type": "directory", "dev": 2049, "ino": 22)J", R"J("type": "file", "dev": 2049, "ino": 22)J",
         "filesystem.placeholders[1].parent"},
        {R"J("type": "directory", "dev": 2049, "ino": 22)J", R"J("type": "symlink", "dev": 2049, "ino": 22)J",
         "filesystem.placeholders[1].parent"},
        {R"J("type": "directory", "dev": 2049, "ino": 22)J", R"J("type": "fifo", "dev": 2049, "ino": 22)J",
         "filesystem.placeholders[1].parent.type"},
        // Not /, not the root, not in the temporary directory the launcher removes.
        {R"J({"path": "/r/.vscode", "kind")J", R"J({"path": "/", "kind")J", "filesystem.placeholders[1].path"},
        {R"J({"path": "/r/.vscode", "kind")J", R"J({"path": "/r", "kind")J", "filesystem.placeholders[1].path"},
        {R"J({"path": "/r/.vscode", "kind")J", R"J({"path": "/tmp/sbx-0123456789abcdef", "kind")J",
         "filesystem.placeholders[1].path"},
        {R"J({"path": "/r/.vscode", "kind")J", R"J({"path": "/tmp/sbx-0123456789abcdef/x", "kind")J",
         "filesystem.placeholders[1].path"},
        {R"J({"path": "/r/.vscode", "kind")J", R"J({"path": "/tmp/sbx-0123456789abcdef/a/b/c", "kind")J",
         "filesystem.placeholders[1].path"},
    });
    // Beside the temporary directory is not in it (the placeholder's ro-bind moves with it).
    check_accepted(replace_all(std::string(kBase), "/r/.vscode", std::string(kTmp) + "2"));
    check_accepted(replace_all(std::string(kBase), "/r/.vscode", "/tmp/x"));
}

TEST_CASE("plan: a commondir placeholder is a file named commondir") {
    auto as = [](std::string_view path) {
        return R"J({"path": ")J" + std::string(path) + R"J(", "kind": "commondir")J";
    };
    const std::string from = as("/r/.git/commondir");
    check_refusals({
        {from, as("/r/.git/config"), "filesystem.placeholders[2].path"},
        {from, as("/r/.git/commondir.x"), "filesystem.placeholders[2].path"},
        {R"J("kind": "commondir")J", R"J("kind": "Commondir")J", "filesystem.placeholders[2].kind"},
    });
    check_accepted(replace_all(std::string(kBase), "/r/.git/commondir", "/r/.git/modules/a/commondir"));
}

TEST_CASE("plan: gitAudit lists distinct directories where the command writes") {
    const auto p = parsed(kBase);
    CHECK(p.filesystem.git_audit == std::vector<std::string>{"/r", "/r/src"});
    const std::string from = R"J("gitAudit": ["/r", "/r/src"])J";
    check_refusals({
        {from, R"J("gitAudit": ["/etc"])J", "filesystem.gitAudit[0]"},
        {from, R"J("gitAudit": ["/r", "/"])J", "filesystem.gitAudit[1]"},
        {from, R"J("gitAudit": ["/rr"])J", "filesystem.gitAudit[0]"},
        {from, R"J("gitAudit": ["/home/u"])J", "filesystem.gitAudit[0]"},
        {from, R"J("gitAudit": ["/r", "/r"])J", "filesystem.gitAudit[1]"},
        {from, R"J("gitAudit": ["r"])J", "filesystem.gitAudit[0]"},
        {from, R"J("gitAudit": ["/r/"])J", "filesystem.gitAudit[0]"},
        {from, R"J("gitAudit": ["/r/src/../x"])J", "filesystem.gitAudit[0]"},
        {from, R"J("gitAudit": [""])J", "filesystem.gitAudit[0]"},
        {from, R"J("gitAudit": [7])J", "filesystem.gitAudit[0]"},
        {from, R"J("gitAudit": [null])J", "filesystem.gitAudit[0]"},
        {from, R"J("gitAudit": "/r")J", "filesystem.gitAudit"},
        {from, R"J("gitAudit": {"path": "/r"})J", "filesystem.gitAudit"},
    });
    // The temporary directory is a writable bind too.
    check_accepted(edit(kBase, from, R"J("gitAudit": ["/tmp/sbx-0123456789abcdef/x"])J"));
    check_accepted(edit(kBase, from, R"J("gitAudit": [])J"));
}

TEST_CASE("plan: neutralise names paths in a writable bind's own directory, missing, with nothing else there") {
    const std::string from = R"J("gitAudit": ["/r", "/r/src"])J";
    const std::string with = R"J("neutralise": [{"path": "/r/.envrc", "why": "direnv runs it"}, {"path": "/r/.idea"}], )J";
    const auto p = parsed(edit(kBase, from, with + from));
    REQUIRE(p.filesystem.neutralise.size() == 2);
    CHECK(p.filesystem.neutralise[0].path == "/r/.envrc");
    CHECK(p.filesystem.neutralise[0].why == "direnv runs it");
    CHECK(p.filesystem.neutralise[1].why.empty());
    check_round_trip(p);
    CHECK(parsed(kBase).filesystem.neutralise.empty());
    CHECK(sbx::to_json(parsed(kBase)).find("neutralise") == std::string::npos);
    const std::string key = "filesystem.neutralise";
    check_refusals({
        // not in the directory of a writable bind: inside a folder of the root, in
        // a pinned directory, outside, the root itself, in the temporary directory
        {from, R"J("neutralise": [{"path": "/r/src/.envrc"}], )J" + from, key + "[0].path"},
        {from, R"J("neutralise": [{"path": "/r/.git/x"}], )J" + from, key + "[0].path"},
        {from, R"J("neutralise": [{"path": "/etc/x"}], )J" + from, key + "[0].path"},
        {from, R"J("neutralise": [{"path": "/r"}], )J" + from, key + "[0].path"},
        {from, R"J("neutralise": [{"path": "/"}], )J" + from, key + "[0].path"},
        {from, R"J("neutralise": [{"path": "/tmp/sbx-0123456789abcdef/x"}], )J" + from, key + "[0].path"},
        // where a mount or a placeholder is
        {from, R"J("neutralise": [{"path": "/r/.git"}], )J" + from, key + "[0].path"},
        {from, R"J("neutralise": [{"path": "/r/.vscode"}], )J" + from, key + "[0].path"},
        {from, R"J("neutralise": [{"path": "/r/.mcp.json"}], )J" + from, key + "[0].path"},
        // twice, unclean, of the wrong shape
        {from, R"J("neutralise": [{"path": "/r/.envrc"}, {"path": "/r/.envrc"}], )J" + from, key + "[1].path"},
        {from, R"J("neutralise": [{"path": "r/.envrc"}], )J" + from, key + "[0].path"},
        {from, R"J("neutralise": [{"path": "/r/./.envrc"}], )J" + from, key + "[0].path"},
        {from, R"J("neutralise": [{"why": "x"}], )J" + from, key + "[0].path"},
        {from, R"J("neutralise": [{"path": "/r/.envrc", "kind": "file"}], )J" + from, key + "[0].kind"},
        {from, R"J("neutralise": [{"path": "/r/.envrc", "why": 7}], )J" + from, key + "[0].why"},
        {from, R"J("neutralise": ["/r/.envrc"], )J" + from, key + "[0]"},
        {from, R"J("neutralise": {"path": "/r/.envrc"}, )J" + from, key},
        {from, R"J("neutralise": null, )J" + from, key},
    });
    check_accepted(edit(kBase, from, R"J("neutralise": [], )J" + from));
}

TEST_CASE("plan: neutraliseNew names a pattern in a writable bind's or a pin's directory, and the names kept read-only") {
    const std::string from = R"J("gitAudit": ["/r", "/r/src"])J";
    const std::string with =
        R"J("neutraliseNew": [{"dir": "/r", "pattern": ".[bv]*", "present": [".bashrc", ".vscode"], "why": "agent files"},
                              {"dir": "/r/.git", "pattern": "AGENT-*.md"}], )J";
    const auto p = parsed(edit(kBase, from, with + from));
    REQUIRE(p.filesystem.neutralise_new.size() == 2);
    CHECK(p.filesystem.neutralise_new[0].dir == "/r");
    CHECK(p.filesystem.neutralise_new[0].pattern == ".[bv]*");
    CHECK(p.filesystem.neutralise_new[0].present == std::vector<std::string>{".bashrc", ".vscode"});
    CHECK(p.filesystem.neutralise_new[0].why == "agent files");
    CHECK(p.filesystem.neutralise_new[1].present.empty());
    check_round_trip(p);
    CHECK(sbx::to_json(parsed(kBase)).find("neutraliseNew") == std::string::npos);
    const std::string key = "filesystem.neutraliseNew";
    auto one = [&](const std::string& entry) { return R"J("neutraliseNew": [)J" + entry + "], " + from; };
    check_refusals({
        // a directory that is no mount point of the plan, or is removed after the run
        {from, one(R"J({"dir": "/r/src", "pattern": "*.md"})J"), key + "[0].dir"},
        {from, one(R"J({"dir": "/etc", "pattern": "*.md"})J"), key + "[0].dir"},
        {from, one(R"J({"dir": "/r/.vscode", "pattern": "*.md"})J"), key + "[0].dir"},
        {from, one(R"J({"dir": "/tmp/sbx-0123456789abcdef", "pattern": "*.md"})J"), key + "[0].dir"},
        {from, one(R"J({"dir": "r", "pattern": "*.md"})J"), key + "[0].dir"},
        // a pattern that is no single component with a wildcard
        {from, one(R"J({"dir": "/r", "pattern": "AGENT.md"})J"), key + "[0].pattern"},
        {from, one(R"J({"dir": "/r", "pattern": "a/*.md"})J"), key + "[0].pattern"},
        {from, one(R"J({"dir": "/r", "pattern": ""})J"), key + "[0].pattern"},
        {from, one(R"J({"dir": "/r", "pattern": 7})J"), key + "[0].pattern"},
        // names kept that the pattern does not match, that are not read-only, unsorted, twice
        {from, one(R"J({"dir": "/r", "pattern": ".b*", "present": [".vscode"]})J"), key + "[0].present[0]"},
        {from, one(R"J({"dir": "/r", "pattern": "*", "present": ["src"]})J"), key + "[0].present[0]"},
        {from, one(R"J({"dir": "/r", "pattern": ".*", "present": [".vscode", ".bashrc"]})J"), key + "[0].present[1]"},
        {from, one(R"J({"dir": "/r", "pattern": ".*", "present": [".bashrc", ".bashrc"]})J"), key + "[0].present[1]"},
        {from, one(R"J({"dir": "/r", "pattern": "*", "present": [".."]})J"), key + "[0].present[0]"},
        // the shape
        {from, one(R"J({"dir": "/r"})J"), key + "[0].pattern"},
        {from, one(R"J({"dir": "/r", "pattern": "*", "kind": "file"})J"), key + "[0].kind"},
        {from, one(R"J({"dir": "/r", "pattern": "*", "present": ".bashrc"})J"), key + "[0].present"},
        {from, one(R"J({"dir": "/r", "pattern": "*"}, {"dir": "/r", "pattern": "*"})J"), key + "[1]"},
        {from, one(R"J("/r/*")J"), key + "[0]"},
        {from, R"J("neutraliseNew": null, )J" + from, key},
    });
    check_accepted(edit(kBase, from, R"J("neutraliseNew": [], )J" + from));
}

TEST_CASE("plan: network.answers are answers held for the session, one per host and port, never a local host") {
    const std::string proxy = edit(kBase, R"J("mode": "none")J", R"J("mode": "proxy", "allowed": [], "denied": [], "strict": false)J");
    const std::string from = R"J("strict": false)J";
    const auto p = parsed(edit(proxy, from,
                               R"J("strict": false, "answers": [{"host": "pypi.org", "port": 443, "answer": "allow"}, {"host": "evil.example", "answer": "deny"}])J"));
    REQUIRE(p.network.call.answers.size() == 2);
    CHECK(p.network.call.answers[0].host == "pypi.org");
    CHECK(p.network.call.answers[0].port == 443);
    CHECK(p.network.call.answers[0].allow);
    CHECK(p.network.call.answers[1].port == 0);
    CHECK_FALSE(p.network.call.answers[1].allow);
    const auto again = parsed(sbx::to_json(p));
    CHECK(sbx::to_json(again) == sbx::to_json(p));
    CHECK(sbx::to_json(parsed(proxy)).find("answers") == std::string::npos);
    auto one = [&](const std::string& a) { return edit(proxy, from, R"J("strict": false, "answers": [)J" + a + "]"); };
    const std::pair<std::string, std::string> refused[] = {
        {one(R"J({"host": "PyPI.org", "answer": "allow"})J"), "network.answers[0].host"},
        {one(R"J({"host": "*.pypi.org", "answer": "allow"})J"), "network.answers[0].host"},
        {one(R"J({"host": "localhost", "answer": "allow"})J"), "network.answers[0].host"},
        {one(R"J({"host": "10.1.2.3", "answer": "allow"})J"), "network.answers[0].host"},
        {one(R"J({"host": "pypi.org", "answer": "yes"})J"), "network.answers[0].answer"},
        {one(R"J({"host": "pypi.org", "port": 0, "answer": "allow"})J"), "network.answers[0].port"},
        {one(R"J({"host": "pypi.org", "port": 70000, "answer": "allow"})J"), "network.answers[0].port"},
        {one(R"J({"host": "pypi.org"})J"), "network.answers[0].answer"},
        {one(R"J({"host": "pypi.org", "answer": "allow", "for": "session"})J"), "network.answers[0].for"},
        {one(R"J({"host": "pypi.org", "answer": "allow"}, {"host": "pypi.org", "answer": "deny"})J"), "network.answers[1]"},
        {edit(proxy, from, R"J("strict": false, "answers": {"host": "pypi.org"})J"), "network.answers"},
    };
    for (const auto& r : refused) {
        CAPTURE(r.first);
        check_refused(r.first, r.second);
    }
}

TEST_CASE("parse_host_answers: an answers file holds one list, read as strictly as a plan's") {
    auto ok = sbx::parse_host_answers(R"J({"answers": [{"host": "pypi.org", "port": 443, "answer": "allow"}]})J", "a.json");
    REQUIRE(ok.has_value());
    REQUIRE(ok->size() == 1);
    CHECK((*ok)[0].host == "pypi.org");
    auto empty = sbx::parse_host_answers(R"J({"answers": []})J", "a.json");
    REQUIRE(empty.has_value());
    CHECK(empty->empty());
    for (const char* bad : {"", "[]", "{}", R"J({"answers": [], "more": 1})J", R"J({"answers": [{"host": "x y", "answer": "allow"}]})J",
                            "{\"answers\": [}"}) {
        CAPTURE(bad);
        auto r = sbx::parse_host_answers(bad, "a.json");
        REQUIRE_FALSE(r.has_value());
        CHECK(sbx::to_string(r.error()).find("a.json") != std::string::npos);
    }
}

TEST_CASE("plan: gitRecord is a file the command cannot write, with an audit to fill it") {
    const std::string from = R"J("gitAudit": ["/r", "/r/src"])J";
    const std::string with = from + R"J(, "gitRecord": "/home/u/.cache/sbx/git/r")J";
    const auto p = parsed(edit(kBase, from, with));
    REQUIRE(p.filesystem.git_record.has_value());
    CHECK(*p.filesystem.git_record == "/home/u/.cache/sbx/git/r");
    check_round_trip(p);
    CHECK_FALSE(parsed(kBase).filesystem.git_record.has_value());
    CHECK(sbx::to_json(parsed(kBase)).find("gitRecord") == std::string::npos);
    for (const std::string& bad : unclean_variants("/home/u/.cache/sbx/git/r")) {
        CAPTURE(bad);
        check_refused(edit(kBase, from, from + ", \"gitRecord\": \"" + bad + "\""), "filesystem.gitRecord");
    }
    for (const char* bad : {R"J("/")J", "7", "null", R"J(["/home/u/r"])J",
                            // where the command writes: the root, a pinned directory, its temporary directory
                            R"J("/r/record")J", R"J("/r/.git/record")J", R"J("/tmp/sbx-0123456789abcdef/r")J"}) {
        CAPTURE(bad);
        check_refused(edit(kBase, from, from + ", \"gitRecord\": " + bad), "filesystem.gitRecord");
    }
    // Without an audit there is nothing to record.
    check_refused(edit(kBase, from, R"J("gitAudit": [], "gitRecord": "/home/u/.cache/sbx/git/r")J"), "filesystem.gitRecord");
    check_refused(edit(kBase, from, R"J("gitRecord": "/home/u/.cache/sbx/git/r")J"), "filesystem.gitRecord");
    // The last mount over it decides: read-only inside a writable one is fine.
    check_accepted(edit(kBase, from, from + R"J(, "gitRecord": "/r/.git/hooks/record")J"));
    check_accepted(edit(kBase, from, from + R"J(, "gitRecord": "/home/u/.ssh/record")J"));
}

TEST_CASE("plan: the network is none or proxy, and a proxy's rules are host patterns") {
    for (const char* mode : {"", "None", "NONE", "host", "none "}) {
        CAPTURE(mode);
        check_refused(edit(kBase, R"J("mode": "none")J", std::string("\"mode\": \"") + mode + "\""), "network.mode");
    }
    // mode none takes nothing else.
    check_refused(edit(kBase, R"J("mode": "none")J", R"J("mode": "none", "strict": true)J"), "network");
    // A proxy needs its lists, each entry a pattern (with an optional source).
    check_refused(edit(kBase, R"J("mode": "none")J", R"J("mode": "proxy")J"), "network.allowed");
    const std::string proxy =
        R"J("mode": "proxy", "allowed": [{"pattern": "github.com", "source": {"layer": "project", "file": "/r/.claude/settings.json", "key": "sandbox.network.allowedDomains[0]"}}, {"pattern": "127.0.0.1:3000", "source": null}], "denied": [{"pattern": "*.evil.com"}], "strict": false, "onUnknownHost": "ask", "callHosts": [{"pattern": "pypi.org"}], "callOnUnknownHost": "deny")J";
    const auto p = parsed(edit(kBase, R"J("mode": "none")J", proxy));
    CHECK(p.network.mode == sbx::NetworkMode::proxy);
    REQUIRE(p.network.rules.allowed.size() == 2);
    REQUIRE(p.network.rules.allowed[0].source.has_value());
    CHECK(p.network.rules.allowed[0].source->key == "sandbox.network.allowedDomains[0]");
    CHECK(p.network.rules.allowed[1].pattern.kind == sbx::net::HostPattern::Kind::address);
    CHECK(p.network.rules.denied.size() == 1);
    CHECK(p.network.rules.on_unknown == sbx::net::UnknownHost::ask);
    REQUIRE(p.network.call.hosts.has_value());
    CHECK(p.network.call.on_unknown == sbx::net::UnknownHost::deny);
    check_refused(edit(kBase, R"J("mode": "none")J", edit(proxy, "\"*.evil.com\"", "\"https://evil.com\"")),
                  "network.denied[0].pattern");
    check_refused(edit(kBase, R"J("mode": "none")J", edit(proxy, "\"ask\"", "\"maybe\"")), "network.onUnknownHost");
    // allowLocalBinding: optional, a boolean, with its settings entry for people.
    CHECK_FALSE(p.network.rules.local);
    const auto local = parsed(edit(kBase, R"J("mode": "none")J",
                                   edit(proxy, R"J("strict": false)J",
                                        R"J("strict": false, "local": true, "localWhy": "/h/.claude/settings.json sandbox.network.allowLocalBinding")J")));
    CHECK(local.network.rules.local);
    CHECK(local.network.local_why == "/h/.claude/settings.json sandbox.network.allowLocalBinding");
    check_refused(edit(kBase, R"J("mode": "none")J", edit(proxy, R"J("strict": false)J", R"J("strict": false, "local": "yes")J")),
                  "network.local");
    check_refused(edit(kBase, R"J("mode": "none")J", edit(proxy, "\"project\"", "\"team\"")),
                  "network.allowed[0].source.layer");
}

TEST_CASE("plan: network.forwards listen on the sandbox's loopback and lead to a loopback target") {
    const std::string proxy =
        R"J("mode": "proxy", "allowed": [{"pattern": "localhost:3000"}, {"pattern": "127.0.0.2:5432"}], "denied": [], "strict": false, "forwards": [{"listen": "127.0.0.1", "port": 3000, "target": "localhost", "targetPort": 3000, "why": "network.allowedDomains localhost:3000"}, {"listen": "::1", "port": 3000, "target": "localhost", "targetPort": 3000}, {"listen": "127.0.0.2", "port": 5432, "target": "127.0.0.2", "targetPort": 5432}])J";
    const std::string with = edit(kBase, R"J("mode": "none")J", proxy);
    const auto p = parsed(with);
    REQUIRE(p.network.forwards.size() == 3);
    CHECK(p.network.forwards[0].listen == sbx::net::Address::v4(127, 0, 0, 1));
    CHECK(p.network.forwards[0].why == "network.allowedDomains localhost:3000");
    CHECK(p.network.forwards[1].listen.is_v6());
    CHECK(p.network.forwards[1].why.empty());  // optional
    CHECK(p.network.forwards[2].target == "127.0.0.2");
    // Written back as read.
    CHECK(sbx::to_json(p).find(R"J("forwards":[{"listen":"127.0.0.1","port":3000,"target":"localhost","targetPort":3000,)J") !=
          std::string::npos);
    // Absent is none; mode none takes none.
    CHECK(parsed(edit(kBase, R"J("mode": "none")J", R"J("mode": "proxy", "allowed": [], "denied": [], "strict": false)J"))
              .network.forwards.empty());
    check_refused(edit(kBase, R"J("mode": "none")J", R"J("mode": "none", "forwards": [])J"), "network");
    // The listening address: loopback, canonical, without brackets.
    for (const char* listen : {"10.0.0.1", "0.0.0.0", "::", "[::1]", "127.1", "localhost", "::ffff:127.0.0.1", "0:0::1", ""}) {
        CAPTURE(listen);
        check_refused(edit(with, R"J("listen": "::1")J", std::string(R"J("listen": ")J") + listen + "\""),
                      "network.forwards[1].listen");
    }
    // The target: a loopback address in canonical text, or localhost.
    for (const char* target : {"example.com", "10.0.0.1", "LOCALHOST", "localhost.", "[::1]", "2130706433", "a.localhost", ""}) {
        CAPTURE(target);
        check_refused(edit(with, R"J("target": "127.0.0.2")J", std::string(R"J("target": ")J") + target + "\""),
                      "network.forwards[2].target");
    }
    check_accepted(edit(with, R"J("target": "127.0.0.2")J", R"J("target": "::1")J"));
    // Ports from 1 to 65535.
    check_refused(edit(with, R"J("port": 5432)J", R"J("port": 0)J"), "network.forwards[2].port");
    check_refused(edit(with, R"J("port": 5432)J", R"J("port": 65536)J"), "network.forwards[2].port");
    check_refused(edit(with, R"J("port": 5432)J", R"J("port": "5432")J"), "network.forwards[2].port");
    check_refused(edit(with, R"J("targetPort": 5432)J", R"J("targetPort": 0)J"), "network.forwards[2].targetPort");
    // One forward per listening address and port.
    check_refused(edit(with, R"J("listen": "127.0.0.2", "port": 5432)J", R"J("listen": "127.0.0.1", "port": 3000)J"),
                  "network.forwards[2]");
    check_accepted(edit(with, R"J("listen": "127.0.0.2", "port": 5432)J", R"J("listen": "127.0.0.1", "port": 5432)J"));
    // Strict like every object.
    check_refused(edit(with, R"J("targetPort": 5432)J", R"J("targetPort": 5432, "via": "x")J"), "network.forwards[2].via");
    check_refused(edit(with, R"J(, "targetPort": 5432}])J", "}]"), "network.forwards[2].targetPort");
}

// ---------------------------------------------------------------------------
// Malformed documents

TEST_CASE("plan: malformed JSON is INVALID_PLAN with the line and column") {
    // The byte where each break shows, counted in kBase itself.
    auto where = [](std::string_view text, std::string_view needle) {
        const auto at = text.find(needle);
        REQUIRE(at != std::string_view::npos);
        auto loc = sbx::json::locate(text, at);
        return std::pair{loc.line, loc.column};
    };
    {
        const auto text = edit(kBase, R"J((/r/.git)",)J", R"J((/r/.git)")J");
        auto [line, column] = where(text, "\"tmpdir\"");
        check_malformed(text, line, column);
        CHECK(line == 11);
        CHECK(column == 3);
    }
    {
        const auto text = edit(kBase, R"J("enabled": true,)J", R"J("enabled": tru,)J");
        auto [line, column] = where(text, "tru,");
        check_malformed(text, line, column);
    }
    {
        const auto text = edit(kBase, R"J("why": "points git at another git directory"})J",
                               R"J("why": "points git at another git directory"},)J");
        auto [line, column] = where(text, "],\n    \"gitAudit\"");
        check_malformed(text, line, column);  // a trailing comma is blamed at the ']'
    }
    {
        const auto text = edit(kBase, R"J("cwd": "/r/src",)J", "\"cwd\": \"/r/\tsrc\",");
        auto [line, column] = where(text, "\t");
        check_malformed(text, line, column);
    }
    {
        const std::string text = std::string(kBase) + "\n{}";
        check_malformed(text, static_cast<std::size_t>(std::count(kBase.begin(), kBase.end(), '\n')) + 2, 1);
    }
    check_malformed("", 1, 1);
    check_malformed("   \n  ", 2, 3);
    check_malformed("{", 1, 2);
    check_malformed("{\"version\": 1,}", 1, 15);
    check_malformed("\xEF\xBB\xBF{}", 1, 1);
    check_malformed("{\"version\": 01}", 1, 14);
    check_malformed("// a plan\n{}", 1, 1);
    // Nested past simdjson's depth limit.
    check_malformed(std::string(2000, '[') + std::string(2000, ']'), 1, 1025);
}

TEST_CASE("plan: invalid UTF-8 in a string or a key is refused, located") {
    for (const char* bytes : {"\xff", "\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\x80"}) {
        CAPTURE(sbx::json::quote(bytes));
        {
            const auto text = edit(kBase, R"J("why": "the root")J", std::string("\"why\": \"the ") + bytes + "root\"");
            auto p = sbx::parse_plan(text, std::string(kOrigin));
            REQUIRE_FALSE(p.has_value());
            CHECK(p.error().code == sbx::Errc::invalid_plan);
            CHECK(p.error().file == kOrigin);
            CHECK(p.error().line == 20);
            CHECK(p.error().column > 1);
        }
        {
            const auto text = edit(kBase, R"J({"PATH": )J", std::string("{\"PA") + bytes + "TH\": ");
            auto p = sbx::parse_plan(text, std::string(kOrigin));
            REQUIRE_FALSE(p.has_value());
            CHECK(p.error().code == sbx::Errc::invalid_plan);
            CHECK(p.error().line == 6);
        }
    }
    // An unpaired surrogate escape is not a character either.
    auto p = sbx::parse_plan(edit(kBase, R"J("why": "the root")J", R"J("why": "\ud800")J"), std::string(kOrigin));
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error().code == sbx::Errc::invalid_plan);
    CHECK(p.error().line == 20);
}

TEST_CASE("plan: a document over json::kMaxDocumentBytes is refused, one at the limit is read") {
    // A plan padded to exactly `size` bytes with a long warning message.
    auto padded = [](std::size_t size) {
        const std::string head = R"J({"version":1,"command":{"argv":["x"],"cwd":"/r","env":{},"loaderEnv":{}},"root":"/r","tmpdir":"/t",)J"
                                 R"J("enabled":true,"failIfUnavailable":true,"seccomp":{"allowUnixSockets":false},"network":{"mode":"none"},)J"
                                 R"J("filesystem":{"isolated":true,"mounts":[],"placeholders":[]},)J"
                                 R"J("warnings":[{"message":")J";
        const std::string tail = "\"}]}";
        REQUIRE(size > head.size() + tail.size());
        return head + std::string(size - head.size() - tail.size(), 'w') + tail;
    };
    const std::string at_limit = padded(sbx::json::kMaxDocumentBytes);
    auto p = sbx::parse_plan(at_limit, std::string(kOrigin));
    REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : sbx::to_string(p.error())));
    CHECK(p->warnings.at(0).message.size() > (15u << 20));
    for (std::size_t size : {sbx::json::kMaxDocumentBytes + 1, std::size_t{17} << 20}) {
        CAPTURE(size);
        auto big = sbx::parse_plan(padded(size), std::string(kOrigin));
        REQUIRE_FALSE(big.has_value());
        CHECK(big.error().code == sbx::Errc::invalid_plan);
        CHECK(big.error().file == kOrigin);
        CHECK(big.error().message.find(std::to_string(sbx::json::kMaxDocumentBytes)) != std::string::npos);
    }
}

// ---------------------------------------------------------------------------
// Deterministic fuzzing

TEST_CASE("plan fuzz: every truncation, dropped byte and changed byte of a small plan") {
    const std::string small(kSmall);
    std::vector<std::string> bad;
    REQUIRE(parse_any(small, bad));
    std::size_t accepted_count = 0;
    for (std::size_t i = 0; i < small.size(); ++i) {
        if (parse_any(small.substr(0, i), bad)) ++accepted_count;  // no prefix is a whole object
        std::string dropped = small;
        dropped.erase(i, 1);
        parse_any(dropped, bad);
        for (unsigned char b : {0x01, 0x20, 0x80}) {
            std::string flipped = small;
            flipped[i] = static_cast<char>(static_cast<unsigned char>(flipped[i]) ^ b);
            parse_any(flipped, bad);
        }
        for (char c : {'"', '\\', '/', '.', '0', '-', '{', ']', ',', '\0'}) {
            std::string changed = small;
            changed[i] = c;
            parse_any(changed, bad);
            std::string inserted = small;
            inserted.insert(i, 1, c);
            parse_any(inserted, bad);
        }
    }
    CHECK(accepted_count == 0);
    CHECK_MESSAGE(bad.empty(), bad.size() << " inputs broke the contract; the first: " << (bad.empty() ? "" : bad.front()));
}

TEST_CASE("plan fuzz: random mutations of a full plan") {
    const std::string base(kBase);
    // Fragments that make a mutation land on something the reader checks.
    const std::vector<std::string> fragments{
        "\"/\"", "\"..\"", "\"/r\"", "\"/tmp/sbx-0123456789abcdef\"", "-1", "1.5", "18446744073709551615", "true", "null",
        "{}", "[]", "\"\\u0000\"", "\"LD_PRELOAD\"", "\"exists\": false", "\"pin\"", "\"mask-file\"", "\"directory\"",
        ",\"x\":1", "\"a=b\"", "\"\xff\"", "\"version\": 2"};
    Lcg rng{20261130};
    std::vector<std::string> bad;
    std::size_t accepted_count = 0;
    constexpr int kRounds = 4000;
    for (int round = 0; round < kRounds; ++round) {
        std::string t = base;
        const std::size_t edits = 1 + rng.below(3);
        for (std::size_t e = 0; e < edits && !t.empty(); ++e) {
            const std::size_t at = rng.below(t.size());
            switch (rng.below(5)) {
                case 0: t.erase(at, 1 + rng.below(8)); break;
                case 1: t[at] = static_cast<char>(rng.next() & 0xff); break;
                case 2: t.insert(at, fragments[rng.below(fragments.size())]); break;
                case 3: {  // replace a value-sized span with a fragment
                    t.replace(at, std::min<std::size_t>(1 + rng.below(12), t.size() - at), fragments[rng.below(fragments.size())]);
                    break;
                }
                default: {  // swap two bytes
                    std::swap(t[at], t[rng.below(t.size())]);
                    break;
                }
            }
        }
        if (parse_any(t, bad)) ++accepted_count;
    }
    MESSAGE(accepted_count << " of " << kRounds << " mutations were still valid plans");
    CHECK(accepted_count > 0);  // the mutations are not all refused for being malformed
    CHECK_MESSAGE(bad.empty(), bad.size() << " inputs broke the contract; the first: " << (bad.empty() ? "" : bad.front()));
}

// ---------------------------------------------------------------------------
// Requests the library API can make and a real command line cannot.

// PlanRequest::cwd is "absolute; the root when empty": a relative one is refused
// like a relative root, not resolved against `/`.
TEST_CASE("make_plan refuses a relative cwd") {
    sbx::MemoryFs fs;
    fs.dir("/r/src").dir("/home/u");
    for (const char* cwd : {"src", "../x"}) {
        CAPTURE(std::string(cwd));
        sbx::PlanRequest req{{"sh"}, "/r", cwd, "/home/u", std::string(kTmp), {}, {}, std::nullopt, std::nullopt};
        auto p = sbx::make_plan(sbx::Policy{}, req, fs);
        CHECK_FALSE(p.has_value());
    }
}

// An argument or an environment value holding a NUL (possible through the
// library API, not through a real argv or environ) never makes a plan that
// parse_plan refuses: the argument is refused, the variable left out.
TEST_CASE("every plan make_plan makes is one parse_plan reads back") {
    sbx::MemoryFs fs;
    fs.dir("/r").dir("/home/u");
    const std::vector<std::string> vars{std::string("A=x\0y", 5)};
    const sbx::PlanRequest requests[] = {
        {{std::string("s\0h", 3)}, "/r", "", "/home/u", std::string(kTmp), {}, {}, std::nullopt, std::nullopt},
        {{"sh"}, "/r", "", "/home/u", std::string(kTmp), vars, {}, std::nullopt, std::nullopt},
    };
    for (const auto& req : requests) {
        auto p = sbx::make_plan(sbx::Policy{}, req, fs);
        if (!p) continue;  // refusing the request is as good
        auto back = sbx::parse_plan(sbx::to_json(*p), std::string(kOrigin));
        CHECK_MESSAGE(back.has_value(), (back ? std::string() : sbx::to_string(back.error())));
    }
}

TEST_CASE("verify_plan: a protected symlink is checked as itself, not as where it leads") {
    sbx::MemoryFs fs;
    fs.dir("/r").dir("/home/u").dir("/shared").file("/shared/mcp.json", "{}").file("/shared/other.json", "{}");
    fs.symlink("/r/.mcp.json", "/shared/mcp.json");
    sbx::PlanRequest req{{"sh"}, "/r", "", "/home/u", std::string(kTmp), {}, {}, std::nullopt, std::nullopt};
    auto p = sbx::make_plan(sbx::Policy{}, req, fs);
    REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : sbx::to_string(p.error())));
    const auto back = parsed(sbx::to_json(*p));
    CHECK(has_mount(back, sbx::MountKind::ro_link, "/r/.mcp.json"));
    CHECK(sbx::verify_plan(back, fs).has_value());
    // The link's target changed: the link is another one, whatever it leads to.
    auto retargeted = fs;
    retargeted.symlink("/r/.mcp.json", "/shared/other.json");
    // A regular file in its place.
    auto replaced = fs;
    replaced.file("/r/.mcp.json", "{}");
    for (const sbx::MemoryFs* now : {&retargeted, &replaced}) {
        auto v = sbx::verify_plan(back, *now);
        REQUIRE_FALSE(v.has_value());
        CHECK(v.error().code == sbx::Errc::stale_plan);
        CHECK(v.error().file == "/r/.mcp.json");
    }
}

TEST_CASE("plan: a mount after one inside it is refused, since it would undo it") {
    // The root bound again after the pin of its .git: the pin would be gone.
    const std::string root_again =
        R"J({"kind": "bind", "path": "/r", "source": "/r", "expect": {"exists": true, "type": "directory", "dev": 2049, "ino": 11, "nlink": 6}, "why": "again"},)J";
    check_refused(edit(kBase, R"J({"kind": "mask-dir", "path": "/home/u/.ssh")J",
                       root_again + R"J({"kind": "mask-dir", "path": "/home/u/.ssh")J"),
                  "filesystem.mounts[5].path");
    // ~/.ssh masked after the re-opened file inside it.
    const std::string mask_again =
        R"J(, {"kind": "mask-dir", "path": "/home/u/.ssh", "expect": {"exists": true, "type": "directory", "dev": 2049, "ino": 13, "nlink": 2}})J";
    check_refused(edit(kBase, R"J("why": "re-opened through a symlink"})J", R"J("why": "re-opened through a symlink"})J" + mask_again),
                  "filesystem.mounts[11].path");
    // The same path twice is allowed: the later one wins, as documented.
    check_accepted(edit(kBase, R"J("why": "re-opened through a symlink"})J",
                        R"J("why": "re-opened through a symlink"}, {"kind": "ro-bind", "path": "/home/u/.ssh/known_hosts", "source": "/srv/known_hosts", "expect": {"exists": true, "type": "file", "dev": 2050, "ino": 18, "nlink": 1}})J"));
}

TEST_CASE("plan: two placeholders at one path are refused") {
    check_refused(edit(kBase, R"J("why": "editor settings"})J",
                       R"J("why": "editor settings"}, {"path": "/r/.bashrc", "kind": "file", "parent": {"exists": true, "type": "directory", "dev": 2049, "ino": 21, "nlink": 6}})J"),
                  "filesystem.placeholders[2].path");
}

TEST_CASE("plan: gitExclude lists the root's placeholders for git inside, and reads back") {
    sbx::MemoryFs fs;
    fs.dir("/r/.git/info").dir("/r/.git/hooks").dir("/home/u");
    fs.file("/r/.git/info/exclude", "# git ls-files --others --exclude-from=.git/info/exclude\n*.o");
    fs.file("/r/.git/config", "[core]\n");
    fs.file("/r/.git/HEAD", "ref: refs/heads/main\n");
    sbx::PlanRequest req{{"sh"}, "/r", "", "/home/u", std::string(kTmp), {}, {}, std::nullopt, std::nullopt};
    auto p = sbx::make_plan(sbx::Policy{}, req, fs);
    REQUIRE_MESSAGE(p.has_value(), sbx::to_string(p.error()));
    REQUIRE(p->filesystem.git_exclude.has_value());
    const auto& ex = *p->filesystem.git_exclude;
    CHECK(ex.path == "/r/.git/info/exclude");
    CHECK(ex.expect.exists);
    // The file's own lines first, then one anchored line per placeholder in the root.
    CHECK(ex.content.starts_with("# git ls-files --others --exclude-from=.git/info/exclude\n*.o\n# sbx: "));
    CHECK(ex.content.find("\n/.vscode\n") != std::string::npos);
    CHECK(ex.content.find("\n/.bashrc\n") == std::string::npos);  // renamed after the run, no placeholder
    CHECK(ex.content.find("\n/HEAD\n") == std::string::npos);  // a repository's root has no HEAD placeholder
    CHECK(ex.content.find("/.git/") == std::string::npos);
    check_round_trip(*p);
    const std::string text = sbx::to_json(*p);
    auto back = parsed(text);
    REQUIRE(back.filesystem.git_exclude.has_value());
    CHECK(back.filesystem.git_exclude->content == ex.content);

    // Outside the root, or of something that is not a file: refused.
    const std::string outside = edit(text, "\"path\":\"/r/.git/info/exclude\"", "\"path\":\"/home/u/exclude\"");
    auto refused = sbx::parse_plan(outside, std::string(kOrigin));
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().key == "filesystem.gitExclude.path");

    // No exclude file, or a second name for it: no gitExclude, git inside lists the placeholders.
    sbx::MemoryFs bare;
    bare.dir("/r/.git/info").dir("/home/u");
    auto none = sbx::make_plan(sbx::Policy{}, req, bare);
    REQUIRE(none.has_value());
    CHECK_FALSE(none->filesystem.git_exclude.has_value());

    // An info directory a command swapped for a symlink: not the repository's.
    sbx::MemoryFs linked;
    linked.dir("/r/.git/hooks").dir("/home/u/elsewhere").symlink("/r/.git/info", "/home/u/elsewhere");
    linked.file("/home/u/elsewhere/exclude", "*.o\n");
    auto through = sbx::make_plan(sbx::Policy{}, req, linked);
    REQUIRE_MESSAGE(through.has_value(), sbx::to_string(through.error()));
    CHECK_FALSE(through->filesystem.git_exclude.has_value());
}

TEST_CASE("plan: a linked worktree's placeholders go to the main repository's info/exclude, which git reads there") {
    sbx::MemoryFs fs;
    fs.dir("/m/.git/objects").dir("/m/.git/refs").dir("/m/.git/hooks").file("/m/.git/HEAD", "ref: refs/heads/main\n");
    fs.file("/m/.git/config", "[core]\n").file("/m/.git/info/exclude", "*.o\n");
    fs.file("/m/.git/worktrees/wt/commondir", "../..\n").file("/m/.git/worktrees/wt/HEAD", "ref: refs/heads/wt\n");
    fs.file("/r/.git", "gitdir: /m/.git/worktrees/wt\n").dir("/home/u");
    sbx::PlanRequest req{{"sh"}, "/r", "", "/home/u", std::string(kTmp), {}, {}, std::nullopt, std::nullopt};
    auto p = sbx::make_plan(sbx::Policy{}, req, fs);
    REQUIRE_MESSAGE(p.has_value(), sbx::to_string(p.error()));
    REQUIRE(p->filesystem.git_exclude.has_value());
    const auto& ex = *p->filesystem.git_exclude;
    CHECK(ex.path == "/m/.git/info/exclude");
    CHECK(ex.content.starts_with("*.o\n# sbx: "));
    CHECK(ex.content.find("\n/.vscode\n") != std::string::npos);
    CHECK(ex.content.find("\n/.claude\n") != std::string::npos);
    CHECK(ex.content.find("/m/.git") == std::string::npos);  // placeholders in the root only
    // The post-run audit looks at the main git directory too.
    CHECK(std::find(p->filesystem.git_audit.begin(), p->filesystem.git_audit.end(), "/m/.git") !=
          p->filesystem.git_audit.end());
    check_round_trip(*p);
    const std::string text = sbx::to_json(*p);
    auto back = parsed(text);
    REQUIRE(back.filesystem.git_exclude.has_value());
    CHECK(back.filesystem.git_exclude->path == "/m/.git/info/exclude");
    // Only in a place the plan binds writable, and only a git directory's info/exclude.
    const std::string unbound = edit(text, "\"path\":\"/m/.git/info/exclude\"", "\"path\":\"/home/u/info/exclude\"");
    auto refused = sbx::parse_plan(unbound, std::string(kOrigin));
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().key == "filesystem.gitExclude.path");
    const std::string other = edit(text, "\"path\":\"/m/.git/info/exclude\"", "\"path\":\"/m/.git/config\"");
    auto refused_other = sbx::parse_plan(other, std::string(kOrigin));
    REQUIRE_FALSE(refused_other.has_value());
    CHECK(refused_other.error().key == "filesystem.gitExclude.path");
}

TEST_CASE("plan: the exclude file's own sbx block, another group's, is replaced, not added to") {
    sbx::MemoryFs fs;
    fs.dir("/r/.git/info").dir("/r/.git/hooks").dir("/home/u");
    const std::string theirs = "*.o\n" + sbx::join_exclude("", {"/.vscode", "/.old-one"}) + "*.a\n";
    fs.file("/r/.git/info/exclude", theirs);
    sbx::PlanRequest req{{"sh"}, "/r", "", "/home/u", std::string(kTmp), {}, {}, std::nullopt, std::nullopt};
    auto p = sbx::make_plan(sbx::Policy{}, req, fs);
    REQUIRE_MESSAGE(p.has_value(), sbx::to_string(p.error()));
    REQUIRE(p->filesystem.git_exclude.has_value());
    const auto split = sbx::split_exclude(p->filesystem.git_exclude->content);
    CHECK(split.rest == "*.o\n*.a\n");  // the user's lines, in their order
    CHECK(std::count(split.lines.begin(), split.lines.end(), "/.vscode") == 1);
    CHECK(std::find(split.lines.begin(), split.lines.end(), "/.old-one") == split.lines.end());
}

TEST_CASE("plan: sbx's block in an exclude file splits off and joins back") {
    const std::string block = sbx::join_exclude("a\n", {"/.x", "/\\#y"});
    CHECK(block == "a\n" + std::string(sbx::kExcludeBlockBegin) + "\n/.x\n/\\#y\n" + std::string(sbx::kExcludeBlockEnd) + "\n");
    auto back = sbx::split_exclude(block + "b\n");
    CHECK(back.rest == "a\nb\n");
    CHECK(back.lines == std::vector<std::string>{"/.x", "/\\#y"});
    CHECK(sbx::join_exclude("a", {}) == "a");  // no lines: no block
    CHECK(sbx::join_exclude("a", {"/.x"}).starts_with("a\n# sbx: "));
    // A block without its last line (an older sbx's) runs to the end.
    back = sbx::split_exclude("a\n" + std::string(sbx::kExcludeBlockBegin) + "\n/.x\n/.y");
    CHECK(back.rest == "a\n");
    CHECK(back.lines.size() == 2);
    CHECK(sbx::split_exclude("no block\n").rest == "no block\n");
}

TEST_CASE("plan: a directory's link count is no part of its identity, a file's is") {
    using sbx::detail::same_identity;
    const sbx::Identity dir{true, sbx::FileType::directory, 1, 2, 3};
    auto more = dir;
    more.nlink = 7;  // a folder was made in it
    CHECK(same_identity(more, dir));
    more.ino = 9;
    CHECK_FALSE(same_identity(more, dir));
    const sbx::Identity file{true, sbx::FileType::regular, 1, 5, 1};
    auto linked = file;
    linked.nlink = 2;  // a second name to read it through
    CHECK_FALSE(same_identity(linked, file));
    CHECK(same_identity(sbx::Identity{}, sbx::Identity{}));
    CHECK_FALSE(same_identity(sbx::Identity{}, file));
}

TEST_CASE("plan: a placeholder's name becomes a gitignore pattern that matches it alone") {
    using sbx::detail::gitignore_literal;
    CHECK(gitignore_literal("/.bashrc") == "/.bashrc");
    CHECK(gitignore_literal("/.claude/hooks") == "/.claude/hooks");
    CHECK(gitignore_literal("/a*b?[c]\\d") == "/a\\*b\\?\\[c]\\\\d");
    CHECK(gitignore_literal("/#x") == "/\\#x");
    CHECK(gitignore_literal("/!x") == "/\\!x");
    CHECK(gitignore_literal("/x ") == "/x\\ ");
}

TEST_CASE("plan: ignoreViolations holds the substrings of the rules whose command matches") {
    sbx::MemoryFs fs;
    fs.dir("/r").dir("/home/u");
    sbx::Policy policy;
    policy.ignore_violations.push_back({"make", {"x.example", ""}, sbx::Source{}});
    policy.ignore_violations.push_back({"*", {"y.example"}, sbx::Source{}});
    policy.ignore_violations.push_back({"npm", {"z.example"}, sbx::Source{}});
    sbx::PlanRequest req{{"make", "test"}, "/r", "", "/home/u", std::string(kTmp), {}, {}, std::nullopt, std::nullopt};
    auto p = sbx::make_plan(policy, req, fs);
    REQUIRE(p.has_value());
    CHECK(p->ignore_violations == std::vector<std::string>{"x.example", "y.example"});
    check_round_trip(*p);
    CHECK(parsed(sbx::to_json(*p)).ignore_violations == p->ignore_violations);
    const std::string text = sbx::to_json(*p);
    check_refused(edit(text, "\"y.example\"", "\"\""), "ignoreViolations[1]");
    check_refused(edit(text, "\"y.example\"", "7"), "ignoreViolations[1]");
}

TEST_CASE("plan: scanStderr is an optional boolean, false when absent") {
    CHECK_FALSE(parsed(std::string(kBase)).scan_stderr);
    const auto on = parsed(edit(kBase, R"J("network": {"mode": "none"},)J", R"J("network": {"mode": "none"}, "scanStderr": true,)J"));
    CHECK(on.scan_stderr);
    check_round_trip(on);
    check_refused(edit(kBase, R"J("network": {"mode": "none"},)J", R"J("network": {"mode": "none"}, "scanStderr": 1,)J"),
                  "scanStderr");
    check_refused(edit(kBase, R"J("network": {"mode": "none"},)J", R"J("network": {"mode": "none"}, "scanStderr": "yes",)J"),
                  "scanStderr");
}

TEST_CASE("plan: weakerSandbox is an optional boolean, false when absent, written only when true") {
    const auto base = parsed(std::string(kBase));
    CHECK_FALSE(base.weaker_sandbox);
    CHECK(sbx::to_json(base).find("weakerSandbox") == std::string::npos);
    constexpr std::string_view at = R"J("failIfUnavailable": false,)J";
    const auto on = parsed(edit(kBase, at, R"J("failIfUnavailable": false, "weakerSandbox": true,)J"));
    CHECK(on.weaker_sandbox);
    CHECK(sbx::to_json(on).find(R"J("failIfUnavailable":false,"weakerSandbox":true,)J") != std::string::npos);
    check_round_trip(on);
    CHECK_FALSE(parsed(edit(kBase, at, R"J("failIfUnavailable": false, "weakerSandbox": false,)J")).weaker_sandbox);
    for (const char* bad : {R"J("true")J", "1", "null", "[]", "{}"}) {
        CAPTURE(bad);
        check_refused(edit(kBase, at, std::string(R"J("failIfUnavailable": false, "weakerSandbox": )J") + bad + ","),
                      "weakerSandbox");
    }
}

TEST_CASE("make_plan: weakerSandbox is the policy's, which only a layer that may set it turns on") {
    sbx::MemoryFs fs;
    fs.dir("/r").dir("/home/u");
    const sbx::PlanRequest req{{"true"}, "/r", "", "/home/u", std::string(kTmp), {}, {}, std::nullopt, std::nullopt};
    auto plan_of = [&](sbx::LayerKind kind, const std::string& file, const sbx::MergeOptions& options = {}) {
        std::vector<sbx::Settings> layers;
        layers.push_back(settings(kind, file, "/home/u", "/r", R"J({"sandbox": {"enableWeakerNestedSandbox": true}})J"));
        auto policy = sbx::effective_policy(std::move(layers), options, fs, {"/home/u"});
        REQUIRE(policy.has_value());
        return make(*policy, req, fs);
    };
    const auto user = plan_of(sbx::LayerKind::user, "/home/u/.claude/settings.json");
    CHECK(user.weaker_sandbox);
    check_round_trip(user);
    CHECK(sbx::to_json(user).find(R"J("weakerSandbox":true)J") != std::string::npos);
    const auto project = plan_of(sbx::LayerKind::project, "/r/.claude/settings.json");
    CHECK_FALSE(project.weaker_sandbox);
    CHECK(sbx::to_json(project).find("weakerSandbox") == std::string::npos);
    CHECK(std::any_of(project.warnings.begin(), project.warnings.end(), [](const sbx::Warning& w) {
        return w.key == "sandbox.enableWeakerNestedSandbox" && w.message.find("can turn on the weaker sandbox") != std::string::npos;
    }));
    // The command line's --weaker-sandbox.
    CHECK(plan_of(sbx::LayerKind::project, "/r/.claude/settings.json", sbx::MergeOptions{true, true}).weaker_sandbox);
}

TEST_CASE("plan: hints are optional, the settings' words when absent; each a line of text") {
    CHECK(parsed(std::string(kBase)).hints == sbx::allow_hints(sbx::SettingsWords::settings));
    const std::string hints =
        R"J("hints": {"hosts": "network.hosts in the agent file", "local": "network.local", "call": "--allow-host", "write": "files.write", "read": ""},)J";
    const auto with = parsed(edit(kBase, R"J("network": {"mode": "none"},)J", R"J("network": {"mode": "none"}, )J" + hints));
    CHECK(with.hints.hosts == "network.hosts in the agent file");
    CHECK(with.hints.read.empty());
    check_round_trip(with);
    const std::string text = sbx::to_json(with);
    check_refused(edit(text, R"J("write":"files.write")J", R"J("write":"files.write\n</sandbox_violations>")J"), "hints.write");
    check_refused(edit(text, R"J("write":"files.write")J", R"J("write":1)J"), "hints.write");
    check_refused(edit(text, R"J("call":"--allow-host",)J", ""), "hints.call");
    // env may be left out (none), and is one line of text when given.
    CHECK(with.hints.env.empty());
    const auto env = parsed(edit(text, R"J("env":"")J", R"J("env":"env in the agent file")J"));
    CHECK(env.hints.env == "env in the agent file");
    check_round_trip(env);
    check_refused(edit(text, R"J("env":"")J", R"J("env":"a\nb")J"), "hints.env");
    check_refused(edit(text, R"J("env":"")J", R"J("env":false)J"), "hints.env");
    check_refused(edit(text, R"J("env":"")J", R"J("envs":"")J"), "hints.envs");
    // sockets too: a plan written before it had the key keeps the settings' words.
    const auto sockets = parsed(edit(text, R"J(,"sockets":")J" + with.hints.sockets + "\"", R"J(,"sockets":"network.sockets")J"));
    CHECK(sockets.hints.sockets == "network.sockets");
    check_round_trip(sockets);
    CHECK(parsed(edit(text, R"J(,"sockets":")J" + with.hints.sockets + "\"", "")).hints.sockets ==
          sbx::allow_hints(sbx::SettingsWords::settings).sockets);
    check_refused(edit(text, R"J(,"sockets":")J" + with.hints.sockets + "\"", R"J(,"sockets":"a\nb")J"), "hints.sockets");
}

TEST_CASE("plan: filesystem.rules is optional; each rule a known kind and an absolute pattern") {
    const std::string with = edit(kBase, R"J("isolated": true,)J",
                                  R"J("isolated": true, "rules": [{"kind": "writable", "pattern": "/r", "why": "the root, writable"}, {"kind": "deny-read", "pattern": "/home/u/**/.env*"}],)J");
    const auto p = parsed(with);
    REQUIRE(p.rules.size() == 2);
    CHECK(p.rules[1].kind == sbx::FsRule::Kind::deny_read);
    CHECK(p.rules[1].pattern == "/home/u/**/.env*");
    check_round_trip(p);
    check_refused(edit(with, R"J("writable")J", R"J("write")J"), "filesystem.rules[0].kind");
    check_refused(edit(with, R"J("pattern": "/r")J", R"J("pattern": "r/x")J"), "filesystem.rules[0].pattern");
    check_refused(edit(with, R"J("pattern": "/r")J", R"J("pattern": "/r/../x")J"), "filesystem.rules[0].pattern");
    check_refused(edit(with, R"J("why": "the root, writable")J", R"J("why": "the root, writable", "extra": 1)J"), "filesystem.rules[0].extra");
}

TEST_CASE("plan: a deny-read rule may be a credential store's; no other kind may") {
    const std::string with = edit(kBase, R"J("isolated": true,)J",
                                  R"J("isolated": true, "rules": [{"kind": "deny-read", "pattern": "/home/u/.ssh", "credentialStore": true}, {"kind": "allow-read", "pattern": "/home/u/.ssh/config"}],)J");
    const auto p = parsed(with);
    REQUIRE(p.rules.size() == 2);
    CHECK(p.rules[0].deny == sbx::FsRule::Deny::credential_store);
    CHECK(p.rules[1].deny == sbx::FsRule::Deny::ordinary);
    check_round_trip(p);
    CHECK(sbx::to_json(p).find(R"J("credentialStore":true)J") != std::string::npos);
    const auto plain = parsed(edit(with, R"J("credentialStore": true)J", R"J("credentialStore": false)J"));
    CHECK(plain.rules[0].deny == sbx::FsRule::Deny::ordinary);
    check_refused(edit(with, R"J("credentialStore": true)J", R"J("credentialStore": "yes")J"),
                  "filesystem.rules[0].credentialStore");
    check_refused(edit(with, R"J("pattern": "/home/u/.ssh/config"})J",
                       R"J("pattern": "/home/u/.ssh/config", "credentialStore": true})J"),
                  "filesystem.rules[1].credentialStore");
}

TEST_CASE("plan: unixSockets lists the paths the launchers open; seccomp.allowUnixSockets says every one") {
    const std::string with =
        edit(edit(kBase, R"J("unixSockets": {"all": true, "paths": []})J",
                  R"J("unixSockets": {"all": false, "paths": ["/var/run/docker.sock"]})J"),
             R"J("allowUnixSockets": true)J", R"J("allowUnixSockets": false)J");
    const auto p = parsed(with);
    CHECK(p.unix_socket_paths == std::vector<std::string>{"/var/run/docker.sock"});
    CHECK_FALSE(p.all_unix_sockets);
    CHECK_FALSE(p.allow_unix_sockets);
    check_round_trip(p);
    check_refused(edit(with, R"J("/var/run/docker.sock")J", R"J("docker.sock")J"), "unixSockets.paths[0]");
    check_refused(edit(with, R"J("all": false, )J", ""), "unixSockets.all");
    // The filter's switch and `all` say the same: a listed path does not open every socket.
    check_refused(edit(with, R"J("allowUnixSockets": false)J", R"J("allowUnixSockets": true)J"),
                  "seccomp.allowUnixSockets");
    check_refused(edit(kBase, R"J("allowUnixSockets": true)J", R"J("allowUnixSockets": false)J"),
                  "seccomp.allowUnixSockets");
    check_refused(edit(kBase, R"J("unixSockets": {"all": true, "paths": []},)J", ""), "seccomp.allowUnixSockets");
}

TEST_CASE("plan: command.passFds is an ascending list of descriptors from 3 to 2^31-1") {
    const std::string list = "[3, 7, 2147483647]";
    auto with = [&](std::string_view to) { return edit(kBase, list, to); };
    // What a launcher may pass besides 0, 1 and 2; an empty list passes nothing.
    CHECK(parsed(with("[4]")).pass_fds == std::vector<int>{4});
    CHECK(parsed(with("[]")).pass_fds.empty());
    check_round_trip(parsed(with("[3, 4, 1000]")));
    check_refusals({
        // Not an array.
        {list, "7", "command.passFds"},
        {list, R"J("3 7")J", "command.passFds"},
        {list, R"J({"0": 3})J", "command.passFds"},
        {list, "null", "command.passFds"},
        // Not integers.
        {list, R"J([3, "7"])J", "command.passFds[1]"},
        {list, "[3, 7.0]", "command.passFds[1]"},
        {list, "[3, 7e0]", "command.passFds[1]"},
        {list, "[3, null]", "command.passFds[1]"},
        {list, "[3, true]", "command.passFds[1]"},
        {list, "[3, [7]]", "command.passFds[1]"},
        {list, "[[3]]", "command.passFds[0]"},
        // 0, 1 and 2 always reach the command; nothing below them is a descriptor.
        {list, "[2]", "command.passFds[0]"},
        {list, "[3, 0]", "command.passFds[1]"},
        {list, "[3, 1]", "command.passFds[1]"},
        {list, "[3, -1]", "command.passFds[1]"},
        {list, "[3, -9223372036854775808]", "command.passFds[1]"},
        // Above what an int holds, up to and past 2^64-1.
        {list, "[3, 2147483648]", "command.passFds[1]"},
        {list, "[3, 9223372036854775807]", "command.passFds[1]"},
        {list, "[3, 9223372036854775808]", "command.passFds[1]"},
        {list, "[3, 18446744073709551615]", "command.passFds[1]"},
        // Ascending, without repeats.
        {list, "[3, 7, 7]", "command.passFds[2]"},
        {list, "[3, 3]", "command.passFds[1]"},
        {list, "[7, 3]", "command.passFds[1]"},
        {list, "[3, 9, 8]", "command.passFds[2]"},
    });
    // Each refusal says what is wrong with the value.
    auto message = [&](std::string_view to) {
        auto p = sbx::parse_plan(with(to), std::string(kOrigin));
        REQUIRE_FALSE(p.has_value());
        return p.error().message;
    };
    CHECK(message("[2]").find("0, 1 and 2 always reach the command") != std::string::npos);
    CHECK(message("[3, 2147483648]").find("above 2147483647") != std::string::npos);
    CHECK(message("[3, 3]").find("ascending, without repeats") != std::string::npos);
    CHECK(message("[3, \"7\"]").find("expected an integer") != std::string::npos);
    // A key given twice is refused like any other.
    check_refused(with("[3], \"passFds\": [4]"), "command.passFds");
}

TEST_CASE("make_plan passes the descriptors the request names, sorted and each once, and no others") {
    sbx::MemoryFs fs;
    fs.dir("/r").dir("/home/u");
    sbx::PlanRequest req{{"sh"}, "/r", "", "/home/u", std::string(kTmp), {}, {}, std::nullopt, std::nullopt};
    // None by default, and then no passFds in the document.
    auto none = make(sbx::Policy{}, req, fs);
    CHECK(none.pass_fds.empty());
    CHECK(sbx::to_json(none).find("passFds") == std::string::npos);

    req.pass_fds = {9, 3, 9, 2147483647, 4};
    auto plan = make(sbx::Policy{}, req, fs);
    CHECK(plan.pass_fds == std::vector<int>{3, 4, 9, 2147483647});
    CHECK(sbx::to_json(plan).find(R"J("envRemoved":[],"passFds":[3,4,9,2147483647]})J") != std::string::npos);
    check_round_trip(plan);

    // 0, 1 and 2 always reach the command: naming one is a mistake, not a request.
    for (int fd : {2, 0, -1}) {
        CAPTURE(fd);
        req.pass_fds = {5, fd};
        auto p = sbx::make_plan(sbx::Policy{}, req, fs);
        REQUIRE_FALSE(p.has_value());
        CHECK(p.error().code == sbx::Errc::invalid_argument);
        CHECK(p.error().message.find("descriptor " + std::to_string(fd)) != std::string::npos);
    }
}

TEST_CASE("parse_plan: no mount binds the host's /proc, nor /sys writable") {
    const std::string bind_tmp =
        R"J({"kind": "bind", "path": "/tmp/sbx-0123456789abcdef", "source": "/tmp/sbx-0123456789abcdef", "expect": {"exists": false},)J";
    auto bind_at = [&](std::string_view kind, std::string_view path, std::string_view source) {
        return edit(kBase, bind_tmp,
                    "{\"kind\": \"" + std::string(kind) + "\", \"path\": \"" + std::string(path) +
                        "\", \"source\": \"" + std::string(source) +
                        R"J(", "expect": {"exists": true, "type": "directory", "dev": 5, "ino": 9, "nlink": 2},)J");
    };
    // The sandbox's /proc is its own: no bind puts the host's there or takes from it.
    check_refused(bind_at("bind", "/proc", "/proc"), "filesystem.mounts[1].path");
    check_refused(bind_at("ro-bind", "/proc/1", "/proc/1"), "filesystem.mounts[1].path");
    check_refused(bind_at("ro-bind", "/srv/p", "/proc/self"), "filesystem.mounts[1].path");
    // /sys stays read-only; a read-only bind of it is harmless.
    check_refused(bind_at("bind", "/sys/kernel", "/sys/kernel"), "filesystem.mounts[1].path");
    check_accepted(bind_at("ro-bind", "/sys/kernel", "/sys/kernel"));
    // Hiding something there is fine.
    check_accepted(edit(kBase, R"J("path": "/home/u/.ssh",)J", R"J("path": "/proc/kcore",)J"));
}

// root_exposes_home: a root that is a home directory or holds one exposes it;
// containment is by whole components, as at_or_under.
TEST_CASE("root_exposes_home: the root is, holds, or leaves alone each home") {
    struct Row {
        const char* root;
        std::vector<std::string> homes;
        std::optional<std::string> exposed;
    };
    const Row rows[] = {
        {"/home/ana", {"/home/ana"}, "/home/ana"},                      // the home itself
        {"/home", {"/home/ana"}, "/home/ana"},                          // its parent
        {"/srv", {"/srv/users/ana"}, "/srv/users/ana"},                 // further up
        {"/home/ana/proj", {"/home/ana"}, std::nullopt},                // a project inside it
        {"/home/ana/proj/src/lib", {"/home/ana"}, std::nullopt},        // deeper inside
        {"/srv/work", {"/home/ana"}, std::nullopt},                     // unrelated
        {"/home/an", {"/home/ana"}, std::nullopt},                      // a prefix, not a parent
        {"/home/ana", {"/home/an"}, std::nullopt},                      // the other way
        {"/home/ana", {"/home/ana2", "/home/anab"}, std::nullopt},       // longer names
        {"/home/ana", {}, std::nullopt},                                // no homes
        {"/home", {"/elsewhere", "/home/ana"}, "/home/ana"},            // HOME elsewhere, the account's inside
        {"/data", {"/home/ana", "/data/ana"}, "/data/ana"},             // a home reached through a symlink
        {"/home/ana", {"/home/ana/sub", "/home/ana"}, "/home/ana/sub"}, // the first that is inside
    };
    for (const auto& r : rows) {
        CAPTURE(std::string(r.root));
        CHECK(sbx::root_exposes_home(r.root, r.homes) == r.exposed);
    }
}

// --- filesystem.toolCache ---------------------------------------------------------

namespace {

constexpr std::string_view kCache = "/home/u/.cache/sbx/projects/r";

sbx::PlanRequest cache_request(const std::vector<std::string>& vars, std::optional<std::string> base = "/home/u/.cache") {
    sbx::PlanRequest req{{"make"}, "/r", "", "/home/u", std::string(kTmp), vars, {}, std::nullopt, std::nullopt};
    req.tool_cache_base = std::move(base);
    return req;
}

std::optional<std::string> env_of(const sbx::Plan& p, std::string_view name) {
    for (const auto& v : p.env)
        if (v.name == name) return v.value;
    return std::nullopt;
}

bool warned(const sbx::Plan& p, std::string_view text) {
    return std::any_of(p.warnings.begin(), p.warnings.end(),
                       [&](const sbx::Warning& w) { return w.message.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("plan: a tool cache home per root, bound writable, each tool's variable pointing into it, read back") {
    sbx::MemoryFs fs;
    fs.dir("/r").dir("/home/u/.cache/pip").dir("/home/u/.npm");
    const std::vector<std::string> vars{"PATH=/usr/bin", "XDG_CACHE_HOME=/home/u/.cache", "GOCACHE=/home/u/.cache/go-build"};
    auto plan = make(sbx::Policy{}, cache_request(vars), fs);
    REQUIRE(plan.tool_cache.has_value());
    CHECK(plan.tool_cache->path == kCache);
    // The caller's XDG_CACHE_HOME is what the home was made from: replaced. Its GOCACHE is kept, and said so.
    CHECK(env_of(plan, "XDG_CACHE_HOME") == std::string(kCache));
    CHECK(env_of(plan, "npm_config_cache") == std::string(kCache) + "/npm");
    CHECK(env_of(plan, "GOMODCACHE") == std::string(kCache) + "/go-mod");
    CHECK(env_of(plan, "PIP_CACHE_DIR") == std::string(kCache) + "/pip");
    CHECK(env_of(plan, "CCACHE_DIR") == std::string(kCache) + "/ccache");
    CHECK(env_of(plan, "CARGO_HOME") == std::string(kCache) + "/cargo");
    CHECK(env_of(plan, "GOCACHE") == std::string("/home/u/.cache/go-build"));
    REQUIRE(plan.tool_cache->kept.size() == 1);
    CHECK(plan.tool_cache->kept[0].name == "GOCACHE");
    CHECK(std::find(plan.tool_cache->set.begin(), plan.tool_cache->set.end(), "GOCACHE") == plan.tool_cache->set.end());
    CHECK(plan.tool_cache->set.front() == "XDG_CACHE_HOME");
    CHECK(warned(plan, "the command cannot write there"));  // the kept GOCACHE is read-only inside
    // Bound from itself, planned as missing: the launcher makes it.
    const auto bind = std::find_if(plan.filesystem.mounts.begin(), plan.filesystem.mounts.end(),
                                   [](const sbx::Mount& m) { return m.path == kCache; });
    REQUIRE(bind != plan.filesystem.mounts.end());
    CHECK(bind->kind == sbx::MountKind::bind);
    CHECK(bind->source == kCache);
    CHECK_FALSE(bind->expect.exists);
    // Only that one directory is writable; the user's caches stay read-only.
    CHECK(std::none_of(plan.filesystem.mounts.begin(), plan.filesystem.mounts.end(), [](const sbx::Mount& m) {
        return m.kind == sbx::MountKind::bind && (m.path == "/home/u/.cache" || m.path == "/home/u/.npm");
    }));
    CHECK(std::any_of(plan.rules.begin(), plan.rules.end(), [](const sbx::PlanRule& r) {
        return r.kind == sbx::FsRule::Kind::writable && r.pattern == kCache;
    }));
    check_round_trip(plan);
    CHECK(sbx::to_json(plan).find(R"("toolCache":{"path":"/home/u/.cache/sbx/projects/r")") != std::string::npos);
}

TEST_CASE("plan: no tool cache home without a base, with toolCache false, or with the filesystem disabled") {
    sbx::MemoryFs fs;
    fs.dir("/r").dir("/home/u");
    const std::vector<std::string> vars{"PATH=/usr/bin"};
    auto none = make(sbx::Policy{}, cache_request(vars, std::nullopt), fs);
    CHECK_FALSE(none.tool_cache.has_value());
    CHECK_FALSE(env_of(none, "XDG_CACHE_HOME").has_value());
    CHECK(sbx::to_json(none).find(R"("toolCache":null)") != std::string::npos);
    check_round_trip(none);
    sbx::Policy off;
    off.tool_cache = {false, {}};
    CHECK_FALSE(make(off, cache_request(vars), fs).tool_cache.has_value());
    sbx::Policy disabled;
    disabled.filesystem.disabled = {true, {}};
    CHECK_FALSE(make(disabled, cache_request(vars), fs).tool_cache.has_value());
}

TEST_CASE("plan: a tool cache home inside the root, the temporary directory or a protected or hidden path is left out") {
    sbx::MemoryFs fs;
    fs.dir("/r/.git").dir("/home/u/.ssh").dir("/tmp");
    const std::vector<std::string> vars{"PATH=/usr/bin"};
    sbx::Policy hide_ssh;  // the home itself hidden: a tie, which goes to the deny
    hide_ssh.filesystem.deny_read.push_back({"/home/u/.ssh/c/sbx/projects/r", {}});
    struct Case {
        std::string base;
        const sbx::Policy* policy;
        std::string_view warning;
    } cases[] = {
        {"/r/.cache", nullptr, "would lie inside the root"},
        {"/r/.git", nullptr, "would lie inside the root"},
        {std::string(kTmp), nullptr, "temporary directory"},
        {"/home/u/.ssh/c", &hide_ssh, "hidden by"},
        {"/nowhere/cache", nullptr, "/nowhere is not a directory"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.base);
        auto plan = make(c.policy ? *c.policy : sbx::Policy{}, cache_request(vars, c.base), fs);
        CHECK_FALSE(plan.tool_cache.has_value());
        CHECK_FALSE(env_of(plan, "XDG_CACHE_HOME").has_value());
        CHECK(warned(plan, c.warning));
    }
    // A broader denyRead (an agent file's scoped reads hide the whole home) does
    // not: the home is a writable place, which re-opens reads below it, and the
    // rest of the home stays hidden.
    sbx::Policy scoped;
    scoped.filesystem.deny_read.push_back({"/home/u", {}});
    fs.dir("/home/u/.cache");
    auto kept = make(scoped, cache_request(vars), fs);
    REQUIRE(kept.tool_cache.has_value());
    CHECK(kept.tool_cache->path == "/home/u/.cache/sbx/projects/r");
    CHECK_FALSE(warned(kept, "no tool cache home"));
    sbx::Policy protect;
    protect.filesystem.deny_write.push_back({"/home/u/.cache", {}});
    auto denied = make(protect, cache_request(vars), fs);
    CHECK_FALSE(denied.tool_cache.has_value());
    CHECK(warned(denied, "denied by filesystem.denyWrite"));
}

TEST_CASE("plan: a symlink on the way to the tool cache home fails the plan; one above the base is followed") {
    sbx::MemoryFs fs;
    fs.dir("/r").dir("/home/u").dir("/data/cache").symlink("/home/u/.cache", "/data/cache");
    auto followed = make(sbx::Policy{}, cache_request({}), fs);
    REQUIRE(followed.tool_cache.has_value());
    CHECK(followed.tool_cache->path == "/data/cache/sbx/projects/r");
    fs.dir("/elsewhere").symlink("/data/cache/sbx", "/elsewhere");
    auto p = sbx::make_plan(sbx::Policy{}, cache_request({}), fs);
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error().code == sbx::Errc::invalid_argument);
    CHECK(p.error().file == "/data/cache/sbx");
    CHECK(p.error().message.find("a symlink") != std::string::npos);
}

TEST_CASE("plan: filesystem.toolCache is a writable bind outside the root and TMPDIR whose variables point into it") {
    sbx::MemoryFs fs;
    fs.dir("/r").dir("/home/u");
    auto plan = make(sbx::Policy{}, cache_request({"PATH=/usr/bin"}), fs);
    const std::string text = sbx::to_json(plan);
    auto refused = [&](const std::string& from, const std::string& to, std::string_view key) {
        std::string t = text;
        const auto at = t.find(from);
        REQUIRE_MESSAGE(at != std::string::npos, from);
        t.replace(at, from.size(), to);
        auto back = sbx::parse_plan(t, std::string(kOrigin));
        REQUIRE_FALSE(back.has_value());
        CHECK(back.error().code == sbx::Errc::invalid_plan);
        CHECK(back.error().key == key);
    };
    refused(R"("toolCache":{"path":"/home/u/.cache/sbx/projects/r")", R"("toolCache":{"path":"/r/c")",
            "filesystem.toolCache.path");
    refused(R"("toolCache":{"path":"/home/u/.cache/sbx/projects/r")", R"("toolCache":{"path":"/home/u/.cache")",
            "filesystem.toolCache.path");  // no bind of it
    refused(R"("set":["XDG_CACHE_HOME")", R"("set":["PATH")", "filesystem.toolCache.set[0]");
    refused(R"("kept":[])", R"("kept":[{"why":"x"}])", "filesystem.toolCache.kept[0].name");
    refused(R"("kept":[])", R"("kept":[],"size":1)", "filesystem.toolCache.size");
    // Its bind alone may be missing when the plan is made, as TMPDIR's.
    std::string no_cache = text;
    const std::string from = R"("toolCache":{"path")";
    const auto at = no_cache.find(from);
    REQUIRE(at != std::string::npos);
    const auto end = no_cache.find("]}", no_cache.find(R"("kept")", at)) + 2;
    no_cache.replace(at, end - at, R"("toolCache":null)");
    auto back = sbx::parse_plan(no_cache, std::string(kOrigin));
    REQUIRE_FALSE(back.has_value());
    CHECK(back.error().message.find("may be missing") != std::string::npos);
}

// --- filesystem.gitRecord ---------------------------------------------------------

TEST_CASE("plan: the record of the repositories found is read and named; malformed, writable or without a base it is left out") {
    using K = sbx::RecordedRepository::Kind;
    const std::string record = "/home/u/.cache/sbx/git/r";
    auto with_record = [](sbx::PlanRequest req) {
        req.git_record_base = "/home/u/.cache";
        return req;
    };
    sbx::MemoryFs fs;
    fs.dir("/r/.git/objects").dir("/r/.git/refs").file("/r/.git/HEAD", "ref: refs/heads/main\n");
    fs.dir("/r/vendor/x/.git/objects").dir("/r/vendor/x/.git/refs").dir("/r/vendor/x/.git/hooks");
    fs.file("/r/vendor/x/.git/HEAD", "ref: refs/heads/main\n").file("/r/vendor/x/.git/config", "[core]\n\tbare = false\n");
    fs.dir("/home/u/.cache/sbx/git");
    auto plan = make(sbx::Policy{}, with_record(cache_request({})), fs);
    REQUIRE(plan.filesystem.git_record.has_value());
    CHECK(*plan.filesystem.git_record == record);  // named before there is one
    CHECK_FALSE(has_mount(plan, sbx::MountKind::ro_bind, "/r/vendor/x/.git/config"));

    fs.file(record, sbx::git_record_text({{K::tree, "/r/vendor/x"}}));
    plan = make(sbx::Policy{}, with_record(cache_request({})), fs);
    CHECK(plan.filesystem.git_record == record);
    CHECK(has_mount(plan, sbx::MountKind::ro_bind, "/r/vendor/x/.git/config"));
    CHECK(has_mount(plan, sbx::MountKind::ro_bind, "/r/vendor/x/.git/hooks"));
    CHECK_FALSE(warned(plan, "no record"));

    // No base: none read, none named.
    plan = make(sbx::Policy{}, cache_request({}), fs);
    CHECK_FALSE(plan.filesystem.git_record.has_value());
    CHECK_FALSE(has_mount(plan, sbx::MountKind::ro_bind, "/r/vendor/x/.git/config"));

    // Malformed: not used, said so, naming the file and the byte.
    fs.file(record, "sbx git record 1\nT/r/vendor/x");
    plan = make(sbx::Policy{}, with_record(cache_request({})), fs);
    CHECK_FALSE(plan.filesystem.git_record.has_value());
    CHECK_FALSE(has_mount(plan, sbx::MountKind::ro_bind, "/r/vendor/x/.git/config"));
    CHECK(std::any_of(plan.warnings.begin(), plan.warnings.end(), [&](const sbx::Warning& w) {
        return w.file == record && w.message.find("at byte 17") != std::string::npos;
    }));

    // Where the command could write it: its entries still protect, but it is not named.
    fs.file(record, sbx::git_record_text({{K::tree, "/r/vendor/x"}}));
    std::vector<sbx::Settings> layers;
    layers.push_back(settings(sbx::LayerKind::user, "/home/u/.claude/settings.json", "/home/u", "/r",
                              R"J({"sandbox": {"filesystem": {"allowWrite": ["/home/u/.cache"]}}})J"));
    auto policy = sbx::merge(std::move(layers), {}, fs);
    REQUIRE(policy.has_value());
    plan = make(*policy, with_record(cache_request({})), fs);
    CHECK_FALSE(plan.filesystem.git_record.has_value());
    CHECK(warned(plan, "the command could write it"));

    // A symlink on the way: not followed.
    sbx::MemoryFs linked;
    linked.dir("/r").dir("/home/u/.cache/elsewhere").symlink("/home/u/.cache/sbx", "elsewhere");
    plan = make(sbx::Policy{}, with_record(cache_request({}, std::nullopt)), linked);  // no tool cache, which refuses it
    CHECK_FALSE(plan.filesystem.git_record.has_value());
    CHECK(warned(plan, "a symlink on the way to it"));
}

// ---------------------------------------------------------------------------
// Limits

TEST_CASE("plan: limits come back with where each was set and how to raise it; they are refused out of range or unknown") {
    const std::string with = edit(kBase, R"J(  "warnings": [)J",
                                  R"J(  "limits": {"timeoutSeconds": {"value": 600, "setBy": "sandbox.limits.timeoutSeconds in /home/u/.claude/settings.json", "raise": "raise it there"},
             "processes": {"value": 4096, "setBy": "sbx's default", "raise": "set it"}},
  "warnings": [)J");
    const auto p = parsed(with);
    const auto& timeout = p.limits[static_cast<std::size_t>(sbx::Limit::timeout)];
    REQUIRE(timeout);
    CHECK(timeout->value == 600);
    CHECK(timeout->set_by == "sandbox.limits.timeoutSeconds in /home/u/.claude/settings.json");
    CHECK(timeout->raise == "raise it there");
    CHECK(p.limits[static_cast<std::size_t>(sbx::Limit::processes)]->value == 4096);
    CHECK_FALSE(p.limits[static_cast<std::size_t>(sbx::Limit::memory)]);
    // Written back byte for byte.
    CHECK(parsed(sbx::to_json(p)).limits == p.limits);
    const auto limited = [&](std::string_view member) {
        return edit(kBase, R"J(  "warnings": [)J", "  \"limits\": {" + std::string(member) + "},\n  \"warnings\": [");
    };
    check_refused(limited(R"J("timeoutSecond": {"value": 1, "setBy": "x", "raise": "y"})J"), "limits.timeoutSecond");
    check_refused(limited(R"J("processes": {"value": 0, "setBy": "x", "raise": "y"})J"), "limits.processes.value");
    check_refused(limited(R"J("processes": {"value": 4194305, "setBy": "x", "raise": "y"})J"), "limits.processes.value");
    check_refused(limited(R"J("processes": {"value": 5, "setBy": "x"})J"), "limits.processes.raise");
    check_refused(limited(R"J("processes": {"value": 5, "setBy": "x", "raise": "y", "why": 1})J"), "limits.processes.why");
    check_refused(limited(R"J("cpuSeconds": {"value": "5", "setBy": "x", "raise": "y"})J"), "limits.cpuSeconds.value");
}

TEST_CASE("plan: a limit's advice names what raises it, by where it was set; its line names the limit, the value and both") {
    const sbx::Source managed{sbx::LayerKind::managed, sbx::FileName("/etc/m.json"), "sandbox.limits.timeoutSeconds"};
    CHECK(sbx::limit_raise_advice(sbx::Limit::timeout, managed) ==
          "managed settings cap it (sandbox.limits.timeoutSeconds in /etc/m.json): only they can raise it");
    CHECK(sbx::limit_raise_advice(sbx::Limit::processes, std::nullopt) ==
          "set sandbox.limits.processes in your user settings (~/.claude/settings.json), or give --limit processes=N");
    const sbx::Source project{sbx::LayerKind::project, sbx::FileName("/r/.claude/settings.json"), "sandbox.limits.cpuSeconds"};
    CHECK(sbx::limit_raise_advice(sbx::Limit::cpu, project) ==
          "the project's /r/.claude/settings.json lowers it (sandbox.limits.cpuSeconds): raise it there");
    const sbx::Source line{sbx::LayerKind::flag, sbx::FileName("(command line)"), "--limit memoryMiB"};
    CHECK(sbx::limit_raise_advice(sbx::Limit::memory, line) == "give a higher --limit memoryMiB=N");
    const sbx::PlanLimit pl{60, "sandbox.limits.timeoutSeconds in /etc/m.json", "ask"};
    CHECK(sbx::limit_line(sbx::Limit::timeout, pl, "it ran that long") ==
          "limit timeoutSeconds 60s: it ran that long (set by sandbox.limits.timeoutSeconds in /etc/m.json; to raise it, ask)");
}
