// ssh through the proxy (sbx/net/ssh_proxy.hpp): the ssh_config block, the
// proxy URL and host the relay accepts, its request and the answers it reads.
#include "sbx/net/ssh_proxy.hpp"

#include <doctest/doctest.h>

#include <string>

TEST_CASE("ssh proxy: the system's file is kept whole, and sbx's block follows it") {
    const auto text = sbx::net::ssh_config_with_proxy("Include /etc/ssh/ssh_config.d/*.conf\nHost *\n    SendEnv LANG",
                                                      "/usr/lib/sbx/sbx-stage", false);
    REQUIRE(text);
    CHECK(*text == "Include /etc/ssh/ssh_config.d/*.conf\nHost *\n    SendEnv LANG\n" + std::string(sbx::net::kSshBlockBegin) +
                       "\nHost *\n    ProxyCommand '/usr/lib/sbx/sbx-stage' --connect %h %p\n");
    // Where the sandbox's loopback serves the loopback names (NO_PROXY), ssh dials them itself.
    const auto direct = sbx::net::ssh_config_with_proxy("", "/x", true);
    REQUIRE(direct);
    CHECK(direct->find("\nHost * !localhost !127.0.0.1 !::1\n") != std::string::npos);
    CHECK(direct->starts_with(sbx::net::kSshBlockBegin));
}

TEST_CASE("ssh proxy: GIT_SSH_COMMAND carries the same ProxyCommand, quoted once more for git's shell") {
    const auto command = sbx::net::git_ssh_command("/opt/it's/sbx-stage");
    REQUIRE(command);
    CHECK(*command == R"(ssh -o 'ProxyCommand '\''/opt/it'\''\'\'''\''s/sbx-stage'\'' --connect %h %p')");
    CHECK_FALSE(sbx::net::git_ssh_command("/a\tb"));
}

TEST_CASE("ssh proxy: the program is quoted for ssh's % tokens and the shell, and a control byte refuses it") {
    const auto text = sbx::net::ssh_config_with_proxy("", "/opt/it's 100%/sbx-stage", false);
    REQUIRE(text);
    CHECK(text->find("ProxyCommand '/opt/it'\\''s 100%%/sbx-stage' --connect %h %p\n") != std::string::npos);
    CHECK_FALSE(sbx::net::ssh_config_with_proxy("", "/opt/a\nProxyCommand evil", false));
    CHECK_FALSE(sbx::net::ssh_config_with_proxy("", std::string("/opt/a\0b", 8), false));
}

TEST_CASE("ssh proxy: the proxy's URL is an address and a port, nothing else") {
    auto v4 = sbx::net::parse_proxy_url("http://127.0.0.1:3128");
    REQUIRE(v4);
    CHECK(v4->address == "127.0.0.1");
    CHECK(v4->port == 3128);
    auto v6 = sbx::net::parse_proxy_url("http://[::1]:8080/");
    REQUIRE(v6);
    CHECK(v6->address == "::1");
    CHECK(v6->port == 8080);
    CHECK_FALSE(v4->credentials);
    // The weaker sandbox's secret, percent-encoded as proxy_environment writes it.
    auto secret = sbx::net::parse_proxy_url("http://sbx:a%2Fb%3Ac@127.0.0.1:3128");
    REQUIRE(secret);
    CHECK(secret->credentials);
    CHECK(secret->user == "sbx");
    CHECK(secret->password == "a/b:c");
    CHECK(secret->address == "127.0.0.1");
    for (const char* bad : {"https://127.0.0.1:1", "http://localhost:3128", "http://sbx:%2@127.0.0.1:3128",
                            "http://sbx:%0a@127.0.0.1:3128", "http://sbx:%zz@127.0.0.1:3128", "http://127.0.0.1",
                            "http://127.0.0.1:0", "http://127.0.0.1:65536", "http://127.0.0.1:8x", "http://[::1]",
                            "http://[::1:80", "http://:80", "", "http://127.0.0.1:80/path", "http://u@host:80"}) {
        INFO(std::string(bad));
        CHECK_FALSE(sbx::net::parse_proxy_url(bad));
    }
}

TEST_CASE("ssh proxy: a host as ssh's %h gives it, and bytes that no host has") {
    for (const char* ok : {"github.com", "10.0.0.1", "::1", "2001:db8::1", "my_host-1.example"}) {
        INFO(std::string(ok));
        CHECK(sbx::net::relay_host(ok));
    }
    for (const char* bad : {"", "a b", "host\r\nX-Evil: 1", "fe80::1%eth0", "%eth0", "a/b", "[::1]", "a@b"}) {
        INFO(std::string(bad));
        CHECK_FALSE(sbx::net::relay_host(bad));
    }
    CHECK_FALSE(sbx::net::relay_host(std::string(254, 'a')));
    const auto e = sbx::net::relay_host("ab\ncd");
    REQUIRE_FALSE(e);
    CHECK(e.error().message.find("byte 2 (0x0a)") != std::string::npos);
}

TEST_CASE("ssh proxy: the CONNECT request, and the proxy's status line read strictly") {
    const sbx::net::ProxyUrl plain;
    CHECK(sbx::net::connect_request("github.com", 22, plain) ==
          "CONNECT github.com:22 HTTP/1.1\r\nHost: github.com:22\r\n\r\n");
    CHECK(sbx::net::connect_request("::1", 2222, plain) == "CONNECT [::1]:2222 HTTP/1.1\r\nHost: [::1]:2222\r\n\r\n");
    auto secret = sbx::net::parse_proxy_url("http://sbx:s%40cret@127.0.0.1:1");
    REQUIRE(secret);
    const std::string request = sbx::net::connect_request("h", 22, *secret);
    // The proxy's own reader takes it back (sbx/net/http1.hpp, proxy_auth.hpp).
    auto parsed = sbx::net::http1::parse_request(request);
    REQUIRE(parsed);
    using V = sbx::net::proxy_auth::Decision::Verdict;
    CHECK(sbx::net::proxy_auth::check_request(*parsed, "s@cret").verdict == V::allowed);
    CHECK(sbx::net::proxy_auth::check_request(*parsed, "other").verdict == V::wrong);
    auto ok = sbx::net::parse_connect_reply("HTTP/1.1 200 Connection established\r\n\r\n");
    REQUIRE(ok);
    CHECK(ok->status == 200);
    CHECK(ok->reason == "Connection established");
    auto refused = sbx::net::parse_connect_reply("HTTP/1.0 403 Forbidden\x1b[31m\r\nConnection: close\r\n\r\n");
    REQUIRE(refused);
    CHECK(refused->status == 403);
    CHECK(refused->reason == "Forbidden?[31m");
    auto bare = sbx::net::parse_connect_reply("HTTP/1.1 502\r\n\r\n");
    REQUIRE(bare);
    CHECK(bare->reason.empty());
    for (const char* bad : {"", "HTTP/1.1 200 OK", "HTTP/2 200 OK\r\n", "HTTP/1.1 20 OK\r\n", "HTTP/1.1 2000 OK\r\n",
                            "SSH-2.0-OpenSSH\r\n", "HTTP/1.1 2x0 OK\r\n"}) {
        INFO(std::string(bad));
        CHECK_FALSE(sbx::net::parse_connect_reply(bad));
    }
}
