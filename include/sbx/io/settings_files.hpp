// sbx/io/settings_files.hpp - finding and reading the settings layers of a root.
//
// This is the edge where settings meet the disk: it reads files and nothing else,
// then hands their text to parse_settings(). Layers:
//   managed  /etc/claude-code/managed-settings.json (Linux),
//            /Library/Application Support/ClaudeCode/managed-settings.json (macOS)
//   user     HOME/.claude/settings.json
//   project  ROOT/.claude/settings.json
//   local    ROOT/.claude/settings.local.json
//   flag     files named on the command line (--settings, repeatable: later wins)
// A missing managed, user, project or local file is simply no layer; a file named
// explicitly (flag, or a replacement managed path) must exist.
#pragma once

#include <optional>
#include <algorithm>
#include <string>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/io/fs_view_disk.hpp"
#include "sbx/settings/settings.hpp"

namespace sbx {

#if defined(__APPLE__)
inline constexpr std::string_view kManagedSettingsPath =
    "/Library/Application Support/ClaudeCode/managed-settings.json";
#else
inline constexpr std::string_view kManagedSettingsPath = "/etc/claude-code/managed-settings.json";
#endif

// Settings files are small; anything larger than this is refused, not read.
inline constexpr std::size_t kMaxSettingsBytes = 4u << 20;

// The whole of a settings file, or nullopt when nothing is at `path`. Anything
// but a regular file is refused (a FIFO would block, a device never end), and so
// is one past the size limit, as invalid settings.
SBX_INLINE expected<std::optional<std::string>> read_settings_text(const std::string& path);

// Which files make up the layers for one root.
struct LayerFiles {
    std::string root;  // absolute, normalised: the project being sandboxed
    std::string home;  // absolute, normalised
    std::string managed = std::string(kManagedSettingsPath);
    bool managed_explicit = false;  // named by the caller: must exist
    std::vector<std::string> flags;  // --settings FILE...: each must exist; a later one ranks higher
    // Read as absent: the placeholders of sandboxes running in the root now
    // (placeholder_registry.hpp), which cover a missing settings file.
    std::vector<std::string> hidden;
};

// Reads and parses every layer that exists. The first error stops it.
SBX_INLINE expected<std::vector<Settings>> load_layers(const LayerFiles& f);

// Every file load_layers looks for, whether or not it is there, in its order:
// what a policy made from them is stale after (a session looks at each again
// before each command).
SBX_INLINE std::vector<std::string> layer_file_paths(const LayerFiles& f);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_IO)

namespace sbx {

SBX_INLINE expected<std::optional<std::string>> read_settings_text(const std::string& path) {
    return read_small_file(path, kMaxSettingsBytes, Errc::invalid_settings);
}

SBX_INLINE std::vector<std::string> layer_file_paths(const LayerFiles& f) {
    const std::string user = paths::join(f.home, ".claude/settings.json");
    const std::string project = paths::join(f.root, ".claude/settings.json");
    std::vector<std::string> out{f.managed, user};
    if (project != user) out.push_back(project);
    out.push_back(paths::join(f.root, ".claude/settings.local.json"));
    out.insert(out.end(), f.flags.begin(), f.flags.end());
    return out;
}

SBX_INLINE expected<std::vector<Settings>> load_layers(const LayerFiles& f) {
    struct Wanted {
        LayerKind layer;
        std::string file;
        bool required;
    };
    const std::string user = paths::join(f.home, ".claude/settings.json");
    std::vector<Wanted> wanted{{LayerKind::managed, f.managed, f.managed_explicit}, {LayerKind::user, user, false}};
    const std::string project = paths::join(f.root, ".claude/settings.json");
    // With the root at HOME, the project file is the user file: read it once, as the user's.
    if (project != user) wanted.push_back({LayerKind::project, project, false});
    wanted.push_back({LayerKind::local, paths::join(f.root, ".claude/settings.local.json"), false});
    for (const auto& flag : f.flags) wanted.push_back({LayerKind::flag, flag, true});

    std::vector<Settings> layers;
    for (const auto& w : wanted) {
        const bool hidden = std::find(f.hidden.begin(), f.hidden.end(), w.file) != f.hidden.end();
        auto text = hidden ? expected<std::optional<std::string>>{std::nullopt} : read_settings_text(w.file);
        SBX_TRY(text);
        if (!*text) {
            if (w.required) return fail(Error(Errc::io_error, "no such file").in_file(w.file));
            continue;
        }
        std::string file = paths::is_absolute(w.file) ? paths::normalize(w.file) : w.file;
        SettingsSource src{w.layer, w.file, paths::Base{f.home, settings_project_dir(file)}, f.root};
        auto parsed = parse_settings(**text, src);
        SBX_TRY(parsed);
        layers.push_back(std::move(*parsed));
    }
    return layers;
}

}  // namespace sbx
#endif
