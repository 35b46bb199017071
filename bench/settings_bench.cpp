// settings_bench - what it costs to turn four settings files into a Policy.
//
// Four realistic layers (managed, user, project, local), each with a few dozen
// paths, domains and permission rules, held in memory as text. The benchmarks time
// parse_settings() of the four texts plus merge() (the whole pipeline after the
// files are read), parsing alone, and merging alone. merge() resolves symlinks
// through an sbx::MemoryFs holding a small home and project tree, so no disk I/O
// is timed; the repository layers reach into a directory the managed layer denies
// through a symlink, so the symlink-resolving rule has work to do.
//
// The merging benchmarks run twice: admin_required:0 with the managed layer as
// written, and admin_required:1 with `allowUnsandboxedCommands: false` added to
// it, which locks the repository's files and so drops most of their entries early.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/fs_view.hpp"
#include "sbx/settings/policy.hpp"
#include "sbx/settings/settings.hpp"

namespace {

constexpr std::string_view kHome = "/home/dev";
constexpr std::string_view kRoot = "/home/dev/src/webapp";

constexpr std::string_view kManaged = R"json({
  "sandbox": {
    "enabled": true,
    "failIfUnavailable": true,
    "filesystem": {
      "denyRead": ["~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gcloud", "~/.kube", "~/.docker/config.json",
                   "~/.netrc", "~/.pgpass", "/etc/shadow", "/etc/ssl/private", "~/**/.env", "~/**/*.pem"],
      "denyWrite": ["/etc", "/usr", "~/.bashrc", "~/.zshrc", "~/.profile"],
      "allowRead": ["/usr/share/doc", "/usr/share/zoneinfo"]
    },
    "network": {
      "allowedDomains": ["github.com", "api.github.com", "*.githubusercontent.com", "registry.npmjs.org",
                         "*.npmjs.org", "pypi.org", "files.pythonhosted.org", "crates.io", "static.crates.io",
                         "index.crates.io", "proxy.golang.org", "sum.golang.org", "repo.maven.apache.org",
                         "dl.google.com", "deb.debian.org"],
      "deniedDomains": ["pastebin.com", "*.ngrok.io", "transfer.sh", "*.requestbin.net", "webhook.site"],
      "strictAllowlist": true
    },
    "credentials": {
      "envVars": ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GITHUB_TOKEN", "GH_TOKEN",
                  {"name": "NPM_TOKEN", "mode": "deny"}, {"name": "ANTHROPIC_API_KEY", "mode": "mask"},
                  "GOOGLE_APPLICATION_CREDENTIALS"],
      "files": ["~/.config/gh/hosts.yml", "~/.npmrc", "~/.pypirc", "~/.cargo/credentials.toml",
                {"path": "~/.git-credentials", "mode": "deny"}, {"path": "~/.config/hub", "mode": "mask"}]
    },
    "bwrapPath": "/usr/bin/bwrap",
    "socatPath": "/usr/bin/socat"
  },
  "permissions": {
    "deny": ["Read(//etc/ssl/private/**)", "Edit(//etc/**)", "Read(~/.ssh/**)", "WebFetch(domain:pastebin.com)",
             "WebFetch(domain:*.ngrok.io)", "Bash(curl:*)"]
  }
})json";

constexpr std::string_view kUser = R"json({
  "model": "opus",
  "env": {"NODE_OPTIONS": "--max-old-space-size=4096"},
  "sandbox": {
    "enabled": true,
    "autoAllowBashIfSandboxed": true,
    "excludedCommands": ["docker", "docker compose", "podman", "git push"],
    "ignoreViolations": {"*": ["/usr/bin", "/dev/tty"], "npm": ["~/.npm/_logs"], "cargo": ["~/.cargo/registry"]},
    "filesystem": {
      "allowWrite": ["~/.cache", "~/.npm", "~/.cargo/registry", "~/.rustup/tmp", "/tmp/build", "~/go/pkg/mod",
                     "~/.local/share/pnpm", "~/.gradle/caches"],
      "denyWrite": ["~/.gitconfig", "~/.ssh/config"],
      "denyRead": ["~/secrets", "~/Documents/taxes", "~/.password-store", "~/.mozilla", "~/.config/chromium"]
    },
    "network": {
      "allowedDomains": ["docs.rs", "developer.mozilla.org", "en.cppreference.com", "stackoverflow.com"],
      "allowUnixSockets": ["/var/run/docker.sock", "/run/user/1000/podman/podman.sock"],
      "allowLocalBinding": true
    }
  },
  "permissions": {
    "allow": ["Bash(npm run test:*)", "Bash(npm run lint)", "Bash(cargo test:*)", "Bash(make:*)",
              "Edit(~/notes/**)", "Edit(~/scratch/**)", "Read(~/docs/**)", "WebFetch(domain:docs.rs)",
              "WebFetch(domain:github.com)", "WebFetch(domain:*.python.org)", "WebSearch", "Glob", "Grep"],
    "deny": ["Read(~/.gnupg/**)", "Read(~/.password-store/**)", "Edit(~/.bashrc)", "Edit(~/.zshrc)",
             "Bash(rm -rf:*)", "Bash(sudo:*)", "WebFetch(domain:*.tracker.example)"],
    "ask": ["Bash(git push:*)", "Bash(gh pr create:*)"],
    "additionalDirectories": ["~/src/shared-libs", "~/src/design-tokens", "~/notes"],
    "defaultMode": "acceptEdits"
  }
})json";

constexpr std::string_view kProject = R"json({
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "sandbox": {
    "enabled": true,
    "excludedCommands": ["./scripts/deploy.sh"],
    "filesystem": {
      "allowWrite": ["./build", "dist", "coverage", "node_modules/.cache", ".next", "target", "out",
                     "../webapp-artifacts", "tmp/**", "generated"],
      "denyWrite": [".git/hooks", ".github/workflows", "**/*.pem", "package-lock.json", "Cargo.lock",
                    "infra/terraform.tfstate"],
      "allowRead": ["~/.ssh/known_hosts", "keys/public"]
    },
    "network": {
      "allowedDomains": ["registry.npmjs.org", "api.github.com", "*.githubusercontent.com", "cdn.jsdelivr.net",
                         "unpkg.com", "fonts.googleapis.com", "fonts.gstatic.com", "storybook.js.org",
                         "api.stripe.com", "sentry.io", "*.sentry.io", "localhost"],
      "deniedDomains": ["telemetry.example.com", "*.ads.example"]
    },
    "credentials": {"files": [".env", ".env.local", {"path": "config/secrets.json"}, {"path": "~/.npmrc", "mode": "deny"}]}
  },
  "permissions": {
    "allow": ["Edit(/src/**)", "Edit(/test/**)", "Edit(/docs/**)", "Edit(./generated)", "Edit(/package.json)",
              "Read(/src/**)", "WebFetch(domain:nextjs.org)", "WebFetch(domain:react.dev)",
              "WebFetch(domain:tailwindcss.com)", "Bash(npm run build)", "Bash(npx prettier:*)", "Read"],
    "deny": ["Edit(/.github/workflows/**)", "Read(./.env.production)", "Edit(/infra/**)", "Read(/keys/private/**)",
             "WebFetch(domain:*.ads.example)", "Bash(npm publish:*)"],
    "additionalDirectories": ["../shared", "../webapp-docs", "/opt/toolchains/node20"]
  }
})json";

constexpr std::string_view kLocal = R"json({
  "sandbox": {
    "autoAllowBashIfSandboxed": true,
    "excludedCommands": ["make deploy-staging"],
    "ignoreViolations": {"jest": ["/proc/self"]},
    "filesystem": {
      "allowWrite": ["~/.ssh-link/config", "scratch", "../webapp-worktree", "/tmp/webapp-e2e", "~/.cache/ms-playwright"],
      "allowRead": ["~/.aws/config", "keys-link/id_ed25519.pub", "~/Downloads/fixtures"]
    },
    "network": {
      "allowedDomains": ["*.internal.corp", "staging.example.com", "127.0.0.1", "minio.local"],
      "allowUnixSockets": ["/run/user/1000/bus"]
    }
  },
  "permissions": {
    "allow": ["Edit(~/.ssh-link/**)", "Edit(//tmp/scratch)", "Edit(/scratch/**)", "WebFetch(domain:internal.corp)",
              "Bash(docker compose up:*)", "Read(~/Downloads/**)"],
    "deny": ["Edit(/src/legacy/**)"],
    "additionalDirectories": ["~/.ssh-link", "~/src/webapp-notes"]
  }
})json";

struct Layer {
    std::string text;
    sbx::SettingsSource source;
};

std::string managed_text(bool admin_required) {
    std::string text(kManaged);
    if (admin_required) {
        constexpr std::string_view at = "\"enabled\": true,";
        text.insert(text.find(at) + at.size(), " \"allowUnsandboxedCommands\": false,");
    }
    return text;
}

std::array<Layer, 4> layers(bool admin_required) {
    const std::string home(kHome), root(kRoot);
    auto src = [&](sbx::LayerKind kind, std::string file) {
        sbx::paths::Base base{home, sbx::settings_project_dir(file)};
        return sbx::SettingsSource{kind, std::move(file), std::move(base), root};
    };
    return {{
        {managed_text(admin_required), src(sbx::LayerKind::managed, "/etc/claude-code/managed-settings.json")},
        {std::string(kUser), src(sbx::LayerKind::user, home + "/.claude/settings.json")},
        {std::string(kProject), src(sbx::LayerKind::project, root + "/.claude/settings.json")},
        {std::string(kLocal), src(sbx::LayerKind::local, root + "/.claude/settings.local.json")},
    }};
}

// A small home and project tree, with symlinks from the repository's paths into
// directories the managed layer denies reading.
sbx::MemoryFs tree() {
    sbx::MemoryFs fs;
    fs.dir("/home/dev/.ssh").file("/home/dev/.ssh/id_ed25519").file("/home/dev/.ssh/known_hosts");
    fs.dir("/home/dev/.aws").file("/home/dev/.aws/config").file("/home/dev/.aws/credentials");
    fs.dir("/home/dev/.cache").dir("/home/dev/.npm").dir("/home/dev/notes").dir("/home/dev/Downloads/fixtures");
    fs.symlink("/home/dev/.ssh-link", ".ssh");
    fs.dir("/home/dev/src/shared-libs").dir("/home/dev/src/webapp/src").dir("/home/dev/src/webapp/test");
    fs.dir("/home/dev/src/webapp/.git/hooks").dir("/home/dev/src/webapp/node_modules/.cache");
    fs.dir("/home/dev/src/webapp/keys/public").file("/home/dev/src/webapp/.env");
    fs.symlink("/home/dev/src/webapp/keys-link", "/home/dev/.ssh");
    fs.symlink("/home/dev/src/webapp/scratch", "/tmp/webapp-scratch");
    fs.symlink("/home/dev/src/webapp/build", "dist");
    fs.dir("/tmp/webapp-scratch").dir("/etc/ssl/private").dir("/usr/share/doc");
    return fs;
}

std::vector<sbx::Settings> parse_all(const std::array<Layer, 4>& ls) {
    std::vector<sbx::Settings> out;
    out.reserve(ls.size());
    for (const auto& l : ls) {
        auto r = sbx::parse_settings(l.text, l.source);
        if (!r) {
            std::fprintf(stderr, "settings_bench: %s\n", sbx::to_string(r.error()).c_str());
            std::abort();
        }
        out.push_back(std::move(*r));
    }
    return out;
}

std::int64_t total_bytes(const std::array<Layer, 4>& ls) {
    std::int64_t n = 0;
    for (const auto& l : ls) n += static_cast<std::int64_t>(l.text.size());
    return n;
}

void check_merge(const std::vector<sbx::Settings>& parsed, const sbx::FsView& fs, bool admin_required) {
    auto r = sbx::merge(parsed, sbx::MergeOptions{}, fs);
    if (!r) {
        std::fprintf(stderr, "settings_bench: %s\n", sbx::to_string(r.error()).c_str());
        std::abort();
    }
    if (r->admin_required.value != admin_required) {
        std::fprintf(stderr, "settings_bench: admin-required mode is not as intended\n");
        std::abort();
    }
}

// parse_settings() of the four texts, then merge(): the pipeline after the read.
void BM_ParseAndMerge(benchmark::State& state) {
    const bool admin = state.range(0) != 0;
    const auto ls = layers(admin);
    const sbx::MemoryFs fs = tree();
    check_merge(parse_all(ls), fs, admin);
    for (auto _ : state) {
        std::vector<sbx::Settings> parsed;
        parsed.reserve(ls.size());
        for (const auto& l : ls) {
            auto r = sbx::parse_settings(l.text, l.source);
            if (!r) {
                state.SkipWithError("parse failed");
                return;
            }
            parsed.push_back(std::move(*r));
        }
        auto policy = sbx::merge(std::move(parsed), sbx::MergeOptions{}, fs);
        if (!policy) {
            state.SkipWithError("merge failed");
            return;
        }
        benchmark::DoNotOptimize(policy);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * total_bytes(ls));
}
BENCHMARK(BM_ParseAndMerge)->ArgName("admin_required")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// parse_settings() of the four texts alone.
void BM_ParseOnly(benchmark::State& state) {
    const auto ls = layers(false);
    parse_all(ls);
    for (auto _ : state) {
        for (const auto& l : ls) {
            auto r = sbx::parse_settings(l.text, l.source);
            benchmark::DoNotOptimize(r);
        }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * total_bytes(ls));
}
BENCHMARK(BM_ParseOnly)->Unit(benchmark::kMicrosecond);

// merge() of the four parsed layers alone, symlinks resolved through MemoryFs.
void BM_MergeOnly(benchmark::State& state) {
    const bool admin = state.range(0) != 0;
    const auto ls = layers(admin);
    const auto parsed = parse_all(ls);
    const sbx::MemoryFs fs = tree();
    check_merge(parsed, fs, admin);
    for (auto _ : state) {
        auto policy = sbx::merge(parsed, sbx::MergeOptions{}, fs);
        benchmark::DoNotOptimize(policy);
    }
}
BENCHMARK(BM_MergeOnly)->ArgName("admin_required")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
