// parse_agent_file(): an agent file's sandbox block, read strictly into one Settings layer.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/rules/fs_rules.hpp"
#include "sbx/settings/agent_file.hpp"
#include "sbx/settings/policy.hpp"

namespace {

using sbx::LayerKind;
using sbx::Platform;

// The agent lives in /home/u/agents/researcher; HOME is /home/u.
constexpr std::string_view kFile = "/home/u/agents/researcher/AGENT.md";
constexpr std::string_view kDir = "/home/u/agents/researcher";

sbx::AgentFileSource source_on(Platform p) { return {std::string(kFile), "/home/u", LayerKind::flag, p}; }

sbx::AgentFile parse_ok(std::string_view text, Platform p = Platform::linux_) {
    auto a = sbx::parse_agent_file(text, source_on(p));
    REQUIRE_MESSAGE(a.has_value(), (a ? std::string() : sbx::to_string(a.error())));
    return std::move(*a);
}

sbx::Error parse_err(std::string_view text, Platform p = Platform::linux_) {
    auto a = sbx::parse_agent_file(text, source_on(p));
    REQUIRE_FALSE(a.has_value());
    CHECK(a.error().code == sbx::Errc::invalid_settings);
    CHECK(a.error().file == kFile);
    return a.error();
}

// A file whose front matter is `name: researcher` and then `body`.
std::string agent(std::string_view body) { return "---\nname: researcher\n" + std::string(body) + "---\n# Researcher\n"; }

std::vector<std::string> values(const sbx::SourcedList& l) {
    std::vector<std::string> out;
    for (const auto& e : l) out.push_back(e.value);
    return out;
}

bool contains(const sbx::SourcedList& l, std::string_view v) {
    return std::any_of(l.begin(), l.end(), [&](const auto& e) { return e.value == v; });
}

const sbx::Sourced<std::string>* entry(const sbx::SourcedList& l, std::string_view v) {
    for (const auto& e : l)
        if (e.value == v) return &e;
    return nullptr;
}

bool warned(const sbx::AgentFile& a, std::string_view key, std::string_view text) {
    return std::any_of(a.warnings().begin(), a.warnings().end(), [&](const sbx::Warning& w) {
        return w.file == kFile && w.key == key && w.message.find(text) != std::string::npos;
    });
}

// The reference's default block, indented as YAML needs.
constexpr std::string_view kDefaultBlock = R"Y(---
name: researcher
skills:
- shell
sandbox:
  preset: development # strict | development | off
  files:
    write: [.] # the agent's folder; a private scratch folder is always added
    read: all # development: all; strict: the write folders plus system folders
    deny: [] # more paths commands may never read, on top of the built-in list
  network:
    hosts: [] # host names, or the groups npm, pypi, github
    local: false # connecting to local servers, and listening on a port
    sockets: [] # unix sockets by path, for example the ssh-agent socket
  env: [] # variables a command may see; none that look secret by default
---
You research things.
)Y";

}  // namespace

TEST_CASE("agent file: the reference's default block parses and maps") {
    auto a = parse_ok(kDefaultBlock);
    CHECK(a.declared);
    CHECK(a.spelled.sandbox_block);
    CHECK(a.file == kFile);
    CHECK(a.agent_dir == kDir);
    CHECK(a.preset == sbx::Preset::development);
    REQUIRE(a.preset_source);
    CHECK(a.preset_source->key == "sandbox.preset");
    CHECK(values(a.files.write) == std::vector<std::string>{std::string(kDir)});
    CHECK(a.files.write_written);
    CHECK_FALSE(a.files.read.has_value());
    CHECK(a.files.read_all_written);
    CHECK(a.files.deny.empty());
    CHECK(a.network.hosts.empty());
    REQUIRE(a.network.local);
    CHECK_FALSE(a.network.local->value);
    CHECK(a.network.sockets.empty());
    CHECK(a.env.empty());
    CHECK_FALSE(a.reads_scoped);
    CHECK(a.warnings().empty());

    const auto& s = a.settings;
    CHECK(s.layer == LayerKind::flag);
    CHECK(s.file == kFile);
    REQUIRE(s.enabled);
    CHECK(s.enabled->value);
    CHECK(s.enabled->source.key == "sandbox.preset");
    CHECK(s.enabled->source.file == kFile);
    CHECK(s.enabled->source.layer == LayerKind::flag);
    CHECK(values(s.filesystem.allow_write) == std::vector<std::string>{std::string(kDir)});
    CHECK(s.filesystem.allow_write[0].source.key == "sandbox.files.write[0]");
    CHECK(s.filesystem.allow_read.empty());
    CHECK(s.network.allowed_domains.empty());
    REQUIRE(s.network.allow_local_binding);
    CHECK_FALSE(s.network.allow_local_binding->value);
    CHECK(s.network.allow_unix_sockets.empty());
    CHECK(s.credentials.env_vars.empty());  // env passes variables; envVars would hide them
    // The built-in denies.
    CHECK(contains(s.filesystem.deny_read, "/home/u/.ssh"));
    CHECK(contains(s.filesystem.deny_read, "/home/u/.aws"));
    CHECK(contains(s.filesystem.deny_read, "/home/u/.webagents-*"));
    CHECK(contains(s.filesystem.deny_read, "/home/u/agents/researcher/.env"));
    CHECK(contains(s.filesystem.deny_read, "/home/u/agents/researcher/.env.*"));
    CHECK(entry(s.filesystem.deny_read, "/home/u/.ssh")->source.key == "sandbox (built-in)");
    CHECK(contains(s.filesystem.deny_write, std::string(kFile)));
    CHECK(contains(s.filesystem.deny_write, "/home/u/agents/researcher/AGENT-*.md"));
    CHECK(contains(s.filesystem.deny_write, "/home/u/agents/researcher/.agents/skills"));
    CHECK_FALSE(contains(s.filesystem.deny_read, "/home"));  // reads are not scoped
}

TEST_CASE("agent file: no sandbox block gets what the default block says") {
    auto none = parse_ok("---\nname: researcher\nmodel: big\nskills:\n  - shell\n---\nbody\n");
    auto block = parse_ok(kDefaultBlock);
    CHECK_FALSE(none.declared);
    CHECK(none.preset == sbx::Preset::development);
    CHECK_FALSE(none.preset_source);
    CHECK_FALSE(none.files.write_written);
    CHECK(values(none.files.write) == values(block.files.write));
    CHECK(none.files.write[0].source.key == "sandbox.files.write (default)");
    const auto &n = none.settings, &b = block.settings;
    REQUIRE(n.enabled);
    CHECK(n.enabled->value);
    CHECK(n.enabled->source.key == "sandbox.preset (default)");
    CHECK(values(n.filesystem.allow_write) == values(b.filesystem.allow_write));
    CHECK(values(n.filesystem.deny_read) == values(b.filesystem.deny_read));
    CHECK(values(n.filesystem.deny_write) == values(b.filesystem.deny_write));
    CHECK(values(n.filesystem.allow_read) == values(b.filesystem.allow_read));
    CHECK(values(n.network.allowed_domains) == values(b.network.allowed_domains));
    CHECK_FALSE(n.network.allow_local_binding);  // not written: merge()'s default, false
    CHECK(none.warnings().empty());
}

// Over 80 lines: a table, one row a key with its check.
TEST_CASE("agent file: each key maps into the layer, with its source key") {
    struct Case {
        const char* name;
        const char* block;  // the lines under `sandbox:`
        void (*check)(const sbx::AgentFile&);
    };
    const Case cases[] = {
        {"files.write relative, absolute, home and dot", "  files:\n    write: [out, /srv/data, ~/cache, .]\n",
         [](const sbx::AgentFile& a) {
             CHECK(values(a.settings.filesystem.allow_write) ==
                   std::vector<std::string>{"/home/u/agents/researcher/out", "/srv/data", "/home/u/cache",
                                            std::string(kDir)});
             CHECK(a.settings.filesystem.allow_write[2].source.key == "sandbox.files.write[2]");
         }},
        {"files.write as a block list, folded", "  files:\n    write:\n      - ./a/../b/\n      - \"/x//y\"\n",
         [](const sbx::AgentFile& a) {
             CHECK(values(a.files.write) == std::vector<std::string>{"/home/u/agents/researcher/b", "/x/y"});
             // development adds the agent's folder, from the preset
             CHECK(a.settings.filesystem.allow_write.back().value == kDir);
             CHECK(a.settings.filesystem.allow_write.back().source.key == "sandbox.preset (default)");
             CHECK(contains(a.settings.filesystem.deny_read, "/x/y/.env"));  // write folders' .env too
         }},
        {"strict writes only files.write", "  preset: strict\n  files:\n    write: [out]\n",
         [](const sbx::AgentFile& a) {
             CHECK(a.preset == sbx::Preset::strict);
             CHECK(values(a.settings.filesystem.allow_write) ==
                   std::vector<std::string>{"/home/u/agents/researcher/out"});
             CHECK(a.reads_scoped);
             // nor the root the caller sandboxes
             REQUIRE(a.settings.filesystem.root_read_only);
             CHECK(a.settings.filesystem.root_read_only->value);
             CHECK(a.settings.filesystem.root_read_only->source.key == "sandbox.preset");
         }},
        {"strict with an empty write list writes nothing", "  preset: strict\n  files:\n    write: []\n",
         [](const sbx::AgentFile& a) {
             CHECK(a.settings.filesystem.allow_write.empty());
             CHECK(a.settings.filesystem.root_read_only);
         }},
        {"development leaves the root as the caller has it", "  preset: development\n",
         [](const sbx::AgentFile& a) { CHECK_FALSE(a.settings.filesystem.root_read_only); }},
        {"files.deny takes patterns", "  files:\n    deny: [secrets, '~/**/id_*']\n",
         [](const sbx::AgentFile& a) {
             auto* e = entry(a.settings.filesystem.deny_read, "/home/u/agents/researcher/secrets");
             REQUIRE(e);
             CHECK(e->source.key == "sandbox.files.deny[0]");
             CHECK(contains(a.settings.filesystem.deny_read, "/home/u/**/id_*"));
         }},
        {"network.hosts: names, wildcards, ports, addresses",
         "  network:\n    hosts:\n      - example.com\n      - \"*.packages.example\"\n      - 127.0.0.1:8080\n",
         [](const sbx::AgentFile& a) {
             CHECK(values(a.settings.network.allowed_domains) ==
                   std::vector<std::string>{"example.com", "*.packages.example", "127.0.0.1:8080"});
             CHECK(a.settings.network.allowed_domains[1].source.key == "sandbox.network.hosts[1]");
         }},
        {"network.local", "  network:\n    local: true\n",
         [](const sbx::AgentFile& a) {
             REQUIRE(a.settings.network.allow_local_binding);
             CHECK(a.settings.network.allow_local_binding->value);
             CHECK(a.settings.network.allow_local_binding->source.key == "sandbox.network.local");
             CHECK(a.settings.network.allow_local_binding->source.file == kFile);
         }},
        {"env", "  env: [GITHUB_TOKEN, 'PATH_2']\n",
         [](const sbx::AgentFile& a) {
             CHECK(values(a.env) == std::vector<std::string>{"GITHUB_TOKEN", "PATH_2"});
             CHECK(a.env[1].source.key == "sandbox.env[1]");
             CHECK(a.settings.credentials.env_vars.empty());
         }},
        {"allowed_commands is kept, with a warning", "  allowed_commands: [ls, git]\n",
         [](const sbx::AgentFile& a) {
             CHECK(values(a.allowed_commands) == std::vector<std::string>{"ls", "git"});
             CHECK(warned(a, "sandbox.allowed_commands", "gates nothing"));
         }},
        {"allowed_imports is accepted and kept, with a warning that it does nothing",
         "  allowed_imports: [requests, numpy]\n",
         [](const sbx::AgentFile& a) {
             CHECK(values(a.allowed_imports) == std::vector<std::string>{"requests", "numpy"});
             CHECK(a.allowed_imports[1].source.key == "sandbox.allowed_imports[1]");
             CHECK(warned(a, "sandbox.allowed_imports", "does nothing"));
         }},
        {"preset unrestricted is off", "  preset: unrestricted\n",
         [](const sbx::AgentFile& a) { CHECK(a.preset == sbx::Preset::off); }},
        {"quoting and comments", "  files:\n    write: ['it''s', \"a\\\"b\", \"x#y\", c#d] # four\n",
         [](const sbx::AgentFile& a) {
             CHECK(values(a.files.write) ==
                   std::vector<std::string>{"/home/u/agents/researcher/it's", "/home/u/agents/researcher/a\"b",
                                            "/home/u/agents/researcher/x#y", "/home/u/agents/researcher/c#d"});
         }},
        {"indentless lists under their key", "  network:\n    hosts:\n    - github\n    local: true\n",
         [](const sbx::AgentFile& a) {
             CHECK(values(a.network.hosts) == std::vector<std::string>{"github"});
             CHECK(a.network.local);
         }},
    };
    for (const auto& c : cases) {
        CAPTURE(c.name);
        c.check(parse_ok(agent(std::string("sandbox:\n") + c.block)));
    }
}

TEST_CASE("agent file: the groups expand to their hosts") {
    auto a = parse_ok(agent("sandbox:\n  network:\n    hosts: [npm, pypi, github, example.com]\n"));
    CHECK(values(a.network.hosts) == std::vector<std::string>{"npm", "pypi", "github", "example.com"});
    CHECK(values(a.settings.network.allowed_domains) ==
          std::vector<std::string>{"registry.npmjs.org", "pypi.org", "files.pythonhosted.org", "github.com",
                                   "api.github.com", "codeload.github.com", "objects.githubusercontent.com",
                                   "raw.githubusercontent.com", "example.com"});
    auto* gh = entry(a.settings.network.allowed_domains, "raw.githubusercontent.com");
    REQUIRE(gh);
    CHECK(gh->source.key == "sandbox.network.hosts[2]");
    // Every host a group names is a host pattern sbx takes.
    for (const auto& h : sbx::kGroupHosts) CHECK(sbx::net::parse_host_pattern(h.host).has_value());
    // A name close to a group is taken as a host, with a word.
    auto typo = parse_ok(agent("sandbox:\n  network:\n    hosts: [githib]\n"));
    CHECK(values(typo.settings.network.allowed_domains) == std::vector<std::string>{"githib"});
    CHECK(warned(typo, "sandbox.network.hosts[0]", "did you mean the group 'github'"));
}

TEST_CASE("agent file: network.sockets is granted on Linux and macOS alike") {
    const std::string text = agent("sandbox:\n  network:\n    sockets: [~/.ssh/agent.sock, /run/docker.sock]\n");
    for (auto platform : {Platform::linux_, Platform::mac}) {
        CAPTURE(sbx::platform_name(platform));
        auto read = parse_ok(text, platform);
        CHECK(values(read.network.sockets) == std::vector<std::string>{"/home/u/.ssh/agent.sock", "/run/docker.sock"});
        CHECK(values(read.settings.network.allow_unix_sockets) ==
              std::vector<std::string>{"/home/u/.ssh/agent.sock", "/run/docker.sock"});
        CHECK(read.settings.network.allow_unix_sockets[1].source.key == "sandbox.network.sockets[1]");
        CHECK(read.warnings().empty());
    }
}

TEST_CASE("agent file: the older flat spellings") {
    auto a = parse_ok(agent("allowed_folders:\n- out\nnetwork: [github]\nenv_passthrough:\n  - API_KEY\n"));
    CHECK(a.declared);
    CHECK_FALSE(a.spelled.sandbox_block);
    CHECK(a.spelled.allowed_folders);
    CHECK(a.spelled.network_list);
    CHECK(a.spelled.env_passthrough);
    CHECK(values(a.files.write) == std::vector<std::string>{"/home/u/agents/researcher/out"});
    CHECK(a.settings.filesystem.allow_write[0].source.key == "allowed_folders[0]");
    CHECK(contains(a.settings.network.allowed_domains, "api.github.com"));
    CHECK(entry(a.settings.network.allowed_domains, "github.com")->source.key == "network[0]");
    CHECK(values(a.env) == std::vector<std::string>{"API_KEY"});
    CHECK(a.env[0].source.key == "env_passthrough[0]");
    // An old spelling beside the block's other keys is fine.
    auto b = parse_ok(agent("sandbox:\n  network:\n    local: true\nnetwork: [example.com]\n"));
    CHECK(values(b.settings.network.allowed_domains) == std::vector<std::string>{"example.com"});
    CHECK(b.settings.network.allow_local_binding->value);
}

TEST_CASE("agent file: one thing in both spellings is an error") {
    struct Case {
        const char* body;
        std::size_t line;
        const char* key;
        const char* text;
    };
    // Line 1 is `---`, line 2 `name: researcher`.
    const Case cases[] = {
        {"sandbox:\n  files:\n    write: [a]\nallowed_folders: [b]\n", 6, "allowed_folders",
         "allowed_folders is the older spelling of sandbox.files.write, which this file also sets (line 5)"},
        {"network: [a.example]\nsandbox:\n  network:\n    hosts: [b.example]\n", 3, "network",
         "older spelling of sandbox.network.hosts"},
        {"env_passthrough: [A]\nsandbox:\n  env: [B]\n", 3, "env_passthrough", "older spelling of sandbox.env"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.body);
        auto e = parse_err(agent(c.body));
        CHECK(e.line == c.line);
        CHECK(e.key == c.key);
        CHECK_MESSAGE(e.message.find(c.text) != std::string::npos, e.message);
    }
}

// Over 80 lines: a table, one row a refused body.
TEST_CASE("agent file: refusals name the line and the key") {
    struct Case {
        const char* body;  // after `---` and `name: researcher` (lines 1 and 2)
        std::size_t line;
        const char* key;
        const char* text;
    };
    const Case cases[] = {
        {"sandbox:\n  network:\n    hosts: [https://example.com]\n", 5, "sandbox.network.hosts[0]", "not a URL"},
        {"sandbox:\n  network:\n    hosts: [example.com/x]\n", 5, "sandbox.network.hosts[0]", "a host has no '/'"},
        {"sandbox:\n  network:\n    hosts: [10.0.0.0/8]\n", 5, "sandbox.network.hosts[0]", "CIDR"},
        {"sandbox:\n  network:\n    hosts:\n      - a.example\n      - \"*\"\n", 7, "sandbox.network.hosts[1]",
         "would admit every host"},
        {"sandbox:\n  network:\n    hosts: [\"*:443\"]\n", 5, "sandbox.network.hosts[0]", "would admit every host"},
        {"sandbox:\n  network:\n    hosts:\n      - *.example.com\n", 6, "sandbox.network.hosts[0]",
         "a value that starts with * is quoted"},
        {"sandbox:\n  network:\n    hosts: [*.example.com]\n", 5, "sandbox.network.hosts[0]", "alias"},
        {"sandbox:\n  network:\n    hosts: [\"a\\tb\"]\n", 5, "sandbox.network.hosts[0]", "control character"},
        {"sandbox:\n\tpreset: strict\n", 4, "", "a tab in the indentation"},
        {"sandbox:\n  preset:\tstrict\n", 4, "", "a tab"},
        {"sandbox:\n  network: {local: {a: 1}}\n", 4, "sandbox.network.local", "a mapping inside a { mapping"},
        {"sandbox:\n  files: &f\n    write: [a]\n", 4, "sandbox.files", "anchor"},
        {"sandbox:\n  preset: !!str strict\n", 4, "sandbox.preset", "tag"},
        {"sandbox:\n  preset: |\n    strict\n", 4, "sandbox.preset", "multi-line"},
        {"sandbox:\n  preset: strict\n  preset: off\n", 5, "sandbox.preset", "appears twice (first on line 4)"},
        {"sandbox:\n  presets: strict\n", 4, "sandbox.presets", "did you mean 'preset'?"},
        {"sandbox:\n  files:\n    writes: [a]\n", 5, "sandbox.files.writes", "did you mean 'write'?"},
        {"sandbox:\n  network:\n    host: [a.example]\n", 5, "sandbox.network.host", "did you mean 'hosts'?"},
        {"sandbox:\n  zzzzzzzz: 1\n", 4, "sandbox.zzzzzzzz", "sandbox takes preset, files, network, env, allowed_commands and allowed_imports"},
        {"sandbox:\n  preset: lax\n", 4, "sandbox.preset", "unknown preset 'lax'; use strict, development or off"},
        {"sandbox:\n  preset: stict\n", 4, "sandbox.preset", "did you mean 'strict'?"},
        {"sandbox:\n  network:\n    local: yes\n", 5, "sandbox.network.local", "expected true or false, got 'yes'"},
        {"sandbox:\n  network:\n    local: \"true\"\n", 5, "sandbox.network.local", "expected true or false"},
        {"sandbox:\n  network:\n    hosts: example.com\n", 5, "sandbox.network.hosts",
         "expected a list of hosts, got a single value"},
        {"sandbox:\n  network:\n    hosts:\n", 5, "sandbox.network.hosts", "got nothing; write [] for none"},
        {"sandbox:\n  files:\n    write: [true]\n", 5, "sandbox.files.write[0]", "got a boolean"},
        {"sandbox:\n  files:\n    write: [~]\n", 5, "sandbox.files.write[0]", "got null"},
        {"sandbox:\n  files:\n    write: ['']\n", 5, "sandbox.files.write[0]", "an empty string"},
        {"sandbox:\n  files:\n    write: [\"a*\"]\n", 5, "sandbox.files.write[0]", "wildcard"},
        {"sandbox:\n  files:\n    write: [~bob/x]\n", 5, "sandbox.files.write[0]", "not ~user"},
        {"sandbox:\n  files:\n    read: some\n", 5, "sandbox.files.read", "all or a list of folders"},
        {"sandbox:\n  files: [a]\n", 4, "sandbox.files", "expected the keys write, read, deny indented below"},
        {"sandbox:\n  env: [1BAD]\n", 4, "sandbox.env[0]", "not a variable name"},
        {"sandbox:\n  env: [A-B]\n", 4, "sandbox.env[0]", "not a variable name"},
        {"sandbox:\n  network:\n    sockets: [agent.sock]\n", 5, "sandbox.network.sockets[0]",
         "absolute path or one under ~/"},
        {"sandbox:\n", 3, "sandbox", "sandbox: is empty"},
        {"sandbox: strict\n", 3, "sandbox", "or the value off"},
        {"sandbox: [a]\n", 3, "sandbox", "got a list"},
        {"network:\n  hosts: [a.example]\n", 3, "network", "takes a list"},
        {"preset: strict\n", 3, "preset", "indent it under `sandbox:`"},
        {"sandbox:\n  preset: strict\n files: {}\n", 5, "", "unexpected indentation"},
        {"sandbox:\n  network:\n    hosts: [a.example,\n      b.example]\n", 5, "sandbox.network.hosts", "close on its own line"},
        {"sandbox:\n  network:\n    hosts: [a.example,]\n", 5, "sandbox.network.hosts[1]", "an empty entry"},
        {"sandbox:\n  network:\n    hosts: [[a]]\n", 5, "sandbox.network.hosts[0]", "a list inside a list"},
        {"sandbox:\n  preset: \"strict\n", 4, "sandbox.preset", "close on its own line"},
        {"sandbox:\n  preset: \"\\x41\"\n", 4, "sandbox.preset", "the escape \\x is not read"},
        {"sandbox:\n  preset: 'strict' x\n", 4, "sandbox.preset", "unexpected text after the value"},
        {"sandbox:\n  preset: strict\n    more\n", 5, "sandbox.preset", "cannot go on below it"},
        {"sandbox:\n  \"preset\": strict\n", 4, "sandbox", "a quoted key"},
        {"sandbox:\n  preset:strict\n", 4, "sandbox", "a space after the colon"},
        {"sandbox:\n  files:\n    write:\n      - a: b\n", 6, "sandbox.files.write[0]", "expected a string, got keys"},
        {"skills:\n  - shell: {blocked_commands: [/bin/nc]}\n", 4, "skills[0].shell.blocked_commands[0]",
         "not a program name"},
        {"skills:\n  - shell: {blocked_commands: ['rm -rf']}\n", 4, "skills[0].shell.blocked_commands[0]",
         "not a program name"},
        {"skills:\n  - shell: {blocked_comands: [nc]}\n", 4, "skills[0].shell.blocked_comands",
         "did you mean 'blocked_commands'?"},
        {"skills:\n  - shell: {blocked_commands: nc}\n", 4, "skills[0].shell.blocked_commands", "write [value]"},
        {"skills:\n  - shell: [nc]\n", 4, "skills[0].shell", "expected the keys"},
        {"skills: shell\n", 3, "skills", "expected a list of skills"},
        {"sandbox:\n  files:\n    write:\n      -\n        - a\n", 7, "sandbox.files.write[0]", "unexpected indentation"},
        {"sandbox:\n  preset: strict\n  - a\n", 5, "sandbox", "a list item where a key was expected"},
        {"...\n", 3, "", "a document end"},
        {"name2: x\n- item\n", 4, "", "belongs to no `key:`"},
        {"name: again\n", 3, "name", "appears twice (first on line 2)"},
        {"  indented: x\n", 3, "", ""},  // continues `name:`, which is skipped unread: no error expected below
        {"just text\n", 3, "", "expected a top-level `key:`"},
        {"*alias: x\n", 3, "", "alias"},
        {"sandbox:\n  preset: \x01\n", 4, "", "control character"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.body);
        const std::string text = agent(c.body);
        if (std::string_view(c.text).empty()) {
            CHECK(sbx::parse_agent_file(text, source_on(Platform::linux_)).has_value());
            continue;
        }
        auto e = parse_err(text);
        CHECK(e.line == c.line);
        CHECK(e.key == c.key);
        CHECK_MESSAGE(e.message.find(c.text) != std::string::npos, e.message);
        CHECK(sbx::to_string(e).starts_with(std::string(kFile) + ":" + std::to_string(c.line) + ":"));
    }
}

TEST_CASE("agent file: an error about a key points at the key, one about a value at the value") {
    auto key = parse_err(agent("sandbox:\n  presets: strict\n"));
    CHECK(key.line == 4);
    CHECK(key.column == 3);
    auto value = parse_err(agent("sandbox:\n  network:\n    hosts: [a.example, https://b.example]\n"));
    CHECK(value.line == 5);
    CHECK(value.column == 24);  // the h of https
    auto old = parse_err(agent("sandbox:\n  env: [A]\nenv_passthrough: [B]\n"));
    CHECK(old.line == 5);
    CHECK(old.column == 1);
}

TEST_CASE("agent file: the front matter") {
    auto missing = parse_err("# Researcher\n\nNo front matter.\n");
    CHECK(missing.line == 1);
    CHECK(missing.message.find("starts with a line `---`") != std::string::npos);
    CHECK(parse_err("").line == 1);
    CHECK(parse_err(" ---\nname: x\n---\n").line == 1);

    auto unclosed = parse_err("---\nname: x\nsandbox:\n  preset: strict\n");
    CHECK(unclosed.line == 1);
    CHECK(unclosed.message.find("no closing line `---` (the file ends at line 4)") != std::string::npos);

    std::string with_nul = "---\nname: a";
    with_nul += '\0';
    with_nul += "b\n---\n";
    auto nul = parse_err(with_nul);
    CHECK(nul.line == 2);
    CHECK(nul.message.find("NUL") != std::string::npos);

    // A byte order mark is skipped; CRLF line ends read as LF.
    auto bom = parse_ok("\xEF\xBB\xBF---\r\nname: x\r\nsandbox:\r\n  preset: strict\r\n---\r\nbody\r\n");
    CHECK(bom.preset == sbx::Preset::strict);
    // The body after the closing line is not read, whatever it holds.
    auto body = parse_ok("---\nname: x\n---\nsandbox: off\n\tanything: [\n");
    CHECK_FALSE(body.declared);
    // Other keys are skipped unread, even where they hold what the subset refuses.
    auto other = parse_ok(
        "---\nname: x\ndescription: |\n  multi\n\tline * & !\nmeta: {a: 1}\n# comment\nsandbox:\n  # inner comment\n\n"
        "  preset: strict\nlater: *ref\n---\n");
    CHECK(other.preset == sbx::Preset::strict);
    // An empty front matter says nothing.
    CHECK_FALSE(parse_ok("---\n---\n").declared);
}

TEST_CASE("agent file: off") {
    auto a = parse_ok(agent("sandbox: off\n"));
    CHECK(a.declared);
    CHECK(a.preset == sbx::Preset::off);
    REQUIRE(a.settings.enabled);
    CHECK_FALSE(a.settings.enabled->value);
    CHECK(a.settings.enabled->source.key == "sandbox");
    CHECK(a.settings.filesystem.allow_write.empty());
    CHECK(a.settings.filesystem.deny_read.empty());
    auto b = parse_ok(agent("sandbox:\n  preset: off\n  network:\n    hosts: [github]\n"));
    CHECK(b.preset == sbx::Preset::off);
    CHECK(b.settings.enabled->source.key == "sandbox.preset");
    CHECK(b.settings.network.allowed_domains.empty());
    CHECK(values(b.network.hosts) == std::vector<std::string>{"github"});  // decoded all the same
    // `sandbox: off` quoted is a string, not the switch.
    CHECK(parse_err(agent("sandbox: 'off'\n")).key == "sandbox");
}

TEST_CASE("agent file: the caller's paths must be absolute and nameable") {
    auto rel = sbx::parse_agent_file(kDefaultBlock, {"AGENT.md", "/home/u", LayerKind::flag, Platform::linux_});
    REQUIRE_FALSE(rel);
    CHECK(rel.error().code == sbx::Errc::invalid_argument);
    auto glob = sbx::parse_agent_file(kDefaultBlock, {"/a/[x]/AGENT.md", "/home/u", LayerKind::flag, Platform::linux_});
    REQUIRE_FALSE(glob);
    CHECK(glob.error().code == sbx::Errc::invalid_argument);
    auto layer = sbx::parse_agent_file(kDefaultBlock, {std::string(kFile), "/home/u", LayerKind::user, Platform::linux_});
    REQUIRE(layer);
    CHECK(layer->settings.layer == LayerKind::user);
    CHECK(layer->settings.enabled->source.layer == LayerKind::user);
}

TEST_CASE("agent file: the layer's hosts and local binding reach the Policy through merge()") {
    auto a = parse_ok(agent("sandbox:\n  network:\n    hosts: [pypi, example.com]\n    local: true\n"));
    // A user settings file below it, with its own host.
    sbx::SettingsSource user{LayerKind::user, "/home/u/.claude/settings.json", {"/home/u", "/home/u"}, "/r"};
    auto u = sbx::parse_settings(R"J({"sandbox": {"network": {"allowedDomains": ["user.example"]}}})J", user);
    REQUIRE(u);
    std::vector<sbx::Settings> layers{std::move(*u), a.settings};
    sbx::MemoryFs fs;
    auto p = sbx::merge(std::move(layers), {}, fs);
    REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : sbx::to_string(p.error())));
    CHECK(p->enabled.value);
    REQUIRE(p->enabled.source);
    CHECK(p->enabled.source->file == kFile);
    CHECK(p->network.allow_local_binding.value);
    REQUIRE(p->network.allow_local_binding.source);
    CHECK(p->network.allow_local_binding.source->key == "sandbox.network.local");
    CHECK(p->network.allow_local_binding.source->layer == LayerKind::flag);
    CHECK(contains(p->network.allowed_domains, "pypi.org"));
    CHECK(contains(p->network.allowed_domains, "files.pythonhosted.org"));
    CHECK(contains(p->network.allowed_domains, "example.com"));
    CHECK(contains(p->network.allowed_domains, "user.example"));
    CHECK(entry(p->network.allowed_domains, "pypi.org")->source.key == "sandbox.network.hosts[0]");
    CHECK(contains(p->filesystem.allow_write, std::string(kDir)));
    CHECK(contains(p->filesystem.deny_read, "/home/u/.ssh"));
    CHECK(p->warnings.empty());
}

TEST_CASE("agent file: it cannot turn on the weaker sandbox, though its layer is a flag layer") {
    // The schema has no key for it: the settings' spelling is an unknown key.
    auto e = parse_err(agent("sandbox:\n  enableWeakerNestedSandbox: true\n"));
    CHECK(e.key == "sandbox.enableWeakerNestedSandbox");
    CHECK(e.message.find("unknown key") != std::string::npos);
    // The layer is marked as an agent file's, so merge() would leave a `true` out
    // while a user's `true` below it still counts.
    auto a = parse_ok(agent("sandbox:\n  preset: strict\n"));
    CHECK(a.settings.from == sbx::LayerFile::agent);
    CHECK_FALSE(a.settings.weaker_sandbox);
    CHECK_FALSE(sbx::may_turn_on_weaker_sandbox(a.settings));
    sbx::SettingsSource user{LayerKind::user, "/home/u/.claude/settings.json", {"/home/u", "/home/u"}, "/r"};
    auto u = sbx::parse_settings(R"J({"sandbox": {"enableWeakerNestedSandbox": true}})J", user);
    REQUIRE(u);
    sbx::Settings forged = a.settings;
    forged.weaker_sandbox = sbx::Sourced<bool>{true, sbx::Source{LayerKind::flag, sbx::FileName(std::string(kFile)), "x"}};
    sbx::MemoryFs fs;
    auto p = sbx::merge(std::vector<sbx::Settings>{std::move(*u), std::move(forged)}, {}, fs);
    REQUIRE(p.has_value());
    CHECK(p->weaker_sandbox.value);
    CHECK(p->weaker_sandbox.source->layer == LayerKind::user);
    CHECK(std::any_of(p->warnings.begin(), p->warnings.end(), [](const sbx::Warning& w) {
        return w.file == kFile && w.message.find("can turn on the weaker sandbox; left out") != std::string::npos;
    }));
}

// Over 80 lines: one agent file's reads asked path by path, each a line; split,
// each part would merge and build the same rules again.
TEST_CASE("agent file: scoped reads, decided through merge() and fs_rules") {
    auto rules_of = [](const sbx::AgentFile& a) {
        std::vector<sbx::Settings> layers{a.settings};
        sbx::MemoryFs fs;
        auto p = sbx::merge(std::move(layers), {}, fs);
        REQUIRE(p.has_value());
        // The root the caller sandboxes is elsewhere, so only the agent file opens the agent's folder.
        auto r = sbx::compile_fs_rules(*p, {"/r", "/tmp/sbx-1", "/home/u"}, {}, fs);
        REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : sbx::to_string(r.error())));
        return std::move(*r);
    };
    auto can = [](const sbx::FsRules& r, std::string_view path, sbx::Access acc) {
        return sbx::decide(r, path, acc).allowed;
    };
    using sbx::Access;

    SUBCASE("strict: the write folders, the agent's folder and the system") {
        auto a = parse_ok(agent("sandbox:\n  preset: strict\n  files:\n    write: [out, /srv/build]\n"));
        CHECK(a.reads_scoped);
        const auto& fs = a.settings.filesystem;
        for (const char* d : {"/home", "/root", "/mnt", "/media", "/srv"}) CHECK(contains(fs.deny_read, d));
        CHECK_FALSE(contains(fs.deny_read, "/home/u"));  // under /home already
        CHECK_FALSE(contains(fs.deny_read, "/Users"));   // macOS's
        CHECK(entry(fs.deny_read, "/home")->source.key == "sandbox.preset");
        CHECK(values(fs.allow_read) == std::vector<std::string>{std::string(kDir)});
        auto r = rules_of(a);
        CHECK(can(r, "/home/u/agents/researcher/notes.md", Access::read));
        CHECK_FALSE(can(r, "/home/u/agents/researcher/notes.md", Access::write));  // strict: not in files.write
        CHECK(can(r, "/home/u/agents/researcher/out/x", Access::write));
        CHECK(can(r, "/srv/build/x", Access::read));
        CHECK(can(r, "/srv/build/x", Access::write));
        CHECK_FALSE(can(r, "/srv/other/x", Access::read));
        CHECK_FALSE(can(r, "/home/u/projects/x", Access::read));
        CHECK_FALSE(can(r, "/home/v/notes", Access::read));
        CHECK_FALSE(can(r, "/root/.bashrc", Access::read));
        CHECK_FALSE(can(r, "/mnt/c/Users/x", Access::read));
        CHECK(can(r, "/usr/lib/libc.so.6", Access::read));
        CHECK(can(r, "/etc/hosts", Access::read));
        CHECK(can(r, "/opt/tool/bin/x", Access::read));
        // The built-in denies hold inside what is re-opened.
        CHECK_FALSE(can(r, "/home/u/agents/researcher/.env", Access::read));
        CHECK_FALSE(can(r, "/home/u/agents/researcher/out/.env.local", Access::read));
    }

    SUBCASE("a read list under development") {
        auto a = parse_ok(agent("sandbox:\n  files:\n    read: [~/data, /home/shared]\n"));
        CHECK(a.reads_scoped);
        REQUIRE(a.files.read);
        CHECK(values(*a.files.read) == std::vector<std::string>{"/home/u/data", "/home/shared"});
        const auto& fs = a.settings.filesystem;
        CHECK(entry(fs.deny_read, "/home")->source.key == "sandbox.files.read");
        CHECK(entry(fs.allow_read, "/home/u/data")->source.key == "sandbox.files.read[0]");
        auto r = rules_of(a);
        CHECK(can(r, "/home/u/data/x.csv", Access::read));
        CHECK_FALSE(can(r, "/home/u/data/x.csv", Access::write));
        CHECK(can(r, "/home/shared/doc", Access::read));
        CHECK(can(r, "/home/u/agents/researcher/x", Access::write));  // development: the agent's folder
        CHECK_FALSE(can(r, "/home/u/.bashrc", Access::read));
    }

    SUBCASE("a listed folder above a scoped root keeps it open") {
        auto a = parse_ok(agent("sandbox:\n  files:\n    read: [/home]\n"));
        CHECK_FALSE(contains(a.settings.filesystem.deny_read, "/home"));
        CHECK(contains(a.settings.filesystem.deny_read, "/root"));
        auto r = rules_of(a);
        CHECK(can(r, "/home/v/notes", Access::read));
        CHECK_FALSE(can(r, "/home/u/.ssh/id_ed25519", Access::read));  // built-in denies stay
        CHECK_FALSE(can(r, "/root/x", Access::read));
        auto everything = parse_ok(agent("sandbox:\n  files:\n    read: [/]\n"));
        CHECK_FALSE(contains(everything.settings.filesystem.deny_read, "/home"));
        CHECK_FALSE(contains(everything.settings.filesystem.deny_read, "/root"));
    }

    SUBCASE("a home outside the scoped roots is denied by name") {
        auto a = sbx::parse_agent_file(agent("sandbox:\n  preset: strict\n"),
                                       {"/var/home/u/a/AGENT.md", "/var/home/u", LayerKind::flag, Platform::linux_});
        REQUIRE(a);
        CHECK(contains(a->settings.filesystem.deny_read, "/var/home/u"));
        CHECK(contains(a->settings.filesystem.allow_read, "/var/home/u/a"));
    }

    SUBCASE("macOS scopes its own places") {
        auto a = sbx::parse_agent_file(agent("sandbox:\n  preset: strict\n"),
                                       {"/Users/u/a/AGENT.md", "/Users/u", LayerKind::flag, Platform::mac});
        REQUIRE(a);
        const auto& fs = a->settings.filesystem;
        CHECK(contains(fs.deny_read, "/Users"));
        CHECK(contains(fs.deny_read, "/Volumes"));
        CHECK_FALSE(contains(fs.deny_read, "/home"));
        CHECK_FALSE(contains(fs.deny_read, "/Users/u"));
        CHECK(contains(fs.deny_read, "/Users/u/Library/Keychains"));
    }

    SUBCASE("strict with read: all reads everywhere, and says so") {
        auto a = parse_ok(agent("sandbox:\n  preset: strict\n  files:\n    read: all\n"));
        CHECK_FALSE(a.reads_scoped);
        CHECK_FALSE(contains(a.settings.filesystem.deny_read, "/home"));
        CHECK(warned(a, "sandbox.files.read", "although the preset is strict"));
        auto r = rules_of(a);
        CHECK(can(r, "/home/v/notes", Access::read));
    }

    SUBCASE("development reads everywhere but the denies") {
        auto r = rules_of(parse_ok(kDefaultBlock));
        CHECK(can(r, "/home/v/notes", Access::read));
        CHECK(can(r, "/home/u/projects/x", Access::read));
        CHECK_FALSE(can(r, "/home/u/.aws/credentials", Access::read));
        CHECK_FALSE(can(r, "/home/u/.webagents-work/sessions", Access::read));
        CHECK(can(r, "/home/u/agents/researcher/src/x.py", Access::write));
        CHECK_FALSE(can(r, "/home/u/agents/researcher/AGENT.md", Access::write));
        CHECK_FALSE(can(r, "/home/u/agents/researcher/AGENT-writer.md", Access::write));
        CHECK_FALSE(can(r, "/home/u/agents/researcher/.agents/skills/s/SKILL.md", Access::write));
        CHECK_FALSE(can(r, "/home/u/agents/researcher/.env", Access::read));
    }
}

TEST_CASE("agent file: an agent file with another name protects itself") {
    auto a = sbx::parse_agent_file(kDefaultBlock, {"/w/AGENT-writer.md", "/home/u", LayerKind::flag, Platform::linux_});
    REQUIRE(a);
    CHECK(contains(a->settings.filesystem.deny_write, "/w/AGENT-writer.md"));
    auto b = sbx::parse_agent_file(kDefaultBlock, {"/w/notes/bot.md", "/home/u", LayerKind::flag, Platform::linux_});
    REQUIRE(b);
    CHECK(contains(b->settings.filesystem.deny_write, "/w/notes/bot.md"));
    CHECK(b->agent_dir == "/w/notes");
}

TEST_CASE("agent file: truncations and mutations never crash") {
    const std::string seeds[] = {
        std::string(kDefaultBlock),
        agent("allowed_folders:\n- out\nnetwork: [github, \"*.x.example\"]\nenv_passthrough: [A]\n"),
        agent("sandbox:\n  preset: strict\n  files:\n    read: ['~/d', \"/e\"]\n    deny:\n    - x\n"
              "  network:\n    hosts:\n      - 127.0.0.1:8080\n    sockets: [/run/s.sock]\n  allowed_commands: [ls]\n"),
    };
    static constexpr char kBytesText[] = "-:#[]{},'\"\\*&!|> \t\n\r\0~.a1";
    constexpr std::string_view kBytes(kBytesText, sizeof kBytesText - 1);
    std::mt19937 rng(20240611);  // fixed: a failure reproduces
    std::size_t ok = 0, refused = 0;
    auto feed = [&](const std::string& text) {
        for (Platform p : {Platform::linux_, Platform::mac}) {
            auto a = sbx::parse_agent_file(text, source_on(p));
            if (a) {
                ++ok;
                for (const auto& e : a->settings.filesystem.allow_write) CHECK(sbx::paths::is_absolute(e.value));
                for (const auto& e : a->settings.filesystem.deny_read) CHECK(sbx::paths::is_absolute(e.value));
            } else {
                ++refused;
                CHECK_FALSE(a.error().message.empty());
                CHECK(a.error().file == kFile);
                CHECK(a.error().line >= 1);
            }
        }
    };
    for (const auto& seed : seeds) {
        for (std::size_t n = 0; n <= seed.size(); ++n) feed(seed.substr(0, n));
        for (int round = 0; round < 3000; ++round) {
            std::string t = seed;
            const int edits = 1 + static_cast<int>(rng() % 3);
            for (int k = 0; k < edits && !t.empty(); ++k) {
                const std::size_t at = rng() % t.size();
                const char c = kBytes[rng() % kBytes.size()];
                switch (rng() % 3) {
                    case 0: t[at] = c; break;
                    case 1: t.insert(t.begin() + static_cast<std::ptrdiff_t>(at), c); break;
                    default: t.erase(at, 1); break;
                }
            }
            feed(t);
        }
    }
    CHECK(ok > 0);
    CHECK(refused > 0);
}

TEST_CASE("agent file: the .env walk of the home directory finds four folder levels down, past no tool cache") {
    sbx::MemoryFs fs;
    fs.file("/home/u/.env", "A=1")
        .file("/home/u/shop/.env.production", "B=2")
        .file("/home/u/shop/.envrc", "not one")
        .file("/home/u/shop/env", "not one either")
        .file("/home/u/a/b/c/d/.env.local", "deep, but in the walk")
        .file("/home/u/a/b/c/d/e/.env", "past four levels")
        .file("/home/u/shop/node_modules/pkg/.env", "a cache")
        .file("/home/u/.cache/x/.env", "a cache")
        .dir("/elsewhere")
        .file("/elsewhere/.env", "outside the home directory")
        .symlink("/home/u/link", "/elsewhere");
    const auto found = sbx::find_home_env_files("/home/u", fs);
    CHECK(found.files == std::vector<std::string>{"/home/u/.env", "/home/u/a/b/c/d/.env.local", "/home/u/shop/.env.production"});
    CHECK(found.warnings.empty());
    CHECK(sbx::find_home_env_files("/nowhere", fs).files.empty());
    CHECK(sbx::find_home_env_files("/nowhere", fs).warnings.empty());

    // Denied for reading by the agent file's layer, named as built-in.
    auto agent = sbx::parse_agent_file("---\nname: t\n---\n", {"/home/u/shop/AGENT.md", "/home/u"});
    REQUIRE(agent.has_value());
    sbx::deny_home_env_files(*agent, found);
    const auto& deny = agent->settings.filesystem.deny_read;
    for (const auto& f : found.files) {
        CAPTURE(f);
        auto it = std::find_if(deny.begin(), deny.end(), [&](const auto& d) { return d.value == f; });
        REQUIRE(it != deny.end());
        CHECK(it->source.key.find("built-in") != std::string::npos);
    }
    auto off = sbx::parse_agent_file("---\nname: t\nsandbox: off\n---\n", {"/home/u/shop/AGENT.md", "/home/u"});
    REQUIRE(off.has_value());
    sbx::deny_home_env_files(*off, found);
    CHECK(off->settings.filesystem.deny_read.empty());
}

TEST_CASE("agent file: the shell skill's blocked_commands reach the layer with their keys; other skills say nothing") {
    const auto a = parse_ok(agent("skills:\n- browser\n- shell: {blocked_commands: [nc, docker-compose], "
                                  "allowed_commands: [make]}\n- search: {engine: ddg, depth: [1, 2]}\n"));
    CHECK_FALSE(a.declared);  // no sandbox block: the defaults, and the skills' settings
    CHECK(values(a.blocked_commands) == std::vector<std::string>{"nc", "docker-compose"});
    CHECK(a.blocked_commands[1].source.key == "skills[1].shell.blocked_commands[1]");
    CHECK(values(a.settings.blocked_commands) == values(a.blocked_commands));
    CHECK(values(a.shell_allowed_commands) == std::vector<std::string>{"make"});
    CHECK(warned(a, "skills[1].shell.allowed_commands", "which sbx never runs"));
    // A skill's name alone, and a skills list with no shell settings, block nothing.
    CHECK(parse_ok(agent("skills: [shell, browser]\n")).blocked_commands.empty());
    // Blocked names hold under every preset, off included (sbx refuses off anyway).
    const auto off = parse_ok(agent("sandbox: off\nskills:\n  - shell: {blocked_commands: [nc]}\n"));
    CHECK(values(off.settings.blocked_commands) == std::vector<std::string>{"nc"});
    // A { mapping is YAML's other spelling of indented keys, in the sandbox block too.
    const auto flow = parse_ok(agent("sandbox:\n  network: {hosts: [github], local: true}\n"));
    REQUIRE(flow.network.local);
    CHECK(flow.network.local->value);
    CHECK(flow.network.local->source.key == "sandbox.network.local");
}

TEST_CASE("agent file: a skill script runs under the agent's block, or strict when there is none or it is off") {
    auto as_skill = [](std::string_view text) {
        sbx::AgentFileSource src = source_on(Platform::linux_);
        src.skill_script = true;
        auto a = sbx::parse_agent_file(text, src);
        REQUIRE_MESSAGE(a.has_value(), (a ? std::string() : sbx::to_string(a.error())));
        return std::move(*a);
    };
    const auto none = as_skill(agent(""));
    CHECK(none.preset == sbx::Preset::strict);
    CHECK(none.strict_for_skill_script);
    CHECK(none.reads_scoped);
    REQUIRE(none.settings.filesystem.root_read_only);
    CHECK(none.settings.filesystem.root_read_only->source.key == "sandbox.preset (strict for a skill script)");
    const auto off = as_skill(agent("sandbox: off\n"));
    CHECK(off.preset == sbx::Preset::strict);
    REQUIRE(off.settings.enabled);
    CHECK(off.settings.enabled->value);
    CHECK(sbx::require_confined(off).has_value());
    // A block of its own is kept as it is, for a script too.
    const auto dev = as_skill(agent("sandbox:\n  preset: development\n"));
    CHECK(dev.preset == sbx::Preset::development);
    CHECK_FALSE(dev.strict_for_skill_script);
    // The control: the same files for a command that is no skill script.
    CHECK(parse_ok(agent("")).preset == sbx::Preset::development);
    CHECK(parse_ok(agent("sandbox: off\n")).preset == sbx::Preset::off);
}
