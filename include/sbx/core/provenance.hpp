// sbx/core/provenance.hpp - where a value came from: its layer, file and key.
//
// Every value a policy holds keeps its Source, so that any decision can name the
// settings entry behind it. Warnings name their file and key the same way.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/inline.hpp"
#include "sbx/core/json_write.hpp"

namespace sbx {

// The settings layers, lowest precedence first. `builtin` is sbx's own safe
// default, used when no file exists at all (see settings/defaults.hpp). `flag` is the file
// given with --settings on the command line: above the repository's files, below
// managed.
enum class LayerKind { builtin, user, project, local, flag, managed };

constexpr std::string_view layer_name(LayerKind k) noexcept {
    switch (k) {
        case LayerKind::builtin: return "builtin";
        case LayerKind::user: return "user";
        case LayerKind::project: return "project";
        case LayerKind::local: return "local";
        case LayerKind::flag: return "flag";
        case LayerKind::managed: return "managed";
    }
    return "?";
}

// The repository's own files: whoever can commit to the project wrote them.
constexpr bool is_repository(LayerKind k) noexcept { return k == LayerKind::project || k == LayerKind::local; }

// A file's name, shared by every value read from that file (a policy holds
// hundreds of sources; one copy of each name serves them all).
class FileName {
public:
    FileName() = default;
    explicit FileName(std::string name) : name_(std::make_shared<const std::string>(std::move(name))) {}

    const std::string& str() const {
        static const std::string none;
        return name_ ? *name_ : none;
    }
    operator const std::string&() const { return str(); }  // NOLINT: implicit
    bool empty() const { return str().empty(); }
    friend bool operator==(const FileName& a, const FileName& b) { return a.str() == b.str(); }
    friend bool operator==(const FileName& a, std::string_view b) { return a.str() == b; }

private:
    std::shared_ptr<const std::string> name_;
};

inline std::string operator+(std::string a, const FileName& b) { return std::move(a) + b.str(); }
inline std::string operator+(const char* a, const FileName& b) { return a + b.str(); }

// Where a value came from: which layer, which file, which key inside it.
struct Source {
    LayerKind layer = LayerKind::user;
    FileName file;
    std::string key;  // e.g. sandbox.filesystem.denyRead[2] or permissions.deny[0]
};

// The file a value given on the command line is said to come from.
inline constexpr std::string_view kCommandLineFile = "(command line)";

template <class T>
struct Sourced {
    T value{};
    Source source;
};

// Which sandbox a warning is about. Most are about the policy, whoever carries
// it out; a few name a limit of one launcher's sandbox (a link bubblewrap cannot
// bind without following it), which another launcher does not show.
// Tagged where the warning is made, so that no launcher matches its text.
enum class WarningScope {
    any,         // every launcher shows it
    linux_only,  // about sbx-linux's sandbox: sbx-mac does not show it
};

// Something a caller should see but that does not stop the policy: a key left
// out, an entry dropped by a rule. Always names the file and key it is about.
struct Warning {
    std::string file;
    std::string key;
    std::string message;
    WarningScope scope = WarningScope::any;
    // About what a check left undone that stays so from run to run: `sbx run`
    // says it once for a root (sbx/plan/said_once.hpp).
    bool once = false;
};

SBX_INLINE std::string to_string(const Warning& w);

using SourcedList = std::vector<Sourced<std::string>>;
using SourcedBool = std::optional<Sourced<bool>>;

// A Source as JSON, the one spelling plans, `sbx policy --json` and `sbx explain
// --json` share: {"layer", "file", "key"}, or null for a value no file set.
SBX_INLINE void write_source(json::Writer& w, const std::optional<Source>& s);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_CORE)

namespace sbx {

SBX_INLINE std::string to_string(const Warning& w) {
    std::string out;
    if (!w.file.empty()) out += w.file + ": ";
    if (!w.key.empty()) out += w.key + ": ";
    return out + w.message;
}

SBX_INLINE void write_source(json::Writer& w, const std::optional<Source>& s) {
    if (!s) {
        w.null();
        return;
    }
    w.begin_object().key("layer").value(layer_name(s->layer)).key("file").value(s->file.str()).key("key").value(s->key);
    w.end_object();
}

}  // namespace sbx
#endif
