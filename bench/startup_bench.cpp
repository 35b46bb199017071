// startup_bench - what it costs to start a short command under each of a few
// launchers: wall time, CPU time and peak memory, each against the first command.
//
//   startup_bench [OPTIONS] NAME=COMMAND LINE...
//   startup_bench [OPTIONS] -- NAME ARG0 ARG... [';' NAME ARG0 ARG...]...
//
// A command is given either as one argument `NAME=COMMAND LINE`, the command line
// split on spaces and tabs (no quoting: an argument cannot hold a space), or, after
// `--`, as the words `NAME ARG0 ARG...` taken as they are, commands separated by a
// lone `;` (`\;` in a shell; `--` cannot separate them, since bwrap and sbx take it
// in their own command lines). ARG0 is looked up in PATH. The first command is the
// baseline that the ratios divide by.
//
// Options:
//   --runs N           timed runs of each command (default 50)
//   --warmup N         untimed runs of each command first (default 5)
//   --json             print one JSON object instead of the table
//   --target NAME=X    say whether NAME's median wall time is within X times the
//                      baseline's, and exit 2 if it is not (may be repeated)
//   -h, --help         print this usage
//
// The program does `--warmup` and then `--runs` rounds; a round runs every command
// once, starting from the next command each round, so that a burst of machine noise
// falls on all of them alike. Each run is fork + execvp from this process, with
// stdin and stdout on /dev/null and stderr kept in a memory file, and the program
// waits for it with wait4. The program is a child subreaper: a descendant orphaned
// during a run (bubblewrap's PID 1 is killed only after bubblewrap exits, so it is
// one) is handed to it and reaped after the run's child, before the next run
// starts; one still running 10 s later is killed and fails the run. Per run it
// records
//   wall   CLOCK_MONOTONIC from just before fork to wait4's return for the child;
//          orphans still exiting after that are not timed;
//   CPU    user + system time from the rusage of each wait4 of the run, the child's
//          and every orphan's, added up; each covers that process and the
//          descendants it reaped, so together they cover the whole tree (the same
//          figure as a delta of getrusage(RUSAGE_CHILDREN));
//   RSS    the largest ru_maxrss among those wait4s: the peak resident set of the
//          largest single process in the tree, not a sum. It includes the forked
//          copy of this program before exec, so about 1 MiB is a floor.
// The table shows, per command, the successful timed runs, the failed runs, the
// median and 90th percentile (nearest rank) wall time, the median CPU time, the
// median peak RSS, and the ratio of each median to the baseline's.
//
// A run fails when its command exits non-zero or is killed by a signal; the stderr
// of a command's first failed run is printed (and, once per command, the stderr of a
// successful run that wrote any). Failed runs are left out of the figures.
//
// Exit statuses: 0 every run succeeded and every target was met; 1 a run failed;
// 2 a target was missed; 64 the command line is wrong; 70 a system call of this
// program failed (fork, memfd_create, open).
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

enum Exit : int {
    kOk = 0,
    kRunFailed = 1,
    kTargetMissed = 2,
    kUsage = 64,
    kInternal = 70,
};

constexpr std::size_t kStderrShown = 4096;  // bytes of a run's stderr that are printed
constexpr double kOrphanGraceMs = 10000;     // how long orphans of a run may outlive its child

constexpr const char* kUsageText =
    "usage: startup_bench [--runs N] [--warmup N] [--json] [--target NAME=X]... NAME=COMMAND LINE...\n"
    "       startup_bench [OPTIONS] -- NAME ARG0 ARG... [';' NAME ARG0 ARG...]...\n"
    "Runs each command N times (default 50) after warm-up runs (default 5), round-robin,\n"
    "and prints median wall time, p90 wall time, median CPU time and median peak RSS,\n"
    "with ratios to the first command. `--target NAME=X` checks NAME's wall ratio <= X.\n";

struct Sample {
    double wall_ms = 0;
    double cpu_ms = 0;
    double rss_mib = 0;
};

struct Command {
    std::string name;
    std::vector<std::string> argv;
    std::vector<Sample> samples;  // the successful timed runs
    int failures = 0;             // warm-up and timed runs that failed
    bool shown_failure = false;   // the stderr of a failed run has been printed
    bool shown_stderr = false;    // the stderr of a successful run has been printed
};

struct Target {
    std::string name;
    double max_ratio = 0;
};

struct Options {
    int runs = 50;
    int warmup = 5;
    bool json = false;
    std::vector<Target> targets;
    std::vector<Command> commands;
};

// The figures of one command: medians, the 90th percentile of wall time, ratios.
struct Summary {
    bool has_data = false;
    double wall_median = 0, wall_p90 = 0, wall_min = 0, wall_max = 0;
    double cpu_median = 0, rss_median = 0;
    std::optional<double> wall_ratio, cpu_ratio, rss_ratio;
};

[[noreturn]] void usage_error(const std::string& what) {
    std::fprintf(stderr, "startup_bench: %s\n%s", what.c_str(), kUsageText);
    std::exit(kUsage);
}

[[noreturn]] void system_error(const char* what) {
    std::fprintf(stderr, "startup_bench: %s: %s\n", what, std::strerror(errno));
    std::exit(kInternal);
}

int parse_count(const std::string& option, const std::string& text, int min) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || v < min || v > 1000000)
        usage_error(option + " wants a whole number from " + std::to_string(min) + ", not '" + text + "'");
    return static_cast<int>(v);
}

std::vector<std::string> split_words(std::string_view line) {
    std::vector<std::string> words;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        const std::size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
        if (i > start) words.emplace_back(line.substr(start, i - start));
    }
    return words;
}

void add_command(Options& o, std::string name, std::vector<std::string> argv) {
    if (name.empty()) usage_error("a command has an empty name");
    if (argv.empty()) usage_error("command '" + name + "' has no words to run");
    for (const Command& c : o.commands)
        if (c.name == name) usage_error("two commands are named '" + name + "'");
    Command c;
    c.name = std::move(name);
    c.argv = std::move(argv);
    o.commands.push_back(std::move(c));
}

Options parse_args(int argc, char** argv) {
    Options o;
    int i = 1;
    auto value = [&](const std::string& arg, const std::string& option) -> std::string {
        if (arg.size() > option.size() && arg.compare(0, option.size() + 1, option + "=") == 0)
            return arg.substr(option.size() + 1);
        if (i + 1 >= argc) usage_error(option + " needs a value");
        return argv[++i];
    };
    auto is = [](const std::string& arg, const std::string& option) {
        return arg == option || arg.compare(0, option.size() + 1, option + "=") == 0;
    };
    for (; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--") {
            ++i;
            break;
        }
        if (arg == "-h" || arg == "--help") {
            std::fputs(kUsageText, stdout);
            std::exit(kOk);
        } else if (arg == "--json") {
            o.json = true;
        } else if (is(arg, "--runs")) {
            o.runs = parse_count("--runs", value(arg, "--runs"), 1);
        } else if (is(arg, "--warmup")) {
            o.warmup = parse_count("--warmup", value(arg, "--warmup"), 0);
        } else if (is(arg, "--target")) {
            const std::string t = value(arg, "--target");
            const std::size_t eq = t.find('=');
            char* end = nullptr;
            const double x = eq == std::string::npos ? 0 : std::strtod(t.c_str() + eq + 1, &end);
            if (eq == std::string::npos || eq == 0 || end == t.c_str() + eq + 1 || *end != '\0' || !(x > 0))
                usage_error("--target wants NAME=RATIO with a positive ratio, not '" + t + "'");
            o.targets.push_back(Target{t.substr(0, eq), x});
        } else if (arg.size() > 1 && arg[0] == '-') {
            usage_error("unknown option '" + arg + "'");
        } else {
            const std::size_t eq = arg.find('=');
            if (eq == std::string::npos) usage_error("'" + arg + "' is not NAME=COMMAND LINE");
            add_command(o, arg.substr(0, eq), split_words(std::string_view(arg).substr(eq + 1)));
        }
    }
    // After `--`: NAME ARG0 ARG... groups separated by a lone ';'.
    while (i < argc) {
        std::vector<std::string> words;
        for (; i < argc && std::string_view(argv[i]) != ";"; ++i) words.emplace_back(argv[i]);
        ++i;  // the ';'
        if (words.empty()) usage_error("an empty command after '--'");
        std::string name = words.front();
        words.erase(words.begin());
        add_command(o, std::move(name), std::move(words));
    }
    if (o.commands.empty()) usage_error("no command to run");
    for (const Target& t : o.targets) {
        const bool known = std::any_of(o.commands.begin(), o.commands.end(),
                                       [&](const Command& c) { return c.name == t.name; });
        if (!known) usage_error("--target names '" + t.name + "', which is not a command");
    }
    return o;
}

double ms_between(const timespec& a, const timespec& b) {
    return static_cast<double>(b.tv_sec - a.tv_sec) * 1e3 + static_cast<double>(b.tv_nsec - a.tv_nsec) / 1e6;
}

double ms_of(const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; }

std::string read_fd(int fd) {
    std::string out;
    char buf[4096];
    off_t at = 0;
    while (out.size() < kStderrShown) {
        const ssize_t n = ::pread(fd, buf, sizeof buf, at);
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
        at += n;
    }
    if (out.size() > kStderrShown) out.resize(kStderrShown);
    return out;
}

std::string describe_status(int status) {
    if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        const char* name = ::strsignal(WTERMSIG(status));
        return "killed by signal " + std::to_string(WTERMSIG(status)) + (name ? std::string(" (") + name + ")" : "");
    }
    return "status " + std::to_string(status);
}

// The open files every run uses: /dev/null for stdin and stdout, a memory file for
// stderr (emptied before each run).
struct RunFiles {
    int devnull = -1;
    int err = -1;
};

// The processes that were orphaned during a run and reaped after it.
struct Orphans {
    double cpu_ms = 0;
    long maxrss_kib = 0;
    int killed = 0;  // still running after kOrphanGraceMs, and killed
};

// The pids of this process's children, from /proc; empty where the kernel does not
// list them.
std::vector<pid_t> list_children() {
    std::vector<pid_t> out;
    const std::string path = "/proc/self/task/" + std::to_string(::getpid()) + "/children";
    std::FILE* f = std::fopen(path.c_str(), "re");
    if (f == nullptr) return out;
    long pid = 0;
    while (std::fscanf(f, "%ld", &pid) == 1) out.push_back(static_cast<pid_t>(pid));
    std::fclose(f);
    return out;
}

// Reaps every child left after the run's own child was reaped: orphans of its tree
// that the kernel handed to this subreaper. Returns when there are none.
Orphans reap_orphans() {
    Orphans o;
    timespec start{}, now{};
    ::clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        int status = 0;
        rusage ru{};
        const pid_t r = ::wait4(-1, &status, WNOHANG, &ru);
        if (r > 0) {
            o.cpu_ms += ms_of(ru.ru_utime) + ms_of(ru.ru_stime);
            o.maxrss_kib = std::max(o.maxrss_kib, ru.ru_maxrss);
            continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == ECHILD) return o;
        if (r < 0) system_error("wait4");
        ::clock_gettime(CLOCK_MONOTONIC, &now);
        if (ms_between(start, now) > kOrphanGraceMs) {
            for (const pid_t pid : list_children())
                if (::kill(pid, SIGKILL) == 0) ++o.killed;
            start = now;  // their own orphans come next; give them the same time
        }
        const timespec one_ms{0, 1'000'000};
        ::nanosleep(&one_ms, nullptr);
    }
}

// Runs one command once; records a sample when it succeeds, and prints its stderr
// the first time it fails (or succeeds while writing to stderr).
void run_once(Command& c, const RunFiles& files, bool timed, int run_number) {
    std::vector<char*> argv;
    for (std::string& a : c.argv) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (::ftruncate(files.err, 0) != 0 || ::lseek(files.err, 0, SEEK_SET) != 0)
        system_error("emptying the stderr file");

    timespec t0{}, t1{};
    ::clock_gettime(CLOCK_MONOTONIC, &t0);
    const pid_t pid = ::fork();
    if (pid < 0) system_error("fork");
    if (pid == 0) {
        ::dup2(files.devnull, STDIN_FILENO);
        ::dup2(files.devnull, STDOUT_FILENO);
        ::dup2(files.err, STDERR_FILENO);
        ::execvp(argv[0], argv.data());
        const int e = errno;
        const char* msg = std::strerror(e);
        [[maybe_unused]] ssize_t w = ::write(STDERR_FILENO, "startup_bench: cannot run ", 26);
        w = ::write(STDERR_FILENO, argv[0], std::strlen(argv[0]));
        w = ::write(STDERR_FILENO, ": ", 2);
        w = ::write(STDERR_FILENO, msg, std::strlen(msg));
        w = ::write(STDERR_FILENO, "\n", 1);
        ::_exit(127);
    }
    int status = 0;
    rusage ru{};
    while (::wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) system_error("wait4");
    ::clock_gettime(CLOCK_MONOTONIC, &t1);
    const Orphans orphans = reap_orphans();

    std::string failure;
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        failure = describe_status(status);
    else if (orphans.killed > 0)
        failure = std::to_string(orphans.killed) + " of its processes ran on " +
                  std::to_string(static_cast<int>(kOrphanGraceMs / 1000)) + " s after it exited and were killed";
    const char* phase = timed ? "timed run" : "warm-up run";
    if (!failure.empty()) {
        ++c.failures;
        if (!c.shown_failure) {
            c.shown_failure = true;
            std::fprintf(stderr, "startup_bench: %s: %s %d failed (%s); its stderr:\n%s%s", c.name.c_str(), phase,
                         run_number, failure.c_str(), read_fd(files.err).c_str(), "startup_bench: (end of stderr)\n");
        }
        return;
    }
    if (!c.shown_stderr) {
        const std::string err = read_fd(files.err);
        if (!err.empty()) {
            c.shown_stderr = true;
            std::fprintf(stderr, "startup_bench: %s: %s %d succeeded but wrote to stderr:\n%s%s", c.name.c_str(), phase,
                         run_number, err.c_str(), "startup_bench: (end of stderr)\n");
        }
    }
    if (!timed) return;
    Sample s;
    s.wall_ms = ms_between(t0, t1);
    s.cpu_ms = ms_of(ru.ru_utime) + ms_of(ru.ru_stime) + orphans.cpu_ms;
    s.rss_mib = static_cast<double>(std::max(ru.ru_maxrss, orphans.maxrss_kib)) / 1024.0;  // ru_maxrss is in KiB
    c.samples.push_back(s);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The nearest-rank percentile p (0 < p <= 100) of a non-empty list.
double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
    return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

Summary summarise(const Command& c) {
    Summary s;
    if (c.samples.empty()) return s;
    std::vector<double> wall, cpu, rss;
    for (const Sample& x : c.samples) {
        wall.push_back(x.wall_ms);
        cpu.push_back(x.cpu_ms);
        rss.push_back(x.rss_mib);
    }
    s.has_data = true;
    s.wall_median = median(wall);
    s.wall_p90 = percentile(wall, 90);
    s.wall_min = *std::min_element(wall.begin(), wall.end());
    s.wall_max = *std::max_element(wall.begin(), wall.end());
    s.cpu_median = median(cpu);
    s.rss_median = median(rss);
    return s;
}

std::optional<double> ratio(double x, double base) {
    if (!(base > 0)) return std::nullopt;
    return x / base;
}

std::vector<Summary> summarise_all(const std::vector<Command>& commands) {
    std::vector<Summary> out;
    for (const Command& c : commands) out.push_back(summarise(c));
    const Summary& base = out.front();
    for (Summary& s : out) {
        if (!s.has_data || !base.has_data) continue;
        s.wall_ratio = ratio(s.wall_median, base.wall_median);
        s.cpu_ratio = ratio(s.cpu_median, base.cpu_median);
        s.rss_ratio = ratio(s.rss_median, base.rss_median);
    }
    return out;
}

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string fixed(const std::optional<double>& v, int decimals) { return v ? fixed(*v, decimals) : "-"; }

void print_table(const Options& o, const std::vector<Summary>& sums) {
    std::size_t w = 7;
    for (const Command& c : o.commands) w = std::max(w, c.name.size());
    const int nw = static_cast<int>(w);
    std::printf("%-*s %5s %5s %10s %10s %10s %10s %7s %7s %7s\n", nw, "command", "runs", "fail", "wall ms", "p90 ms",
                "cpu ms", "rss MiB", "wall x", "cpu x", "rss x");
    for (std::size_t i = 0; i < o.commands.size(); ++i) {
        const Command& c = o.commands[i];
        const Summary& s = sums[i];
        auto col = [&](double v, int d) { return s.has_data ? fixed(v, d) : std::string("-"); };
        std::printf("%-*s %5zu %5d %10s %10s %10s %10s %7s %7s %7s\n", nw, c.name.c_str(), c.samples.size(), c.failures,
                    col(s.wall_median, 2).c_str(), col(s.wall_p90, 2).c_str(), col(s.cpu_median, 2).c_str(),
                    col(s.rss_median, 1).c_str(), fixed(s.wall_ratio, 2).c_str(), fixed(s.cpu_ratio, 2).c_str(),
                    fixed(s.rss_ratio, 2).c_str());
    }
}

std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (const char ch : s) {
        const auto u = static_cast<unsigned char>(ch);
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += ch;
        } else if (u < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", u);
            out += buf;
        } else {
            out += ch;
        }
    }
    return out + "\"";
}

std::string json_number(const std::optional<double>& v) { return v ? fixed(*v, 4) : "null"; }

// Whether each target is met; a command without successful runs misses its target.
struct Verdict {
    std::string name;
    std::optional<double> wall_ratio;
    double max_ratio = 0;
    bool met = false;
};

std::vector<Verdict> verdicts(const Options& o, const std::vector<Summary>& sums) {
    std::vector<Verdict> out;
    for (const Target& t : o.targets) {
        for (std::size_t i = 0; i < o.commands.size(); ++i) {
            if (o.commands[i].name != t.name) continue;
            const auto& r = sums[i].wall_ratio;
            out.push_back(Verdict{t.name, r, t.max_ratio, r && *r <= t.max_ratio});
        }
    }
    return out;
}

void print_json(const Options& o, const std::vector<Summary>& sums, const std::vector<Verdict>& vs) {
    std::printf("{\n  \"runs\": %d,\n  \"warmup\": %d,\n  \"baseline\": %s,\n  \"commands\": [\n", o.runs, o.warmup,
                json_string(o.commands.front().name).c_str());
    for (std::size_t i = 0; i < o.commands.size(); ++i) {
        const Command& c = o.commands[i];
        const Summary& s = sums[i];
        auto num = [&](double v) { return s.has_data ? fixed(v, 4) : std::string("null"); };
        std::string argv;
        for (const std::string& a : c.argv) argv += (argv.empty() ? "" : ", ") + json_string(a);
        std::printf(
            "    {\"name\": %s, \"argv\": [%s], \"ok_runs\": %zu, \"failed_runs\": %d,\n"
            "     \"wall_ms\": {\"median\": %s, \"p90\": %s, \"min\": %s, \"max\": %s},\n"
            "     \"cpu_ms\": {\"median\": %s}, \"peak_rss_mib\": {\"median\": %s},\n"
            "     \"ratio\": {\"wall\": %s, \"cpu\": %s, \"rss\": %s}}%s\n",
            json_string(c.name).c_str(), argv.c_str(), c.samples.size(), c.failures, num(s.wall_median).c_str(),
            num(s.wall_p90).c_str(), num(s.wall_min).c_str(), num(s.wall_max).c_str(), num(s.cpu_median).c_str(),
            num(s.rss_median).c_str(), json_number(s.wall_ratio).c_str(), json_number(s.cpu_ratio).c_str(),
            json_number(s.rss_ratio).c_str(), i + 1 < o.commands.size() ? "," : "");
    }
    std::printf("  ],\n  \"targets\": [");
    for (std::size_t i = 0; i < vs.size(); ++i)
        std::printf("%s\n    {\"name\": %s, \"wall_ratio\": %s, \"max_ratio\": %s, \"met\": %s}", i ? "," : "",
                    json_string(vs[i].name).c_str(), json_number(vs[i].wall_ratio).c_str(),
                    fixed(vs[i].max_ratio, 4).c_str(), vs[i].met ? "true" : "false");
    std::printf("%s]\n}\n", vs.empty() ? "" : "\n  ");
}

}  // namespace

int main(int argc, char** argv) {
    Options o = parse_args(argc, argv);

    // Orphans of a run's tree come to this process, so that their time is counted.
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) system_error("prctl(PR_SET_CHILD_SUBREAPER)");

    RunFiles files;
    files.devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (files.devnull < 0) system_error("opening /dev/null");
    files.err = ::memfd_create("startup_bench-stderr", MFD_CLOEXEC);
    if (files.err < 0) system_error("memfd_create");

    const std::size_t k = o.commands.size();
    const int rounds = o.warmup + o.runs;
    for (int r = 0; r < rounds; ++r) {
        const bool timed = r >= o.warmup;
        const int number = (timed ? r - o.warmup : r) + 1;
        const auto first = static_cast<std::size_t>(r);  // a round starts one command later than the last
        for (std::size_t j = 0; j < k; ++j) run_once(o.commands[(first + j) % k], files, timed, number);
    }

    const std::vector<Summary> sums = summarise_all(o.commands);
    const std::vector<Verdict> vs = verdicts(o, sums);
    if (o.json) {
        print_json(o, sums, vs);
    } else {
        print_table(o, sums);
        for (const Verdict& v : vs)
            std::printf("%s/%s wall ratio %s: %s the %gx target\n", v.name.c_str(), o.commands.front().name.c_str(),
                        fixed(v.wall_ratio, 2).c_str(), v.met ? "within" : "NOT within", v.max_ratio);
    }
    std::fflush(stdout);

    const bool failed =
        std::any_of(o.commands.begin(), o.commands.end(), [](const Command& c) { return c.failures > 0; });
    if (failed) return kRunFailed;
    const bool missed = std::any_of(vs.begin(), vs.end(), [](const Verdict& v) { return !v.met; });
    return missed ? kTargetMissed : kOk;
}
