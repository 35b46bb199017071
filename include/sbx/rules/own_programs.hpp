// sbx/rules/own_programs.hpp - sbx's own programs, protected where a command could replace them.
//
// own_program_paths() decides, from the paths of the sandbox's own programs (the
// `sbx` that runs, its launcher and its stage, as the caller found them) and the
// rules a command runs with, what becomes a protected path: a command that could
// replace one of them, or put a program of its own where sbx looks for them, would
// have the next `sbx run` carried out by that program, with no sandbox at all.
// The caller finds the programs (the engine reads no /proc/self/exe); each is
// taken under the name given and where its symlinks lead, and protected where the
// rules let a command write it. Its folder is protected too, whole, when the rules
// let a command write there, so that nothing can be added beside it (a fake
// `sbx-stage` beside `sbx`), except a folder that is or holds a writable place
// (the root itself): that would make the whole place read-only, so only the
// programs are protected there, with a warning. Outside every writable place
// nothing is added: the read-only view of `/` keeps them already.
//
// The entries are ordinary read-only protected paths: the plan binds them
// read-only like the others, `sbx explain` and `sbx policy` name the reason, and
// the plan format does not change. Reads only through the FsView.
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/rules/fs_rules.hpp"
#include "sbx/rules/protected_entries.hpp"

namespace sbx {

namespace own_programs {

inline constexpr std::string_view kProgramReason =
    "sbx's own program: replacing it would run the next command without a sandbox";
inline constexpr std::string_view kFolderReason =
    "the folder of sbx's own programs: a program replaced or added in it would run the next command without a sandbox";

}  // namespace own_programs

struct OwnProgramPaths {
    // To protect, read-only, sorted by path; nothing strictly inside a listed folder.
    std::vector<ProtectedPath> paths;
    // A folder left writable (it is or holds a writable place), a path that could
    // not be followed; `file` names the path.
    std::vector<Warning> warnings;
};

// What of `programs` (absolute, normalised paths of existing programs, as the
// caller found them) and of their folders a command run with `rules` must not
// write. Errors: INVALID_ARGUMENT for a path that is not absolute and normalised.
SBX_INLINE expected<OwnProgramPaths> own_program_paths(std::span<const std::string> programs, const FsRules& rules,
                                                   const FsView& fs);

// `list` (sorted, as protected_paths gives it) with `own` added: sorted again, one
// entry per path (read_only over pin), nothing left strictly inside a folder of `own`.
SBX_INLINE std::vector<ProtectedPath> with_own_programs(std::vector<ProtectedPath> list, std::vector<ProtectedPath> own);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_RULES)

namespace sbx {

SBX_INLINE expected<OwnProgramPaths> own_program_paths(std::span<const std::string> programs, const FsRules& rules,
                                                   const FsView& fs) {
    OwnProgramPaths out;
    for (const auto& p : programs)
        if (!paths::is_absolute(p) || paths::normalize(p) != p)
            return fail(Errc::invalid_argument, "sbx's own program '" + p + "' is not an absolute, normalised path");
    if (rules.disabled) return out;  // the command writes what you can: the plan warns so
    auto writable = [&](const std::string& p) { return decide(rules, p, Access::write).allowed; };
    // A folder that is or holds a writable place: protecting it would close the place.
    auto holds_writable_place = [&](const std::string& folder) -> const FsRule* {
        for (const FsRule* r : rules.by_kind[static_cast<int>(FsRule::Kind::writable)])
            if (!r->wildcard && paths::at_or_under(r->pattern, folder)) return r;
        return nullptr;
    };
    auto warn = [&](const std::string& path, std::string message) {
        for (const auto& w : out.warnings)
            if (w.file == path && w.message == message) return;
        out.warnings.push_back(Warning{path, "", std::move(message)});
    };
    std::vector<ProtectedPath> found;
    for (const auto& p : programs) {
        // The name as given, its folders resolved (where the kernel finds the name),
        // and where it leads.
        std::vector<std::string> forms;
        auto folder = resolve(fs, paths::parent(p));
        auto real = resolve(fs, p);
        if (!folder || !real) {
            warn(p, "cannot follow its symbolic links, so it is not protected: " +
                        to_string(folder ? real.error() : folder.error()));
            continue;
        }
        forms.push_back(paths::join(*folder, p.substr(p.rfind('/') + 1)));
        if (*real != forms.front()) forms.push_back(*real);
        for (const auto& form : forms) {
            const std::string why = form == p ? std::string(own_programs::kProgramReason)
                                              : std::string(own_programs::kProgramReason) + " (where " + p + " leads)";
            if (writable(form)) found.push_back(ProtectedPath{form, Guard::read_only, Placeholder::file, why});
            const std::string dir = paths::parent(form);
            if (!writable(dir)) continue;
            if (const FsRule* place = holds_writable_place(dir)) {
                warn(dir, "sbx's own programs lie in " + dir + ", which " + (place->pattern == dir ? "is" : "holds") +
                              " " + place->list + " " + place->pattern +
                              ": only the programs are protected, so a command can add files beside them; install "
                              "sbx in a folder of its own");
                continue;
            }
            found.push_back(ProtectedPath{dir, Guard::read_only, Placeholder::directory,
                                          std::string(own_programs::kFolderReason)});
        }
    }
    // Sorted, each path once (a folder's reason over a program's), nothing inside a folder.
    std::stable_sort(found.begin(), found.end(),
                     [](const ProtectedPath& a, const ProtectedPath& b) { return a.path < b.path; });
    for (auto& e : found) {
        const bool covered = std::any_of(out.paths.begin(), out.paths.end(), [&](const ProtectedPath& k) {
            return k.path == e.path || (k.placeholder == Placeholder::directory && paths::at_or_under(e.path, k.path));
        });
        if (!covered) out.paths.push_back(std::move(e));
    }
    return out;
}

SBX_INLINE std::vector<ProtectedPath> with_own_programs(std::vector<ProtectedPath> list, std::vector<ProtectedPath> own) {
    std::vector<ProtectedPath> out;
    for (auto& p : list) {
        const bool inside = std::any_of(own.begin(), own.end(), [&](const ProtectedPath& o) {
            return o.placeholder == Placeholder::directory && paths::at_or_under(p.path, o.path) &&
                   (p.path != o.path || p.guard == Guard::pin);
        });
        if (!inside) out.push_back(std::move(p));
    }
    for (auto& o : own)
        if (std::none_of(out.begin(), out.end(), [&](const ProtectedPath& p) { return p.path == o.path; }))
            out.push_back(std::move(o));
    std::sort(out.begin(), out.end(), [](const ProtectedPath& a, const ProtectedPath& b) { return a.path < b.path; });
    return out;
}

}  // namespace sbx
#endif
