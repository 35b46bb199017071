// sbx/settings/agent_env.hpp - which variables an agent file's env list passes to a command, and from where.
//
// An agent file's `env:` list (AgentFile::env) names variables the command gets,
// as `--env NAME` passes one. A name the environment sbx runs in sets is passed
// from there; one it does not set comes from `./.env` where sbx starts, then from
// the agent folder's `.env` (the agent-file reference, "Environment"); nothing
// else of those files reaches the command. A name found nowhere cannot be passed,
// and a warning naming the list entry says so.
//
// The decision is here and pure: the caller reads the `.env` files (through
// dotenv.hpp's parse_dotenv), only when agent_env_needs_dotenv() says a name is
// missing, and hands their entries in.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/settings/agent_file.hpp"
#include "sbx/settings/dotenv.hpp"

namespace sbx {

// The `.env` files the env list draws on, in the order a name is looked for:
// `cwd`'s (where sbx starts; empty when not known), then the agent folder's,
// each once.
SBX_INLINE std::vector<std::string> agent_dotenv_files(const AgentFile& agent, std::string_view cwd);

// Whether `exported` (NAME=VALUE strings: the environment sbx runs in) sets `name`.
SBX_INLINE bool environ_sets(std::span<const std::string> exported, std::string_view name);

// Whether a name of the env list is not set in `exported`, so the `.env` files are to be read.
SBX_INLINE bool agent_env_needs_dotenv(const AgentFile& agent, std::span<const std::string> exported);

// What the env list passes.
struct AgentEnv {
    std::vector<std::string> pass;         // names to pass, as --env NAME passes them, in the list's order
    std::vector<std::string> assignments;  // NAME=VALUE taken from a .env file: to add to the environment
    std::vector<Warning> warnings;         // one per name found nowhere, naming its list entry
};

// The env list's variables, from the environment `exported` or else from the first of `files`
// (agent_dotenv_files()) that assigns them; `dotenvs[i]` holds the entries of
// `files[i]`, nullopt when it is missing or was not read. Promises the names in
// the list's order; a name the list repeats is passed again.
SBX_INLINE AgentEnv agent_env(const AgentFile& agent, std::span<const std::string> exported,
                          std::span<const std::string> files,
                          std::span<const std::optional<std::vector<DotenvEntry>>> dotenvs);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_SETTINGS)

namespace sbx {

SBX_INLINE std::vector<std::string> agent_dotenv_files(const AgentFile& agent, std::string_view cwd) {
    std::vector<std::string> out;
    if (!cwd.empty()) out.push_back(paths::join(cwd, ".env"));
    if (auto beside = paths::join(agent.agent_dir, ".env"); std::find(out.begin(), out.end(), beside) == out.end())
        out.push_back(std::move(beside));
    return out;
}

SBX_INLINE bool environ_sets(std::span<const std::string> exported, std::string_view name) {
    return std::any_of(exported.begin(), exported.end(), [&](const std::string& v) {
        return v.size() > name.size() && v.compare(0, name.size(), name) == 0 && v[name.size()] == '=';
    });
}

SBX_INLINE bool agent_env_needs_dotenv(const AgentFile& agent, std::span<const std::string> exported) {
    return std::any_of(agent.env.begin(), agent.env.end(),
                       [&](const Sourced<std::string>& e) { return !environ_sets(exported, e.value); });
}

SBX_INLINE AgentEnv agent_env(const AgentFile& agent, std::span<const std::string> exported,
                          std::span<const std::string> files,
                          std::span<const std::optional<std::vector<DotenvEntry>>> dotenvs) {
    AgentEnv out;
    for (const auto& e : agent.env) {
        if (environ_sets(exported, e.value) || environ_sets(out.assignments, e.value)) {
            out.pass.push_back(e.value);
            continue;
        }
        const DotenvEntry* found = nullptr;
        for (const auto& d : dotenvs) {
            if (!d || found) continue;
            for (const auto& entry : *d)
                if (entry.name == e.value) found = &entry;  // a later assignment replaces an earlier one
        }
        if (found) {
            out.assignments.push_back(found->name + "=" + found->value);
            out.pass.push_back(e.value);
            continue;
        }
        std::string where;
        for (const auto& f : files) where += (where.empty() ? "" : " or ") + f;
        out.warnings.push_back(Warning{e.source.file, e.source.key,
                                       e.value + " is not set, nor in " + where + ", so the command does not get it"});
    }
    return out;
}

}  // namespace sbx
#endif
