// The stage's arguments (launchers/stage/stage.hpp): its command line both ways, and
// the orders of a stage started before the plan, read from a real pipe, strictly.
#include <doctest/doctest.h>

#include <unistd.h>

#include <string>
#include <vector>

#include "stage/stage.hpp"

namespace lx = sbx::linux_sandbox;

namespace {

// A stage's arguments as a launcher that makes the mounts gives them.
lx::StageArgs full_args() {
    lx::StageArgs a;
    a.exe_fd = 21;
    a.status_fd = 22;
    a.trace_fd = 23;
    a.filtered = true;
    a.proxy_fd = 24;
    a.forwards = {{"127.0.0.1", 5432, "127.0.0.1:5432"}, {"::1", 8080, "[::1]:8080"}};
    a.pty_fd = 25;
    a.pty_on = {true, false, true};
    a.mounts = {"--bind", "/r", "/r", "--ro-bind", "/r/.git/hooks", "/r/.git/hooks", "--tmpfs", "/h/.ssh",
                "--remount-ro", "/h/.ssh", "--ro-bind-data", "26", "/r/.git/info/exclude",
                "--sized-tmpfs", "4294967296", "/tmp/sbx-1000/run-1"};
    a.mounts_filter_fd = 27;
    a.cwd = "/r/src";
    a.uid = 1000;
    a.gid = 1001;
    a.keep_fds = {9};
    a.loader_env = {"LD_PRELOAD=/x.so"};
    a.write_wall = {"/dev", "/proc", "/r", "/tmp/sbx-1000/run-1"};
    a.connect_fd = 28;
    a.own_dir = "/tmp/sbx-1000/run-1";
    a.env = {"PATH=/usr/bin:/bin", "EMPTY=", "WITH=EQUALS=SIGN"};
    a.command = {"sh", "-c", "echo -- \"$0\"", "--"};
    return a;
}

// Parses `words` (after kStageFlag) as the stage's main does.
bool parse(std::vector<std::string> words, lx::StageArgs& out) {
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    return lx::parse_stage_args(static_cast<int>(argv.size()), argv.data(), out);
}

// The stage's command line of `a`, without the binary and kStageFlag.
std::vector<std::string> after_flag(std::vector<std::string> v) { return {v.begin() + 2, v.end()}; }

// `bytes` written to a pipe, whose read end is returned (the writer closed).
int pipe_holding(const std::string& bytes) {
    int p[2];
    REQUIRE(::pipe(p) == 0);
    REQUIRE(::write(p[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    ::close(p[1]);
    return p[0];
}

void check_same(const lx::StageArgs& got, const lx::StageArgs& want) {
    CHECK(got.exe_fd == want.exe_fd);
    CHECK(got.status_fd == want.status_fd);
    CHECK(got.trace_fd == want.trace_fd);
    CHECK(got.filtered == want.filtered);
    CHECK(got.proxy_fd == want.proxy_fd);
    REQUIRE(got.forwards.size() == want.forwards.size());
    for (std::size_t i = 0; i < got.forwards.size(); ++i) {
        CHECK(got.forwards[i].address == want.forwards[i].address);
        CHECK(got.forwards[i].port == want.forwards[i].port);
        CHECK(got.forwards[i].entry == want.forwards[i].entry);
    }
    CHECK(got.pty_fd == want.pty_fd);
    CHECK(got.pty_on == want.pty_on);
    CHECK(got.mounts == want.mounts);
    CHECK(got.mounts_filter_fd == want.mounts_filter_fd);
    CHECK(got.cwd == want.cwd);
    CHECK(got.uid == want.uid);
    CHECK(got.gid == want.gid);
    CHECK(got.keep_fds == want.keep_fds);
    CHECK(got.loader_env == want.loader_env);
    CHECK(got.write_wall == want.write_wall);
    CHECK(got.connect_fd == want.connect_fd);
    CHECK(got.own_dir == want.own_dir);
    CHECK(got.command == want.command);
}

}  // namespace

TEST_CASE("the stage's command line: what stage_argv writes, parse_stage_args reads back") {
    lx::StageArgs want = full_args();
    want.env.clear();  // the command line carries no environment: bubblewrap's is the command's
    lx::StageArgs got;
    REQUIRE(parse(after_flag(lx::stage_argv(want)), got));
    check_same(got, want);
    CHECK(got.orders_fd == -1);
    // The TMPDIR goes with the connect broker's listener, or not at all.
    lx::StageArgs alone = full_args();
    alone.connect_fd = -1;
    lx::StageArgs refused;
    CHECK_FALSE(parse(after_flag(lx::stage_argv(alone)), refused));
}

TEST_CASE("a stage started before its plan: its command line, then its orders from a pipe") {
    lx::StageArgs want = full_args();
    want.orders_fd = 30;
    const auto argv = lx::stage_waiting_argv(want);
    CHECK(argv.front() == "/proc/self/fd/21");
    lx::StageArgs got;
    REQUIRE(parse(after_flag(argv), got));
    // Nothing of the plan yet: no command, no mount.
    CHECK(got.orders_fd == 30);
    CHECK(got.command.empty());
    CHECK(got.mounts.empty());

    bool gave_up = true;
    CHECK(lx::read_stage_orders(pipe_holding(lx::stage_orders(want)), got, gave_up).empty());
    CHECK_FALSE(gave_up);
    check_same(got, want);
    CHECK(got.env == want.env);
    CHECK(got.orders_fd == 30);
}

// Over 80 lines: one started stage, then each malformed order refused, a few
// lines each.
TEST_CASE("the stage's orders: none means the launcher gave up; the rest is refused, strictly") {
    lx::StageArgs want = full_args();
    want.orders_fd = 30;
    lx::StageArgs started;
    REQUIRE(parse(after_flag(lx::stage_waiting_argv(want)), started));
    const std::string good = lx::stage_orders(want);

    lx::StageArgs got = started;
    bool gave_up = false;
    CHECK(lx::read_stage_orders(pipe_holding(""), got, gave_up).empty());
    CHECK(gave_up);

    SUBCASE("cut short") {
        got = started;
        CHECK(lx::read_stage_orders(pipe_holding(good.substr(0, good.size() - 1)), got, gave_up) ==
              "the stage's orders are cut short");
    }
    SUBCASE("an argument the orders may not hold") {
        got = started;
        const std::string orders_fd("--orders-fd\0" "31\0", 15);
        CHECK(lx::read_stage_orders(pipe_holding(orders_fd + good), got, gave_up) == "the stage's orders are malformed");
    }
    SUBCASE("no command") {
        got = started;
        const std::string head = good.substr(0, good.find(std::string("--\0", 3)));
        CHECK(lx::read_stage_orders(pipe_holding(head), got, gave_up) == "the stage's orders are malformed");
    }
    SUBCASE("another descriptor than the command line's") {
        lx::StageArgs other = want;
        other.status_fd = 40;
        got = started;
        CHECK(lx::read_stage_orders(pipe_holding(lx::stage_orders(other)), got, gave_up) ==
              "the stage's orders name other descriptors than its command line");
    }
    SUBCASE("an environment entry without a name") {
        lx::StageArgs other = want;
        other.env = {"=x"};
        got = started;
        CHECK(lx::read_stage_orders(pipe_holding(lx::stage_orders(other)), got, gave_up) ==
              "the stage's orders are malformed");
    }
    SUBCASE("a relative path for the write wall") {
        lx::StageArgs other = want;
        other.write_wall = {"r"};
        got = started;
        CHECK(lx::read_stage_orders(pipe_holding(lx::stage_orders(other)), got, gave_up) ==
              "the stage's orders are malformed");
    }
    SUBCASE("the weaker sandbox's arguments, and what may not come with them") {
        lx::StageArgs weaker = want;
        weaker.mounts.clear();
        weaker.mounts_filter_fd = -1;
        weaker.cwd.clear();
        weaker.write_wall.clear();
        weaker.weaker = true;
        weaker.filter_fd = 31;
        weaker.grants = {"r:/usr", "l:/home", "w:/r/src"};
        weaker.connect_ports = {40001, 40002};
        weaker.broker_filter_fd = 32;
        weaker.broker_fd = 33;
        got = started;
        REQUIRE(lx::read_stage_orders(pipe_holding(lx::stage_orders(weaker)), got, gave_up).empty());
        CHECK(got.weaker);
        CHECK(got.filter_fd == 31);
        CHECK(got.grants == weaker.grants);
        CHECK(got.connect_ports == weaker.connect_ports);
        CHECK(got.broker_filter_fd == 32);
        CHECK(got.broker_fd == 33);
        lx::StageArgs no_filter = weaker, no_kind = weaker, relative = weaker, with_wall = weaker,
                      broker_alone = weaker, broker_unweaker = want;
        no_filter.filter_fd = -1;
        no_kind.grants = {"x:/usr"};
        relative.grants = {"r:usr"};
        with_wall.write_wall = {"/r"};
        broker_alone.broker_fd = -1;  // the filter without the socket its listener goes back on
        broker_unweaker.broker_filter_fd = 32;  // outside the weaker sandbox: the argument writer leaves it out
        broker_unweaker.broker_fd = 33;
        got = started;
        REQUIRE(lx::read_stage_orders(pipe_holding(lx::stage_orders(broker_unweaker)), got, gave_up).empty());
        CHECK(got.broker_filter_fd == -1);
        for (const auto* broken : {&no_filter, &no_kind, &relative, &with_wall, &broker_alone}) {
            got = started;
            CHECK(lx::read_stage_orders(pipe_holding(lx::stage_orders(*broken)), got, gave_up) ==
                  "the stage's orders are malformed");
        }
    }
    SUBCASE("an environment entry on the command line") {
        lx::StageArgs on_line;
        CHECK_FALSE(parse({"--exe-fd", "3", "--status-fd", "4", "--env", "A=b", "--", "true"}, on_line));
    }
}
