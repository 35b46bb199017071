// cli_common.hpp - what every subcommand of sbx shares: the exit statuses and the
// one way an error is said, paths given on the command line, this user's home,
// the command's temporary directory, and the root as JSON. (Not common.hpp:
// that is the launchers', which the files here include for its own.)
//
// Exit statuses (README.md, "Exit statuses"):
//   0   success
//   1   sbx check: an expectation does not hold; sbx diff --fail-on-widening:
//       the change widens the sandbox
//   64  the command line is wrong (usage)
//   65  a settings file is invalid
//   66  a file could not be read
//   70  an internal error in sbx
// `sbx run` becomes the launcher, so its statuses are the command's (see
// launchers/linux/sbx_linux.cpp); anything that goes wrong before is 125.
// `sbx doctor` exits 1 when the sandbox cannot run here.
#pragma once

#include <string>
#include <vector>

#include "sbx/core/error.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/core/json_write.hpp"
#include "sbx/settings/project_root.hpp"

namespace sbx::cli {

enum Exit : int {
    kOk = 0,
    kFailed = 1,  // `sbx check` when an expectation does not hold, `sbx diff --fail-on-widening` when the change widens
    kUsage = 64,
    kInvalidInput = 65,
    kNoInput = 66,
    kInternal = 70,
    kRunFailed = 125,  // sbx run: nothing ran
};

// The exit status for an error of the engine's.
int exit_for(const sbx::Error& e);

// Says `e` on standard error ("sbx: CODE: where: what") and returns its exit status.
int report(const sbx::Error& e);

// A command's words as one shell line that runs them: each word as it is when
// nothing in it is special to the shell, else in single quotes.
std::string shell_words(const std::vector<std::string>& words);

// An absolute, normalised form of a path given on the command line.
std::string absolute(const std::string& p);

// The text of a file named on the command line (relative to the current
// directory), up to the settings files' limit; IO_ERROR "no such file",
// naming it as given, when it is not there.
sbx::expected<std::string> read_given_file(const std::string& given);

// HOME, absolute and normalised, else the password database's home of this user.
sbx::expected<std::string> home_directory();

// The command's temporary directory: under $TMPDIR (or /tmp), a fresh name.
std::string temporary_directory();

// The root as JSON members: "root", "rootReason" (option, git-work-tree,
// claude-folder, current-directory), "rootWhy" (sbx::root_why) and "rootFrom"
// (the .git or .claude that decided, or null).
void write_root(sbx::json::Writer& w, const sbx::ProjectRoot& r);

}  // namespace sbx::cli
