// tools/sbx/answers.cpp - reading, checking and keeping the answers of a session.
#include "answers.hpp"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "sbx/io/settings_files.hpp"
#include "sbx/plan/plan_json.hpp"
#include "sbx/plan/read_plan.hpp"
#include "sbx/plan/report.hpp"
#include "sbx/settings/agent_file_edit.hpp"
#include "cli_common.hpp"

namespace sbx::cli {

namespace {

// `path` made real as far as it exists: its folder's real path and its own
// name, or where it leads when it is there.
std::optional<std::string> real_path(const std::string& path) {
    char buf[PATH_MAX];
    if (::realpath(path.c_str(), buf) != nullptr) return std::string(buf);
    if (errno != ENOENT) return std::nullopt;
    if (::realpath(sbx::paths::parent(path).c_str(), buf) == nullptr) return std::nullopt;
    return sbx::paths::join(buf, path.substr(path.rfind('/') + 1));
}

// Writes `text` beside `path` and renames it over `path`, with `path`'s mode
// (0600 for a new file); never through a link at the last step.
sbx::expected<void> replace_file(const std::string& path, const std::string& text) {
    struct stat st {};
    const mode_t mode = ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0600;
    const std::string temp = path + ".sbx-new-" + std::to_string(::getpid());
    auto failed = [&](const char* what) {
        const int e = errno;
        ::unlink(temp.c_str());
        return sbx::fail(sbx::Error(sbx::Errc::io_error, std::string(what) + ": " + std::strerror(e)).in_file(path));
    };
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) return sbx::fail(sbx::Error(sbx::Errc::io_error, std::string("cannot write beside it: ") +
                                                                     std::strerror(errno)).in_file(path));
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ::close(fd);
            return failed("cannot write");
        }
        done += static_cast<std::size_t>(n);
    }
    if (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0) {
        ::close(fd);
        return failed("cannot write");
    }
    ::close(fd);
    if (::rename(temp.c_str(), path.c_str()) != 0) return failed("cannot replace it");
    return {};
}

// `host` written into the agent file's network hosts (add_agent_file_host).
sbx::expected<void> write_host_into(const sbx::AgentFileSource& agent, const std::string& host) {
    auto text = sbx::read_settings_text(agent.file);
    SBX_TRY(text);
    if (!*text) return sbx::fail(sbx::Error(sbx::Errc::io_error, "no agent file here").in_file(agent.file));
    auto edited = sbx::add_agent_file_host(**text, agent, host);
    SBX_TRY(edited);
    if (*edited == **text) return {};  // there already
    return replace_file(agent.file, *edited);
}

}  // namespace

sbx::expected<std::vector<sbx::net::HostAnswer>> read_answers(const std::string& given) {
    const std::string file = absolute(given);
    auto text = sbx::read_settings_text(file);
    SBX_TRY(text);
    if (!*text) return std::vector<sbx::net::HostAnswer>{};
    auto answers = sbx::parse_host_answers(**text, file);
    if (!answers) {
        sbx::Error e = answers.error();
        e.code = sbx::Errc::invalid_settings;
        return sbx::fail(std::move(e));
    }
    return answers;
}

sbx::expected<void> check_answers_outside(const sbx::Plan& plan, const std::string& given) {
    const std::string file = absolute(given);
    auto real = real_path(file);
    if (!real)
        return sbx::fail(sbx::Error(sbx::Errc::invalid_argument, std::string("--answers: cannot find where it lies: ") +
                                                                     std::strerror(errno)).in_file(file));
    for (const std::string& p : {*real, sbx::paths::parent(*real), sbx::paths::parent(file)}) {
        const auto a = sbx::planned_access(plan.filesystem, p);
        if (a.kind != sbx::PlannedAccess::Kind::writable) continue;
        return sbx::fail(sbx::Error(sbx::Errc::invalid_argument,
                                    "--answers: the command could write " + p +
                                        (a.mount ? " (" + a.mount->why + ")" : std::string()) +
                                        ", and so answer for you; keep the session's answers outside every place "
                                        "it writes, such as a folder of your own under ~/.cache")
                             .in_file(file));
    }
    return {};
}

sbx::launcher::AnswerOffers answer_offers(const std::string& answers_file, const std::optional<sbx::AgentFileSource>& agent) {
    sbx::launcher::AnswerOffers o;
    if (!answers_file.empty()) o.session = absolute(answers_file);
    if (agent) {
        auto text = sbx::read_settings_text(agent->file);
        // Offered only where a host can be written: a trial with a host of no one's.
        if (text && *text && sbx::add_agent_file_host(**text, *agent, "example.com")) o.always = agent->file;
    }
    return o;
}

void keep_answers(const std::string& answers_file, const std::optional<sbx::AgentFileSource>& agent,
                  const std::vector<std::pair<sbx::net::HostTarget, sbx::launcher::Answer>>& given) {
    using Scope = sbx::launcher::AnswerScope;
    std::vector<sbx::net::HostAnswer> session;
    for (const auto& [t, a] : given) {
        if (a.scope == Scope::command) continue;
        if (a.scope == Scope::always && a.allow && agent) {
            const auto written = write_host_into(*agent, t.host);
            if (written) {
                std::cerr << "sbx: " << sbx::net::printable_host(t.host) << " is in the network hosts of "
                          << sbx::printable_line_part(agent->file) << " now\n";
                continue;
            }
            std::cerr << "sbx: warning: " << sbx::net::printable_host(t.host) << " was not written into "
                      << sbx::printable_line_part(agent->file) << ": " << sbx::to_string(written.error())
                      << (answers_file.empty() ? "; it held for that command only\n" : "; it is kept for the session\n");
        }
        if (!answers_file.empty()) session.push_back({t.host, t.port, a.allow});
    }
    if (session.empty()) return;
    const std::string file = absolute(answers_file);
    // Read again: another command of the session may have added answers meanwhile.
    auto kept = read_answers(answers_file);
    if (!kept) {
        std::cerr << "sbx: warning: the session's answers were not kept: " << sbx::to_string(kept.error()) << "\n";
        return;
    }
    for (const auto& s : session) {
        std::erase_if(*kept, [&](const sbx::net::HostAnswer& k) { return k.host == s.host && k.port == s.port; });
        kept->push_back(s);
    }
    if (kept->size() > sbx::net::kMaxHostAnswers) {
        std::cerr << "sbx: warning: the session's answers were not kept: " << file << " would hold more than "
                  << sbx::net::kMaxHostAnswers << "\n";
        return;
    }
    if (auto r = replace_file(file, sbx::answers_file_json(*kept) + "\n"); !r) {
        std::cerr << "sbx: warning: the session's answers were not kept: " << sbx::to_string(r.error()) << "\n";
        return;
    }
    for (const auto& s : session)
        std::cerr << "sbx: " << sbx::net::printable_host(s.host) << ":" << s.port << (s.allow ? " allowed" : " refused")
                  << " for the rest of the session, kept in " << sbx::printable_line_part(file) << "\n";
}

}  // namespace sbx::cli
