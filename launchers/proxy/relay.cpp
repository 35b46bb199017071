// The proxy's relay: bytes both ways between a client and its server, each
// direction through a buffer that grows for bulk transfers, the response heads
// of a forwarded HTTP request rewritten on their way (sbx/net/http1.hpp).
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "proxy/state.hpp"
#include "sbx/net/http1.hpp"

namespace sbx::proxy::detail {

namespace {

namespace http1 = sbx::net::http1;

// A relay's buffer per direction starts at this size and doubles, up to the
// largest, while reads keep filling it: small for interactive connections, large
// for bulk transfers (on a 2-core loopback a 4 MiB buffer moved 1 GiB about 10%
// faster than 1 MiB and 35% faster than 256 KiB). What all buffers of one proxy
// grow beyond their first size is capped by the budget.
constexpr std::size_t kFirstBuffer = 64 * 1024;
constexpr std::size_t kLargestBuffer = 4 * 1024 * 1024;
constexpr std::size_t kGrowthBudget = 64 * 1024 * 1024;

// One direction of a relay: bytes read from `from` wait in buf[begin, end) until
// they are written to `to`.
struct Flow {
    explicit Flow(std::atomic<std::size_t>& budget) : grown(budget) {}
    Flow(const Flow&) = delete;
    Flow& operator=(const Flow&) = delete;
    ~Flow() { grown -= extra; }

    std::atomic<std::size_t>& grown;  // the proxy's, shared by every flow
    std::size_t extra = 0;            // what this flow's buffer grew by
    int from = -1, to = -1;
    std::vector<char> buf = std::vector<char>(kFirstBuffer);
    std::size_t begin = 0, end = 0;
    bool eof = false;    // `from` has no more to give
    bool shut = false;   // and `to` was shut down for writing after the last byte
    bool grow = false;   // a read filled the buffer: double it once it is empty
    bool wrote = false;  // something was written to `to`
    std::optional<HeadRewrite> heads;

    std::size_t pending() const { return end - begin; }
    bool wants_read() const { return !eof && (heads || end < buf.size()); }

    void push(std::string_view data) {
        if (data.empty()) return;
        if (begin > 0 && buf.size() - end < data.size()) {
            std::memmove(buf.data(), buf.data() + begin, pending());
            end -= begin;
            begin = 0;
        }
        if (buf.size() - end < data.size()) buf.resize(end + data.size());
        std::memcpy(buf.data() + end, data.data(), data.size());
        end += data.size();
    }
};

// Moves what came of a response head in `f.heads` on: rewritten heads, then the
// rest as it is once the final head passed.
void pass_heads(Flow& f) {
    for (;;) {
        std::string& h = f.heads->data;
        constexpr std::string_view kStatus = "HTTP/";
        if (h.compare(0, std::min(h.size(), kStatus.size()), kStatus, 0, std::min(h.size(), kStatus.size())) != 0) {
            f.push(h);  // not HTTP/1: it passes as it is
            f.heads.reset();
            return;
        }
        const std::size_t end = http1::head_end(h, 0);
        if (end == std::string::npos) {
            if (h.size() > f.heads->max_bytes) {
                f.push(http1::error_response(502, "Bad Gateway", "sbx: " + f.heads->origin + " sent a response head over " +
                                                             std::to_string(f.heads->max_bytes) + " bytes"));
                f.heads.reset();
                f.eof = true;
            }
            return;
        }
        bool interim = false;
        f.push(http1::client_response_head(std::string_view(h).substr(0, end), interim));
        h.erase(0, end);
        if (!interim) {
            f.push(h);
            f.heads.reset();
            return;
        }
    }
}

// Reads once into `f`. False on an error that ends the relay.
bool fill(Flow& f, bool& got_some) {
    got_some = false;
    ssize_t r = 0;
    char small[16 * 1024];
    if (f.heads) r = ::recv(f.from, small, sizeof small, 0);
    else r = ::recv(f.from, f.buf.data() + f.end, f.buf.size() - f.end, 0);
    if (r < 0) return errno == EAGAIN || errno == EINTR;
    if (r == 0) {
        f.eof = true;
        if (f.heads) {
            if (f.heads->data.empty() && !f.wrote && f.pending() == 0)
                f.push(http1::error_response(502, "Bad Gateway", "sbx: " + f.heads->origin + " closed the connection without a response"));
            else f.push(f.heads->data);
            f.heads.reset();
        }
        got_some = f.pending() > 0;
        return true;
    }
    const auto n = static_cast<std::size_t>(r);
    if (f.heads) {
        f.heads->data.append(small, n);
        pass_heads(f);
    } else {
        if (n == f.buf.size() - f.end && f.buf.size() < kLargestBuffer) f.grow = true;
        f.end += n;
    }
    got_some = f.pending() > 0;
    return true;
}

// Writes once from `f`. False on an error that ends the relay.
bool drain(Flow& f) {
    const ssize_t w = ::send(f.to, f.buf.data() + f.begin, f.pending(), kNoSignal);
    if (w < 0) return errno == EAGAIN || errno == EINTR;
    f.wrote = true;
    f.begin += static_cast<std::size_t>(w);
    if (f.begin == f.end) {
        f.begin = f.end = 0;
        if (f.grow) {
            f.grow = false;
            const std::size_t more = std::min(f.buf.size() * 2, kLargestBuffer) - f.buf.size();
            if (f.grown.fetch_add(more) + more <= kGrowthBudget) {
                f.extra += more;
                f.buf.resize(f.buf.size() + more);
            } else {
                f.grown -= more;
            }
        }
    }
    return true;
}

}  // namespace

void relay(State& s, int client, int upstream, std::string_view to_upstream, std::string_view to_client,
           std::optional<HeadRewrite> heads) {
    Flow up(s.grown), down(s.grown);
    up.from = down.to = client;
    up.to = down.from = upstream;
    up.push(to_upstream);
    down.push(to_client);
    down.heads = std::move(heads);
    constexpr short kIn = POLLIN | POLLHUP | POLLERR;
    constexpr short kOut = POLLOUT | POLLHUP | POLLERR;
    for (;;) {
        for (Flow* f : {&up, &down}) {
            if (f->eof && f->pending() == 0 && !f->shut) {
                ::shutdown(f->to, SHUT_WR);
                f->shut = true;
            }
            if (f->end == f->buf.size() && f->begin > 0) {
                std::memmove(f->buf.data(), f->buf.data() + f->begin, f->pending());
                f->end -= f->begin;
                f->begin = 0;
            }
        }
        if (up.shut && down.shut) return;
        const short client_events = static_cast<short>((up.wants_read() ? POLLIN : 0) | (down.pending() ? POLLOUT : 0));
        const short upstream_events = static_cast<short>((down.wants_read() ? POLLIN : 0) | (up.pending() ? POLLOUT : 0));
        pollfd p[3] = {{client_events ? client : -1, client_events, 0},
                       {upstream_events ? upstream : -1, upstream_events, 0},
                       {s.stop_event.fd(), POLLIN, 0}};
        const int n = ::poll(p, 3, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || p[2].revents != 0) return;
        bool up_read = false, down_read = false;
        if ((p[0].revents & kIn) && up.wants_read() && !fill(up, up_read)) return;
        if ((p[1].revents & kIn) && down.wants_read() && !fill(down, down_read)) return;
        if (up.pending() && (up_read || (p[1].revents & kOut)) && !drain(up)) return;
        if (down.pending() && (down_read || (p[0].revents & kOut)) && !drain(down)) return;
    }
}

}  // namespace sbx::proxy::detail
