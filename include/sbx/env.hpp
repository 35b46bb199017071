// sbx/env.hpp - which environment variables reach the sandboxed command.
//
// command_environment() splits the caller's environment three ways, as a pure
// function of the variables it is handed, the policy and the names the user
// passes on purpose:
//   - secrets stay out: a name that contains KEY, SECRET, TOKEN, PASSWORD, PASSWD,
//     CREDENTIAL, PRIVATE, AUTH, SESSION or COOKIE (in any case), and the names of
//     the policy's credentials.envVars, unless the user passes it (`--env NAME`);
//   - loader variables (LD_*, GCONV_PATH) go apart: they would load code into
//     bubblewrap itself, outside the sandbox, so only the in-sandbox stage sets
//     them, just before it starts the command;
//   - everything else reaches the command, with TMPDIR pointing at the command's
//     own temporary directory.
// Every variable left out is recorded with the reason, so `sbx plan` explains it.
#pragma once

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/json.hpp"
#include "sbx/policy.hpp"

namespace sbx {

struct EnvVar {
    std::string name, value;
    friend bool operator==(const EnvVar&, const EnvVar&) = default;
};

struct RemovedEnvVar {
    std::string name;
    std::string why;
};

struct CommandEnvironment {
    std::vector<EnvVar> env;     // for the command (and bubblewrap, which passes it on)
    std::vector<EnvVar> loader;  // for the command only, set inside the sandbox
    std::vector<RemovedEnvVar> removed;
    std::vector<Warning> warnings;
};

// Parts of a name that mark a secret, compared without regard to case. Broad on
// purpose: GIT_AUTHOR_NAME and XDG_SESSION_TYPE are caught too; `--env` passes them.
inline constexpr std::array<std::string_view, 10> kSecretNameParts{
    "KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE", "AUTH", "SESSION", "COOKIE",
};

// LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT and the rest make the dynamic loader load
// code; GCONV_PATH makes iconv load modules. Given to bubblewrap, they would run
// that code outside the sandbox.
inline bool is_loader_variable(std::string_view name) noexcept {
    return name.starts_with("LD_") || name == "GCONV_PATH";
}

// The part of kSecretNameParts a name contains, or empty.
inline std::string_view secret_name_part(std::string_view name) noexcept {
    auto upper = [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; };
    for (auto part : kSecretNameParts) {
        auto it = std::search(name.begin(), name.end(), part.begin(), part.end(),
                              [&](char a, char b) { return upper(a) == b; });
        if (it != name.end()) return part;
    }
    return {};
}

// A name a launcher can set: not empty, no '=' and no NUL.
inline bool valid_env_name(std::string_view name) noexcept {
    return !name.empty() && name.find('=') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

struct EnvRequest {
    std::span<const std::string> environ;  // "NAME=VALUE", as in environ(7); the first of a name counts
    std::span<const std::string> pass;      // names the user passes on purpose (`sbx run --env NAME`)
    std::string tmpdir;                     // the command's TMPDIR
};

// Fails (INVALID_ARGUMENT) when a passed name is malformed or not in the environment.
inline expected<CommandEnvironment> command_environment(const Policy& policy, const EnvRequest& req) {
    CommandEnvironment out;
    std::vector<std::string_view> seen;
    auto passed = [&](std::string_view name) {
        return std::find(req.pass.begin(), req.pass.end(), name) != req.pass.end();
    };
    auto listed = [&](std::string_view name) -> const Sourced<std::string>* {
        for (const auto& e : policy.credentials.env_vars)
            if (e.value == name) return &e;
        return nullptr;
    };
    for (const auto& name : req.pass) {
        if (!valid_env_name(name)) return fail(Errc::invalid_argument, "--env '" + name + "' is not a variable name");
        bool present = std::any_of(req.environ.begin(), req.environ.end(), [&](const std::string& kv) {
            return kv.size() > name.size() && kv.compare(0, name.size(), name) == 0 && kv[name.size()] == '=';
        });
        if (!present) return fail(Errc::invalid_argument, "--env " + name + ": the variable is not set");
    }
    for (const auto& kv : req.environ) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) continue;  // not a variable; execve would pass it, nothing reads it
        std::string_view name(kv.data(), eq);
        std::string_view value(kv.data() + eq + 1, kv.size() - eq - 1);
        if (!valid_env_name(name) || std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
        seen.push_back(name);
        if (name == "TMPDIR") continue;  // set below
        if (value.find('\0') != std::string_view::npos) {
            // Only a caller of this function, not a real environment, can hand one over.
            out.removed.push_back({std::string(name), "its value holds a NUL character"});
            continue;
        }
        if (!json::detail::valid_utf8(name) || !json::detail::valid_utf8(value)) {
            // A plan is UTF-8 JSON: such a variable cannot be carried unchanged.
            out.removed.push_back({std::string(name), "its name or value is not valid UTF-8"});
            continue;
        }
        if (!passed(name)) {
            if (const auto* e = listed(name)) {
                out.removed.push_back({std::string(name), "listed in credentials.envVars [" + e->source.file.str() +
                                                              " " + e->source.key + "]"});
                continue;
            }
            if (auto part = secret_name_part(name); !part.empty()) {
                out.removed.push_back({std::string(name), "the name contains " + std::string(part) +
                                                              ", so it may hold a secret; pass it with --env " +
                                                              std::string(name)});
                continue;
            }
        }
        (is_loader_variable(name) ? out.loader : out.env).push_back({std::string(name), std::string(value)});
    }
    out.env.push_back({"TMPDIR", req.tmpdir});
    return out;
}

}  // namespace sbx
