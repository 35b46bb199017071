// What a command run as an agent file gets: agent_env.hpp's env list, require_confined(), insert_agent_layer().
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sbx/settings/agent_env.hpp"
#include "sbx/settings/agent_file.hpp"

namespace {

constexpr std::string_view kFile = "/home/u/agents/researcher/AGENT.md";

sbx::AgentFile parse_ok(std::string_view front_matter) {
    const std::string text = "---\nname: researcher\n" + std::string(front_matter) + "---\n";
    auto a = sbx::parse_agent_file(text, sbx::AgentFileSource{std::string(kFile), "/home/u", sbx::LayerKind::flag});
    REQUIRE_MESSAGE(a.has_value(), (a ? std::string() : sbx::to_string(a.error())));
    return std::move(*a);
}

using Dotenv = std::optional<std::vector<sbx::DotenvEntry>>;

}  // namespace

TEST_CASE("agent env: ./.env first, then the agent folder's, each once") {
    const auto a = parse_ok("sandbox:\n  env: [A]\n");
    CHECK(sbx::agent_dotenv_files(a, "/work/p") ==
          std::vector<std::string>{"/work/p/.env", "/home/u/agents/researcher/.env"});
    CHECK(sbx::agent_dotenv_files(a, "/home/u/agents/researcher") ==
          std::vector<std::string>{"/home/u/agents/researcher/.env"});
    // A current directory that is gone: the agent folder's alone.
    CHECK(sbx::agent_dotenv_files(a, "") == std::vector<std::string>{"/home/u/agents/researcher/.env"});
}

TEST_CASE("agent env: the .env files are wanted only for a name the environment lacks") {
    const auto a = parse_ok("sandbox:\n  env: [A, B]\n");
    const std::vector<std::string> both{"A=1", "B="};
    CHECK_FALSE(sbx::agent_env_needs_dotenv(a, both));
    const std::vector<std::string> one{"A=1", "BB=2", "B"};  // neither BB nor a bare B sets B
    CHECK(sbx::agent_env_needs_dotenv(a, one));
    CHECK_FALSE(sbx::agent_env_needs_dotenv(parse_ok("sandbox:\n  preset: strict\n"), one));
}

TEST_CASE("agent env: from the environment, else the first .env that has it, else a warning") {
    const auto a = parse_ok("sandbox:\n  env: [A, B, C, D, B]\n");
    const std::vector<std::string> exported{"A=from shell", "PATH=/bin"};
    const std::vector<std::string> files{"/work/p/.env", "/home/u/agents/researcher/.env"};
    const std::vector<Dotenv> dotenvs{
        std::vector<sbx::DotenvEntry>{{"B", "here", 1}, {"X", "unasked", 2}},
        std::vector<sbx::DotenvEntry>{{"B", "beside", 1}, {"C", "beside", 2}},
    };
    const auto got = sbx::agent_env(a, exported, files, dotenvs);
    // The list's order; B, taken once from ./.env, is passed again where the list repeats it.
    CHECK(got.pass == std::vector<std::string>{"A", "B", "C", "B"});
    CHECK(got.assignments == std::vector<std::string>{"B=here", "C=beside"});
    REQUIRE(got.warnings.size() == 1);
    CHECK(got.warnings[0].file == kFile);
    CHECK(got.warnings[0].key == "sandbox.env[3]");
    CHECK(got.warnings[0].message ==
          "D is not set, nor in /work/p/.env or /home/u/agents/researcher/.env, so the command does not get it");

    // A .env that is missing (or was not read) is passed over.
    const std::vector<Dotenv> none{std::nullopt, std::nullopt};
    const auto bare = sbx::agent_env(a, exported, files, none);
    CHECK(bare.pass == std::vector<std::string>{"A"});
    CHECK(bare.assignments.empty());
    CHECK(bare.warnings.size() == 4);
}

TEST_CASE("agent env: an agent file that turns the sandbox off is refused, naming where") {
    CHECK(sbx::require_confined(parse_ok("sandbox:\n  preset: strict\n")).has_value());
    CHECK(sbx::require_confined(parse_ok("")).has_value());
    // Not a structured binding: Clang 14 cannot capture one in CAPTURE's lambda.
    for (const auto& each : {std::pair{"sandbox: off\n", "sandbox"},
                             std::pair{"sandbox:\n  preset: unrestricted\n", "sandbox.preset"}}) {
        const char* block = each.first;
        const char* key = each.second;
        CAPTURE(block);
        auto r = sbx::require_confined(parse_ok(block));
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == sbx::Errc::invalid_argument);
        CHECK(r.error().file == kFile);
        CHECK(r.error().key == key);
        CHECK(r.error().message.find("sbx runs commands only confined") != std::string::npos);
    }
}

TEST_CASE("agent file: its layer is the lowest of the flag layers") {
    const auto a = parse_ok("sandbox:\n  preset: strict\n");
    auto layer = [](sbx::LayerKind k, std::string file) {
        sbx::Settings s;
        s.layer = k;
        s.file = std::move(file);
        return s;
    };
    std::vector<sbx::Settings> layers{layer(sbx::LayerKind::managed, "/etc/m.json"),
                                      layer(sbx::LayerKind::project, "/p/.claude/settings.json"),
                                      layer(sbx::LayerKind::flag, "/a.json"), layer(sbx::LayerKind::flag, "/b.json")};
    sbx::insert_agent_layer(layers, a);
    std::vector<std::string> files;
    for (const auto& l : layers) files.push_back(l.file);
    CHECK(files == std::vector<std::string>{"/etc/m.json", "/p/.claude/settings.json", std::string(kFile), "/a.json",
                                            "/b.json"});
    // No --settings file: at the end.
    std::vector<sbx::Settings> plain{layer(sbx::LayerKind::user, "/home/u/.claude/settings.json")};
    sbx::insert_agent_layer(plain, a);
    REQUIRE(plain.size() == 2);
    CHECK(plain[1].file == kFile);
    CHECK(plain[1].layer == sbx::LayerKind::flag);
}
