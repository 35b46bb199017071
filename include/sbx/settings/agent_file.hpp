// sbx/settings/agent_file.hpp - the `sandbox:` block of an agent file, read strictly into one Settings layer.
//
// An agent file is Markdown whose YAML front matter (from a first line `---` to the
// next line that is exactly `---`) declares an agent. parse_agent_file() reads the
// part of that front matter which says how the agent's commands are confined and
// returns it twice: decoded (AgentFile: preset, files, network, env, and which
// spellings the file used) and as one Settings layer that merge() (policy.hpp) and
// the planner take as they take a settings file. Every value carries a Source whose
// file is the agent file and whose key is the agent-file key that set it
// (`sandbox.network.local`, `sandbox.files.write[1]`, `allowed_folders[0]`), so
// `sbx explain` can name it. Pure: the text is handed in; nothing is opened.
//
// What is read. Only the top-level keys `sandbox` and the older flat spellings
// `allowed_folders` (= sandbox.files.write), `network` as a bare list
// (= sandbox.network.hosts) and `env_passthrough` (= sandbox.env), and `skills`,
// for the shell skill's `blocked_commands` (`- shell: {blocked_commands: [nc]}`:
// program names no command may run, confined or not, Settings::blocked_commands)
// and `allowed_commands` (kept, with a warning: it widens only the gate of
// unconfined commands, which sbx never runs); a skill's name alone, or another
// skill's settings, say nothing to sbx. Every other
// top-level entry (name, model, ...) is skipped unparsed, as
// front_matter.hpp describes. One thing said in both spellings is an error, as is
// `preset:` or `files:` at the top level (they belong indented under `sandbox:`,
// and left there they would be skipped).
//
// The YAML subset, inside what is read, is front_matter.hpp's (so `*.example.com`,
// which would be an alias, must be quoted). On top of it the schema takes plain
// `true`/`false` as booleans, and refuses a plain null (`~`, `null`) or a boolean
// where text is wanted, with the file, the 1-based line and the key path.
//
// The mapping into Settings, for presets development (the default) and strict:
//   enabled                      true, from sandbox.preset. Preset off (also written `sandbox: off`
//                                or `preset: unrestricted`): false, and nothing else is set; the
//                                caller refuses to run or runs unconfined, as it decides
//   files.write (default [.])    filesystem.allowWrite, relative to the agent's folder (the
//                                agent file's directory), `~/` under home; development adds
//                                the agent's folder, strict does not, and makes the root
//                                read-only (filesystem.root_read_only)
//   files.deny                   filesystem.denyRead (patterns allowed)
//   files.read: all (default)    nothing: reads stay broad
//   files.read: [list], or strict without an explicit `read: all`
//                                reads are scoped: filesystem.denyRead of the places that hold
//                                people's files rather than the system (kReadScopeRoots, and
//                                the home directory wherever it is), and filesystem.allowRead
//                                of the listed folders and the agent's folder. The engine lets
//                                the narrower rule win, so those re-open inside the denied
//                                places; write folders re-open reads by being writable. A
//                                denied place at or under an allowed folder is left out, since
//                                a tie would go to the deny.
//   network.hosts                network.allowedDomains; the groups of kGroupHosts expand; a
//                                bare `*`, a URL, a path or a range is refused
//   network.local                network.allowLocalBinding, only when written
//   network.sockets              network.allowUnixSockets
//   env                          AgentFile::env only: sbx has no settings key that passes a
//                                variable (credentials.envVars names variables to hide); the
//                                caller passes each as `--env NAME` does
//   allowed_commands             AgentFile::allowed_commands, with a warning: it gates nothing
//   allowed_imports              AgentFile::allowed_imports, with a warning: it does nothing
// and always, whatever the file says (the reference's built-in denies; key
// `sandbox (built-in)`): reading the credential stores of credential_stores.hpp
// (here as ordinary denies of the flag layer, beside the builtin layer's: an
// allowRead naming a store does not lift these) and of kAgentHomeDenies, reading kAgentFolderReadDenies in the agent's folder and every
// write folder, and writing the agent file itself and kAgentControlFiles in the
// agent's folder. An agent file with no sandbox block gets what the reference's
// default block says (AgentFile::declared is false).
//
// Under strict the root the caller sandboxes is not writable either
// (filesystem.root_read_only, which no settings key sets): only files.write and
// the command's temporary directory are. Not expressed here, because a layer
// cannot: hosts, sockets
// and writes that other settings layers allow are combined with these by merge(),
// and this layer's `enabled` holds over lower layers'. Scoped reads mask whole
// directories (/home, the home directory), which the Linux planner walks, up to
// its limit, for hard links (fs_plan.hpp): a hard-linked file there stops the plan.
// Nor the weaker sandbox (settings' `enableWeakerNestedSandbox`): an agent file
// may come with the project it confines, so it has no key for it (one is an
// unknown key), and its layer is marked LayerFile::agent, whose `true` merge()
// would leave out.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/glob.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/net/host_pattern.hpp"
#include "sbx/settings/defaults.hpp"
#include "sbx/settings/front_matter.hpp"
#include "sbx/settings/home_env_files.hpp"
#include "sbx/settings/settings.hpp"

namespace sbx {

// The system an agent's commands run on: decides which roots a file's per-platform entries name.
enum class Platform { linux_, mac };

#if defined(__APPLE__)
inline constexpr Platform kThisPlatform = Platform::mac;
#else
inline constexpr Platform kThisPlatform = Platform::linux_;
#endif

constexpr std::string_view platform_name(Platform p) noexcept { return p == Platform::mac ? "macOS" : "Linux"; }

enum class Preset { development, strict, off };

constexpr std::string_view preset_name(Preset p) noexcept {
    switch (p) {
        case Preset::development: return "development";
        case Preset::strict: return "strict";
        case Preset::off: return "off";
    }
    return "?";
}

// The host groups network.hosts may name, and the hosts each stands for.
struct HostGroup {
    std::string_view name;
    std::string_view reason;
};
inline constexpr HostGroup kHostGroups[] = {
    {"npm", "the npm registry, for npm install"},
    {"pypi", "the Python package index and the host its files download from, for pip install"},
    {"github", "GitHub's site, API, archives and raw files, for git over https and gh"},
};
struct GroupHost {
    std::string_view group;
    std::string_view host;
};
// A group's hosts stand together (checked below).
inline constexpr GroupHost kGroupHosts[] = {
    {"npm", "registry.npmjs.org"},
    {"pypi", "pypi.org"},
    {"pypi", "files.pythonhosted.org"},
    {"github", "github.com"},
    {"github", "api.github.com"},
    {"github", "codeload.github.com"},
    {"github", "objects.githubusercontent.com"},
    {"github", "raw.githubusercontent.com"},
};

// Where reads go dark when an agent scopes them: the places that hold people's
// files rather than the system's. The home directory is added wherever it lies.
struct ReadScopeRoot {
    std::string_view path;
    Platform platform;
    std::string_view reason;
};
inline constexpr ReadScopeRoot kReadScopeRoots[] = {
    {"/home", Platform::linux_, "home directories, yours and other people's"},
    {"/root", Platform::linux_, "the administrator's home directory"},
    {"/mnt", Platform::linux_, "mounted drives, Windows' drives under WSL among them"},
    {"/media", Platform::linux_, "removable media"},
    {"/srv", Platform::linux_, "data this machine serves"},
    {"/Users", Platform::mac, "home directories, yours and other people's"},
    {"/Volumes", Platform::mac, "mounted drives and removable media"},
    {"/var/root", Platform::mac, "the administrator's home directory"},
};

// Read-denied under the home directory, beyond credential_stores.hpp's kCredentialStores:
// the reference's built-in denies that are the agent CLI's own.
struct AgentPath {
    std::string_view path;  // relative, clean
    std::string_view reason;
};
inline constexpr AgentPath kAgentHomeDenies[] = {
    {".webagents", "the agent CLI's folder: settings, sessions and, with the file backend, stored secrets"},
    {".webagents-*", "every profile folder: history, sessions, checkpoints and stored secrets"},
    {".claude.json", "Claude Code's login and its list of projects"},
    {".claude/projects", "Claude Code's conversations"},
    {"Library/Keychains", "the macOS keychain files, which an interpreter a command starts could unlock"},
};
// Read-denied in the agent's folder and in every write folder.
inline constexpr AgentPath kAgentFolderReadDenies[] = {
    {".env", "the project's keys: pass a variable with env: instead"},
    {".env.*", "the project's keys, per environment"},
    {".webagents", "the agent CLI's per-project state"},
};
// Write-denied in the agent's folder (and the agent file itself, whatever its
// name): a command that rewrote them would widen the next command's sandbox.
inline constexpr AgentPath kAgentControlFiles[] = {
    {"AGENT.md", "the agent file: its sandbox block"},
    {"AGENT-*.md", "the other agent files of the folder"},
    {"WEBAGENTS.md", "instructions every agent of the folder loads"},
    {"mcp.json", "MCP servers, which run unconfined"},
    {".agents/skills", "skills: scripts and instructions agents load"},
    {".webagents", "the agent CLI's per-project state"},
};

namespace detail {

constexpr bool group_hosts_are_well_formed() {
    for (std::size_t i = 0; i < std::size(kGroupHosts); ++i) {
        bool known = false;
        for (const auto& g : kHostGroups) known = known || g.name == kGroupHosts[i].group;
        if (!known || kGroupHosts[i].host.empty()) return false;
        for (std::size_t j = 0; j < i; ++j) {
            if (kGroupHosts[j].host == kGroupHosts[i].host) return false;
            // Once a group's run ends, the group does not come back.
            if (kGroupHosts[j].group == kGroupHosts[i].group && kGroupHosts[i - 1].group != kGroupHosts[i].group)
                return false;
        }
    }
    for (const auto& g : kHostGroups) {
        bool has = false;
        for (const auto& h : kGroupHosts) has = has || h.group == g.name;
        if (!has) return false;
    }
    return true;
}

template <class Table>
constexpr bool agent_paths_are_clean(const Table& table) {
    for (const auto& e : table)
        if (!is_clean_relative(e.path) || e.reason.empty()) return false;
    return true;
}

constexpr bool read_scope_roots_are_clean() {
    for (const auto& r : kReadScopeRoots)
        if (r.path.size() < 2 || r.path.front() != '/' || !is_clean_relative(r.path.substr(1)) || r.reason.empty())
            return false;
    return true;
}

}  // namespace detail

static_assert(detail::group_hosts_are_well_formed(),
              "every group has hosts, every host one group, and a group's hosts stand together");
static_assert(detail::agent_paths_are_clean(kAgentHomeDenies) && detail::agent_paths_are_clean(kAgentFolderReadDenies) &&
                  detail::agent_paths_are_clean(kAgentControlFiles),
              "each built-in agent path is clean and relative, with a reason");
static_assert(detail::read_scope_roots_are_clean(), "each read scope root is a clean absolute path, with a reason");

// Where an agent file came from, and how its paths resolve.
struct AgentFileSource {
    std::string file;  // absolute; shown in errors and provenance, never opened. Its directory is the agent's folder.
    std::string home;  // absolute: where `~/` leads
    LayerKind layer = LayerKind::flag;  // the layer its values are tagged with
    Platform platform = kThisPlatform;
    // The command is a SKILL.md script: it runs under the agent's block, or
    // strict when the file declares none or turns the sandbox off; never off.
    bool skill_script = false;
};

// What an agent file's sandbox block says, decoded, and the layer it makes.
struct AgentFile {
    std::string file;        // the agent file, normalised
    std::string agent_dir;   // its directory
    bool declared = false;   // a sandbox block or an older flat key is present; false: the defaults

    Preset preset = Preset::development;
    std::optional<Source> preset_source;  // where the preset (or `sandbox: off`) was written
    // A skill script's strict, in place of no block or of off (AgentFileSource::skill_script).
    bool strict_for_skill_script = false;

    struct Files {
        SourcedList write;                 // absolute; [the agent's folder] when not written
        bool write_written = false;
        std::optional<SourcedList> read;   // absolute folders; nullopt: all
        bool read_all_written = false;     // `read: all` was written
        SourcedList deny;                  // absolute paths or patterns
    } files;

    struct Network {
        SourcedList hosts;    // as written, groups not expanded
        SourcedBool local;    // nullopt: not written (false)
        SourcedList sockets;  // absolute
    } network;

    SourcedList env;               // variable names a command may see
    SourcedList allowed_commands;  // kept for reports; gates nothing
    SourcedList allowed_imports;   // kept for reports; does nothing
    // The shell skill's (skills: - shell: {blocked_commands: [...]}): program
    // names no command may run, confined or not; and the names it lets past the
    // gate of unconfined commands, which sbx never runs (kept for reports).
    SourcedList blocked_commands;
    SourcedList shell_allowed_commands;

    // The spellings used, for reports that suggest the current ones.
    struct Spellings {
        bool sandbox_block = false;
        bool allowed_folders = false;
        bool network_list = false;
        bool env_passthrough = false;
    } spelled;

    bool reads_scoped = false;  // a read list, or strict without `read: all`

    Settings settings;  // the layer: give it to merge() with the others

    // Things to show that do not stop the agent. They live in the layer, so merge()
    // carries them into the Policy too: show one or the other.
    const std::vector<Warning>& warnings() const { return settings.warnings; }
};

namespace detail::agent_file {

// The front matter's tree, and the helpers the schema shares with its reader.
using front_matter::error_at;
using front_matter::index_key;
using front_matter::is_control;
using front_matter::join_key;
using front_matter::Node;

// The top-level keys read, and two that belong under `sandbox:`.
inline constexpr std::array<std::string_view, 5> kTopKeys{"sandbox", "allowed_folders", "network", "env_passthrough",
                                                         "skills"};
inline constexpr std::array<std::string_view, 2> kMisplacedKeys{"preset", "files"};

inline constexpr std::array<std::string_view, 6> kSandboxKeys{"preset", "files", "network", "env", "allowed_commands",
                                                             "allowed_imports"};
inline constexpr std::array<std::string_view, 3> kFilesKeys{"write", "read", "deny"};
inline constexpr std::array<std::string_view, 3> kNetworkKeys{"hosts", "local", "sockets"};
// What sbx reads of the shell skill's settings (`- shell: {blocked_commands: [nc]}`).
inline constexpr std::array<std::string_view, 2> kShellSkillKeys{"blocked_commands", "allowed_commands"};
inline constexpr std::array<std::string_view, 4> kPresetNames{"strict", "development", "off", "unrestricted"};

// A top-level key that belongs under `sandbox:` is refused where the scan meets it.
SBX_INLINE std::string refuse_misplaced_key(std::string_view key);

SBX_INLINE bool valid_env_name(std::string_view s);

// Turns the parsed entries into an AgentFile and its layer.
class Reader {
public:
    Reader(const AgentFileSource& src, AgentFile& out)
        : src_(src), file_(out.file), out_(out), base_{paths::normalize(src.home), out.agent_dir} {}

    expected<void> read(const Node& root);

private:
    enum class PathKind { folder, pattern, socket };

    const AgentFileSource& src_;
    FileName file_;
    AgentFile& out_;
    paths::Base base_;
    std::size_t write_line_ = 0, hosts_line_ = 0, env_line_ = 0;

    Source source(std::string key) const { return Source{src_.layer, file_, std::move(key)}; }

    void warn(std::string key, std::string message) {
        out_.settings.warnings.push_back(Warning{out_.file, std::move(key), std::move(message)});
    }

    tl::unexpected<Error> error(const Node& n, std::string key, std::string message) const {
        return error_at(out_.file, n.line, n.column, std::move(key), std::move(message));
    }

    // About an entry's key rather than its value.
    tl::unexpected<Error> key_error(const Node& n, std::string key, std::string message) const {
        return error_at(out_.file, n.line, n.key_column, std::move(key), std::move(message));
    }

    tl::unexpected<Error> both(const Node& old, std::string_view old_key, std::string_view new_key,
                               std::size_t new_line) const;

    static std::string_view kind_name(const Node& n);

    template <class Keys>
    expected<void> known_keys(const Node& map, const std::string& path, const Keys& known) const {
        for (const auto& c : map.children) {
            if (std::find(known.begin(), known.end(), c.key) != known.end()) continue;
            std::string message = "unknown key '" + c.key + "'";
            if (auto near = closest(c.key, known)) message += "; did you mean '" + std::string(*near) + "'?";
            else {
                message += "; " + path + " takes ";
                for (std::size_t i = 0; i < known.size(); ++i)
                    message += (i == 0 ? "" : i + 1 == known.size() ? " and " : ", ") + std::string(known[i]);
            }
            return key_error(c, join_key(path, c.key), std::move(message));
        }
        return {};
    }

    static const Node* find(const Node& map, std::string_view key);

    expected<void> need_map(const Node& n, const std::string& key, std::string_view what) const;

    expected<std::string> text(const Node& n, const std::string& key) const;

    expected<const std::vector<Node>*> items(const Node& n, const std::string& key, std::string_view what) const;

    expected<Sourced<bool>> boolean(const Node& n, const std::string& key) const;

    expected<std::string> resolve_path(const Node& n, const std::string& key, PathKind kind) const;

    expected<void> paths_list(const Node& n, const std::string& key, PathKind kind, SourcedList& out) const;

    // skills: names, or one-entry mappings of a name to its settings; only the
    // shell skill's settings are read.
    expected<void> read_skills(const Node& n);

    // A list of program names (nc, docker-compose): no path, no shell syntax.
    expected<void> program_names(const Node& n, const std::string& key, SourcedList& out) const;

    expected<void> host_list(const Node& n, const std::string& key);

    expected<void> env_list(const Node& n, const std::string& key);

    expected<void> read_sandbox(const Node& n);

    expected<void> read_files(const Node& n);

    expected<void> read_network(const Node& n);

    static void add_once(SourcedList& list, std::string value, const Source& s);

    // The layer, from the decoded block.
    void build();

    // Reads only the listed folders, the write folders, the agent's folder and the
    // system: see the file comment.
    void scope_reads(const std::vector<std::string>& folders, const Source& preset_src);
};

}  // namespace detail::agent_file

// Reads the sandbox block of one agent file's text. Promises: a value whose layer
// merge() takes (see the file comment for what each key becomes), or an Error
// (INVALID_SETTINGS) naming src.file, the 1-based line and column and the key
// path; INVALID_ARGUMENT when src.file or src.home is not absolute or holds a
// wildcard character, which rules could not name.
SBX_INLINE expected<AgentFile> parse_agent_file(std::string_view text, const AgentFileSource& src);

// Whether sbx may run a command as `agent` says: it only confines, so an agent
// file that turns the sandbox off (Preset::off) is refused (INVALID_ARGUMENT),
// naming the file and the key that turned it off; running the command unconfined
// is for the user to do without sbx.
SBX_INLINE expected<void> require_confined(const AgentFile& agent);

// Puts the agent file's layer (a flag layer) among the settings layers `layers`,
// as load_layers() lists them: the lowest of the flag layers, before the first
// --settings file, which can still say more; at the end when there is none.
SBX_INLINE void insert_agent_layer(std::vector<Settings>& layers, const AgentFile& agent);

// Adds the read denies of the .env walk (find_home_env_files(), home_env_files.hpp)
// to an agent file's layer (nothing for `sandbox: off`).
SBX_INLINE void deny_home_env_files(AgentFile& agent, const EnvFiles& found);

// Adds read denies for the `.env` files of `dir`, the folder the command starts
// in: the CLI reads its ./.env for the env list, and the command is to get only
// the variables the list names, not the file (nothing for `sandbox: off`).
// `dir` is absolute and normalised.
SBX_INLINE void deny_env_files_in(AgentFile& agent, std::string_view dir);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_SETTINGS)

namespace sbx::detail::agent_file {

SBX_INLINE std::string refuse_misplaced_key(std::string_view key) {
    if (std::find(kMisplacedKeys.begin(), kMisplacedKeys.end(), key) == kMisplacedKeys.end()) return {};
    return "`" + std::string(key) + ":` belongs inside the sandbox block: indent it under `sandbox:`";
}

SBX_INLINE bool valid_env_name(std::string_view s) {
    if (s.empty() || (s.front() >= '0' && s.front() <= '9')) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
}

SBX_INLINE expected<void> Reader::read(const Node& root) {
    const Node *sandbox = nullptr, *folders = nullptr, *hosts = nullptr, *env = nullptr, *skills = nullptr;
    for (const auto& c : root.children) {
        if (c.key == "sandbox") sandbox = &c;
        else if (c.key == "allowed_folders") folders = &c;
        else if (c.key == "network") hosts = &c;
        else if (c.key == "env_passthrough") env = &c;
        else if (c.key == "skills") skills = &c;
    }
    out_.declared = sandbox != nullptr || folders != nullptr || hosts != nullptr || env != nullptr;
    if (skills) SBX_TRY(read_skills(*skills));
    if (sandbox) {
        out_.spelled.sandbox_block = true;
        SBX_TRY(read_sandbox(*sandbox));
    }
    if (folders) {
        out_.spelled.allowed_folders = true;
        if (out_.files.write_written) return both(*folders, "allowed_folders", "sandbox.files.write", write_line_);
        SBX_TRY(paths_list(*folders, "allowed_folders", PathKind::folder, out_.files.write));
        out_.files.write_written = true;
    }
    if (hosts) {
        out_.spelled.network_list = true;
        if (hosts->kind == Node::Kind::map)
            return error(*hosts, "network",
                         "a top-level network: is the older spelling of sandbox.network.hosts and takes a list; "
                         "put hosts, local and sockets under sandbox: network:");
        if (hosts_line_) return both(*hosts, "network", "sandbox.network.hosts", hosts_line_);
        SBX_TRY(host_list(*hosts, "network"));
    }
    if (env) {
        out_.spelled.env_passthrough = true;
        if (env_line_) return both(*env, "env_passthrough", "sandbox.env", env_line_);
        SBX_TRY(env_list(*env, "env_passthrough"));
    }
    // A SKILL.md script runs confined whatever the file says: under the agent's
    // block, or strict when it declares none or turns the sandbox off.
    if (src_.skill_script && (!out_.declared || out_.preset == Preset::off)) {
        out_.preset = Preset::strict;
        out_.strict_for_skill_script = true;
    }
    if (!out_.files.write_written)
        out_.files.write.push_back(Sourced<std::string>{out_.agent_dir, source("sandbox.files.write (default)")});
    out_.reads_scoped = out_.files.read.has_value() || (out_.preset == Preset::strict && !out_.files.read_all_written);
    if (out_.preset == Preset::strict && out_.files.read_all_written)
        warn("sandbox.files.read",
             "read: all lets commands read everywhere but the built-in denies, although the preset is strict");
    build();
    return {};
}

SBX_INLINE tl::unexpected<Error> Reader::both(const Node& old, std::string_view old_key, std::string_view new_key,
                           std::size_t new_line) const {
    return key_error(old, std::string(old_key),
                 std::string(old_key) + " is the older spelling of " + std::string(new_key) +
                     ", which this file also sets (line " + std::to_string(new_line) + "); keep one, " +
                     std::string(new_key));
}

SBX_INLINE std::string_view Reader::kind_name(const Node& n) {
    switch (n.kind) {
        case Node::Kind::null: return "nothing";
        case Node::Kind::scalar: return "a single value";
        case Node::Kind::list: return "a list";
        case Node::Kind::map: return "keys";
    }
    return "?";
}

SBX_INLINE const Node* Reader::find(const Node& map, std::string_view key) {
    for (const auto& c : map.children)
        if (c.key == key) return &c;
    return nullptr;
}

SBX_INLINE expected<void> Reader::need_map(const Node& n, const std::string& key, std::string_view what) const {
    if (n.kind == Node::Kind::map) return {};
    if (n.kind == Node::Kind::null)
        return error(n, key, key + ": is empty; indent its keys (" + std::string(what) + ") under it");
    return error(n, key, "expected the keys " + std::string(what) + " indented below, got " + std::string(kind_name(n)));
}

SBX_INLINE expected<std::string> Reader::text(const Node& n, const std::string& key) const {
    if (n.kind != Node::Kind::scalar) return error(n, key, "expected a string, got " + std::string(kind_name(n)));
    if (n.plain && (n.text == "true" || n.text == "false"))
        return error(n, key, "expected a string, got a boolean; quote it if you mean the text");
    if (n.plain && (n.text == "~" || n.text == "null" || n.text == "Null" || n.text == "NULL"))
        return error(n, key, "expected a string, got null; quote it if you mean the text");
    if (n.text.empty()) return error(n, key, "an empty string");
    for (char c : n.text)
        if (is_control(c)) return error(n, key, "a control character in the string");
    return n.text;
}

SBX_INLINE expected<const std::vector<Node>*> Reader::items(const Node& n, const std::string& key, std::string_view what) const {
    if (n.kind == Node::Kind::list) return &n.children;
    if (n.kind == Node::Kind::null)
        return error(n, key, "expected a list of " + std::string(what) + ", got nothing; write [] for none");
    return error(n, key, "expected a list of " + std::string(what) + ", got " + std::string(kind_name(n)) +
                             (n.kind == Node::Kind::scalar ? "; write [value]" : ""));
}

SBX_INLINE expected<Sourced<bool>> Reader::boolean(const Node& n, const std::string& key) const {
    if (n.kind == Node::Kind::scalar && n.plain && (n.text == "true" || n.text == "false"))
        return Sourced<bool>{n.text == "true", source(key)};
    return error(n, key, "expected true or false, got " +
                             (n.kind == Node::Kind::scalar ? "'" + n.text + "'" : std::string(kind_name(n))));
}

SBX_INLINE expected<std::string> Reader::resolve_path(const Node& n, const std::string& key, PathKind kind) const {
    auto t = text(n, key);
    SBX_TRY(t);
    if (kind != PathKind::pattern && glob::has_wildcard(*t))
        return error(n, key, "'" + *t + "' holds a wildcard (* ? [ \\); name the folder or file itself");
    if (kind == PathKind::socket && !paths::is_absolute(*t) && !t->starts_with("~/"))
        return error(n, key, "'" + *t + "': a unix socket is named by an absolute path or one under ~/");
    auto r = paths::resolve(*t, base_);
    if (!r) return error(n, key, r.error().message);
    return r;
}

SBX_INLINE expected<void> Reader::paths_list(const Node& n, const std::string& key, PathKind kind, SourcedList& out) const {
    auto list = items(n, key, kind == PathKind::socket ? "socket paths" : "paths");
    SBX_TRY(list);
    for (std::size_t i = 0; i < (*list)->size(); ++i) {
        const std::string k = index_key(key, i);
        auto p = resolve_path((**list)[i], k, kind);
        SBX_TRY(p);
        out.push_back(Sourced<std::string>{std::move(*p), source(k)});
    }
    return {};
}


SBX_INLINE expected<void> Reader::program_names(const Node& n, const std::string& key, SourcedList& out) const {
    auto list = items(n, key, "program names");
    SBX_TRY(list);
    for (std::size_t i = 0; i < (*list)->size(); ++i) {
        const std::string k = index_key(key, i);
        auto t = text((**list)[i], k);
        SBX_TRY(t);
        const bool name = t->front() != '-' && t->front() != '.' && std::all_of(t->begin(), t->end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                   c == '-' || c == '.' || c == '+';
        });
        if (!name)
            return error((**list)[i], k,
                         "'" + *t + "' is not a program name: letters, digits, _ - . and +, no path and no spaces");
        out.push_back(Sourced<std::string>{std::move(*t), source(k)});
    }
    return {};
}

SBX_INLINE expected<void> Reader::read_skills(const Node& n) {
    auto list = items(n, "skills", "skills");
    SBX_TRY(list);
    for (std::size_t i = 0; i < (*list)->size(); ++i) {
        const Node& item = (**list)[i];
        const std::string k = index_key("skills", i);
        if (item.kind == Node::Kind::scalar) {
            SBX_TRY(text(item, k));
            continue;
        }
        if (item.kind != Node::Kind::map || item.children.size() != 1)
            return error(item, k, "expected a skill's name, or its name and settings as `- shell: {blocked_commands: [nc]}`");
        const Node& skill = item.children.front();
        if (skill.key != "shell" || skill.kind == Node::Kind::null) continue;  // another skill's settings are its own
        const std::string sk = k + ".shell";
        SBX_TRY(need_map(skill, sk, "blocked_commands, allowed_commands"));
        SBX_TRY(known_keys(skill, sk, kShellSkillKeys));
        if (const Node* b = find(skill, "blocked_commands"))
            SBX_TRY(program_names(*b, sk + ".blocked_commands", out_.blocked_commands));
        if (const Node* a = find(skill, "allowed_commands")) {
            SBX_TRY(program_names(*a, sk + ".allowed_commands", out_.shell_allowed_commands));
            warn(sk + ".allowed_commands",
                 "widens only the gate of commands run unconfined, which sbx never runs; kept for reports");
        }
    }
    return {};
}

SBX_INLINE expected<void> Reader::host_list(const Node& n, const std::string& key) {
    auto list = items(n, key, "hosts");
    SBX_TRY(list);
    for (std::size_t i = 0; i < (*list)->size(); ++i) {
        const Node& item = (**list)[i];
        const std::string k = index_key(key, i);
        auto t = text(item, k);
        SBX_TRY(t);
        const bool group = std::any_of(std::begin(kHostGroups), std::end(kHostGroups),
                                       [&](const HostGroup& g) { return g.name == *t; });
        if (!group) {
            auto p = net::parse_host_pattern(*t);
            if (!p) return error(item, k, p.error().message);
            if (p->kind == net::HostPattern::Kind::any)
                return error(item, k,
                             "'" + *t + "' would admit every host; list the hosts, or the groups npm, pypi and github");
            if (p->kind == net::HostPattern::Kind::name && t->find('.') == std::string::npos) {
                std::array<std::string_view, std::size(kHostGroups)> names{};
                for (std::size_t g = 0; g < names.size(); ++g) names[g] = kHostGroups[g].name;
                if (auto near = closest(*t, names))
                    warn(k, "'" + *t + "' is taken as a host name; did you mean the group '" + std::string(*near) + "'?");
            }
        }
        out_.network.hosts.push_back(Sourced<std::string>{std::move(*t), source(k)});
    }
    return {};
}

SBX_INLINE expected<void> Reader::env_list(const Node& n, const std::string& key) {
    auto list = items(n, key, "variable names");
    SBX_TRY(list);
    for (std::size_t i = 0; i < (*list)->size(); ++i) {
        const std::string k = index_key(key, i);
        auto t = text((**list)[i], k);
        SBX_TRY(t);
        if (!valid_env_name(*t))
            return error((**list)[i], k,
                         "'" + *t + "' is not a variable name (letters, digits and _, not starting with a digit)");
        out_.env.push_back(Sourced<std::string>{std::move(*t), source(k)});
    }
    return {};
}

SBX_INLINE expected<void> Reader::read_sandbox(const Node& n) {
    if (n.kind == Node::Kind::scalar) {
        if (n.plain && n.text == "off") {
            out_.preset = Preset::off;
            out_.preset_source = source("sandbox");
            return {};
        }
        return error(n, "sandbox", "sandbox: takes its keys indented below it, or the value off; got '" + n.text + "'");
    }
    SBX_TRY(need_map(n, "sandbox", "preset, files, network, env"));
    SBX_TRY(known_keys(n, "sandbox", kSandboxKeys));
    if (const Node* p = find(n, "preset")) {
        auto t = text(*p, "sandbox.preset");
        SBX_TRY(t);
        if (*t == "strict") out_.preset = Preset::strict;
        else if (*t == "development") out_.preset = Preset::development;
        else if (*t == "off" || *t == "unrestricted") out_.preset = Preset::off;
        else {
            std::string message = "unknown preset '" + *t + "'; use strict, development or off";
            if (auto near = closest(*t, kPresetNames)) message += " (did you mean '" + std::string(*near) + "'?)";
            return error(*p, "sandbox.preset", std::move(message));
        }
        out_.preset_source = source("sandbox.preset");
    }
    if (const Node* f = find(n, "files")) {
        SBX_TRY(read_files(*f));
    }
    if (const Node* net = find(n, "network")) {
        SBX_TRY(read_network(*net));
    }
    if (const Node* e = find(n, "env")) {
        env_line_ = e->line;
        SBX_TRY(env_list(*e, "sandbox.env"));
    }
    // Two lists the reference keeps for reports, which confine nothing.
    const struct {
        std::string_view key, what;
        SourcedList* into;
        std::string_view why;
    } inert[] = {
        {"allowed_commands", "commands", &out_.allowed_commands,
         "gates nothing: a confined command is never refused for its name; kept for reports"},
        {"allowed_imports", "modules", &out_.allowed_imports,
         "does nothing: the sandbox confines what commands open and connect to, not what Python imports; "
         "kept for reports"},
    };
    for (const auto& e : inert) {
        const Node* c = find(n, e.key);
        if (c == nullptr) continue;
        const std::string key = "sandbox." + std::string(e.key);
        auto list = items(*c, key, e.what);
        SBX_TRY(list);
        for (std::size_t i = 0; i < (*list)->size(); ++i) {
            const std::string k = index_key(key, i);
            auto t = text((**list)[i], k);
            SBX_TRY(t);
            e.into->push_back(Sourced<std::string>{std::move(*t), source(k)});
        }
        warn(key, std::string(e.why));
    }
    return {};
}

SBX_INLINE expected<void> Reader::read_files(const Node& n) {
    SBX_TRY(need_map(n, "sandbox.files", "write, read, deny"));
    SBX_TRY(known_keys(n, "sandbox.files", kFilesKeys));
    if (const Node* w = find(n, "write")) {
        write_line_ = w->line;
        SBX_TRY(paths_list(*w, "sandbox.files.write", PathKind::folder, out_.files.write));
        out_.files.write_written = true;
    }
    if (const Node* r = find(n, "read")) {
        if (r->kind == Node::Kind::scalar) {
            if (r->text != "all")
                return error(*r, "sandbox.files.read", "files.read is all or a list of folders; got '" + r->text + "'");
            out_.files.read_all_written = true;
        } else {
            SourcedList folders;
            SBX_TRY(paths_list(*r, "sandbox.files.read", PathKind::folder, folders));
            out_.files.read = std::move(folders);
        }
    }
    if (const Node* d = find(n, "deny")) {
        SBX_TRY(paths_list(*d, "sandbox.files.deny", PathKind::pattern, out_.files.deny));
    }
    return {};
}

SBX_INLINE expected<void> Reader::read_network(const Node& n) {
    SBX_TRY(need_map(n, "sandbox.network", "hosts, local, sockets"));
    SBX_TRY(known_keys(n, "sandbox.network", kNetworkKeys));
    if (const Node* h = find(n, "hosts")) {
        hosts_line_ = h->line;
        SBX_TRY(host_list(*h, "sandbox.network.hosts"));
    }
    if (const Node* l = find(n, "local")) {
        auto b = boolean(*l, "sandbox.network.local");
        SBX_TRY(b);
        out_.network.local = std::move(*b);
    }
    if (const Node* s = find(n, "sockets")) {
        SBX_TRY(paths_list(*s, "sandbox.network.sockets", PathKind::socket, out_.network.sockets));
    }
    return {};
}

SBX_INLINE void Reader::add_once(SourcedList& list, std::string value, const Source& s) {
    for (const auto& e : list)
        if (e.value == value) return;
    list.push_back(Sourced<std::string>{std::move(value), s});
}

SBX_INLINE void Reader::build() {
    Settings& s = out_.settings;
    s.blocked_commands = out_.blocked_commands;  // refused confined or not
    const Source preset_src = out_.strict_for_skill_script ? source("sandbox.preset (strict for a skill script)")
                              : out_.preset_source        ? *out_.preset_source
                                                          : source("sandbox.preset (default)");
    if (out_.preset == Preset::off) {
        s.enabled = Sourced<bool>{false, preset_src};
        return;
    }
    s.enabled = Sourced<bool>{true, preset_src};
    auto& fs = s.filesystem;
    fs.configured = true;
    const Source builtin = source("sandbox (built-in)");
    const std::string& dir = out_.agent_dir;

    for (const auto& w : out_.files.write) add_once(fs.allow_write, w.value, w.source);
    if (out_.preset == Preset::development) add_once(fs.allow_write, dir, preset_src);
    // Strict writes only files.write (and the command's temporary directory):
    // not the root the caller sandboxes either.
    if (out_.preset == Preset::strict) fs.root_read_only = Sourced<bool>{true, preset_src};

    for (const auto& d : out_.files.deny) add_once(fs.deny_read, d.value, d.source);
    for (const auto& c : kCredentialStores) add_once(fs.deny_read, paths::join(base_.home, c.path), builtin);
    for (const auto& c : kAgentHomeDenies) add_once(fs.deny_read, paths::join(base_.home, c.path), builtin);
    std::vector<std::string> folders{dir};
    for (const auto& w : fs.allow_write)
        if (std::find(folders.begin(), folders.end(), w.value) == folders.end()) folders.push_back(w.value);
    for (const auto& f : folders)
        for (const auto& c : kAgentFolderReadDenies) add_once(fs.deny_read, paths::join(f, c.path), builtin);

    add_once(fs.deny_write, out_.file, builtin);
    for (const auto& c : kAgentControlFiles) add_once(fs.deny_write, paths::join(dir, c.path), builtin);

    if (out_.reads_scoped) scope_reads(folders, preset_src);

    auto& net = s.network;
    for (const auto& h : out_.network.hosts) {
        bool group = false;
        for (const auto& g : kGroupHosts) {
            if (g.group != h.value) continue;
            group = true;
            add_once(net.allowed_domains, std::string(g.host), h.source);
        }
        if (!group) add_once(net.allowed_domains, h.value, h.source);
    }
    if (out_.network.local) net.allow_local_binding = out_.network.local;
    // Both launchers open exactly these paths: sbx-mac through Seatbelt,
    // sbx-linux by deciding each connection (sbx/net/unix_socket.hpp).
    for (const auto& k : out_.network.sockets) add_once(net.allow_unix_sockets, k.value, k.source);
}

SBX_INLINE void Reader::scope_reads(const std::vector<std::string>& folders, const Source& preset_src) {
    auto& fs = out_.settings.filesystem;
    const Source scope_src = out_.files.read ? source("sandbox.files.read") : preset_src;
    std::vector<std::string> allowed = folders;  // the agent's folder and the write folders
    if (out_.files.read)
        for (const auto& r : *out_.files.read) allowed.push_back(r.value);

    std::vector<std::string> roots;
    for (const auto& r : kReadScopeRoots)
        if (r.platform == src_.platform) roots.emplace_back(r.path);
    roots.push_back(base_.home);
    std::vector<std::string> denied;
    for (const auto& root : roots) {
        const bool covered = std::any_of(allowed.begin(), allowed.end(),
                                         [&](const std::string& a) { return paths::at_or_under(root, a); }) ||
                             std::any_of(denied.begin(), denied.end(),
                                         [&](const std::string& d) { return paths::at_or_under(root, d); });
        if (!covered) denied.push_back(root);
    }
    for (const auto& d : denied) add_once(fs.deny_read, d, scope_src);
    if (out_.files.read)
        for (const auto& r : *out_.files.read) add_once(fs.allow_read, r.value, r.source);
    add_once(fs.allow_read, out_.agent_dir, scope_src);
}

}  // namespace sbx::detail::agent_file

namespace sbx {

SBX_INLINE expected<AgentFile> parse_agent_file(std::string_view text, const AgentFileSource& src) {
    using namespace detail::agent_file;
    if (!paths::is_absolute(src.file) || !paths::is_absolute(src.home))
        return fail(Errc::invalid_argument, "the agent file and the home directory are named by absolute paths");
    AgentFile out;
    out.file = paths::normalize(src.file);
    out.agent_dir = paths::parent(out.file);
    if (glob::has_wildcard(out.agent_dir) || glob::has_wildcard(src.home) || !paths::check_text(out.file))
        return fail(Error(Errc::invalid_argument,
                          "the agent's folder or the home directory holds a wildcard or control character, "
                          "which sandbox rules cannot name")
                        .in_file(out.file));
    out.settings.layer = src.layer;
    out.settings.file = out.file;
    out.settings.from = LayerFile::agent;

    auto root = front_matter::parse(text, out.file, front_matter::Keys{kTopKeys, refuse_misplaced_key});
    SBX_TRY(root);
    Reader reader(src, out);
    SBX_TRY(reader.read(*root));
    return out;
}

SBX_INLINE expected<void> require_confined(const AgentFile& agent) {
    if (agent.preset != Preset::off) return {};
    return fail(Error(Errc::invalid_argument,
                      "the agent file turns the sandbox off; sbx runs commands only confined "
                      "(run it without sbx to run it unconfined)")
                    .in_file(agent.file)
                    .at_key(agent.preset_source ? agent.preset_source->key : "sandbox"));
}

SBX_INLINE void insert_agent_layer(std::vector<Settings>& layers, const AgentFile& agent) {
    auto first_flag = std::find_if(layers.begin(), layers.end(),
                                   [](const Settings& l) { return l.layer == LayerKind::flag; });
    layers.insert(first_flag, agent.settings);
}

SBX_INLINE void deny_home_env_files(AgentFile& agent, const EnvFiles& found) {
    if (agent.preset == Preset::off) return;
    const Source builtin{agent.settings.layer, FileName(agent.file), "sandbox (built-in): .env under the home directory"};
    auto& deny = agent.settings.filesystem.deny_read;
    for (const auto& f : found.files)
        if (std::none_of(deny.begin(), deny.end(), [&](const auto& d) { return d.value == f; }))
            deny.push_back(Sourced<std::string>{f, builtin});
    agent.settings.warnings.insert(agent.settings.warnings.end(), found.warnings.begin(), found.warnings.end());
}

SBX_INLINE void deny_env_files_in(AgentFile& agent, std::string_view dir) {
    if (agent.preset == Preset::off) return;
    const Source builtin{agent.settings.layer, FileName(agent.file), "sandbox (built-in): .env where the command starts"};
    auto& deny = agent.settings.filesystem.deny_read;
    for (std::string_view name : {".env", ".env.*"}) {
        const std::string p = paths::join(dir, name);
        if (std::none_of(deny.begin(), deny.end(), [&](const auto& d) { return d.value == p; }))
            deny.push_back(Sourced<std::string>{p, builtin});
    }
}

}  // namespace sbx
#endif
