// The audit after a run (launchers/linux/git_audit.cpp) over an empty repository and
// over repositories with a node_modules of 10^3, 10^5 and 10^6 empty files (in
// packages of 20), each made the first time it is measured in a temporary
// directory and removed at exit. Nothing counts as changed (the run's start lies in
// the future), so this is the walk's cost alone; the renames happen only for what
// a command planted. The walk has no limit: its time should grow with the tree
// and no faster (bench/git_audit.sh times it end to end).
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "linux/git_audit.hpp"

namespace {

// A repository with `files` empty files under node_modules/pkgN/lib, 20 to a package.
class Tree {
public:
    explicit Tree(long files) {
        char templ[] = "/tmp/sbx-audit-bench-XXXXXX";
        root_ = ::mkdtemp(templ);
        std::filesystem::create_directories(root_ + "/.git/hooks");
        std::filesystem::create_directories(root_ + "/.git/objects");
        std::filesystem::create_directories(root_ + "/.git/refs/heads");
        std::ofstream(root_ + "/.git/HEAD") << "ref: refs/heads/main\n";
        std::ofstream(root_ + "/.git/config") << "[core]\n\tbare = false\n";
        for (long d = 0; d * 20 < files; ++d) {
            const std::string lib = root_ + "/node_modules/pkg" + std::to_string(d) + "/lib";
            std::filesystem::create_directories(lib);
            for (long f = 0; f < 20 && d * 20 + f < files; ++f) std::ofstream(lib + "/f" + std::to_string(f) + ".js");
        }
    }
    ~Tree() {
        std::error_code ec;
        std::filesystem::remove_all(root_, ec);
    }
    Tree(const Tree&) = delete;
    Tree& operator=(const Tree&) = delete;
    const std::string& root() const { return root_; }

private:
    std::string root_;
};

const std::string& tree(long files) {
    static std::map<long, std::unique_ptr<Tree>> trees;
    auto& t = trees[files];
    if (!t) t = std::make_unique<Tree>(files);
    return t->root();
}

void BM_Audit(benchmark::State& state) {
    const std::string& root = tree(state.range(0));
    timespec future{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &future);
    future.tv_sec += 100000;
    for (auto _ : state) {
        auto r = sbx::launcher::audit_git(root, {root}, future);
        if (!r.neutralised.empty() || !r.failures.empty() || !r.warnings.empty())
            state.SkipWithError("the audit found something");
        benchmark::DoNotOptimize(r);
    }
    state.counters["files"] = static_cast<double>(state.range(0));
    state.counters["ns_per_file"] = benchmark::Counter(
        static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

BENCHMARK(BM_Audit)->Arg(0)->Arg(1000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);

// The walk `sbx run` makes of a root with no record of its repositories yet, before
// its first run (survey_git): the audit's walk, checking nothing.
void BM_Survey(benchmark::State& state) {
    const std::string& root = tree(state.range(0));
    for (auto _ : state) {
        auto r = sbx::launcher::survey_git(root);
        benchmark::DoNotOptimize(r);
    }
    state.counters["files"] = static_cast<double>(state.range(0));
    state.counters["ns_per_file"] = benchmark::Counter(
        static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

BENCHMARK(BM_Survey)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

// The look `sbx run` takes before every later run (survey_git with the stamps of
// the last one), when nothing changed since: a stat of each directory, no listing.
// The tree was just made, so the survey finds its stamps too recent to keep; they
// are taken here as they will be once they are old enough.
void BM_Refresh(benchmark::State& state) {
    const std::string& root = tree(state.range(0));
    auto known = sbx::launcher::survey_git(root);
    for (auto& d : known.directories) {
        struct stat st {};
        ::lstat((d.path == "." ? root : root + "/" + d.path).c_str(), &st);
        d.sec = st.st_ctim.tv_sec;
        d.nsec = st.st_ctim.tv_nsec;
    }
    for (auto _ : state) {
        auto r = sbx::launcher::survey_git(root, &known);
        benchmark::DoNotOptimize(r);
    }
    state.counters["files"] = static_cast<double>(state.range(0));
    state.counters["dirs"] = static_cast<double>(known.directories.size());
    state.counters["ns_per_file"] = benchmark::Counter(
        static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

BENCHMARK(BM_Refresh)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
