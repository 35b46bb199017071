// doctor.cpp - `sbx doctor`: whether the sandbox can run here, and what to do
// if not. The launcher's checks (in this process on Linux), with a line of
// sbx's own on where it is installed.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "sbx/core/json_write.hpp"
#include "sbx/settings/agent_file.hpp"

#include "cli_common.hpp"
#include "commands.hpp"
#include "compose.hpp"
#include "own_programs.hpp"
#if defined(__linux__)
#include "linux/platform.hpp"  // launchers/: the Linux launcher's steps, whose doctor this runs
#endif

namespace sbx::cli {

namespace {

#if defined(__linux__)
// What the install line says of the project of the current directory: whether
// sbx's programs lie where its commands may write, and so are protected during
// its runs; `protected_paths` gets those that are.
std::string project_words(const sbx::expected<Composed>& composed, std::vector<std::string>& protected_paths) {
    if (!composed) return "; no project here to check them against (" + sbx::to_string(composed.error()) + ")";
    const Composed& c = *composed;
    sbx::CachedFs cached(*c.view);
    auto run = fs_rules(c, run_inputs(c), cached);
    if (!run) return "; cannot decide for the project at " + c.root + " (" + sbx::to_string(run.error()) + ")";
    if (run->rules.disabled)
        return "; the project at " + c.root + " disables filesystem isolation, so its commands can write them";
    if (run->own_programs.empty() && run->own_program_warnings.empty())
        return "; outside every place commands of the project at " + c.root + " may write";
    for (const auto& p : run->own_programs) protected_paths.push_back(p.path);
    std::string list;
    for (const auto& p : protected_paths) list += (list.empty() ? "" : ", ") + p;
    std::string text = "; they lie where commands of the project at " + c.root + " may write, so " +
                       (list.empty() ? std::string("nothing") : list) + (protected_paths.size() == 1 ? " is" : " are") +
                       " read-only during its runs (sbx policy says why)";
    for (const auto& x : run->own_program_warnings) text += "; " + x.file + ": " + x.message;
    return text;
}

// The doctor's line on where this sbx is installed: its programs and, for the
// project of the current directory, whether they lie where its commands may
// write and so are protected during its runs (sbx/rules/own_programs.hpp).
// Information only: it changes no exit status.
sbx::linux_sandbox::LinuxPlatform::DoctorNote install_note() {
    const auto programs = own_programs("");
    std::string text;
    for (const auto& p : programs) text += (text.empty() ? "" : ", ") + p;
    if (text.empty()) text = "this program's own path cannot be found";
    sbx::json::Writer w;
    w.begin_object().key("programs").begin_array();
    for (const auto& p : programs) w.value(p);
    w.end_array().key("root");
    const auto composed = compose(SettingsArgs{}, HomeRoot::allowed);
    if (composed) w.value(composed->root);
    else w.null();
    std::vector<std::string> protected_paths;
    text += project_words(composed, protected_paths);
    w.key("protected").begin_array();
    for (const auto& p : protected_paths) w.value(p);
    w.end_array().key("detail").value(text).end_object();
    return {"install", text, "install", w.take()};
}
#endif

// The doctor's line on --agent-file: the preset its commands run under and
// where it came from, what it confines nothing with, or that sbx refuses it.
struct AgentNote {
    std::string text, json;
};
sbx::expected<AgentNote> agent_note(const std::string& given) {
    auto home = home_directory();
    SBX_TRY(home);
    auto agent = read_agent_file(given, *home, false);
    SBX_TRY(agent);
    std::string words = agent->file + ": preset " + preset_words(*agent);
    if (agent->preset == sbx::Preset::off)
        words += "; sbx refuses to run its commands, since it runs commands only confined";
    for (const auto& w : agent->warnings())
        if (w.key == "sandbox.allowed_commands" || w.key == "sandbox.allowed_imports") words += "; " + w.key + " " + w.message;
    sbx::json::Writer w;
    write_agent_file(w, *agent);
    return AgentNote{std::move(words), w.take()};
}

}  // namespace

int run_doctor(const DoctorArgs& a) {
    std::optional<AgentNote> agent;
    if (!a.agent_file.empty()) {
        auto note = agent_note(a.agent_file);
        if (!note) return report(note.error());
        agent = std::move(*note);
    }
#if defined(__linux__)
    // The launcher's doctor, in this process unless --launcher names a program.
    if (a.launcher.empty()) {
        sbx::launcher::Options o;
        o.json = a.json;
        sbx::linux_sandbox::LinuxPlatform platform;
        sbx::launcher::Launcher launcher(platform, std::move(o));
        platform.add_doctor_note(install_note());
        if (agent) platform.add_doctor_note({"agent file", agent->text, "agentFile", agent->json});
        return platform.doctor(launcher);
    }
#endif
    // The launcher program's report has no place for the agent file's line but
    // before it, in text.
    if (agent && a.json)
        return report(sbx::Error(sbx::Errc::invalid_argument,
                                 "--agent-file with --json needs the doctor of this process: leave out --launcher"));
    if (agent) std::cout << "agent file: " << agent->text << std::endl;
    auto launcher = find_launcher(a.launcher);
    if (!launcher) {
        report(launcher.error());
        return 1;
    }
    std::vector<char*> argv{launcher->data(), const_cast<char*>("--doctor")};
    if (a.json) argv.push_back(const_cast<char*>("--json"));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    std::cerr << "sbx: cannot run " << *launcher << ": " << std::strerror(errno) << "\n";
    return 1;
}

}  // namespace sbx::cli
