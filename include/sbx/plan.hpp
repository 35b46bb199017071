// sbx/plan.hpp - a policy and a command compiled into the plan a launcher carries out.
//
// make_plan() gathers the protected paths of the root, compiles the filesystem
// rules and plans the mounts; to_json() writes the versioned document a launcher
// reads (docs/plan.md). Everything is decided here: the launcher only re-checks
// the identities the plan recorded and carries it out.
#pragma once

#include <string>
#include <vector>

#include "sbx/fs_plan.hpp"
#include "sbx/json.hpp"
#include "sbx/policy.hpp"
#include "sbx/protected_paths.hpp"

namespace sbx {

inline constexpr int kPlanVersion = 1;

// What a caller asks for: which command, where.
struct PlanRequest {
    std::vector<std::string> argv;  // the command; argv[0] is looked up on PATH by the launcher
    std::string root;               // absolute, normalised, symlink-free; not `/`
    std::string cwd;                // absolute; the root when empty
    std::string home;               // absolute, normalised
    std::string tmpdir;             // the command's temporary directory: absolute, not yet existing
};

struct Plan {
    int version = kPlanVersion;
    std::vector<std::string> argv;
    std::string root, cwd, tmpdir;
    bool enabled = true;             // the policy's `enabled`
    bool fail_if_unavailable = true;
    FsPlan filesystem;
    std::vector<Warning> warnings;  // the policy's, the rules', the plan's
};

inline expected<Plan> make_plan(const Policy& policy, const PlanRequest& req, const FsView& fs) {
    if (req.argv.empty() || req.argv.front().empty()) return fail(Errc::invalid_argument, "no command to run");
    for (const auto* p : {&req.root, &req.home, &req.tmpdir})
        if (!paths::is_absolute(*p) || paths::normalize(*p) != *p)
            return fail(Errc::invalid_argument, "'" + *p + "' is not an absolute, normalised path");
    if (req.root == "/") return fail(Errc::invalid_argument, "the root may not be /: everything would be writable");
    if (paths::at_or_under(req.root, req.tmpdir) || paths::at_or_under(req.tmpdir, req.root))
        return fail(Errc::invalid_argument, "the temporary directory and the root may not hold each other");

    Plan plan;
    plan.argv = req.argv;
    plan.root = req.root;
    plan.cwd = req.cwd.empty() ? req.root : paths::normalize(req.cwd);
    plan.tmpdir = req.tmpdir;
    plan.enabled = policy.enabled.value;
    plan.fail_if_unavailable = policy.fail_if_unavailable.value;
    plan.warnings = policy.warnings;

    CachedFs cached(fs);
    auto prot = protected_paths(req.root, req.home, cached);
    if (!prot) return fail(prot.error());
    plan.warnings.insert(plan.warnings.end(), prot->warnings.begin(), prot->warnings.end());
    auto rules = compile_fs_rules(policy, FsContext{req.root, req.tmpdir, req.home}, std::move(prot->paths), cached);
    if (!rules) return fail(rules.error());
    plan.warnings.insert(plan.warnings.end(), rules->warnings.begin(), rules->warnings.end());
    auto fsplan = make_fs_plan(*rules, cached);
    if (!fsplan) return fail(fsplan.error());
    plan.warnings.insert(plan.warnings.end(), fsplan->warnings.begin(), fsplan->warnings.end());
    fsplan->warnings.clear();
    plan.filesystem = std::move(*fsplan);
    return plan;
}

namespace detail {

inline void write_identity(json::Writer& w, const Identity& id) {
    w.begin_object().key("exists").value(id.exists);
    if (id.exists) {
        std::string_view type = id.type == FileType::directory ? "directory"
                                : id.type == FileType::regular ? "file"
                                : id.type == FileType::symlink ? "symlink"
                                                               : "other";
        w.key("type").value(type).key("dev").value(id.dev).key("ino").value(id.ino).key("nlink").value(id.nlink);
    }
    w.end_object();
}

}  // namespace detail

// The plan as the versioned JSON document of docs/plan.md.
inline std::string to_json(const Plan& p) {
    json::Writer w;
    w.begin_object().key("version").value(p.version);
    w.key("command").begin_object().key("argv").begin_array();
    for (const auto& a : p.argv) w.value(a);
    w.end_array().key("cwd").value(p.cwd).end_object();
    w.key("root").value(p.root).key("tmpdir").value(p.tmpdir);
    w.key("enabled").value(p.enabled).key("failIfUnavailable").value(p.fail_if_unavailable);
    w.key("filesystem").begin_object().key("isolated").value(p.filesystem.isolated).key("mounts").begin_array();
    for (const auto& m : p.filesystem.mounts) {
        w.begin_object().key("kind").value(mount_kind_name(m.kind)).key("path").value(m.path);
        if (m.kind == MountKind::bind || m.kind == MountKind::ro_bind) w.key("source").value(m.source);
        w.key("expect");
        detail::write_identity(w, m.expect);
        w.key("why").value(m.why).end_object();
    }
    w.end_array().key("placeholders").begin_array();
    for (const auto& ph : p.filesystem.placeholders) {
        w.begin_object().key("path").value(ph.path).key("kind").value(placeholder_name(ph.kind)).key("parent");
        detail::write_identity(w, ph.parent);
        w.key("why").value(ph.why).end_object();
    }
    w.end_array().key("removeIfCreated").begin_array();
    for (const auto& r : p.filesystem.remove_if_created)
        w.begin_object().key("path").value(r.path).key("why").value(r.why).end_object();
    w.end_array().end_object();
    w.key("warnings").begin_array();
    for (const auto& wn : p.warnings)
        w.begin_object().key("file").value(wn.file).key("key").value(wn.key).key("message").value(wn.message).end_object();
    w.end_array().end_object();
    return w.take();
}

}  // namespace sbx
