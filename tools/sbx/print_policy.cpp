// print_policy.cpp - `sbx policy`'s text and JSON (print_policy.hpp).
#include "print_policy.hpp"

#include <algorithm>
#include <iostream>
#include <string_view>
#include <utility>
#include <vector>

#include "sbx/core/json_write.hpp"
#include "sbx/rules/fs_rules.hpp"
#include "sbx/settings/policy_fields.hpp"

#include "cli_common.hpp"

namespace sbx::cli {

namespace {

// "user ~/.claude/settings.json sandbox.enabled", "builtin (built-in)
// defaults.enabled" for the built-in default policy, or "default".
std::string describe(const std::optional<sbx::Source>& s) {
    if (!s) return "default";
    return std::string(sbx::layer_name(s->layer)) + "  " + s->file + "  " + s->key;
}

// The policy's values in the order of its fields (policy_fields.hpp), each with
// the layer that set it, and its warnings.
void print_values(const sbx::Policy& p, const sbx::ProjectRoot& root) {
    auto& out = std::cout;
    out << "policy for " << root.root << ": " << sbx::root_why(root) << (p.trusted ? "" : "; untrusted project") << "\n";
    for (const auto& f : sbx::kPolicyFields) {
        switch (f.kind) {
            case sbx::PolicyField::Kind::flag: {
                std::string label(f.name);
                label.resize(std::max<std::size_t>(label.size() + 1, 36), ' ');
                out << "  " << label << (f.flag(p).value ? "true " : "false") << "  " << describe(f.flag(p).source) << "\n";
                break;
            }
            case sbx::PolicyField::Kind::list:
                out << "  " << f.name << (f.list(p).empty() ? ": none" : ":") << "\n";
                for (const auto& e : f.list(p)) out << "    " << e.value << "    " << describe(e.source) << "\n";
                break;
            case sbx::PolicyField::Kind::ignores:
                out << "  " << f.name << (p.ignore_violations.empty() ? ": none" : ":") << "\n";
                for (const auto& r : p.ignore_violations)
                    out << "    " << sbx::ignore_text(r) << "    " << describe(r.source) << "\n";
                break;
            case sbx::PolicyField::Kind::text:
                out << "  " << f.name << ": ";
                if (const auto& v = f.text(p)) out << v->value << "    " << describe(v->source) << "\n";
                else out << f.unset << "    default\n";
                break;
            case sbx::PolicyField::Kind::limit: {
                const auto& v = f.limit(p);
                out << "  " << f.name << ": "
                    << (v.value ? std::to_string(*v.value) + std::string(f.unit) : std::string(f.unset)) << "    "
                    << describe(v.source) << "\n";
                break;
            }
        }
    }
    out << "warnings" << (p.warnings.empty() ? ": none" : ":") << "\n";
    for (const auto& w : p.warnings) out << "  " << sbx::to_string(w) << "\n";
}

// sbx's own programs and what of them a run protects: the members of
// `sbx policy --json`'s "ownPrograms".
void write_own_programs(sbx::json::Writer& w, const std::vector<std::string>& programs, const sbx::CommandFsRules& run) {
    w.key("programs").begin_array();
    for (const auto& p : programs) w.value(p);
    w.end_array().key("protected").begin_array();
    for (const auto& p : run.own_programs) w.begin_object().key("path").value(p.path).key("reason").value(p.reason).end_object();
    w.end_array().key("warnings").begin_array();
    for (const auto& x : run.own_program_warnings) w.value(x.message);
    w.end_array();
}

// The root's git directories outside it that its commands may write (a linked
// worktree's main git directory), with why: the writable rules of that list.
std::vector<const sbx::FsRule*> git_writable(const sbx::CommandFsRules& run) {
    std::vector<const sbx::FsRule*> out;
    for (const auto& rule : run.rules.rules)
        if (rule.kind == sbx::FsRule::Kind::writable && rule.list == sbx::kRootGitDirList) out.push_back(&rule);
    return out;
}

// The same in words, for `sbx policy`: one line, and one per protected path.
void print_own_programs(const std::vector<std::string>& programs, const sbx::CommandFsRules& run) {
    std::cout << "sbx's own programs:";
    for (std::size_t i = 0; i < programs.size(); ++i) std::cout << (i == 0 ? " " : ", ") << programs[i];
    if (programs.empty()) std::cout << " none found";
    if (run.rules.disabled) std::cout << " (filesystem isolation is disabled: commands can write them)";
    else if (run.own_programs.empty() && run.own_program_warnings.empty())
        std::cout << " (outside every writable place: read-only to commands already)";
    std::cout << "\n";
    for (const auto& p : run.own_programs) std::cout << "  protected: " << p.path << " (" << p.reason << ")\n";
    for (const auto& x : run.own_program_warnings) std::cout << "  warning: " << x.file << ": " << x.message << "\n";
}

}  // namespace

void print_policy_json(const PolicyReport& r) {
    const ToolCacheHome& cache = r.cache;
    sbx::json::Writer w;
    w.begin_object();
    write_root(w, r.composed.where);
    w.key("toolCacheHome").begin_object().key("path");
    if (cache.path) w.value(*cache.path);
    else w.null();
    w.key("exists").value(cache.exists).key("bytes").value(cache.bytes).key("files").value(cache.files);
    if (!cache.path) w.key("why").value(cache.why);
    w.end_object();
    w.key("ownPrograms").begin_object();
    write_own_programs(w, r.inputs.own_programs, r.rules);
    w.end_object();
    w.key("gitWritable").begin_array();
    for (const auto* g : git_writable(r.rules))
        w.begin_object().key("path").value(g->pattern).key("reason").value(g->note).end_object();
    w.end_array();
    w.key("agentFile");
    if (r.composed.agent) write_agent_file(w, *r.composed.agent);
    else w.null();
    sbx::write_policy_members(w, r.composed.policy);
    std::cout << w.end_object().str() << "\n";
}

void print_policy_text(const PolicyReport& r) {
    const ToolCacheHome& cache = r.cache;
    print_values(r.composed.policy, r.composed.where);
    if (const auto& agent = r.composed.agent)
        std::cout << "agent file: " << agent->file << ": preset " << preset_words(*agent) << "\n";
    std::cout << "tool cache home: ";
    if (!cache.path) std::cout << "none (" << cache.why << ")\n";
    else if (!cache.exists) std::cout << *cache.path << " (not made yet)\n";
    else std::cout << *cache.path << " (" << cache.bytes << " bytes in " << cache.files << " files)\n";
    print_own_programs(r.inputs.own_programs, r.rules);
    for (const auto* g : git_writable(r.rules)) std::cout << "git directory, writable: " << g->pattern << " (" << g->note << ")\n";
}

}  // namespace sbx::cli
