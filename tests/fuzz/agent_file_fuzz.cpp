// Fuzzing parse_agent_file(): an agent file's front matter and its sandbox block.
//
// Any bytes come back as an AgentFile or as an error with a message and the
// agent file's name, on both platforms; nothing throws. An agent file that
// parses has its paths absolute: its folder, and every folder it lets write.
// add_agent_file_host() on the same bytes gives text that reads back with the
// host among its hosts, or an error naming the file: never an INTERNAL one,
// which would mean an edit that changed more than the hosts.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"
#include "sbx/settings/agent_file.hpp"
#include "sbx/settings/agent_file_edit.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using sbx::fuzz::check;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::string file = "/home/u/work/agents/reviewer.md";
    for (const auto platform : {sbx::Platform::linux_, sbx::Platform::mac}) {
        const sbx::AgentFileSource src{file, "/home/u", sbx::LayerKind::flag, platform};
        auto agent = sbx::parse_agent_file(text, src);
        if (!agent) {
            sbx::fuzz::check_error(agent.error(), file);
            continue;
        }
        check(agent->agent_dir.starts_with('/'), "the agent's folder is absolute");
        for (const auto& w : agent->files.write) check(w.value.starts_with('/'), "a folder to write is absolute");
        for (const std::string_view host : {"fuzz.example", "2606:2800:21f::7"}) {
            auto edited = sbx::add_agent_file_host(text, src, host);
            if (!edited) {
                sbx::fuzz::check_error(edited.error(), file);
                check(edited.error().code != sbx::Errc::internal, "an edit changed more than the hosts");
                continue;
            }
            auto again = sbx::parse_agent_file(*edited, src);
            check(again.has_value(), "the edited file reads");
            if (!again) continue;
            bool found = false;
            for (const auto& h : again->network.hosts) found = found || h.value == host || h.value == "[" + std::string(host) + "]";
            check(found, "the host is among the edited file's hosts");
        }
    }
    return 0;
}
