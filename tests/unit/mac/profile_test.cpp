// sbx::mac::profile() and its parts, over plans made by make_plan() on in-memory
// trees. Golden files: tests/golden/seatbelt/NAME.sb. Set SBX_UPDATE_GOLDEN=1 to
// rewrite them, then review the diff.
//
// Every profile made here is read back as S-expressions: each form must be one
// Seatbelt can compile as far as a reader without a Mac can tell (operation and
// filter names from a table), and its file rules, evaluated as Seatbelt does (the
// last matching rule decides), must decide as sbx::decide() does for a set of
// sample paths.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "golden.hpp"
#include "sbx/core/glob.hpp"
#include "sbx/mac/profile.hpp"
#include "sbx/mac/quote.hpp"
#include "sbx/mac/sbpl_regex.hpp"
#include "sbx/plan/make_plan.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/rules/fs_rules.hpp"
#include "sbx/settings/defaults.hpp"
#include "sbx/settings/settings.hpp"

namespace {

// ---------------------------------------------------------------------------
// An S-expression reader for SBPL as profile() writes it: lists, symbols,
// strings ("..." with backslash escapes, #"..." raw) and `;` comments.

struct Sexp {
    enum class Kind { list, symbol, string };
    Kind kind = Kind::list;
    std::string text;  // symbol or decoded string
    std::vector<Sexp> items;

    bool is_symbol(std::string_view s) const { return kind == Kind::symbol && text == s; }
    bool is_list() const { return kind == Kind::list; }
};

struct Reader {
    std::string_view in;
    std::size_t at = 0;
    std::string error;

    void skip() {
        while (at < in.size()) {
            const char c = in[at];
            if (c == ';') {
                while (at < in.size() && in[at] != '\n') ++at;
            } else if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
                ++at;
            } else {
                return;
            }
        }
    }

    std::optional<Sexp> one() {
        skip();
        if (at >= in.size()) return fail("unexpected end");
        const char c = in[at];
        if (c == ')') return fail("unexpected )");
        if (c == '(') {
            ++at;
            Sexp list;
            for (;;) {
                skip();
                if (at >= in.size()) return fail("unclosed (");
                if (in[at] == ')') {
                    ++at;
                    return list;
                }
                auto item = one();
                if (!item) return std::nullopt;
                list.items.push_back(std::move(*item));
            }
        }
        if (c == '"' || (c == '#' && at + 1 < in.size() && in[at + 1] == '"')) {
            const bool raw = c == '#';
            at += raw ? 2 : 1;
            Sexp s{Sexp::Kind::string, {}, {}};
            while (at < in.size() && in[at] != '"') {
                if (!raw && in[at] == '\\') {
                    if (++at >= in.size()) return fail("a backslash at the end");
                }
                s.text += in[at++];
            }
            if (at >= in.size()) return fail("unclosed string");
            ++at;
            return s;
        }
        Sexp s{Sexp::Kind::symbol, {}, {}};
        while (at < in.size() && std::string_view(" \n\t\r();\"").find(in[at]) == std::string_view::npos)
            s.text += in[at++];
        return s;
    }

    std::optional<Sexp> fail(std::string what) {
        error = what + " at byte " + std::to_string(at);
        return std::nullopt;
    }
};

std::vector<Sexp> read_all(std::string_view text) {
    Reader r{text, 0, {}};
    std::vector<Sexp> out;
    for (;;) {
        r.skip();
        if (r.at >= text.size()) return out;
        auto s = r.one();
        REQUIRE_MESSAGE(s.has_value(), "not an S-expression: " << r.error);
        out.push_back(std::move(*s));
    }
}

// ---------------------------------------------------------------------------
// What Seatbelt knows. Names as they appear in Apple's profiles
// (/System/Library/Sandbox/Profiles/system.sb and bsd.sb, macOS 10.15, as kept in
// knightsc/sandbox_profiles), Chromium's sandbox/policy/mac/common.sb, OpenAI
// Codex's codex-rs/core/src/seatbelt_*.sbpl and anthropic-experimental/
// sandbox-runtime's src/sandbox/macos-sandbox-utils.ts; `lsopen` as Apple's own
// LaunchServices error names it ("The sandbox profile of this process is missing
// (allow lsopen)"), `file-link` and `appleevent-send` as other public Seatbelt
// generators deny them. A name outside these tables makes sandbox-exec refuse the
// whole profile, which only a Mac shows.

constexpr std::string_view kOperations[] = {
    "default",
    "appleevent-send",
    "file-ioctl",
    "file-link",
    "file-map-executable",
    "file-read*",
    "file-read-data",
    "file-read-metadata",
    "file-test-existence",
    "file-write*",
    "file-write-create",
    "file-write-data",
    "file-write-unlink",
    "iokit-open",
    "ipc-posix-sem",
    "ipc-posix-shm",
    "ipc-posix-shm-read*",
    "lsopen",
    "mach-lookup",
    "network*",
    "network-bind",
    "network-inbound",
    "network-outbound",
    "process-exec",
    "process-fork",
    "process-info*",
    "pseudo-tty",
    "signal",
    "sysctl-read",
    "system-socket",
    "user-preference-read",
};

constexpr std::string_view kFilters[] = {
    "global-name", "ipc-posix-name", "literal", "local",       "path",
    "path-regex",  "regex",          "remote",  "require-all", "require-any",
    "require-not", "socket-domain",  "subpath", "sysctl-name", "sysctl-name-prefix",
    "target",      "vnode-type",
};

// Symbols that stand as a filter's argument.
constexpr std::string_view kFilterConstants[] = {"same-sandbox", "DIRECTORY", "AF_UNIX", "ip", "unix-socket"};

template <std::size_t N>
bool known(const std::string_view (&table)[N], std::string_view name) {
    return std::find(std::begin(table), std::end(table), name) != std::end(table);
}

void check_filter(const Sexp& f) {
    REQUIRE_MESSAGE(f.is_list(), "a filter is a list");
    REQUIRE_FALSE(f.items.empty());
    REQUIRE(f.items[0].kind == Sexp::Kind::symbol);
    const std::string& name = f.items[0].text;
    CHECK_MESSAGE(known(kFilters, name), "not a Seatbelt filter: " << name);
    for (std::size_t i = 1; i < f.items.size(); ++i) {
        const Sexp& a = f.items[i];
        if (a.is_list())
            check_filter(a);
        else if (a.kind == Sexp::Kind::symbol)
            CHECK_MESSAGE(known(kFilterConstants, a.text), "unknown argument " << a.text);
        if (name == "require-all" || name == "require-any" || name == "require-not") CHECK(a.is_list());
    }
    if (name == "local" || name == "remote") {
        REQUIRE(f.items.size() >= 2);
        CHECK(f.items[1].kind == Sexp::Kind::symbol);
    }
}

// Every form is (version 1), or (allow|deny OPERATION... FILTER...) with at least
// one operation and every name known.
void check_forms(const std::vector<Sexp>& forms) {
    REQUIRE(forms.size() >= 2);
    CHECK(forms[0].items.size() == 2);
    CHECK(forms[0].items[0].is_symbol("version"));
    CHECK(forms[1].items.size() == 2);
    CHECK(forms[1].items[0].is_symbol("deny"));
    CHECK(forms[1].items[1].is_symbol("default"));
    for (std::size_t i = 1; i < forms.size(); ++i) {
        const Sexp& f = forms[i];
        REQUIRE(f.is_list());
        REQUIRE(f.items.size() >= 2);
        CHECK_MESSAGE((f.items[0].is_symbol("allow") || f.items[0].is_symbol("deny")), "form " << i);
        std::size_t j = 1;
        for (; j < f.items.size() && f.items[j].kind == Sexp::Kind::symbol; ++j)
            CHECK_MESSAGE(known(kOperations, f.items[j].text), "not a Seatbelt operation: " << f.items[j].text);
        CHECK_MESSAGE(j > 1, "form " << i << " names no operation");
        for (; j < f.items.size(); ++j) check_filter(f.items[j]);
    }
}

std::vector<Sexp> parsed_profile(const std::string& text) {
    auto forms = read_all(text);
    check_forms(forms);
    return forms;
}

// ---------------------------------------------------------------------------
// Seatbelt's decision for a file operation, as the profile says it: the last
// rule that names the operation and whose filters match decides; none: denied.

bool covers(std::string_view listed, std::string_view op) {
    if (listed == "default") return true;
    if (listed.ends_with('*')) return op.starts_with(listed.substr(0, listed.size() - 1));
    return listed == op;
}

// A profile's regex, compiled once: the tests ask each of them about many paths,
// and compiling one again for every path took most of their time.
const std::regex& compiled(const std::string& pattern) {
    static std::map<std::string, std::regex> cache;
    auto it = cache.find(pattern);
    if (it == cache.end()) it = cache.emplace(pattern, std::regex(pattern, std::regex::extended)).first;
    return it->second;
}

bool matches(const Sexp& f, const std::string& path) {
    const std::string& name = f.items[0].text;
    auto arg = [&] { return f.items.at(1).text; };
    if (name == "literal") return path == arg();
    if (name == "subpath") return sbx::paths::at_or_under(path, arg());
    if (name == "regex") return std::regex_search(path, compiled(arg()));
    if (name == "require-all")
        return std::all_of(f.items.begin() + 1, f.items.end(), [&](const Sexp& s) { return matches(s, path); });
    if (name == "require-any")
        return std::any_of(f.items.begin() + 1, f.items.end(), [&](const Sexp& s) { return matches(s, path); });
    if (name == "require-not") return !matches(f.items.at(1), path);
    return false;  // vnode-type and the rest: not a plain file's path
}

bool seatbelt_allows(const std::vector<Sexp>& forms, std::string_view op, const std::string& path) {
    bool allowed = false;
    for (std::size_t i = 1; i < forms.size(); ++i) {
        const Sexp& f = forms[i];
        std::size_t j = 1;
        bool named = false;
        for (; j < f.items.size() && f.items[j].kind == Sexp::Kind::symbol; ++j)
            named = named || covers(f.items[j].text, op);
        if (!named) continue;
        bool hit = j == f.items.size();
        for (; j < f.items.size() && !hit; ++j) hit = matches(f.items[j], path);
        if (hit) allowed = f.items[0].is_symbol("allow");
    }
    return allowed;
}

// ---------------------------------------------------------------------------
// Plans.

struct Setup {
    std::string root = "/Users/u/proj";
    std::string home = "/Users/u";
    std::string tmpdir = "/tmp/sbx-0123456789abcdef";
    std::optional<std::string> settings;  // the user's settings file; none: the built-in default policy
};

sbx::Plan plan_for(const Setup& s, const sbx::FsView& fs) {
    std::vector<sbx::Settings> layers;
    if (s.settings) {
        sbx::SettingsSource src{sbx::LayerKind::user, s.home + "/.claude/settings.json", {s.home, s.home}, s.root};
        auto parsed = sbx::parse_settings(*s.settings, src);
        REQUIRE_MESSAGE(parsed.has_value(), (parsed ? std::string() : sbx::to_string(parsed.error())));
        layers.push_back(std::move(*parsed));
    }
    auto policy = sbx::effective_policy(std::move(layers), {}, fs, {s.home});
    REQUIRE_MESSAGE(policy.has_value(), (policy ? std::string() : sbx::to_string(policy.error())));
    static const std::vector<std::string> environ{"PATH=/usr/bin:/bin", "HOME=/Users/u"};
    sbx::PlanRequest req{{"sh", "-c", "make"}, s.root, "", s.home, s.tmpdir, environ, {}, std::nullopt, std::nullopt};
    auto plan = sbx::make_plan(*policy, req, fs);
    REQUIRE_MESSAGE(plan.has_value(), (plan ? std::string() : sbx::to_string(plan.error())));
    return std::move(*plan);
}

sbx::mac::ProfileOptions ports() {
    sbx::mac::ProfileOptions o;
    o.http_proxy_port = 8080;
    o.socks_proxy_port = 1080;
    return o;
}

std::string profile_ok(const sbx::Plan& plan, const sbx::mac::ProfileOptions& opt) {
    auto text = sbx::mac::profile(plan, opt);
    REQUIRE_MESSAGE(text.has_value(), (text ? std::string() : sbx::to_string(text.error())));
    return *text;
}

void repository(sbx::MemoryFs& fs, const std::string& root) {
    fs.dir(root + "/src").file(root + "/src/main.c");
    fs.dir(root + "/.git/objects").dir(root + "/.git/refs").file(root + "/.git/HEAD", "ref: refs/heads/main\n");
    fs.file(root + "/.git/config").dir(root + "/.git/hooks").file(root + "/.git/hooks/pre-commit.sample");
}

// The plan's rules as FsRules, for sbx::decide().
sbx::FsRules engine_rules(const sbx::Plan& plan) {
    sbx::FsRules r;
    for (const auto& pr : plan.rules) {
        r.rules.emplace_back(pr.kind, pr.pattern, "plan", std::nullopt, std::string());
        r.rules.back().deny = pr.deny;
    }
    sbx::index_rules(r);
    return r;
}

// Concrete paths a pattern names, and around them: each `**` as nothing, one or
// two components; each wildcard component as a few names it matches and one it
// does not; then the path, one below it and its parent.
std::vector<std::string> samples_of(const std::string& pattern) {
    static const std::vector<std::string> names{"x",          ".env",   "a.key",  "public-1.key", "file1.txt",
                                                "fileXY.txt", "b",      "c1",     "9z",           "az",
                                                "open",       "public", "a.lock", "nomatch"};
    std::vector<std::string> heads{""};
    for (auto c : sbx::paths::components(pattern)) {
        std::vector<std::string> choices;
        if (c == "**") {
            choices = {"", "d1", "d1/d2"};
        } else if (sbx::glob::has_wildcard(c)) {
            for (const auto& n : names)
                if (sbx::glob::detail::match_component(c, n) && choices.size() < 3) choices.push_back(n);
            choices.push_back("nomatch");
        } else {
            choices = {std::string(c)};
        }
        std::vector<std::string> next;
        for (const auto& h : heads)
            for (const auto& ch : choices)
                if (next.size() < 60) next.push_back(ch.empty() ? h : h + "/" + ch);
        heads.swap(next);
    }
    std::vector<std::string> out;
    for (const auto& h : heads) {
        const std::string p = h.empty() ? "/" : h;
        out.push_back(p);
        out.push_back(sbx::paths::join(p, "f"));
        out.push_back(sbx::paths::parent(p));
    }
    return out;
}

enum class Agreement { exact, never_wider };

// Seatbelt, reading the profile, decides every sample path as the engine does
// (never_wider: allows nothing the engine refuses, for plans where a `**` allow
// meets a pattern deny and the profile is stricter on purpose). Paths under
// /private stand for the /private forms of rules and are left out.
void check_agrees(const sbx::Plan& plan, const std::vector<Sexp>& forms, std::vector<std::string> extra = {},
                  Agreement how = Agreement::exact) {
    if (!plan.filesystem.isolated) return;
    const auto rules = engine_rules(plan);
    std::set<std::string> paths(extra.begin(), extra.end());
    for (const auto& r : plan.rules)
        for (auto& p : samples_of(r.pattern)) paths.insert(std::move(p));
    std::size_t checked = 0;
    for (const auto& p : paths) {
        if (sbx::paths::at_or_under(p, "/private") || sbx::paths::at_or_under(p, "/dev")) continue;
        for (const auto access : {sbx::Access::read, sbx::Access::write}) {
            const bool engine = sbx::decide(rules, p, access).allowed;
            const bool seatbelt =
                seatbelt_allows(forms, access == sbx::Access::read ? "file-read-data" : "file-write-data", p);
            INFO(sbx::access_name(access) << " " << p << ": engine " << engine << ", profile " << seatbelt);
            if (how == Agreement::exact)
                CHECK(engine == seatbelt);
            else
                CHECK((engine || !seatbelt));
            ++checked;
        }
    }
    CHECK(checked > 20);
}

// The golden file, the names check and the engine's agreement, for one plan.
std::vector<Sexp> check_profile(const std::string& name, const sbx::Plan& plan, const sbx::mac::ProfileOptions& opt,
                                std::vector<std::string> extra = {}, Agreement how = Agreement::exact) {
    const std::string text = profile_ok(plan, opt);
    sbx_test::check_golden("seatbelt/" + name + ".sb", text, "Seatbelt profile");
    auto forms = parsed_profile(text);
    check_agrees(plan, forms, std::move(extra), how);
    // The same plan and options make the same text.
    CHECK(profile_ok(plan, opt) == text);
    return forms;
}

// The index of the first form equal to `want` (as text, re-read), or npos.
std::size_t index_of(const std::vector<Sexp>& forms, std::string_view want) {
    const auto w = read_all(want).at(0);
    auto same = [](auto&& self, const Sexp& a, const Sexp& b) -> bool {
        if (a.kind != b.kind || a.text != b.text || a.items.size() != b.items.size()) return false;
        for (std::size_t i = 0; i < a.items.size(); ++i)
            if (!self(self, a.items[i], b.items[i])) return false;
        return true;
    };
    for (std::size_t i = 0; i < forms.size(); ++i)
        if (same(same, forms[i], w)) return i;
    return std::string::npos;
}

// The paths in the literal filters of the (deny file-write-unlink ...) form.
std::set<std::string> unlink_denied(const std::vector<Sexp>& forms) {
    std::set<std::string> out;
    for (const auto& f : forms)
        if (f.items.size() > 2 && f.items[0].is_symbol("deny") && f.items[1].is_symbol("file-write-unlink"))
            for (std::size_t i = 2; i < f.items.size(); ++i)
                if (f.items[i].items.at(0).is_symbol("literal")) out.insert(f.items[i].items.at(1).text);
    return out;
}

bool has_filter(const Sexp& form, std::string_view name, std::string_view arg) {
    for (const auto& f : form.items)
        if (f.is_list() && f.items.size() == 2 && f.items[0].is_symbol(name) && f.items[1].text == arg) return true;
    return false;
}

// Whether a form is (VERB OPERATION ... (subpath PATH)).
bool is_rule(const Sexp& f, std::string_view verb, std::string_view op, std::string_view path) {
    return f.items.size() >= 3 && f.items[0].is_symbol(verb) && f.items[1].is_symbol(op) &&
           has_filter(f, "subpath", path);
}

}  // namespace

// ---------------------------------------------------------------------------
// Golden profiles

TEST_CASE("seatbelt golden: the default policy") {
    sbx::MemoryFs fs;
    fs.dir("/Users/u/proj/src").dir("/Users/u/.ssh").file("/Users/u/.ssh/id_ed25519").file("/Users/u/.bashrc");
    Setup s;
    s.tmpdir = "/var/folders/zz/abc123/T/sbx-0123456789abcdef";
    const auto plan = plan_for(s, fs);
    auto forms =
        check_profile("defaults", plan, ports(),
                      {"/Users/u/.ssh/id_ed25519", "/Users/u/.aws/credentials", "/Users/u/proj/a.c", "/etc/hosts"});
    // Credential stores are hidden; the temporary directory is writable under its /private name too.
    CHECK(index_of(forms, R"((deny file-read* (subpath "/Users/u/.ssh")))") != std::string::npos);
    CHECK(index_of(forms, R"((allow file-write* (subpath "/private/var/folders/zz/abc123/T/sbx-0123456789abcdef")))") !=
          std::string::npos);
    CHECK(index_of(forms, R"((allow network-outbound (remote ip "localhost:8080")))") != std::string::npos);
    CHECK(index_of(forms, R"((allow network-outbound (remote ip "localhost:1080")))") != std::string::npos);
    CHECK(index_of(forms, "(allow pseudo-tty)") != std::string::npos);
}

TEST_CASE("seatbelt golden: a read deny with re-opened paths") {
    sbx::MemoryFs fs;
    fs.dir("/Users/u/projects/app/src").dir("/Users/u/.config/tool").dir("/Users/u/projects/shared");
    fs.file("/Users/u/.zshrc").dir("/Users/u/Documents");
    Setup s;
    s.root = "/Users/u/projects/app";
    s.settings =
        R"J({"sandbox": {"filesystem": {"denyRead": ["~/"], "allowRead": ["~/.config/tool", "~/projects/shared"]}}})J";
    const auto plan = plan_for(s, fs);
    auto forms = check_profile("read-deny-reopened", plan, ports(),
                               {"/Users/u/Documents/a.txt", "/Users/u/projects/shared/x", "/Users/u/projects/other",
                                "/Users/u/projects/app/src/a.c", "/Users/u/.config/tool/c.json"});
    // The narrower re-opened paths come after the deny they re-open.
    const auto deny = index_of(forms, R"((deny file-read* (subpath "/Users/u")))");
    REQUIRE(deny != std::string::npos);
    for (const char* reopened : {"/Users/u/.config/tool", "/Users/u/projects/shared", "/Users/u/projects/app"}) {
        INFO(reopened);
        const auto allow = index_of(forms, std::string(R"((allow file-read* (subpath ")") + reopened + "\"))");
        REQUIRE(allow != std::string::npos);
        CHECK(deny < allow);
    }
    // The home directory and everything above it stay where they are.
    const auto pinned = unlink_denied(forms);
    CHECK(pinned.count("/Users/u") == 1);
    CHECK(pinned.count("/Users") == 1);
}

TEST_CASE("seatbelt golden: protected paths in a git repository") {
    sbx::MemoryFs fs;
    repository(fs, "/Users/u/proj");
    fs.dir("/Users/u/proj/config").file("/Users/u/proj/config/production.yml").dir("/Users/u/.cache/tool");
    Setup s;
    s.settings =
        R"J({"sandbox": {"filesystem": {"denyWrite": ["/Users/u/proj/config/production.yml"], "allowWrite": ["~/.cache/tool"]}}})J";
    const auto plan = plan_for(s, fs);
    auto forms = check_profile(
        "git-repository", plan, ports(),
        {"/Users/u/proj/.git/index", "/Users/u/proj/.git/objects/ab/cd", "/Users/u/proj/.git/hooks/pre-commit",
         "/Users/u/proj/.git/config", "/Users/u/proj/HEAD", "/Users/u/proj/.vscode/settings.json",
         "/Users/u/proj/config/production.yml", "/Users/u/proj/config/dev.yml", "/Users/u/.cache/tool/x"});
    // Every protected or write-denied path is denied after every allow of writes.
    std::size_t last_allow = 0;
    for (std::size_t i = 0; i < forms.size(); ++i)
        if (forms[i].items[0].is_symbol("allow") && forms[i].items[1].is_symbol("file-write*")) last_allow = i;
    std::size_t guarded = 0;
    for (const auto& r : plan.rules) {
        if (r.kind != sbx::FsRule::Kind::protect && r.kind != sbx::FsRule::Kind::deny_write) continue;
        INFO(r.pattern);
        bool found = false;
        for (std::size_t i = 0; i < forms.size(); ++i)
            if (is_rule(forms[i], "deny", "file-write*", r.pattern)) {
                found = true;
                CHECK(i > last_allow);
                CHECK(forms[i].items[2].is_symbol("file-link"));
            }
        CHECK(found);
        ++guarded;
    }
    CHECK(guarded > 10);
    // Neither a protected path, nor the repository's .git, nor any directory above them, moves.
    const auto pinned = unlink_denied(forms);
    for (const auto& r : plan.rules) {
        if (r.kind != sbx::FsRule::Kind::protect && r.kind != sbx::FsRule::Kind::deny_read) continue;
        if (sbx::glob::has_wildcard(r.pattern)) continue;
        for (auto p = r.pattern; p != "/"; p = sbx::paths::parent(p)) {
            INFO(r.pattern << " above it: " << p);
            CHECK(pinned.count(p) == 1);
        }
    }
    CHECK(pinned.count("/Users/u/proj/.git") == 1);
    CHECK(pinned.count("/Users/u/proj") == 1);
}

TEST_CASE("seatbelt golden: wildcards") {
    sbx::MemoryFs fs;
    fs.dir("/Users/u/code/proj/src").dir("/Users/u/secrets").dir("/Users/u/vault/private").dir("/Users/u/data");
    Setup s;
    s.root = "/Users/u/code/proj";
    s.settings = R"J({"sandbox": {"filesystem": {
        "denyRead": ["~/**/.env", "~/secrets/*.key", "~/data/file?.txt", "~/x/[a-c]*", "~/y/[!0-9]z", "~/vault/private"],
        "allowRead": ["~/secrets/public-*.key", "~/vault/**/public"],
        "denyWrite": ["/Users/u/code/proj/**/*.lock"]}}})J";
    const auto plan = plan_for(s, fs);
    auto forms = check_profile("globs", plan, ports(),
                               {"/Users/u/.env",
                                "/Users/u/code/.env",
                                "/Users/u/code/proj/.env",
                                "/Users/u/code/proj/src/.env",
                                "/Users/u/code/proj/src/.env/x",
                                "/Users/u/code/proj/src/a.c",
                                "/Users/u/secrets/a.key",
                                "/Users/u/secrets/public-1.key",
                                "/Users/u/secrets/b.pem",
                                "/Users/u/data/file1.txt",
                                "/Users/u/data/file12.txt",
                                "/Users/u/x/apple",
                                "/Users/u/x/date",
                                "/Users/u/y/az",
                                "/Users/u/y/9z",
                                "/Users/u/vault/private/k",
                                "/Users/u/vault/private/x/public/k",
                                "/Users/u/vault/private/public",
                                "/Users/u/vault/public/k",
                                "/Users/u/code/proj/yarn.lock",
                                "/Users/u/code/proj/sub/dir/Cargo.lock",
                                "/Users/u/code/proj/lock"});
    // A `**` deny shallower than the root is denied again below the root, after it.
    const auto root = index_of(forms, R"((allow file-write* (subpath "/Users/u/code/proj")))");
    REQUIRE(root != std::string::npos);
    bool again = false;
    for (std::size_t i = root + 1; i < forms.size(); ++i)
        if (forms[i].items[0].is_symbol("deny") && forms[i].items[1].is_symbol("file-write*")) {
            const auto& f = forms[i].items.back();
            if (f.items[0].is_symbol("regex") && f.items[1].text.starts_with("^/Users/u/code/proj")) again = true;
        }
    CHECK(again);
}

TEST_CASE("seatbelt golden: credential stores, lifted only by an allowRead that names them") {
    sbx::MemoryFs fs;
    fs.dir("/Users/u/proj/src").dir("/Users/u/.ssh").dir("/Users/u/.aws/sso").dir("/Users/u/.kube");
    Setup s;
    s.settings = R"J({"sandbox": {"filesystem": {
        "allowRead": ["~/.aws", "~/.ssh/config", "~/.[ad]*/credentials", "~/.kube/**", "~/.s*/public"],
        "denyRead": ["~/.aws/sso", "~/**/*.pem"],
        "allowWrite": ["~/.aws", "~/.docker"]}}})J";
    const auto plan = plan_for(s, fs);
    auto forms = check_profile("credential-stores", plan, ports(),
                               {"/Users/u/.aws/credentials", "/Users/u/.aws/config", "/Users/u/.aws/sso/token",
                                "/Users/u/.aws/key.pem", "/Users/u/.ssh/config", "/Users/u/.ssh/id_rsa",
                                "/Users/u/.ssh/public", "/Users/u/.docker/credentials", "/Users/u/.docker/config.json",
                                "/Users/u/.kube/config", "/Users/u/.gnupg/credentials", "/Users/u/notes/credentials",
                                "/Users/u/.config/gh/hosts.yml", "/Users/u/proj/public/x"});
    // The engine's own answers, which the profile agrees with (check_profile).
    const auto rules = engine_rules(plan);
    CHECK(sbx::decide(rules, "/Users/u/.aws/credentials", sbx::Access::read).allowed);
    CHECK(sbx::decide(rules, "/Users/u/.aws/credentials", sbx::Access::write).allowed);
    CHECK_FALSE(sbx::decide(rules, "/Users/u/.aws/sso/token", sbx::Access::read).allowed);
    CHECK(sbx::decide(rules, "/Users/u/.ssh/config", sbx::Access::read).allowed);
    CHECK_FALSE(sbx::decide(rules, "/Users/u/.ssh/id_rsa", sbx::Access::read).allowed);
    CHECK_FALSE(sbx::decide(rules, "/Users/u/.ssh/public", sbx::Access::read).allowed);
    CHECK_FALSE(sbx::decide(rules, "/Users/u/.docker/credentials", sbx::Access::read).allowed);
    CHECK_FALSE(sbx::decide(rules, "/Users/u/.docker/config.json", sbx::Access::write).allowed);
    CHECK(sbx::decide(rules, "/Users/u/.kube/config", sbx::Access::read).allowed);
    CHECK(sbx::decide(rules, "/Users/u/notes/credentials", sbx::Access::read).allowed);
    // The stores an allow reaches into are denied again after every other read rule.
    const std::string docker = R"((deny file-read* (subpath "/Users/u/.docker")))";
    const auto first = index_of(forms, docker);
    const auto writable = index_of(forms, R"((allow file-read* (subpath "/Users/u/.docker")))");
    REQUIRE(first != std::string::npos);
    REQUIRE(writable != std::string::npos);
    CHECK(writable < first);
    const std::vector<Sexp> rest(forms.begin() + static_cast<std::ptrdiff_t>(first) + 1, forms.end());
    CHECK(index_of(rest, docker) != std::string::npos);
    // A store no allow reaches into is denied once, in the ordinary order.
    const std::string gnupg = R"((deny file-read* (subpath "/Users/u/.gnupg")))";
    const auto g = index_of(forms, gnupg);
    REQUIRE(g != std::string::npos);
    CHECK(index_of(std::vector<Sexp>(forms.begin() + static_cast<std::ptrdiff_t>(g) + 1, forms.end()), gnupg) ==
          std::string::npos);
}

TEST_CASE("seatbelt golden: network with local binding") {
    sbx::MemoryFs fs;
    fs.dir("/Users/u/proj");
    Setup s;
    s.settings = R"J({"sandbox": {"network": {"allowedDomains": ["example.com"], "allowLocalBinding": true}}})J";
    const auto plan = plan_for(s, fs);
    REQUIRE(plan.network.rules.local);
    auto forms = check_profile("network-local", plan, ports());
    for (const char* want :
         {R"((allow network-bind (local ip "localhost:*")))", R"((allow network-inbound (local ip "localhost:*")))",
          R"((allow network-outbound (remote ip "localhost:*")))",
          R"((allow network-outbound (remote ip "localhost:8080")))"})
        CHECK_MESSAGE(index_of(forms, want) != std::string::npos, want);
}

TEST_CASE("seatbelt golden: named Unix sockets") {
    sbx::MemoryFs fs;
    fs.dir("/Users/u/proj").dir("/Users/u/.colima/default");
    Setup s;
    s.settings =
        R"J({"sandbox": {"network": {"allowUnixSockets": ["/var/run/docker.sock", "~/.colima/default/docker.sock", "/tmp/agent-*/listener"]}}})J";
    const auto plan = plan_for(s, fs);
    auto forms = check_profile("unix-sockets", plan, ports());
    CHECK(index_of(forms, "(allow system-socket (socket-domain AF_UNIX))") != std::string::npos);
    CHECK(
        index_of(forms, R"((allow network-outbound (remote unix-socket (subpath "/private/var/run/docker.sock"))))") !=
        std::string::npos);
    CHECK(index_of(forms,
                   R"((allow network-bind (local unix-socket (subpath "/Users/u/.colima/default/docker.sock"))))") !=
          std::string::npos);
    CHECK(
        index_of(forms,
                 R"((allow network-outbound (remote unix-socket (path-regex "^/tmp/agent-[^/]*/listener(/.*)?$"))))") !=
        std::string::npos);
}

TEST_CASE("seatbelt golden: every Unix socket") {
    sbx::MemoryFs fs;
    fs.dir("/Users/u/proj");
    Setup s;
    s.settings = R"J({"sandbox": {"network": {"allowAllUnixSockets": true}}})J";
    auto forms = check_profile("unix-sockets-all", plan_for(s, fs), ports());
    CHECK(index_of(forms, R"((allow network-outbound (remote unix-socket (path-regex "^/"))))") != std::string::npos);
    CHECK(index_of(forms, R"((allow network-bind (local unix-socket (path-regex "^/"))))") != std::string::npos);
}

TEST_CASE("seatbelt golden: no network and no terminal") {
    sbx::MemoryFs fs;
    fs.dir("/Users/u/proj");
    auto plan = plan_for(Setup{}, fs);
    plan.network = sbx::NetworkPlan{};
    plan.network.mode = sbx::NetworkMode::none;
    sbx::mac::ProfileOptions opt = ports();  // ignored: the plan reaches no host
    opt.allow_pty = false;
    auto forms = check_profile("no-network-no-terminal", plan, opt);
    for (const auto& f : forms) {
        INFO(f.items[0].text << " " << f.items[1].text);
        CHECK_FALSE((f.items[0].is_symbol("allow") && f.items[1].text.starts_with("network")));
        CHECK_FALSE((f.items[0].is_symbol("allow") && f.items[1].is_symbol("pseudo-tty")));
    }
}

TEST_CASE("seatbelt golden: filesystem.disabled allows every file, and still confines the network") {
    sbx::MemoryFs fs;
    fs.dir("/Users/u/proj");
    Setup s;
    s.settings = R"J({"sandbox": {"filesystem": {"disabled": true}}})J";
    const auto plan = plan_for(s, fs);
    REQUIRE_FALSE(plan.filesystem.isolated);
    auto forms = check_profile("filesystem-disabled", plan, ports());
    CHECK(seatbelt_allows(forms, "file-write-data", "/Users/u/.ssh/id_rsa"));
    CHECK(index_of(forms, "(allow network-outbound)") == std::string::npos);
}

// ---------------------------------------------------------------------------
// The fixed part

TEST_CASE("seatbelt: the fixed rules read as Seatbelt forms and keep the programs that start others unconfined out") {
    for (const auto block : {sbx::mac::kFixedRules, sbx::mac::kTerminalRules}) {
        auto forms = read_all(std::string("(version 1)\n(deny default)\n") + std::string(block));
        check_forms(forms);
        // A comment above every allowance: each form follows a `;` line.
        const std::string text(block);
        std::size_t at = 0, forms_seen = 0;
        for (std::size_t nl = 0; at < text.size(); at = nl + 1) {
            nl = text.find('\n', at);
            if (nl == std::string::npos) nl = text.size();
            if (text.compare(at, 1, "(") != 0) continue;
            ++forms_seen;
            const auto before = text.rfind('\n', at - 2);
            const std::string prev = text.substr(before == std::string::npos ? 0 : before + 1,
                                                 at - 1 - (before == std::string::npos ? 0 : before + 1));
            CHECK_MESSAGE((prev.starts_with(";") || prev.starts_with("(")),
                          "no comment above: " << text.substr(at, nl - at));
        }
        CHECK(forms_seen > 0);
    }
    auto fixed = read_all(std::string("(version 1)\n(deny default)\n") + std::string(sbx::mac::kFixedRules));
    for (const char* service : {"com.apple.coreservices.launchservicesd", "com.apple.coreservices.appleevents"}) {
        INFO(service);
        bool allowed = false, denied = false;
        for (const auto& f : fixed)
            if (f.items.size() > 2 && f.items[1].is_symbol("mach-lookup"))
                (f.items[0].is_symbol("allow") ? allowed : denied) |= has_filter(f, "global-name", service);
        CHECK_FALSE(allowed);
        CHECK(denied);
    }
    CHECK(index_of(fixed, "(deny appleevent-send)") != std::string::npos);
    CHECK(index_of(fixed, "(deny lsopen)") != std::string::npos);
}

// ---------------------------------------------------------------------------
// Quoting

TEST_CASE("seatbelt quote: only the quote and the backslash are escaped; NUL is refused") {
    CHECK(sbx::mac::quote("/a/b").value() == R"("/a/b")");
    CHECK(sbx::mac::quote(R"(a"b\c)").value() == R"("a\"b\\c")");
    CHECK(sbx::mac::quote("a\nb(c);d#\"e").value() == "\"a\nb(c);d#\\\"e\"");
    CHECK(sbx::mac::quote("").value() == R"("")");
    auto nul = sbx::mac::quote(std::string("a\0b", 3));
    REQUIRE_FALSE(nul.has_value());
    CHECK(nul.error().code == sbx::Errc::invalid_argument);
    // What the reader gets back is what went in.
    for (const std::string& s :
         {std::string(R"(\)"), std::string(R"(\")"), std::string("\"\"\\\\"), std::string(")(;\n#\"|"),
          std::string("#\"raw\""), std::string("\\\n"), std::string("caf\xc3\xa9 \x01\x7f")}) {
        auto forms = read_all("(x " + sbx::mac::quote(s).value() + ")");
        REQUIRE(forms.size() == 1);
        REQUIRE(forms[0].items.size() == 2);
        CHECK(forms[0].items[1].kind == Sexp::Kind::string);
        CHECK(forms[0].items[1].text == s);
    }
}

namespace {

// A form with every string replaced by S, for comparing structure.
std::string shape(const Sexp& s) {
    if (s.kind == Sexp::Kind::string) return "S";
    if (s.kind == Sexp::Kind::symbol) return s.text;
    std::string out = "(";
    for (const auto& i : s.items) out += shape(i) + " ";
    return out + ")";
}

void strings_of(const Sexp& s, std::vector<std::string>& out) {
    if (s.kind == Sexp::Kind::string) out.push_back(s.text);
    for (const auto& i : s.items) strings_of(i, out);
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

}  // namespace

TEST_CASE("seatbelt quote: a hostile root changes no form, only the strings that name it") {
    const std::string tame = "/Users/u/tame";
    for (const std::string& hostile :
         {std::string("/Users/u/a\"b"), std::string("/Users/u/back\\slash"),
          std::string("/Users/u/x\")) (allow default) (\"y"), std::string("/Users/u/semi;colon"),
          std::string("/Users/u/new\nline) (allow file-write*"), std::string("/Users/u/raw#\"s\""),
          std::string("/Users/u/all \" \\ ) ( ; \n #\" end")}) {
        INFO(hostile);
        auto make = [&](const std::string& root) {
            sbx::MemoryFs fs;
            fs.dir(root + "/src").dir("/Users/u/.ssh");
            repository(fs, root);
            Setup s;
            s.root = root;
            s.settings =
                R"J({"sandbox": {"filesystem": {"denyRead": ["~/.ssh"]}, "network": {"allowLocalBinding": true}}})J";
            return plan_for(s, fs);
        };
        const auto a = parsed_profile(profile_ok(make(tame), ports()));
        const auto b = parsed_profile(profile_ok(make(hostile), ports()));
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            CHECK(shape(a[i]) == shape(b[i]));
            std::vector<std::string> sa, sb;
            strings_of(a[i], sa);
            strings_of(b[i], sb);
            REQUIRE(sa.size() == sb.size());
            for (std::size_t j = 0; j < sa.size(); ++j) CHECK(sb[j] == replace_all(sa[j], tame, hostile));
        }
        // The root is writable under its own name, and nothing else changed hands.
        CHECK(seatbelt_allows(b, "file-write-data", hostile + "/src/a.c"));
        CHECK_FALSE(seatbelt_allows(b, "file-write-data", "/Users/u/other"));
        CHECK_FALSE(seatbelt_allows(b, "file-write-data", hostile + "/.git/hooks/pre-commit"));
    }
}

TEST_CASE("seatbelt quote: hostile characters in a pattern reach the regex as characters") {
    sbx::MemoryFs fs;
    fs.dir("/Users/u/proj");
    Setup s;
    // `\(` in a settings pattern is a glob escape of `(`.
    s.settings = R"J({"sandbox": {"filesystem": {"denyRead": ["~/we\"ird(x);y#*", "~/q\\(z\\)\\*"]}}})J";
    const auto plan = plan_for(s, fs);
    const auto forms = parsed_profile(profile_ok(plan, ports()));
    CHECK_FALSE(seatbelt_allows(forms, "file-read-data", "/Users/u/we\"ird(x);y#abc"));
    CHECK_FALSE(seatbelt_allows(forms, "file-read-data", "/Users/u/we\"ird(x);y#/k"));
    CHECK(seatbelt_allows(forms, "file-read-data", "/Users/u/weXird(x);y#abc"));
    CHECK_FALSE(seatbelt_allows(forms, "file-read-data", "/Users/u/q(z)*"));
    CHECK(seatbelt_allows(forms, "file-read-data", "/Users/u/q(z)x"));
    check_agrees(plan, forms, {"/Users/u/we\"ird(x);y#", "/Users/u/q(z)*/a"});
}

TEST_CASE("seatbelt: a NUL in a path fails the profile instead of cutting it short") {
    sbx::MemoryFs fs;
    fs.dir("/Users/u/proj");
    auto plan = plan_for(Setup{}, fs);
    plan.rules.push_back(sbx::PlanRule{sbx::FsRule::Kind::deny_read, std::string("/Users/u/a\0b", 12), "by hand"});
    auto p = sbx::mac::profile(plan, ports());
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error().code == sbx::Errc::invalid_argument);
    CHECK(p.error().key == "filesystem.rules[" + std::to_string(plan.rules.size() - 1) + "].pattern");

    plan.rules.pop_back();
    plan.unix_socket_paths.push_back(std::string("/s\0k", 4));
    p = sbx::mac::profile(plan, ports());
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error().code == sbx::Errc::invalid_argument);
}

TEST_CASE("seatbelt: a plan that confines files without rules, or a proxy port 0, is refused") {
    sbx::MemoryFs fs;
    fs.dir("/Users/u/proj");
    auto plan = plan_for(Setup{}, fs);
    sbx::mac::ProfileOptions zero;
    zero.http_proxy_port = 0;
    auto z = sbx::mac::profile(plan, zero);
    REQUIRE_FALSE(z.has_value());
    CHECK(z.error().code == sbx::Errc::invalid_argument);

    plan.rules.clear();
    auto p = sbx::mac::profile(plan, ports());
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error().code == sbx::Errc::invalid_plan);
    CHECK(p.error().key == "filesystem.rules");

    plan.filesystem.isolated = false;  // filesystem.disabled needs none
    CHECK(sbx::mac::profile(plan, ports()).has_value());
}

// ---------------------------------------------------------------------------
// Regexes

TEST_CASE("seatbelt glob_regex: what the regex matches is what the engine's matcher reaches") {
    struct Case {
        std::string_view pattern;
        std::vector<std::string_view> yes, no;
    };
    const std::vector<Case> cases{
        {"/a/**/b", {"/a/b", "/a/x/b", "/a/x/y/b", "/a/b/c"}, {"/a", "/a/bb", "/ab", "/a/x/c"}},
        {"/a/**", {"/a", "/a/b", "/a/b/c"}, {"/ab", "/b"}},
        {"/**/x", {"/x", "/a/x", "/a/b/x/y"}, {"/xa", "/a/y"}},
        {"/a/*.txt", {"/a/b.txt", "/a/.txt", "/a/b.txt/c"}, {"/a/b/c.txt", "/a/b.txtx", "/a/bXtxt"}},
        {"/a/file?.c", {"/a/file1.c", "/a/fileX.c"}, {"/a/file.c", "/a/file12.c", "/a/file/.c"}},
        {"/a/[a-c]x", {"/a/ax", "/a/bx", "/a/cx"}, {"/a/dx", "/a/Ax", "/a/x"}},
        {"/a/[!0-9]z", {"/a/az", "/a/-z", "/a/.z"}, {"/a/0z", "/a/9z", "/a//z", "/a/z"}},
        {"/a/[^^]z", {"/a/az"}, {"/a/^z"}},
        {"/a/[x^]y", {"/a/xy", "/a/^y"}, {"/a/ay"}},
        {"/a/[-a]x", {"/a/-x", "/a/ax"}, {"/a/bx"}},
        {"/a/[!-]x", {"/a/ax"}, {"/a/-x"}},
        {"/a/[]]q", {"/a/]q"}, {"/a/q", "/a/[q"}},
        {"/a/[[]q", {"/a/[q"}, {"/a/q"}},
        {"/a/[\\]x]q", {"/a/]q", "/a/xq"}, {"/a/\\q"}},
        {"/a/[\\\\]q", {"/a/\\q"}, {"/a/q"}},
        {"/a/[.]c", {"/a/.c"}, {"/a/xc"}},
        {"/a/x[", {"/a/x["}, {"/a/x"}},
        {"/a/b.c+d(e)|f{1}$^",
         {"/a/b.c+d(e)|f{1}$^", "/a/b.c+d(e)|f{1}$^/g"},
         {"/a/bXc+d(e)|f{1}$^", "/a/b.cd(e)|f{1}$^"}},
        {"/a/\\*lit", {"/a/*lit"}, {"/a/xlit"}},
        {"/a/b**c", {"/a/bc", "/a/bxyc"}, {"/a/b/c"}},
        {"/", {"/", "/a"}, {}},
    };
    for (const auto& c : cases) {
        INFO(c.pattern);
        auto re = sbx::mac::glob_regex(c.pattern);
        REQUIRE_MESSAGE(re.has_value(), (re ? std::string() : sbx::to_string(re.error())));
        INFO(*re);
        const std::regex r(*re, std::regex::extended);
        for (const auto path : c.yes) {
            INFO("should match " << path);
            CHECK(std::regex_search(std::string(path), r));
            CHECK(sbx::glob::matches_at_or_above(c.pattern, path));
        }
        for (const auto path : c.no) {
            INFO("should not match " << path);
            CHECK_FALSE(std::regex_search(std::string(path), r));
            CHECK_FALSE(sbx::glob::matches_at_or_above(c.pattern, path));
        }
    }
}

TEST_CASE("seatbelt glob_regex: a literal pattern is escaped and anchored at both ends") {
    CHECK(sbx::mac::glob_regex("/a/b.c").value() == R"(^/a/b\.c(/.*)?$)");
    CHECK(sbx::mac::glob_regex("/a/**/b").value() == R"(^/a(/[^/]+)*/b(/.*)?$)");
    CHECK(sbx::mac::glob_regex("/a/**").value() == R"(^/a(/.*)?$)");
    CHECK(sbx::mac::glob_regex("/a/x?[a-z0-9_]*").value() == R"(^/a/x[^/][0-9_a-z][^/]*(/.*)?$)");
    CHECK(sbx::mac::glob_regex("/a/[!ab]").value() == R"(^/a/[^/ab](/.*)?$)");
}

TEST_CASE("seatbelt glob_regex: sets a Seatbelt regex cannot say are refused") {
    for (const std::string_view p : {"/a/[!]]x", "/a/[!\\\\]x", "/a/[z-a]x"}) {
        INFO(p);
        auto re = sbx::mac::glob_regex(p);
        REQUIRE_FALSE(re.has_value());
        CHECK(re.error().code == sbx::Errc::invalid_argument);
    }
}

// ---------------------------------------------------------------------------
// Order

TEST_CASE(
    "seatbelt order: a `**` allow deeper than a deny is allowed again after it, and a `**` deny again after an allow") {
    sbx::MemoryFs fs;
    fs.dir("/Users/u/code/deep/proj").dir("/Users/u/vault/private");
    Setup s;
    s.root = "/Users/u/code/deep/proj";
    s.settings = R"J({"sandbox": {"filesystem": {"denyRead": ["~/**/.env", "~/vault/private", "~/**/secret"],
                                                  "allowRead": ["~/vault/**/public", "~/code/deep/proj/secret/shared"]}}})J";
    const auto plan = plan_for(s, fs);
    const auto forms = parsed_profile(profile_ok(plan, ports()));
    check_agrees(plan, forms,
                 {"/Users/u/code/deep/proj/.env", "/Users/u/code/deep/.env", "/Users/u/code/deep/proj/a/.env/b",
                  "/Users/u/vault/private/public/k", "/Users/u/vault/private/a/public", "/Users/u/vault/private/k",
                  "/Users/u/code/deep/proj/secret/shared/x", "/Users/u/code/deep/proj/secret/x",
                  "/Users/u/code/deep/proj/secret/shared/secret/x", "/Users/u/code/deep/proj/secret/shared/y/secret"});
    // A deny named exactly where an allow is (a tie) is denied there, after the allow.
    Setup t;
    t.root = "/Users/u/code/deep/proj";
    t.settings = R"J({"sandbox": {"filesystem": {"denyRead": ["~/**/proj"]}}})J";
    const auto tie = plan_for(t, fs);
    const auto tied = parsed_profile(profile_ok(tie, ports()));
    CHECK_FALSE(seatbelt_allows(tied, "file-read-data", "/Users/u/code/deep/proj/a.c"));
    check_agrees(tie, tied, {"/Users/u/code/deep/proj/a.c", "/Users/u/code/deep/proj/proj/x"});
}

TEST_CASE("seatbelt order: two `**` patterns that meet stay denied where both reach") {
    sbx::MemoryFs fs;
    fs.dir("/Users/u/proj");
    Setup s;
    s.settings =
        R"J({"sandbox": {"filesystem": {"denyRead": ["~/**/cache"], "allowRead": ["~/a/*/b/**/cache/pub"]}}})J";
    const auto plan = plan_for(s, fs);
    const auto forms = parsed_profile(profile_ok(plan, ports()));
    check_agrees(plan, forms, {"/Users/u/a/x/b/cache/pub/f", "/Users/u/a/x/b/y/cache/pub/f", "/Users/u/a/x/b/cache/f"},
                 Agreement::never_wider);
}
