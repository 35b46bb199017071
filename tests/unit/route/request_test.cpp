// sbx::route::parse_call: a call to route, read strictly; every malformed part
// refused naming its key, line and column.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "sbx/route/request.hpp"

namespace {

TEST_CASE("parse_call: every member, the rules kept with their keys in the flag layer") {
    const auto call = sbx::route::parse_call(R"J({"command": "git push origin main", "mode": "acceptEdits",
        "dangerouslyDisableSandbox": true, "allowedDomains": ["registry.npmjs.org", "*.example.com"],
        "permissions": {"allow": ["Bash(npm test)"], "deny": ["Bash(curl:*)", "Bash"], "ask": []}})J", "call.json");
    REQUIRE(call.has_value());
    CHECK(*call->command == "git push origin main");
    CHECK(call->request.mode == sbx::PermissionMode::accept_edits);
    CHECK(call->request.dangerously_disable_sandbox);
    CHECK(call->request.allowed_domains == std::vector<std::string>{"registry.npmjs.org", "*.example.com"});
    REQUIRE(call->request.deny.size() == 2);
    CHECK(call->request.deny[1].value == "Bash");
    CHECK(call->request.deny[1].source.key == "permissions.deny[1]");
    CHECK(call->request.deny[1].source.layer == sbx::LayerKind::flag);
    CHECK(call->request.deny[1].source.file == "call.json");
    CHECK(call->request.allow.size() == 1);
    CHECK(call->request.ask.empty());
    CHECK(call->request.owner);  // the default
    const auto other = sbx::route::parse_call(R"J({"command": "ls", "caller": "other"})J", "call.json");
    REQUIRE(other.has_value());
    CHECK_FALSE(other->request.owner);
}

TEST_CASE("parse_call: a command line may hold newlines and tabs, as a here-document does") {
    const auto call = sbx::route::parse_call(R"({"command": "cat <<EOF\n\tx\nEOF"})", "call.json");
    REQUIRE(call.has_value());
    CHECK(*call->command == "cat <<EOF\n\tx\nEOF");
}

TEST_CASE("parse_call: an empty object is a call with nothing asked, and no line") {
    const auto call = sbx::route::parse_call("{}", "call.json");
    REQUIRE(call.has_value());
    CHECK_FALSE(call->command.has_value());
    CHECK_FALSE(call->request.mode.has_value());
    CHECK_FALSE(call->request.dangerously_disable_sandbox);
}

TEST_CASE("parse_call: each malformed call is refused, naming the key and where it is") {
    struct Row {
        std::string_view text, key, says;
    };
    const Row rows[] = {
        {R"({"command": "ls", "colour": "red"})", "colour", "unknown key"},
        {R"({"command": "ls", "command": "rm"})", "command", "appears twice"},
        {R"({"command": ""})", "command", "an empty string"},
        {R"({"command": "ls\r rm -rf ~"})", "command", "control character"},
        {R"({"command": "ls\u0000"})", "command", "control character"},
        {R"({"allowedDomains": ["a\nb.example"]})", "allowedDomains[0]", "control character"},
        {R"({"command": ["ls"]})", "command", "expected a string, got an array"},
        {R"({"mode": "yolo"})", "mode", "unknown mode \"yolo\""},
        {R"({"caller": "guest"})", "caller", "expected \"owner\" or \"other\""},
        {R"({"caller": false})", "caller", ""},
        {R"({"dangerouslyDisableSandbox": "yes"})", "dangerouslyDisableSandbox", "expected a boolean"},
        {R"({"allowedDomains": "example.com"})", "allowedDomains", "expected an array of strings"},
        {R"({"allowedDomains": ["ok.example", "https://x.example/"]})", "allowedDomains[1]", ""},
        {R"({"permissions": []})", "permissions", "expected an object"},
        {R"J({"permissions": {"allow": ["Bash(npm test"]}})J", "permissions.allow[0]", ""},
        {R"J({"permissions": {"deny": ["Read(./.env)"]}})J", "permissions.deny[0]", "is not a Bash rule"},
        {R"({"permissions": {"never": []}})", "permissions.never", "unknown key"},
        {R"({"permissions": {"ask": [], "ask": []}})", "permissions.ask", "appears twice"},
        {R"(["ls"])", "", "expected an object"},
    };
    for (const auto& row : rows) {
        CAPTURE(row.text);
        const auto call = sbx::route::parse_call(row.text, "call.json");
        REQUIRE_FALSE(call.has_value());
        CHECK(call.error().code == sbx::Errc::invalid_settings);
        CHECK(call.error().file == "call.json");
        CHECK(call.error().key == row.key);
        CHECK(call.error().message.find(row.says) != std::string::npos);
        if (!row.key.empty()) CHECK(call.error().line == 1);
    }
}

TEST_CASE("parse_call: JSON that does not parse is refused with its line and column") {
    const auto call = sbx::route::parse_call("{\"command\": \"ls\",\n}", "call.json");
    REQUIRE_FALSE(call.has_value());
    CHECK(call.error().code == sbx::Errc::invalid_settings);
    CHECK(call.error().line == 2);
}

}  // namespace
