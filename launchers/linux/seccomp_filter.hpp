// launchers/linux/seccomp_filter.hpp - the libseccomp filter built from the rule table.
//
// Turns sbx/linux/seccomp_spec.hpp into a libseccomp filter for the native
// architecture only: calls of any other ABI (i386 `int 0x80`, x32) kill the
// process. Building and exporting need no privileges; loading the filter
// (seccomp_load on filter.get(), after PR_SET_NO_NEW_PRIVS) is the caller's step,
// or bubblewrap's, which takes the program as BPF on a descriptor (seccomp_program).
#pragma once

#include <seccomp.h>

#include <memory>
#include <optional>
#include <string>

#include "base/fd_io.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/linux/seccomp_spec.hpp"

namespace sbx::linux_sandbox {

using launcher::Fd;  // fd_io.hpp's, which the launchers share

// Owns one scmp_filter_ctx; releases it on destruction. Move-only.
class SeccompFilter {
public:
    explicit SeccompFilter(scmp_filter_ctx ctx) : ctx_(ctx) {}
    scmp_filter_ctx get() const { return ctx_.get(); }

private:
    struct Release {
        void operator()(void* ctx) const { seccomp_release(ctx); }
    };
    std::unique_ptr<void, Release> ctx_;
};

// Which architecture a filter is for. Launchers load the native one; the
// others exist so that tests on one machine can check the filter of both.
enum class SeccompArch { native, x86_64, aarch64 };

// A filter that allows everything except the rules that apply to `options`,
// for `arch` only: calls of any other ABI kill the process. Fails with
// Errc::sandbox_unavailable naming the step or system call: a rule whose system
// call the architecture lacks is an error unless kAbsentSyscalls documents it.
sbx::expected<SeccompFilter> build_filter(const SeccompOptions& options, SeccompArch arch = SeccompArch::native);

// The native filter for `options` as a BPF program in a memfd, for bubblewrap's
// --seccomp, which reads from the descriptor's offset (0) to its end: what
// `sbx run` loads and `sbx doctor` tries. Close-on-exec (the child that executes
// bubblewrap clears it). Fails with build_filter's error, or
// Errc::sandbox_unavailable naming the step.
sbx::expected<Fd> seccomp_program(const SeccompOptions& options);

// The two parts of the filter (SeccompPart), for a plan whose stage makes the
// mounts: bubblewrap's and the stage's, for `options` but its part. nullopt
// when either does not build (then the whole filter serves, and bubblewrap
// makes every mount).
struct SplitFilter {
    Fd first;   // all_but_mounts: bubblewrap's --seccomp
    Fd second;  // mounts_only: the stage loads it after its mounts
};
std::optional<SplitFilter> split_seccomp_programs(SeccompOptions options);

// The filter as libseccomp's pseudo-filter-code text (seccomp_export_pfc).
sbx::expected<std::string> export_pfc(const SeccompFilter& filter);

}  // namespace sbx::linux_sandbox
