// session_repos.cpp - repositories made during a session (session_repos.hpp).
#include "session_repos.hpp"

#include <algorithm>
#include <utility>

#include "sbx/core/paths.hpp"
#include "sbx/io/placeholder_registry.hpp"
#include "sbx/rules/git_audit.hpp"

namespace sbx::cli {

namespace {

bool same_mount(const sbx::Mount& a, const sbx::Mount& b) { return a.kind == b.kind && a.path == b.path; }

// What `later` adds to `first` inside `root` (not the root itself) that a
// running sandbox can be given: pins and read-only binds of a path over itself,
// in `later`'s order, and their placeholders.
sbx::linux_sandbox::AddedMounts added_inside(const sbx::Plan& first, const sbx::Plan& later, const std::string& root) {
    sbx::linux_sandbox::AddedMounts out;
    for (const auto& m : later.filesystem.mounts) {
        if (m.kind != sbx::MountKind::pin && m.kind != sbx::MountKind::ro_bind) continue;
        if (m.path != m.source || m.path == root || !sbx::paths::at_or_under(m.path, root)) continue;
        const auto& had = first.filesystem.mounts;
        if (std::any_of(had.begin(), had.end(), [&](const sbx::Mount& h) { return same_mount(h, m); })) continue;
        out.mounts.push_back(m);
    }
    for (const auto& p : later.filesystem.placeholders) {
        const auto& had = first.filesystem.placeholders;
        if (std::any_of(had.begin(), had.end(), [&](const sbx::PlaceholderOp& h) { return h.path == p.path; })) continue;
        // Each has its ro-bind in the plan (parse_plan holds plans to it).
        const bool bound = std::any_of(out.mounts.begin(), out.mounts.end(), [&](const sbx::Mount& m) {
            return m.path == p.path && m.kind == sbx::MountKind::ro_bind;
        });
        if (bound) out.placeholders.push_back(p);
    }
    return out;
}

std::string shown(const std::string& path, const std::string& root) {
    return sbx::printable_line_part(path.size() > root.size() ? path.substr(root.size() + 1) : path);
}

}  // namespace

SessionRepositories::SessionRepositories(const Composed& composed, const PlanArgs& args, const sbx::Plan& plan,
                                         std::string id, timespec start)
    : composed_(composed), args_(args), plan_(plan), id_(std::move(id)), start_(start),
      surveyed_(sbx::launcher::survey_git(composed.root)) {
    for (const auto& r : surveyed_.repositories) known_.insert(r.path);
}

void SessionRepositories::serve(sbx::linux_sandbox::SessionMounts* mounts) {
    std::lock_guard<std::mutex> lock(mounts_mutex_);
    mounts_ = mounts;
}

std::vector<std::string> SessionRepositories::before_run() {
    surveyed_ = sbx::launcher::survey_git(composed_.root, &surveyed_);
    std::vector<std::string> fresh;
    for (const auto& r : surveyed_.repositories)
        if (known_.insert(r.path).second) fresh.push_back(r.path);
    if (fresh.empty()) return {};
    return protect(fresh);
}

std::vector<std::string> SessionRepositories::protect(const std::vector<std::string>& fresh) {
    const std::string& root = composed_.root;
    std::vector<std::string> lines;
    // 1. What was planted in them so far, renamed now.
    const auto audit = sbx::launcher::audit_git(root, fresh, start_);
    for (const auto& n : audit.neutralised) lines.push_back(sbx::git_audit_line(n));
    for (const auto& f : audit.failures) lines.push_back(sbx::git_audit_failure_line(f));
    // 2. The record, which the plan reads them from.
    std::string why_not;
    if (!plan_.filesystem.git_record) {
        why_not = "the root has no record of its repositories that the commands cannot write";
    } else if (auto kept = sbx::launcher::keep_git_record(*plan_.filesystem.git_record, plan_.filesystem.git_audit,
                                                            surveyed_.repositories);
               !kept) {
        why_not = "cannot write the root's record of its repositories: " + kept.error().message;
    }
    // 3. The plan sbx run would make now, and what it adds.
    std::vector<std::string> problems;
    sbx::linux_sandbox::AddedMounts added;
    if (why_not.empty()) {
        // As sbx run plans: the placeholders of the root's group (this
        // session's among them) read as missing, under the group's lock.
        sbx::expected<sbx::Plan> later = sbx::fail(sbx::Errc::internal, "no plan");
        if (auto group = sbx::GroupSnapshot::take(root); !group) {
            later = sbx::fail(group.error());
        } else {
            const sbx::HidingFs view(*composed_.disk, group->paths());
            later = plan_for(composed_, args_, view);
        }  // the group's lock, which add() takes again, let go
        if (!later) {
            why_not = "cannot plan again: " + later.error().message;
        } else {
            added = added_inside(plan_, *later, root);
            std::lock_guard<std::mutex> lock(mounts_mutex_);
            if (mounts_ == nullptr)
                why_not = "the session's sandbox has ended";
            else
                problems = mounts_->add(added);
        }
    }
    std::size_t named = 0, more = 0;
    for (const auto& repo : fresh) {
        if (named == kMaxNamed) {
            ++more;
            continue;
        }
        ++named;
        const bool covered = std::any_of(added.mounts.begin(), added.mounts.end(),
                                         [&](const sbx::Mount& m) { return sbx::paths::at_or_under(m.path, repo); });
        // A line naming no path (the helper failed) is every repository's.
        const bool failed = std::any_of(problems.begin(), problems.end(), [&](const std::string& p) {
            return p.empty() || p[0] != '/' || p.compare(0, repo.size() + 1, repo + "/") == 0;
        });
        if (covered && !failed) {
            lines.push_back(shown(repo, root) +
                            " became a git repository during this session: its hooks and config are read-only to "
                            "the session's commands from this one on, as those of the repositories there at its start");
        } else {
            lines.push_back(shown(repo, root) + " became a git repository during this session, and its hooks and config " +
                            "are still open to the session's commands" + (why_not.empty() ? "" : " (" + why_not + ")") +
                            ": run no git in it outside until `sbx session stop " + id_ +
                            "`, whose audit neutralises what they planted");
        }
    }
    if (more > 0) lines.push_back(std::to_string(more) + " more repositories were made during this session, as the above");
    for (const auto& p : problems) lines.push_back(sbx::printable_line_part(p));
    return lines;
}

}  // namespace sbx::cli
