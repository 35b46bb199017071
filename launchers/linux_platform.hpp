// launchers/linux_platform.hpp - the Linux launcher's steps, as a Platform of
// launcher_main.hpp: the probe and the seccomp programs, the root's group and
// its placeholders, bubblewrap with the stage, the proxy, the clean-up and the
// audit after the command (linux_platform.cpp says each in order).
//
// sbx-linux runs it from its own main; `sbx run` runs it in its own process
// (no second program to start, no plan to write and read again), so both carry
// a plan out with the same code.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "launcher_main.hpp"
#include "probe.hpp"

namespace sbx::linux_sandbox {

class LinuxPlatform final : public sbx::launcher::Platform {
public:
    const char* name() const override { return "sbx-linux"; }
    std::string_view usage_lines() const override;
    std::string_view help_text() const override;
    bool take_option(std::string_view arg, const std::function<const char*()>& next, std::string& why) override;
    std::string check_options(const sbx::launcher::Options& o) const override;
    int doctor(sbx::launcher::Launcher& l) override;
    // The quick probe of the machine, then the seccomp step.
    std::optional<sbx::Error> unavailable(const sbx::Plan& plan) override;
    // The disk is checked under the root group's lock (prepare_under_lock).
    bool verifies_first() const override { return false; }
    int run(sbx::launcher::Launcher& l, const sbx::Plan& plan, sbx::launcher::Reaper& reaper) override;

private:
    std::string bwrap_;  // --bwrap, for --doctor
    bool bubblewrap_mounts_ = false;  // --bubblewrap-mounts: bubblewrap makes every mount, as where the stage cannot
    ProbeOptions popt_;
    ProbeResult probed_;
    int seccomp_fd_ = -1;
    int mounts_filter_fd_ = -1;
};

}  // namespace sbx::linux_sandbox
