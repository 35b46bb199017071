// sbx/route/hidden_code.hpp - what in a command line can change which program
// runs, or run code the line does not show.
//
// A sandboxed command may skip its approval (route.hpp), but not a line whose
// text is not what runs: that goes through the normal flow, where an allow rule
// can still approve it. From a line read by read_shell_line (shell_line.hpp),
// this finds, in each command, behind the wrappers removals.hpp steps over:
//   - a variable in front (`FOO=bar npm test`), or set alone for the commands
//     after it (`PATH=/tmp/x; ls`);
//   - `env` that changes the environment (`env FOO=bar ...`, -i, -u, -S);
//   - `eval`; `make` with a variable (`make CC=clang`); `source` and `.`;
//     `alias`; `export`; `declare -x` and `typeset -x`; `set -a` and
//     `set -o allexport`; `trap`; `enable`; `hash -p`;
//   - a shell that reads its code from standard input (`... | sh`, `bash -s`,
//     `sh < script`, `sh <<EOF`), or that runs with no code and no script, or
//     whose -c code the shell decides (`sh -c "$CODE"`);
//   - and, beyond the reference's list, a program the shell decides (`$CMD`,
//     `./b*n`, `{a,b}`): its name is not known before the line runs.
// A line the reader could not read whole is not checked here: the caller treats
// it as unreadable (route.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sbx/core/inline.hpp"
#include "sbx/route/removals.hpp"
#include "sbx/route/shell_line.hpp"

namespace sbx::route {

struct HiddenCode {
    std::string why;     // in a few words: "eval", "a variable in front (FOO=bar)"
    std::size_t at = 0;  // the byte where the command (or its word) starts
};

// What in `r`'s commands can change what runs, in the line's order.
SBX_INLINE std::vector<HiddenCode> hidden_code(const Reading& r);

}  // namespace sbx::route

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_ROUTE)

namespace sbx::route {

SBX_INLINE std::vector<HiddenCode> hidden_code(const Reading& r) {
    std::vector<HiddenCode> out;
    auto add = [&](std::string why, std::size_t at) { out.push_back(HiddenCode{std::move(why), at}); };
    for (std::size_t i = 0; i < r.commands.size(); ++i) {
        const Command& c = r.commands[i];
        if (!c.assignments.empty()) {
            const Word& a = c.assignments.front();
            const std::string name = a.text.substr(0, a.text.find('='));
            add(c.words.empty() ? "a variable set for the commands after it (" + name + ")"
                                : "a variable in front (" + name + ")",
                a.begin);
        }
        if (c.words.empty()) continue;
        const detail::Unwrapped u = detail::unwrap(c.words, 0);
        // env among the wrappers in front of the program (not an argument of it).
        for (std::size_t k = 0; k < u.program; ++k) {
            if (!c.words[k].literal() || detail::program_name(c.words[k]) != "env") continue;
            const std::string next = k + 1 < c.words.size() ? c.words[k + 1].text : std::string();
            const bool changes = (!next.empty() && next.front() == '-') || detail::is_name_assignment(next);
            if (changes) add("env changes the command's environment", c.words[k].begin);
            break;
        }
        if (u.program >= c.words.size()) continue;
        const Word& prog = c.words[u.program];
        if ((prog.expansions & (kParameter | kGlob | kBrace)) != 0) {
            add("a program the shell decides (" + prog.text + ")", prog.begin);
            continue;
        }
        const std::string name = detail::program_name(prog);
        auto has_word = [&](auto&& pred) {
            for (std::size_t k = u.program + 1; k < c.words.size(); ++k)
                if (pred(c.words[k].text)) return true;
            return false;
        };
        // A cluster of short options that holds `letter` (-x, -ax), before the operands.
        auto has_short = [&](char letter) {
            return has_word([&](const std::string& t) {
                return t.size() > 1 && t[0] == '-' && t[1] != '-' && t.find(letter) != std::string::npos;
            });
        };
        if (name == "eval") add("eval", prog.begin);
        else if (name == "source" || name == ".") add(name + " runs a file's code in this shell", prog.begin);
        else if (name == "alias" || name == "export" || name == "trap" || name == "enable") add(name, prog.begin);
        else if ((name == "declare" || name == "typeset") && has_short('x')) add(name + " -x", prog.begin);
        else if (name == "set" && (has_short('a') || has_word([](const std::string& t) { return t == "allexport"; })))
            add("set -a", prog.begin);
        else if (name == "hash" && has_short('p')) add("hash -p", prog.begin);
        else if (name == "make" && has_word([](const std::string& t) { return detail::is_name_assignment(t); }))
            add("make with a variable", prog.begin);
        else if (detail::is_one_of(name, detail::kShells)) {
            // Code from standard input: -s, or neither -c nor a script.
            bool code = false, script = false, from_stdin = false;
            bool options = true;
            for (std::size_t k = u.program + 1; k < c.words.size(); ++k) {
                const std::string& t = c.words[k].text;
                if (options && t == "--") {
                    options = false;
                } else if (options && t.size() > 1 && (t[0] == '-' || t[0] == '+')) {
                    if (t[1] != '-' && t.find('c') != std::string::npos) code = true;
                    if (t[1] != '-' && t.find('s') != std::string::npos) from_stdin = true;
                    if (t == "-o" || t == "+o" || t == "-O" || t == "+O" || t == "--rcfile" || t == "--init-file") ++k;
                } else {
                    script = true;
                    if (code && !c.words[k].literal())
                        add("a shell that runs code the shell decides (" + c.words[k].text + ")", c.words[k].begin);
                    break;
                }
            }
            const bool piped = i > 0 && (r.commands[i - 1].joint == Joint::pipe || r.commands[i - 1].joint == Joint::pipe_all);
            bool redirected = false;
            for (const auto& rd : c.redirects)
                if ((rd.fd == -1 || rd.fd == 0) && (rd.op == "<" || rd.op == "<<" || rd.op == "<<-" || rd.op == "<<<"))
                    redirected = true;
            if (from_stdin || (!code && !script))
                add(std::string("a shell that reads its code from ") +
                        (piped ? "a pipe" : redirected ? "a redirection" : "standard input"),
                    prog.begin);
        }
    }
    return out;
}

}  // namespace sbx::route
#endif
