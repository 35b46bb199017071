// launchers/base/session_wire.hpp - the frames between a session's holder
// (outside, linux/session_holder.hpp) and its fork server (inside,
// stage/session_server.hpp), on the Unix stream socket pair the holder made
// and the sandbox's plan passes to the server.
//
// A frame is a 4-byte length (host order: both ends are one machine), then
// that many bytes: a kind byte and words, each ending in a NUL. Descriptors
// travel as SCM_RIGHTS in the sendmsg() that carries the frame's length, so
// the reader takes them with the length. Headers only: the stage links
// statically, without the launcher's libraries.
//
//   holder -> server
//     'R' ID CWD N ENV... ARG...
//                            run ARG... in CWD, with the three descriptors sent
//                            (its 0, 1, 2), as a session and process group of its
//                            own; its environment the N words ENV ("NAME=VALUE"),
//                            or (N = 0) the server's
//     'T' MASK ID CWD N ENV... ARG...
//                            as 'R', but a terminal the server makes is the
//                            command's controlling terminal and those of its
//                            0-2 MASK marks ("110": 0 and 1), the others the
//                            descriptors sent, in order; the command runs as a
//                            job (a leader holds the terminal's session), and
//                            the 'S' carries the terminal's master
//     'K' ID SIGNAL          send SIGNAL (decimal) to ID's process group
//     'C' N PORT             connect to PORT of the sandbox's loopback, for
//                            the holder's connection N (an exposed port's client)
//     'Q'                    end the session
//   server -> holder
//     'H'                    the server runs, under every filter of the sandbox
//     'S' ID PID             ID started (PID in the sandbox); for a 'T', with
//                            its terminal's master
//     'E' ID ERRNO           ID could not be started (posix_spawn's error)
//     'X' ID WSTATUS         ID's first process ended (waitpid's status)
//     'L' PID                PID's proxy listeners, HTTP and SOCKS5 (two
//                            descriptors), after its 'S'
//     'G' PID                PID's process group is gone: its listeners may close
//     'D' N [ERRNO]          the connection 'C' asked for (one descriptor), or
//                            the error that came instead
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd_io.hpp"

namespace sbx::launcher::session_wire {

// Far above the control socket's longest line (256 KiB), with every word's NUL.
inline constexpr std::size_t kMaxFrame = std::size_t{1} << 20;
// A run carries three descriptors; a frame never more.
inline constexpr std::size_t kMaxFds = 3;

struct Frame {
    char kind = 0;
    std::vector<std::string> words;
    std::vector<Fd> fds;
};

// The frame's bytes after its length.
inline std::string encode(char kind, std::span<const std::string> words) {
    std::string out(1, kind);
    for (const auto& w : words) {
        out += w;
        out += '\0';
    }
    return out;
}

// Parses the bytes after a frame's length; false when they are no frame (no
// kind, or a last word without its NUL).
inline bool decode(std::string_view bytes, Frame& out) {
    if (bytes.empty()) return false;
    out.kind = bytes.front();
    out.words.clear();
    bytes.remove_prefix(1);
    while (!bytes.empty()) {
        const auto nul = bytes.find('\0');
        if (nul == std::string_view::npos) return false;
        out.words.emplace_back(bytes.substr(0, nul));
        bytes.remove_prefix(nul + 1);
    }
    return true;
}

// Sends one frame with `fds`; false with errno when it could not be sent
// whole (the other end is gone).
inline bool send_frame(int sock, char kind, std::span<const std::string> words, std::span<const int> fds = {}) {
    const std::string body = encode(kind, words);
    if (body.size() > kMaxFrame || fds.size() > kMaxFds) {
        errno = EMSGSIZE;
        return false;
    }
    const std::uint32_t length = static_cast<std::uint32_t>(body.size());
    iovec iov[2]{{const_cast<std::uint32_t*>(&length), sizeof length}, {const_cast<char*>(body.data()), body.size()}};
    const std::size_t total = sizeof length + body.size();
    const ssize_t sent = send_with_fds(sock, iov, fds);
    if (sent < 0) return false;
    // A stream may take part of it: the rest follows without descriptors.
    std::string rest;
    if (static_cast<std::size_t>(sent) < total) {
        rest.append(reinterpret_cast<const char*>(&length), sizeof length);
        rest += body;
        rest.erase(0, static_cast<std::size_t>(sent));
        if (!write_all(sock, rest.data(), rest.size())) return false;
    }
    return true;
}

// What read_frame found.
enum class ReadResult {
    frame,
    closed,
    malformed,
    // A whole frame whose descriptors did not all come (this process had no
    // room for them, EMFILE): its words are read, the descriptors that came
    // closed, and the stream goes on.
    truncated,
};

// Reads exactly `n` bytes into `out` after `got` were read; false on the end
// of the stream or an error.
inline bool read_exactly(int sock, char* out, std::size_t n, std::size_t got = 0) {
    while (got < n) {
        const ssize_t r = ::read(sock, out + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        got += static_cast<std::size_t>(r);
    }
    return true;
}

// Reads one frame (blocking until it is whole), its descriptors owned and
// close-on-exec. `closed`: the other end is gone before a frame began;
// `malformed`: a frame too long or cut short (the stream cannot go on);
// `truncated`: a whole frame, but with its descriptors lost (more than
// kMaxFds, or no room for them here), none kept.
inline ReadResult read_frame(int sock, Frame& out) {
    std::uint32_t length = 0;
    iovec iov{&length, sizeof length};
    alignas(cmsghdr) char control[CMSG_SPACE((kMaxFds + 1) * sizeof(int))]{};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n;
    while ((n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    out.fds.clear();
    if (n <= 0) return ReadResult::closed;
    out.fds = rights_of(msg);
    const bool lost = (msg.msg_flags & MSG_CTRUNC) != 0 || out.fds.size() > kMaxFds;
    if (lost) out.fds.clear();
    if (!read_exactly(sock, reinterpret_cast<char*>(&length), sizeof length, static_cast<std::size_t>(n)))
        return ReadResult::malformed;
    if (length == 0 || length > kMaxFrame) return ReadResult::malformed;
    std::string body(length, '\0');
    if (!read_exactly(sock, body.data(), body.size()) || !decode(body, out)) return ReadResult::malformed;
    return lost ? ReadResult::truncated : ReadResult::frame;
}

}  // namespace sbx::launcher::session_wire
