// session_repos.cpp - repositories made during a session (session_repos.hpp).
#include "session_repos.hpp"

#include <algorithm>
#include <set>
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
    std::vector<std::string> fresh, again;
    std::set<std::string> there;
    for (const auto& r : surveyed_.repositories) {
        there.insert(r.path);
        if (known_.insert(r.path).second)
            fresh.push_back(r.path);
        else if (retry_.count(r.path) != 0)
            again.push_back(r.path);
    }
    std::erase_if(retry_, [&](const std::string& p) { return there.count(p) == 0; });
    if (fresh.empty() && again.empty()) return {};
    return protect(fresh, again);
}

sbx::linux_sandbox::SessionMounts::Result SessionRepositories::mount(const sbx::Plan& later, std::string& why_not) {
    sbx::linux_sandbox::AddedMounts added = added_inside(plan_, later, composed_.root);
    std::erase_if(added.mounts, [&](const sbx::Mount& m) { return applied_.count({m.kind, m.path}) != 0; });
    sbx::linux_sandbox::SessionMounts::Result result;
    {
        std::lock_guard<std::mutex> lock(mounts_mutex_);
        if (mounts_ == nullptr) {
            why_not = "the session's sandbox has ended";
            return result;
        }
        result = mounts_->add(added);
    }
    for (const auto& path : result.made)
        for (const auto& m : added.mounts)
            if (m.path == path) applied_.insert({m.kind, m.path});
    return result;
}

std::vector<std::string> SessionRepositories::protect(const std::vector<std::string>& fresh,
                                                      const std::vector<std::string>& again) {
    const std::string& root = composed_.root;
    std::vector<std::string> lines;
    // 1. What was planted in them so far, renamed now.
    std::vector<std::string> audited = fresh;
    audited.insert(audited.end(), again.begin(), again.end());
    const auto audit = sbx::launcher::audit_git(root, audited, start_);
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
    sbx::linux_sandbox::SessionMounts::Result mounted;
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
        if (later)
            mounted = mount(*later, why_not);
        else
            why_not = "cannot plan again: " + later.error().message;
    }
    // A line naming no path (the helper failed) is every repository's.
    const auto failed = [&](const std::string& repo) {
        return std::any_of(mounted.problems.begin(), mounted.problems.end(), [&](const std::string& p) {
            return p.empty() || p[0] != '/' || p.compare(0, repo.size() + 1, repo + "/") == 0;
        });
    };
    const auto protected_now = [&](const std::string& repo) {
        return std::any_of(mounted.made.begin(), mounted.made.end(),
                           [&](const std::string& m) { return sbx::paths::at_or_under(m, repo); }) &&
               !failed(repo);
    };
    std::size_t named = 0, more = 0;
    for (std::size_t i = 0; i < audited.size(); ++i) {
        const std::string& repo = audited[i];
        const bool is_fresh = i < fresh.size();
        const bool ok = protected_now(repo);
        // A mount a command kept from being made (by renaming its file as it
        // was made) is tried again before the next run; a lasting failure is not.
        if (!ok && why_not.empty())
            retry_.insert(repo);
        else
            retry_.erase(repo);
        if (!is_fresh && !ok) continue;  // said when it was new
        if (named == kMaxNamed) {
            ++more;
            continue;
        }
        ++named;
        if (ok) {
            lines.push_back(shown(repo, root) +
                            (is_fresh ? " became a git repository during this session: its" : ", a repository made during this session: its") +
                            " hooks and config are read-only to the session's commands from this one on, as those of "
                            "the repositories there at its start");
        } else {
            lines.push_back(shown(repo, root) + " became a git repository during this session, and its hooks and config " +
                            "are still open to the session's commands" + (why_not.empty() ? "" : " (" + why_not + ")") +
                            ": run no git in it outside until `sbx session stop " + id_ +
                            "`, whose audit neutralises what they planted");
        }
    }
    if (more > 0) lines.push_back(std::to_string(more) + " more repositories were made during this session, as the above");
    // What could not be made, for the new ones: at most as many lines.
    std::size_t said = 0;
    for (const auto& p : mounted.problems) {
        const bool of_fresh = p.empty() || p[0] != '/' ||
                              std::any_of(fresh.begin(), fresh.end(), [&](const std::string& r) {
                                  return p.compare(0, r.size() + 1, r + "/") == 0;
                              });
        if (!of_fresh) continue;
        if (said++ < kMaxNamed) lines.push_back(sbx::printable_line_part(p));
    }
    if (said > kMaxNamed) lines.push_back(std::to_string(said - kMaxNamed) + " more mounts were not made, as the above");
    return lines;
}

}  // namespace sbx::cli
