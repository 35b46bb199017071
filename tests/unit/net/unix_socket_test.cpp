// Which Unix socket paths a command may connect to (sbx/net/unix_socket.hpp):
// listed sockets and folders, the command's own temporary folder, every socket,
// and the line a refusal makes.
#include "sbx/net/unix_socket.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

using sbx::net::decide_unix_socket;
using sbx::net::UnixSocketEntry;
using sbx::net::UnixSocketRules;
using V = sbx::net::UnixSocketVerdict;

UnixSocketRules rules() {
    UnixSocketRules r;
    // /var/run is a link to /run when the run began.
    r.entries.push_back(UnixSocketEntry{"/var/run/docker.sock", "/run/docker.sock", false});
    r.entries.push_back(UnixSocketEntry{"/home/u/.agents", "", true});
    r.own = "/tmp/sbx-0123";
    return r;
}

}  // namespace

TEST_CASE("unix sockets: a listed path, by its name or where it led when the run began, dials where it led") {
    const auto r = rules();
    for (const char* path : {"/var/run/docker.sock", "/run/docker.sock"}) {
        CAPTURE(path);
        const auto d = decide_unix_socket(r, path);
        CHECK(d.verdict == V::listed);
        CHECK(d.entry == 0);
        CHECK(d.dial == "/run/docker.sock");
    }
    // Beside it, above it, or a name that only starts the same: refused.
    for (const char* path : {"/run/docker.sock2", "/run/docker", "/run", "/run/containerd/containerd.sock", "/"}) {
        CAPTURE(path);
        const auto d = decide_unix_socket(r, path);
        CHECK(d.verdict == V::refused);
        CHECK(d.why == "not among the Unix sockets open to the command");
        CHECK(d.dial.empty());
    }
}

TEST_CASE("unix sockets: a listed folder opens the sockets under it, not itself") {
    const auto r = rules();
    const auto d = decide_unix_socket(r, "/home/u/.agents/ssh/agent.1");
    CHECK(d.verdict == V::listed);
    CHECK(d.entry == 1);
    CHECK(d.dial == "/home/u/.agents/ssh/agent.1");
    CHECK(decide_unix_socket(r, "/home/u/.agents").verdict == V::refused);
    CHECK(decide_unix_socket(r, "/home/u/.agentsX/s").verdict == V::refused);
    // A folder given through a link dials under where it led.
    UnixSocketRules linked;
    linked.entries.push_back(UnixSocketEntry{"/var/run/user/1000", "/run/user/1000", true});
    for (const char* path : {"/var/run/user/1000/bus", "/run/user/1000/bus"}) {
        CAPTURE(path);
        const auto l = decide_unix_socket(linked, path);
        CHECK(l.verdict == V::listed);
        CHECK(l.dial == "/run/user/1000/bus");
    }
}

TEST_CASE("unix sockets: the command's own temporary folder is its own; every socket with `all`") {
    const auto r = rules();
    const auto own = decide_unix_socket(r, "/tmp/sbx-0123/server/s.sock");
    CHECK(own.verdict == V::own);
    CHECK(own.dial == "/tmp/sbx-0123/server/s.sock");
    CHECK(decide_unix_socket(r, "/tmp/sbx-0123").verdict == V::refused);
    CHECK(decide_unix_socket(r, "/tmp/sbx-01234/s").verdict == V::refused);
    CHECK(decide_unix_socket(r, "/tmp/.X11-unix/X0").verdict == V::refused);
    UnixSocketRules none;
    CHECK(decide_unix_socket(none, "/tmp/sbx-0123/s").verdict == V::refused);
    CHECK(decide_unix_socket(none, "/run/docker.sock").why == "no Unix socket is open to the command");
    UnixSocketRules all;
    all.all = true;
    const auto a = decide_unix_socket(all, "/run/docker.sock");
    CHECK(a.verdict == V::all);
    CHECK(a.dial == "/run/docker.sock");
}

TEST_CASE("unix sockets: what glibc asks on every lookup is refused without a report") {
    const auto r = rules();
    for (const char* path : {"/run/nscd/socket", "/var/run/nscd/socket", "/run/systemd/userdb/io.systemd.Multiplexer",
                             "/run/systemd/resolve/io.systemd.Resolve"}) {
        CAPTURE(path);
        const auto d = decide_unix_socket(r, path);
        CHECK(d.verdict == V::refused);
        CHECK(d.quiet);
    }
    CHECK_FALSE(decide_unix_socket(r, "/run/docker.sock2").quiet);
    // Listed, it is reached like any other.
    UnixSocketRules listed;
    listed.entries.push_back(UnixSocketEntry{"/run/nscd/socket", "", false});
    CHECK(decide_unix_socket(listed, "/run/nscd/socket").verdict == V::listed);
}

TEST_CASE("unix sockets: a path the launcher could not resolve is refused, whatever the rules") {
    UnixSocketRules all;
    all.all = true;
    for (const char* path : {"", "run/docker.sock", "/run/../run/docker.sock", "/run//docker.sock", "/run/"}) {
        CAPTURE(path);
        const auto d = decide_unix_socket(all, path);
        CHECK(d.verdict == V::refused);
        CHECK(d.why == "the launcher could not tell where the path leads");
    }
}

TEST_CASE("unix sockets: the refusal's line names the path, the name the command used and its program") {
    using sbx::net::unix_socket_violation_line;
    CHECK(unix_socket_violation_line("/run/docker.sock", "/var/run/docker.sock", "docker", "not open") ==
          "deny unix-socket /run/docker.sock (not open; named /var/run/docker.sock; by docker)");
    CHECK(unix_socket_violation_line("/run/docker.sock", "/run/docker.sock", "", "not open") ==
          "deny unix-socket /run/docker.sock (not open)");
    // The command chose the name and its program's: no line break gets through.
    CHECK(unix_socket_violation_line("/tmp/a\nb", "x\ty", "p\x1b", "r") == "deny unix-socket /tmp/a?b (r; named x?y; by p?)");
}
