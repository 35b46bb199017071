#include "linux/seccomp_filter.hpp"

#include "sbx/io/fs_view_disk.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace sbx::linux_sandbox {

namespace {

sbx::Error seccomp_error(std::string what, int rc) {
    // libseccomp returns negative errno values.
    return sbx::Error(Errc::sandbox_unavailable, "seccomp: " + what + ": " + std::strerror(-rc));
}

std::uint32_t to_scmp_action(SeccompAction action) {
    switch (action) {
        case SeccompAction::allow: return SCMP_ACT_ALLOW;
        case SeccompAction::errno_eperm:
        case SeccompAction::errno_enosys:
        case SeccompAction::errno_eafnosupport:
        case SeccompAction::errno_eprotonosupport: return SCMP_ACT_ERRNO(static_cast<std::uint16_t>(seccomp_errno(action)));
        case SeccompAction::notify: return SCMP_ACT_NOTIFY;
    }
    return SCMP_ACT_KILL_PROCESS;
}

scmp_compare to_scmp_compare(SeccompCmp cmp) {
    switch (cmp) {
        case SeccompCmp::masked_eq: return SCMP_CMP_MASKED_EQ;
        case SeccompCmp::ne: return SCMP_CMP_NE;
        case SeccompCmp::gt: return SCMP_CMP_GT;
    }
    return SCMP_CMP_MASKED_EQ;
}

// libseccomp's token for an architecture.
std::uint32_t arch_token(SeccompArch arch) {
    switch (arch) {
        case SeccompArch::native: return seccomp_arch_native();
        case SeccompArch::x86_64: return SCMP_ARCH_X86_64;
        case SeccompArch::aarch64: return SCMP_ARCH_AARCH64;
    }
    return seccomp_arch_native();
}

// The name kAbsentSyscalls uses for an architecture.
std::string_view arch_name(std::uint32_t token) {
    switch (token) {
        case SCMP_ARCH_X86_64: return "x86_64";
        case SCMP_ARCH_AARCH64: return "aarch64";
        default: return "unknown";
    }
}

}  // namespace

sbx::expected<SeccompFilter> build_filter(const SeccompOptions& options, SeccompArch for_arch) {
    scmp_filter_ctx raw = seccomp_init(to_scmp_action(kSeccompDefaultAction));
    if (raw == nullptr) return sbx::fail(Errc::sandbox_unavailable, "seccomp: seccomp_init failed");
    SeccompFilter filter(raw);

    // seccomp_init starts with the native architecture; a filter for another one
    // takes that one instead (rules are then given in native numbers, which
    // libseccomp translates by name).
    const std::uint32_t target = arch_token(for_arch);
    if (target != seccomp_arch_native()) {
        if (int rc = seccomp_arch_add(filter.get(), target); rc < 0)
            return sbx::fail(seccomp_error("adding the architecture " + std::string(arch_name(target)), rc));
        if (int rc = seccomp_arch_remove(filter.get(), SCMP_ARCH_NATIVE); rc < 0)
            return sbx::fail(seccomp_error("removing the native architecture", rc));
    }

    // seccomp_init adds the native architecture only; calls of any other ABI get
    // the bad-architecture action.
    if (int rc = seccomp_attr_set(filter.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS); rc < 0)
        return sbx::fail(seccomp_error("setting the bad-architecture action to KILL_PROCESS", rc));

    const std::string_view arch = arch_name(target);
    for (const auto& rule : seccomp_rules(options)) {
        const std::string name(rule.syscall);
        // -1 (__NR_SCMP_ERROR): libseccomp does not know the name; below -1: a
        // pseudo number, the name exists elsewhere but not on this architecture.
        const int nr = seccomp_syscall_resolve_name(name.c_str());
        if (nr < 0 || seccomp_syscall_resolve_name_arch(target, name.c_str()) < 0) {
            if (documented_absent(arch, rule.syscall)) continue;
            return sbx::fail(Errc::sandbox_unavailable,
                             "seccomp: system call " + name + " is unknown on " + std::string(arch));
        }
        std::vector<scmp_arg_cmp> cmps;
        for (std::size_t i = 0; i < rule.check_count; ++i) {
            const auto& c = rule.checks[i];
            // SCMP_CMP_MASKED_EQ takes the mask first; the other comparisons, the value.
            if (c.cmp == SeccompCmp::masked_eq)
                cmps.push_back(scmp_arg_cmp{c.arg, SCMP_CMP_MASKED_EQ, c.mask, c.value});
            else
                cmps.push_back(scmp_arg_cmp{c.arg, to_scmp_compare(c.cmp), c.value, 0});
        }
        if (int rc = seccomp_rule_add_array(filter.get(), to_scmp_action(rule.action), nr,
                                            static_cast<unsigned>(cmps.size()), cmps.data());
            rc < 0)
            return sbx::fail(seccomp_error("adding the rule for " + name, rc));
    }
    return filter;
}

sbx::expected<Fd> seccomp_program(const SeccompOptions& options) {
    auto filter = build_filter(options);
    SBX_TRY(filter);
    Fd fd(::memfd_create("sbx-seccomp", MFD_CLOEXEC));
    if (fd.get() < 0)
        return sbx::fail(sbx::Errc::sandbox_unavailable, std::string("memfd_create: ") + std::strerror(errno));
    if (int rc = seccomp_export_bpf(filter->get(), fd.get()); rc < 0)
        return sbx::fail(sbx::Errc::sandbox_unavailable, std::string("seccomp_export_bpf: ") + std::strerror(-rc));
    if (::lseek(fd.get(), 0, SEEK_SET) != 0)
        return sbx::fail(sbx::Errc::sandbox_unavailable,
                         std::string("lseek on the seccomp program: ") + std::strerror(errno));
    return fd;
}

std::optional<SplitFilter> split_seccomp_programs(SeccompOptions options) {
    options.part = SeccompPart::all_but_mounts;
    auto first = seccomp_program(options);
    if (!first) return std::nullopt;
    options.part = SeccompPart::mounts_only;
    auto second = seccomp_program(options);
    if (!second) return std::nullopt;
    return SplitFilter{std::move(*first), std::move(*second)};
}

sbx::expected<std::string> export_pfc(const SeccompFilter& filter) {
    const launcher::Fd fd(memfd_create("sbx-seccomp-pfc", MFD_CLOEXEC));
    if (!fd.ok()) return sbx::fail(seccomp_error("memfd_create for the PFC export", -errno));
    if (int rc = seccomp_export_pfc(filter.get(), fd.get()); rc < 0)
        return sbx::fail(seccomp_error("seccomp_export_pfc", rc));
    if (lseek(fd.get(), 0, SEEK_SET) < 0) return sbx::fail(seccomp_error("rewinding the PFC export", -errno));

    auto text = read_all(fd.get(), std::size_t{1} << 24, "the PFC export");
    if (!text)
        return sbx::fail(Error(Errc::sandbox_unavailable, "seccomp: reading the PFC export").caused_by(text.error()));
    return text;
}

}  // namespace sbx::linux_sandbox
