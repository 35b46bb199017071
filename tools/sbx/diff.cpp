// diff.cpp - `sbx diff`: what a settings change opens and closes. The policy
// before and after (the project's settings at a git revision against the work
// tree's, or two settings files in place of the project's), value by value and
// decision by decision, each side composed as `sbx run` would (compose.hpp).
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/json_write.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/io/settings_files.hpp"
#include "sbx/review/decision_diff.hpp"
#include "sbx/review/value_diff.hpp"
#include "sbx/settings/agent_file.hpp"
#include "sbx/settings/settings.hpp"

#include "cli_common.hpp"
#include "commands.hpp"
#include "compose.hpp"
#include "git_files.hpp"    // the settings at a git revision
#include "proxy/host_lookup.hpp"  // launchers/: this machine's addresses, as the proxy's

namespace sbx::cli {

namespace {

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
        auto text = read_given_file(file);
        SBX_TRY(text);
        return put_layer(layers, f, sbx::LayerKind::project, file, std::move(*text));
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

// An agent file of the repository whose text differs between the two sides,
// and what commands run under it meet differently: its layer over the
// settings of each side, against the same without it where it is missing.
struct AgentDiff {
    std::string path;    // relative to the root
    std::string change;  // added, removed, changed
    DiffOutcome outcome;
};

// The value and decision changes of one outcome, in lines; with
// `widening_only`, those that widen, and how many others there are.
void print_changes(std::ostream& out, const DiffOutcome& d, std::string_view indent, bool widening_only = false) {
    using D = sbx::review::Direction;
    std::size_t left_out = 0;
    out << indent << "values" << (d.values.empty() ? ": no change" : ":") << "\n";
    for (const auto& v : d.values) {
        if (widening_only && v.direction != D::widens) {
            ++left_out;
            continue;
        }
        const std::string dir = direction_column(v.direction);
        out << indent << "  " << dir << sbx::review::what_name(v.what) << " " << v.name << " ";
        using W = sbx::review::ValueChange::What;
        if (v.what == W::added) out << v.after << " (" << v.meaning << ")  [" << source_words(v.after_source) << "]";
        else if (v.what == W::removed) out << v.before << " (" << v.meaning << ")  [" << source_words(v.before_source) << "]";
        else
            out << v.before << " -> " << v.after << " (true: " << v.meaning << ")  [was " << source_words(v.before_source)
                << "; now " << source_words(v.after_source) << "]";
        out << "\n";
    }
    out << indent << "decisions" << (d.decisions.empty() ? ": no change" : ":") << " (" << d.probes
        << " paths and hosts decided on both sides)\n";
    for (const auto& c : d.decisions) {
        if (widening_only && c.direction != D::widens) {
            ++left_out;
            continue;
        }
        const std::string dir = direction_column(c.direction);
        out << indent << "  " << dir << subject_of(c.probe) << " " << c.change << "  (" << c.probe.origin << ")\n";
        out << indent << "            was: " << c.before << "  " << c.before_why << "\n";
        out << indent << "            now: " << c.after << "  " << c.after_why << "\n";
    }
    if (left_out > 0)
        out << indent << "and " << left_out << (left_out == 1 ? " change" : " changes")
            << " that narrow or open nothing (its built-in denies among them; --json lists them)\n";
}

std::size_t total_widening(const DiffOutcome& d, const std::vector<AgentDiff>& agents) {
    std::size_t n = d.widening();
    for (const auto& a : agents) n += a.outcome.widening();
    return n;
}

void print_diff_text(const DiffArgs& a, const Composed& l, const DiffBase& base, const DiffOutcome& d,
                     const std::vector<AgentDiff>& agents) {
    auto& out = std::cout;
    if (!a.base.empty())
        out << "sbx diff: the policy at " << a.base << " (" << base.commit.substr(0, 12) << ") against the work tree";
    else
        out << "sbx diff: the policy with " << a.files[0] << " against the policy with " << a.files[1];
    out << ", for " << l.root << ": " << sbx::root_why(l.where) << "\n";
    for (const auto& f : base.shared) out << "  " << f << ": not tracked by git, the work tree's on both sides\n";
    print_changes(out, d, "");
    for (const auto& ad : agents) {
        out << "agent file " << ad.path << " (" << ad.change << "): what commands run under it meet\n";
        print_changes(out, ad.outcome, "  ", ad.change != "changed");
    }
    const std::size_t widening = total_widening(d, agents);
    out << (widening == 0 ? "nothing became more open" : std::to_string(widening) + " change" +
                                                               (widening == 1 ? " widens" : "s widen") + " the sandbox")
        << "\n";
}

// The value and decision changes of one outcome, as members "values",
// "decisions", "probes" and "widening" (`widening` changes widen).
void write_changes(sbx::json::Writer& w, const DiffOutcome& d, std::size_t widening) {
    auto text_or_null = [&](const std::string& t, bool has) {
        if (has) w.value(t);
        else w.null();
    };
    w.key("values").begin_array();
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
    w.key("widening").value(static_cast<std::uint64_t>(widening));
}

void print_diff_json(const DiffArgs& a, const Composed& l, const DiffBase& base, const DiffOutcome& d,
                     const std::vector<AgentDiff>& agents) {
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
    w.end_array();
    // The top level's widening counts the agent files' too: what --fail-on-widening counts.
    write_changes(w, d, total_widening(d, agents));
    w.key("agentFiles").begin_array();
    for (const auto& ad : agents) {
        w.begin_object().key("path").value(ad.path).key("change").value(ad.change);
        write_changes(w, ad.outcome, ad.outcome.widening());
        w.end_object();
    }
    w.end_array().end_object();
    std::cout << w.take() << "\n";
}

// The values and decisions that differ between the two sides, each composed
// as `sbx run` would, with one temporary directory so that it is no change;
// the disk is looked at once for both.
sbx::expected<DiffOutcome> compare(const Composed& before, const Composed& after) {
    sbx::CachedFs cached(*after.view);
    const RunChoices same{"", true, temporary_directory()};
    auto rules_before = run_rules(before, run_inputs(before, same), cached);
    SBX_TRY(rules_before);
    auto rules_after = run_rules(after, run_inputs(after, same), cached);
    SBX_TRY(rules_after);
    const sbx::review::DiffSide side_before{before.policy, rules_before->fs.rules, rules_before->hosts};
    const sbx::review::DiffSide side_after{after.policy, rules_after->fs.rules, rules_after->hosts};
    const sbx::review::DiffContext ctx{after.credential_homes, sbx::launcher::own_addresses()};
    DiffOutcome d;
    d.values = sbx::review::diff_values(before.policy, after.policy);
    const auto probes = sbx::review::diff_probes(side_before, side_after, ctx);
    d.probes = probes.size();
    auto decisions = sbx::review::diff_decisions(side_before, side_after, probes, ctx, cached);
    SBX_TRY(decisions);
    d.decisions = std::move(*decisions);
    return d;
}

// `edit`, then an agent file's layer read from `text` (nothing when there is
// none), as the agent file at `rel` of the root; errors name it as `name`.
LayerEdit with_agent_file(LayerEdit edit, const std::string& rel, const std::optional<std::string>& text,
                          const std::string& name) {
    return [edit, rel, text, name](std::vector<sbx::Settings>& layers, const sbx::LayerFiles& f) -> sbx::expected<void> {
        if (edit) SBX_TRY(edit(layers, f));
        if (!text) return {};
        auto agent = sbx::parse_agent_file(*text, sbx::AgentFileSource{sbx::paths::join(f.root, rel), f.home,
                                                                          sbx::LayerKind::flag});
        if (!agent) {
            sbx::Error e = agent.error();
            e.file = name;
            return sbx::fail(std::move(e));
        }
        sbx::insert_agent_layer(layers, *agent);
        return {};
    };
}

// Each agent file of the repository whose text differs between REV and the
// work tree (added, removed, changed), compared as the settings are, with its
// layer on each side where it is there.
sbx::expected<std::vector<AgentDiff>> agent_diffs(const DiffArgs& a, const Composed& after, const DiffBase& base) {
    std::vector<AgentDiff> out;
    auto repo = sbx::tools::find_git(after.root);
    SBX_TRY(repo);
    auto at_rev = sbx::tools::agent_files_at(*repo, base.commit, a.base);
    SBX_TRY(at_rev);
    auto in_tree = sbx::tools::agent_files_in_work_tree(*repo);
    SBX_TRY(in_tree);
    std::vector<std::string> all = *at_rev;
    all.insert(all.end(), in_tree->begin(), in_tree->end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    for (const auto& rel : all) {
        auto before_text = sbx::tools::file_at(*repo, base.commit, a.base, rel, sbx::kMaxSettingsBytes);
        SBX_TRY(before_text);
        auto after_text = sbx::read_small_file(sbx::paths::join(after.root, rel), sbx::kMaxSettingsBytes,
                                               sbx::Errc::invalid_settings);
        SBX_TRY(after_text);
        if (*before_text == *after_text) continue;
        DiffBase ignored;
        auto before = compose(a.settings, HomeRoot::allowed,
                              with_agent_file(at_revision(a.base, ignored), rel, *before_text, a.base + ":" + rel));
        SBX_TRY(before);
        auto now = compose(a.settings, HomeRoot::allowed, with_agent_file({}, rel, *after_text, rel));
        SBX_TRY(now);
        auto d = compare(*before, *now);
        SBX_TRY(d);
        out.push_back(AgentDiff{rel, !*before_text ? "added" : !*after_text ? "removed" : "changed", std::move(*d)});
    }
    return out;
}

}  // namespace

int run_diff(const DiffArgs& a) {
    if (a.base.empty() == a.files.empty() || (!a.files.empty() && a.files.size() != 2)) {
        std::cerr << "sbx: USAGE: diff needs --base REV, or two settings files OLD.json NEW.json (see sbx diff --help)\n";
        return kUsage;
    }
    DiffBase base;
    auto before = compose(a.settings, HomeRoot::allowed,
                          a.base.empty() ? in_place_of_project(a.files[0]) : at_revision(a.base, base));
    if (!before) return report(before.error());
    auto after = compose(a.settings, HomeRoot::allowed, a.base.empty() ? in_place_of_project(a.files[1]) : LayerEdit{});
    if (!after) return report(after.error());
    auto d = compare(*before, *after);
    if (!d) return report(d.error());
    std::vector<AgentDiff> agents;
    if (!a.base.empty()) {
        auto found = agent_diffs(a, *after, base);
        if (!found) return report(found.error());
        agents = std::move(*found);
    }
    if (a.settings.json) print_diff_json(a, *after, base, *d, agents);
    else print_diff_text(a, *after, base, *d, agents);
    const std::size_t widening = total_widening(*d, agents);
    if (a.fail_on_widening && widening > 0) {
        std::cerr << "sbx: the change widens the sandbox (" << widening << (widening == 1 ? " change" : " changes")
                  << "); a person should review it\n";
        return kFailed;
    }
    return kOk;
}

}  // namespace sbx::cli
