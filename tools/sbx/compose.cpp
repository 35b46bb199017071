// compose.cpp - the stages of what `sbx run` would run here (compose.hpp).
#include "compose.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdint>
#include <optional>
#include <cstring>
#include <span>
#include <utility>

#include "sbx/core/paths.hpp"
#include "sbx/plan/make_plan.hpp"
#include "sbx/rules/git_record.hpp"
#include "sbx/rules/network.hpp"
#include "sbx/rules/tool_cache.hpp"
#include "sbx/settings/agent_env.hpp"
#include "sbx/settings/defaults.hpp"
#include "sbx/settings/dotenv.hpp"
#include "sbx/settings/home_env_files.hpp"

#include "answers.hpp"
#include "cache_folder.hpp"
#include "cli_common.hpp"
#include "own_programs.hpp"

namespace sbx::cli {

namespace {

// ---- The root --------------------------------------------------------------------

// The home directory of the account sbx runs as (the password database's), which
// HOME may not name; nullopt when it has none.
std::optional<std::string> account_home() {
    const passwd* pw = ::getpwuid(::getuid());
    if (pw == nullptr || pw->pw_dir == nullptr || !sbx::paths::is_absolute(pw->pw_dir)) return std::nullopt;
    return sbx::paths::normalize(pw->pw_dir);
}

// The homes a root must not hold, for root_exposes_home: `home` (the plan's) and
// the account's, each as written and as its real path. A home that cannot be
// looked at is kept as written.
std::vector<std::string> homes_to_keep_out(const std::string& home, const std::optional<std::string>& account,
                                           const sbx::FsView& fs) {
    std::vector<std::string> out;
    auto add = [&](const std::string& h) {
        if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
    };
    std::vector<std::string> written{home};
    if (account) written.push_back(*account);
    for (const auto& h : written) {
        add(h);
        if (auto real = sbx::resolve(fs, h)) add(*real);
    }
    return out;
}

// The refusal of a root that is or holds `home` (root_exposes_home), naming the
// root, the home and the option that accepts it.
sbx::Error home_root_error(const SettingsArgs& a, const std::string& root, const std::string& home) {
    const bool given = a.root_given();
    const std::string instead =
        given ? "pick the project's folder" : "run sbx in the project's folder (or name it with --root DIR)";
    return sbx::Error(sbx::Errc::invalid_argument,
                      std::string(root == home ? "the root is" : "the root holds") + " your home directory (" + home +
                          "): every dotfile in it would be writable (shell start-up files, ~/.local/bin, ~/.config), "
                          "so code could run outside the sandbox later; " + instead +
                          ", or pass --allow-home-root to accept that")
        .at_key(given ? "--root " + root
                      : "the current directory " + root +
                            " (the root when no --root is given: sbx looks for a project only below your home directory)");
}

// The current directory with its symlinks resolved.
sbx::expected<std::string> current_directory(const sbx::FsView& disk) {
    char buf[PATH_MAX];
    if (::getcwd(buf, sizeof buf) == nullptr)
        return sbx::fail(sbx::Errc::io_error, std::string("cannot tell the current directory: ") + std::strerror(errno));
    return sbx::resolve(disk, sbx::paths::normalize(buf));
}

// The root: --root's directory, else the project the current directory `cwd` is
// in, below the homes to keep out and with markers of this user's (or root's).
sbx::expected<sbx::ProjectRoot> choose_root(const SettingsArgs& a, const std::string& cwd,
                                            std::span<const std::string> homes, const sbx::FsView& disk) {
    if (!a.root_given()) return sbx::find_project_root(cwd, homes, ::geteuid(), disk);
    auto root = sbx::resolve(disk, absolute(a.root));
    SBX_TRY(root);
    return sbx::named_root(std::move(*root));
}

// Where the settings are read for: this user's homes, the current directory
// (empty when it is gone and the root is named), and the root.
struct Place {
    std::string home;
    std::optional<std::string> account;  // the password database's home
    std::string cwd;
    sbx::ProjectRoot where;
};

// The place, with the root checked: a directory, and not one that is or holds a
// home unless `home_root` allows it.
sbx::expected<Place> find_place(const SettingsArgs& a, const sbx::FsView& disk, HomeRoot home_root) {
    auto home = home_directory();
    SBX_TRY(home);
    // A current directory that is gone matters only when the root is found from it.
    auto cwd = current_directory(disk);
    if (!cwd && !a.root_given()) return sbx::fail(cwd.error());
    const std::string here = cwd ? *cwd : std::string();
    // The password database is asked once: a lookup may go over the network (LDAP, sssd).
    const auto account = account_home();
    const auto homes = homes_to_keep_out(*home, account, disk);
    auto where = choose_root(a, here, homes, disk);
    SBX_TRY(where);
    const std::string root = where->root;
    auto st = disk.lstat(root);
    SBX_TRY(st);
    if (!*st || (*st)->type != sbx::FileType::directory)
        return sbx::fail(sbx::Error(sbx::Errc::invalid_argument, "--root is not a directory").in_file(root));
    // `/` is make_plan's to refuse, with or without --allow-home-root.
    if (home_root == HomeRoot::refused && root != "/")
        if (auto exposed = sbx::root_exposes_home(root, homes))
            return sbx::fail(home_root_error(a, root, *exposed));
    return Place{*home, account, here, std::move(*where)};
}

// ---- The settings ----------------------------------------------------------------

// The settings files of the place: the root's and the home's, --managed-settings
// and --settings; `hidden`, the placeholders read as missing.
sbx::LayerFiles layer_files(const SettingsArgs& a, const Place& p, std::vector<std::string> hidden) {
    sbx::LayerFiles files;
    files.hidden = std::move(hidden);
    files.root = p.where.root;
    files.home = p.home;
    if (!a.managed.empty()) {
        files.managed = absolute(a.managed);
        files.managed_explicit = true;
    }
    for (const auto& f : a.settings) files.flags.push_back(absolute(f));
    return files;
}

}  // namespace

sbx::AgentFileSource agent_file_source(const std::string& file, const std::string& home, bool skill_script) {
    sbx::AgentFileSource source{file, home, sbx::LayerKind::flag};
    source.skill_script = skill_script;
    return source;
}

sbx::expected<sbx::AgentFile> read_agent_file(const std::string& given, const std::string& home, bool skill_script) {
    const std::string file = absolute(given);
    auto text = sbx::read_small_file(file, sbx::kMaxSettingsBytes, sbx::Errc::invalid_settings);
    SBX_TRY(text);
    if (!*text) return sbx::fail(sbx::Error(sbx::Errc::io_error, "no agent file here").in_file(file));
    return sbx::parse_agent_file(**text, agent_file_source(file, home, skill_script));
}

sbx::expected<void> refuse_blocked(const Composed& c, const std::string& line) {
    if (const auto blocked = sbx::route::blocked_by(c.policy, line))
        return sbx::fail(sbx::Errc::invalid_argument, line + " is refused: " + sbx::route::describe(*blocked));
    return {};
}

namespace {

// --agent-file, read and put among `layers`, its .env files in the home and in
// the current directory denied; nullopt when none is given.
sbx::expected<std::optional<sbx::AgentFile>> add_agent_file(const SettingsArgs& a, const Place& p, const sbx::FsView& fs,
                                                            std::vector<sbx::Settings>& layers) {
    if (a.agent_file.empty()) {
        if (a.skill_script)
            return sbx::fail(sbx::Errc::invalid_argument, "--skill-script needs --agent-file: a skill script runs under "
                                                          "its agent's sandbox block");
        return std::optional<sbx::AgentFile>{};
    }
    auto parsed = read_agent_file(a.agent_file, p.home, a.skill_script);
    SBX_TRY(parsed);
    sbx::deny_home_env_files(*parsed, sbx::find_home_env_files(p.home, fs));
    if (!p.cwd.empty()) sbx::deny_env_files_in(*parsed, p.cwd);
    sbx::insert_agent_layer(layers, *parsed);
    return std::optional<sbx::AgentFile>(std::move(*parsed));
}

// ---- What sbx run adds -----------------------------------------------------------

// The base of the root's tool cache home, unless this user cannot make the home
// (a HOME of another's, a read-only one): then nullopt, and a warning, as the
// engine leaves out a home it must not make.
std::optional<std::string> usable_tool_cache_base(const Composed& c, std::vector<sbx::Warning>* warnings) {
    const std::string base = tool_cache_base(c.home);
    // What the launcher would refuse to make is left out here instead.
    const auto why = why_cache_dir_unmakeable(sbx::tool_cache_dir(base, c.root));
    if (!why) return base;
    if (warnings != nullptr)
        warnings->push_back(
            {"", "sandbox.toolCache", "no tool cache home: " + *why + "; tools keep their own (read-only) caches"});
    return std::nullopt;
}

// ---- The plan --------------------------------------------------------------------

// This process's environment, as "NAME=VALUE" strings.
std::vector<std::string> environment() {
    std::vector<std::string> out;
    for (char** e = environ; *e != nullptr; ++e) out.emplace_back(*e);
    return out;
}

// The assignments of the .env file at `path`, or nullopt when there is none. One
// that is not a regular file (a symlink, which could lead to any file) is not
// read, and a warning says so.
sbx::expected<std::optional<std::vector<sbx::DotenvEntry>>> read_dotenv(const std::string& path, const sbx::FsView& fs,
                                                                       std::vector<sbx::Warning>& warnings) {
    using Entries = std::optional<std::vector<sbx::DotenvEntry>>;
    auto st = fs.lstat(path);
    SBX_TRY(st);
    if (!*st) return Entries{};
    if ((*st)->type != sbx::FileType::regular) {
        warnings.push_back({path, "", "not read for the agent file's env: not a regular file"});
        return Entries{};
    }
    auto text = sbx::read_small_file(path, sbx::kMaxSettingsBytes, sbx::Errc::invalid_settings);
    SBX_TRY(text);
    if (!*text) return Entries{};
    auto parsed = sbx::parse_dotenv(**text, path);
    SBX_TRY(parsed);
    return Entries{std::move(*parsed)};
}

// The command's environment and the names passed on purpose (--env), with what
// an agent file's env list adds, and the warnings of reading it.
struct CommandEnv {
    std::vector<std::string> environ, pass_env;
    std::vector<sbx::Warning> warnings;
};

sbx::expected<CommandEnv> command_env(const Composed& c, const PlanArgs& a) {
    CommandEnv out{environment(), a.pass_env, {}};
    if (!c.agent) return out;
    SBX_TRY(sbx::require_confined(*c.agent));
    // Its env list passes those variables as --env does (agent_env.hpp); the
    // .env files are read only when a name is not exported.
    const auto dotenv_files = sbx::agent_dotenv_files(*c.agent, c.cwd);
    std::vector<std::optional<std::vector<sbx::DotenvEntry>>> dotenvs(dotenv_files.size());
    if (sbx::agent_env_needs_dotenv(*c.agent, out.environ))
        for (std::size_t i = 0; i < dotenv_files.size(); ++i) {
            auto read = read_dotenv(dotenv_files[i], *c.view, out.warnings);
            SBX_TRY(read);
            dotenvs[i] = std::move(*read);
        }
    auto passed = sbx::agent_env(*c.agent, out.environ, dotenv_files, dotenvs);
    out.environ.insert(out.environ.end(), passed.assignments.begin(), passed.assignments.end());
    out.pass_env.insert(out.pass_env.end(), passed.pass.begin(), passed.pass.end());
    out.warnings.insert(out.warnings.end(), passed.warnings.begin(), passed.warnings.end());
    return out;
}

}  // namespace

std::string preset_words(const sbx::AgentFile& a) {
    std::string out(sbx::preset_name(a.preset));
    if (a.strict_for_skill_script)
        return out + ", for a skill script (--skill-script), since the file " +
               (a.preset_source ? "turns the sandbox off at " + a.preset_source->key : std::string("declares no sandbox"));
    if (a.preset_source) return out + ", written at " + a.preset_source->key;
    return out + ", the default (" + (a.declared ? "the sandbox block names no preset" : "the file has no sandbox block") +
           ")";
}

void write_agent_file(sbx::json::Writer& w, const sbx::AgentFile& a) {
    w.begin_object().key("file").value(a.file).key("preset").value(sbx::preset_name(a.preset)).key("presetSource");
    sbx::write_source(w, a.preset_source);
    w.key("declared").value(a.declared).key("skillScript").value(a.strict_for_skill_script);
    for (const auto& [key, list] : {std::pair{"allowedCommands", &a.allowed_commands},
                                    std::pair{"allowedImports", &a.allowed_imports}}) {
        w.key(key).begin_array();
        for (const auto& e : *list) w.value(e.value);
        w.end_array();
    }
    w.end_object();
}

sbx::route::Place route_place(const Composed& c) {
#if defined(__APPLE__)
    constexpr bool folds_case = true;
#else
    constexpr bool folds_case = false;
#endif
    return sbx::route::Place{c.root, c.home, c.cwd, folds_case};
}

namespace {

// --limit KEY=N, each as a settings file's sandbox.limits.KEY would be read.
sbx::expected<std::array<std::optional<std::uint64_t>, sbx::kLimitCount>> limit_args(const std::vector<std::string>& given) {
    std::array<std::optional<std::uint64_t>, sbx::kLimitCount> out{};
    for (const auto& arg : given) {
        const auto bad = [&](const std::string& why) {
            return sbx::fail(sbx::Errc::invalid_argument, std::string(sbx::kLimitOption) + " " + arg + ": " + why);
        };
        const auto eq = arg.find('=');
        if (eq == std::string::npos) return bad("give KEY=N, as timeoutSeconds=600");
        const auto which = sbx::limit_named(std::string_view(arg).substr(0, eq));
        if (!which)
            return bad("not a limit sbx knows (the limits are timeoutSeconds, memoryMiB, processes, cpuSeconds and "
                       "fileSizeMiB)");
        const auto& spec = sbx::limit_spec(*which);
        const std::string digits = arg.substr(eq + 1);
        std::uint64_t n = 0;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
        if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || n < 1 || n > spec.max)
            return bad("give a whole number from 1 to " + std::to_string(spec.max));
        auto& slot = out[static_cast<std::size_t>(*which)];
        if (slot) return bad("given twice");
        slot = n;
    }
    return out;
}

}  // namespace

sbx::expected<Composed> compose(const SettingsArgs& a, HomeRoot home_root, const LayerEdit& edit) {
    auto limits = limit_args(a.limits);
    SBX_TRY(limits);
    auto disk = std::make_unique<sbx::DiskFs>();
    auto place = find_place(a, *disk, home_root);
    SBX_TRY(place);
    // Placeholders of sandboxes running in this root now are read as missing, as
    // they will be once those end: settings, rules and plan as if this were alone.
    auto group = sbx::GroupSnapshot::take(place->where.root);
    SBX_TRY(group);
    const sbx::LayerFiles files = layer_files(a, *place, group->paths());
    auto view = std::make_unique<sbx::HidingFs>(*disk, files.hidden);
    auto layers = sbx::load_layers(files);
    SBX_TRY(layers);
    if (edit) SBX_TRY(edit(*layers, files));
    auto agent = add_agent_file(a, *place, *view, *layers);
    SBX_TRY(agent);
    // No settings file anywhere: sbx's built-in default (defaults.hpp), not an
    // unconfined command. Either way the credential stores stay hidden under
    // $HOME and under the account's own home, which HOME may not name.
    std::vector<std::string> credential_homes{place->home};
    if (place->account && *place->account != place->home) credential_homes.push_back(*place->account);
    auto policy = sbx::effective_policy(std::move(*layers), sbx::MergeOptions{!a.untrusted, a.weaker_sandbox, *limits}, *view,
                                        credential_homes);
    SBX_TRY(policy);
    const std::string root = place->where.root;
    auto sources = sbx::layer_file_paths(files);
    if (*agent) sources.push_back((*agent)->file);
    return Composed{root,           place->home,      std::move(place->where), place->cwd,
                    std::move(*policy), std::move(*agent), std::move(*group),   std::move(disk),
                    std::move(view),    std::move(credential_homes), std::move(sources)};
}

std::optional<std::string> usable_git_record_base(const Composed& c, std::vector<sbx::Warning>* warnings) {
    const std::string base = tool_cache_base(c.home);
    const std::string folder = sbx::paths::parent(sbx::git_record_path(base, c.root));
    const auto why = why_cache_dir_unmakeable(folder);
    if (!why) return base;
    if (warnings != nullptr)
        warnings->push_back({folder, "", "no record of the repositories in the root: " + *why +
                                             std::string(sbx::detail::kNoRecordCost)});
    return std::nullopt;
}

RunInputs run_inputs(const Composed& c, const RunChoices& choices) {
    RunInputs in;
    in.tmpdir = choices.tmpdir.empty() ? temporary_directory() : choices.tmpdir;
    // command_fs_rules makes no home without toolCache: nothing to check then.
    if (choices.tool_cache && c.policy.tool_cache.value)
        in.tool_cache_base = usable_tool_cache_base(c, &in.tool_cache_warnings);
    in.own_programs = own_programs(choices.launcher);
    in.git_record_base = usable_git_record_base(c, &in.git_record_warnings);
    return in;
}

sbx::expected<sbx::CommandFsRules> fs_rules(const Composed& c, const RunInputs& in, const sbx::CachedFs& cached) {
    return sbx::command_fs_rules(c.policy, {c.root, in.tmpdir, c.home}, in.tool_cache_base, cached, in.own_programs,
                                 in.git_record_base);
}

sbx::expected<sbx::net::HostRules> host_rules(const Composed& c, sbx::net::UnknownHost on_unknown) {
    auto rules = sbx::net::compile_host_rules(c.policy);
    SBX_TRY(rules);
    rules->on_unknown = on_unknown;
    return std::move(*rules);
}

bool run_scans_stderr() { return ::isatty(STDERR_FILENO) == 0; }

sbx::net::UnknownHost unknown_host(std::string_view given) {
    return sbx::net::parse_unknown_host(given.empty() ? kRunUnknownHost : given).value_or(sbx::net::kRunUnknownHost);
}

sbx::expected<CallHosts> call_hosts(const std::vector<std::string>& given) {
    CallHosts out;
    if (given.empty()) return out;
    out.emplace();
    for (const auto& h : given) {
        auto rule = sbx::net::call_host_rule(h);
        if (!rule) return sbx::fail(sbx::Error(rule.error()).at_key("--allow-host " + h));
        out->push_back(std::move(*rule));
    }
    return out;
}

sbx::expected<RunRules> run_rules(const Composed& c, const RunInputs& in, const sbx::CachedFs& cached) {
    auto fs = fs_rules(c, in, cached);
    SBX_TRY(fs);
    auto hosts = host_rules(c, sbx::net::kRunUnknownHost);
    SBX_TRY(hosts);
    return RunRules{std::move(*fs), std::move(*hosts)};
}

sbx::expected<std::vector<int>> descriptors_to_pass(const std::vector<std::string>& given) {
    const std::string range = "from " + std::to_string(sbx::kFirstPassFd) + " to " + std::to_string(INT_MAX);
    std::vector<int> out;
    for (const auto& text : given) {
        auto bad = [&](const std::string& why) {
            return sbx::fail(sbx::Error(sbx::Errc::invalid_argument, why).at_key("--pass-fd " + text));
        };
        const char* const end = text.data() + text.size();
        long long n = 0;
        const auto [stop, ec] = std::from_chars(text.data(), end, n);
        if (text.empty() || stop != end || (ec != std::errc{} && ec != std::errc::result_out_of_range))
            return bad("not a descriptor number; give an integer " + range);
        if (ec != std::errc{} || n < sbx::kFirstPassFd || n > INT_MAX)
            return bad("out of range; give a descriptor " + range + " (0, 1 and 2 always reach the command)");
        const int fd = static_cast<int>(n);
        if (::fcntl(fd, F_GETFD) == -1) return bad("descriptor " + std::to_string(fd) + " is not open");
        out.push_back(fd);
    }
    return out;
}

sbx::expected<sbx::Plan> plan_for(const Composed& c, const PlanArgs& a) { return plan_for(c, a, *c.view); }

sbx::expected<sbx::Plan> plan_for(const Composed& c, const PlanArgs& a, const sbx::FsView& view) {
    auto env = command_env(c, a);
    SBX_TRY(env);
    const RunInputs in = run_inputs(c, {a.launcher, !a.no_tool_cache, ""});
    sbx::PlanRequest req;
    req.argv = a.command;
    req.root = c.root;
    req.home = c.home;
    req.tmpdir = in.tmpdir;
    // The command starts where sbx was started, when that is inside the root
    // (always, but with a --root elsewhere).
    if (!c.cwd.empty() && sbx::paths::at_or_under(c.cwd, c.root)) req.cwd = c.cwd;
    req.environ = env->environ;
    req.pass_env = env->pass_env;
    req.on_unknown_host = unknown_host(a.on_unknown_host);
    auto hosts = call_hosts(a.allow_hosts);
    // Said as make_plan said it when it parsed them itself: USAGE, the pattern's words alone.
    if (!hosts) return sbx::fail(sbx::Errc::invalid_argument, hosts.error().message);
    req.call_hosts = std::move(*hosts);
    if (!a.answers.empty()) {
        auto answers = read_answers(a.answers);
        SBX_TRY(answers);
        req.answers = std::move(*answers);
    }
    req.pass_fds = a.pass_fds;
    req.scan_stderr = a.scan_stderr || (run_scans_stderr() && !a.no_scan_stderr);
    req.words = c.agent ? sbx::SettingsWords::agent_file : sbx::SettingsWords::settings;
    req.tool_cache_base = in.tool_cache_base;
    req.own_programs = in.own_programs;
    req.git_record_base = in.git_record_base;
    // Placeholders of sandboxes running in this root now are planned as missing,
    // as they will be once those end; the launcher takes them over.
    auto plan = sbx::make_plan(c.policy, req, view);
    // Another group's placeholders look like the project's files with many
    // links; say what they are instead (the launcher checks the rest of the plan).
    if (!plan && !plan.error().file.empty())
        if (auto other = sbx::foreign_placeholder(plan.error().file, c.root)) return sbx::fail(*other);
    if (!plan) return plan;
    if (!a.answers.empty()) SBX_TRY(check_answers_outside(*plan, a.answers));
    const std::vector<sbx::Warning>* const more[] = {&env->warnings, &in.tool_cache_warnings, &in.git_record_warnings};
    for (const auto* list : more) plan->warnings.insert(plan->warnings.end(), list->begin(), list->end());
    plan->root_why = sbx::root_why(c.where);
    return plan;
}

}  // namespace sbx::cli
