// sbx/net/unix_socket.hpp - which Unix socket paths a command may connect to.
//
// A Unix socket by path reaches whatever listens there, outside the sandbox as
// well as in it: the Docker daemon, the ssh-agent, a database. The network
// namespace does not separate them, so sbx-linux's launcher decides each
// connect() itself (launchers/linux/connect_broker.hpp): it resolves the path
// the command named the way the command's own view of the file tree would,
// asks decide_unix_socket() below, and connects the command's socket for it to
// the path the decision names, or refuses with EACCES and reports the path.
// The decision is by path, as the settings name sockets:
//   - `all` (allowAllUnixSockets): every socket;
//   - an entry of allowUnixSockets (an agent file's network.sockets): the socket
//     at that path, or every socket under it where it is a folder. Each entry's
//     symbolic links are resolved once, when the run begins (`path`); the
//     launcher dials that path and follows no link on the way, so a link put
//     there later leads nowhere;
//   - the command's own temporary folder (`own`, its TMPDIR): sockets it made
//     itself, which nothing outside listens on;
//   - anything else is refused: the line in the violations block names the
//     path and the setting that would open it.
// Abstract sockets (a name starting with a NUL byte) belong to a network
// namespace, and the sandbox has its own: the launcher connects them there
// without asking. Pure functions, tested by tables; the resolving and the
// connecting are the launcher's.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/ascii.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"

namespace sbx::net {

struct UnixSocketEntry {
    std::string given;    // as the settings name it: absolute, normalised
    std::string path;     // where it leads, its links resolved when the run began; empty: `given`
    bool folder = false;  // a folder when the run began: the sockets under it
};

struct UnixSocketRules {
    bool all = false;
    std::vector<UnixSocketEntry> entries;
    std::string own;  // the command's temporary folder, absolute and normalised; empty: none
};

enum class UnixSocketVerdict {
    all,      // allowAllUnixSockets
    listed,   // an entry names it, or a folder it lies under
    own,      // under the command's temporary folder
    refused,
};

// Sockets the C library asks on the command's behalf, whatever it runs, and
// does without when refused: their refusals are not reported (they would be
// in every block). Refused all the same: nscd would resolve host names past
// the proxy, and say who is logged in.
struct QuietUnixSocket {
    std::string_view path;
    bool folder = false;
    std::string_view why;
};

inline constexpr QuietUnixSocket kQuietUnixSockets[] = {
    {"/run/nscd/socket", false, "glibc asks nscd for users, groups and host names, and looks itself when refused"},
    {"/var/run/nscd/socket", false, "the same, by the name glibc uses"},
    {"/run/systemd/userdb", true, "nss-systemd asks systemd for users and groups, and does without"},
    {"/run/systemd/resolve/io.systemd.Resolve", false,
     "nss-resolve asks systemd-resolved for host names; the proxy resolves them"},
};

struct UnixSocketDecision {
    UnixSocketVerdict verdict = UnixSocketVerdict::refused;
    bool quiet = false;     // refused, and one of kQuietUnixSockets: not reported
    std::size_t entry = 0;  // listed: the entry's index
    std::string dial;       // all, listed, own: the path the launcher connects to
    std::string why;        // refused: one line, for the violations block
};

// The decision for a connection to `path`: where the path the command named
// leads in its view of the file tree, absolute and normalised, with the links
// that exist there resolved. A path that is not absolute and normalised is
// refused (the launcher could not resolve it).
SBX_INLINE UnixSocketDecision decide_unix_socket(const UnixSocketRules& rules, std::string_view path);

// One line of the violations block, without the setting that would allow it:
// "deny unix-socket PATH (REASON[; named NAMED][; by PROGRAM])". NAMED is the
// path as the command wrote it, said when it differs from PATH; PROGRAM the
// command's program, when known. Control characters become `?`.
SBX_INLINE std::string unix_socket_violation_line(std::string_view path, std::string_view named,
                                                  std::string_view program, std::string_view reason);

}  // namespace sbx::net

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_NET)

namespace sbx::net {

SBX_INLINE UnixSocketDecision decide_unix_socket(const UnixSocketRules& rules, std::string_view path) {
    UnixSocketDecision d;
    if (!paths::is_absolute(path) || paths::normalize(path) != path) {
        d.why = "the launcher could not tell where the path leads";
        return d;
    }
    if (rules.all) {
        d.verdict = UnixSocketVerdict::all;
        d.dial = std::string(path);
        return d;
    }
    for (std::size_t i = 0; i < rules.entries.size(); ++i) {
        const auto& e = rules.entries[i];
        const std::string& to = e.path.empty() ? e.given : e.path;
        for (const std::string* named : {&to, &e.given}) {
            const bool hit = e.folder ? paths::at_or_under(path, *named) && path != *named : path == *named;
            if (!hit) continue;
            d.verdict = UnixSocketVerdict::listed;
            d.entry = i;
            d.dial = path.size() == named->size() ? to : paths::join(to, path.substr(named->size() + 1));
            return d;
        }
    }
    if (!rules.own.empty() && paths::at_or_under(path, rules.own) && path != rules.own) {
        d.verdict = UnixSocketVerdict::own;
        d.dial = std::string(path);
        return d;
    }
    d.why = rules.entries.empty() ? "no Unix socket is open to the command"
                                  : "not among the Unix sockets open to the command";
    for (const auto& q : kQuietUnixSockets)
        if (q.folder ? paths::at_or_under(path, q.path) : path == q.path) d.quiet = true;
    return d;
}

SBX_INLINE std::string unix_socket_violation_line(std::string_view path, std::string_view named,
                                                  std::string_view program, std::string_view reason) {
    auto printable = [](std::string_view s) { return replace_controls(s, '?'); };
    std::string out = "deny unix-socket " + printable(path) + " (" + std::string(reason);
    if (!named.empty() && named != path) out += "; named " + printable(named);
    if (!program.empty()) out += "; by " + printable(program);
    return out + ")";
}

}  // namespace sbx::net

#endif
