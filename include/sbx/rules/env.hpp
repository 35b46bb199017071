// sbx/rules/env.hpp - which environment variables reach the sandboxed command.
//
// command_environment() splits the caller's environment three ways, as a pure
// function of the variables it is handed, the policy and the names the user
// passes on purpose:
//   - secrets stay out: a name with a part of kSecretNameParts (KEY, TOKEN, ...;
//     in any case) but the names of kNotSecretNames, a value that holds a secret
//     in a form secret_in_value() knows (credentials in a URL, a password=
//     parameter, an Authorization header), and the names of the policy's
//     credentials.envVars, unless the user passes it (`--env NAME`);
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

#include "sbx/core/ascii.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/json_write.hpp"
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

// Parts of a name that mark a secret. Broad on purpose: a name that holds one
// but is documented to hold no secret is in kNotSecretNames; `--env` passes
// any other.
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

// Names that hold a part of kSecretNameParts and that their tools document as no
// secret. Their values are still looked at (secret_in_value).
struct NotSecretName {
    std::string_view name;
    std::string_view reason;
};
inline constexpr std::array kNotSecretNames{
    NotSecretName{"GIT_AUTHOR_NAME", "git: the author of commits"},
    NotSecretName{"GIT_AUTHOR_EMAIL", "git: the author's address"},
    NotSecretName{"GIT_AUTHOR_DATE", "git: the author date of commits"},
    NotSecretName{"XDG_SESSION_TYPE", "the desktop session's kind (x11, wayland, tty)"},
    NotSecretName{"XDG_SESSION_CLASS", "the desktop session's class (user, greeter)"},
    NotSecretName{"XDG_SESSION_DESKTOP", "the desktop's name"},
    NotSecretName{"XDG_SESSION_ID", "logind's number of the session"},
    NotSecretName{"DESKTOP_SESSION", "the desktop's name"},
    NotSecretName{"DBUS_SESSION_BUS_ADDRESS", "the address of the user's D-Bus socket, no credential"},
};

SBX_INLINE bool not_secret_name(std::string_view name) noexcept;

// LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT and the rest make the dynamic loader load
// code; GCONV_PATH makes iconv load modules. Given to bubblewrap, they would run
// that code outside the sandbox.
SBX_INLINE bool is_loader_variable(std::string_view name) noexcept;

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

namespace detail {

// Whether `value` holds `what`, in any ASCII case.
constexpr bool icontains(std::string_view value, std::string_view what) noexcept {
    for (std::size_t at = 0; at + what.size() <= value.size(); ++at)
        if (ascii_iequals(value.substr(at, what.size()), what)) return true;
    return false;
}

// A user name alone in an http(s) URL (https://TOKEN@github.com/...): GitHub,
// GitLab and others take a token there.
constexpr bool http_url_with_user(std::string_view value) noexcept {
    for (std::size_t sep = value.find("://"); sep != std::string_view::npos; sep = value.find("://", sep + 3)) {
        std::size_t s = sep;
        while (s > 0 && alnum(value[s - 1])) --s;
        const std::string_view scheme = value.substr(s, sep - s);
        if (!ascii_iequals(scheme, "HTTP") && !ascii_iequals(scheme, "HTTPS")) continue;
        std::size_t end = sep + 3;
        while (end < value.size() && value[end] != '/' && value[end] != '?' && value[end] != '#' && value[end] != ' ' &&
               value[end] != ',' && value[end] != ';')
            ++end;
        const std::string_view authority = value.substr(sep + 3, end - sep - 3);
        if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos && at > 0) return true;
    }
    return false;
}

// Keys of KEY=VALUE pairs in connection strings and query strings that hold a
// secret: `?password=`, `&password=` (JDBC), `;Password=` (ADO.NET, ODBC).
inline constexpr std::array<std::string_view, 11> kSecretParameters{
    "PASSWORD", "PASSWD", "PWD", "TOKEN", "ACCESS_TOKEN", "AUTH_TOKEN", "SECRET", "CLIENT_SECRET", "API_KEY", "APIKEY",
    "SAS"};

// The secret parameter in `value`, as KEY=VALUE after its start or a '?', '&' or
// ';' (spaces between allowed), with a value that is not empty.
constexpr std::string_view secret_parameter(std::string_view value) noexcept {
    for (std::size_t eq = value.find('='); eq != std::string_view::npos; eq = value.find('=', eq + 1)) {
        std::size_t k = eq;
        while (k > 0 && (alnum(value[k - 1]) || value[k - 1] == '_')) --k;
        std::size_t before = k;
        while (before > 0 && value[before - 1] == ' ') --before;
        if (before > 0 && value[before - 1] != '?' && value[before - 1] != '&' && value[before - 1] != ';') continue;
        if (eq + 1 >= value.size() || value[eq + 1] == '&' || value[eq + 1] == ';' || value[eq + 1] == ' ') continue;
        for (const auto p : kSecretParameters)
            if (ascii_iequals(value.substr(k, eq - k), p)) return p;
    }
    return {};
}

}  // namespace detail

// What secret `value` holds, in words, or nullopt: credentials in a URL
// (scheme://user:password@, or a user name alone in an http(s) URL), a secret
// parameter of a connection or query string (password=, token=, ...), or an
// HTTP Authorization header (git's http.extraHeader in GIT_CONFIG_PARAMETERS or
// a GIT_CONFIG_VALUE_N).
SBX_INLINE std::optional<std::string> secret_in_value(std::string_view value);

// A name a launcher can set: not empty, no '=' and no NUL.
SBX_INLINE bool valid_env_name(std::string_view name) noexcept;

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
SBX_INLINE expected<CommandEnvironment> command_environment(const Policy& policy, const EnvRequest& req);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_RULES)

namespace sbx {

SBX_INLINE bool not_secret_name(std::string_view name) noexcept {
    return std::any_of(kNotSecretNames.begin(), kNotSecretNames.end(),
                       [&](const NotSecretName& n) { return n.name == name; });
}

namespace detail {

// Whether the policy opens the Unix socket at `path` (allowAllUnixSockets, or
// an allowUnixSockets entry at or above it), as its path is written.
SBX_INLINE bool socket_opened(const Policy& policy, std::string_view path) {
    if (!paths::is_absolute(path)) return false;
    if (policy.network.allow_all_unix_sockets.value) return true;
    const std::string at = paths::normalize(path);
    return std::any_of(policy.network.allow_unix_sockets.begin(), policy.network.allow_unix_sockets.end(),
                       [&](const auto& e) { return paths::at_or_under(at, e.value); });
}

}  // namespace detail

SBX_INLINE bool is_loader_variable(std::string_view name) noexcept {
    return name.starts_with("LD_") || name == "GCONV_PATH";
}

SBX_INLINE std::optional<std::string> secret_in_value(std::string_view value) {
    if (url_with_credentials(value)) return "credentials in a URL (scheme://user:password@)";
    if (detail::http_url_with_user(value)) return "a user name in an http(s) URL (https://TOKEN@host), where a token goes";
    if (const auto p = detail::secret_parameter(value); !p.empty())
        return "a " + std::string(p) + "= parameter of a connection or query string";
    if (detail::icontains(value, "AUTHORIZATION:")) return "an HTTP Authorization header";
    return std::nullopt;
}

SBX_INLINE bool valid_env_name(std::string_view name) noexcept {
    return !name.empty() && name.find('=') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

SBX_INLINE expected<CommandEnvironment> command_environment(const Policy& policy, const EnvRequest& req) {
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
            // The ssh-agent's socket, where the settings open it: a path is no
            // secret, and ssh and git find the agent by it.
            if (name == "SSH_AUTH_SOCK" && detail::socket_opened(policy, value)) {
                out.env.push_back({std::string(name), std::string(value)});
                continue;
            }
            const std::string pass_it = ", so it may hold a secret; pass it with --env " + std::string(name) +
                                        (req.pass_also.empty() ? "" : ", or " + std::string(req.pass_also));
            if (const auto* p = secret_name_part(name); p != nullptr && !not_secret_name(name)) {
                const std::string where = p->match == NameMatch::anywhere ? "contains "
                                          : p->match == NameMatch::suffix ? "ends with "
                                                                          : "has the word ";
                out.removed.push_back({std::string(name), "the name " + where + std::string(p->part) + pass_it});
                continue;
            }
            if (auto what = secret_in_value(value)) {
                out.removed.push_back({std::string(name), "the value holds " + *what + pass_it});
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
#endif
