// compose.hpp - what `sbx run` would run here, composed in one place for every
// subcommand, so that what policy, explain, check, diff and doctor say is what
// the sandbox does.
//
// The stages, each from the ones before:
//   compose()        the project root, its settings layers (and agent file),
//                    merged into the policy
//   run_inputs()     what `sbx run` adds for a command of that root: its
//                    temporary directory, the tool cache home's and the git
//                    record's folder where this user can make them, sbx's own
//                    programs
//   fs_rules(), host_rules(), call_hosts(), run_rules()
//                    the filesystem and host rules a command runs with, and the
//                    call's own hosts (--allow-host, parsed here alone)
//   plan_for()       the plan: make_plan with the same inputs (sbx plan prints
//                    it, sbx run carries it out)
// A subcommand calls the stages it needs, in its own order, and does its own
// work between them (sbx check reads its file after the settings, sbx run
// starts the sandbox early). Nothing here prints or exits.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/json_write.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/io/fs_view_disk.hpp"
#include "sbx/io/placeholder_registry.hpp"
#include "sbx/io/settings_files.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/plan/command_fs_rules.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/route/route.hpp"
#include "sbx/settings/agent_file.hpp"
#include "sbx/settings/policy.hpp"
#include "sbx/settings/project_root.hpp"

#include "options.hpp"

namespace sbx::cli {

// The first stage: the root, why it is the root, and the policy its settings
// make, read through the disk without the placeholders of the root's running
// sandboxes.
struct Composed {
    std::string root, home;
    sbx::ProjectRoot where;  // the root and why it is the root
    std::string cwd;         // the current directory, symlinks resolved
    sbx::Policy policy;
    std::optional<sbx::AgentFile> agent;  // --agent-file
    // The root's group of running sandboxes, held from before the settings are
    // read until release(), and the disk without its placeholders, as the
    // settings were read and the plan is to be made.
    std::optional<sbx::GroupSnapshot> group;
    std::unique_ptr<sbx::DiskFs> disk;  // what `view` looks through
    std::unique_ptr<sbx::HidingFs> view;
    std::vector<std::string> credential_homes;  // whose credential stores stay hidden: HOME's, the account's
    // Every file the policy was made from or would be, there or not: the
    // settings layers' (sbx::layer_file_paths) and the agent file.
    std::vector<std::string> sources;
};

// What a caller may do to the layers before they are merged: `sbx diff` puts
// the project's files of another revision in place of the work tree's.
using LayerEdit = std::function<sbx::expected<void>(std::vector<sbx::Settings>& layers, const sbx::LayerFiles& files)>;

// Finds the root (--root, else the project the current directory is in) and
// its layers, and merges them (or takes the built-in default). Refuses a root
// that is or holds the home directory when `home_root` says so.
sbx::expected<Composed> compose(const SettingsArgs& a, HomeRoot home_root, const LayerEdit& edit = {});

// The agent file `given` on the command line, read and parsed with `home` as
// its `~/` (a skill script's when `skill_script`); IO_ERROR when it is not there.
sbx::expected<sbx::AgentFile> read_agent_file(const std::string& given, const std::string& home, bool skill_script);

// How an agent file given on the command line is read: read_agent_file's, and
// again where an answer is written into it (answers.hpp).
sbx::AgentFileSource agent_file_source(const std::string& file, const std::string& home, bool skill_script);

// Refuses (INVALID_ARGUMENT) a line that runs a program the agent file's shell
// skill blocks: it runs neither inside nor out (`sbx run`, `sbx plan`).
sbx::expected<void> refuse_blocked(const Composed& c, const std::string& line);

// An agent file's preset and where it came from, in words: "strict, written at
// sandbox.preset", "development, the default (the file has no sandbox block)".
std::string preset_words(const sbx::AgentFile& a);

// The same as a JSON object: file, preset, presetSource (null: the default),
// declared, and the lists kept for reports, allowedCommands and allowedImports.
void write_agent_file(sbx::json::Writer& w, const sbx::AgentFile& a);

// Where a command line routed for the root starts (route.hpp): the root, the
// home, the current directory, and whether the filesystem ignores case (macOS's
// default: assumed there, never on Linux).
sbx::route::Place route_place(const Composed& c);

// What a command line changes in what `sbx run` adds: sbx run's and sbx plan's
// options. The other subcommands take sbx run's defaults.
struct RunChoices {
    std::string launcher;     // --launcher: its programs are protected too
    bool tool_cache = true;   // false: --no-tool-cache
    std::string tmpdir;       // the command's temporary directory; empty: a fresh one
};

// The second stage: what `sbx run` gives a command of the root besides the policy.
struct RunInputs {
    std::string tmpdir;
    // The base of the root's tool cache home; nullopt: none (toolCache false,
    // --no-tool-cache, or a home this user cannot make: tool_cache_warnings).
    std::optional<std::string> tool_cache_base;
    // The folder the root's record of its repositories lies under
    // (sbx/rules/git_record.hpp); nullopt: this user cannot make it (git_record_warnings).
    std::optional<std::string> git_record_base;
    std::vector<std::string> own_programs;  // own_programs.hpp
    std::vector<sbx::Warning> tool_cache_warnings, git_record_warnings;
};

RunInputs run_inputs(const Composed& c, const RunChoices& choices = {});

// The folder of the root's record of its repositories, unless this user cannot
// make it: then nullopt, and a warning in `warnings` (when given).
std::optional<std::string> usable_git_record_base(const Composed& c, std::vector<sbx::Warning>* warnings);

// The third stage: the filesystem rules `sbx run` gives a command of the root
// (command_fs_rules with its tool cache home and sbx's own programs).
sbx::expected<sbx::CommandFsRules> fs_rules(const Composed& c, const RunInputs& in, const sbx::CachedFs& cached);

// The host rules of the policy, with `on_unknown` deciding hosts no rule names.
sbx::expected<sbx::net::HostRules> host_rules(const Composed& c, sbx::net::UnknownHost on_unknown);

// --on-unknown-host's choice (CLI11 has checked it); empty: sbx run's default.
sbx::net::UnknownHost unknown_host(std::string_view given);

// The call's own hosts (--allow-host); nullopt when none are given, so that
// the settings' lists alone decide. INVALID_SETTINGS at "--allow-host TEXT"
// for a pattern that does not parse.
using CallHosts = std::optional<std::vector<sbx::net::HostRule>>;
sbx::expected<CallHosts> call_hosts(const std::vector<std::string>& given);

// Both rules under `sbx run`'s defaults, its decider (ask) for hosts no rule
// names, as `sbx explain` decides: what sbx check and sbx diff judge.
struct RunRules {
    sbx::CommandFsRules fs;
    sbx::net::HostRules hosts;
};
sbx::expected<RunRules> run_rules(const Composed& c, const RunInputs& in, const sbx::CachedFs& cached);

// The descriptors --pass-fd names: each a decimal integer from 3 (sbx::kFirstPassFd)
// to INT_MAX, and open. Called before sbx opens anything of its own, so an open
// one is the caller's. In the order given: make_plan sorts them and merges repeats.
sbx::expected<std::vector<int>> descriptors_to_pass(const std::vector<std::string>& given);

// The last stage: the plan for `a.command` in the root, with sbx run's
// defaults where `a` leaves a choice open (a.pass_fds already checked).
sbx::expected<sbx::Plan> plan_for(const Composed& c, const PlanArgs& a);
// The same, through `view` in place of c.view: a session plans again with the
// group's placeholders of the time hidden (session_repos.hpp).
sbx::expected<sbx::Plan> plan_for(const Composed& c, const PlanArgs& a, const sbx::FsView& view);

}  // namespace sbx::cli
