// sbx/defaults.hpp - the policy sbx uses when no settings file exists at all.
//
// default_policy() decides what a command may do when nobody has written a word:
// the sandbox is on, and a command that cannot be confined does not run; it writes
// only where every plan lets it (the root and its own temporary directory); it
// reads everywhere but the credential stores of kCredentialStores; it has no
// network. effective_policy() decides between that default and the merge: with no
// layer at all the default applies, and with any layer, an empty file included,
// the settings decide, as in Claude Code.
//
// Every value the default sets carries the Source of the `builtin` layer, so
// `sbx policy` shows where it came from.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/expected.hpp"
#include "sbx/fs_view.hpp"
#include "sbx/paths.hpp"
#include "sbx/policy.hpp"
#include "sbx/settings.hpp"

namespace sbx {

// A place under the home directory where a program keeps secrets.
struct CredentialStore {
    std::string_view path;    // relative to the home directory, normalised
    std::string_view reason;  // what it holds
};

// The credential stores a default policy denies reading. A command's output goes
// back to whoever reads it, so these are denied for reading, not only for sending.
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

// The policy for a machine with no settings file at all. `home` is the home
// directory, absolute and normalised. Promises: enabled (source: the builtin
// layer), failIfUnavailable true, allowUnsandboxedCommands false, every credential
// store denied for reading under `home` (key defaults.credentialStores[N]), no
// allowed domain and so no network, no write beyond what every plan grants, no
// warnings.
inline Policy default_policy(std::string_view home) {
    const FileName file{std::string(kBuiltinFile)};
    auto source = [&](std::string key) { return Source{LayerKind::builtin, file, std::move(key)}; };
    Policy p;
    p.enabled = {true, source("defaults.enabled")};
    p.fail_if_unavailable = {true, {}};  // sbx's default for every policy
    p.allow_unsandboxed = {false, {}};   // likewise
    p.filesystem.deny_read.reserve(kCredentialStores.size());
    for (std::size_t i = 0; i < kCredentialStores.size(); ++i)
        p.filesystem.deny_read.push_back(
            {paths::join(home, kCredentialStores[i].path),
             source("defaults.credentialStores[" + std::to_string(i) + "]")});
    return p;
}

// The policy for a set of settings layers: default_policy(home) when there are
// none (with options.trusted recorded), else merge(). Any layer, even a file that
// says nothing, means the settings decide: the default is not merged under them.
inline expected<Policy> effective_policy(std::vector<Settings>&& layers, const MergeOptions& options,
                                         const FsView& fs, std::string_view home) {
    if (layers.empty()) {
        Policy p = default_policy(home);
        p.trusted = options.trusted;
        return p;
    }
    return merge(std::move(layers), options, fs);
}

}  // namespace sbx
