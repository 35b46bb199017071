// sbx - the command line people run.
//
//   sbx policy  [--root DIR] [--settings FILE] [--managed-settings FILE] [--untrusted] [--agent-file FILE] [--json]
//   sbx explain [same options] PATH | --host HOST[:PORT]
//   sbx check   [same options] FILE
//   sbx diff    [same options] [--fail-on-widening] --base REV | OLD.json NEW.json
//   sbx plan    [same options] [--allow-home-root] [--no-tool-cache] [--weaker-sandbox] [--env NAME]... [--pass-fd N]... -- COMMAND [ARG...]
//   sbx run     [same options] [--allow-home-root] [--no-tool-cache] [--weaker-sandbox] [--env NAME]... [--pass-fd N]... [--[no-]scan-stderr] [--launcher PATH] -- COMMAND [ARG...]
//   sbx doctor  [--json] [--launcher PATH]
//
// With no --root, the root is the project the current directory is in
// (sbx::find_project_root: the top of its git work tree, else the nearest folder
// with a .claude folder, else the current directory; never the home directory or
// /). Each command says which root it chose and why; the command still starts in
// the current directory.
//
// This file is the only place that prints and picks exit statuses; the engine
// returns values. Exit statuses (README.md, "Exit statuses"):
//   0   success
//   1   sbx check: an expectation does not hold; sbx diff --fail-on-widening:
//       the change widens the sandbox
//   64  the command line is wrong (usage)
//   65  a settings file is invalid
//   66  a file could not be read
//   70  an internal error in sbx
// `sbx run` becomes the launcher, so its statuses are the command's (see
// launchers/sbx_linux.cpp); anything that goes wrong before is 125.
// `sbx doctor` exits 1 when the sandbox cannot run here.
#include <fcntl.h>
#include <ftw.h>
#include <pwd.h>
#if defined(__APPLE__)
#include <mach-o/dyld.h>
#endif
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <charconv>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "sbx/io/fs_view_disk.hpp"
#include "sbx/io/placeholder_registry.hpp"
#include "sbx/io/settings_files.hpp"
#include "sbx/net/host_port.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/plan/command_fs_rules.hpp"
#include "sbx/plan/make_plan.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/plan/plan_json.hpp"
#include "sbx/plan/said_once.hpp"
#include "sbx/review/check.hpp"
#include "sbx/review/check_file.hpp"
#include "sbx/review/decision_diff.hpp"
#include "sbx/review/decision_json.hpp"
#include "sbx/review/value_diff.hpp"
#include "sbx/rules/fs_rules.hpp"
#include "sbx/rules/git_audit.hpp"
#include "sbx/rules/network.hpp"
#include "sbx/rules/tool_cache.hpp"
#include "sbx/settings/agent_env.hpp"
#include "sbx/settings/agent_file.hpp"
#include "sbx/settings/defaults.hpp"
#include "sbx/settings/dotenv.hpp"
#include "sbx/settings/policy.hpp"
#include "sbx/settings/project_root.hpp"

#include "git_files.hpp"    // tools/: the settings at a git revision, for sbx diff
#include "host_lookup.hpp"  // launchers/: this machine's addresses and name lookup, as the proxy's
#include "signals.hpp"      // launchers/: the grace period after a signal
#if defined(__linux__)
#include "git_audit.hpp"       // launchers/: the audit's walk, for a root's first record of its repositories
#include "linux_platform.hpp"  // launchers/: the Linux launcher's steps, which `sbx run` runs itself
#include "stage.hpp"           // launchers/: the stage, should sbx-stage not be there
#endif
#include "run_program.hpp"  // launchers/: find_in_path, for the name sbx was started by
#include "tool_cache.hpp"   // launchers/: the checks the launcher makes before it makes the tool cache home
#include "trace.hpp"        // launchers/: --trace-fd's lines

namespace {

enum Exit : int {
    kOk = 0,
    kUsage = 64,
    kInvalidInput = 65,
    kNoInput = 66,
    kInternal = 70,
    kRunFailed = 125,  // sbx run: nothing ran
};

int exit_for(const sbx::Error& e) {
    switch (e.code) {
        case sbx::Errc::invalid_settings:
        case sbx::Errc::invalid_plan: return kInvalidInput;
        case sbx::Errc::io_error: return kNoInput;
        case sbx::Errc::invalid_argument: return kUsage;
        default: return kInternal;
    }
}

int report(const sbx::Error& e) {
    std::cerr << "sbx: " << sbx::errc_name(e.code) << ": " << sbx::to_string(e) << "\n";
    return exit_for(e);
}

// An absolute, normalised form of a path given on the command line.
std::string absolute(const std::string& p) {
    if (sbx::paths::is_absolute(p)) return sbx::paths::normalize(p);
    char buf[PATH_MAX];
    if (::getcwd(buf, sizeof buf) == nullptr) return sbx::paths::normalize("/" + p);
    return sbx::paths::join(buf, p);
}

std::string own_path();
sbx::expected<std::string> find_launcher(const std::string& given);

// This program's own arguments (main sets them), and, on a later attempt of
// `sbx run` (--started-as), the name the first attempt was started by.
std::vector<std::string> g_arguments;
std::string g_started_as;

// The name this program was started by, absolute: argv[0] (looked up on PATH
// when it holds no '/'), or the first attempt's; empty when not found.
std::string started_as() {
    if (!g_started_as.empty()) return g_started_as;
    if (g_arguments.empty() || g_arguments.front().empty()) return {};
    const std::string& name = g_arguments.front();
    if (name.find('/') != std::string::npos) return absolute(name);
    const char* path = std::getenv("PATH");
    return sbx::launcher::find_in_path(name, path != nullptr ? std::optional<std::string>(path) : std::nullopt).path;
}

// sbx's own programs, for the engine to protect where a command could write them
// (sbx/rules/own_programs.hpp): this program under the name it was started by
// (argv[0], looked up on PATH when it holds no '/'), its own path, the stage the
// sandbox starts, and the launcher (`launcher`, else the one beside sbx) with the
// stage beside it. What is not there is left out: no run uses it.
std::vector<std::string> own_programs(const std::string& launcher) {
    std::vector<std::string> out;
    auto put = [&](const std::string& p) {
        if (p.empty() || !sbx::paths::is_absolute(p)) return;
        const std::string clean = sbx::paths::normalize(p);
        if (std::find(out.begin(), out.end(), clean) == out.end()) out.push_back(clean);
    };
    put(started_as());
    put(own_path());
#if defined(__linux__)
    put(sbx::linux_sandbox::stage_binary_path());
#endif
    if (auto l = find_launcher(launcher)) {
        put(*l);
        const std::string stage = sbx::paths::join(sbx::paths::parent(*l), "sbx-stage");
        if (::access(stage.c_str(), X_OK) == 0) put(stage);
    }
    return out;
}

sbx::expected<std::string> home_directory() {
    if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
        if (!sbx::paths::is_absolute(h))
            return sbx::fail(sbx::Errc::invalid_argument, std::string("HOME is not an absolute path: ") + h);
        return sbx::paths::normalize(h);
    }
    if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr)
        return sbx::paths::normalize(pw->pw_dir);
    return sbx::fail(sbx::Errc::invalid_argument, "HOME is not set and the user has no home directory");
}

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

// "user ~/.claude/settings.json sandbox.enabled", "builtin (built-in)
// defaults.enabled" for the built-in default policy, or "default".
std::string describe(const std::optional<sbx::Source>& s) {
    if (!s) return "default";
    return std::string(sbx::layer_name(s->layer)) + "  " + s->file + "  " + s->key;
}

void print_text(const sbx::Policy& p, const sbx::ProjectRoot& root) {
    auto& out = std::cout;
    out << "policy for " << root.root << ": " << sbx::root_why(root) << (p.trusted ? "" : "; untrusted project") << "\n";
    auto boolean = [&](std::string_view name, const sbx::Value<bool>& v) {
        std::string label(name);
        label.resize(std::max<std::size_t>(label.size() + 1, 36), ' ');
        out << "  " << label << (v.value ? "true " : "false") << "  " << describe(v.source) << "\n";
    };
    auto list = [&](std::string_view name, const sbx::SourcedList& l) {
        out << "  " << name << (l.empty() ? ": none" : ":") << "\n";
        for (const auto& e : l) out << "    " << e.value << "    " << describe(e.source) << "\n";
    };
    boolean("adminRequired", p.admin_required);
    boolean("enabled", p.enabled);
    boolean("autoAllow", p.auto_allow);
    boolean("allowUnsandboxed", p.allow_unsandboxed);
    boolean("failIfUnavailable", p.fail_if_unavailable);
    boolean("weakerSandbox", p.weaker_sandbox);
    boolean("toolCache", p.tool_cache);
    boolean("quiet", p.quiet);
    list("excludedCommands", p.excluded_commands);
    out << "  ignoreViolations" << (p.ignore_violations.empty() ? ": none" : ":") << "\n";
    for (const auto& r : p.ignore_violations) {
        out << "    " << r.command << ":";
        for (const auto& v : r.violations) out << " \"" << v << "\"";
        out << "    " << describe(r.source) << "\n";
    }
    list("filesystem.allowWrite", p.filesystem.allow_write);
    list("filesystem.denyWrite", p.filesystem.deny_write);
    list("filesystem.denyRead", p.filesystem.deny_read);
    list("filesystem.allowRead", p.filesystem.allow_read);
    boolean("filesystem.disabled", p.filesystem.disabled);
    boolean("filesystem.allowManagedReadPathsOnly", p.filesystem.managed_read_paths_only);
    list("network.allowedDomains", p.network.allowed_domains);
    list("network.deniedDomains", p.network.denied_domains);
    list("network.allowUnixSockets", p.network.allow_unix_sockets);
    boolean("network.strictAllowlist", p.network.strict_allowlist);
    boolean("network.allowLocalBinding", p.network.allow_local_binding);
    boolean("network.allowAllUnixSockets", p.network.allow_all_unix_sockets);
    boolean("network.allowManagedDomainsOnly", p.network.managed_domains_only);
    list("credentials.envVars", p.credentials.env_vars);
    list("credentials.files", p.credentials.files);
    list("additionalDirectories", p.additional_directories);
    for (auto [name, v] : {std::pair{"bwrapPath", &p.bwrap_path}, std::pair{"socatPath", &p.socat_path}}) {
        out << "  " << name << ": ";
        if (*v) out << (*v)->value << "    " << describe((*v)->source) << "\n";
        else out << "from PATH    default\n";
    }
    out << "warnings" << (p.warnings.empty() ? ": none" : ":") << "\n";
    for (const auto& w : p.warnings) out << "  " << sbx::to_string(w) << "\n";
}

// The options every command that reads settings takes.
struct SettingsArgs {
    std::string root;                    // --root; see root_given()
    CLI::Option* root_option = nullptr;  // counts whether --root was given
    std::vector<std::string> settings;
    std::string managed;
    bool untrusted = false;
    bool json = false;
    std::string agent_file;
    bool weaker_sandbox = false;  // --weaker-sandbox (sbx plan and sbx run only): PlanArgs::add_weaker_sandbox_to

    bool root_given() const { return root_option != nullptr && root_option->count() > 0; }

    void add_to(CLI::App* cmd, bool with_json = true) {
        root_option = cmd->add_option("--root", root,
                                      "The project directory (default: the top of the git work tree holding the current "
                                      "directory, else the nearest folder above with a .claude folder, else the current "
                                      "directory; never your home directory or /)");
        cmd->add_option("--settings", settings,
                        "More settings files, above the project's and below managed ones; a later one ranks higher")
            ->take_all()
            ->allow_extra_args(false);
        cmd->add_option("--managed-settings", managed, "Read managed settings from FILE instead of the system path");
        cmd->add_flag("--untrusted", untrusted, "The project is not trusted: keep only what tightens the sandbox");
        cmd->add_option("--agent-file", agent_file,
                        "Confine as the sandbox block of this agent file says (a layer just below --settings)");
        if (with_json) cmd->add_flag("--json", json, "Print JSON instead of text");
    }
};

struct Loaded {
    std::string root, home;
    sbx::ProjectRoot where;  // the root and why it is the root
    std::string cwd;         // the current directory, symlinks resolved
    sbx::Policy policy;
    std::optional<sbx::AgentFile> agent;  // --agent-file
    // The root's group of running sandboxes, held from before the settings are
    // read until release(), and the disk without its placeholders, as the
    // settings were read and the plan is to be made.
    std::optional<sbx::GroupSnapshot> group;
    std::unique_ptr<sbx::HidingFs> view;
    std::vector<std::string> credential_homes;  // whose credential stores stay hidden: HOME's, the account's
};

// Whether a root that is or holds your home directory is refused: `sbx plan` and
// `sbx run` refuse it unless --allow-home-root; `sbx policy` and `sbx explain`
// run nothing.
enum class HomeRoot { allowed, refused };

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

// What a caller may do to the layers before they are merged: `sbx diff` puts
// the project's files of another revision in place of the work tree's.
using LayerEdit = std::function<sbx::expected<void>(std::vector<sbx::Settings>& layers, const sbx::LayerFiles& files)>;

// Finds the root and the layers, and merges them (or takes the built-in default).
sbx::expected<Loaded> load_policy(const SettingsArgs& a, const sbx::FsView& disk, HomeRoot home_root,
                                  const LayerEdit& edit = {}) {
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

    // Placeholders of sandboxes running in this root now are read as missing, as
    // they will be once those end: settings, rules and plan as if this were alone.
    auto group = sbx::GroupSnapshot::take(root);
    SBX_TRY(group);
    sbx::LayerFiles files;
    files.hidden = group->paths();
    auto view = std::make_unique<sbx::HidingFs>(disk, files.hidden);
    const sbx::FsView& fs = *view;

    files.root = root;
    files.home = *home;
    if (!a.managed.empty()) {
        files.managed = absolute(a.managed);
        files.managed_explicit = true;
    }
    for (const auto& f : a.settings) files.flags.push_back(absolute(f));

    auto layers = sbx::load_layers(files);
    SBX_TRY(layers);
    if (edit) SBX_TRY(edit(*layers, files));
    std::optional<sbx::AgentFile> agent;
    if (!a.agent_file.empty()) {
        const std::string file = absolute(a.agent_file);
        auto text = sbx::read_small_file(file, sbx::kMaxSettingsBytes, sbx::Errc::invalid_settings);
        SBX_TRY(text);
        if (!*text) return sbx::fail(sbx::Error(sbx::Errc::io_error, "no agent file here").in_file(file));
        auto parsed = sbx::parse_agent_file(**text, sbx::AgentFileSource{file, *home, sbx::LayerKind::flag});
        SBX_TRY(parsed);
        sbx::deny_home_env_files(*parsed, sbx::find_home_env_files(*home, fs));
        if (!here.empty()) sbx::deny_env_files_in(*parsed, here);
        sbx::insert_agent_layer(*layers, *parsed);
        agent = std::move(*parsed);
    }
    // No settings file anywhere: sbx's built-in default (defaults.hpp), not an
    // unconfined command. Either way the credential stores stay hidden under
    // $HOME and under the account's own home, which HOME may not name.
    std::vector<std::string> credential_homes{*home};
    if (account && *account != *home) credential_homes.push_back(*account);
    auto policy = sbx::effective_policy(std::move(*layers), sbx::MergeOptions{!a.untrusted, a.weaker_sandbox}, fs,
                                        credential_homes);
    SBX_TRY(policy);
    return Loaded{root,           *home,           std::move(*where), here,           std::move(*policy),
                  std::move(agent), std::move(*group), std::move(view), std::move(credential_homes)};
}

// The root as JSON members: "root", "rootReason" (option, git-work-tree,
// claude-folder, current-directory), "rootWhy" (sbx::root_why) and "rootFrom"
// (the .git or .claude that decided, or null).
void write_root(sbx::json::Writer& w, const sbx::ProjectRoot& r) {
    w.key("root").value(r.root).key("rootReason").value(sbx::root_reason_name(r.reason));
    w.key("rootWhy").value(sbx::root_why(r)).key("rootFrom");
    if (r.decided_by.empty()) w.null();
    else w.value(r.decided_by);
}

// The command's temporary directory: under $TMPDIR (or /tmp), a fresh name.
std::string temporary_directory() {
    std::string base = "/tmp";
    if (const char* t = std::getenv("TMPDIR"); t != nullptr && sbx::paths::is_absolute(t)) base = sbx::paths::normalize(t);
    std::random_device rd;
    char name[32];
    std::snprintf(name, sizeof name, "sbx-%08x%08x", rd(), rd());
    return sbx::paths::join(base, name);
}

// Where tool caches go: $XDG_CACHE_HOME when set and absolute, else HOME/.cache.
std::string tool_cache_base(const std::string& home) {
    const char* x = std::getenv("XDG_CACHE_HOME");
    return sbx::tool_cache_base(x != nullptr ? std::optional<std::string_view>(x) : std::nullopt, home);
}

// Why this user cannot make the directory `dir` under the cache folder as the
// launcher makes it (make_tool_cache: another user's HOME, a folder others may
// write to, one the user cannot write), or nullopt when it can.
std::optional<std::string> why_cache_dir_unmakeable(std::string dir) {
    if (auto safe = sbx::launcher::check_tool_cache(dir, ::getuid()); !safe) return sbx::to_string(safe.error());
    struct stat st {};
    while (dir != "/" && ::lstat(dir.c_str(), &st) != 0) dir = sbx::paths::parent(dir);
    if (::access(dir.c_str(), W_OK | X_OK) == 0) return std::nullopt;
    return "you cannot write to " + dir + " (" + std::strerror(errno) + ")";
}

// The folder the root's record of the repositories found in it lies under
// (sbx/rules/git_record.hpp: the tool cache's), unless this user cannot make
// the record's folder: then nullopt, and a warning.
std::optional<std::string> usable_git_record_base(const Loaded& l, std::vector<sbx::Warning>* warnings) {
    const std::string base = tool_cache_base(l.home);
    const std::string folder = sbx::paths::parent(sbx::git_record_path(base, l.root));
    const auto why = why_cache_dir_unmakeable(folder);
    if (!why) return base;
    if (warnings != nullptr)
        warnings->push_back({folder, "", "no record of the repositories in the root: " + *why +
                                             std::string(sbx::detail::kNoRecordCost)});
    return std::nullopt;
}

#if defined(__linux__)
// The root's record of its repositories (sbx/rules/git_record.hpp) brought up to
// date before the plan is made: the directories that changed since sbx last
// looked are listed again (all of the root before its first run), so that a
// repository made or cloned since is protected during this run too, as those
// recorded are. Where the record cannot be kept, the plan says so
// (usable_git_record_base).
void refresh_git_record(const Loaded& l) {
    const auto base = usable_git_record_base(l, nullptr);
    if (!base) return;
    auto real = sbx::resolve(*l.view, *base);
    if (!real) return;
    (void)sbx::launcher::refresh_git_record(sbx::git_record_path(*real, l.root), sbx::git_stamps_path(*real, l.root),
                                            l.root);
}
#endif

// The plan's once warnings (sbx/plan/said_once.hpp) that sbx run said before
// for this root are left out of what it says now; the others are said and
// kept as said. Where the file cannot be kept, every warning is said.
void say_warnings_once(const Loaded& l, sbx::Plan& plan) {
    if (std::none_of(plan.warnings.begin(), plan.warnings.end(), [](const sbx::Warning& w) { return w.once; })) return;
    const std::string path = sbx::said_path(tool_cache_base(l.home), l.root);
    if (why_cache_dir_unmakeable(sbx::paths::parent(path))) return;
    const auto text = sbx::launcher::read_small(AT_FDCWD, path, sbx::said_once::kMaxBytes);
    auto now = sbx::say_once(plan.warnings, text ? sbx::parse_said(*text) : std::vector<std::string>{});
    if (now.changed && !sbx::launcher::keep_file(path, sbx::said_text(now.said), "the warnings said for the root"))
        return;  // not kept: said again next time, as before
    plan.warnings = std::move(now.say);
}

// The base of the root's tool cache home, unless this user cannot make the home
// (a HOME of another's, a read-only one): then nullopt, and a warning, as the
// engine leaves out a home it must not make.
std::optional<std::string> usable_tool_cache_base(const Loaded& l, std::vector<sbx::Warning>* warnings) {
    const std::string base = tool_cache_base(l.home);
    // What the launcher would refuse to make is left out here instead.
    const auto why = why_cache_dir_unmakeable(sbx::tool_cache_dir(base, l.root));
    if (!why) return base;
    if (warnings != nullptr)
        warnings->push_back(
            {"", "sandbox.toolCache", "no tool cache home: " + *why + "; tools keep their own (read-only) caches"});
    return std::nullopt;
}

// The tool cache home `sbx run` would give commands of the loaded root, and how
// large it has grown.
struct ToolCacheHome {
    std::optional<std::string> path;  // nullopt: none (why says why)
    bool exists = false;
    std::uint64_t bytes = 0, files = 0;  // regular files below it, symlinks not followed
    std::string why;
};

// Regular files and their bytes below a directory, walked without following
// symlinks or crossing into other filesystems (nftw keeps no caller data).
struct TreeSize {
    std::uint64_t bytes = 0, files = 0;
};
TreeSize g_tree_size;

int count_entry(const char*, const struct stat* st, int type, FTW*) {
    if (type == FTW_F && S_ISREG(st->st_mode)) {
        g_tree_size.bytes += static_cast<std::uint64_t>(st->st_size);
        ++g_tree_size.files;
    }
    return 0;
}

// The rules `sbx run` gives a command of the loaded root (command_fs_rules with
// its tool cache home and sbx's own programs), what the programs are, and why the
// caller could not make the tool cache home.
struct PolicyRules {
    sbx::CommandFsRules run;
    std::vector<std::string> programs;
    std::vector<sbx::Warning> unusable;
};

sbx::expected<PolicyRules> policy_rules(const Loaded& l, const sbx::CachedFs& cached) {
    PolicyRules out;
    out.programs = own_programs("");
    auto run = sbx::command_fs_rules(l.policy, {l.root, temporary_directory(), l.home},
                                     usable_tool_cache_base(l, &out.unusable), cached, out.programs,
                                     usable_git_record_base(l, nullptr));
    SBX_TRY(run);
    out.run = std::move(*run);
    return out;
}

sbx::expected<ToolCacheHome> tool_cache_home(const Loaded& l, const PolicyRules& rules) {
    ToolCacheHome out;
    const sbx::CommandFsRules* const run = &rules.run;
    std::vector<sbx::Warning> unusable = rules.unusable;
    if (run->rules.disabled) {
        out.why = "filesystem isolation is disabled, so the command writes the caches you do";
        return out;
    }
    if (!l.policy.tool_cache.value) {
        out.why = "toolCache is false";
        return out;
    }
    if (!run->tool_cache) {
        unusable.insert(unusable.end(), run->tool_cache_warnings.begin(), run->tool_cache_warnings.end());
        out.why = unusable.empty() ? "none" : unusable.front().message;
        return out;
    }
    out.path = run->tool_cache;
    struct stat st {};
    if (::lstat(out.path->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return out;
    out.exists = true;
    g_tree_size = {};
    if (::nftw(out.path->c_str(), count_entry, 32, FTW_PHYS | FTW_MOUNT) != 0)
        return sbx::fail(sbx::Error(sbx::Errc::io_error, std::string("cannot walk the tool cache home: ") + std::strerror(errno))
                             .in_file(*out.path));
    out.bytes = g_tree_size.bytes;
    out.files = g_tree_size.files;
    return out;
}

// sbx's own programs and what of them a run protects: the members of
// `sbx policy --json`'s "ownPrograms".
void write_own_programs(sbx::json::Writer& w, const PolicyRules& r) {
    w.key("programs").begin_array();
    for (const auto& p : r.programs) w.value(p);
    w.end_array().key("protected").begin_array();
    for (const auto& p : r.run.own_programs) w.begin_object().key("path").value(p.path).key("reason").value(p.reason).end_object();
    w.end_array().key("warnings").begin_array();
    for (const auto& x : r.run.own_program_warnings) w.value(x.message);
    w.end_array();
}

// The root's git directories outside it that its commands may write (a linked
// worktree's main git directory), with why: the writable rules of that list.
std::vector<const sbx::FsRule*> git_writable(const PolicyRules& r) {
    std::vector<const sbx::FsRule*> out;
    for (const auto& rule : r.run.rules.rules)
        if (rule.kind == sbx::FsRule::Kind::writable && rule.list == sbx::kRootGitDirList) out.push_back(&rule);
    return out;
}

// The same in words, for `sbx policy`: one line, and one per protected path.
void print_own_programs(const PolicyRules& r) {
    std::cout << "sbx's own programs:";
    for (std::size_t i = 0; i < r.programs.size(); ++i) std::cout << (i == 0 ? " " : ", ") << r.programs[i];
    if (r.programs.empty()) std::cout << " none found";
    if (r.run.rules.disabled) std::cout << " (filesystem isolation is disabled: commands can write them)";
    else if (r.run.own_programs.empty() && r.run.own_program_warnings.empty())
        std::cout << " (outside every writable place: read-only to commands already)";
    std::cout << "\n";
    for (const auto& p : r.run.own_programs) std::cout << "  protected: " << p.path << " (" << p.reason << ")\n";
    for (const auto& x : r.run.own_program_warnings) std::cout << "  warning: " << x.file << ": " << x.message << "\n";
}

int run_policy(const SettingsArgs& a) {
    sbx::DiskFs fs;
    auto loaded = load_policy(a, fs, HomeRoot::allowed);
    if (!loaded) return report(loaded.error());
    sbx::CachedFs cached(*loaded->view);
    auto rules = policy_rules(*loaded, cached);
    if (!rules) return report(rules.error());
    auto cache = tool_cache_home(*loaded, *rules);
    if (!cache) return report(cache.error());
    if (a.json) {
        sbx::json::Writer w;
        w.begin_object();
        write_root(w, loaded->where);
        w.key("toolCacheHome").begin_object().key("path");
        if (cache->path) w.value(*cache->path);
        else w.null();
        w.key("exists").value(cache->exists).key("bytes").value(cache->bytes).key("files").value(cache->files);
        if (!cache->path) w.key("why").value(cache->why);
        w.end_object();
        w.key("ownPrograms").begin_object();
        write_own_programs(w, *rules);
        w.end_object();
        w.key("gitWritable").begin_array();
        for (const auto* g : git_writable(*rules))
            w.begin_object().key("path").value(g->pattern).key("reason").value(g->note).end_object();
        w.end_array();
        sbx::write_policy_members(w, loaded->policy);
        std::cout << w.end_object().str() << "\n";
        return kOk;
    }
    print_text(loaded->policy, loaded->where);
    std::cout << "tool cache home: ";
    if (!cache->path) std::cout << "none (" << cache->why << ")\n";
    else if (!cache->exists) std::cout << *cache->path << " (not made yet)\n";
    else std::cout << *cache->path << " (" << cache->bytes << " bytes in " << cache->files << " files)\n";
    print_own_programs(*rules);
    for (const auto* g : git_writable(*rules)) std::cout << "git directory, writable: " << g->pattern << " (" << g->note << ")\n";
    return kOk;
}

// The defaults of `sbx run`, which `sbx plan` shares. A host no rule decides is
// asked about on the terminal; with no terminal the launcher refuses it. File
// refusals are read from the command's standard error when a program reads it: on
// a terminal the command keeps the terminal (and its person sees the errors),
// unless --scan-stderr.
constexpr std::string_view kRunUnknownHost = sbx::net::unknown_host_name(sbx::net::kRunUnknownHost);
bool run_scans_stderr() { return ::isatty(STDERR_FILENO) == 0; }

// What --on-unknown-host takes.
std::vector<std::string> unknown_host_choices() {
    std::vector<std::string> out;
    for (const auto& entry : sbx::net::kUnknownHostNames) out.emplace_back(entry.first);
    return out;
}

struct PlanArgs {
    SettingsArgs settings;
    std::vector<std::string> pass_env;
    std::vector<std::string> allow_hosts;  // the call's own hosts
    std::string on_unknown_host;           // deny, allow, ask; empty: the command's default
    bool scan_stderr = false, no_scan_stderr = false;  // neither: the command's default
    std::vector<std::string> pass_fd_args;  // --pass-fd, as given
    std::vector<int> pass_fds;              // the same, checked by descriptors_to_pass (the plan's are sorted)
    std::vector<std::string> command;
    bool allow_home_root = false;  // --allow-home-root
    bool no_tool_cache = false;    // --no-tool-cache
    std::string launcher;          // sbx run's --launcher, whose programs the plan protects too

    void add_tool_cache_to(CLI::App* cmd) {
        cmd->add_flag("--no-tool-cache", no_tool_cache,
                      "Give the command no writable cache home of the project's (XDG_CACHE_HOME, npm, Go, pip, ccache, "
                      "cargo...): tools then find their caches read-only");
    }

    void add_home_root_to(CLI::App* cmd) {
        cmd->add_flag("--allow-home-root", allow_home_root,
                      "Accept a root that is or holds your home directory, although every dotfile in it (shell "
                      "start-up files, ~/.local/bin, ~/.config) is then writable to the command");
    }

    HomeRoot home_root() const { return allow_home_root ? HomeRoot::allowed : HomeRoot::refused; }

    void add_weaker_sandbox_to(CLI::App* cmd) {
        cmd->add_flag(std::string(sbx::kWeakerSandboxOption), settings.weaker_sandbox,
                      "Where user namespaces are refused, run with the weaker sandbox (Landlock and seccomp, no "
                      "namespaces) instead of refusing; see 'The weaker sandbox' in README.md");
    }

    void add_pass_fd_to(CLI::App* cmd) {
        cmd->add_option("--pass-fd", pass_fd_args,
                        "Pass the open descriptor N (3 or more) to the command; by default it gets only 0, 1 and 2")
            ->type_name("N")
            ->take_all()
            ->allow_extra_args(false);
    }

    void add_network_to(CLI::App* cmd) {
        cmd->add_option("--allow-host", allow_hosts,
                        "Let the command reach PATTERN (github.com, *.pypi.org, 127.0.0.1:3000) and refuse every host no "
                        "settings list allows")
            ->take_all()
            ->allow_extra_args(false);
        cmd->add_option("--on-unknown-host", on_unknown_host,
                        "What to do with a host no rule decides: deny, allow, or ask on the terminal")
            ->check(CLI::IsMember(unknown_host_choices()));
        auto* scan = cmd->add_flag("--scan-stderr", scan_stderr,
                                   "Report the file refusals the command prints on standard error (advisory)");
        auto* no_scan = cmd->add_flag("--no-scan-stderr", no_scan_stderr, "Do not read the command's standard error");
        scan->excludes(no_scan);
    }
};

// The descriptors --pass-fd names: each a decimal integer from 3 (sbx::kFirstPassFd)
// to INT_MAX, and open. Called before sbx opens anything of its own, so an open
// one is the caller's. In the order given: make_plan sorts them and merges repeats.
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

// The call's own hosts (--allow-host), parsed once for sbx plan, sbx run and
// sbx explain; nullopt when none are given, so that the settings' lists alone
// decide. INVALID_SETTINGS at "--allow-host TEXT" for a pattern that does not parse.
sbx::expected<std::optional<std::vector<sbx::net::HostRule>>> call_hosts(const std::vector<std::string>& given) {
    std::optional<std::vector<sbx::net::HostRule>> out;
    if (given.empty()) return out;
    out.emplace();
    for (const auto& h : given) {
        auto p = sbx::net::parse_host_pattern(h);
        if (!p) return sbx::fail(sbx::Error(p.error()).at_key("--allow-host " + h));
        out->push_back(sbx::net::HostRule{std::move(*p), h, "the call's hosts", std::nullopt});
    }
    return out;
}

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

sbx::expected<sbx::Plan> plan_for(const Loaded& l, const PlanArgs& a, std::string_view default_unknown,
                                  bool default_scan) {
    const sbx::FsView& fs = *l.view;
    const auto& argv = a.command;
    std::vector<std::string> pass_env = a.pass_env;
    auto env = environment();
    std::vector<sbx::Warning> agent_warnings;
    if (l.agent) {
        SBX_TRY(sbx::require_confined(*l.agent));
        // Its env list passes those variables as --env does (agent_env.hpp); the
        // .env files are read only when a name is not exported.
        const auto dotenv_files = sbx::agent_dotenv_files(*l.agent, l.cwd);
        std::vector<std::optional<std::vector<sbx::DotenvEntry>>> dotenvs(dotenv_files.size());
        if (sbx::agent_env_needs_dotenv(*l.agent, env))
            for (std::size_t i = 0; i < dotenv_files.size(); ++i) {
                auto read = read_dotenv(dotenv_files[i], fs, agent_warnings);
                SBX_TRY(read);
                dotenvs[i] = std::move(*read);
            }
        auto passed = sbx::agent_env(*l.agent, env, dotenv_files, dotenvs);
        env.insert(env.end(), passed.assignments.begin(), passed.assignments.end());
        pass_env.insert(pass_env.end(), passed.pass.begin(), passed.pass.end());
        agent_warnings.insert(agent_warnings.end(), passed.warnings.begin(), passed.warnings.end());
    }
    sbx::PlanRequest req;
    req.argv = argv;
    req.root = l.root;
    req.home = l.home;
    req.tmpdir = temporary_directory();
    // The command starts where sbx was started, when that is inside the root
    // (always, but with a --root elsewhere).
    if (!l.cwd.empty() && sbx::paths::at_or_under(l.cwd, l.root)) req.cwd = l.cwd;
    req.environ = env;
    req.pass_env = pass_env;
    const std::string_view unknown = a.on_unknown_host.empty() ? default_unknown : std::string_view(a.on_unknown_host);
    // CLI11 has checked the option against unknown_host_choices().
    req.on_unknown_host = sbx::net::parse_unknown_host(unknown).value_or(sbx::net::UnknownHost::deny);
    auto hosts = call_hosts(a.allow_hosts);
    // Said as make_plan said it when it parsed them itself: USAGE, the pattern's words alone.
    if (!hosts) return sbx::fail(sbx::Errc::invalid_argument, hosts.error().message);
    req.call_hosts = std::move(*hosts);
    req.pass_fds = a.pass_fds;
    req.scan_stderr = a.scan_stderr || (default_scan && !a.no_scan_stderr);
    req.words = l.agent ? sbx::SettingsWords::agent_file : sbx::SettingsWords::settings;
    if (!a.no_tool_cache && l.policy.tool_cache.value) req.tool_cache_base = usable_tool_cache_base(l, &agent_warnings);
    req.own_programs = own_programs(a.launcher);
    req.git_record_base = usable_git_record_base(l, &agent_warnings);
    // Placeholders of sandboxes running in this root now are planned as missing,
    // as they will be once those end; the launcher takes them over.
    auto plan = sbx::make_plan(l.policy, req, *l.view);
    // Another group's placeholders look like the project's files with many
    // links; say what they are instead (the launcher checks the rest of the plan).
    if (!plan && !plan.error().file.empty())
        if (auto other = sbx::foreign_placeholder(plan.error().file, l.root)) return sbx::fail(*other);
    if (plan) plan->warnings.insert(plan->warnings.end(), agent_warnings.begin(), agent_warnings.end());
    if (plan) plan->root_why = sbx::root_why(l.where);
    return plan;
}

// One line naming the variables left out of the command's environment (names
// only, never values), or nothing: `sbx plan` says why each was.
std::string removed_env_line(const std::vector<sbx::RemovedEnvVar>& removed) {
    if (removed.empty()) return {};
    std::string names;
    for (const auto& r : removed) names += (names.empty() ? "" : ", ") + sbx::printable_line_part(r.name);
    return "sbx: left out of the command's environment (may hold secrets): " + names +
           "; pass one with --env NAME (sbx plan says why each)\n";
}

struct ExplainArgs {
    SettingsArgs settings;
    std::string path;
    std::string host;                      // --host HOST[:PORT]
    std::vector<std::string> allow_hosts;  // as sbx run's
    std::string on_unknown_host{kRunUnknownHost};  // as sbx run's default
};

// explain's last line of text: "  root ROOT: WHY", as `sbx run` says it.
void print_root_line(const sbx::ProjectRoot& r) { std::cout << "  root " << r.root << ": " << sbx::root_why(r) << "\n"; }

// `sbx explain --host`: what the proxy of `sbx run` would decide for HOST[:PORT]
// (port 443 when none is given), and the rule behind it.
int explain_host(const ExplainArgs& a, const Loaded& loaded) {
    auto target = sbx::net::named_target(a.host);
    if (!target)
        return report(sbx::Error(sbx::Errc::invalid_argument,
                                 "--host takes a host name or address with an optional port (github.com, "
                                 "127.0.0.1:3000, [::1]:80): " + target.error().message));
    auto rules = sbx::net::compile_host_rules(loaded.policy);
    if (!rules) return report(rules.error());
    rules->on_unknown = sbx::net::parse_unknown_host(a.on_unknown_host).value_or(sbx::net::UnknownHost::ask);
    auto hosts = call_hosts(a.allow_hosts);
    if (!hosts) return report(hosts.error());
    sbx::net::HostCall call;
    call.hosts = std::move(*hosts);
    // As the proxy: this machine's addresses, the decision, and for a name the
    // rules let through (or ask about) the addresses it resolves to here, judged
    // by the engine. Nothing is resolved for a refused name.
    const std::vector<sbx::net::Address> own = sbx::launcher::own_addresses();
    const auto d = sbx::net::decide_host(*rules, call, *target, own);
    using V = sbx::net::HostDecision::Verdict;
    const bool name = !target->address.has_value();
    const bool resolves = name && d.verdict != V::deny;
    std::vector<sbx::net::AddressVerdict> judged;
    std::optional<std::string> unresolved;  // why the name does not resolve here
    std::vector<sbx::net::Address> resolved;
    if (resolves) {
        auto r = sbx::launcher::resolve_host(target->host);
        if (r) resolved = std::move(*r);
        else unresolved = r.error().message;
        for (const auto& addr : resolved) judged.push_back(sbx::net::judge_address(d, *rules, call, *target, addr, own));
    }
    // The final verdict: the decision's, unless the addresses refuse it; when
    // the name does not resolve here, the decision's.
    V final_verdict = d.verdict;
    std::string final_why = d.why;
    std::optional<sbx::net::Address> dials;
    if (d.verdict != V::deny && !unresolved) {
        auto chosen = sbx::net::choose_address(d, *rules, call, *target, resolved, own);
        if (chosen) {
            dials = *chosen;
        } else {
            final_verdict = V::deny;
            final_why = chosen.error().message;
        }
    }
    auto bracketed = [](const sbx::net::Address& x) {
        return x.is_v6() ? "[" + sbx::net::to_string(x) + "]" : sbx::net::to_string(x);
    };
    const std::string where = sbx::net::to_string(*target);
    if (a.settings.json) {
        sbx::json::Writer w;
        w.begin_object();
        write_root(w, loaded.where);
        w.key("host").value(target->host).key("port").value(static_cast<int>(target->port));
        sbx::review::write_host_decision_members(w, d);
        w.key("resolvedLater").value(resolves);
        w.key("addresses").begin_array();
        for (const auto& j : judged)
            w.begin_object().key("address").value(sbx::net::to_string(j.address)).key("class").value(j.kind)
                .key("allowed").value(j.allowed).end_object();
        w.end_array();
        w.key("resolveError");
        if (unresolved) w.value(*unresolved);
        else w.null();
        w.key("dials");
        if (dials) w.value(sbx::net::to_string(*dials));
        else w.null();
        w.key("finalVerdict").value(sbx::net::verdict_name(final_verdict)).key("finalWhy").value(final_why).end_object();
        std::cout << w.take() << "\n";
        return kOk;
    }
    auto verdict_word = [](V v) { return v == V::allow ? "allowed" : v == V::ask ? "asked" : "refused"; };
    std::cout << where << "\n  network: " << verdict_word(d.verdict) << "  " << d.why;
    if (d.verdict == V::ask) std::cout << " (on the terminal; refused where there is none)";
    std::cout << "\n";
    if (resolves) {
        if (unresolved) std::cout << "  resolves: not here (" << *unresolved << "); the proxy resolves it again when the command connects\n";
        for (const auto& j : judged)
            std::cout << "  resolves to: " << bracketed(j.address) << "  " << j.kind << "  "
                      << (j.allowed ? "may be dialed" : "not dialed") << "\n";
    }
    std::cout << "  final: " << verdict_word(final_verdict);
    if (dials) std::cout << ", dials " << bracketed(*dials) << ":" << target->port;
    if (final_verdict != d.verdict || unresolved) std::cout << "  " << final_why;
    std::cout << "\n";
    print_root_line(loaded.where);
    return kOk;
}

int run_explain(const ExplainArgs& a) {
    sbx::DiskFs fs;
    auto loaded = load_policy(a.settings, fs, HomeRoot::allowed);
    if (!loaded) return report(loaded.error());
    if (!a.host.empty()) return explain_host(a, *loaded);
    sbx::CachedFs cached(*loaded->view);
    // The rules `sbx run` would give the command, its tool cache home writable.
    auto run = sbx::command_fs_rules(loaded->policy, {loaded->root, temporary_directory(), loaded->home},
                                     usable_tool_cache_base(*loaded, nullptr), cached, own_programs(""),
                                     usable_git_record_base(*loaded, nullptr));
    if (!run) return report(run.error());
    const sbx::FsRules* const rules = &run->rules;
    // A relative PATH is relative to --root, else to the current directory (which
    // the root found from it holds).
    const std::string path = a.settings.root_given() || sbx::paths::is_absolute(a.path) || a.path.empty()
                                 ? a.path
                                 : sbx::paths::join(loaded->cwd, a.path);
    sbx::json::Writer w;
    if (a.settings.json) {
        w.begin_object();
        write_root(w, loaded->where);
    }
    for (auto access : {sbx::Access::read, sbx::Access::write}) {
        auto e = sbx::explain(*rules, path, access, cached);
        if (!e) return report(e.error());
        const auto& d = e->decision;
        if (a.settings.json) {
            if (access == sbx::Access::read) w.key("path").value(e->path).key("realPath").value(e->real_path);
            w.key(sbx::access_name(access)).begin_object();
            sbx::review::write_fs_decision_members(w, d);
            w.end_object();
            if (e->link) {
                w.key("link").begin_object();
                sbx::review::write_fs_decision_members(w, *e->link);
                w.end_object();
            }
            continue;
        }
        if (access == sbx::Access::read) {
            std::cout << e->path;
            if (e->real_path != e->path) std::cout << " (leads to " << e->real_path << ")";
            std::cout << "\n";
        }
        std::cout << "  " << sbx::access_name(access) << ": " << sbx::allowed_word(d.allowed) << "  " << sbx::why(d)
                  << "\n";
        if (e->link)
            std::cout << "  link: " << sbx::allowed_word(e->link->allowed) << "  " << sbx::why(*e->link)
                      << (e->link->allowed ? "; the symbolic link itself can be removed, renamed or replaced"
                                           : "; the symbolic link itself cannot be removed, renamed or replaced")
                      << "\n";
    }
    if (a.settings.json) std::cout << w.end_object().str() << "\n";
    else print_root_line(loaded->where);
    return kOk;
}

// ---- sbx check and sbx diff ------------------------------------------------------

// `sbx check` when an expectation does not hold, `sbx diff --fail-on-widening`
// when the change widens the sandbox.
constexpr int kFailed = 1;

// The rules a command of `l` runs with under `sbx run`'s defaults: the
// filesystem rules with its tool cache home, and the host rules with `sbx run`'s
// decider for hosts no rule names (ask), as `sbx explain` decides.
struct RunRules {
    sbx::CommandFsRules fs;
    sbx::net::HostRules hosts;
};

sbx::expected<RunRules> run_rules(const Loaded& l, const std::string& tmpdir, const sbx::CachedFs& cached) {
    auto fs = sbx::command_fs_rules(l.policy, {l.root, tmpdir, l.home}, usable_tool_cache_base(l, nullptr), cached,
                                    own_programs(""), usable_git_record_base(l, nullptr));
    SBX_TRY(fs);
    auto hosts = sbx::net::compile_host_rules(l.policy);
    SBX_TRY(hosts);
    hosts->on_unknown = sbx::net::kRunUnknownHost;
    return RunRules{std::move(*fs), std::move(*hosts)};
}

struct CheckArgs {
    SettingsArgs settings;
    std::string file;
};

// What an outcome expected and got, in the check file's words, and why it got it.
struct OutcomeWords {
    std::string expected, got, why;
};

OutcomeWords words_of(const sbx::review::CheckOutcome& o) {
    const auto& e = *o.expectation;
    if (o.host)
        return {std::string(sbx::net::verdict_name(e.verdict)), std::string(sbx::net::verdict_name(o.host->verdict)),
                o.host->why};
    return {std::string(sbx::allowed_word(e.allowed)), std::string(sbx::allowed_word(o.path->decision.allowed)),
            sbx::why(o.path->decision)};
}

// TAP: the plan line, then a line per expectation with the decision and its
// rule on the diagnostic lines under it, and where a failing one is in the file.
void print_check_tap(const Loaded& l, const sbx::review::CheckFile& c, const std::vector<sbx::Warning>& warnings,
                     const std::vector<sbx::review::CheckOutcome>& outcomes) {
    auto& out = std::cout;
    out << "# sbx check " << c.file << ": policy for " << l.root << ": " << sbx::root_why(l.where)
        << (l.policy.trusted ? "" : "; untrusted project") << "\n";
    for (const auto& w : warnings) out << "# warning: " << sbx::to_string(w) << "\n";
    out << "1.." << outcomes.size() << "\n";
    std::size_t n = 0, failed = 0;
    for (const auto& o : outcomes) {
        const auto& e = *o.expectation;
        const auto w = words_of(o);
        out << (o.holds ? "ok " : "not ok ") << ++n << " - " << sbx::review::subject_name(e.subject) << " " << e.text
            << ": " << (o.holds ? w.got : "expected " + w.expected + ", got " + w.got) << "\n";
        if (o.host && sbx::net::to_string(e.target) != e.text) out << "#   host: " << sbx::net::to_string(e.target) << "\n";
        if (o.path && (o.path->path != e.text || o.path->real_path != o.path->path)) {
            out << "#   path: " << o.path->path;
            if (o.path->real_path != o.path->path) out << " (leads to " << o.path->real_path << ")";
            out << "\n";
        }
        out << "#   " << w.why << "\n";
        if (o.holds) continue;
        ++failed;
        if (!e.why.empty()) out << "#   expected because: " << e.why << "\n";
        out << "#   at " << c.file << ":" << e.line << " (" << e.key << ")\n";
    }
    if (failed == 0) out << "# all " << outcomes.size() << " expectations hold\n";
    else out << "# " << failed << " of " << outcomes.size() << " expectations " << (failed == 1 ? "does" : "do")
             << " not hold\n";
}

void print_check_json(const Loaded& l, const sbx::review::CheckFile& c, const std::vector<sbx::Warning>& warnings,
                      const std::vector<sbx::review::CheckOutcome>& outcomes) {
    sbx::json::Writer w;
    w.begin_object();
    write_root(w, l.where);
    const auto failed = std::count_if(outcomes.begin(), outcomes.end(), [](const auto& o) { return !o.holds; });
    w.key("file").value(c.file).key("expectations").value(static_cast<std::uint64_t>(outcomes.size()));
    w.key("failed").value(static_cast<std::int64_t>(failed)).key("results").begin_array();
    for (const auto& o : outcomes) {
        const auto& e = *o.expectation;
        w.begin_object().key("key").value(e.key).key("line").value(static_cast<std::uint64_t>(e.line));
        w.key("subject").value(sbx::review::subject_name(e.subject)).key("text").value(e.text);
        if (o.path) {
            w.key("path").value(o.path->path).key("realPath").value(o.path->real_path);
            w.key("expected").value(e.allowed);
        } else {
            w.key("host").value(e.target.host).key("port").value(static_cast<int>(e.target.port));
            w.key("expected").value(sbx::net::verdict_name(e.verdict));
        }
        w.key("holds").value(o.holds).key("why");
        if (e.why.empty()) w.null();
        else w.value(e.why);
        w.key("decision").begin_object();
        if (o.path) sbx::review::write_fs_decision_members(w, o.path->decision);
        else sbx::review::write_host_decision_members(w, *o.host);
        w.end_object().end_object();
    }
    w.end_array().key("warnings").begin_array();
    for (const auto& x : warnings) w.value(sbx::to_string(x));
    w.end_array().end_object();
    std::cout << w.take() << "\n";
}

int run_check(const CheckArgs& a) {
    sbx::DiskFs disk;
    auto loaded = load_policy(a.settings, disk, HomeRoot::allowed);
    if (!loaded) return report(loaded.error());
    // A relative FILE is the current directory's; the paths in it are the root's.
    const std::string file = absolute(a.file);
    auto text = sbx::read_small_file(file, sbx::kMaxSettingsBytes, sbx::Errc::invalid_settings);
    if (!text) return report(text.error());
    if (!*text) return report(sbx::Error(sbx::Errc::io_error, "no such file").in_file(a.file));
    auto check = sbx::review::parse_check_file(**text, a.file, {loaded->home, loaded->root});
    if (!check) return report(check.error());
    sbx::CachedFs cached(*loaded->view);
    auto rules = run_rules(*loaded, temporary_directory(), cached);
    if (!rules) return report(rules.error());
    const std::vector<sbx::net::Address> own = sbx::launcher::own_addresses();
    auto outcomes = sbx::review::run_checks(*check, rules->fs.rules, rules->hosts, own, cached);
    if (!outcomes) return report(outcomes.error());
    // What the settings left out bears on what the expectations meet (a
    // misspelt key is no deny): the policy's warnings and the rules'.
    std::vector<sbx::Warning> warnings = loaded->policy.warnings;
    for (const auto* more : {&rules->fs.rules.warnings, &rules->fs.protected_warnings, &rules->fs.tool_cache_warnings})
        warnings.insert(warnings.end(), more->begin(), more->end());
    if (a.settings.json) print_check_json(*loaded, *check, warnings, *outcomes);
    else print_check_tap(*loaded, *check, warnings, *outcomes);
    const bool all = std::all_of(outcomes->begin(), outcomes->end(), [](const auto& o) { return o.holds; });
    return all ? kOk : kFailed;
}

struct DiffArgs {
    SettingsArgs settings;
    std::string base;                // --base REV
    std::vector<std::string> files;  // OLD.json NEW.json
    bool fail_on_widening = false;
};

// The project's settings files, relative to the root, with their layers, and
// whether one git does not track is compared at all: the shared file always
// is (a new one not yet added is part of the change); the local one, which
// Claude Code keeps out of git, is personal unless git tracks it.
enum class Untracked { compared, same_on_both_sides };
struct ProjectFile {
    sbx::LayerKind layer;
    std::string_view path;
    Untracked untracked;
};
constexpr ProjectFile kProjectFiles[] = {
    {sbx::LayerKind::project, ".claude/settings.json", Untracked::compared},
    {sbx::LayerKind::local, ".claude/settings.local.json", Untracked::same_on_both_sides},
};

// `layers` with the one of `kind` taken out, and `text` (when there is one),
// read as that layer's file of the root, named `name`, put in its place.
sbx::expected<void> put_layer(std::vector<sbx::Settings>& layers, const sbx::LayerFiles& f, sbx::LayerKind kind,
                              const std::string& name, const std::optional<std::string>& text) {
    std::erase_if(layers, [&](const sbx::Settings& s) { return s.layer == kind; });
    if (!text) return {};
    auto parsed = sbx::parse_settings(*text, sbx::SettingsSource{kind, name, sbx::paths::Base{f.home, f.root}, f.root});
    SBX_TRY(parsed);
    layers.push_back(std::move(*parsed));
    return {};
}

// What the "before" side of a diff was read from, for people.
struct DiffBase {
    std::string commit;               // --base: the commit REV names
    std::vector<std::string> shared;  // project files git does not track, read from the work tree on both sides
};

// The layers of REV: each project file as the commit holds it, read with git.
// A local file git tracks neither at REV nor in its index is nobody's change:
// the work tree's on both sides (kProjectFiles).
LayerEdit at_revision(const std::string& rev, DiffBase& base) {
    return [&rev, &base](std::vector<sbx::Settings>& layers, const sbx::LayerFiles& f) -> sbx::expected<void> {
        auto repo = sbx::tools::find_git(f.root);
        SBX_TRY(repo);
        auto commit = sbx::tools::resolve_commit(*repo, rev);
        SBX_TRY(commit);
        base.commit = *commit;
        for (const auto& file : kProjectFiles) {
            const std::string rel(file.path);
            // With the root at HOME, the project file is the user's: the same on both sides.
            if (file.layer == sbx::LayerKind::project && sbx::paths::join(f.root, rel) == sbx::paths::join(f.home, rel))
                continue;
            auto text = sbx::tools::file_at(*repo, *commit, rev, rel, sbx::kMaxSettingsBytes);
            SBX_TRY(text);
            if (!*text && file.untracked == Untracked::same_on_both_sides) {
                auto tracked = sbx::tools::in_index(*repo, rel);
                SBX_TRY(tracked);
                if (!*tracked) {
                    base.shared.push_back(rel);
                    continue;
                }
            }
            SBX_TRY(put_layer(layers, f, file.layer, rev + ":" + rel, *text));
        }
        return {};
    };
}

// The file `file` in place of the project's .claude/settings.json, its relative
// paths the root's.
LayerEdit in_place_of_project(const std::string& file) {
    return [file](std::vector<sbx::Settings>& layers, const sbx::LayerFiles& f) -> sbx::expected<void> {
        auto text = sbx::read_settings_text(absolute(file));
        SBX_TRY(text);
        if (!*text) return sbx::fail(sbx::Error(sbx::Errc::io_error, "no such file").in_file(file));
        return put_layer(layers, f, sbx::LayerKind::project, file, *text);
    };
}

std::string source_words(const std::optional<sbx::Source>& s) {
    if (!s) return "default";
    return std::string(sbx::layer_name(s->layer)) + " " + s->file.str() + " " + s->key;
}

std::string subject_of(const sbx::review::Probe& p) {
    return p.kind == sbx::review::Probe::Kind::path ? p.path : sbx::net::to_string(p.target);
}

struct DiffOutcome {
    std::vector<sbx::review::ValueChange> values;
    std::vector<sbx::review::DecisionChange> decisions;
    std::size_t probes = 0;

    std::size_t widening() const {
        using D = sbx::review::Direction;
        return static_cast<std::size_t>(
            std::count_if(values.begin(), values.end(), [](const auto& v) { return v.direction == D::widens; }) +
            std::count_if(decisions.begin(), decisions.end(), [](const auto& d) { return d.direction == D::widens; }));
    }
};

// A direction's name padded to the column `sbx diff` prints it in.
std::string direction_column(sbx::review::Direction d) {
    std::string out(sbx::review::direction_name(d));
    out.resize(8, ' ');
    return out;
}

void print_diff_text(const DiffArgs& a, const Loaded& l, const DiffBase& base, const DiffOutcome& d) {
    auto& out = std::cout;
    if (!a.base.empty())
        out << "sbx diff: the policy at " << a.base << " (" << base.commit.substr(0, 12) << ") against the work tree";
    else
        out << "sbx diff: the policy with " << a.files[0] << " against the policy with " << a.files[1];
    out << ", for " << l.root << ": " << sbx::root_why(l.where) << "\n";
    for (const auto& f : base.shared) out << "  " << f << ": not tracked by git, the work tree's on both sides\n";
    out << "values" << (d.values.empty() ? ": no change" : ":") << "\n";
    for (const auto& v : d.values) {
        const std::string dir = direction_column(v.direction);
        out << "  " << dir << sbx::review::what_name(v.what) << " " << v.name << " ";
        using W = sbx::review::ValueChange::What;
        if (v.what == W::added) out << v.after << " (" << v.meaning << ")  [" << source_words(v.after_source) << "]";
        else if (v.what == W::removed) out << v.before << " (" << v.meaning << ")  [" << source_words(v.before_source) << "]";
        else
            out << v.before << " -> " << v.after << " (true: " << v.meaning << ")  [was " << source_words(v.before_source)
                << "; now " << source_words(v.after_source) << "]";
        out << "\n";
    }
    out << "decisions" << (d.decisions.empty() ? ": no change" : ":") << " (" << d.probes
        << " paths and hosts decided on both sides)\n";
    for (const auto& c : d.decisions) {
        const std::string dir = direction_column(c.direction);
        out << "  " << dir << subject_of(c.probe) << " " << c.change << "  (" << c.probe.origin << ")\n";
        out << "            was: " << c.before << "  " << c.before_why << "\n";
        out << "            now: " << c.after << "  " << c.after_why << "\n";
    }
    const std::size_t widening = d.widening();
    out << (widening == 0 ? "nothing became more open" : std::to_string(widening) + " change" +
                                                               (widening == 1 ? " widens" : "s widen") + " the sandbox")
        << "\n";
}

void print_diff_json(const DiffArgs& a, const Loaded& l, const DiffBase& base, const DiffOutcome& d) {
    sbx::json::Writer w;
    w.begin_object();
    write_root(w, l.where);
    w.key("before").begin_object();
    if (!a.base.empty()) w.key("revision").value(a.base).key("commit").value(base.commit);
    else w.key("file").value(a.files[0]);
    w.end_object().key("after").begin_object();
    if (!a.base.empty()) w.key("workTree").value(true);
    else w.key("file").value(a.files[1]);
    w.end_object().key("sharedFiles").begin_array();
    for (const auto& f : base.shared) w.value(f);
    w.end_array().key("values").begin_array();
    auto text_or_null = [&](const std::string& t, bool has) {
        if (has) w.value(t);
        else w.null();
    };
    using W = sbx::review::ValueChange::What;
    for (const auto& v : d.values) {
        w.begin_object().key("what").value(sbx::review::what_name(v.what)).key("name").value(v.name);
        w.key("before");
        text_or_null(v.before, v.what != W::added);
        w.key("after");
        text_or_null(v.after, v.what != W::removed);
        w.key("beforeSource");
        sbx::write_source(w, v.before_source);
        w.key("afterSource");
        sbx::write_source(w, v.after_source);
        w.key("direction").value(sbx::review::direction_name(v.direction)).key("meaning").value(v.meaning).end_object();
    }
    w.end_array().key("decisions").begin_array();
    for (const auto& c : d.decisions) {
        w.begin_object().key("aspect").value(sbx::review::aspect_name(c.aspect)).key("subject").value(subject_of(c.probe));
        w.key("origin").value(c.probe.origin).key("change").value(c.change);
        w.key("before").value(c.before).key("after").value(c.after);
        w.key("beforeWhy").value(c.before_why).key("afterWhy").value(c.after_why);
        w.key("direction").value(sbx::review::direction_name(c.direction)).end_object();
    }
    w.end_array().key("probes").value(static_cast<std::uint64_t>(d.probes));
    w.key("widening").value(static_cast<std::uint64_t>(d.widening())).end_object();
    std::cout << w.take() << "\n";
}

int run_diff(const DiffArgs& a) {
    if (a.base.empty() == a.files.empty() || (!a.files.empty() && a.files.size() != 2)) {
        std::cerr << "sbx: USAGE: diff needs --base REV, or two settings files OLD.json NEW.json (see sbx diff --help)\n";
        return kUsage;
    }
    sbx::DiskFs disk;
    DiffBase base;
    auto before = load_policy(a.settings, disk, HomeRoot::allowed,
                              a.base.empty() ? in_place_of_project(a.files[0]) : at_revision(a.base, base));
    if (!before) return report(before.error());
    auto after = load_policy(a.settings, disk, HomeRoot::allowed,
                             a.base.empty() ? in_place_of_project(a.files[1]) : LayerEdit{});
    if (!after) return report(after.error());
    sbx::CachedFs cached(*after->view);
    const std::string tmpdir = temporary_directory();
    auto rules_before = run_rules(*before, tmpdir, cached);
    if (!rules_before) return report(rules_before.error());
    auto rules_after = run_rules(*after, tmpdir, cached);
    if (!rules_after) return report(rules_after.error());
    const sbx::review::DiffSide side_before{before->policy, rules_before->fs.rules, rules_before->hosts};
    const sbx::review::DiffSide side_after{after->policy, rules_after->fs.rules, rules_after->hosts};
    const sbx::review::DiffContext ctx{after->credential_homes, sbx::launcher::own_addresses()};
    DiffOutcome d;
    d.values = sbx::review::diff_values(before->policy, after->policy);
    const auto probes = sbx::review::diff_probes(side_before, side_after, ctx);
    d.probes = probes.size();
    auto decisions = sbx::review::diff_decisions(side_before, side_after, probes, ctx, cached);
    if (!decisions) return report(decisions.error());
    d.decisions = std::move(*decisions);
    if (a.settings.json) print_diff_json(a, *after, base, d);
    else print_diff_text(a, *after, base, d);
    if (a.fail_on_widening && d.widening() > 0) {
        std::cerr << "sbx: the change widens the sandbox (" << d.widening()
                  << (d.widening() == 1 ? " change" : " changes") << "); a person should review it\n";
        return kFailed;
    }
    return kOk;
}

int run_plan(PlanArgs& a) {
    auto fds = descriptors_to_pass(a.pass_fd_args);
    if (!fds) return report(fds.error());
    a.pass_fds = std::move(*fds);
    sbx::DiskFs fs;
    auto loaded = load_policy(a.settings, fs, a.home_root());
    if (!loaded) return report(loaded.error());
    // The plan `sbx run` would make here: the same defaults, so that piping it to
    // the launcher does what `sbx run` does.
    auto plan = plan_for(*loaded, a, kRunUnknownHost, run_scans_stderr());
    if (!plan) return report(plan.error());
    std::cout << sbx::to_json(*plan) << "\n";
    return kOk;
}

#if defined(__APPLE__)
constexpr std::string_view kLauncher = "sbx-mac";
#else
constexpr std::string_view kLauncher = "sbx-linux";
#endif

// This program's own path, or empty.
std::string own_path() {
#if defined(__APPLE__)
    char self[PATH_MAX];
    std::uint32_t size = sizeof self;
    if (_NSGetExecutablePath(self, &size) != 0) return {};
    char real[PATH_MAX];
    return ::realpath(self, real) != nullptr ? std::string(real) : std::string(self);
#else
    char self[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    return n > 0 ? std::string(self, static_cast<std::size_t>(n)) : std::string();
#endif
}

// The launcher for this platform (sbx-linux, or sbx-mac on macOS): --launcher,
// else beside this program, else where the build tree puts it.
sbx::expected<std::string> find_launcher(const std::string& given) {
    if (!given.empty()) return absolute(given);
    const std::string self = own_path();
    const std::string name(kLauncher);
    if (self.empty()) return sbx::fail(sbx::Errc::internal, "cannot find this program's own path to look for " + name);
    const std::string dir = sbx::paths::parent(self);
    for (const auto& candidate : {sbx::paths::join(dir, name), sbx::paths::join(dir, "../launchers/" + name)})
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    return sbx::fail(sbx::Error(sbx::Errc::io_error, "no " + name + " beside sbx; install it there or pass --launcher PATH")
                         .in_file(sbx::paths::join(dir, name)));
}

int run_failed(const sbx::Error& e) {
    std::cerr << "sbx: " << sbx::errc_name(e.code) << ": " << sbx::to_string(e) << "\n";
#if defined(__linux__)
    if (e.code == sbx::Errc::unavailable && sbx::launcher::runs_filtered())
        std::cerr << "sbx: " << sbx::launcher::kNestedNote << "\n";
#endif
    return kRunFailed;
}

struct RunArgs {
    PlanArgs plan;
    std::string launcher;
    int attempt = 1;  // --attempt N: sbx's own, when the launcher runs it again
    bool pty = false;     // --pty: a terminal of the command's own even without one here
    bool no_pty = false;  // --no-pty: the caller's descriptors as they are, terminal or not
    bool allow_clipboard_write = false;  // --allow-clipboard-write: OSC 52 reaches the caller's terminal
    bool quiet = false;  // --quiet: none of sbx's informational lines (the root, the variables left out)
    int grace = sbx::launcher::kDefaultGrace;  // --grace SECONDS: after a signal, before the sandbox is killed
    int trace_fd = -1;    // --trace-fd N: each step's time, here and in the launcher (launchers/trace.hpp)
};

// When main began, for --trace-fd.
std::uint64_t g_started = 0;

// How many times `sbx run` plans before it gives up on a plan the disk keeps
// making stale.
constexpr int kRunAttempts = 5;

// A descriptor, not closed on exec, whose reading from the start gives `text`:
// a memfd (elsewhere an unlinked file).
sbx::expected<int> descriptor_holding(const std::string& text, const char* name) {
#if defined(__linux__)
    const int fd = ::memfd_create(name, 0);
#else
    (void)name;
    char path[] = "/tmp/sbx-XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd >= 0) ::unlink(path);
#endif
    if (fd < 0)
        return sbx::fail(sbx::Error(sbx::Errc::internal, std::string("no descriptor for ") + name + ": " + std::strerror(errno)));
    for (std::size_t off = 0; off < text.size();) {
        const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int err = errno;
            ::close(fd);
            return sbx::fail(sbx::Error(sbx::Errc::internal, std::string("writing ") + name + ": " + std::strerror(err)));
        }
        off += static_cast<std::size_t>(n);
    }
    ::lseek(fd, 0, SEEK_SET);
    return fd;
}

// This program and its arguments as attempt `attempt` of `sbx run` gets them:
// "run --attempt N --started-as NAME" in front of what this one was given after
// "run" and its own --attempt and --started-as (NAME: the name the first
// attempt was started by, whose program every attempt protects).
sbx::expected<std::vector<std::string>> again_argv(int attempt) {
    const std::string self = own_path();
    if (self.empty()) return sbx::fail(sbx::Errc::internal, "cannot find this program's own path to plan again with");
    std::size_t from = 2;  // g_arguments[1] is "run"
    if (g_arguments.size() > 3 && g_arguments[2] == "--attempt") from = 4;
    if (g_arguments.size() > from + 1 && g_arguments[from] == "--started-as") from += 2;
    const std::string name = started_as();
    std::vector<std::string> out{self, "run", "--attempt", std::to_string(attempt), "--started-as",
                                 name.empty() ? self : name};
    out.insert(out.end(), g_arguments.begin() + static_cast<std::ptrdiff_t>(from), g_arguments.end());
    return out;
}

// The launcher's steps in this process: on Linux `sbx run` carries the plan out
// itself (launchers/linux_platform.hpp), unless --launcher names a program;
// elsewhere it runs the launcher beside it.
#if defined(__linux__)
constexpr bool kLaunchesItself = true;
#else
constexpr bool kLaunchesItself = false;
#endif

#if defined(__linux__)
// The launcher's options as sbx gives them: the <sandbox_violations> block,
// the terminal choice, the trace, and, for a stale plan, this program run again
// to plan again (`again`, empty on the last attempt).
sbx::launcher::Options launcher_options(const RunArgs& a, std::vector<std::string> again) {
    sbx::launcher::Options o;
    o.plan_fd = -1;  // no plan to read: it is made here
    o.print_violations = true;
    o.pty = a.pty ? sbx::launcher::PtyMode::always : a.no_pty ? sbx::launcher::PtyMode::never
                                                               : sbx::launcher::PtyMode::automatic;
    o.allow_clipboard_write = a.allow_clipboard_write;
    o.grace = a.grace;
    if (a.trace_fd >= 0) o.trace = sbx::launcher::Trace(a.trace_fd);
    o.again = std::move(again);
    return o;
}

// What the sandbox started before the plan is made takes from the command line
// and, once read, the settings (`l`; before them, bubblewrap on PATH and an
// isolated filesystem, as nearly every plan has them): the plan says the same
// of them (plan_for), or the launcher starts another for it.
sbx::linux_sandbox::SandboxFacts early_facts(const PlanArgs& a, const Loaded* l) {
    sbx::linux_sandbox::SandboxFacts f;
    if (l != nullptr && l->policy.bwrap_path) f.bwrap_path = l->policy.bwrap_path->value;
    f.isolated = l == nullptr || !l->policy.filesystem.disabled.value;
    f.scan_stderr = a.scan_stderr || (run_scans_stderr() && !a.no_scan_stderr);
    f.pass_fds = a.pass_fds;
    std::sort(f.pass_fds.begin(), f.pass_fds.end());
    f.pass_fds.erase(std::unique(f.pass_fds.begin(), f.pass_fds.end()), f.pass_fds.end());
    return f;
}
#endif

int run_run(RunArgs& a) {
    // Planned again: wait a moment, longer each time, so that sandboxes of the
    // root starting together do not race each other again.
    if (a.attempt > 1) {
        std::random_device rd;
        const auto ms = 1 + rd() % (2u << a.attempt);
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }
    const sbx::launcher::Trace trace(a.trace_fd);
    if (trace.on() && ::fcntl(a.trace_fd, F_GETFD) < 0)
        return run_failed(sbx::Error(sbx::Errc::invalid_argument,
                                     "--trace-fd " + std::to_string(a.trace_fd) + ": the descriptor is not open"));
    trace.step("sbx.options", g_started);
    auto t = sbx::launcher::Trace::now();
    const bool here = kLaunchesItself && a.launcher.empty();
    a.plan.launcher = a.launcher;
    // The launcher's reaper, started first while this process is small (see
    // Launcher::run_plan); dismissed, and gone, when nothing runs.
    std::optional<sbx::launcher::Reaper> reaper;
    if (here) {
        auto started = sbx::launcher::Reaper::start();
        if (!started) return run_failed(started.error());
        reaper.emplace(std::move(*started));
        trace.step("launcher.reaper", t);
        t = sbx::launcher::Trace::now();
    }
    struct DismissUnused {
        std::optional<sbx::launcher::Reaper>& r;
        ~DismissUnused() {
            if (r) r->dismiss();
        }
    } dismiss_unused{reaper};
    auto fds = descriptors_to_pass(a.plan.pass_fd_args);
    if (!fds) return run_failed(fds.error());
    a.plan.pass_fds = std::move(*fds);
    // A plan another sandbox of the root (or anything else) made stale before
    // the command ran: the launcher runs sbx again, which plans again, up to
    // kRunAttempts times in all; the last attempt fails with the reason.
    std::vector<std::string> again;
    if (a.attempt < kRunAttempts) {
        auto argv = again_argv(a.attempt + 1);
        if (!argv) return run_failed(argv.error());
        again = std::move(*argv);
    }
#if defined(__linux__)
    // Here the launcher's steps run in this process; bubblewrap starts at once,
    // while the settings are read and the plan is made (LinuxPlatform::start_early).
    sbx::linux_sandbox::LinuxPlatform platform;
    platform.set_program("sbx");  // its messages are sbx's
    sbx::launcher::Launcher here_launcher(platform, launcher_options(a, again));
    if (here) platform.start_early(here_launcher, early_facts(a.plan, nullptr), *reaper);
    t = sbx::launcher::Trace::now();
#endif
    // The settings and what they were read with go before the command runs; a
    // root found above the current directory is said once (not again on a later
    // attempt): that folder, not only this one, is the command's to write.
    std::string root_line;
    std::optional<sbx::GroupSnapshot> kept_group;  // here: for the launcher's steps, released after them
    auto plan = [&]() -> sbx::expected<sbx::Plan> {
        sbx::DiskFs fs;
        auto loaded = load_policy(a.plan.settings, fs, a.plan.home_root());
        SBX_TRY(loaded);
        trace.step("sbx.settings", t);
#if defined(__linux__)
        if (here) platform.start_early(here_launcher, early_facts(a.plan, &*loaded), *reaper);  // if they say otherwise
#endif
        t = sbx::launcher::Trace::now();
#if defined(__linux__)
        refresh_git_record(*loaded);
        trace.step("sbx.git-survey", t);
        t = sbx::launcher::Trace::now();
#endif
        auto made = plan_for(*loaded, a.plan, kRunUnknownHost, run_scans_stderr());
        if (made) say_warnings_once(*loaded, *made);
        // The launcher takes the group's lock for itself (in this process, in
        // the group's files as they are).
        if (here && made) {
            loaded->group->unlock();
            kept_group.emplace(std::move(*loaded->group));
        } else {
            loaded->group->release();
        }
        if (made && !a.plan.settings.root_given() && loaded->root != loaded->cwd && a.attempt == 1)
            root_line = "sbx: root " + loaded->root + ": " + sbx::root_why(loaded->where) + "\n";
        if (made && a.attempt == 1) root_line += removed_env_line(made->env_removed);
        if (a.quiet || (made && loaded->policy.quiet.value)) root_line.clear();
        return made;
    }();
    if (!plan) return run_failed(plan.error());
    trace.step("sbx.plan", t);
    t = sbx::launcher::Trace::now();
#if defined(__linux__)
    if (here) {
        std::cerr << root_line;
        trace.step("sbx.launch-prep", t);
        int status = sbx::launcher::kFailedBeforeCommand;
        try {
            status = here_launcher.run_plan(*plan, std::move(reaper));
        } catch (const std::exception& e) {
            std::cerr << platform.name() << ": INTERNAL: " << e.what() << "\n";
        }
        if (kept_group) kept_group->release();
        return status;
    }
#endif
    auto launcher = find_launcher(a.launcher);
    if (!launcher) return run_failed(launcher.error());
    // The plan goes in a memfd (elsewhere an unlinked file), read from its start:
    // a pipe would need a writer beside the launcher, and the terminal's standard
    // input stays the command's.
    auto fd = descriptor_holding(sbx::to_json(*plan), "sbx-plan");
    if (!fd) return run_failed(fd.error());
    // Every passed descriptor was open before this one was made, so the kernel
    // cannot have given it one of their numbers.
    if (std::binary_search(plan->pass_fds.begin(), plan->pass_fds.end(), *fd))
        return run_failed(sbx::Error(sbx::Errc::internal, "the plan's descriptor " + std::to_string(*fd) +
                                                              " is one the command is passed"));
    std::string fd_text = std::to_string(*fd);
    std::vector<char*> argv{launcher->data(), const_cast<char*>("--plan-fd"), fd_text.data(),
                            const_cast<char*>("--violations")};
    // `again` for the launcher's --again-fd, each word ending in a NUL.
    std::string again_text;
    if (!again.empty()) {
        std::string words;
        for (const auto& w : again) words += w + '\0';
        auto again_fd = descriptor_holding(words, "sbx-again");
        if (!again_fd) return run_failed(again_fd.error());
        again_text = std::to_string(*again_fd);
        argv.insert(argv.end(), {const_cast<char*>("--again-fd"), again_text.data()});
    }
    if (a.pty) argv.push_back(const_cast<char*>("--pty"));
    if (a.no_pty) argv.push_back(const_cast<char*>("--no-pty"));
    if (a.allow_clipboard_write) argv.push_back(const_cast<char*>("--allow-clipboard-write"));
    std::string grace_text = std::to_string(a.grace);
    argv.insert(argv.end(), {const_cast<char*>("--grace"), grace_text.data(), const_cast<char*>("--name"),
                             const_cast<char*>("sbx")});
    std::string trace_text = std::to_string(a.trace_fd);
    if (trace.on()) argv.insert(argv.end(), {const_cast<char*>("--trace-fd"), trace_text.data()});
    argv.push_back(nullptr);
    // The passed descriptors must survive the exec of the launcher, which hands
    // them to the command.
    for (const int pass : plan->pass_fds) {
        const int flags = ::fcntl(pass, F_GETFD);
        if (flags == -1 || ((flags & FD_CLOEXEC) != 0 && ::fcntl(pass, F_SETFD, flags & ~FD_CLOEXEC) == -1))
            return run_failed(sbx::Error(sbx::Errc::internal, "--pass-fd " + std::to_string(pass) +
                                                                  ": cannot keep it open for the launcher: " +
                                                                  std::strerror(errno)));
    }
    std::cerr << root_line;
    trace.step("sbx.exec-prep", t);
    if (trace.on()) {
        const int flags = ::fcntl(a.trace_fd, F_GETFD);
        if (flags != -1) ::fcntl(a.trace_fd, F_SETFD, flags & ~FD_CLOEXEC);
    }
    ::execv(argv[0], argv.data());
    return run_failed(sbx::Error(sbx::Errc::io_error, std::string("cannot run the launcher: ") + std::strerror(errno))
                          .in_file(*launcher));
}

struct DoctorArgs {
    bool json = false;
    std::string launcher;
};

#if defined(__linux__)
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
    sbx::DiskFs fs;
    auto loaded = load_policy(SettingsArgs{}, fs, HomeRoot::allowed);
    std::vector<std::string> protected_paths;
    if (!loaded) {
        text += "; no project here to check them against (" + sbx::to_string(loaded.error()) + ")";
        w.null();
    } else {
        w.value(loaded->root);
        sbx::CachedFs cached(*loaded->view);
        auto run = sbx::command_fs_rules(loaded->policy, {loaded->root, temporary_directory(), loaded->home},
                                         usable_tool_cache_base(*loaded, nullptr), cached, programs,
                                         usable_git_record_base(*loaded, nullptr));
        if (!run) {
            text += "; cannot decide for the project at " + loaded->root + " (" + sbx::to_string(run.error()) + ")";
        } else if (run->rules.disabled) {
            text += "; the project at " + loaded->root + " disables filesystem isolation, so its commands can write them";
        } else if (!run->own_programs.empty() || !run->own_program_warnings.empty()) {
            for (const auto& p : run->own_programs) protected_paths.push_back(p.path);
            std::string list;
            for (const auto& p : protected_paths) list += (list.empty() ? "" : ", ") + p;
            text += "; they lie where commands of the project at " + loaded->root + " may write, so " +
                    (list.empty() ? std::string("nothing") : list) + (protected_paths.size() == 1 ? " is" : " are") +
                    " read-only during its runs (sbx policy says why)";
            for (const auto& x : run->own_program_warnings) text += "; " + x.file + ": " + x.message;
        } else {
            text += "; outside every place commands of the project at " + loaded->root + " may write";
        }
    }
    w.key("protected").begin_array();
    for (const auto& p : protected_paths) w.value(p);
    w.end_array().key("detail").value(text).end_object();
    return {"install", text, "install", w.take()};
}
#endif

int run_doctor(const DoctorArgs& a) {
#if defined(__linux__)
    // The launcher's doctor, in this process unless --launcher names a program.
    if (a.launcher.empty()) {
        sbx::launcher::Options o;
        o.json = a.json;
        sbx::linux_sandbox::LinuxPlatform platform;
        sbx::launcher::Launcher launcher(platform, std::move(o));
        platform.add_doctor_note(install_note());
        return platform.doctor(launcher);
    }
#endif
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

}  // namespace

int main(int argc, char** argv) {
    g_started = sbx::launcher::Trace::now();
#if defined(__linux__)
    // The stage, where no sbx-stage lies beside this program (launchers/stage.hpp).
    if (argc >= 2 && argv[1] == sbx::linux_sandbox::kStageFlag) {
        sbx::linux_sandbox::StageArgs stage;
        if (!sbx::linux_sandbox::parse_stage_args(argc - 2, argv + 2, stage)) {
            std::cerr << "sbx: USAGE: --stage is the sandbox's own, inside it\n";
            return kRunFailed;
        }
        return sbx::linux_sandbox::run_stage(stage);
    }
#endif
    g_arguments.assign(argv, argv + argc);
    CLI::App app{"sbx: confine one command with the operating system's own sandbox", "sbx"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "sbx 0.1.0");

    SettingsArgs pa;
    auto* policy = app.add_subcommand("policy", "Print the effective policy, each value with the layer that set it");
    pa.add_to(policy);

    ExplainArgs ea;
    auto* explain = app.add_subcommand("explain", "Say whether a command may read and write PATH, and which rule says so");
    ea.settings.add_to(explain);
    auto* explain_path = explain->add_option(
        "path", ea.path, "The path, absolute, or relative to --root when given and else to the current directory");
    auto* explain_host_opt =
        explain->add_option("--host", ea.host, "Explain HOST[:PORT] (default port 443) instead of a path");
    explain_path->excludes(explain_host_opt);
    explain->add_option("--allow-host", ea.allow_hosts, "As sbx run's --allow-host")
        ->take_all()
        ->allow_extra_args(false);
    explain->add_option("--on-unknown-host", ea.on_unknown_host, "As sbx run's (default: ask)")
        ->check(CLI::IsMember(unknown_host_choices()));

    CheckArgs ca;
    auto* check = app.add_subcommand("check", "Decide each expectation of a check file as sbx run would, as TAP; exit 1 "
                                              "when one does not hold");
    ca.settings.add_to(check);
    check->add_option("file", ca.file, "The check file: {\"expect\": [{\"read\": PATH, \"allowed\": false}, ...]}")
        ->required();

    DiffArgs da;
    auto* diff = app.add_subcommand("diff", "Say what a settings change opens and closes: the project's settings at a "
                                            "git revision against the work tree, or two settings files");
    da.settings.add_to(diff);
    auto* diff_base = diff->add_option("--base", da.base,
                                       "Compare the project's settings files at this git revision with the work tree's");
    diff->add_option("files", da.files, "OLD.json NEW.json: two settings files, each in place of the project's "
                                        ".claude/settings.json")
        ->excludes(diff_base);
    diff->add_flag("--fail-on-widening", da.fail_on_widening, "Exit 1 when anything became more open");

    PlanArgs plan_args;
    auto* plan = app.add_subcommand("plan", "Print the plan for a command as JSON (docs/plan.md)");
    plan_args.settings.add_to(plan);
    plan->add_option("--env", plan_args.pass_env, "Pass the variable NAME to the command although it looks like a secret")
        ->take_all()
        ->allow_extra_args(false);
    plan_args.add_network_to(plan);
    plan_args.add_pass_fd_to(plan);
    plan_args.add_home_root_to(plan);
    plan_args.add_tool_cache_to(plan);
    plan_args.add_weaker_sandbox_to(plan);
    plan->add_option("command", plan_args.command, "The command and its arguments (after -- when it starts with -)")
        ->required();

    RunArgs run_args;
    auto* run = app.add_subcommand("run", "Run a command in the sandbox");
    run_args.plan.settings.add_to(run, false);
    run->add_option("--env", run_args.plan.pass_env,
                    "Pass the variable NAME to the command although it looks like a secret")
        ->take_all()
        ->allow_extra_args(false);
    run_args.plan.add_network_to(run);
    run_args.plan.add_pass_fd_to(run);
    run_args.plan.add_home_root_to(run);
    run_args.plan.add_tool_cache_to(run);
    run_args.plan.add_weaker_sandbox_to(run);
    run->add_option("--attempt", run_args.attempt, "sbx's own: the attempt this is, when the launcher runs sbx again")
        ->check(CLI::Range(1, kRunAttempts))
        ->group("");
    run->add_option("--started-as", g_started_as, "sbx's own: the name the first attempt was started by")
        ->needs(run->get_option("--attempt"))
        ->group("");
    run->add_option("--launcher", run_args.launcher, "The launcher to use (default: sbx-linux, or sbx-mac on macOS, beside sbx)");
    auto* pty_flag = run->add_flag("--pty", run_args.pty,
                                   "Give the command a terminal of its own even when none of 0-2 is a terminal "
                                   "(the default when one is)");
    run->add_flag("--no-pty", run_args.no_pty,
                  "Give the command the caller's descriptors as they are, terminal or not: no job control inside, "
                  "and what it writes to your terminal is not filtered (tags, OSC 52); modes and line discipline are "
                  "restored after, but answers to its terminal queries that arrive after it ends reach your shell")
        ->excludes(pty_flag);
    run->add_flag("--allow-clipboard-write", run_args.allow_clipboard_write,
                  "Let the command set your terminal's clipboard (OSC 52) through its terminal; dropped by default");
    run->add_option("--grace", run_args.grace,
                    "Seconds the command has to end after sbx passes it SIGTERM, SIGINT, SIGHUP or SIGQUIT, before "
                    "its sandbox is killed (0: at once)")
        ->check(CLI::Range(0, sbx::launcher::kMaxGrace))
        ->default_val(sbx::launcher::kDefaultGrace)
        ->option_text("SECONDS (default 10)");
    run->add_flag("--quiet", run_args.quiet,
                  "Print none of sbx's informational lines (the root found above the current directory, the variables "
                  "left out of the environment); refusals and warnings still print");
    run->add_option("--trace-fd", run_args.trace_fd,
                    "Write each step's time to descriptor N, a line of JSON per step (docs/plan.md)")
        ->check(CLI::Range(3, INT_MAX));
    run->add_option("command", run_args.plan.command, "The command and its arguments (after -- when it starts with -)")
        ->required();

    DoctorArgs doctor_args;
    auto* doctor = app.add_subcommand("doctor", "Check whether the sandbox can run here, and what to do if not");
    doctor->add_flag("--json", doctor_args.json, "Print JSON instead of text");
    doctor->add_option("--launcher", doctor_args.launcher, "The launcher to ask (default: sbx-linux, or sbx-mac on macOS, beside sbx)");

    const auto commands = app.get_subcommands([](const CLI::App*) { return true; });
    const bool known = argc > 1 && std::any_of(commands.begin(), commands.end(),
                                               [&](const CLI::App* c) { return c->check_name(argv[1]); });
    if (argc > 1 && argv[1][0] != '-' && !known) {
        std::cerr << "sbx: USAGE: unknown command '" << argv[1] << "'; the commands are: policy, explain, check, diff, plan, run, doctor (see sbx --help)\n";
        return kUsage;
    }
    // `sbx run ls -la` as `sbx run -- ls -la`: the first word that is no option of
    // run's or plan's (nor an option's value) starts the command.
    std::vector<char*> args(argv, argv + argc);
    static char dashes[] = "--";
    if (argc > 2) {
        CLI::App* sub = run->check_name(argv[1]) ? run : plan->check_name(argv[1]) ? plan : nullptr;
        for (std::size_t i = 2; sub != nullptr && i < args.size();) {
            const std::string_view arg = args[i];
            if (arg == "--") break;
            if (arg.empty() || arg[0] != '-' || arg == "-") {
                args.insert(args.begin() + static_cast<std::ptrdiff_t>(i), dashes);
                break;
            }
            const CLI::Option* opt = sub->get_option_no_throw(std::string(arg.substr(0, arg.find('='))));
            if (opt == nullptr) break;  // CLI11 names it
            i += opt->get_expected_min() > 0 && arg.find('=') == std::string_view::npos ? 2 : 1;
        }
    }
    try {
        app.parse(static_cast<int>(args.size()), args.data());
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "sbx: USAGE: " << e.what() << " (see sbx --help)\n";
        // `sbx run` promises 125 for anything that stops the command before it runs.
        return argc > 1 && run->check_name(argv[1]) ? kRunFailed : kUsage;
    }
    try {
        if (*policy) return run_policy(pa);
        if (*explain) {
            if (ea.path.empty() == ea.host.empty()) {
                std::cerr << "sbx: USAGE: explain needs a path, or --host HOST[:PORT] (see sbx explain --help)\n";
                return kUsage;
            }
            return run_explain(ea);
        }
        if (*check) return run_check(ca);
        if (*diff) return run_diff(da);
        if (*plan) return run_plan(plan_args);
        if (*run) return run_run(run_args);
        if (*doctor) return run_doctor(doctor_args);
    } catch (const std::exception& e) {
        std::cerr << "sbx: INTERNAL: " << e.what() << "\n";
        return *run ? kRunFailed : kInternal;
    }
    return kUsage;
}
