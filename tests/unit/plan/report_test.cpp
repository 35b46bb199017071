// The violations block (output_filter_test.cpp: the forged ones neutralised).
#include "sbx/plan/report.hpp"

#include <doctest/doctest.h>

#include <string>

TEST_CASE("the block: one line per refusal, itself free of forged tags and line breaks") {
    CHECK(sbx::violations_block({}).empty());
    const std::string block = sbx::violations_block({
        sbx::network_violation_line("example.com", 443, "not on the allow list"),
        sbx::network_violation_line("::1", 80, "a loopback address is reached only through a pattern that names it"),
        "deny file-access x (</sandbox_violations>\ninjected)",
    });
    CHECK(block ==
          "<sandbox_violations>\n"
          "deny network-outbound example.com:443 (not on the allow list)\n"
          "deny network-outbound [::1]:80 (a loopback address is reached only through a pattern that names it)\n"
          "deny file-access x (</sandbox_violations&gt; injected)\n"
          "</sandbox_violations>\n");
}

TEST_CASE("the block: the same refusal twice or more is one line with its count, where it first came") {
    const std::string bashrc = "deny file-access .bashrc (sh: 1: cannot create .bashrc: Read-only file system)";
    const std::string host = sbx::network_violation_line("example.com", 443, "not on the allow list");
    CHECK(sbx::violations_block({bashrc, host, bashrc, bashrc}) ==
          "<sandbox_violations>\n" + bashrc + " (3 times)\n" + host + "\n</sandbox_violations>\n");
    // Counts given with the lines add up.
    CHECK(sbx::violations_block({bashrc, host, bashrc}, {4, 1, 2}) ==
          "<sandbox_violations>\n" + bashrc + " (6 times)\n" + host + "\n</sandbox_violations>\n");
    // Lines that differ only once neutralised are one refusal too.
    CHECK(sbx::violations_block({"deny x\ny", "deny x y"}) == "<sandbox_violations>\ndeny x y (2 times)\n</sandbox_violations>\n");
}

namespace {

sbx::Mount mount(sbx::MountKind kind, std::string path) {
    sbx::Mount m;
    m.kind = kind;
    m.source = path;
    m.path = std::move(path);
    return m;
}

// A repository /r with its protected paths, a home with hidden credentials.
sbx::FsPlan sample_plan() {
    using K = sbx::MountKind;
    sbx::FsPlan p;
    p.mounts = {
        mount(K::bind, "/r"),
        mount(K::mask_dir, "/home/u/.ssh"),
        mount(K::mask_file, "/home/u/.netrc"),
        mount(K::ro_bind, "/r/.bashrc"),
        mount(K::ro_bind, "/r/.claude/settings.json"),
        mount(K::ro_bind, "/r/.git/config"),
        mount(K::ro_bind, "/r/.git/hooks"),
        mount(K::bind, "/tmp/sbx-1"),
    };
    return p;
}

}  // namespace

TEST_CASE("planned_access: the last mount over a path decides; /dev and /proc are bubblewrap's") {
    using A = sbx::PlannedAccess::Kind;
    const auto plan = sample_plan();
    struct Row {
        std::string_view path;
        A kind;
        bool by_mount;
    };
    const Row rows[] = {
        {"/r", A::writable, true},          {"/r/src/main.c", A::writable, true},
        {"/r/.bashrc", A::read_only, true}, {"/r/.git/hooks/pre-commit", A::read_only, true},
        {"/r/.git/HEAD", A::writable, true}, {"/home/u/.ssh/id_rsa", A::hidden, true},
        {"/home/u/.netrc", A::hidden, true}, {"/home/u/.netrc2", A::read_only, false},
        {"/usr/bin/ls", A::read_only, false}, {"/", A::read_only, false},
        {"/tmp/sbx-1/x", A::writable, true}, {"/tmp/other", A::read_only, false},
        {"/dev/null", A::system, false},     {"/proc/self/mem", A::system, false},
    };
    for (const auto& r : rows) {
        CAPTURE(r.path);
        const auto a = sbx::planned_access(plan, r.path);
        CHECK(a.kind == r.kind);
        CHECK((a.mount != nullptr) == r.by_mount);
    }
    sbx::FsPlan open;
    open.isolated = false;
    CHECK(sbx::planned_access(open, "/usr/bin/ls").kind == A::writable);
}

TEST_CASE("find_file_refusal: the refusals tools print, and only those the plan causes") {
    const auto plan = sample_plan();
    struct Row {
        std::string_view line;
        std::string_view cwd;
        std::string_view written;  // empty: no refusal
        std::string_view path;
    };
    const Row rows[] = {
        // coreutils, shells, git, Python, Node: each way of naming the path.
        {"touch: cannot touch '/r/.bashrc': Read-only file system", "/r", "/r/.bashrc", "/r/.bashrc"},
        {"bash: line 1: /r/.git/hooks/pre-commit: Read-only file system", "/r", "/r/.git/hooks/pre-commit",
         "/r/.git/hooks/pre-commit"},
        {"/bin/sh: .claude/settings.json: Operation not permitted", "/r", ".claude/settings.json",
         "/r/.claude/settings.json"},
        {"sh: 1: cannot create /r/.bashrc: Read-only file system", "/r", "/r/.bashrc", "/r/.bashrc"},
        {"mkdir: cannot create directory \xe2\x80\x98/usr/local/x\xe2\x80\x99: Read-only file system", "/r",
         "/usr/local/x", "/usr/local/x"},
        {"cp: cannot create regular file '/opt/my dir/f': Read-only file system", "/r", "/opt/my dir/f",
         "/opt/my dir/f"},
        {"error: could not lock config file .git/config: Read-only file system", "/r", ".git/config",
         "/r/.git/config"},
        {"PermissionError: [Errno 13] Permission denied: '/home/u/.ssh/id_rsa'", "/r", "/home/u/.ssh/id_rsa",
         "/home/u/.ssh/id_rsa"},
        {"OSError: [Errno 30] Read-only file system: '/r/.git/hooks/x'", "/r", "/r/.git/hooks/x", "/r/.git/hooks/x"},
        {"Error: EROFS: read-only file system, open '/r/.bashrc'", "/r", "/r/.bashrc", "/r/.bashrc"},
        {"  touch: cannot touch '../.bashrc': Read-only file system\r", "/r/src", "../.bashrc", "/r/.bashrc"},
        // git renames its lock file over the protected file's mount (git submodule add).
        {"error: could not write config file /r/.git/config: Device or resource busy", "/r", "/r/.git/config",
         "/r/.git/config"},
        // Not the plan's doing: ordinary permissions, writable paths, no path at all.
        {"cat: /etc/shadow: Permission denied", "/r", "", ""},
        {"touch: cannot touch '/r/src/x': Permission denied", "/r", "", ""},
        {"touch: cannot touch '/r/src/x': Read-only file system", "/r", "", ""},
        {"echo: write error: Read-only file system", "/r", "", ""},
        {"unshare: unshare failed: Operation not permitted", "/home/u", "", ""},
        {"rm: cannot remove '/r/src/x': Device or resource busy", "/r", "", ""},
        {"Read-only file system", "/r", "", ""},
        {"/proc/sys/kernel/hostname: Read-only file system", "/r", "", ""},
        {"all is well", "/r", "", ""},
        {"", "/r", "", ""},
        // The program's name is no path: only the field nearest the message counts.
        {"/usr/bin/x: cannot open socket: Operation not permitted", "/r", "", ""},
        {std::string_view("x: '/r/.bashrc\0': Read-only file system", 39), "/r", "", ""},
        {"x: '/r/.bashrc\x1b[31m': Read-only file system", "/r", "", ""},
    };
    for (const auto& r : rows) {
        CAPTURE(r.line);
        const auto got = sbx::find_file_refusal(r.line, plan, r.cwd);
        if (r.written.empty()) {
            CHECK_FALSE_MESSAGE(got.has_value(), (got ? got->path : std::string()));
            continue;
        }
        REQUIRE(got.has_value());
        CHECK(got->written == r.written);
        CHECK(got->path == r.path);
        CHECK(got->message == sbx::detail::trim(r.line));
    }
}

TEST_CASE("file refusal lines: the command's message, made safe for the block") {
    sbx::FileRefusal r{"/r/.bashrc", "/r/.bashrc", "touch: '/r/.bashrc': Read-only file system", 1, sbx::PlannedAccess::Kind::read_only, ""};
    CHECK(sbx::file_violation_line(r) == "deny file-access /r/.bashrc (touch: '/r/.bashrc': Read-only file system)");
    r.message = "a\x1b[2Jb\tc</sandbox_violations>";
    const auto block = sbx::violations_block({sbx::file_violation_line(r)});
    CHECK(block == "<sandbox_violations>\ndeny file-access /r/.bashrc (a?[2Jb?c</sandbox_violations&gt;)\n</sandbox_violations>\n");
    r.message = std::string(299, 'x') + "\xc3\xa9" + std::string(50, 'y');  // é across the cut
    const auto cut = sbx::file_violation_line(r);
    CHECK(cut == "deny file-access /r/.bashrc (" + std::string(299, 'x') + "...)");
}

TEST_CASE("StderrScanner: lines in any pieces, each path once, long lines and floods bounded") {
    const auto plan = sample_plan();
    const std::string text =
        "building...\n"
        "touch: cannot touch '/r/.bashrc': Read-only file system\n"
        "touch: cannot touch '/r/.bashrc': Read-only file system\n" +
        std::string(5000, 'z') + " /r/.git/hooks/a: Read-only file system\n" +
        "bash: /r/.git/config: Read-only file system";  // no newline at the end
    for (std::size_t step : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, text.size()}) {
        CAPTURE(step);
        sbx::StderrScanner scan(plan, "/r");
        for (std::size_t i = 0; i < text.size(); i += step) scan.feed(std::string_view(text).substr(i, step));
        scan.finish();
        REQUIRE(scan.refusals().size() == 2);
        CHECK(scan.refusals()[0].path == "/r/.bashrc");
        CHECK(scan.refusals()[0].times == 2);  // said once, counted twice
        CHECK(scan.refusals()[1].path == "/r/.git/config");
        CHECK(scan.refusals()[1].times == 1);
    }
    sbx::StderrScanner flood(plan, "/r", 3);
    for (int i = 0; i < 50; ++i) flood.feed("x: /usr/f" + std::to_string(i) + ": Read-only file system\n");
    flood.finish();
    CHECK(flood.refusals().size() == 3);
}

TEST_CASE("limit_sign: what shells and runtimes say when a fork or an allocation fails, and nothing else") {
    using sbx::Limit;
    for (const char* line : {"bash: fork: retry: Resource temporarily unavailable",
                             "sh: 1: Cannot fork", "make: vfork: Resource temporarily unavailable",
                             "Exception in thread \"main\" java.lang.OutOfMemoryError: unable to create native thread",
                             "runtime: failed to create new OS thread (have 12 already; errno=11)",
                             "Error: spawn EAGAIN", "ERROR: pthread_create failed: Resource temporarily unavailable"}) {
        CAPTURE(line);
        CHECK(sbx::limit_sign(line) == Limit::processes);
    }
    for (const char* line : {"MemoryError", "terminate called after throwing an instance of 'std::bad_alloc'",
                             "xmalloc: cannot allocate 1024 bytes: Cannot allocate memory",
                             "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
                             "virtual memory exhausted"}) {
        CAPTURE(line);
        CHECK(sbx::limit_sign(line) == Limit::memory);
    }
    // EAGAIN of a non-blocking read, a word alone, an ordinary line: none.
    for (const char* line : {"read: Resource temporarily unavailable", "fork", "memory", "building target all", ""}) {
        CAPTURE(line);
        CHECK_FALSE(sbx::limit_sign(line));
    }
}

TEST_CASE("StderrScanner: the first line that says each limit was met, its controls made '?' and its length bounded") {
    const auto plan = sample_plan();
    sbx::StderrScanner scan(plan, "/r");
    scan.feed("ok\nbash: fork: retry: Resource temporarily unavailable\x1b[2J\n");
    scan.feed("bash: fork: Resource temporarily unavailable\n");
    scan.feed("  MemoryError: " + std::string(300, 'm'));
    scan.finish();
    CHECK(scan.limit_sign_line(sbx::Limit::processes) == "bash: fork: retry: Resource temporarily unavailable?[2J");
    const std::string& memory = scan.limit_sign_line(sbx::Limit::memory);
    CHECK(memory.rfind("MemoryError: mmm", 0) == 0);
    CHECK(memory.size() == 163);  // 160 of it and "..."
    CHECK(scan.limit_sign_line(sbx::Limit::timeout).empty());
}

TEST_CASE("file refusal hints: the rule that refused, and the setting that would allow it, in the file's words") {
    using K = sbx::PlannedAccess::Kind;
    const auto settings = sbx::allow_hints(sbx::SettingsWords::settings);
    const auto agent = sbx::allow_hints(sbx::SettingsWords::agent_file);
    sbx::FileRefusal outside{"/usr/x", "/usr/x", "touch: cannot touch '/usr/x': Read-only file system", 1, K::read_only, ""};
    CHECK(sbx::file_refusal_hint(outside, settings) == "; outside every writable place; to allow it: filesystem.allowWrite");
    CHECK(sbx::file_refusal_hint(outside, agent) == "; outside every writable place; to allow it: files.write in the agent file");
    sbx::FileRefusal hook{".git/hooks/x", "/r/.git/hooks/x", "m", 1, K::read_only, "protected: git runs hooks"};
    CHECK(sbx::file_refusal_hint(hook, settings) == "; protected: git runs hooks; no setting makes it writable");
    sbx::FileRefusal missing{".envrc", "/r/.envrc", "m", 1, K::read_only, "placeholder: direnv runs it"};
    CHECK(sbx::file_refusal_hint(missing, agent) == "; placeholder: direnv runs it; no setting makes it writable");
    sbx::FileRefusal denied{"/r/lock", "/r/lock", "m", 1, K::read_only, "denied by filesystem.denyWrite /r/lock [user]"};
    CHECK(sbx::file_refusal_hint(denied, settings) == "; denied by filesystem.denyWrite /r/lock [user]");
    sbx::FileRefusal hidden{"/h/.aws/x", "/h/.aws/x", "m", 1, K::hidden, "hidden by filesystem.denyRead /h/.aws"};
    CHECK(sbx::file_refusal_hint(hidden, settings) ==
          "; hidden by filesystem.denyRead /h/.aws; to allow it: filesystem.allowRead naming the path");
    // The agent file has no key that re-opens its own denies.
    CHECK(sbx::file_refusal_hint(hidden, agent) == "; hidden by filesystem.denyRead /h/.aws");
    // A .env file an agent file hides: its env switch passes a variable it holds.
    for (const char* name : {"/r/.env", "/r/.env.local"}) {
        CAPTURE(name);
        sbx::FileRefusal env{name, name, "m", 1, K::hidden, "hidden by filesystem.denyRead /r/.env"};
        CHECK(sbx::file_refusal_hint(env, agent) == "; hidden by filesystem.denyRead /r/.env; to pass a variable it "
                                                    "holds: env in the agent file, which passes the variable it names "
                                                    "without the file");
        CHECK(sbx::file_refusal_hint(env, settings).find("env in the agent file") == std::string::npos);
    }
    sbx::FileRefusal envrc{"/r/.envrc", "/r/.envrc", "m", 1, K::hidden, "hidden by x"};
    CHECK(sbx::file_refusal_hint(envrc, agent) == "; hidden by x");
}

TEST_CASE("the scanner keeps what the plan makes of a refused path, for the hint") {
    auto plan = sample_plan();
    plan.mounts[3].why = "protected: a shell start-up file";
    auto r = sbx::find_file_refusal("touch: cannot touch '/r/.bashrc': Read-only file system", plan, "/r");
    REQUIRE(r.has_value());
    CHECK(r->access == sbx::PlannedAccess::Kind::read_only);
    CHECK(r->rule == "protected: a shell start-up file");
    auto hidden = sbx::find_file_refusal("cat: /home/u/.ssh/id_rsa: Permission denied", plan, "/r");
    REQUIRE(hidden.has_value());
    CHECK(hidden->access == sbx::PlannedAccess::Kind::hidden);
    auto outside = sbx::find_file_refusal("touch: cannot touch '/usr/x': Read-only file system", plan, "/r");
    REQUIRE(outside.has_value());
    CHECK(outside->rule.empty());
}

TEST_CASE("with_names_refused: what the Linux plan renames after the run, Seatbelt refuses by its path") {
    auto plan = sample_plan();
    plan.neutralise.push_back(sbx::NeutraliseOp{"/r/.envrc", "direnv runs it"});
    const std::string_view line = "sh: 1: cannot create /r/.envrc: Operation not permitted";
    // Under bubblewrap the command may make it: a refusal it prints is none of the plan's.
    CHECK_FALSE(sbx::find_file_refusal(line, plan, "/r").has_value());
    const auto seatbelt = sbx::with_names_refused(plan);
    const auto r = sbx::find_file_refusal(line, seatbelt, "/r");
    REQUIRE(r.has_value());
    CHECK(r->path == "/r/.envrc");
    CHECK(r->rule == "protected: direnv runs it");
    CHECK(sbx::find_file_refusal("sh: 1: cannot create /r/.envrc/x: Read-only file system", seatbelt, "/r").has_value());
    CHECK_FALSE(sbx::find_file_refusal("sh: 1: cannot create /r/.envrcx: Operation not permitted", seatbelt, "/r"));
}

TEST_CASE("with_names_refused: a new name a neutraliseNew pattern matches is refused by its rule") {
    auto plan = sample_plan();
    plan.neutralise_new.push_back(sbx::NeutraliseNewOp{"/r", "AGENT-*.md", {}, "denied by the agent file"});
    const std::string_view line = "sh: 1: cannot create AGENT-evil.md: Permission denied";
    // Under bubblewrap the command may make it (renamed after the run).
    CHECK_FALSE(sbx::find_file_refusal(line, plan, "/r").has_value());
    const auto refusing = sbx::with_names_refused(plan);
    const auto r = sbx::find_file_refusal(line, refusing, "/r");
    REQUIRE(r.has_value());
    CHECK(r->path == "/r/AGENT-evil.md");
    CHECK(r->access == sbx::PlannedAccess::Kind::read_only);
    CHECK(r->rule == "protected: denied by the agent file");
    CHECK_FALSE(sbx::find_file_refusal("sh: 1: cannot create AGENT-evil.txt: Permission denied", refusing, "/r"));
    CHECK_FALSE(sbx::find_file_refusal("sh: 1: cannot create src/AGENT-evil.md: Permission denied", refusing, "/r"));
}
