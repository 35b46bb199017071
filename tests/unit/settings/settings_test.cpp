// parse_settings(): one file, read strictly.
#include <doctest/doctest.h>

#include <string>

#include "sbx/settings/settings.hpp"

namespace {

using sbx::LayerKind;

const sbx::SettingsSource kProject{LayerKind::project, "/r/.claude/settings.json", {"/home/u", "/r"}, "/r"};

sbx::Settings parse_ok(std::string_view text, const sbx::SettingsSource& src = kProject) {
    auto s = sbx::parse_settings(text, src);
    REQUIRE_MESSAGE(s.has_value(), (s ? std::string() : sbx::to_string(s.error())));
    return *s;
}

sbx::Error parse_err(std::string_view text, const sbx::SettingsSource& src = kProject) {
    auto s = sbx::parse_settings(text, src);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().code == sbx::Errc::invalid_settings);
    CHECK(s.error().file == src.file);
    return s.error();
}

std::vector<std::string> values(const sbx::SourcedList& l) {
    std::vector<std::string> out;
    for (const auto& e : l) out.push_back(e.value);
    return out;
}

bool has_warning(const sbx::Settings& s, std::string_view key, std::string_view text) {
    for (const auto& w : s.warnings)
        if (w.key == key && w.message.find(text) != std::string::npos && w.file == s.file) return true;
    return false;
}

}  // namespace

TEST_CASE("settings: the project of a settings file") {
    CHECK(sbx::settings_project_dir("/r/.claude/settings.json") == "/r");
    CHECK(sbx::settings_project_dir("/r/.claude/settings.local.json") == "/r");
    CHECK(sbx::settings_project_dir("/home/u/.claude/settings.json") == "/home/u");
    CHECK(sbx::settings_project_dir("/etc/claude-code/managed-settings.json") == "/etc/claude-code");
    CHECK(sbx::settings_project_dir("/tmp/extra.json") == "/tmp");
}

TEST_CASE("settings: every sandbox key is read, with its source") {
    auto s = parse_ok(R"J({
      "sandbox": {
        "enabled": true, "autoAllowBashIfSandboxed": false, "allowUnsandboxedCommands": true,
        "failIfUnavailable": false, "excludedCommands": ["docker *", "git push"],
        "ignoreViolations": {"*": ["/usr/bin"], "npm test": ["registry", "cache"]},
        "filesystem": {"allowWrite": ["~/.kube", "/tmp/build", "out"], "denyWrite": ["secret/**"],
                       "denyRead": ["~/.aws/credentials"], "allowRead": ["~/projects"],
                       "disabled": true, "allowManagedReadPathsOnly": true},
        "network": {"allowedDomains": ["github.com", "*.packages.example"], "deniedDomains": ["uploads.github.com"],
                    "allowUnixSockets": ["/run/docker.sock"], "strictAllowlist": true, "allowLocalBinding": true,
                    "allowAllUnixSockets": false, "allowManagedDomainsOnly": true},
        "credentials": {"envVars": ["GITHUB_TOKEN"], "files": ["~/.npmrc"]},
        "bwrapPath": "/usr/local/bin/bwrap", "socatPath": "/usr/bin/socat", "enableWeakerNestedSandbox": true
      }
    })J");
    CHECK(s.layer == LayerKind::project);
    REQUIRE(s.enabled);
    CHECK(s.enabled->value);
    CHECK(s.enabled->source.key == "sandbox.enabled");
    CHECK(s.enabled->source.file == "/r/.claude/settings.json");
    CHECK(s.enabled->source.layer == LayerKind::project);
    CHECK_FALSE(s.auto_allow->value);
    CHECK(s.allow_unsandboxed->value);
    CHECK_FALSE(s.fail_if_unavailable->value);
    CHECK(values(s.excluded_commands) == std::vector<std::string>{"docker *", "git push"});
    CHECK(s.excluded_commands[1].source.key == "sandbox.excludedCommands[1]");
    REQUIRE(s.ignore_violations.size() == 2);
    CHECK(s.ignore_violations[1].command == "npm test");
    CHECK(s.ignore_violations[1].violations == std::vector<std::string>{"registry", "cache"});
    CHECK(s.ignore_violations[1].source.key == "sandbox.ignoreViolations.npm test");
    CHECK(values(s.filesystem.allow_write) == std::vector<std::string>{"/home/u/.kube", "/tmp/build", "/r/out"});
    CHECK(values(s.filesystem.deny_write) == std::vector<std::string>{"/r/secret/**"});
    CHECK(values(s.filesystem.deny_read) == std::vector<std::string>{"/home/u/.aws/credentials"});
    CHECK(values(s.filesystem.allow_read) == std::vector<std::string>{"/home/u/projects"});
    CHECK(s.filesystem.disabled->value);
    CHECK(s.filesystem.managed_read_paths_only->value);
    CHECK(s.filesystem.configured);
    CHECK(values(s.network.allowed_domains) == std::vector<std::string>{"github.com", "*.packages.example"});
    CHECK(values(s.network.denied_domains) == std::vector<std::string>{"uploads.github.com"});
    CHECK(values(s.network.allow_unix_sockets) == std::vector<std::string>{"/run/docker.sock"});
    CHECK(s.network.strict_allowlist->value);
    CHECK(s.network.allow_local_binding->value);
    CHECK_FALSE(s.network.allow_all_unix_sockets->value);
    CHECK(s.network.managed_domains_only->value);
    CHECK(values(s.credentials.env_vars) == std::vector<std::string>{"GITHUB_TOKEN"});
    CHECK(values(s.credentials.files) == std::vector<std::string>{"/home/u/.npmrc"});
    CHECK(s.bwrap_path->value == "/usr/local/bin/bwrap");
    CHECK(s.socat_path->value == "/usr/bin/socat");
    REQUIRE(s.weaker_sandbox);
    CHECK(s.weaker_sandbox->value);
    CHECK(s.weaker_sandbox->source.key == "sandbox.enableWeakerNestedSandbox");
    CHECK(s.weaker_sandbox->source.layer == LayerKind::project);
    CHECK(s.from == sbx::LayerFile::settings);
    CHECK(s.warnings.empty());
}

TEST_CASE("settings: enableWeakerNestedSandbox is a boolean, read with its source in every layer") {
    const sbx::SettingsSource user{LayerKind::user, "/home/u/.claude/settings.json", {"/home/u", "/home/u"}, "/r"};
    auto on = parse_ok(R"J({"sandbox": {"enableWeakerNestedSandbox": true}})J", user);
    REQUIRE(on.weaker_sandbox);
    CHECK(on.weaker_sandbox->value);
    CHECK(on.weaker_sandbox->source.layer == LayerKind::user);
    CHECK(on.weaker_sandbox->source.file == "/home/u/.claude/settings.json");
    CHECK(on.weaker_sandbox->source.key == "sandbox.enableWeakerNestedSandbox");
    CHECK(on.warnings.empty());
    auto off = parse_ok(R"J({"sandbox": {"enableWeakerNestedSandbox": false}})J");
    REQUIRE(off.weaker_sandbox);
    CHECK_FALSE(off.weaker_sandbox->value);
    CHECK_FALSE(parse_ok(R"J({"sandbox": {}})J").weaker_sandbox);  // unset: nullopt, not false
    // Whoever may set it, the file says what it says: merge() decides which layer counts.
    CHECK(parse_ok(R"J({"sandbox": {"enableWeakerNestedSandbox": true}})J").weaker_sandbox->value);
    for (const char* bad : {R"J("true")J", "1", "null", "[]", "{}"}) {
        CAPTURE(bad);
        auto e = parse_err(std::string(R"J({"sandbox": {"enableWeakerNestedSandbox": )J") + bad + "}}");
        CHECK(e.key == "sandbox.enableWeakerNestedSandbox");
        CHECK_MESSAGE(e.message.find("expected a boolean") != std::string::npos, e.message);
        CHECK(e.file == "/r/.claude/settings.json");
    }
    auto near = parse_ok(R"J({"sandbox": {"enableWeakerNestedSandbx": true}})J");
    CHECK(has_warning(near, "sandbox.enableWeakerNestedSandbx", "did you mean 'enableWeakerNestedSandbox'"));
    CHECK_FALSE(near.weaker_sandbox);
}

TEST_CASE("settings: an empty object and a file without a sandbox section are valid") {
    auto s = parse_ok("{}");
    CHECK_FALSE(s.enabled);
    CHECK(s.warnings.empty());
    auto t = parse_ok(R"J({"model": "x", "hooks": {}, "env": {"A": "b"}, "$schema": "y"})J");
    CHECK(t.warnings.empty());
    CHECK_FALSE(t.filesystem.configured);
}

TEST_CASE("settings: paths are absolute, ~/, or relative to the file's project, and normalised") {
    auto s = parse_ok(R"J({"sandbox": {"filesystem": {"allowWrite": [
        "/abs//x/./y/", "~", "~/a/../b", "rel/dir", "./dot", "../up", "glob/**/*.log"]}}})J");
    CHECK(values(s.filesystem.allow_write) ==
          std::vector<std::string>{"/abs/x/y", "/home/u", "/home/u/b", "/r/rel/dir", "/r/dot", "/up", "/r/glob/**/*.log"});
    // The user's own file: relative paths are relative to HOME, the directory above .claude.
    sbx::SettingsSource user{LayerKind::user, "/home/u/.claude/settings.json", {"/home/u", "/home/u"}, "/r"};
    auto u = parse_ok(R"J({"sandbox": {"filesystem": {"denyRead": ["secrets"]}}})J", user);
    CHECK(values(u.filesystem.deny_read) == std::vector<std::string>{"/home/u/secrets"});
}

TEST_CASE("settings: a path that cannot be made absolute is an error naming the key") {
    auto e = parse_err(R"J({"sandbox": {"filesystem": {"denyRead": ["~bob/x"]}}})J");
    CHECK(e.key == "sandbox.filesystem.denyRead[0]");
    CHECK(e.message.find("~user") != std::string::npos);
    auto f = parse_err(R"J({"sandbox": {"filesystem": {"denyRead": [""]}}})J");
    CHECK(f.key == "sandbox.filesystem.denyRead[0]");
    auto g = parse_err(R"J({"sandbox": {"filesystem": {"allowWrite": ["a\nb"]}}})J");
    CHECK(g.key == "sandbox.filesystem.allowWrite[0]");
    CHECK(g.message.find("control character") != std::string::npos);
}

TEST_CASE("settings: permission rules add paths and hosts") {
    auto s = parse_ok(R"J({"permissions": {
        "allow": ["Edit(src/**)", "Edit(//opt/cache)", "Read(~/.ssh)", "WebFetch(domain:docs.example.com)",
                  "Bash(npm test)", "Edit", "mcp__server__tool"],
        "deny": ["Edit(/config/prod.json)", "Read(./.env)", "Read(~/.aws/**)", "WebFetch(domain:evil.example)"],
        "ask": ["Bash(git push *)"],
        "additionalDirectories": ["../shared", "~/lib"],
        "defaultMode": "acceptEdits"}})J");
    // Edit allow -> allowWrite; `x` is relative to the root, `//x` is absolute.
    CHECK(values(s.filesystem.allow_write) == std::vector<std::string>{"/r/src/**", "/opt/cache"});
    CHECK(s.filesystem.allow_write[0].source.key == "permissions.allow[0]");
    // A Read allow does not re-open anything.
    CHECK(s.filesystem.allow_read.empty());
    // Edit deny -> denyWrite; `/x` is relative to the settings file's project.
    CHECK(values(s.filesystem.deny_write) == std::vector<std::string>{"/r/config/prod.json"});
    CHECK(values(s.filesystem.deny_read) == std::vector<std::string>{"/r/.env", "/home/u/.aws/**"});
    CHECK(s.filesystem.deny_read[1].source.key == "permissions.deny[2]");
    CHECK(values(s.network.allowed_domains) == std::vector<std::string>{"docs.example.com"});
    CHECK(values(s.network.denied_domains) == std::vector<std::string>{"evil.example"});
    CHECK(values(s.additional_directories) == std::vector<std::string>{"/shared", "/home/u/lib"});
    CHECK(s.warnings.empty());
}

TEST_CASE("settings: permission rule paths of a user file: `/x` is under HOME, `x` under the root") {
    sbx::SettingsSource user{LayerKind::user, "/home/u/.claude/settings.json", {"/home/u", "/home/u"}, "/r"};
    auto s = parse_ok(R"J({"permissions": {"deny": ["Read(/notes)", "Read(.env)"]}})J", user);
    CHECK(values(s.filesystem.deny_read) == std::vector<std::string>{"/home/u/notes", "/r/.env"});
}

TEST_CASE("settings: malformed permission rules for sandbox tools are errors") {
    auto e = parse_err(R"J({"permissions": {"deny": ["Read(~/.ssh"]}})J");
    CHECK(e.key == "permissions.deny[0]");
    CHECK(e.message.find("')'") != std::string::npos);
    auto f = parse_err(R"J({"permissions": {"allow": ["Edit()"]}})J");
    CHECK(f.key == "permissions.allow[0]");
    auto g = parse_err(R"J({"permissions": {"allow": ["WebFetch(domain:)"]}})J");
    CHECK(g.key == "permissions.allow[0]");
    auto w = parse_ok(R"J({"permissions": {"allow": ["WebFetch(https://example.com)"]}})J");
    CHECK(has_warning(w, "permissions.allow[0]", "domain:"));
    CHECK(w.network.allowed_domains.empty());
}

TEST_CASE("settings: unsupported keys are left out with a warning") {
    auto s = parse_ok(R"J({"sandbox": {
        "enableWeakerNetworkIsolation": true, "allowAppleEvents": true,
        "allowNestedUserNamespaces": true, "ripgrep": {"command": "rg"},
        "network": {"httpProxyPort": 8080, "socksProxyPort": 1080, "tlsTerminate": true, "allowMachLookup": ["x"]}}})J");
    for (auto key : {"sandbox.enableWeakerNetworkIsolation",
                     "sandbox.allowAppleEvents", "sandbox.allowNestedUserNamespaces", "sandbox.ripgrep",
                     "sandbox.network.httpProxyPort", "sandbox.network.socksProxyPort", "sandbox.network.tlsTerminate",
                     "sandbox.network.allowMachLookup"}) {
        CAPTURE(key);
        CHECK(has_warning(s, key, "not supported"));
    }
    CHECK(s.warnings.size() == 8);
}

TEST_CASE("settings: an unknown key is a warning with the closest known key") {
    auto s = parse_ok(R"J({"sandbox": {"enabeld": true, "netwrok": {}, "filesystem": {"denyReads": ["x"]},
                          "zzzzzzzzzzzz": 1}, "sandbx": {}, "permisions": {}})J");
    CHECK(has_warning(s, "sandbox.enabeld", "did you mean 'enabled'"));
    CHECK(has_warning(s, "sandbox.netwrok", "did you mean 'network'"));
    CHECK(has_warning(s, "sandbox.filesystem.denyReads", "did you mean 'denyRead'"));
    CHECK(has_warning(s, "sandbox.zzzzzzzzzzzz", "unknown key"));
    CHECK(has_warning(s, "sandbx", "did you mean 'sandbox'"));
    CHECK(has_warning(s, "permisions", "did you mean 'permissions'"));
    // A misspelled key is left out: nothing was enabled.
    CHECK_FALSE(s.enabled);
    CHECK(s.filesystem.deny_read.empty());
}

TEST_CASE("settings: a wrong type names the key path and the expected type") {
    struct Case {
        const char* text;
        const char* key;
        const char* expected;
    };
    const Case cases[] = {
        {R"J({"sandbox": []})J", "sandbox", "expected an object, got an array"},
        {R"J({"sandbox": {"enabled": "yes"}})J", "sandbox.enabled", "expected a boolean"},
        {R"J({"sandbox": {"enabled": null}})J", "sandbox.enabled", "got null"},
        {R"J({"sandbox": {"filesystem": {"denyRead": "~/.ssh"}}})J", "sandbox.filesystem.denyRead",
         "expected an array of strings, got a string"},
        {R"J({"sandbox": {"filesystem": {"denyRead": ["a", 3]}}})J", "sandbox.filesystem.denyRead[1]",
         "expected a string, got a number"},
        {R"J({"sandbox": {"network": {"allowLocalBinding": 1}}})J", "sandbox.network.allowLocalBinding",
         "expected a boolean"},
        {R"J({"sandbox": {"network": true}})J", "sandbox.network", "expected an object, got a boolean"},
        {R"J({"sandbox": {"ignoreViolations": ["x"]}})J", "sandbox.ignoreViolations", "expected an object"},
        {R"J({"sandbox": {"ignoreViolations": {"*": "x"}}})J", "sandbox.ignoreViolations.*", "expected an array"},
        {R"J({"sandbox": {"credentials": {"files": [1]}}})J", "sandbox.credentials.files[0]", "got a number"},
        {R"J({"sandbox": {"bwrapPath": "bwrap"}})J", "sandbox.bwrapPath", "expected an absolute path"},
        {R"J({"permissions": {"allow": "Edit(x)"}})J", "permissions.allow", "expected an array"},
        {R"J({"permissions": []})J", "permissions", "expected an object"},
        {R"J([])J", "", "expected an object, got an array"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.text);
        auto e = parse_err(c.text);
        CHECK(e.key == c.key);
        CHECK_MESSAGE(e.message.find(c.expected) != std::string::npos, e.message);
    }
}

TEST_CASE("settings: a key that appears twice is an error") {
    auto e = parse_err(R"J({"sandbox": {"enabled": true, "enabled": false}})J");
    CHECK(e.key == "sandbox.enabled");
    CHECK(e.message.find("twice") != std::string::npos);
    auto f = parse_err(R"J({"sandbox": {}, "sandbox": {"enabled": true}})J");
    CHECK(f.key == "sandbox");
}

TEST_CASE("settings: malformed JSON names the file, line and column") {
    auto e = parse_err("{\n  \"sandbox\": {\n    \"enabled\": tru\n  }\n}");
    CHECK(e.line == 3);
    CHECK(e.column == 16);
    CHECK(e.message.find("invalid JSON") == 0);
    CHECK(sbx::to_string(e).find("/r/.claude/settings.json:3:16: ") == 0);
    auto f = parse_err("{\"sandbox\": {\"enabled\": true,}}");
    CHECK(f.line == 1);
    CHECK(f.column == 30);  // the `}` after the comma
    auto g = parse_err("");
    CHECK(g.line == 1);
    CHECK(g.column == 1);
}

TEST_CASE("settings: credentials entries may be objects; a mask is denied instead, with a warning") {
    auto s = parse_ok(R"J({"sandbox": {"credentials": {
        "envVars": ["AWS_SECRET_ACCESS_KEY", {"name": "NPM_TOKEN", "mode": "mask"}, {"name": "X", "mode": "deny"}],
        "files": [{"path": "~/.npmrc", "mode": "mask"}, "~/.netrc"]}}})J");
    CHECK(values(s.credentials.env_vars) == std::vector<std::string>{"AWS_SECRET_ACCESS_KEY", "NPM_TOKEN", "X"});
    CHECK(values(s.credentials.files) == std::vector<std::string>{"/home/u/.npmrc", "/home/u/.netrc"});
    CHECK(has_warning(s, "sandbox.credentials.envVars[1].mode", "denied instead"));
    CHECK(has_warning(s, "sandbox.credentials.files[0].mode", "denied instead"));
    CHECK(s.warnings.size() == 2);

    CHECK(parse_err(R"J({"sandbox": {"credentials": {"envVars": [{"name": "A", "mode": "hide"}]}}})J").key ==
          "sandbox.credentials.envVars[0].mode");
    CHECK(parse_err(R"J({"sandbox": {"credentials": {"envVars": [{"mode": "deny"}]}}})J").key ==
          "sandbox.credentials.envVars[0]");
    CHECK(parse_err(R"J({"sandbox": {"credentials": {"envVars": [{"name": "A", "path": "/x"}]}}})J").key ==
          "sandbox.credentials.envVars[0].path");
    CHECK(parse_err(R"J({"sandbox": {"credentials": {"envVars": ["NOT A NAME"]}}})J").key ==
          "sandbox.credentials.envVars[0]");
    CHECK(parse_err(R"J({"sandbox": {"credentials": {"envVars": ["1ABC"]}}})J").key ==
          "sandbox.credentials.envVars[0]");
}

TEST_CASE("settings: strings in lists are not empty and hold no control characters") {
    CHECK(parse_err(R"J({"sandbox": {"network": {"allowedDomains": [""]}}})J").key ==
          "sandbox.network.allowedDomains[0]");
    CHECK(parse_err(R"J({"sandbox": {"network": {"allowedDomains": ["a.com\r\nHost: b"]}}})J").key ==
          "sandbox.network.allowedDomains[0]");
    CHECK(parse_err(R"J({"sandbox": {"excludedCommands": ["x\u0000y"]}})J").key == "sandbox.excludedCommands[0]");
    CHECK(parse_err(R"J({"sandbox": {"ignoreViolations": {"": ["x"]}}})J").key == "sandbox.ignoreViolations.");
}

TEST_CASE("settings: srt's format (network and filesystem at the top level) is read as srt reads it") {
    const sbx::SettingsSource user{LayerKind::user, "/home/u/.srt-settings.json", {"/home/u", "/home/u"}, ""};
    auto s = parse_ok(R"J({
      "network": {"allowedDomains": ["github.com"], "deniedDomains": ["uploads.github.com"], "allowLocalBinding": true},
      "filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["/tmp/build"], "denyWrite": ["~/.bashrc"]},
      "ignoreViolations": {"*": ["/usr/bin"]},
      "mystery": 1
    })J", user);
    CHECK(values(s.network.allowed_domains) == std::vector<std::string>{"github.com"});
    CHECK(s.network.allowed_domains[0].source.key == "network.allowedDomains[0]");
    CHECK(s.network.allowed_domains[0].source.file == "/home/u/.srt-settings.json");
    CHECK(values(s.network.denied_domains) == std::vector<std::string>{"uploads.github.com"});
    REQUIRE(s.network.allow_local_binding);
    CHECK(s.network.allow_local_binding->source.key == "network.allowLocalBinding");
    CHECK(values(s.filesystem.deny_read) == std::vector<std::string>{"/home/u/.ssh"});
    CHECK(s.filesystem.deny_read[0].source.key == "filesystem.denyRead[0]");
    CHECK(values(s.filesystem.allow_write) == std::vector<std::string>{"/tmp/build"});
    CHECK(s.ignore_violations.size() == 1);
    CHECK(has_warning(s, "mystery", "unknown key"));  // as in a sandbox section
    // Only filesystem is enough to tell the format.
    CHECK(values(parse_ok(R"J({"filesystem": {"denyRead": ["/x"]}})J").filesystem.deny_read) ==
          std::vector<std::string>{"/x"});
    // Both formats in one file are refused, naming the key.
    auto e = parse_err(R"J({"sandbox": {"enabled": true}, "network": {"allowedDomains": ["a.example"]}})J");
    CHECK(e.key == "network");
    CHECK(e.message.find("srt's settings format") != std::string::npos);
    // A mistake is named by its key as the file writes it.
    CHECK(parse_err(R"J({"network": {"allowedDomains": "github.com"}})J").key == "network.allowedDomains");
}

TEST_CASE("settings: Bash permission rules are kept, each with its key; other tools' ask rules pass") {
    auto s = parse_ok(R"J({"permissions": {
        "allow": ["Bash(npm test)", "Edit(src)", "Bash(make *)"],
        "deny": ["Bash(curl:*)", "Bash"],
        "ask": ["Bash(git push *)", "Read(secret)", "WebFetch"]}})J");
    CHECK(values(s.permissions.allow) == std::vector<std::string>{"Bash(npm test)", "Bash(make *)"});
    CHECK(s.permissions.allow[1].source.key == "permissions.allow[2]");
    CHECK(values(s.permissions.deny) == std::vector<std::string>{"Bash(curl:*)", "Bash"});
    CHECK(values(s.permissions.ask) == std::vector<std::string>{"Bash(git push *)"});
    CHECK(s.permissions.ask[0].source.key == "permissions.ask[0]");
    CHECK(s.permissions.ask[0].source.layer == LayerKind::project);
    CHECK(s.filesystem.allow_write.size() == 1);
}

TEST_CASE("settings: a malformed Bash rule or excludedCommands entry is an error naming it") {
    auto a = parse_err(R"J({"permissions": {"ask": ["Bash(git push"]}})J");
    CHECK(a.key == "permissions.ask[0]");
    CHECK(a.message.find("')'") != std::string::npos);
    auto b = parse_err(R"J({"permissions": {"deny": ["Bash()"]}})J");
    CHECK(b.key == "permissions.deny[0]");
    auto c = parse_err(R"J({"sandbox": {"excludedCommands": ["docker *", "Bash(docker"]}})J");
    CHECK(c.key == "sandbox.excludedCommands[1]");
}

TEST_CASE("settings: defaultMode is one of the modes, disableBypassPermissionsMode is \"disable\"") {
    auto s = parse_ok(R"J({"permissions": {"defaultMode": "acceptEdits", "disableBypassPermissionsMode": "disable"}})J");
    REQUIRE(s.permissions.default_mode);
    CHECK(s.permissions.default_mode->value == "acceptEdits");
    CHECK(s.permissions.default_mode->source.key == "permissions.defaultMode");
    REQUIRE(s.permissions.bypass_disabled);
    CHECK(s.permissions.bypass_disabled->value);
    auto e = parse_err(R"J({"permissions": {"defaultMode": "yolo"}})J");
    CHECK(e.key == "permissions.defaultMode");
    CHECK(e.message.find("expected one of default, acceptEdits, plan, bypassPermissions, dontAsk, auto") !=
          std::string::npos);
    auto f = parse_err(R"J({"permissions": {"disableBypassPermissionsMode": "enable"}})J");
    CHECK(f.key == "permissions.disableBypassPermissionsMode");
    auto g = parse_err(R"J({"permissions": {"defaultMode": true}})J");
    CHECK(g.key == "permissions.defaultMode");
}
