// sbx/report.hpp - the block of refusals appended to a command's standard
// error, and the forged blocks a command prints itself.
//
// After a sandboxed command, `sbx run` appends
//   <sandbox_violations>
//   deny network-outbound example.com:443 (not on the allow list, ...)
//   </sandbox_violations>
// to its standard error. A command could print such a block itself to mislead
// whoever reads the output (a model, say), so the launcher passes the command's
// standard error through TagNeutralizer, which writes the opening `<` of any
// `<sandbox_violations>` or `</sandbox_violations>` (in any case) as `&lt;`:
// only the real block then reads as one. Pure, streaming: the tag may arrive
// split across reads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sbx {

// One line of the block, without the newline: "deny network-outbound HOST:PORT (REASON)".
inline std::string network_violation_line(std::string_view host, unsigned port, std::string_view reason) {
    const bool v6 = host.find(':') != std::string_view::npos;
    std::string out = "deny network-outbound ";
    if (v6) out += '[';
    out += host;
    if (v6) out += ']';
    out += ':' + std::to_string(port) + " (" + std::string(reason) + ")";
    return out;
}

class TagNeutralizer {
public:
    // The text to pass on for the next chunk. Up to the length of the longest tag
    // minus one byte may be held back until the next call or finish().
    std::string feed(std::string_view chunk) {
        held_.append(chunk);
        std::string out;
        std::size_t i = 0;
        while (i < held_.size()) {
            if (held_[i] != '<') {
                out += held_[i++];
                continue;
            }
            const std::string_view rest = std::string_view(held_).substr(i);
            bool partial = false;
            if (starts_with_tag(rest, partial)) {
                out += "&lt;";
                ++i;
                continue;
            }
            if (partial) break;  // wait for more bytes
            out += held_[i++];
        }
        held_.erase(0, i);
        return out;
    }

    // What is still held back, at the end of the stream.
    std::string finish() {
        std::string out = std::move(held_);
        held_.clear();
        return out;
    }

private:
    std::string held_;

    static bool equal_fold(std::string_view a, std::string_view b) {
        for (std::size_t i = 0; i < a.size(); ++i) {
            char c = a[i];
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
            if (c != b[i]) return false;
        }
        return true;
    }

    // Whether `s` starts with a tag; `partial`: it could, once more bytes come.
    static bool starts_with_tag(std::string_view s, bool& partial) {
        partial = false;
        for (std::string_view tag : {std::string_view("<sandbox_violations>"), std::string_view("</sandbox_violations>")}) {
            if (s.size() >= tag.size()) {
                if (equal_fold(s.substr(0, tag.size()), tag)) return true;
            } else if (equal_fold(s, tag.substr(0, s.size()))) {
                partial = true;
            }
        }
        return false;
    }
};

// The block for these lines; empty when there are none. A line holding a tag or
// a newline of its own (a reason is the launcher's, but its host came from the
// command) is neutralised too.
inline std::string violations_block(const std::vector<std::string>& lines) {
    if (lines.empty()) return {};
    std::string out = "<sandbox_violations>\n";
    for (const auto& l : lines) {
        TagNeutralizer n;
        std::string safe = n.feed(l) + n.finish();
        for (auto& c : safe)
            if (c == '\n' || c == '\r') c = ' ';
        out += safe + "\n";
    }
    return out + "</sandbox_violations>\n";
}

}  // namespace sbx
