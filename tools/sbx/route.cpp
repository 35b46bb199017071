// route.cpp - `sbx route LINE`: where a host should run a shell command line
// and whether it needs approval, by the project's settings (compose.hpp) and
// the call's request (sbx/route/route.hpp), each part with the rule behind it.
//
// One argument is the line as the host received it. Several are a command's
// words, as `sbx run` takes them: each is quoted as the shell needs it and the
// words joined (`sbx route sh -c 'rm -rf x'` routes `sh -c 'rm -rf x'`, never
// `sh -c rm -rf x`); the output starts with the line routed. A host passes the
// whole call as JSON instead with --request-json FILE (`-`: standard input).
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/json_write.hpp"
#include "sbx/io/fs_view_disk.hpp"
#include "sbx/io/settings_files.hpp"
#include "sbx/route/request.hpp"
#include "sbx/route/route.hpp"

#include "cli_common.hpp"
#include "commands.hpp"
#include "compose.hpp"

namespace sbx::cli {

namespace {

// Standard input, up to the settings files' limit: a larger call is refused, not cut.
sbx::expected<std::string> read_stdin() {
    std::string out;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
        if (n == 0) return out;
        if (n < 0) {
            if (errno == EINTR) continue;
            return sbx::fail(sbx::Error(sbx::Errc::io_error, std::string("cannot read: ") + std::strerror(errno))
                                 .in_file("standard input"));
        }
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > sbx::kMaxSettingsBytes)
            return sbx::fail(sbx::Error(sbx::Errc::invalid_settings, "larger than " +
                                                                         std::to_string(sbx::kMaxSettingsBytes >> 20) +
                                                                         " MiB")
                                 .in_file("standard input"));
    }
}

// The call --request-json names, read strictly.
sbx::expected<sbx::route::Call> read_call(const std::string& given) {
    if (given == "-") {
        auto text = read_stdin();
        SBX_TRY(text);
        return sbx::route::parse_call(*text, "standard input");
    }
    auto text = read_given_file(given);
    SBX_TRY(text);
    return sbx::route::parse_call(*text, given);
}

// The line of LINE, or of COMMAND's words.
std::string line_of(const std::vector<std::string>& words) {
    return words.size() == 1 ? words.front() : shell_words(words);
}

// The call the command line describes: from --request-json, or from LINE and the options.
sbx::expected<sbx::route::Call> call_of(const RouteArgs& a) {
    sbx::route::Call call;
    if (!a.request.empty()) {
        auto read = read_call(a.request);
        SBX_TRY(read);
        call = std::move(*read);
    } else {
        if (!a.mode.empty()) call.request.mode = sbx::permission_mode(a.mode);
        call.request.dangerously_disable_sandbox = a.dangerously_disable_sandbox;
        call.request.owner = a.caller != "other";
    }
    if (!a.line.empty() && call.command)
        return sbx::fail(sbx::Errc::invalid_argument, "the line is given twice: on the command line and as the "
                                                      "request's 'command'");
    if (!a.line.empty()) call.command = line_of(a.line);
    if (!call.command)
        return sbx::fail(sbx::Errc::invalid_argument,
                         "no command line: give LINE or COMMAND..., or 'command' in the --request-json file");
    return call;
}

void print_route_text(const Composed& c, const std::string& line, const sbx::route::Route& r) {
    using sbx::route::describe;
    std::cout << line << "\n";
    std::cout << "  mode: " << sbx::mode_name(r.mode) << "  " << describe(r.mode_because) << "\n";
    std::cout << "  where: " << sbx::route::where_name(r.where) << "  " << describe(r.where_because) << "\n";
    std::cout << "  approval: " << sbx::route::approval_name(r.approval) << (r.person_only ? " (a person)" : "") << "  "
              << describe(r.approval_because) << "\n";
    std::cout << "  hosts no list names: " << sbx::net::unknown_host_name(r.unknown_host) << "  "
              << describe(r.unknown_host_because) << "\n";
    for (const auto& n : r.notes) std::cout << "  note: " << describe(n) << "\n";
    // What the settings left out bears on the route (a misspelt excludedCommands takes nothing out).
    for (const auto& w : c.policy.warnings) std::cout << "  warning: " << sbx::to_string(w) << "\n";
    std::cout << "  root " << c.where.root << ": " << sbx::root_why(c.where) << "\n";
}

void print_route_json(const Composed& c, const std::string& line, const sbx::route::Route& r) {
    sbx::json::Writer w;
    w.begin_object();
    write_root(w, c.where);
    w.key("command").value(line).key("route");
    sbx::route::write_route(w, r);
    w.key("warnings").begin_array();
    for (const auto& x : c.policy.warnings) w.value(sbx::to_string(x));
    w.end_array().end_object();
    std::cout << w.take() << "\n";
}

}  // namespace

int run_route(const RouteArgs& a) {
    auto call = call_of(a);
    if (!call) return report(call.error());
    auto composed = compose(a.settings, HomeRoot::allowed);
    if (!composed) return report(composed.error());
    sbx::CachedFs cached(*composed->view);
    auto routed = sbx::route::route(composed->policy, *call->command, call->request, route_place(*composed), cached);
    if (!routed) return report(routed.error());
    if (a.settings.json) print_route_json(*composed, *call->command, *routed);
    else print_route_text(*composed, *call->command, *routed);
    return kOk;
}

}  // namespace sbx::cli
