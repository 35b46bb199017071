// sbx::route::critical_removals: the removals of a command line that always
// ask, behind wrappers and inside sh -c, with the controls that do not.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "sbx/route/removals.hpp"

namespace {

using sbx::route::RemovalPlace;

const RemovalPlace kPlace{"/home/u/proj", "/home/u", "", false};

// The findings as a row writes them: "program operand: why", joined by " | ";
// "(incomplete)" after them when the check could not read everything.
std::string findings(std::string_view line, const RemovalPlace& place = kPlace) {
    const auto check = sbx::route::critical_removals(line, place);
    std::string out;
    for (const auto& f : check.critical) {
        if (!out.empty()) out += " | ";
        out += f.program + (f.operand.empty() ? "" : " " + f.operand) + ": " + f.why;
    }
    if (!check.complete) out += out.empty() ? "(incomplete)" : " (incomplete)";
    return out;
}

struct Row {
    std::string_view line;
    std::string_view found;  // "" for nothing critical
};

// Over 80 lines: a table, one row a line and what the check finds in it.
TEST_CASE("critical_removals: what always asks, and what does not") {
    const Row rows[] = {
        // The critical paths themselves.
        {"rm -rf /", "rm /: /"},
        {"rm -rf --no-preserve-root /", "rm /: /"},
        {"rm -rf ~", "rm ~: the home directory"},
        {"rm -rf /home/u", "rm /home/u: the home directory"},
        {"rm -rf /home/u/", "rm /home/u/: the home directory"},
        {"rm -rf .", "rm .: the workspace root"},
        {"rm -rf ./", "rm ./: the workspace root"},
        {"rm -rf /home/u/proj", "rm /home/u/proj: the workspace root"},
        {"rm -rf ..", "rm ..: the home directory"},
        {"rm -rf ../..", "rm ../..: a directory above the workspace root"},
        {"rm -rf /home", "rm /home: a directory above the workspace root"},
        {"rm -rf sub/../..", "rm sub/../..: the home directory"},
        {"rm -rf .git", "rm .git: a .git directory or something in it"},
        {"rm -f .git/index.lock", "rm .git/index.lock: a .git directory or something in it"},
        {"rm -rf vendor/lib/.git", "rm vendor/lib/.git: a .git directory or something in it"},
        {"rmdir .git/refs/tags", "rmdir .git/refs/tags: a .git directory or something in it"},
        {"unlink .git/HEAD", "unlink .git/HEAD: a .git directory or something in it"},
        {"rm -- -f .git", "rm .git: a .git directory or something in it"},
        // Not critical: a file or folder of the project, or elsewhere.
        {"rm -rf build", ""},
        {"rm -rf ./node_modules dist/*.js", ""},
        {"rm /tmp/x.log", ""},
        {"rm -rf ~/.cache/pip", ""},
        {"rm .gitignore .github/workflows/ci.yml", ""},
        {"rm -rf sub/.gitmodules", ""},
        {"rmdir empty", ""},
        {"rm", ""},
        {"git rm -r --cached .", ""},
        {"echo rm -rf /", ""},
        {"ls -la ~", ""},
        // Case: .GIT is .git only where the filesystem folds case (below too).
        {"rm -rf .GIT", ""},
        // Operands the shell decides.
        {"rm -rf $DIR", "rm $DIR: an operand the shell decides"},
        {"rm -rf \"$BUILD/out\"", "rm $BUILD/out: an operand the shell decides"},
        {"rm -rf ~user", "rm ~user: an operand the shell decides"},
        {"rm -rf ~+", "rm ~+: an operand the shell decides"},
        {"rm -rf {a,b}", "rm {a,b}: an operand the shell decides"},
        {"rm -f log{1..3}", "rm log{1..3}: an operand the shell decides"},
        {"rm -rf '$DIR'", ""},
        // Wildcards: over a critical directory, or able to match .git.
        {"rm -rf *", "rm *: a wildcard over the workspace root"},
        {"rm -rf ./*", "rm ./*: a wildcard over the workspace root"},
        {"rm -rf .*", "rm .*: a wildcard that matches .git"},
        {"rm -rf .g*", "rm .g*: a wildcard that matches .git"},
        {"rm -rf sub/.gi?", "rm sub/.gi?: a wildcard that matches .git"},
        {"rm -rf ~/*", "rm ~/*: a wildcard over the home directory"},
        {"rm -rf /*", "rm /*: a wildcard over /"},
        {"rm -rf ../*", "rm ../*: a wildcard over the home directory"},
        {"rm -rf */", "rm */: a wildcard over the workspace root"},
        {"rm -rf .git/*", "rm .git/*: a .git directory or something in it"},
        {"rm -rf */.git", "rm */.git: a .git directory or something in it"},
        {"rm -f *.o", ""},
        {"rm -rf build/*", ""},
        {"rm -rf *.egg-info .pytest_cache", ""},
        // mv: what it moves away; rsync: what --delete empties.
        {"mv .git /tmp/old-git", "mv .git: a .git directory or something in it"},
        {"mv . ../elsewhere", "mv .: the workspace root"},
        {"mv a b .git", ""},
        {"mv -t /tmp .git", "mv .git: a .git directory or something in it"},
        {"mv --target-directory=/tmp ~", "mv ~: the home directory"},
        {"mv src/a.c src/b.c", ""},
        {"rsync -a --delete /tmp/empty/ ./", "rsync ./: the workspace root"},
        {"rsync -av --delete-after build/ ~/", "rsync ~/: the home directory"},
        {"rsync -a /tmp/x/ ./", ""},
        {"rsync -a --delete ./ host:/backup/", ""},
        {"rsync -a --remove-source-files .git/ /tmp/g/", "rsync .git/: a .git directory or something in it"},
        {"rsync -e ssh --delete x/ .", "rsync .: the workspace root"},
        // Operands from elsewhere.
        {"git ls-files | xargs rm", "rm: operands from xargs's input"},
        {"find . -name '*.o' | xargs -0 rm -f", "rm: operands from xargs's input"},
        {"cat list | xargs -I {} rm {}", "rm: operands from xargs's input"},
        {"xargs -n1 echo < list", ""},
        {"find . -name '*.pyc' -delete", "find: find -delete removes what find finds"},
        {"find /tmp/x -delete", "find: find -delete removes what find finds"},
        {"find . -type d -name build -exec rm -rf {} +", "rm: operands find decides ({})"},
        {"find . -exec sudo rm {} \\;", "rm: operands find decides ({})"},
        {"find . -name x -print", ""},
        {"find . -exec grep -l x {} +", ""},
        // Wrappers.
        {"sudo rm -rf /", "rm /: /"},
        {"env -i PATH=/bin rm -rf ~", "rm ~: the home directory"},
        {"env - rm -rf .git", "rm .git: a .git directory or something in it"},
        {"nice -n 10 rm -rf .", "rm .: the workspace root"},
        {"nice -5 rm -rf .", "rm .: the workspace root"},
        {"timeout 10 rm -rf .", "rm .: the workspace root"},
        {"timeout -s KILL 5s rm -rf .", "rm .: the workspace root"},
        {"timeout --signal=TERM 5 nohup rm -rf .", "rm .: the workspace root"},
        {"caffeinate -i rm -rf ~", "rm ~: the home directory"},
        {"command rm -rf /", "rm /: /"},
        {"exec rm -rf /", "rm /: /"},
        {"/bin/rm -rf /", "rm /: /"},
        {"\\rm -rf /", "rm /: /"},
        {"busybox rm -rf /", "rm /: /"},
        {"stdbuf -oL rm -rf /", "rm /: /"},
        {"ionice -c3 rm -rf /", "rm /: /"},
        {"taskset -c 0 rm -rf /", "rm /: /"},
        {"chrt -f 10 rm -rf /", "rm /: /"},
        {"sudo -u other timeout 5 rm -rf /", "rm /: /"},
        {"env -C /tmp rm -rf x", "rm x: a relative operand after a cd the check cannot follow"},
        {"env -S 'rm -rf /'", "rm /: /"},
        {"flock /tmp/l -c 'rm -rf .git'", "rm .git: a .git directory or something in it"},
        {"command -v rm", ""},
        // Shells and eval: the code they run is checked too.
        {"sh -c 'rm -rf /'", "rm /: /"},
        {"bash -c \"cd .. && rm -rf proj\"", "rm proj: the workspace root"},
        {"bash -lc 'rm -rf ~'", "rm ~: the home directory"},
        {"eval rm -rf .git", "rm .git: a .git directory or something in it"},
        {"eval \"rm -rf \\$X\"", "rm $X: an operand the shell decides"},
        {"sh -c \"$CODE\"", "(incomplete)"},
        {"eval \"$CODE\"", "(incomplete)"},
        {"sh -c 'for f in *; do rm $f; done'", "(incomplete)"},
        {"bash script.sh", ""},
        {"bash <<EOF\nrm -rf ~\nEOF", "rm ~: the home directory"},
        {"sh <<'EOF'\nrm -rf build\nEOF", ""},
        {"echo 'rm -rf ~' | sh", "(incomplete)"},
        {"bash -s < script", "(incomplete)"},
        {"sh < script", "(incomplete)"},
        {"bash -x script.sh", ""},
        // The directory the line is in when it removes.
        {"cd /tmp && rm -rf *", ""},
        {"cd build && rm -rf *", ""},
        {"cd sub; rm -rf ../.git", "rm ../.git: a .git directory or something in it"},
        {"cd && rm -rf x", ""},
        {"cd && rm -rf *", "rm *: a wildcard over the home directory"},
        {"cd \"$D\" && rm -rf x", "rm x: a relative operand after a cd the check cannot follow"},
        {"cd - && rm -rf x", "rm x: a relative operand after a cd the check cannot follow"},
        {"pushd /tmp && rm -rf x", "rm x: a relative operand after a cd the check cannot follow"},
        {"(cd /tmp) && rm -rf x", "rm x: a relative operand after a cd the check cannot follow"},
        {"cd /tmp | rm -rf *", "rm *: a relative operand after a cd the check cannot follow"},
        {"cd /tmp & rm -rf *", "rm *: a relative operand after a cd the check cannot follow"},
        {"cd /tmp && rm -rf /tmp/x", ""},
        // Several in one line, in its order; a line the reader cannot read.
        {"rm -rf .git && rm -rf ~", "rm .git: a .git directory or something in it | rm ~: the home directory"},
        {"make clean; rm -rf $(pwd)", "(incomplete)"},
        {"rm -rf .git; $(x)", "rm .git: a .git directory or something in it (incomplete)"},
    };
    for (const auto& row : rows) {
        CAPTURE(row.line);
        CHECK(findings(row.line) == row.found);
    }
}

TEST_CASE("critical_removals: where the filesystem folds case, .GIT is .git and the root any case") {
    RemovalPlace folding = kPlace;
    folding.folds_case = true;
    CHECK(findings("rm -rf .GIT", folding) == "rm .GIT: a .git directory or something in it");
    CHECK(findings("rm -rf vendor/.Git/objects", folding) == "rm vendor/.Git/objects: a .git directory or something in it");
    CHECK(findings("rm -rf .G*", folding) == "rm .G*: a wildcard that matches .git");
    CHECK(findings("rm -rf /HOME/U/PROJ", folding) == "rm /HOME/U/PROJ: the workspace root");
    CHECK(findings("rm -rf /HOME/U/PROJ") == "");  // the control: a case-sensitive disk
}

TEST_CASE("critical_removals: a line that starts elsewhere, and where each finding points") {
    RemovalPlace in_sub = kPlace;
    in_sub.cwd = "/home/u/proj/sub";
    CHECK(findings("rm -rf ..", in_sub) == "rm ..: the workspace root");
    CHECK(findings("rm -rf *", in_sub) == "");

    const std::string_view line = "ls && rm -rf  .git";
    const auto check = sbx::route::critical_removals(line, kPlace);
    REQUIRE(check.critical.size() == 1);
    CHECK(line.substr(check.critical[0].at) == ".git");
    // Inside sh -c, a finding points at the code's word.
    const std::string_view nested = "sh -c 'rm -rf /'";
    const auto inner = sbx::route::critical_removals(nested, kPlace);
    REQUIRE(inner.critical.size() == 1);
    CHECK(inner.critical[0].at == 6);
}

TEST_CASE("critical_removals: code inside code is checked to a depth, then the check is incomplete") {
    std::string line = "rm -rf /";
    for (int k = 0; k < sbx::route::detail::kMaxNesting; ++k) line = "eval " + line;
    CHECK(findings(line) == "rm /: /");
    CHECK(findings("eval " + line) == "(incomplete)");
}

}  // namespace
