// sbx/plan/output_filter.hpp - what of a command's output reaches the caller
// changed: forged <sandbox_violations> tags, and clipboard writes to the
// caller's terminal.
//
// After a sandboxed command, `sbx run` appends its <sandbox_violations> block
// (report.hpp) to the command's standard error. A command could print such a
// block itself, to tell whoever reads the output (a model reading `2>&1`, a
// person at a terminal) that nothing was refused, or that something was. So
// every stream of the command's the launcher passes on goes through a
// TagNeutralizer: each `<sandbox_violations>` or `</sandbox_violations>` tag
// the command writes (in any case, in one write or split across many, with
// control characters, escape sequences or zero-width characters between its
// letters) comes out with its closing `>` written as `&gt;`. Only the block the
// launcher writes has tags that end in `>`. The last byte of a tag is the one
// that completes it, so nothing is ever held back: output is passed on as it
// comes, a prompt with no newline included.
//
// Through the command's own terminal (the launcher's relay to the caller's),
// TerminalOutputFilter also drops OSC 52, with which a program sets (or reads)
// the clipboard of the terminal it writes to: kitty, WezTerm, foot, Windows
// Terminal and tmux honour it, so a command could put a line in the user's
// clipboard for the user to paste into a shell outside. Other escape sequences
// pass as they are; it notes whether the command asked the terminal something
// (a query whose answer the terminal types back), so that the launcher can
// wait for answers still on their way when the command ends.
//
// Pure and streaming: each feed() returns what to write now.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sbx/core/ascii.hpp"
#include "sbx/core/inline.hpp"

namespace sbx {

namespace detail {

// The tag's letters after `<` or `</`, lower case.
inline constexpr std::string_view kTagRest = "sandbox_violations>";

// Follows "<", "</" and the tag's letters through a stream; `at` is how much
// of the tag is seen (0: nothing, 1: "<", 2: "</", 3 + k: k letters of kTagRest).
struct TagMatch {
    std::size_t at = 0;

    // Takes one byte the match cannot skip; true when it completes a tag.
    bool take(char c);
};

// Whether the code point `cp` draws nothing: zero-width spaces and joiners,
// marks of direction, the word joiner and invisible operators, the byte order
// mark, the soft hyphen and the combining grapheme joiner.
constexpr bool invisible(std::uint32_t cp) noexcept {
    return cp == 0xAD || cp == 0x34F || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2060 && cp <= 0x2064) || cp == 0xFEFF;
}

}  // namespace detail

class TagNeutralizer {
public:
    // The text to pass on for the next chunk: the chunk, with the closing `>`
    // of every tag completed in it written as `&gt;`.
    std::string feed(std::string_view chunk);

    // Nothing is held back; kept for the relays' symmetry with other filters.
    std::string finish() { return {}; }

    // How many tags were neutralised so far.
    std::size_t neutralised() const { return neutralised_; }

private:
    // Two matches run side by side: one over every byte (a tag inside an escape
    // sequence's text, such as a window title, is text a reader sees in the
    // raw stream) and one over what a terminal draws, skipping control
    // characters but the newline, escape sequences and invisible characters.
    detail::TagMatch raw_, drawn_;
    enum class Skip : std::uint8_t { none, esc, csi, string, string_esc, utf8 };
    Skip skip_ = Skip::none;
    std::uint32_t cp_ = 0;       // the code point being read (Skip::utf8)
    int cp_left_ = 0;            // its continuation bytes still to come
    std::size_t neutralised_ = 0;

    // One byte through both matches: true when it completes a tag in either.
    bool step(char c);

    // The drawn match: false unless `b` completes a tag as a terminal shows it.
    bool draw(unsigned char b);
};

// What the caller's terminal gets of what the command's terminal wrote.
class TerminalOutputFilter {
public:
    // `allow_clipboard`: OSC 52 passes (sbx run --allow-clipboard-write).
    explicit TerminalOutputFilter(bool allow_clipboard = false) : allow_clipboard_(allow_clipboard) {}

    // What to write now. An escape sequence that may still turn out to be OSC
    // 52 (at most "ESC ] 5 2") is held until its next byte comes.
    std::string feed(std::string_view chunk);

    // The end of the stream: what was held, as it was.
    std::string finish();

    std::size_t clipboard_refused() const { return clipboard_refused_; }   // OSC 52 sequences dropped
    std::size_t clipboard_bytes() const { return clipboard_bytes_; }       // the first one's length
    std::size_t tags_neutralised() const { return tags_.neutralised(); }
    // Whether the command asked the terminal something whose answer the
    // terminal types back (device attributes and status, cursor position,
    // window reports, modes, colours, capabilities).
    bool queried() const { return queried_; }

private:
    enum class State : std::uint8_t {
        normal,
        esc,         // held: ESC
        c2,          // held: the first byte of U+009D (OSC in UTF-8)
        osc_number,  // held: the introducer and the digits of an OSC's number
        csi,         // passing a control sequence, to see its final byte
        string,      // passing a string (DCS, OSC other than 52, ...), to see a query
        string_esc,
        string_c2,
        drop,        // inside OSC 52: nothing passes until its end
        drop_esc,
        drop_c2,
    };
    bool allow_clipboard_;
    State state_ = State::normal;
    std::string held_;
    std::string csi_;  // the control sequence's parameters and intermediates so far
    bool string_query_ = false;
    std::size_t drop_len_ = 0;
    std::size_t clipboard_refused_ = 0, clipboard_bytes_ = 0;
    bool queried_ = false;
    TagNeutralizer tags_;

    static bool query_csi(std::string_view params, unsigned char final);

    // Takes byte `b` of a sequence (or the byte that may start one), appending
    // to `out` what passes, and moves to the next state.
    void osc(unsigned char b, std::string& out);

    // The value of an OSC's digits; -1 for none.
    static long osc_number(std::string_view digits);

    void end_string();
};

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_PLAN)

namespace sbx::detail {

SBX_INLINE bool TagMatch::take(char c) {
    const char lower = ascii_lower(c);
    if (at >= 1) {
        const std::size_t k = at >= 3 ? at - 3 : 0;
        if (at == 1 && c == '/') {
            at = 2;
            return false;
        }
        if (lower == kTagRest[k]) {
            at = 3 + k + 1;
            if (k + 1 == kTagRest.size()) {
                at = 0;
                return true;
            }
            return false;
        }
    }
    at = c == '<' ? 1 : 0;
    return false;
}

}  // namespace sbx::detail

namespace sbx {

SBX_INLINE std::string TagNeutralizer::feed(std::string_view chunk) {
    std::string out;
    out.reserve(chunk.size());
    std::size_t i = 0;
    while (i < chunk.size()) {
        // Between tags, only a `<` can start one: the bytes before the next
        // pass as they are. (An escape sequence skipped here is one the
        // drawn match then does not skip: it may neutralise a tag inside a
        // sequence's text, which the raw match does anyway.)
        if (raw_.at == 0 && drawn_.at == 0 && skip_ == Skip::none) {
            const std::size_t lt = chunk.find('<', i);
            const std::size_t to = lt == std::string_view::npos ? chunk.size() : lt;
            out.append(chunk.substr(i, to - i));
            i = to;
            if (i == chunk.size()) break;
        }
        if (step(chunk[i])) {
            out += "&gt;";
            ++neutralised_;
        } else {
            out += chunk[i];
        }
        ++i;
    }
    return out;
}

SBX_INLINE bool TagNeutralizer::step(char c) {
    const bool raw = raw_.take(c);
    const bool drawn = draw(static_cast<unsigned char>(c));
    if (raw || drawn) {
        raw_.at = drawn_.at = 0;
        return true;
    }
    return false;
}

SBX_INLINE bool TagNeutralizer::draw(unsigned char b) {
    switch (skip_) {
        case Skip::esc:
            // ESC [ starts a control sequence; ESC ] P X ^ _ a string;
            // anything else ends a two-byte sequence (or its intermediates go on).
            if (b == '[') skip_ = Skip::csi;
            else if (b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_') skip_ = Skip::string;
            else if (b < 0x20 || b > 0x2F) skip_ = Skip::none;
            return false;
        case Skip::csi:
            if (b >= 0x40 && b <= 0x7E) skip_ = Skip::none;  // the final byte
            else if (b == 0x1B) skip_ = Skip::esc;
            return false;
        case Skip::string:
            // Until BEL or ST (ESC \); CAN and SUB abort it.
            if (b == 0x07 || b == 0x18 || b == 0x1A) skip_ = Skip::none;
            else if (b == 0x1B) skip_ = Skip::string_esc;
            return false;
        case Skip::string_esc:
            skip_ = b == '\\' ? Skip::none : Skip::esc;  // another ESC aborts the string and starts anew
            if (skip_ == Skip::esc) return draw(b);
            return false;
        case Skip::utf8:
            if ((b & 0xC0) == 0x80) {
                cp_ = (cp_ << 6) | (b & 0x3F);
                if (--cp_left_ > 0) return false;
                skip_ = Skip::none;
                if (!detail::invisible(cp_)) drawn_.at = 0;  // a drawn character that is no letter of the tag
                return false;
            }
            skip_ = Skip::none;  // a broken sequence: the byte stands on its own
            drawn_.at = 0;
            return draw(b);
        case Skip::none: break;
    }
    if (b == 0x1B) {
        skip_ = Skip::esc;
        return false;
    }
    if ((b < 0x20 && b != '\n') || b == 0x7F) return false;  // draws nothing
    if (b >= 0xC0 && b <= 0xF4) {
        skip_ = Skip::utf8;
        cp_left_ = b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : 1;
        cp_ = b & (b >= 0xF0 ? 0x07 : b >= 0xE0 ? 0x0F : 0x1F);
        return false;
    }
    return drawn_.take(static_cast<char>(b));
}

SBX_INLINE std::string TerminalOutputFilter::feed(std::string_view chunk) {
    std::string passed;
    passed.reserve(chunk.size());
    std::size_t i = 0;
    while (i < chunk.size()) {
        // Plain text passes as it is up to the next byte that may start a sequence.
        if (state_ == State::normal) {
            const std::size_t at = chunk.find_first_of("\x1b\xc2", i);
            const std::size_t to = at == std::string_view::npos ? chunk.size() : at;
            passed.append(chunk.substr(i, to - i));
            i = to;
            if (i == chunk.size()) break;
        }
        osc(static_cast<unsigned char>(chunk[i++]), passed);
    }
    return tags_.feed(passed);
}

SBX_INLINE std::string TerminalOutputFilter::finish() {
    std::string rest = std::move(held_);
    held_.clear();
    state_ = State::normal;
    return tags_.feed(rest);
}

SBX_INLINE bool TerminalOutputFilter::query_csi(std::string_view params, unsigned char final) {
    switch (final) {
        case 'c': return true;  // device attributes (DA1, DA2, DA3)
        case 'n': return true;  // device status, cursor position
        case 'p': return params.find('$') != std::string_view::npos;  // DECRQM
        case 't': {             // window reports: 11, 13, 14, 15, 16, 18, 19, 20, 21
            const std::string_view first = params.substr(0, params.find(';'));
            return first == "11" || first == "13" || first == "14" || first == "15" || first == "16" ||
                   first == "18" || first == "19" || first == "20" || first == "21";
        }
        case 'u': return params == "?";  // the keyboard protocol's flags
        case 'q': return params == ">" || params == ">0";  // XTVERSION
        default: return false;
    }
}

// Over 80 lines: one switch over the states, a case each, as a terminal's
// parser is; split, the transitions would be spread over as many functions.
SBX_INLINE void TerminalOutputFilter::osc(unsigned char b, std::string& out) {
    switch (state_) {
        case State::normal: break;
        case State::esc:
            if (b == ']') {
                held_ += static_cast<char>(b);
                state_ = State::osc_number;
                return;
            }
            out += held_;
            held_.clear();
            if (b == '[') {
                out += static_cast<char>(b);
                csi_.clear();
                state_ = State::csi;
                return;
            }
            if (b == 'P' || b == 'X' || b == '^' || b == '_') {
                out += static_cast<char>(b);
                string_query_ = b == 'P';  // a device control string asks (DECRQSS, XTGETTCAP)
                state_ = State::string;
                return;
            }
            if (b == 'Z') queried_ = true;  // DECID: the terminal answers as to DA1
            state_ = State::normal;
            if (b == 0x1B) break;  // another escape: held again below
            out += static_cast<char>(b);
            return;
        case State::c2:
            if (b == 0x9D) {
                held_ += static_cast<char>(b);
                state_ = State::osc_number;
                return;
            }
            out += held_;
            held_.clear();
            state_ = State::normal;
            break;
        case State::osc_number:
            if (b >= '0' && b <= '9' && held_.size() < 8) {  // the introducer's two bytes and six digits
                held_ += static_cast<char>(b);
                return;
            }
            // The number as a terminal reads it: "052" is 52 too.
            if (b == ';' && !allow_clipboard_ && osc_number(std::string_view(held_).substr(2)) == 52) {
                held_.clear();
                if (clipboard_refused_++ == 0) drop_len_ = 0;
                state_ = State::drop;
                return;
            }
            out += held_;
            held_.clear();
            string_query_ = false;
            state_ = State::string;
            return osc(b, out);
        case State::csi:
            if (b == 0x1B || b == 0x18 || b == 0x1A) {  // cancelled: the byte is taken as text
                state_ = State::normal;
                break;
            }
            out += static_cast<char>(b);
            if (b >= 0x40 && b <= 0x7E) {
                if (query_csi(csi_, b)) queried_ = true;
                state_ = State::normal;
            } else if (csi_.size() < 32) {
                csi_ += static_cast<char>(b);
            }
            return;
        case State::string:
            if (b == 0x1B || b == 0xC2) {  // held: ST, or the start of another sequence
                state_ = b == 0x1B ? State::string_esc : State::string_c2;
                held_ = static_cast<char>(b);
                return;
            }
            out += static_cast<char>(b);
            if (b == '?') string_query_ = true;  // an OSC asking for a colour, or a DCS query
            if (b == 0x07 || b == 0x18 || b == 0x1A) end_string();
            return;
        case State::string_esc:
            if (b == '\\') {
                out += held_ + static_cast<char>(b);
                held_.clear();
                end_string();
                return;
            }
            // An escape that is not ST ends the string and starts a sequence.
            end_string();
            state_ = State::esc;
            return osc(b, out);
        case State::string_c2:
            if (b == 0x9D) {
                // U+009D: the string ends and another OSC starts, as after ESC ].
                end_string();
                held_ += static_cast<char>(b);
                state_ = State::osc_number;
                return;
            }
            out += held_;
            held_.clear();
            state_ = State::string;
            if (b == 0x9C) {
                out += static_cast<char>(b);
                end_string();  // U+009C: ST
                return;
            }
            return osc(b, out);
        case State::drop:
            ++drop_len_;
            if (clipboard_refused_ == 1) clipboard_bytes_ = drop_len_;
            if (b == 0x07 || b == 0x18 || b == 0x1A) state_ = State::normal;
            else if (b == 0x1B) state_ = State::drop_esc;
            else if (b == 0xC2) state_ = State::drop_c2;
            return;
        case State::drop_esc:
            if (b == '\\') {
                state_ = State::normal;
                return;
            }
            held_ = "\x1b";  // another sequence starts: the clipboard write ended unfinished
            state_ = State::esc;
            return osc(b, out);
        case State::drop_c2:
            state_ = b == 0x9C ? State::normal : State::drop;  // U+009C, ST in UTF-8
            return;
    }
    // Normal text.
    if (b == 0x1B) {
        held_ = "\x1b";
        state_ = State::esc;
        return;
    }
    if (b == 0xC2) {
        held_ = "\xc2";
        state_ = State::c2;
        return;
    }
    out += static_cast<char>(b);
}

SBX_INLINE long TerminalOutputFilter::osc_number(std::string_view digits) {
    if (digits.empty()) return -1;
    long v = 0;
    for (char d : digits) v = v * 10 + (d - '0');  // at most 6 digits (osc_number state)
    return v;
}

SBX_INLINE void TerminalOutputFilter::end_string() {
    if (string_query_) queried_ = true;
    string_query_ = false;
    state_ = State::normal;
}

}  // namespace sbx
#endif
