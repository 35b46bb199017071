// sbx::route::read_shell_line: command lines taken apart as bash -c takes them,
// and every construct it does not take apart called unreadable, with its byte.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "sbx/route/shell_line.hpp"

namespace {

using sbx::route::Command;
using sbx::route::Reading;
using sbx::route::Word;

// A word as a test row writes it: [text], then a mark per expansion: $ a
// parameter, ~ a tilde, * a wildcard, { a brace expansion.
std::string render(const Word& w) {
    std::string out = "[" + w.text + "]";
    if ((w.expansions & sbx::route::kParameter) != 0) out += '$';
    if ((w.expansions & sbx::route::kTilde) != 0) out += '~';
    if ((w.expansions & sbx::route::kGlob) != 0) out += '*';
    if ((w.expansions & sbx::route::kBrace) != 0) out += '{';
    return out;
}

// The commands as a row writes them: `(d2)` for a depth, `!`, <NAME=value> for
// an assignment, the words, (OP[target]) for a redirection (with :body for a
// here-document), then the joint (NL for a newline), each part after a space.
std::string render(const Reading& r) {
    std::string out;
    auto part = [&](const std::string& p) {
        if (!out.empty()) out += ' ';
        out += p;
    };
    for (const Command& c : r.commands) {
        if (c.depth > 0) part("(d" + std::to_string(c.depth) + (c.subshell ? "s)" : ")"));
        if (c.negated) part("!");
        for (const auto& a : c.assignments) part("<" + a.text + ">");
        for (const auto& w : c.words) part(render(w));
        for (const auto& rd : c.redirects) {
            std::string t = "(" + (rd.fd >= 0 ? std::to_string(rd.fd) : std::string()) + rd.op + render(rd.target);
            if (rd.op == "<<" || rd.op == "<<-") t += ":" + rd.body;
            part(t + ")");
        }
        const std::string_view j = sbx::route::joint_text(c.joint);
        if (j == "\n") part("NL");
        else if (!j.empty()) part(std::string(j));
    }
    return out;
}

struct ReadRow {
    std::string_view line;
    std::string_view commands;
};

// Over 80 lines: a table, one row a line and what it reads as.
TEST_CASE("read_shell_line: words, quoting, operators and groups as bash takes them apart") {
    const ReadRow rows[] = {
        // Words and blanks.
        {"", ""},
        {"   \t ", ""},
        {"ls", "[ls]"},
        {"ls -la /tmp", "[ls] [-la] [/tmp]"},
        {"  git   status\t-s  ", "[git] [status] [-s]"},
        // Quoting: single, double, backslash, and the three together.
        {"echo 'a b'", "[echo] [a b]"},
        {"echo \"a b\"", "[echo] [a b]"},
        {"echo a\\ b", "[echo] [a b]"},
        {"echo 'it'\\''s'", "[echo] [it's]"},
        {"echo \"say \\\"hi\\\"\"", "[echo] [say \"hi\"]"},
        {"echo \"a\\b\"", "[echo] [a\\b]"},
        {"echo \"\\$HOME\"", "[echo] [$HOME]"},
        {"echo '$HOME'", "[echo] [$HOME]"},
        {"echo ''", "[echo] []"},
        {"echo \"\"x", "[echo] [x]"},
        {"echo a\"b\"'c'd", "[echo] [abcd]"},
        {"echo '\\'", "[echo] [\\]"},
        {"echo \\'", "[echo] [']"},
        {"echo 'a\nb'", "[echo] [a\nb]"},
        // Line continuations vanish; a newline outside quotes separates.
        {"echo a\\\nb", "[echo] [ab]"},
        {"echo a \\\n b", "[echo] [a] [b]"},
        {"echo \"a\\\nb\"", "[echo] [ab]"},
        {"echo 'a\\\nb'", "[echo] [a\\\nb]"},
        {"ls\npwd", "[ls] NL [pwd]"},
        {"ls\n\n\npwd\n", "[ls] NL [pwd] NL"},
        // Comments, only where a word would start.
        {"ls # rm -rf /", "[ls]"},
        {"# only a comment", ""},
        {"echo a#b", "[echo] [a#b]"},
        {"echo a;#b", "[echo] [a] ;"},
        {"echo '#x'", "[echo] [#x]"},
        {"ls # one\npwd", "[ls] NL [pwd]"},
        // Operators.
        {"make && make test", "[make] && [make] [test]"},
        {"make || echo failed", "[make] || [echo] [failed]"},
        {"a; b; c", "[a] ; [b] ; [c]"},
        {"a;b", "[a] ; [b]"},
        {"a&&b||c", "[a] && [b] || [c]"},
        {"cat f | grep x | wc -l", "[cat] [f] | [grep] [x] | [wc] [-l]"},
        {"make |& tee log", "[make] |& [tee] [log]"},
        {"sleep 1 & echo now", "[sleep] [1] & [echo] [now]"},
        {"sleep 1 &", "[sleep] [1] &"},
        {"a;", "[a] ;"},
        {"a &&\nb", "[a] && [b]"},
        {"a |\n\n b", "[a] | [b]"},
        {"! grep -q x f", "! [grep] [-q] [x] [f]"},
        {"FOO=1 ! x", "<FOO=1> [!] [x]"},
        {"> f ! x", "[!] [x] (>[f])"},
        // Groups.
        {"(cd sub && make)", "(d1s) [cd] [sub] && (d1s) [make]"},
        {"{ a; b; }", "(d1) [a] ; (d1) [b]"},
        {"( (a) )", "(d2s) [a]"},
        {"(a) && b", "(d1s) [a] && [b]"},
        {"(a; b) | c", "(d1s) [a] ; (d1s) [b] | [c]"},
        {"{ a\n}", "(d1) [a]"},
        {"(a) > out", "(d1s) [a] (>[out])"},
        {"x && (y || z)", "[x] && (d1s) [y] || (d1s) [z]"},
        {"echo {", "[echo] [{]"},
        {"echo }", "[echo] [}]"},
        // Assignments: only before the first word, the name unquoted.
        {"FOO=bar npm test", "<FOO=bar> [npm] [test]"},
        {"A=1 B=2 env", "<A=1> <B=2> [env]"},
        {"A+=x cmd", "<A+=x> [cmd]"},
        {"FOO=bar", "<FOO=bar>"},
        {"FOO='a b' cmd", "<FOO=a b> [cmd]"},
        {"cmd FOO=bar", "[cmd] [FOO=bar]"},
        {"make CC=clang", "[make] [CC=clang]"},
        {"\"FOO\"=bar cmd", "[FOO=bar] [cmd]"},
        {"F\\OO=bar", "[FOO=bar]"},
        {"1A=x", "[1A=x]"},
        {"env FOO=bar cmd", "[env] [FOO=bar] [cmd]"},
        // Redirections.
        {"make > log 2>&1", "[make] (>[log]) (2>&[1])"},
        {"cmd >>out 2>err <in", "[cmd] (>>[out]) (2>[err]) (<[in])"},
        {"cmd &> all", "[cmd] (&>[all])"},
        {"cmd &>> all", "[cmd] (&>>[all])"},
        {"cmd >| f", "[cmd] (>|[f])"},
        {"cmd <> f", "[cmd] (<>[f])"},
        {"cmd 2>&-", "[cmd] (2>&[-])"},
        {"> f echo hi", "[echo] [hi] (>[f])"},
        {"cmd <<< 'some text'", "[cmd] (<<<[some text])"},
        {"echo 2 > f", "[echo] [2] (>[f])"},
        {"echo a2>f", "[echo] [a2] (>[f])"},
        {"cmd \"2\">f", "[cmd] [2] (>[f])"},
        {"cat <<EOF\nhello $USER\nEOF", "[cat] (<<[EOF]:hello $USER\n) NL"},
        {"cat <<'EOF'\n$(not run)\nEOF\n", "[cat] (<<[EOF]:$(not run)\n) NL"},
        {"cat <<\"E\"\n`x`\nE", "[cat] (<<[E]:`x`\n) NL"},
        {"cat <<-EOF\n\tindented\n\tEOF\necho after", "[cat] (<<-[EOF]:indented\n) NL [echo] [after]"},
        {"cat <<A <<B\n1\nA\n2\nB", "[cat] (<<[A]:1\n) (<<[B]:2\n) NL"},
        {"cat <<EOF | sh\nrm -rf x\nEOF", "[cat] (<<[EOF]:rm -rf x\n) | [sh] NL"},
        {"cat <<EOF\nEOF", "[cat] (<<[EOF]:) NL"},
        // Expansions, marked, kept as written.
        {"echo $HOME", "[echo] [$HOME]$"},
        {"echo \"$HOME/x\"", "[echo] [$HOME/x]$"},
        {"echo ${HOME}", "[echo] [${HOME}]$"},
        {"echo ${#PATH}", "[echo] [${#PATH}]$"},
        {"echo $1 $@ $# $? $$ $!", "[echo] [$1]$ [$@]$ [$#]$ [$?]$ [$$]$ [$!]$"},
        {"echo $", "[echo] [$]"},
        {"echo a$", "[echo] [a$]"},
        {"echo \"$\"", "[echo] [$]"},
        {"echo $-", "[echo] [$-]$"},
        {"rm -rf $DIR", "[rm] [-rf] [$DIR]$"},
        {"$CMD arg", "[$CMD]$ [arg]"},
        {"cd ~", "[cd] [~]~"},
        {"ls ~/src", "[ls] [~/src]~"},
        {"ls ~root", "[ls] [~root]~"},
        {"ls ~+", "[ls] [~+]~"},
        {"ls '~'", "[ls] [~]"},
        {"ls \\~", "[ls] [~]"},
        {"ls a~", "[ls] [a~]"},
        {"PATH=~/bin:~/x cmd", "<PATH=~/bin:~/x> [cmd]"},
        {"echo x=~/a", "[echo] [x=~/a]~"},
        {"rm *.o", "[rm] [*.o]*"},
        {"ls ?.txt [ab].c", "[ls] [?.txt]* [[ab].c]*"},
        {"ls '*.o'", "[ls] [*.o]"},
        {"ls \\*", "[ls] [*]"},
        {"rm {a,b}", "[rm] [{a,b}]{"},
        {"echo {1..3}", "[echo] [{1..3}]{"},
        {"echo x{a,b}y", "[echo] [x{a,b}y]{"},
        {"echo '{a,b}'", "[echo] [{a,b}]"},
        {"echo {a\\,b}", "[echo] [{a,b}]"},
        {"find . -exec rm {} ;", "[find] [.] [-exec] [rm] [{}] ;"},
        {"find . -exec rm {} \\;", "[find] [.] [-exec] [rm] [{}] [;]"},
        // What bash does not treat specially here.
        {"echo !x", "[echo] [!x]"},
        {"echo a\rb", "[echo] [a\rb]"},
        {"echo hi\xef\xbc\x9brm -rf /", "[echo] [hi\xef\xbc\x9brm] [-rf] [/]"},  // a fullwidth ; is a letter
        {"echo a\xc2\xa0" "b", "[echo] [a\xc2\xa0" "b]"},                            // so is a no-break space
        {"rm\xe2\x80\x8b -rf x", "[rm\xe2\x80\x8b] [-rf] [x]"},                   // and a zero-width space
        {"echo a\xef\xbd\x9c b", "[echo] [a\xef\xbd\x9c] [b]"},                   // a fullwidth |
        {"echo a=b", "[echo] [a=b]"},
        {"sudo -u x rm y", "[sudo] [-u] [x] [rm] [y]"},
        {"git commit -m \"fix: a; b && c\"", "[git] [commit] [-m] [fix: a; b && c]"},
        {"git log --format='%h %s' -n 3", "[git] [log] [--format=%h %s] [-n] [3]"},
        {"python3 -c 'print(\"(\")'", "[python3] [-c] [print(\"(\")]"},
    };
    for (const auto& row : rows) {
        CAPTURE(row.line);
        const Reading r = sbx::route::read_shell_line(row.line);
        CHECK_MESSAGE(r.readable(), (r.unreadable ? r.unreadable->why + " at " + std::to_string(r.unreadable->at) : ""));
        CHECK(render(r) == row.commands);
    }
}

struct UnreadableRow {
    std::string_view line;
    std::string_view why;  // a part of the reason
    std::size_t at;
};

// Over 80 lines: a table, one row a line the reader refuses to guess at.
TEST_CASE("read_shell_line: what it does not take apart is unreadable, at its byte") {
    const UnreadableRow rows[] = {
        // Code the line does not show.
        {"echo $(rm -rf /)", "command substitution $(...)", 5},
        {"echo \"$(id)\"", "command substitution $(...)", 6},
        {"echo `id`", "command substitution `...`", 5},
        {"echo \"`id`\"", "command substitution `...`", 6},
        {"diff <(ls a) <(ls b)", "process substitution", 5},
        {"tee >(wc)", "process substitution", 4},
        {"echo $((1+2))", "arithmetic expansion", 5},
        {"echo $[1+2]", "arithmetic expansion", 5},
        {"((i++))", "arithmetic command", 0},
        {"cat <<EOF\n$(id)\nEOF", "body runs a substitution", 10},
        {"cat <<EOF\n`id`\nEOF", "body runs a substitution", 10},
        {"cat <<EOF\n${X:-$(id)}\nEOF", "parameter expansion with an operator", 10},
        // Compound commands.
        {"if true; then rm x; fi", "compound command (if)", 0},
        {"for f in *; do rm $f; done", "compound command (for)", 0},
        {"while read l; do echo $l; done", "compound command (while)", 0},
        {"until x; do y; done", "compound command (until)", 0},
        {"case $x in a) ;; esac", "compound command (case)", 0},
        {"[[ -f x ]] && rm x", "compound command ([[)", 0},
        {"time make", "compound command (time)", 0},
        {"function f { rm x; }", "compound command (function)", 0},
        {"coproc x", "compound command (coproc)", 0},
        {"select x in a; do :; done", "compound command (select)", 0},
        {"f() { rm -rf /; }; f", "a ( inside a command", 1},
        {"a && if x; then y; fi", "compound command (if)", 5},
        // Quoting and expansions it does not decode.
        {"echo $'a\\nb'", "ANSI-C quoting", 5},
        {"echo $\"hello\"", "locale quoting", 5},
        {"echo ${X:-default}", "parameter expansion with an operator", 5},
        {"echo ${X#pre}", "parameter expansion with an operator", 5},
        {"echo ${X/a/b}", "parameter expansion with an operator", 5},
        {"echo ${!X}", "parameter expansion", 5},
        {"echo ${}", "parameter expansion", 5},
        {"echo ${X", "parameter expansion", 5},
        {"A[1]=x cmd", "array assignment", 0},
        {"cmd {fd}>out", "named descriptor", 4},
        {"cmd 12345>out", "descriptor number too large", 4},
        {"cat <<$X\nx\n$X", "delimiter that expands", 6},
        // What bash refuses.
        {"echo 'abc", "' without its end", 5},
        {"echo \"abc", "\" without its end", 5},
        {"echo abc\\", "backslash at the end", 8},
        {"&& ls", "no command before '&&'", 0},
        {"ls &&", "no command after '&&'", 3},
        {"ls ||", "no command after '||'", 3},
        {"ls |", "no command after '|'", 3},
        {"ls | | wc", "no command before '|'", 5},
        {"; ls", "no command before ';'", 0},
        {"ls ;;", "case terminator", 3},
        {"ls && ; pwd", "no command before ';'", 6},
        {"& ls", "no command before '&'", 0},
        {"(ls", "a ( without its end", 3},
        {"ls)", "a ) that closes no (", 2},
        {"()", "a ) with no command before it", 1},
        {"( ls && )", "a ) with no command before it", 8},
        {"{ ls }", "a { without its end", 6},
        {"{ ls; ", "a { without its end", 6},
        {"}", "a } that closes no {", 0},
        {"(a) b", "a word right after a group", 4},
        {"(a)(b)", "a ( right after a group", 3},
        {"!", "a ! with no command after it", 0},
        {"! ! ls", "a second !", 2},
        {"cmd >", "redirection > with no word after it", 4},
        {"cmd > ;", "redirection > with no word after it", 4},
        {"cmd >#x", "redirection > with no word after it", 4},
        {"cat <<EOF\nno end", "without its delimiter line", 10},
        {"cat <<EOF", "here-document without its body", 9},
        {std::string_view("a\0b", 3), "NUL byte", 1},
    };
    for (const auto& row : rows) {
        CAPTURE(row.line);
        const Reading r = sbx::route::read_shell_line(row.line);
        REQUIRE_FALSE(r.readable());
        CHECK_MESSAGE(r.unreadable->why.find(row.why) != std::string::npos, r.unreadable->why);
        CHECK(r.unreadable->at == row.at);
    }
}

TEST_CASE("read_shell_line: the limits fail closed") {
    SUBCASE("a line over the limit") {
        const std::string long_line(sbx::route::kMaxLineBytes + 1, 'a');
        const Reading r = sbx::route::read_shell_line(long_line);
        REQUIRE_FALSE(r.readable());
        CHECK(r.unreadable->why.find("longer than") != std::string::npos);
    }
    SUBCASE("a line at the limit is read") {
        const std::string line(sbx::route::kMaxLineBytes, 'a');
        CHECK(sbx::route::read_shell_line(line).readable());
    }
    SUBCASE("groups nested past the limit") {
        // "( ( a ) )": bash reads "((" as arithmetic.
        auto nested = [](std::size_t n) {
            std::string open, close;
            for (std::size_t k = 0; k < n; ++k) {
                open += "( ";
                close += " )";
            }
            return open + "a" + close;
        };
        const unsigned n = sbx::route::kMaxDepth;
        CHECK(sbx::route::read_shell_line(nested(n)).readable());
        const Reading r = sbx::route::read_shell_line(nested(n + 1));
        REQUIRE_FALSE(r.readable());
        CHECK(r.unreadable->why.find("nested deeper") != std::string::npos);
        CHECK(r.unreadable->at == 2 * n);
    }
    SUBCASE("a line at the limit made of what costs most to read is read") {
        // Each byte opens a brace, or starts a parameter in a here-document: a
        // reader that scanned on from each would not end.
        const std::string braces = "echo " + std::string(sbx::route::kMaxLineBytes - 5, '{');
        CHECK(sbx::route::read_shell_line(braces).readable());
        std::string body = "cat <<E\n";
        while (body.size() + 8 < sbx::route::kMaxLineBytes) body += "${a}${b ";
        const Reading r = sbx::route::read_shell_line(body + "}\nE");
        REQUIRE_FALSE(r.readable());
        CHECK(r.unreadable->why.find("parameter expansion with an operator") != std::string::npos);
    }
    SUBCASE("more commands than the limit") {
        std::string line;
        for (std::size_t k = 0; k < sbx::route::kMaxCommands; ++k) line += "a;";
        CHECK(sbx::route::read_shell_line(line).readable());
        const Reading r = sbx::route::read_shell_line(line + "a");
        REQUIRE_FALSE(r.readable());
        CHECK(r.unreadable->why.find("more than") != std::string::npos);
    }
}

TEST_CASE("read_shell_line: each word's bytes in the line read again as the same word") {
    const std::string_view lines[] = {
        "FOO='a b' git commit -m \"x $Y\" ~/f *.c {a,b} a\\ b 2>&1 | tee \"$LOG\"",
        "cd ~+ && rm -rf \"$DIR\"/* 'q'\"q\"\\q x=~/y",
        "cat <<EOF > out\nbody\nEOF\nls",
    };
    for (const auto line : lines) {
        CAPTURE(line);
        const Reading r = sbx::route::read_shell_line(line);
        REQUIRE(r.readable());
        for (const Command& c : r.commands) {
            std::vector<Word> all = c.assignments;
            all.insert(all.end(), c.words.begin(), c.words.end());
            for (const auto& rd : c.redirects) all.push_back(rd.target);
            for (const Word& w : all) {
                const std::string raw(line.substr(w.begin, w.end - w.begin));
                CAPTURE(raw);
                const Reading again = sbx::route::read_shell_line(": " + raw);
                REQUIRE(again.readable());
                REQUIRE(again.commands.size() == 1);
                REQUIRE(again.commands[0].words.size() == 2);
                CHECK(again.commands[0].words[1].text == w.text);
                CHECK(again.commands[0].words[1].expansions == w.expansions);
            }
        }
    }
}

TEST_CASE("read_shell_line: where each command lies in the line") {
    const std::string_view line = "A=1 make  all && (cd x; ls)";
    const Reading r = sbx::route::read_shell_line(line);
    REQUIRE(r.readable());
    REQUIRE(r.commands.size() == 3);
    CHECK(line.substr(r.commands[0].begin, r.commands[0].end - r.commands[0].begin) == "A=1 make  all");
    CHECK(line.substr(r.commands[1].begin, r.commands[1].end - r.commands[1].begin) == "cd x");
    CHECK(line.substr(r.commands[2].begin, r.commands[2].end - r.commands[2].begin) == "ls");
}

}  // namespace
