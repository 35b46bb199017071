// plan_bench - what it costs to plan a command's filesystem and to decide one path.
//
// Once, before anything is timed, the program builds a real tree in a fresh
// directory under /tmp (removed at exit): a project that is a git repository made
// by `git init`, with sources, build directories, secrets and a `.claude` directory
// holding the settings, and a home directory beside it with `.ssh`, `.aws`, shell
// start-up files and a few more dotfiles. The settings name about a hundred paths:
// forty read denies (some of them globs such as `~/**/.env`), twenty read allows,
// twenty writable directories and twenty write denies. They are parsed and merged
// against the disk into one Policy.
//
// The benchmarks then time, on that tree:
//   Plan          make_plan(): protected paths, rules and mounts, looking at the real
//                 disk through a DiskFs (no cache is kept between iterations);
//   DecideRead    decide() for reading one path, with rules compiled once;
//   DecideWrite   decide() for writing it;
//   ExplainRead   explain() for reading it, which resolves its symlinks on disk.
// The decisions are timed for three paths: a source file in the root, a key under
// ~/.ssh (hidden by a plain deny) and a `.env` deep in the home (hidden by a glob).
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/io/fs_view_disk.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "sbx/plan/make_plan.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/rules/fs_rules.hpp"
#include "sbx/rules/protected_paths.hpp"
#include "sbx/settings/defaults.hpp"
#include "sbx/settings/policy.hpp"
#include "sbx/settings/settings.hpp"

namespace {

std::string g_top;  // the temporary directory, removed at exit

void remove_top() {
    if (g_top.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(g_top, ec);
}

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "plan_bench: %s\n", what.c_str());
    std::exit(1);
}

template <class T>
T& must(sbx::expected<T>& r, const char* what) {
    if (!r) die(std::string(what) + ": " + sbx::to_string(r.error()));
    return *r;
}

void write_file(const std::string& path, std::string_view text = "x\n") {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream out(path);
    out << text;
    if (!out) die("cannot write " + path);
}

void make_dir(const std::string& path) { std::filesystem::create_directories(path); }

// A JSON array of strings; the entries hold no character that needs escaping.
std::string json_list(const std::vector<std::string>& items) {
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", \"" : "\"") + items[i] + "\"";
    return out + "]";
}

// The settings of the project: paths relative to the root, under ~/ or absolute.
std::string settings_text() {
    const std::vector<std::string> deny_read = {
        "~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gcloud", "~/.kube", "~/.docker", "~/.netrc", "~/.pgpass",
        "~/.npmrc", "~/.pypirc", "~/.git-credentials", "~/.config/gh", "~/.config/hub", "~/.azure", "~/.oci",
        "~/.vault-token", "~/.bash_history", "~/.zsh_history", "~/.python_history", "~/.mozilla",
        "~/.config/chromium", "~/.password-store", "~/secrets", "~/Documents/taxes", "/etc/shadow",
        "/etc/ssl/private", "~/**/.env", "~/**/*.pem", "~/**/id_rsa*", "~/.config/*/credentials*", ".env",
        ".env.local", ".env.production", "config/secrets.json", "keys/private", "infra/terraform.tfstate",
        "**/*.key", "certs/*.p12", "vendor/internal/tokens", "~/.cache/*/auth.json",
    };
    const std::vector<std::string> allow_read = {
        "~/.ssh/known_hosts", "~/.ssh/config", "~/.aws/config", "~/.docker/cli-plugins", "~/.config/gh/config.yml",
        "~/secrets/public", "keys/private/README", "/etc/ssl/private/README", "~/.kube/cache", "~/.gnupg/pubring.kbx",
        "~/.mozilla/extensions", "~/Documents/taxes/forms", "~/.password-store/.gpg-id", "~/.oci/config.public",
        "~/.azure/config", "~/.config/gcloud/configurations", "~/.npmrc.d", "~/src/other/docs", "config/public.json",
        "infra/README.md",
    };
    const std::vector<std::string> allow_write = {
        "build", "dist", "coverage", "target", "out", "generated", "tmp/**", "node_modules/.cache", ".next",
        "~/.cache", "~/.npm", "~/.cargo/registry", "~/.rustup/tmp", "~/go/pkg/mod", "~/.local/share/pnpm",
        "~/.gradle/caches", "~/notes", "~/scratch", "~/.cache/ms-playwright", "~/src/other/build",
    };
    const std::vector<std::string> deny_write = {
        ".github/workflows", "package-lock.json", "Cargo.lock", "infra", "scripts/deploy.sh", "Makefile",
        "meson.build", "src/generated/schema.h", "docs/adr", "LICENSE", "build/release", "dist/signed",
        "coverage/baseline", "target/release", ".gitattributes", ".editorconfig", "tools/ci", "third_party",
        "src/main.cpp", "README.md",
    };
    return std::string("{\n  \"sandbox\": {\n    \"enabled\": true,\n    \"filesystem\": {\n") +
           "      \"denyRead\": " + json_list(deny_read) + ",\n" +
           "      \"allowRead\": " + json_list(allow_read) + ",\n" +
           "      \"allowWrite\": " + json_list(allow_write) + ",\n" +
           "      \"denyWrite\": " + json_list(deny_write) + "\n    },\n" +
           "    \"network\": {\"allowedDomains\": [\"github.com\", \"registry.npmjs.org\"]}\n  }\n}\n";
}

// The tree, the policy and the compiled rules, made once.
struct Fixture {
    std::string top, root, home, tmpdir;
    sbx::DiskFs disk;
    sbx::Policy policy;
    sbx::PlanRequest request;
    sbx::FsRules rules;
    std::size_t mounts = 0, placeholders = 0;
    std::array<std::string, 3> paths;  // see the file comment

    Fixture() {
        char templ[] = "/tmp/sbx-plan-bench-XXXXXX";
        if (::mkdtemp(templ) == nullptr) die("mkdtemp failed");
        g_top = templ;
        std::atexit(remove_top);  // also when die() exits half way
        top = std::filesystem::canonical(templ).string();  // the engine wants symlink-free paths
        root = top + "/work/webapp";
        home = top + "/home";
        tmpdir = top + "/cmd-tmp";  // the command's temporary directory: named, not made
        build_tree();
        build_policy();
    }

    Fixture(const Fixture&) = delete;
    Fixture& operator=(const Fixture&) = delete;

    void build_tree() {
        make_dir(root);
        const std::string init = "git init -q '" + root + "'";
        if (std::system(init.c_str()) != 0) die("git init failed in " + root);
        for (const char* f : {"src/main.cpp", "src/lib/util.cpp", "src/lib/util.hpp", "src/generated/schema.h",
                              "README.md", "LICENSE", "Makefile", "meson.build", "package-lock.json", ".gitattributes",
                              ".env", ".env.local", "config/secrets.json", "config/public.json", "keys/private/id",
                              "keys/private/README", "keys/public/id.pub", "infra/main.tf", "infra/README.md",
                              ".github/workflows/ci.yml", "scripts/deploy.sh", "docs/adr/0001.md", "tools/ci/run.sh",
                              "certs/dev.p12", "server.key"})
            write_file(root + "/" + f);
        for (const char* d : {"build/release", "dist", "coverage", "target/release", "out", "generated", "tmp",
                              "node_modules/.cache", ".next", ".vscode"})
            make_dir(root + "/" + d);
        write_file(root + "/.claude/settings.json", settings_text());
        write_file(root + "/.claude/settings.local.json", "{}\n");
        make_dir(root + "/.claude/hooks");

        for (const char* f : {".ssh/id_ed25519", ".ssh/id_ed25519.pub", ".ssh/known_hosts", ".ssh/config",
                              ".aws/config", ".aws/credentials", ".bashrc", ".profile", ".gitconfig", ".netrc",
                              ".zshrc", ".bash_history", ".npmrc", ".claude/settings.json", ".claude.json",
                              ".config/gh/hosts.yml", ".config/gh/config.yml", ".docker/config.json",
                              "src/other/.env", "src/other/docs/index.md", "src/other/deep/a/b/.env",
                              "Documents/taxes/2023.pdf", "secrets/api-token", "certs/dev.pem"})
            write_file(home + "/" + f);
        for (const char* d : {".cache/pip", ".npm", ".cargo/registry", "go/pkg/mod", "notes", "scratch",
                              ".local/share", ".config/git", "src/other/build"})
            make_dir(home + "/" + d);
        std::filesystem::create_symlink(home + "/.ssh", root + "/keys-link");

        paths = {root + "/src/lib/util.cpp", home + "/.ssh/id_ed25519", home + "/src/other/deep/a/b/.env"};
    }

    void build_policy() {
        const std::string file = root + "/.claude/settings.json";
        const sbx::SettingsSource src{sbx::LayerKind::project, file,
                                      sbx::paths::Base{home, sbx::settings_project_dir(file)}, root};
        auto parsed = sbx::parse_settings(settings_text(), src);
        std::vector<sbx::Settings> layers;
        layers.push_back(std::move(must(parsed, "parse_settings")));
        auto merged = sbx::effective_policy(std::move(layers), sbx::MergeOptions{}, disk, {home});
        policy = std::move(must(merged, "effective_policy"));

        request.argv = {"true"};
        request.root = root;
        request.home = home;
        request.tmpdir = tmpdir;
        auto plan = sbx::make_plan(policy, request, disk);
        const auto& p = must(plan, "make_plan");
        mounts = p.filesystem.mounts.size();
        placeholders = p.filesystem.placeholders.size();

        auto prot = sbx::protected_paths(root, home, disk);
        auto compiled = sbx::compile_fs_rules(policy, sbx::FsContext{root, tmpdir, home},
                                              std::move(must(prot, "protected_paths").paths), disk);
        rules = std::move(must(compiled, "compile_fs_rules"));

        // The three paths must be decided as the file comment says.
        if (!sbx::decide(rules, paths[0], sbx::Access::read).allowed ||
            !sbx::decide(rules, paths[0], sbx::Access::write).allowed)
            die(paths[0] + " should be readable and writable");
        for (std::size_t i = 1; i < paths.size(); ++i)
            if (sbx::decide(rules, paths[i], sbx::Access::read).allowed) die(paths[i] + " should be hidden");
    }
};

Fixture& fixture() {
    static Fixture f;
    return f;
}

void set_counters(benchmark::State& state) {
    const Fixture& f = fixture();
    state.counters["rules"] = static_cast<double>(f.rules.rules.size());
    state.counters["mounts"] = static_cast<double>(f.mounts);
    state.counters["placeholders"] = static_cast<double>(f.placeholders);
}

// The whole filesystem plan for the root, on the real disk.
void BM_Plan(benchmark::State& state) {
    const Fixture& f = fixture();
    for (auto _ : state) {
        auto plan = sbx::make_plan(f.policy, f.request, f.disk);
        if (!plan) {
            state.SkipWithError("make_plan failed");
            return;
        }
        benchmark::DoNotOptimize(plan);
    }
    set_counters(state);
}
BENCHMARK(BM_Plan)->Unit(benchmark::kMicrosecond);

void decide_bench(benchmark::State& state, sbx::Access access) {
    const Fixture& f = fixture();
    const std::string& path = f.paths[static_cast<std::size_t>(state.range(0))];
    for (auto _ : state) {
        auto d = sbx::decide(f.rules, path, access);
        benchmark::DoNotOptimize(d);
    }
    state.counters["rules"] = static_cast<double>(f.rules.rules.size());
}

// Path 0: a file in the root; 1: a key in ~/.ssh; 2: a .env deep in the home.
void BM_DecideRead(benchmark::State& state) { decide_bench(state, sbx::Access::read); }
BENCHMARK(BM_DecideRead)->ArgName("path")->DenseRange(0, 2)->Unit(benchmark::kNanosecond);

void BM_DecideWrite(benchmark::State& state) { decide_bench(state, sbx::Access::write); }
BENCHMARK(BM_DecideWrite)->ArgName("path")->DenseRange(0, 2)->Unit(benchmark::kNanosecond);

// explain() resolves the path's symlinks on the real disk, then decides.
void BM_ExplainRead(benchmark::State& state) {
    const Fixture& f = fixture();
    const std::string& path = f.paths[static_cast<std::size_t>(state.range(0))];
    for (auto _ : state) {
        auto e = sbx::explain(f.rules, path, sbx::Access::read, f.disk);
        if (!e) {
            state.SkipWithError("explain failed");
            return;
        }
        benchmark::DoNotOptimize(e);
    }
}
BENCHMARK(BM_ExplainRead)->ArgName("path")->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    fixture();  // the tree is made before the first benchmark
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
