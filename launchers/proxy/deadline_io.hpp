// launchers/proxy/deadline_io.hpp - waiting, reading and writing on a non-blocking socket
// with a deadline, giving up as soon as another thread says stop.
//
// Every call watches `stop_fd` (the proxy's stop event) beside the socket: once it
// is readable the call returns Io::stopped, so that stop() never waits for a
// client that is slow or silent.
#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>

#include "base/fd_io.hpp"

namespace sbx::proxy {

using Clock = std::chrono::steady_clock;

// (On Linux EWOULDBLOCK is EAGAIN.)
enum class Io { ok, closed, timeout, stopped, failed };

// `ms` milliseconds from now (none for a negative `ms`).
Clock::time_point after_ms(int ms);

// Waits until `fd` reports one of `events` (or an error), `stop_fd` is readable,
// or `deadline` passes (Clock::time_point::max(): never).
Io wait_for(int stop_fd, int fd, short events, Clock::time_point deadline);

// Reads at least one byte and at most `n` into `buf`; `got` says how many.
Io read_some(int stop_fd, int fd, char* buf, std::size_t n, Clock::time_point deadline, std::size_t& got);

// Reads exactly `n` bytes, and not one more.
Io read_exact(int stop_fd, int fd, void* buf, std::size_t n, Clock::time_point deadline);

// Writes all of `data`.
Io write_all(int stop_fd, int fd, std::string_view data, Clock::time_point deadline);

// Sends `answer` (when not empty) within `timeout_ms`, then ends the connection
// gently: no more writes, and what the client still sends is read and dropped
// for a while (up to 4 MiB, 2 s), so that the close does not reset the
// connection before the client read the answer. `client` is closed on return.
void answer_and_close(int stop_fd, sbx::launcher::Fd& client, std::string_view answer, int timeout_ms);

}  // namespace sbx::proxy
