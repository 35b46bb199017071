// Deterministic fuzzing of parse_settings() and merge().
//
// Contract under test: any bytes at all given to parse_settings() come back as a
// Settings value or as an Error with a message and the file it is about; malformed
// JSON also names a line and column (both 1-based). Any layers that parse, merged
// in any combination, trusted or not, give a Policy whose path lists hold absolute
// paths only. The inputs are every prefix of a few realistic settings files and
// many thousands of mutations of them, drawn from a PRNG with a fixed seed, so a
// failure reproduces exactly; it is reported as a C++ string literal.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/fs_view.hpp"
#include "sbx/settings/policy.hpp"
#include "sbx/settings/policy_fields.hpp"
#include "sbx/settings/settings.hpp"

namespace {

using sbx::LayerKind;

constexpr std::array kLayers{LayerKind::user, LayerKind::project, LayerKind::local, LayerKind::flag,
                             LayerKind::managed};

// Where each layer's file sits; relative paths resolve as load_layers() would.
sbx::SettingsSource source_for(LayerKind layer) {
    const std::string home = "/home/dev";
    const std::string root = "/home/dev/work/app";
    std::string file;
    switch (layer) {
        case LayerKind::builtin:  // no file: sbx's own default
        case LayerKind::user: file = home + "/.claude/settings.json"; break;
        case LayerKind::project: file = root + "/.claude/settings.json"; break;
        case LayerKind::local: file = root + "/.claude/settings.local.json"; break;
        case LayerKind::flag: file = "/home/dev/work/ci-settings.json"; break;
        case LayerKind::managed: file = "/etc/claude-code/managed-settings.json"; break;
    }
    return sbx::SettingsSource{layer, file, sbx::paths::Base{home, sbx::settings_project_dir(file)}, root};
}

// Realistic files, one per layer, in the order of kLayers.
constexpr std::string_view kUserDoc = R"json({
  "model": "opus",
  "env": {"NODE_OPTIONS": "--max-old-space-size=4096"},
  "sandbox": {
    "enabled": true,
    "autoAllowBashIfSandboxed": true,
    "excludedCommands": ["docker", "git push"],
    "ignoreViolations": {"*": ["/usr/bin"], "npm": ["~/.npm", "/dev/tty"]},
    "filesystem": {
      "allowWrite": ["~/.cache", "/tmp/build", "~/.npm/_cacache"],
      "denyWrite": ["~/.bashrc", "~/.profile"],
      "denyRead": ["~/secrets", "~/.ssh/id_*"]
    },
    "network": {
      "allowUnixSockets": ["/var/run/docker.sock", "~/.gnupg/S.gpg-agent"],
      "allowLocalBinding": true,
      "strictAllowlist": false
    }
  },
  "permissions": {
    "allow": ["Bash(npm run test:*)", "Edit(~/notes/**)", "Read(~/docs)", "WebFetch(domain:docs.rs)"],
    "deny": ["Read(~/.gnupg/**)", "Edit(//etc/**)", "Bash(curl:*)"],
    "ask": ["Bash(git push:*)"],
    "additionalDirectories": ["~/shared-libs"],
    "defaultMode": "acceptEdits"
  }
})json";

constexpr std::string_view kProjectDoc = R"json({
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "sandbox": {
    "enabled": true,
    "allowUnsandboxedCommands": true,
    "filesystem": {
      "allowWrite": ["./build", "dist", "../sibling/out", "link/**"],
      "allowRead": ["~/.ssh/known_hosts", "link-to-ssh"],
      "denyWrite": [".git/hooks", "**/*.pem"]
    },
    "network": {
      "allowedDomains": ["registry.npmjs.org", "api.github.com", "*.githubusercontent.com"],
      "deniedDomains": ["telemetry.example.com"],
      "allowAllUnixSockets": false
    },
    "credentials": {"files": [".env", {"path": "config/secrets.json"}, {"path": "~/.npmrc", "mode": "deny"}]}
  },
  "permissions": {
    "allow": ["Edit(/src/**)", "Edit(./generated)", "WebFetch(domain:example.com)", "Read", "WebFetch(https://x.org)"],
    "deny": ["Edit(/.github/workflows/**)", "Read(./.env.production)", "WebFetch(domain:*.ads.example)"],
    "additionalDirectories": ["../shared", "/opt/toolchain", "loop/sub"]
  }
})json";

constexpr std::string_view kLocalDoc = R"json({
  "sandbox": {
    "enabled": false,
    "failIfUnavailable": false,
    "autoAllowBashIfSandboxed": true,
    "excludedCommands": ["make deploy"],
    "ignoreViolations": {"cargo": ["~/.cargo/registry"]},
    "filesystem": {
      "allowWrite": ["~/.ssh/config", "/home/dev/.ssh", "build"],
      "allowRead": ["~/.aws", "/home/dev/work/app/link/id_rsa.pub"],
      "disabled": true
    },
    "network": {
      "allowedDomains": ["localhost", "*.internal.corp"],
      "allowUnixSockets": ["/run/user/1000/bus"],
      "allowLocalBinding": true
    }
  },
  "permissions": {
    "allow": ["Edit(~/.ssh/**)", "Edit(//tmp/scratch)", "WebFetch(domain:internal.corp)"],
    "additionalDirectories": ["~/.ssh", "~/work/other"]
  }
})json";

constexpr std::string_view kFlagDoc = R"json({
  "sanbox": {},
  "sandbox": {
    "enabled": true,
    "ripgrep": {"command": "rg"},
    "allowUnsandboxedCommands": false,
    "filesystem": {
      "allowWrite": ["/home/dev/work/app/link/**"],
      "denyRead": ["/home/dev/work/app/link-to-ssh/id_*", "~/.kube/config"],
      "allowWrit": []
    },
    "network": {
      "httpProxyPort": 8080,
      "allowedDomains": ["*.github.com"],
      "deniedDomains": ["*.ads.example"],
      "strictAllowlist": true
    },
    "credentials": {"envVars": [{"name": "NPM_TOKEN", "mode": "mask"}, "CI_JOB_TOKEN"]}
  },
  "permissions": {
    "deny": ["WebFetch(domain:*.tracker.example)", "Edit(~/work/app/**/*.lock)"]
  }
})json";

constexpr std::string_view kManagedDoc = R"json({
  "sandbox": {
    "enabled": true,
    "allowUnsandboxedCommands": false,
    "failIfUnavailable": true,
    "filesystem": {
      "denyRead": ["~/.ssh", "~/.aws/credentials", "/etc/shadow", "~/**/.env"],
      "allowRead": ["/usr/share/doc"],
      "allowManagedReadPathsOnly": false
    },
    "network": {
      "allowedDomains": ["github.com", "*.npmjs.org", "pypi.org", "files.pythonhosted.org"],
      "deniedDomains": ["evil.example"],
      "allowManagedDomainsOnly": false,
      "strictAllowlist": true
    },
    "credentials": {
      "envVars": ["AWS_SECRET_ACCESS_KEY", {"name": "GITHUB_TOKEN", "mode": "deny"}],
      "files": ["~/.netrc", {"path": "~/.config/gh/hosts.yml", "mode": "mask"}]
    },
    "bwrapPath": "/usr/bin/bwrap",
    "socatPath": "/usr/bin/socat"
  },
  "permissions": {"deny": ["Read(//etc/ssl/private/**)", "WebFetch(domain:pastebin.com)"]}
})json";

constexpr std::array<std::string_view, 5> kDocs{kUserDoc, kProjectDoc, kLocalDoc, kFlagDoc, kManagedDoc};

// A tree with the symlinks the documents name: into ~/.ssh, a loop, an unreadable spot.
sbx::MemoryFs sample_fs() {
    sbx::MemoryFs fs;
    fs.dir("/home/dev/.ssh").file("/home/dev/.ssh/id_rsa").file("/home/dev/.ssh/id_rsa.pub");
    fs.dir("/home/dev/work/app/src").dir("/home/dev/work/app/.git/hooks").dir("/tmp/build");
    fs.symlink("/home/dev/work/app/link-to-ssh", "/home/dev/.ssh");
    fs.symlink("/home/dev/work/app/link", "../../.ssh");
    fs.symlink("/home/dev/work/app/build", "/tmp/build");
    fs.symlink("/home/dev/work/app/loop", "/home/dev/work/app/loop");
    fs.symlink("/home/dev/work/app/empty", "");
    fs.dir("/home/dev/locked").unreadable("/home/dev/locked");
    fs.symlink("/home/dev/work/app/locked", "/home/dev/locked/inner");
    return fs;
}

// The PRNG and the one way numbers are drawn from it (the same on every library).
class Rng {
public:
    explicit Rng(std::uint32_t seed) : gen_(seed) {}
    std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(gen_()) % n; }
    bool coin() { return (gen_() & 1u) != 0; }
    template <class C>
    const auto& pick(const C& c) {
        return c[below(std::size(c))];
    }

private:
    std::mt19937 gen_;
};

// Bytes worth trying: NUL, 0xFF, JSON's punctuation, UTF-8 lead and continuation bytes.
constexpr std::array<char, 22> kBytes{'\0', '\xff', '"', '\\', '{', '}', '[', ']', ',', ':', ' ', '\n',
                                      '\x80', '\xc3', '\xed', '\xf4', '~', '/', '*', '0', '-', '\x1f'};

// JSON values that are each wrong somewhere: types, ranges, paths, rules, names.
constexpr std::array<std::string_view, 64> kValues{
    "true", "false", "\"true\"", "null", "0", "-1", "1.5e300", "1e999", "-0", "18446744073709551616",
    "-9223372036854775809", "123456789012345678901234567890", "0.0000001e-400", "[]", "{}", "[\"\"]",
    "[null]", "[1]", "[{}]", "[[]]", "{\"path\":\"~/.x\",\"mode\":\"mask\"}", "{\"name\":\"TOKEN\"}",
    "{\"path\":1}", "{\"mode\":\"mask\"}", "{\"path\":\"x\",\"mode\":\"hide\"}", "{\"path\":\"x\",\"path\":\"y\"}",
    "{\"name\":\"1X\"}", "{\"\":[]}", "{\"*\":[\"\"]}", "\"\"", "\"~\"", "\"~root/x\"", "\"~/\"", "\"/\"",
    "\".\"", "\"..\"", "\"../../../../..\"", "\"//x\"", "\"\\u0000\"", "\"\\u001f\"", "\"a\\u0000b\"",
    "\"\\ud800\"", "\"\\ud83d\\ude00\"", "\"\\u00e9t\\u00e9\"", "\"\\\\\"", "\"**\"", "\"/**/**/**/**\"",
    "\"[!a-\"", "\"Edit(\"", "\"Edit()\"", "\"Read(//)\"", "\"WebFetch(domain:)\"", "\"WebFetch(domain:x\"",
    "\"Edit(~root)\"", "\"Read(/..)\"", "\"Edit(\\u0007)\"", "\"Edit(loop/**)\"", "\"Read(//home/dev/work/app/link)\"",
    "\"9LIVES\"", "\"A-B\"", "\"/home/dev/work/app/locked/x\"", "\"empty/x\"", "\"\\u007f\"", "\"x\\/y\""};

// Keys sbx knows, keys it does not support, near misses and nonsense.
constexpr std::array<std::string_view, 40> kKeys{
    "sandbox", "permissions", "enabled", "autoAllowBashIfSandboxed", "allowUnsandboxedCommands",
    "failIfUnavailable", "excludedCommands", "ignoreViolations", "filesystem", "network", "credentials",
    "bwrapPath", "socatPath", "allowWrite", "denyWrite", "denyRead", "allowRead", "disabled",
    "allowManagedReadPathsOnly", "allowedDomains", "deniedDomains", "allowUnixSockets", "strictAllowlist",
    "allowLocalBinding", "allowAllUnixSockets", "allowManagedDomainsOnly", "envVars", "files", "allow", "deny",
    "ask", "additionalDirectories", "path", "mode", "name", "ripgrep", "httpProxyPort", "sandBox", "", "\\u0000"};

struct Span {
    std::size_t begin = 0, end = 0;
};

// The JSON tokens of `s`, tolerant of broken text: strings (escapes skipped),
// punctuation, and runs of anything else.
std::vector<Span> tokens(std::string_view s) {
    constexpr std::string_view punct = "{}[],:";
    constexpr std::string_view stop = " \t\r\n{}[],:\"";
    std::vector<Span> out;
    std::size_t i = 0;
    while (i < s.size()) {
        const char c = s[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            ++i;
            continue;
        }
        const std::size_t b = i;
        if (c == '"') {
            ++i;
            while (i < s.size() && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
            i = std::min(i + 1, s.size());
        } else if (punct.find(c) != std::string_view::npos) {
            ++i;
        } else {
            while (i < s.size() && stop.find(s[i]) == std::string_view::npos) ++i;
        }
        out.push_back(Span{b, i});
    }
    return out;
}

// Token k, or the whole container when token k opens one.
Span value_span(std::string_view s, const std::vector<Span>& toks, std::size_t k) {
    const char open = s[toks[k].begin];
    if (open != '{' && open != '[') return toks[k];
    int depth = 0;
    for (std::size_t j = k; j < toks.size(); ++j) {
        const char c = s[toks[j].begin];
        if (c == '{' || c == '[') ++depth;
        if (c == '}' || c == ']') --depth;
        if (depth == 0) return Span{toks[k].begin, toks[j].end};
    }
    return toks[k];
}

bool is_key(std::string_view s, const std::vector<Span>& toks, std::size_t k) {
    return s[toks[k].begin] == '"' && k + 1 < toks.size() && s[toks[k + 1].begin] == ':';
}

void replace(std::string& s, Span sp, std::string_view with) { s.replace(sp.begin, sp.end - sp.begin, with); }

// One random change to `s`: at the level of bytes, or of JSON tokens and values.
// Over 80 lines: one switch, a case a kind of change.
void mutate_once(std::string& s, Rng& rng) {
    auto pos = [&](bool inclusive) { return rng.below(s.size() + (inclusive ? 1 : 0)); };
    auto some_byte = [&]() { return rng.coin() ? rng.pick(kBytes) : static_cast<char>(rng.below(256)); };
    const auto toks = tokens(s);
    switch (rng.below(12)) {
        case 0:  // flip one bit
            if (!s.empty()) s[pos(false)] ^= static_cast<char>(1u << rng.below(8));
            break;
        case 1:  // overwrite a byte
            if (!s.empty()) s[pos(false)] = some_byte();
            break;
        case 2: {  // insert a few bytes
            std::string ins;
            for (std::size_t n = 1 + rng.below(4); n > 0; --n) ins += some_byte();
            s.insert(pos(true), ins);
            break;
        }
        case 3:  // delete a byte or a short run
            if (!s.empty()) {
                const std::size_t at = pos(false);
                s.erase(at, rng.coin() ? 1 : 1 + rng.below(16));
            }
            break;
        case 4:  // duplicate a span somewhere
            if (!s.empty()) {
                const std::size_t at = pos(false);
                const std::string dup = s.substr(at, 1 + rng.below(64));
                s.insert(pos(true), dup);
            }
            break;
        case 5:  // swap two tokens
            if (toks.size() >= 2) {
                Span a = rng.pick(toks), b = rng.pick(toks);
                if (a.begin > b.begin) std::swap(a, b);
                if (a.end > b.begin) break;
                const std::string ta = s.substr(a.begin, a.end - a.begin);
                const std::string tb = s.substr(b.begin, b.end - b.begin);
                replace(s, b, ta);  // the later one first, so `a` stays put
                replace(s, a, tb);
            }
            break;
        case 6:
        case 7: {  // a value of another type or shape
            if (toks.empty()) break;
            const std::size_t k = rng.below(toks.size());
            if (is_key(s, toks, k)) break;
            replace(s, value_span(s, toks, k), rng.pick(kValues));
            break;
        }
        case 8: {  // the type swaps people make: true -> "true", [..] -> {}, {..} -> []
            if (toks.empty()) break;
            const std::size_t k = rng.below(toks.size());
            const Span sp = value_span(s, toks, k);
            const std::string_view t(s.data() + sp.begin, sp.end - sp.begin);
            if (t == "true" || t == "false") replace(s, sp, "\"" + std::string(t) + "\"");
            else if (t.front() == '[') replace(s, sp, "{}");
            else if (t.front() == '{') replace(s, sp, "[]");
            else if (t.front() == '"' && !is_key(s, toks, k)) replace(s, sp, "[" + std::string(t) + "]");
            break;
        }
        case 9: {  // another key: known, unsupported, misspelt, or a duplicate of a neighbour
            std::vector<std::size_t> keys;
            for (std::size_t k = 0; k < toks.size(); ++k)
                if (is_key(s, toks, k)) keys.push_back(k);
            if (keys.empty()) break;
            const Span sp = toks[rng.pick(keys)];
            if (rng.below(4) == 0) {
                const Span other = toks[rng.pick(keys)];
                replace(s, sp, s.substr(other.begin, other.end - other.begin));
            } else {
                replace(s, sp, "\"" + std::string(rng.pick(kKeys)) + "\"");
            }
            break;
        }
        case 10: {  // a member or element repeated after itself: `x, x`
            if (toks.empty()) break;
            const std::size_t k = rng.below(toks.size());
            Span sp = value_span(s, toks, k);
            if (is_key(s, toks, k) && k + 2 < toks.size()) sp = Span{toks[k].begin, value_span(s, toks, k + 2).end};
            const std::string dup = "," + s.substr(sp.begin, sp.end - sp.begin);
            s.insert(sp.end, dup);
            break;
        }
        default: {  // text spliced into a string: escapes, control bytes, path tricks
            constexpr std::array<std::string_view, 12> bits{"\\u0000", "\\ud800", "\\", "\\x", "\x01", "/../..",
                                                            "**", "[", "~", "\xc3\x28", "\xef\xbf\xbf", "\\uZZZZ"};
            std::vector<std::size_t> strs;
            for (std::size_t k = 0; k < toks.size(); ++k)
                if (s[toks[k].begin] == '"' && toks[k].end - toks[k].begin >= 2) strs.push_back(k);
            if (strs.empty()) break;
            const Span sp = toks[rng.pick(strs)];
            s.insert(sp.begin + 1 + rng.below(sp.end - sp.begin - 1), rng.pick(bits));
            break;
        }
    }
}

// `s` as a C++ string literal, every byte reproduced exactly.
std::string cpp_literal(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (u >= 0x20 && u < 0x7f) {
            out += c;
        } else {  // three octal digits, so a following digit cannot extend the escape
            out += '\\';
            out += static_cast<char>('0' + (u >> 6));
            out += static_cast<char>('0' + ((u >> 3) & 7));
            out += static_cast<char>('0' + (u & 7));
        }
    }
    return out + "\"";
}

// Counts of what the inputs gave, and the failures (the first few are reported).
struct Tally {
    std::size_t inputs = 0, values = 0, json_errors = 0, other_errors = 0, failures = 0;

    void fail(std::string_view input, const std::string& why) {
        if (++failures > 10) return;
        const std::string report = why + "\n  input: " + cpp_literal(input);
        FAIL_CHECK(report);
    }
};

// What a parsed layer promises: its file and layer, absolute clean paths, names
// that are names, and a source key on every entry.
void check_settings(std::string_view input, const sbx::Settings& st, const sbx::SettingsSource& src, Tally& t) {
    if (st.file != src.file || st.layer != src.layer) t.fail(input, "the Settings do not name their file and layer");
    const std::array<std::pair<std::string_view, const sbx::SourcedList*>, 7> path_lists{{
        {"filesystem.allowWrite", &st.filesystem.allow_write},
        {"filesystem.denyWrite", &st.filesystem.deny_write},
        {"filesystem.denyRead", &st.filesystem.deny_read},
        {"filesystem.allowRead", &st.filesystem.allow_read},
        {"network.allowUnixSockets", &st.network.allow_unix_sockets},
        {"credentials.files", &st.credentials.files},
        {"additionalDirectories", &st.additional_directories},
    }};
    for (const auto& [name, list] : path_lists) {
        for (const auto& e : *list) {
            if (!sbx::paths::is_absolute(e.value) || sbx::paths::normalize(e.value) != e.value ||
                !sbx::paths::check_text(e.value))
                t.fail(input, std::string(name) + " holds '" + e.value + "', not a clean absolute path");
            if (e.source.key.empty() || e.source.file != src.file || e.source.layer != src.layer)
                t.fail(input, std::string(name) + " entry '" + e.value + "' does not name where it came from");
        }
    }
    for (const auto& e : st.credentials.env_vars)
        if (e.value.empty() || e.value.find_first_of("=/ ") != std::string::npos)
            t.fail(input, "credentials.envVars holds '" + e.value + "', not a variable name");
    for (const auto* list : {&st.network.allowed_domains, &st.network.denied_domains, &st.excluded_commands})
        for (const auto& e : *list)
            if (e.value.empty()) t.fail(input, "an empty domain or command at " + e.source.key);
}

// Parses one input and checks the contract; a value is kept in `pool` if given.
void check_parse(std::string_view input, LayerKind layer, Tally& t, std::vector<sbx::Settings>* pool = nullptr) {
    ++t.inputs;
    const auto src = source_for(layer);
    auto r = sbx::parse_settings(input, src);
    if (r) {
        ++t.values;
        check_settings(input, *r, src, t);
        if (pool) pool->push_back(std::move(*r));
        return;
    }
    const sbx::Error& e = r.error();
    if (e.message.empty()) t.fail(input, "an error with an empty message");
    if (e.file != src.file) t.fail(input, "an error that does not name the file: " + sbx::to_string(e));
    if (e.code != sbx::Errc::invalid_settings) t.fail(input, "an error not coded INVALID_SETTINGS: " + sbx::to_string(e));
    if (e.message.starts_with("invalid JSON")) {
        ++t.json_errors;
        if (e.line < 1 || e.column < 1) t.fail(input, "an invalid-JSON error without line and column: " + sbx::to_string(e));
    } else {
        ++t.other_errors;
        // A wrong value names its key; only the document itself has none.
        if (e.key.empty() && !e.message.starts_with("expected an object, got "))
            t.fail(input, "a settings error that names no key: " + sbx::to_string(e));
    }
}

// `n` mutants of each document, each one to four changes away from it.
template <class Each>
void for_each_mutant(std::uint32_t seed, std::size_t n, Each each) {
    Rng rng(seed);
    for (std::size_t d = 0; d < kDocs.size(); ++d) {
        for (std::size_t i = 0; i < n; ++i) {
            std::string s(kDocs[d]);
            for (std::size_t k = 1 + rng.below(4); k > 0; --k) mutate_once(s, rng);
            each(s, kLayers[d], rng);
        }
    }
}

}  // namespace

TEST_CASE("fuzz: the sample settings files parse in every layer") {
    for (auto doc : kDocs) {
        for (auto layer : kLayers) {
            auto r = sbx::parse_settings(doc, source_for(layer));
            REQUIRE_MESSAGE(r.has_value(), sbx::to_string(r.error()));
        }
    }
}

TEST_CASE("fuzz: every prefix of a settings file is a value or a located error") {
    Tally t;
    for (std::size_t d = 0; d < kDocs.size(); ++d)
        for (std::size_t n = 0; n <= kDocs[d].size(); ++n) check_parse(kDocs[d].substr(0, n), kLayers[d], t);
    CHECK(t.failures == 0);
    // Each document ends at its closing brace: only the whole of it is valid JSON.
    CHECK(t.values == kDocs.size());
    CHECK(t.json_errors == t.inputs - t.values);
}

TEST_CASE("fuzz: mutated settings files are a value or a located error") {
    Tally t;
    for_each_mutant(20240611u, 10000, [&](const std::string& s, LayerKind layer, Rng&) { check_parse(s, layer, t); });
    CHECK(t.failures == 0);
    CHECK(t.inputs == 10000 * kDocs.size());
    // The mutations reach past the JSON parser into the settings reader.
    CHECK(t.values > t.inputs / 20);
    CHECK(t.other_errors > t.inputs / 20);
    CHECK(t.json_errors > t.inputs / 20);
}

TEST_CASE("fuzz: odd documents are a value or a located error") {
    using namespace std::string_literals;
    std::vector<std::string> odd{"", " ", "\n\n\t", "\0"s, "\xff", "\xef\xbb\xbf{}", "{}", "[]", "null", "\"sandbox\"",
                                 "1e999", "-", "{\"sandbox\":{}}\0"s, "{\"sandbox\":{}} {}", "{\"sandbox\":null}",
                                 "{\"sandbox\":{\"enabled\":true}}\xff", "{\"permissions\":{\"allow\":[\"Edit(\"]}}",
                                 "{\"a\":1,\"a\":2}", "{\"sandbox\":{\"enabled\":1e999}}",
                                 "{\"sandbox\":{\"enabled\":18446744073709551616}}",
                                 "{\"sandbox\":{\"enabled\":-18446744073709551617}}",
                                 "{\"sandbox\":{\"enabled\":123456789012345678901234567890}}",
                                 "{\"sandbox\":{\"enabled\":1.0e-999999}}", "{\"x\":\"\\ud800\\u0041\"}",
                                 "{\"x\":\"\\udc00\"}", "{\"x\":\"\xed\xa0\x80\"}", "{\"x\":\"\xc0\xaf\"}",
                                 "{\"x\":\"\xf4\x90\x80\x80\"}", "{\"x\":tru}", "{\"x\":nul}", "{'x':1}", "// c\n{}",
                                 "{\"x\":01}", "{\"x\":1.}", "{\"x\":.5}", "{\"x\":+1}", "[1,]", "{\"x\":1,}"};
    // Nesting around simdjson's depth limit, inside and outside the sections.
    for (std::size_t depth : std::array<std::size_t, 7>{1000, 1022, 1023, 1024, 1025, 1026, 4000}) {
        odd.push_back(std::string(depth, '[') + std::string(depth, ']'));
        odd.push_back("{\"sandbox\":{\"excludedCommands\":" + std::string(depth, '[') + std::string(depth, ']') + "}}");
        odd.push_back("{\"other\":" + std::string(depth, '[') + std::string(depth, ']') + "}");
        odd.push_back(std::string(depth, '['));
    }
    // Large but legal: many entries, long paths, long keys.
    std::string many = "{\"sandbox\":{\"filesystem\":{\"denyRead\":[";
    for (int i = 0; i < 2000; ++i) many += (i ? ",\"~/d" : "\"~/d") + std::to_string(i) + "/**\"";
    odd.push_back(many + "]}}}");
    odd.push_back("{\"sandbox\":{\"filesystem\":{\"allowWrite\":[\"" + std::string(100000, 'a') + "\"]}}}");
    odd.push_back("{\"sandbox\":{\"" + std::string(5000, 'x') + "\":1}}");
    odd.push_back("{\"sandbox\":{\"filesystem\":{\"allowWrite\":[\"" + std::string(3000, '/') + "..\"]}}}");
    Tally t;
    for (const auto& s : odd)
        for (auto layer : kLayers) check_parse(s, layer, t);
    CHECK(t.failures == 0);
}

TEST_CASE("fuzz: merging parsed layers keeps every path absolute") {
    // Layers that parse, by kind: the samples and mutants of them, each read as
    // whichever layer the PRNG chose, so a project's file may also be managed.
    std::array<std::vector<sbx::Settings>, kLayers.size()> pool;
    Tally parsed;
    for (std::size_t d = 0; d < kDocs.size(); ++d)
        for (std::size_t k = 0; k < kLayers.size(); ++k) check_parse(kDocs[d], kLayers[k], parsed, &pool[k]);
    for_each_mutant(7u, 1500, [&](const std::string& s, LayerKind, Rng& rng) {
        const std::size_t k = rng.below(kLayers.size());
        check_parse(s, kLayers[k], parsed, &pool[k]);
    });
    CHECK(parsed.failures == 0);
    for (const auto& p : pool) REQUIRE(p.size() > 100);

    const sbx::MemoryFs fs = sample_fs();
    Rng rng(99u);
    Tally t;
    std::size_t warnings = 0;
    for (int round = 0; round < 3000; ++round) {
        std::vector<sbx::Settings> layers;
        for (std::size_t k = 0; k < kLayers.size(); ++k)
            if (rng.below(3) != 0) layers.push_back(rng.pick(pool[k]));
        std::shuffle(layers.begin(), layers.end(), std::mt19937(static_cast<std::uint32_t>(round)));
        const sbx::MergeOptions opt{rng.coin()};
        std::string what = "merge of";
        for (const auto& l : layers) what += " " + std::string(sbx::layer_name(l.layer));
        what += opt.trusted ? " (trusted)" : " (untrusted)";

        ++t.inputs;
        auto r = sbx::merge(layers, opt, fs);
        if (!r) {
            t.fail(what, "merge failed: " + sbx::to_string(r.error()));
            continue;
        }
        ++t.values;
        warnings += r->warnings.size();
        const sbx::Policy& p = *r;
        const std::array<std::pair<std::string_view, const sbx::SourcedList*>, 7> path_lists{{
            {"filesystem.allowWrite", &p.filesystem.allow_write},
            {"filesystem.denyWrite", &p.filesystem.deny_write},
            {"filesystem.denyRead", &p.filesystem.deny_read},
            {"filesystem.allowRead", &p.filesystem.allow_read},
            {"network.allowUnixSockets", &p.network.allow_unix_sockets},
            {"credentials.files", &p.credentials.files},
            {"additionalDirectories", &p.additional_directories},
        }};
        for (const auto& [name, list] : path_lists) {
            for (const auto& e : *list) {
                if (!sbx::paths::is_absolute(e.value))
                    t.fail(what, std::string(name) + " holds '" + e.value + "', not an absolute path");
                bool from_input = false;
                for (const auto& l : layers) from_input = from_input || (l.layer == e.source.layer && l.file == e.source.file);
                if (!from_input) t.fail(what, std::string(name) + " entry '" + e.value + "' names a layer not merged");
            }
        }
        for (const auto* prog : {&p.bwrap_path, &p.socat_path})
            if (*prog && !sbx::paths::is_absolute((*prog)->value)) t.fail(what, "a program path that is not absolute");
        if (p.trusted != opt.trusted) t.fail(what, "the policy does not record whether the project is trusted");
        if (!sbx::to_json(p).starts_with("{\"version\":1,")) t.fail(what, "to_json() did not write the policy");
    }
    CHECK(t.failures == 0);
    CHECK(t.values == t.inputs);
    CHECK(warnings > 0);

    // Two files for one layer is the caller's mistake, reported as an error.
    std::vector<sbx::Settings> twice{pool[0].front(), pool[0].back()};
    auto r = sbx::merge(twice, {}, fs);
    REQUIRE_FALSE(r.has_value());
    CHECK_FALSE(r.error().message.empty());
}
