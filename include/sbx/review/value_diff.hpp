// sbx/review/value_diff.hpp - what changed between two policies, value by value.
//
// diff_values() compares two effective policies (policy.hpp) and returns each
// switch that changed and each list entry added or removed, with the settings
// entry behind it on each side and whether the change opens the sandbox
// (Direction). Which way opens is data: the policy's table of fields
// (settings/policy_fields.hpp), a line each. A list entry counts by its value
// and layer: one moved to another key of the same layer is no change, and one
// added or removed while another layer lists the same value changes nothing
// either way. Pure.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/inline.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/settings/policy_fields.hpp"

namespace sbx::review {

// Whether a change makes the sandbox more open, less, or neither.
enum class Direction { widens, narrows, neither };

constexpr std::string_view direction_name(Direction d) noexcept {
    return d == Direction::widens ? "widens" : d == Direction::narrows ? "narrows" : "neither";
}

constexpr Direction opposite(Direction d) noexcept {
    return d == Direction::widens ? Direction::narrows : d == Direction::narrows ? Direction::widens : Direction::neither;
}

// One value that changed.
struct ValueChange {
    enum class What { added, removed, changed };
    What what = What::changed;
    std::string name;           // the field, as kPolicyFields names it
    std::string before, after;  // the values; empty for the side that has none (added, removed)
    std::optional<Source> before_source, after_source;  // nullopt: a default
    Direction direction = Direction::neither;
    std::string meaning;
};

constexpr std::string_view what_name(ValueChange::What w) noexcept {
    return w == ValueChange::What::added ? "added" : w == ValueChange::What::removed ? "removed" : "changed";
}

namespace detail {

// Entries of `a` whose value `b` lacks.
template <class Entry, class Text>
std::vector<const Entry*> missing_from(const std::vector<Entry>& a, const std::vector<Entry>& b, Text text) {
    std::vector<const Entry*> out;
    for (const auto& e : a) {
        const auto t = text(e);
        const bool kept = std::any_of(b.begin(), b.end(), [&](const Entry& x) { return text(x) == t; });
        const bool told = std::any_of(out.begin(), out.end(), [&](const Entry* x) { return text(*x) == t; });
        if (!kept && !told) out.push_back(&e);
    }
    return out;
}

SBX_INLINE void diff_flag(const PolicyField& f, const Policy& before, const Policy& after, std::vector<ValueChange>& out);

// An entry is its value in its layer: the repository's entry gone while the
// built-in list still holds the same path is a change that opens nothing.
SBX_INLINE void diff_list(const PolicyField& f, const Policy& before, const Policy& after, std::vector<ValueChange>& out);

SBX_INLINE void diff_ignores(const PolicyField& f, const Policy& before, const Policy& after,
                         std::vector<ValueChange>& out);

SBX_INLINE void diff_text(const PolicyField& f, const Policy& before, const Policy& after,
                         std::vector<ValueChange>& out);

// A limit raised or removed widens; lowered or set where there was none narrows.
SBX_INLINE void diff_limit(const PolicyField& f, const Policy& before, const Policy& after,
                          std::vector<ValueChange>& out);


}  // namespace detail

// Every value that differs from `before` to `after`, field by field in the order
// of kPolicyFields: a flag that changed, a list's removed and added entries, an
// ignoreViolations rule removed or added (neither way), and a text that changed
// (bwrapPath, socatPath, defaultMode: each change counts as widening, for a
// person to look at).
SBX_INLINE std::vector<ValueChange> diff_values(const Policy& before, const Policy& after);

}  // namespace sbx::review

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_REVIEW)

namespace sbx::review::detail {

SBX_INLINE void diff_flag(const PolicyField& f, const Policy& before, const Policy& after, std::vector<ValueChange>& out) {
    auto word = [](bool b) { return std::string(b ? "true" : "false"); };
    const auto& b = f.flag(before);
    const auto& a = f.flag(after);
    if (b.value == a.value) return;
    const Direction d = !f.open ? Direction::neither : a.value == *f.open ? Direction::widens : Direction::narrows;
    out.push_back({ValueChange::What::changed, std::string(f.name), word(b.value), word(a.value), b.source, a.source, d,
                   std::string(f.meaning)});
}

SBX_INLINE void diff_list(const PolicyField& f, const Policy& before, const Policy& after, std::vector<ValueChange>& out) {
    auto entry_text = [](const Sourced<std::string>& e) { return e.value + '\0' + std::string(layer_name(e.source.layer)); };
    auto still = [](const SourcedList& list, const std::string& value) -> std::optional<LayerKind> {
        for (const auto& e : list)
            if (e.value == value) return e.source.layer;
        return std::nullopt;
    };
    const Direction adding = *f.open ? Direction::widens : Direction::narrows;
    for (const auto* e : missing_from(f.list(before), f.list(after), entry_text)) {
        const auto kept = still(f.list(after), e->value);
        out.push_back({ValueChange::What::removed, std::string(f.name), e->value, "", e->source, std::nullopt,
                       kept ? Direction::neither : opposite(adding),
                       kept ? "still listed by the " + std::string(layer_name(*kept)) + " layer"
                            : std::string(f.meaning)});
    }
    for (const auto* e : missing_from(f.list(after), f.list(before), entry_text)) {
        const auto had = still(f.list(before), e->value);
        out.push_back({ValueChange::What::added, std::string(f.name), "", e->value, std::nullopt, e->source,
                       had ? Direction::neither : adding,
                       had ? "listed already by the " + std::string(layer_name(*had)) + " layer"
                           : std::string(f.meaning)});
    }
}

SBX_INLINE void diff_ignores(const PolicyField& f, const Policy& before, const Policy& after,
                         std::vector<ValueChange>& out) {
    for (const auto* r : missing_from(before.ignore_violations, after.ignore_violations, ignore_text))
        out.push_back({ValueChange::What::removed, std::string(f.name), ignore_text(*r), "", r->source, std::nullopt,
                       Direction::neither, std::string(f.meaning)});
    for (const auto* r : missing_from(after.ignore_violations, before.ignore_violations, ignore_text))
        out.push_back({ValueChange::What::added, std::string(f.name), "", ignore_text(*r), std::nullopt, r->source,
                       Direction::neither, std::string(f.meaning)});
}

SBX_INLINE void diff_text(const PolicyField& f, const Policy& before, const Policy& after,
                         std::vector<ValueChange>& out) {
    const auto& b = f.text(before);
    const auto& a = f.text(after);
    if ((b ? b->value : "") == (a ? a->value : "")) return;
    out.push_back({!b ? ValueChange::What::added : !a ? ValueChange::What::removed : ValueChange::What::changed,
                   std::string(f.name), b ? b->value : "", a ? a->value : "",
                   b ? std::optional(b->source) : std::nullopt, a ? std::optional(a->source) : std::nullopt,
                   Direction::widens, std::string(f.meaning)});
}

SBX_INLINE void diff_limit(const PolicyField& f, const Policy& before, const Policy& after,
                          std::vector<ValueChange>& out) {
    const auto& b = f.limit(before);
    const auto& a = f.limit(after);
    if (b.value == a.value) return;
    auto text = [&](const std::optional<std::uint64_t>& v) {
        return v ? std::to_string(*v) + std::string(f.unit) : std::string("none");
    };
    const bool wider = !a.value || (b.value && *a.value > *b.value);
    out.push_back({ValueChange::What::changed, std::string(f.name), text(b.value), text(a.value), b.source, a.source,
                   wider ? Direction::widens : Direction::narrows, std::string(f.meaning)});
}

}  // namespace sbx::review::detail

namespace sbx::review {

SBX_INLINE std::vector<ValueChange> diff_values(const Policy& before, const Policy& after) {
    std::vector<ValueChange> out;
    for (const auto& f : kPolicyFields) {
        switch (f.kind) {
            case PolicyField::Kind::flag: detail::diff_flag(f, before, after, out); break;
            case PolicyField::Kind::list: detail::diff_list(f, before, after, out); break;
            case PolicyField::Kind::ignores: detail::diff_ignores(f, before, after, out); break;
            case PolicyField::Kind::text: detail::diff_text(f, before, after, out); break;
            case PolicyField::Kind::limit: detail::diff_limit(f, before, after, out); break;
        }
    }
    return out;
}

}  // namespace sbx::review
#endif
