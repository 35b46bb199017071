// sbx/settings/credential_stores.hpp - the credential stores sbx hides whatever the settings say.
//
// kCredentialStores lists the places under a home directory where programs keep
// secrets. credential_store_denies() makes them the `builtin` layer's read
// denies, under every home it is given; effective_policy() (defaults.hpp) puts
// that layer below every settings file, so an empty file keeps them too. Such a
// deny yields only to an allowRead entry that names the store or something in it
// (fs_rules.hpp), never to a broad one, a writable root or a repository's file.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/glob.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/settings/layer.hpp"

namespace sbx {

// A place under the home directory where a program keeps secrets.
struct CredentialStore {
    std::string_view path;    // relative to the home directory, normalised
    std::string_view reason;  // what it holds
};

// The credential stores every policy denies reading. A command's output goes back
// to whoever reads it (a model, a log), so these are denied for reading, not only
// for sending.
// Claude Code's own files (~/.claude.json, ~/.claude/) are not here: they are
// protected paths (protected_paths.hpp).
inline constexpr std::array kCredentialStores = {
    // Keys.
    CredentialStore{".ssh", "SSH private keys, and the hosts they log in to"},
    CredentialStore{".gnupg", "GnuPG private keys"},
    // Plain-text logins read by many programs.
    CredentialStore{".netrc", "logins for curl, ftp, git over https and the Heroku CLI"},
    CredentialStore{".git-credentials", "git's plain-text credential store"},
    CredentialStore{".config/git/credentials", "git's plain-text credential store, XDG location"},
    // Code hosts.
    CredentialStore{".config/gh", "the GitHub CLI's tokens"},
    CredentialStore{".config/hub", "the hub CLI's GitHub token"},
    CredentialStore{".config/glab-cli", "the GitLab CLI's tokens"},
    // Package registries.
    CredentialStore{".npmrc", "npm registry tokens"},
    CredentialStore{".pypirc", "PyPI upload tokens"},
    CredentialStore{".cargo/credentials.toml", "crates.io tokens"},
    CredentialStore{".cargo/credentials", "crates.io tokens, the older file name"},
    CredentialStore{".gem/credentials", "RubyGems API keys"},
    // Containers and clusters.
    CredentialStore{".docker", "container registry logins (config.json)"},
    CredentialStore{".config/containers/auth.json", "Podman and Buildah registry logins"},
    CredentialStore{".kube", "Kubernetes cluster credentials and tokens"},
    // Cloud CLIs.
    CredentialStore{".aws", "AWS access keys and SSO tokens"},
    CredentialStore{".config/gcloud", "Google Cloud credentials and access tokens"},
    CredentialStore{".azure", "Azure CLI tokens"},
    CredentialStore{".oci", "Oracle Cloud API signing keys"},
    CredentialStore{".config/doctl", "the DigitalOcean CLI's token"},
    CredentialStore{".config/stripe", "the Stripe CLI's API keys"},
    CredentialStore{".config/rclone/rclone.conf", "rclone's cloud storage logins"},
    CredentialStore{".terraform.d/credentials.tfrc.json", "Terraform Cloud tokens from `terraform login`"},
    CredentialStore{".vault-token", "the HashiCorp Vault CLI's token"},
    CredentialStore{".config/op", "the 1Password CLI's accounts and device registration"},
    // Databases.
    CredentialStore{".pgpass", "PostgreSQL passwords"},
    CredentialStore{".my.cnf", "MySQL client passwords"},
    CredentialStore{".mylogin.cnf", "MySQL login paths, passwords merely obfuscated"},
    // Other agents' logins.
    CredentialStore{".codex/auth.json", "the Codex CLI's login"},
    CredentialStore{".gemini/oauth_creds.json", "the Gemini CLI's login"},
    // Shell and REPL histories: secrets typed or pasted on a command line.
    CredentialStore{".bash_history", "bash history"},
    CredentialStore{".zsh_history", "zsh history"},
    CredentialStore{".histfile", "zsh history, a common alternative name"},
    CredentialStore{".sh_history", "ksh and sh history"},
    CredentialStore{".local/share/fish/fish_history", "fish history"},
    CredentialStore{".python_history", "Python REPL history"},
    CredentialStore{".node_repl_history", "Node REPL history"},
    CredentialStore{".irb_history", "Ruby REPL history"},
    CredentialStore{".psql_history", "psql history, passwords set with SQL included"},
    CredentialStore{".mysql_history", "mysql client history, passwords set with SQL included"},
    CredentialStore{".sqlite_history", "sqlite3 shell history"},
    CredentialStore{".rediscli_history", "redis-cli history, AUTH commands included"},
    CredentialStore{".lesshst", "less's search history"},
    // Browser profiles: their cookies are signed-in sessions.
    CredentialStore{".mozilla", "Firefox profiles: cookies and saved logins"},
    CredentialStore{".config/google-chrome", "Chrome profiles: cookies and saved logins"},
    CredentialStore{".config/chromium", "Chromium profiles: cookies and saved logins"},
    CredentialStore{".config/BraveSoftware", "Brave profiles: cookies and saved logins"},
    CredentialStore{".config/microsoft-edge", "Edge profiles: cookies and saved logins"},
};

namespace detail {

// Whether `p` is relative and clean: no leading or trailing `/`, no empty, `.` or
// `..` component. paths::normalize("/" + p) == "/" + p says the same at run time.
constexpr bool is_clean_relative(std::string_view p) {
    if (p.empty() || p.front() == '/' || p.back() == '/') return false;
    std::size_t i = 0;
    while (i <= p.size()) {
        std::size_t j = p.find('/', i);
        if (j == std::string_view::npos) j = p.size();
        const std::string_view c = p.substr(i, j - i);
        if (c.empty() || c == "." || c == "..") return false;
        i = j + 1;
    }
    return true;
}

constexpr bool credential_stores_are_well_formed() {
    for (std::size_t i = 0; i < kCredentialStores.size(); ++i) {
        if (!is_clean_relative(kCredentialStores[i].path) || kCredentialStores[i].reason.empty()) return false;
        for (std::size_t j = 0; j < i; ++j)
            if (kCredentialStores[i].path == kCredentialStores[j].path) return false;
    }
    return true;
}

}  // namespace detail

static_assert(detail::credential_stores_are_well_formed(),
              "each credential store is a clean relative path, listed once, with a reason");

// The file name every built-in value shows as its source.
inline constexpr std::string_view kBuiltinFile = "(built-in)";

// The key of store N in the builtin layer: defaults.credentialStores[N].
inline constexpr std::string_view kCredentialStoreKey = "defaults.credentialStores[";

SBX_INLINE std::string credential_store_key(std::size_t i);

// The store a source names, when it is the builtin layer's denial of one (as
// credential_store_denies() made it); nullptr for any other source.
SBX_INLINE const CredentialStore* credential_store_of(const Source& s);

// Every store denied for reading under each of `homes` (absolute, normalised;
// one listed twice counts once), home by home in the table's order, each with
// the Source {builtin, (built-in), defaults.credentialStores[N]}.
SBX_INLINE SourcedList credential_store_denies(const std::vector<std::string>& homes);

// Files inside a store that stay readable: public, and what a program needs to
// use a host the policy allows. ssh checks a server's host key against
// known_hosts; without it every ssh connection from the sandbox fails host key
// verification. Read-only like the rest of the home; the private keys beside it
// stay hidden (a command reaches an ssh-agent only where its socket is opened).
inline constexpr std::array kCredentialStoreOpenings = {
    CredentialStore{".ssh/known_hosts", "the host keys ssh checks servers by, which are public"},
};

// The key of opening N in the builtin layer: defaults.readableInStores[N].
inline constexpr std::string_view kStoreOpeningKey = "defaults.readableInStores[";

// Every opening under each of `homes` (as credential_store_denies() takes them)
// that no deny of `denies` other than a store's own covers: a user who denies
// ~/.ssh in a settings file keeps all of it hidden. Each with the Source
// {builtin, (built-in), defaults.readableInStores[N]}.
SBX_INLINE SourcedList credential_store_openings(const std::vector<std::string>& homes, const SourcedList& denies);

// Whether `s` is the builtin layer's opening of a file in a store.
SBX_INLINE bool is_store_opening(const Source& s);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_SETTINGS)

namespace sbx {

SBX_INLINE std::string credential_store_key(std::size_t i) {
    return std::string(kCredentialStoreKey) + std::to_string(i) + "]";
}

SBX_INLINE const CredentialStore* credential_store_of(const Source& s) {
    if (s.layer != LayerKind::builtin || !s.key.starts_with(kCredentialStoreKey) || !s.key.ends_with("]"))
        return nullptr;
    const std::string_view digits =
        std::string_view(s.key).substr(kCredentialStoreKey.size(), s.key.size() - kCredentialStoreKey.size() - 1);
    std::size_t i = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), i);
    if (ec != std::errc() || end != digits.data() + digits.size() || i >= kCredentialStores.size()) return nullptr;
    return &kCredentialStores[i];
}

namespace detail {

// `homes` normalised, each once, in their order.
SBX_INLINE std::vector<std::string> distinct_homes(const std::vector<std::string>& homes) {
    std::vector<std::string> out;
    for (const auto& home : homes)
        if (std::string h = paths::normalize(home); std::find(out.begin(), out.end(), h) == out.end())
            out.push_back(std::move(h));
    return out;
}

}  // namespace detail

SBX_INLINE SourcedList credential_store_denies(const std::vector<std::string>& homes) {
    const FileName file{std::string(kBuiltinFile)};
    SourcedList out;
    for (const auto& h : detail::distinct_homes(homes))
        for (std::size_t i = 0; i < kCredentialStores.size(); ++i)
            out.push_back({paths::join(h, kCredentialStores[i].path),
                           Source{LayerKind::builtin, file, credential_store_key(i)}});
    return out;
}

SBX_INLINE SourcedList credential_store_openings(const std::vector<std::string>& homes, const SourcedList& denies) {
    const FileName file{std::string(kBuiltinFile)};
    SourcedList out;
    for (const auto& h : detail::distinct_homes(homes)) {
        for (std::size_t i = 0; i < kCredentialStoreOpenings.size(); ++i) {
            const std::string path = paths::join(h, kCredentialStoreOpenings[i].path);
            const auto comps = paths::components(path);
            const bool covered = std::any_of(denies.begin(), denies.end(), [&](const Sourced<std::string>& d) {
                return credential_store_of(d.source) == nullptr &&
                       glob::shallowest_match(paths::components(d.value), comps).has_value();
            });
            if (!covered)
                out.push_back({path, Source{LayerKind::builtin, file,
                                            std::string(kStoreOpeningKey) + std::to_string(i) + "]"}});
        }
    }
    return out;
}

SBX_INLINE bool is_store_opening(const Source& s) {
    return s.layer == LayerKind::builtin && s.key.starts_with(kStoreOpeningKey);
}

}  // namespace sbx
#endif
