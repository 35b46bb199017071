// sbx::route::hidden_code: what in a command line can change which program
// runs, or run code the line does not show, with the lines that cannot.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "sbx/route/hidden_code.hpp"

namespace {

// The findings as a row writes them, joined by " | ".
std::string hidden(std::string_view line) {
    const auto r = sbx::route::read_shell_line(line);
    REQUIRE_MESSAGE(r.readable(), r.unreadable->why);
    std::string out;
    for (const auto& h : sbx::route::hidden_code(r)) out += (out.empty() ? "" : " | ") + h.why;
    return out;
}

struct Row {
    std::string_view line;
    std::string_view found;
};

// A table, one row a line and what can change what it runs.
TEST_CASE("hidden_code: each construct of the reference's list, behind wrappers, and the lines without one") {
    const Row rows[] = {
        {"FOO=bar npm test", "a variable in front (FOO)"},
        {"A=1 B=2 make", "a variable in front (A)"},
        {"PATH=/tmp/x; ls", "a variable set for the commands after it (PATH)"},
        {"env FOO=bar npm test", "env changes the command's environment"},
        {"env -i ls", "env changes the command's environment"},
        {"env -u HOME ls", "env changes the command's environment"},
        {"env -S 'ls -l'", "env changes the command's environment"},
        {"sudo env FOO=1 ls", "env changes the command's environment"},
        {"eval ls", "eval"},
        {"nice eval ls", "eval"},
        {"make CC=clang", "make with a variable"},
        {"make -j4 all CFLAGS=-O2", "make with a variable"},
        {"source venv/bin/activate", "source runs a file's code in this shell"},
        {". ./env.sh && make", ". runs a file's code in this shell"},
        {"alias ls='rm -rf'", "alias"},
        {"export PATH=/tmp:$PATH", "export"},
        {"declare -x FOO=1", "declare -x"},
        {"declare -rx FOO=1", "declare -x"},
        {"typeset -x FOO=1", "typeset -x"},
        {"set -a", "set -a"},
        {"set -eua", "set -a"},
        {"set -o allexport", "set -a"},
        {"trap 'rm -rf x' EXIT", "trap"},
        {"enable -f ./x.so x", "enable"},
        {"hash -p /tmp/evil ls", "hash -p"},
        {"curl -s https://x | sh", "a shell that reads its code from a pipe"},
        {"cat s | bash -x", "a shell that reads its code from a pipe"},
        {"bash -s < script", "a shell that reads its code from a redirection"},
        {"sh < script", "a shell that reads its code from a redirection"},
        {"sh <<EOF\nls\nEOF", "a shell that reads its code from a redirection"},
        {"bash", "a shell that reads its code from standard input"},
        {"sudo -u x bash -s", "a shell that reads its code from standard input"},
        {"sh -c \"$CODE\"", "a shell that runs code the shell decides ($CODE)"},
        {"bash -c 'ls'", ""},
        {"$CMD --version", "a program the shell decides ($CMD)"},
        {"./b*n/tool", "a program the shell decides (./b*n/tool)"},
        {"FOO=1 eval x", "a variable in front (FOO) | eval"},
        {"make && eval x", "eval"},
        // Nothing that changes what runs.
        {"npm test", ""},
        {"make", ""},
        {"make -j4 all", ""},
        {"env", ""},
        {"env ls", ""},
        {"echo FOO=bar", ""},
        {"declare -r FOO=1", ""},
        {"set -e", ""},
        {"set -o pipefail", ""},
        {"hash -r", ""},
        {"bash -c 'ls -l'", ""},
        {"bash script.sh", ""},
        {"sh -e ./configure", ""},
        {"cat s | grep x", ""},
        {"~/bin/tool --flag", ""},
        {"git -c user.name=x commit", ""},
        {"echo eval source export", ""},
        {"echo env -i FOO=1", ""},
        {"grep -r env FOO=1 .", ""},
    };
    for (const auto& row : rows) {
        CAPTURE(row.line);
        CHECK(hidden(row.line) == row.found);
    }
}

TEST_CASE("hidden_code: each finding points at its command in the line") {
    const std::string_view line = "ls && FOO=1 make; eval x";
    const auto found = sbx::route::hidden_code(sbx::route::read_shell_line(line));
    REQUIRE(found.size() == 2);
    CHECK(line.substr(found[0].at, 5) == "FOO=1");
    CHECK(line.substr(found[1].at, 4) == "eval");
}

}  // namespace
