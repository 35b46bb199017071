// sbx/rules/env.hpp - which environment variables reach the sandboxed command.
//
// command_environment() splits the caller's environment three ways, as a pure
// function of the variables it is handed, the policy and the names the user
// passes on purpose:
//   - secrets stay out: a name with a part of kSecretNameParts (KEY, TOKEN, ...;
//     in any case), a value with credentials in a URL (scheme://user:password@),
//     and the names of the policy's credentials.envVars, unless the user passes
//     it (`--env NAME`);
//   - loader variables (LD_*, GCONV_PATH) go apart: they would load code into
//     bubblewrap itself, outside the sandbox, so only the in-sandbox stage sets
//     them, just before it starts the command;
//   - everything else reaches the command, with TMPDIR pointing at the command's
//     own temporary directory and, when the command has a tool cache home
//     (tool_cache.hpp), XDG_CACHE_HOME and each tool's own variable pointing
//     into it; one of those the caller set (XDG_CACHE_HOME aside) is kept.
// Every variable left out is recorded with the reason, so `sbx plan` explains it.
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/json.hpp"
#include "sbx/rules/tool_cache.hpp"
#include "sbx/settings/policy.hpp"

namespace sbx {

struct EnvVar {
    std::string name, value;
    friend bool operator==(const EnvVar&, const EnvVar&) = default;
};

struct RemovedEnvVar {
    std::string name;
    std::string why;
};

// A tool cache variable the caller had set, kept as it was.
struct KeptEnvVar {
    std::string name;
    std::string why;
};

struct CommandEnvironment {
    std::vector<EnvVar> env;     // for the command (and bubblewrap, which passes it on)
    std::vector<EnvVar> loader;  // for the command only, set inside the sandbox
    std::vector<RemovedEnvVar> removed;
    std::vector<std::string> cache_set;  // names of kToolCacheVars set to the tool cache, in its order
    std::vector<KeptEnvVar> cache_kept;  // names of kToolCacheVars the caller had set, kept
    std::vector<Warning> warnings;
};

// Where in a name a part marks a secret.
enum class NameMatch {
    anywhere,  // KEY in MONKEY_X too: broad on purpose
    suffix,    // at the end: MYSQL_PWD, but never PWD or OLDPWD themselves
    word,      // a whole word between non-alphanumerics or the ends: GH_PAT, not PATH
};

struct SecretNamePart {
    std::string_view part;  // upper case; compared without regard to case
    NameMatch match;
    std::string_view reason;
};

// Parts of a name that mark a secret. Broad on purpose: GIT_AUTHOR_NAME and
// XDG_SESSION_TYPE are caught too; `--env` passes them.
inline constexpr std::array kSecretNameParts{
    SecretNamePart{"KEY", NameMatch::anywhere, "API and private keys (OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY)"},
    SecretNamePart{"SECRET", NameMatch::anywhere, "client and shared secrets"},
    SecretNamePart{"TOKEN", NameMatch::anywhere, "access and refresh tokens (GITHUB_TOKEN)"},
    SecretNamePart{"PASSWORD", NameMatch::anywhere, "passwords"},
    SecretNamePart{"PASSWD", NameMatch::anywhere, "passwords"},
    SecretNamePart{"CREDENTIAL", NameMatch::anywhere, "credential files and values"},
    SecretNamePart{"PRIVATE", NameMatch::anywhere, "private keys"},
    SecretNamePart{"AUTH", NameMatch::anywhere, "authorisation headers and tokens"},
    SecretNamePart{"SESSION", NameMatch::anywhere, "session tokens (AWS_SESSION_TOKEN)"},
    SecretNamePart{"COOKIE", NameMatch::anywhere, "session cookies"},
    SecretNamePart{"JWT", NameMatch::anywhere, "JSON web tokens (CI_JOB_JWT)"},
    SecretNamePart{"DSN", NameMatch::anywhere, "data source names, which carry a password or a client key (SENTRY_DSN)"},
    SecretNamePart{"PASSPHRASE", NameMatch::anywhere, "the passphrase of a key (GPG_PASSPHRASE)"},
    SecretNamePart{"PWD", NameMatch::suffix,
                   "a password (MYSQL_PWD); PWD and OLDPWD themselves are the shell's directories"},
    SecretNamePart{"PAT", NameMatch::word, "a personal access token (GH_PAT); as a word only, so PATH passes"},
};

// LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT and the rest make the dynamic loader load
// code; GCONV_PATH makes iconv load modules. Given to bubblewrap, they would run
// that code outside the sandbox.
inline bool is_loader_variable(std::string_view name) noexcept {
    return name.starts_with("LD_") || name == "GCONV_PATH";
}

namespace detail {

constexpr char ascii_upper(char c) noexcept { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

constexpr bool alnum(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Whether `name` holds `p` where p.match says, comparing without regard to case.
constexpr bool name_has(std::string_view name, const SecretNamePart& p) noexcept {
    if (p.match == NameMatch::suffix && (name == "PWD" || name == "OLDPWD")) return false;
    for (std::size_t at = 0; at + p.part.size() <= name.size(); ++at) {
        bool same = true;
        for (std::size_t i = 0; i < p.part.size() && same; ++i) same = ascii_upper(name[at + i]) == p.part[i];
        if (!same) continue;
        const std::size_t end = at + p.part.size();
        switch (p.match) {
            case NameMatch::anywhere: return true;
            case NameMatch::suffix:
                if (end == name.size()) return true;
                break;
            case NameMatch::word:
                if ((at == 0 || !alnum(name[at - 1])) && (end == name.size() || !alnum(name[end]))) return true;
                break;
        }
    }
    return false;
}

}  // namespace detail

// The entry of kSecretNameParts a name has, or nullptr.
constexpr const SecretNamePart* secret_name_part(std::string_view name) noexcept {
    for (const auto& p : kSecretNameParts)
        if (detail::name_has(name, p)) return &p;
    return nullptr;
}

// Whether a value holds credentials in a URL: `scheme://user:password@host`, with
// a password that is not empty, anywhere in the value (a list of URLs included).
constexpr bool url_with_credentials(std::string_view value) noexcept {
    auto scheme_char = [](char c) { return detail::alnum(c) || c == '+' || c == '-' || c == '.'; };
    for (std::size_t sep = value.find("://"); sep != std::string_view::npos; sep = value.find("://", sep + 3)) {
        if (sep == 0 || !scheme_char(value[sep - 1])) continue;
        const std::size_t start = sep + 3;
        std::size_t end = start;
        while (end < value.size() && value[end] != '/' && value[end] != '?' && value[end] != '#' && value[end] != ' ' &&
               value[end] != ',' && value[end] != ';')
            ++end;
        const std::string_view authority = value.substr(start, end - start);
        const std::size_t at = authority.rfind('@');
        if (at == std::string_view::npos) continue;
        const std::size_t colon = authority.substr(0, at).find(':');
        if (colon != std::string_view::npos && colon + 1 < at) return true;
    }
    return false;
}

// A name a launcher can set: not empty, no '=' and no NUL.
inline bool valid_env_name(std::string_view name) noexcept {
    return !name.empty() && name.find('=') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

struct EnvRequest {
    std::span<const std::string> environ;  // "NAME=VALUE", as in environ(7); the first of a name counts
    std::span<const std::string> pass;      // names the user passes on purpose (`sbx run --env NAME`)
    std::string tmpdir;                     // the command's TMPDIR
    std::optional<std::string> tool_cache = std::nullopt;  // the command's tool cache home; nullopt: none
    // Another way to pass a removed variable on purpose, added to its reason
    // after "pass it with --env NAME" (an agent file's `env:` list).
    std::string_view pass_also = {};
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
            const std::string pass_it = ", so it may hold a secret; pass it with --env " + std::string(name) +
                                        (req.pass_also.empty() ? "" : ", or " + std::string(req.pass_also));
            if (const auto* p = secret_name_part(name)) {
                const std::string where = p->match == NameMatch::anywhere ? "contains "
                                          : p->match == NameMatch::suffix ? "ends with "
                                                                          : "has the word ";
                out.removed.push_back({std::string(name), "the name " + where + std::string(p->part) + pass_it});
                continue;
            }
            if (url_with_credentials(value)) {
                out.removed.push_back(
                    {std::string(name), "the value holds credentials in a URL (scheme://user:password@)" + pass_it});
                continue;
            }
        }
        (is_loader_variable(name) ? out.loader : out.env).push_back({std::string(name), std::string(value)});
    }
    out.env.push_back({"TMPDIR", req.tmpdir});
    if (req.tool_cache) {
        for (const auto& v : kToolCacheVars) {
            const std::string value = v.subdir.empty() ? *req.tool_cache : paths::join(*req.tool_cache, v.subdir);
            auto it = std::find_if(out.env.begin(), out.env.end(), [&](const EnvVar& e) { return e.name == v.name; });
            if (it != out.env.end() && v.name != "XDG_CACHE_HOME") {
                out.cache_kept.push_back({std::string(v.name), "the caller set it (" + it->value + ")"});
                continue;
            }
            if (it != out.env.end()) it->value = value;
            else out.env.push_back({std::string(v.name), value});
            out.cache_set.emplace_back(v.name);
        }
    }
    return out;
}

}  // namespace sbx
