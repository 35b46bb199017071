// The audit after a run (launchers/git_audit.cpp) over an empty repository and
// over one with a node_modules of 50 000 files (2 500 packages of 20), made once
// in a temporary directory and removed at exit. Nothing counts as changed (the
// run's start lies in the future), so this is the walk's cost alone; the renames
// happen only for what a command planted.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <time.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "git_audit.hpp"

namespace {

struct Trees {
    std::string base, empty, modules;
    Trees() {
        char templ[] = "/tmp/sbx-audit-bench-XXXXXX";
        base = ::mkdtemp(templ);
        empty = base + "/empty";
        modules = base + "/modules";
        for (const auto& r : {empty, modules}) {
            std::filesystem::create_directories(r + "/.git/hooks");
            std::ofstream(r + "/.git/HEAD") << "ref: refs/heads/main\n";
            std::ofstream(r + "/.git/config") << "[core]\n\tbare = false\n";
        }
        for (int d = 0; d < 2500; ++d) {
            const std::string lib = modules + "/node_modules/pkg" + std::to_string(d) + "/lib";
            std::filesystem::create_directories(lib);
            for (int f = 0; f < 20; ++f) std::ofstream(lib + "/f" + std::to_string(f) + ".js") << "module.exports = 1;\n";
        }
    }
    ~Trees() {
        std::error_code ec;
        std::filesystem::remove_all(base, ec);
    }
};

const Trees& trees() {
    static const Trees t;
    return t;
}

void audit(benchmark::State& state, const std::string& root) {
    timespec future{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &future);
    future.tv_sec += 100000;
    for (auto _ : state) {
        auto r = sbx::launcher::audit_git(root, {root}, future);
        if (!r.neutralised.empty() || !r.warnings.empty()) state.SkipWithError("the audit found something");
        benchmark::DoNotOptimize(r);
    }
}

void BM_AuditEmptyRepository(benchmark::State& state) { audit(state, trees().empty); }
void BM_AuditNodeModules50k(benchmark::State& state) { audit(state, trees().modules); }

BENCHMARK(BM_AuditEmptyRepository)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AuditNodeModules50k)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
