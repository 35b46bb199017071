// add_agent_file_host(): an `always` answer written into an agent file's
// network hosts, the rest of the file's text as it was.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "sbx/settings/agent_file_edit.hpp"

namespace {

const sbx::AgentFileSource kSource{"/home/u/agents/researcher/AGENT.md", "/home/u", sbx::LayerKind::flag,
                                   sbx::Platform::linux_};

std::string added(std::string_view text, std::string_view host = "pypi.org") {
    auto out = sbx::add_agent_file_host(text, kSource, host);
    REQUIRE_MESSAGE(out.has_value(), (out ? std::string() : sbx::to_string(out.error())));
    return *out;
}

sbx::Error refused(std::string_view text, std::string_view host = "pypi.org") {
    auto out = sbx::add_agent_file_host(text, kSource, host);
    REQUIRE_FALSE_MESSAGE(out.has_value(), "accepted: " << text);
    CHECK(out.error().file == kSource.file);
    return out.error();
}

}  // namespace

TEST_CASE("add_agent_file_host: each place a host list can be, one line changed or added, the rest as it was") {
    struct Row {
        std::string_view before, after;
    };
    const Row rows[] = {
        // a flow list, empty or not, with a comment and quotes on its line
        {"---\nsandbox:\n  network:\n    hosts: [github.com, \"x.org\"]  # reviewed\n---\n# Body [a]\n",
         "---\nsandbox:\n  network:\n    hosts: [github.com, \"x.org\", pypi.org]  # reviewed\n---\n# Body [a]\n"},
        {"---\nsandbox:\n  network:\n    hosts: []\n---\n", "---\nsandbox:\n  network:\n    hosts: [pypi.org]\n---\n"},
        {"---\nsandbox:\n  network:\n    hosts: [ ]\n---\n", "---\nsandbox:\n  network:\n    hosts: [ pypi.org]\n---\n"},
        // a block list, indented or not
        {"---\nsandbox:\n  network:\n    hosts:\n      - github.com\n      - 'x.org'\n    local: true\n---\n",
         "---\nsandbox:\n  network:\n    hosts:\n      - github.com\n      - 'x.org'\n      - pypi.org\n    local: true\n---\n"},
        {"---\nsandbox:\n  network:\n    hosts:\n    - github.com\n---\n",
         "---\nsandbox:\n  network:\n    hosts:\n    - github.com\n    - pypi.org\n---\n"},
        // no hosts under network; no network under sandbox
        {"---\nsandbox:\n  network:\n    local: true\n---\n",
         "---\nsandbox:\n  network:\n    hosts: [pypi.org]\n    local: true\n---\n"},
        {"---\nname: r\nsandbox:\n    preset: strict\n---\n",
         "---\nname: r\nsandbox:\n    network:\n      hosts: [pypi.org]\n    preset: strict\n---\n"},
        // the older top-level list
        {"---\nnetwork: [github.com]\n---\n", "---\nnetwork: [github.com, pypi.org]\n---\n"},
        {"---\nnetwork:\n- github.com\n---\n", "---\nnetwork:\n- github.com\n- pypi.org\n---\n"},
        // declared by another older key: the block at the front matter's end
        {"---\nallowed_folders: [.]\n---\nbody\n", "---\nallowed_folders: [.]\nsandbox:\n  network:\n    hosts: [pypi.org]\n---\nbody\n"},
        // CRLF line ends, a byte order mark, no final line end
        {"\xEF\xBB\xBF---\r\nsandbox:\r\n  network:\r\n    hosts: [a.org]\r\n---\r\nbody",
         "\xEF\xBB\xBF---\r\nsandbox:\r\n  network:\r\n    hosts: [a.org, pypi.org]\r\n---\r\nbody"},
    };
    for (const auto& r : rows) {
        CAPTURE(r.before);
        CHECK(added(r.before) == r.after);
    }
    // An address is quoted; a host there already leaves the text as it was.
    CHECK(added("---\nsandbox:\n  network:\n    hosts: []\n---\n", "2606:2800:21f::1") ==
          "---\nsandbox:\n  network:\n    hosts: [\"[2606:2800:21f::1]\"]\n---\n");
    const std::string_view there = "---\nsandbox:\n  network:\n    hosts: [pypi.org]  # keep\n---\n";
    CHECK(added(there) == there);
}

TEST_CASE("add_agent_file_host: what it will not write, saying why and where") {
    // No sandbox block: one would change how skill scripts run.
    for (std::string_view text : {"---\nname: r\n---\n", "---\nsandbox: off\n---\n"}) {
        CAPTURE(text);
        const auto e = refused(text);
        CHECK(e.code == sbx::Errc::invalid_settings);
        CHECK(e.message.find("sandbox") != std::string::npos);
    }
    // Flow mappings are not rewritten.
    CHECK(refused("---\nsandbox: {preset: strict}\n---\n").key == "sandbox");
    CHECK(refused("---\nsandbox:\n  network: {local: true}\n---\n").key == "sandbox.network");
    // A host no answer can name, and a file that does not read.
    for (std::string_view host : {"*.pypi.org", "localhost", "10.0.0.1", "PyPI.org", ""}) {
        CAPTURE(host);
        CHECK(refused("---\nsandbox:\n  network:\n    hosts: []\n---\n", host).code == sbx::Errc::invalid_argument);
    }
    CHECK(refused("---\nsandbox:\n  network:\n    hosts: [a\n---\n").code == sbx::Errc::invalid_settings);
}
