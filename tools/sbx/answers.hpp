// tools/sbx/answers.hpp - `--answers FILE`: a person's answers about hosts, held for a session.
//
// The file holds {"answers": [{"host": "pypi.org", "port": 443, "answer":
// "allow"}]} (sbx::parse_host_answers). `sbx plan` and `sbx run` read it into the
// plan (network.answers), where an answer decides a host no list decides. It
// must lie where the command can neither write nor replace it (checked against
// the plan: the file, where it leads, and its folder), or a command could answer
// for the person. A missing file is an empty one: a session starts without it.
//
// When sbx runs the launcher's steps itself (Linux, without --launcher), the
// terminal's question offers more than this command: [s] this session, which
// adds the answer to FILE once the command is over (the file read again, so that
// another command's answers stay), and, with --agent-file, [a] always, which
// writes the host into the agent file's network hosts
// (sbx::add_agent_file_host), where it can be reviewed.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/settings/agent_file.hpp"
#include "shared/common.hpp"

namespace sbx::cli {

// The answers in the file `given` (as on the command line); none when there is
// no file there. A file that does not read is INVALID_SETTINGS, naming it and the key.
sbx::expected<std::vector<sbx::net::HostAnswer>> read_answers(const std::string& given);

// Refuses (INVALID_ARGUMENT) an answers file `plan` lets the command write or
// replace, saying which mount lets it.
sbx::expected<void> check_answers_outside(const sbx::Plan& plan, const std::string& given);

// The answers given on the terminal while a command runs, from the proxy's thread.
class GivenAnswers {
public:
    void add(const sbx::net::HostTarget& t, const sbx::launcher::Answer& a) {
        std::lock_guard<std::mutex> lock(mutex_);
        list_.emplace_back(t, a);
    }
    std::vector<std::pair<sbx::net::HostTarget, sbx::launcher::Answer>> take() {
        std::lock_guard<std::mutex> lock(mutex_);
        return std::move(list_);
    }

private:
    std::mutex mutex_;
    std::vector<std::pair<sbx::net::HostTarget, sbx::launcher::Answer>> list_;
};

// What the terminal may offer: the session where `answers_file` is given, always
// where `agent` can take a host. Paths as they are said.
sbx::launcher::AnswerOffers answer_offers(const std::string& answers_file, const std::optional<sbx::AgentFileSource>& agent);

// Once the command is over: each answer given for the session added to
// `answers_file`, each `always` one written into the agent file's network hosts
// (or, where that fails, kept for the session when there is a file), one line
// on standard error for each, and a warning for what could not be kept.
void keep_answers(const std::string& answers_file, const std::optional<sbx::AgentFileSource>& agent,
                  const std::vector<std::pair<sbx::net::HostTarget, sbx::launcher::Answer>>& given);

}  // namespace sbx::cli
