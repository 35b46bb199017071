// The frames between a session's holder and its fork server
// (launchers/base/session_wire.hpp): both ways through a real socket pair,
// descriptors with them, and what is no frame refused.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/session_wire.hpp"

namespace wire = sbx::launcher::session_wire;
using sbx::launcher::Fd;

namespace {

struct Pair {
    Fd a, b;
    Pair() {
        int fds[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
        a = Fd(fds[0]);
        b = Fd(fds[1]);
    }
};

}  // namespace

TEST_CASE("a run frame carries its words and three descriptors, each readable on the other side") {
    Pair p;
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    Fd r(pipe_fds[0]), w(pipe_fds[1]);
    const std::vector<std::string> words{"c1", "/proj", "sh", "-c", "echo 'a b'", ""};
    const int fds[] = {r.get(), w.get(), w.get()};
    REQUIRE(wire::send_frame(p.a.get(), 'R', words, fds));
    REQUIRE(wire::send_frame(p.a.get(), 'Q', {}));
    wire::Frame f;
    REQUIRE(wire::read_frame(p.b.get(), f) == wire::ReadResult::frame);
    CHECK(f.kind == 'R');
    CHECK(f.words == words);
    REQUIRE(f.fds.size() == 3);
    CHECK(::fcntl(f.fds[0].get(), F_GETFD) == FD_CLOEXEC);
    REQUIRE(::write(f.fds[1].get(), "x", 1) == 1);
    char c = 0;
    CHECK(::read(r.get(), &c, 1) == 1);
    CHECK(c == 'x');
    // The next frame comes whole, with none of the first one's descriptors.
    REQUIRE(wire::read_frame(p.b.get(), f) == wire::ReadResult::frame);
    CHECK(f.kind == 'Q');
    CHECK(f.words.empty());
    CHECK(f.fds.empty());
    p.a.reset();
    CHECK(wire::read_frame(p.b.get(), f) == wire::ReadResult::closed);
}

TEST_CASE("what is no frame is refused: a zero or overlong length, a cut frame, a last word without its NUL") {
    wire::Frame f;
    CHECK_FALSE(wire::decode("", f));
    CHECK_FALSE(wire::decode(std::string("Rid\0cwd", 7), f));
    CHECK(wire::decode(std::string("Rid\0", 4), f));
    CHECK(f.words == std::vector<std::string>{"id"});
    for (const std::uint32_t length : {std::uint32_t{0}, static_cast<std::uint32_t>(wire::kMaxFrame + 1)}) {
        Pair p;
        REQUIRE(::write(p.a.get(), &length, sizeof length) == static_cast<ssize_t>(sizeof length));
        CHECK(wire::read_frame(p.b.get(), f) == wire::ReadResult::malformed);
    }
    Pair p;
    const std::uint32_t length = 10;
    REQUIRE(::write(p.a.get(), &length, sizeof length) == static_cast<ssize_t>(sizeof length));
    REQUIRE(::write(p.a.get(), "Rab", 3) == 3);
    p.a.reset();
    CHECK(wire::read_frame(p.b.get(), f) == wire::ReadResult::malformed);
}

TEST_CASE("a frame with more than three descriptors is neither sent nor taken") {
    Pair p;
    const int four[] = {0, 1, 2, 0};
    CHECK_FALSE(wire::send_frame(p.a.get(), 'R', {}, four));
    CHECK(errno == EMSGSIZE);
    // Sent by hand, it is read whole without them, and the next frame follows.
    const std::string body = wire::encode('L', std::vector<std::string>{"7"});
    const std::uint32_t length = static_cast<std::uint32_t>(body.size());
    iovec iov[2]{{const_cast<std::uint32_t*>(&length), sizeof length}, {const_cast<char*>(body.data()), body.size()}};
    REQUIRE(sbx::launcher::send_with_fds(p.a.get(), iov, four) == static_cast<ssize_t>(sizeof length + body.size()));
    REQUIRE(wire::send_frame(p.a.get(), 'G', std::vector<std::string>{"7"}));
    wire::Frame f;
    CHECK(wire::read_frame(p.b.get(), f) == wire::ReadResult::truncated);
    CHECK(f.kind == 'L');
    CHECK(f.fds.empty());
    CHECK(wire::read_frame(p.b.get(), f) == wire::ReadResult::frame);
    CHECK(f.kind == 'G');
}
