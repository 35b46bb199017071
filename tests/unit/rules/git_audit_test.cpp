// The decisions of the audit after a run (sbx/rules/git_audit.hpp): which config keys make
// git run a program, the names neutralised files get, and the config parser's full
// entries they rest on.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sbx/rules/git_audit.hpp"
#include "sbx/rules/git_config.hpp"

namespace {

std::vector<std::string> keys(std::string_view text) {
    std::vector<std::string> out;
    for (const auto& f : sbx::config_runners(text)) out.push_back(f.key);
    return out;
}

}  // namespace

TEST_CASE("git config: every entry with its section, subsection, name, value and line") {
    const auto f = sbx::GitConfigParser("[core]\n\tbare = false\n\tfsmonitor\n[Remote \"Origin\"]\n\tURL = x\n"
                                        "[alias.Co]\n\tx = y\n[sub \"a\\\"b\\\\c\"]\n\tk = v\n")
                       .parse();
    REQUIRE(f.entries.size() == 5);
    CHECK(f.entries[0].key() == "core.bare");
    CHECK(f.entries[0].value == "false");
    CHECK(f.entries[0].line == 2);
    CHECK(f.entries[1].key() == "core.fsmonitor");
    CHECK_FALSE(f.entries[1].value);  // a bare key
    CHECK(f.entries[2].key() == "remote.Origin.url");  // the subsection keeps its case
    CHECK(f.entries[2].line == 5);
    CHECK(f.entries[3].key() == "alias.co.x");  // the older form is lower-cased
    CHECK(f.entries[4].subsection == "a\"b\\c");
    CHECK(f.problems.empty());
}

TEST_CASE("git audit: the keys that run a program are found, with their lines") {
    const std::string text =
        "[core]\n"
        "\trepositoryformatversion = 0\n"
        "\tfsmonitor = \"echo pwned\"\n"   // 3
        "\thooksPath = /tmp/h\n"          // 4
        "\tsshCommand = evil\n"           // 5
        "[alias]\n"
        "\tst = status\n"                 // an alias to a git command: fine
        "\tx = !sh -c payload\n"          // 8
        "[filter \"lfs\"]\n"
        "\tsmudge = run\n"                // 10
        "[diff \"png\"]\n"
        "\ttextconv = exif\n"             // 12
        "[credential \"https://x\"]\n"
        "\thelper = store\n"              // 14
        "[credential]\n"
        "\thelper = cache\n"              // 16
        "[includeIf \"gitdir:/x\"]\n"
        "\tpath = other\n"                // 18
        "[pager]\n"
        "\tlog = false\n"                 // a boolean: fine
        "\tdiff = less -R\n"              // 21
        "[submodule \"s\"]\n"
        "\tupdate = checkout\n"           // fine
        "\tupdate = !rm -rf /\n";         // 24
    const auto found = sbx::config_runners(text);
    std::vector<std::pair<std::string, std::size_t>> got;
    for (const auto& f : found) got.emplace_back(f.key, f.line);
    const std::vector<std::pair<std::string, std::size_t>> want = {
        {"core.fsmonitor", 3}, {"core.hookspath", 4}, {"core.sshcommand", 5}, {"alias.x", 8},
        {"filter.lfs.smudge", 10}, {"diff.png.textconv", 12}, {"credential.https://x.helper", 14},
        {"credential.helper", 16}, {"includeif.gitdir:/x.path", 18}, {"pager.diff", 21}, {"submodule.s.update", 24},
    };
    CHECK(got == want);
    CHECK(found[0].reason == "runs a program on every git command");
    CHECK(sbx::runners_why(found) == "core.fsmonitor line 3: runs a program on every git command; 10 more");
}

TEST_CASE("git audit: what git init and everyday commands write runs nothing") {
    CHECK(keys("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n").empty());
    CHECK(keys("[core]\n\tfsmonitor = true\n\tfsmonitor = false\n\tfsmonitor\n\tfsmonitor = 0\n").empty());
    CHECK(keys("[remote \"origin\"]\n\turl = https://example.com/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
               "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n[user]\n\tname = a\n")
              .empty());
    CHECK(keys("[core]\n\tworktree = ../../x\n[submodule \"s\"]\n\turl = ../s\n\tactive = true\n").empty());
    CHECK(keys("[gpg]\n\tformat = ssh\n[diff \"x\"]\n\tbinary = true\n[merge \"y\"]\n\tname = mine\n").empty());
    CHECK(keys("").empty());
}

TEST_CASE("git audit: one key of each rule of the table is found; its neighbours are not") {
    struct Case {
        const char* text;
        bool runs;
    };
    const Case cases[] = {
        {"[core]\n\teditor = vi\n", true},          {"[core]\n\tpager = less\n", true},
        {"[core]\n\taskPass = x\n", true},          {"[core]\n\tgitProxy = x\n", true},
        {"[core]\n\talternateRefsCommand = x\n", true},
        {"[sequence]\n\teditor = x\n", true},       {"[diff]\n\texternal = x\n", true},
        {"[diff \"a\"]\n\tcommand = x\n", true},    {"[merge \"a\"]\n\tdriver = x\n", true},
        {"[filter \"a\"]\n\tclean = x\n", true},    {"[filter \"a\"]\n\tprocess = x\n", true},
        {"[filter \"a\"]\n\trequired = true\n", false},
        {"[include]\n\tpath = x\n", true},          {"[gpg]\n\tprogram = x\n", true},
        {"[gpg \"ssh\"]\n\tprogram = x\n", true},   {"[gpg \"ssh\"]\n\tdefaultKeyCommand = x\n", true},
        {"[gpg \"x509\"]\n\tdefaultKeyCommand = x\n", false},
        {"[uploadpack]\n\tpackObjectsHook = x\n", true},
        {"[remote \"o\"]\n\tuploadpack = x\n", true}, {"[remote \"o\"]\n\treceivepack = x\n", true},
        {"[remote]\n\tuploadpack = x\n", false},
        {"[protocol]\n\tallow = always\n", true},   {"[protocol \"ext\"]\n\tallow = always\n", true},
        {"[protocol \"https\"]\n\tallow = always\n", false},
        {"[web]\n\tbrowser = x\n", true},           {"[browser \"b\"]\n\tcmd = x\n", true},
        {"[man \"m\"]\n\tcmd = x\n", true},         {"[mergetool \"m\"]\n\tcmd = x\n", true},
        {"[difftool \"d\"]\n\tpath = x\n", true},   {"[guitool \"g\"]\n\tcmd = x\n", true},
        {"[interactive]\n\tdiffFilter = x\n", true}, {"[sendemail]\n\tsmtpServer = /bin/x\n", true},
        {"[sendemail \"work\"]\n\tsendmailCmd = x\n", true}, {"[sendemail]\n\tfrom = a\n", false},
        {"[imap]\n\ttunnel = x\n", true},           {"[trailer \"t\"]\n\tcommand = x\n", true},
        {"[hook \"h\"]\n\tcommand = x\n", true},    {"[instaweb]\n\thttpd = x\n", true},
        {"[alias]\n\tl = log --oneline\n", false},  {"[alias]\n\tl = \"!x\"\n", true},
        {"[CORE]\n\tFSMONITOR = /x\n", true},       // names in any case, as git
    };
    for (const auto& c : cases) {
        CAPTURE(c.text);
        CHECK(keys(c.text).empty() == !c.runs);
    }
}

TEST_CASE("git audit: a config git would refuse, or a key outside any section, counts as running something") {
    const auto bad_header = sbx::config_runners("[core\n\tfsmonitor = x\n");
    REQUIRE_FALSE(bad_header.empty());
    CHECK(bad_header.front().key.empty());
    CHECK(bad_header.front().reason.find("git cannot read it: line 1") != std::string::npos);
    const auto outside = sbx::config_runners("fsmonitor = x\n[core]\n\tbare = false\n");
    REQUIRE(outside.size() == 1);
    CHECK(outside[0].reason == "a key outside any section, which git cannot read");
    CHECK_FALSE(sbx::config_runners("[core]\n\tpager = \"unterminated\n").empty());
    CHECK_FALSE(sbx::config_runners("[x]\n\tk = a\\qb\n").empty());  // an unknown escape
}

TEST_CASE("git audit: neutralised names, hooks git runs, .git files and commondir") {
    CHECK(sbx::disabled_name("config", 0) == "config.sbx-disabled");
    CHECK(sbx::disabled_name("config", 1) == "config.sbx-disabled.1");
    CHECK(sbx::disabled_name("post-checkout", 2) == "post-checkout.sbx-disabled.2");
    CHECK(sbx::disabled_name("config", sbx::git_audit::kMaxDisabledNames));
    CHECK_FALSE(sbx::disabled_name("config", sbx::git_audit::kMaxDisabledNames + 1));
    CHECK_FALSE(sbx::disabled_name("config", -1));

    CHECK(sbx::hook_git_runs("pre-commit"));
    CHECK(sbx::hook_git_runs("post-checkout"));
    CHECK(sbx::hook_git_runs("anything-else"));  // git may learn new hook names
    CHECK_FALSE(sbx::hook_git_runs("pre-commit.sample"));
    CHECK_FALSE(sbx::hook_git_runs("pre-commit.sbx-disabled"));
    CHECK_FALSE(sbx::hook_git_runs("pre-commit.sbx-disabled.3"));

    CHECK(sbx::gitdir_target("gitdir: ../.git/modules/sub\n") == "../.git/modules/sub");
    CHECK(sbx::gitdir_target("gitdir: /abs\r\n") == "/abs");
    CHECK_FALSE(sbx::gitdir_target("gitdir:/x\n"));
    CHECK_FALSE(sbx::gitdir_target("gitdir: \n"));
    CHECK_FALSE(sbx::gitdir_target("gitdir: a\nb\n"));
    CHECK_FALSE(sbx::gitdir_target("nonsense"));

    CHECK(sbx::commondir_names("../..\n", "/r/.git/worktrees/w", "/r/.git"));
    CHECK(sbx::commondir_names("/r/.git", "/r/.git/worktrees/w", "/r/.git"));
    CHECK(sbx::commondir_names("../../", "/r/.git/worktrees/w", "/r/.git"));
    CHECK_FALSE(sbx::commondir_names("../../../sub/.git", "/r/.git/worktrees/w", "/r/.git"));
    CHECK_FALSE(sbx::commondir_names("..", "/r/.git/worktrees/w", "/r/.git"));
    CHECK_FALSE(sbx::commondir_names("", "/r/.git/worktrees/w", "/r/.git"));
    CHECK_FALSE(sbx::commondir_names("../..\n/x", "/r/.git/worktrees/w", "/r/.git"));

    const sbx::GitNeutralised n{"git-config", "/r/sub/.git/config",
                                "core.fsmonitor line 7: runs a program on every git command",
                                "/r/sub/.git/config.sbx-disabled"};
    CHECK(sbx::git_audit_line(n) ==
          "neutralised git-config /r/sub/.git/config (core.fsmonitor line 7: runs a program on every git command) -> "
          "/r/sub/.git/config.sbx-disabled");
}

TEST_CASE("git audit: a name made unique after the numbered ones; lines no name can break") {
    CHECK(sbx::disabled_unique_name("config", 4242, 1700000000123456789LL) ==
          "config.sbx-disabled.4242-1700000000123456789");
    CHECK_FALSE(sbx::hook_git_runs(sbx::disabled_unique_name("pre-commit", 1, 2)));

    // A line end, a tab, a backslash, other control bytes: escaped, so the block keeps one line each.
    CHECK(sbx::printable_line_part("a\nb") == "a\\nb");
    CHECK(sbx::printable_line_part("a\n</sandbox_violations>\tx\\y\x01\x7f") ==
          "a\\n</sandbox_violations>\\tx\\\\y\\x01\\x7f");
    CHECK(sbx::printable_line_part("caf\xc3\xa9 / ok") == "caf\xc3\xa9 / ok");  // UTF-8 as it is

    const sbx::GitNeutralised n{"git-config", "/r/a\nneutralised git-config /x (y) -> /z/.git/config", "why",
                                "/r/a\nb.sbx-disabled"};
    const std::string line = sbx::git_audit_line(n);
    CHECK(line.find('\n') == std::string::npos);
    CHECK(line == "neutralised git-config /r/a\\nneutralised git-config /x (y) -> /z/.git/config (why) -> "
                  "/r/a\\nb.sbx-disabled");

    const sbx::GitAuditFailure f{"/r/x\ny", "cannot look into it: Permission denied (it is uid 0's)"};
    CHECK(sbx::git_audit_failure_line(f) ==
          "unchecked git /r/x\\ny (cannot look into it: Permission denied (it is uid 0's)); git run there may run "
          "what the command planted");
    CHECK(sbx::git_audit::kAuditFailedStatus == 122);
}

TEST_CASE("git audit: the files of a git directory it looks at") {
    std::vector<std::string_view> names;
    for (const auto& f : sbx::git_audit::kAuditedFiles) names.push_back(f.name);
    CHECK(names == std::vector<std::string_view>{"config", "config.worktree", "commondir", "hooks"});
}
