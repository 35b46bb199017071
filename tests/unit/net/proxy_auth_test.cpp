// Whether a client of the proxy presented the command's secret: base64 read
// strictly, the Basic header's parser, the constant-time comparison, the verdict
// on a request's headers, the 407; and the proxy variables that carry the secret.
#include "sbx/net/proxy_auth.hpp"
#include "sbx/net/proxy_env.hpp"

#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base64_encode.hpp"

namespace {

namespace auth = sbx::net::proxy_auth;
namespace http1 = sbx::net::http1;
using V = auth::Decision::Verdict;

constexpr std::string_view kSecret = "0123456789abcdef0123456789abcdef";

// The verdict on a request whose head is the request line and `headers`.
auth::Decision check(std::string_view headers, std::string_view secret = kSecret) {
    const std::string head = "GET http://a.test/ HTTP/1.1\r\n" + std::string(headers) + "\r\n";
    auto r = http1::parse_request(head);
    REQUIRE(r.has_value());
    return auth::check_request(*r, secret);
}

}  // namespace

TEST_CASE("proxy_auth: base64, strictly") {
    struct Row {
        std::string_view in;
        std::optional<std::string_view> out;
    };
    const Row rows[] = {
        {"", ""},
        {"Zg==", "f"},
        {"Zm8=", "fo"},
        {"Zm9v", "foo"},
        {"Zm9vYg==", "foob"},
        {"Zm9vYmE=", "fooba"},
        {"Zm9vYmFy", "foobar"},
        {"c2J4OnNlY3JldA==", "sbx:secret"},
        {"+/+/", std::string_view("\xfb\xff\xbf", 3)},
        {"AA==", std::string_view("\0", 1)},
        // Refused: no padding, wrong length, other alphabets, white space, padding inside.
        {"Zg", std::nullopt},
        {"Zm8", std::nullopt},
        {"Zm9vY", std::nullopt},
        {"Zg=", std::nullopt},
        {"Zg===", std::nullopt},
        {"Z===", std::nullopt},
        {"====", std::nullopt},
        {"Zg==Zg==", std::nullopt},
        {"Zm=v", std::nullopt},
        {"-_-_", std::nullopt},  // base64url
        {"Zm9v ", std::nullopt},
        {" Zm9v", std::nullopt},
        {"Zm\r\n9v", std::nullopt},
        {"Zm9\x80", std::nullopt},
        // Refused: bits left over that are not zero (not the one encoding of the bytes).
        {"Zh==", std::nullopt},
        {"Zm9=", std::nullopt},
    };
    for (const auto& r : rows) {
        CAPTURE(r.in);
        const auto got = auth::decode_base64(r.in);
        REQUIRE(got.has_value() == r.out.has_value());
        if (got) CHECK(*got == *r.out);
    }
}

TEST_CASE("proxy_auth: the Basic credentials") {
    const auto ok = auth::parse_basic("Basic c2J4OnNlY3JldA==");  // sbx:secret
    REQUIRE(ok.has_value());
    CHECK(ok->user == "sbx");
    CHECK(ok->password == "secret");
    for (std::string_view scheme : {"basic ", "BASIC ", "bAsIc "}) {
        const auto any_case = auth::parse_basic(std::string(scheme) + "c2J4OnNlY3JldA==");
        REQUIRE(any_case.has_value());
        CHECK(any_case->password == "secret");
    }
    const auto colons = auth::parse_basic("Basic dTpwOnc6");  // u:p:w:
    REQUIRE(colons.has_value());
    CHECK(colons->user == "u");
    CHECK(colons->password == "p:w:");
    const auto empty = auth::parse_basic("Basic Og==");  // ":"
    REQUIRE(empty.has_value());
    CHECK(empty->user.empty());
    CHECK(empty->password.empty());

    struct Row {
        std::string_view value;
        std::string_view why;
    };
    const Row rows[] = {
        {"", "the scheme is not Basic"},
        {"Basic", "the scheme is not Basic"},
        {"Bearer c2J4OnNlY3JldA==", "the scheme is not Basic"},
        {"Basi c2J4OnNlY3JldA==", "the scheme is not Basic"},
        {"Basic\tc2J4OnNlY3JldA==", "the scheme is not Basic"},
        {"Digest username=\"sbx\"", "the scheme is not Basic"},
        {"Basic  c2J4OnNlY3JldA==", "not base64"},  // two spaces
        {"Basic c2J4OnNlY3JldA", "not base64"},     // padding left out
        {"Basic c2J4OnNlY3JldA== ", "not base64"},
        {"Basic c2J4OnNlY3JldA==,Basic eA==", "not base64"},
        {"Basic !!!!", "not base64"},
        {"Basic c2J4c2VjcmV0", "no colon"},  // sbxsecret
        {"Basic ", "no colon"},
    };
    for (const auto& r : rows) {
        CAPTURE(r.value);
        const auto got = auth::parse_basic(r.value);
        REQUIRE_FALSE(got.has_value());
        CHECK(got.error().code == sbx::Errc::invalid_argument);
        CHECK_MESSAGE(got.error().message.find(r.why) != std::string::npos, got.error().message);
    }
}

TEST_CASE("proxy_auth: the secret compared whole") {
    CHECK(auth::secret_matches(kSecret, kSecret));
    CHECK_FALSE(auth::secret_matches("", kSecret));
    CHECK_FALSE(auth::secret_matches(kSecret.substr(0, 31), kSecret));          // a prefix
    CHECK_FALSE(auth::secret_matches(std::string(kSecret) + "0", kSecret));     // longer
    CHECK_FALSE(auth::secret_matches(std::string(kSecret) + '\0', kSecret));    // a NUL after it
    CHECK_FALSE(auth::secret_matches("1123456789abcdef0123456789abcdef", kSecret));  // the first byte
    CHECK_FALSE(auth::secret_matches("0123456789abcdef0123456789abcdeF", kSecret));  // the last, in case
    CHECK(auth::secret_matches("", ""));
    CHECK_FALSE(auth::secret_matches("x", ""));
}

TEST_CASE("proxy_auth: a request presents the secret, or gets a 407 saying why") {
    const std::string good = "Proxy-Authorization: Basic " + std::string("c2J4OjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVm") + "\r\n";
    CHECK(check(good).verdict == V::allowed);
    // Any user, the header's name in any case.
    CHECK(check("proxy-authorization: Basic YW55Ym9keTowMTIzNDU2Nzg5YWJjZGVmMDEyMzQ1Njc4OWFiY2RlZg==\r\n").verdict ==
          V::allowed);
    CHECK(check("PROXY-AUTHORIZATION:   basic OjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVm  \r\n").verdict == V::allowed);
    // Without a secret, nothing is checked.
    CHECK(check("", "").verdict == V::allowed);
    CHECK(check("Proxy-Authorization: nonsense\r\n", "").verdict == V::allowed);

    struct Row {
        std::string_view headers;
        V verdict;
    };
    const Row rows[] = {
        {"", V::missing},
        {"Authorization: Basic c2J4OjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVm\r\n", V::missing},  // the origin's header
        {"Proxy-Authorization:\r\n", V::malformed},
        {"Proxy-Authorization: Basic !!\r\n", V::malformed},
        {"Proxy-Authorization: Basic c2J4c2VjcmV0\r\n", V::malformed},  // no colon
        {"Proxy-Authorization: Bearer 0123456789abcdef0123456789abcdef\r\n", V::malformed},
        {"Proxy-Authorization: Basic c2J4OnNlY3JldA==\r\n", V::wrong},  // sbx:secret
        {"Proxy-Authorization: Basic MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY6eA==\r\n", V::wrong},  // SECRET:x
    };
    for (const auto& r : rows) {
        CAPTURE(r.headers);
        const auto d = check(r.headers);
        CHECK(d.verdict == r.verdict);
        CHECK_FALSE(d.why.empty());
    }
    // Twice, even the right one twice: which would count is not for the proxy to guess.
    const auto twice = check(good + good);
    CHECK(twice.verdict == V::malformed);
    CHECK(twice.why == "more than one Proxy-Authorization header");
}

TEST_CASE("proxy_auth: the 407") {
    const std::string answer = auth::required_response("no Proxy-Authorization header");
    CHECK(answer.starts_with("HTTP/1.1 407 Proxy Authentication Required\r\n"));
    CHECK(answer.find("\r\nConnection: close\r\n") != std::string::npos);
    CHECK(answer.find("\r\nProxy-Authenticate: Basic realm=\"sbx\"\r\n") != std::string::npos);
    CHECK(answer.ends_with("\r\n\r\nsbx: the proxy serves only its command, whose proxy variables hold the credentials: "
                           "no Proxy-Authorization header\n"));
    CHECK(http1::head_end(answer, 0) == answer.find("\r\n\r\n") + 4);
}

TEST_CASE("proxy_env: the proxy variables, with the secret and without") {
    const auto without = sbx::net::proxy_environment(3128, 1080);
    const std::map<std::string, std::string> plain(without.begin(), without.end());
    CHECK(without.size() == 10);
    CHECK(plain.at("HTTP_PROXY") == "http://127.0.0.1:3128");
    CHECK(plain.at("https_proxy") == "http://127.0.0.1:3128");
    CHECK(plain.at("grpc_proxy") == "http://127.0.0.1:3128");
    CHECK(plain.at("ALL_PROXY") == "socks5h://127.0.0.1:1080");
    CHECK(plain.at("NO_PROXY").empty());
    CHECK(plain.at("NODE_USE_ENV_PROXY") == "1");
    CHECK(sbx::net::proxy_environment(3128, 1080, "") == without);

    const auto with = sbx::net::proxy_environment(3128, 1080, kSecret);
    REQUIRE(with.size() == without.size());
    const std::string http = "http://sbx:" + std::string(kSecret) + "@127.0.0.1:3128";
    const std::string socks = "socks5h://sbx:" + std::string(kSecret) + "@127.0.0.1:1080";
    for (std::size_t i = 0; i < with.size(); ++i) {
        CAPTURE(with[i].first);
        CHECK(with[i].first == without[i].first);
        const std::string& was = without[i].second;
        if (was.starts_with("http://")) CHECK(with[i].second == http);
        else if (was.starts_with("socks5h://")) CHECK(with[i].second == socks);
        else CHECK(with[i].second == was);  // NO_PROXY, NODE_USE_ENV_PROXY
    }
    // A secret that is not URL-safe stays one piece of user information.
    const std::map<std::string, std::string> odd = [] {
        const auto v = sbx::net::proxy_environment(1, 2, "a@b:c/d%e f~g");
        return std::map<std::string, std::string>(v.begin(), v.end());
    }();
    CHECK(odd.at("HTTP_PROXY") == "http://sbx:a%40b%3Ac%2Fd%25e%20f~g@127.0.0.1:1");
    CHECK(sbx::net::percent_encoded("AZaz09-._~") == "AZaz09-._~");
    CHECK(sbx::net::percent_encoded(std::string_view("\0\xff", 2)) == "%00%FF");
}

TEST_CASE("proxy_auth: encode_base64 writes what decode_base64 and the tests' own encoder agree on") {
    std::string bytes;
    for (int n = 0; n < 40; ++n) {
        CAPTURE(n);
        const std::string encoded = sbx::net::proxy_auth::encode_base64(bytes);
        CHECK(encoded == sbx_test::base64(bytes));
        CHECK(sbx::net::proxy_auth::decode_base64(encoded) == bytes);
        bytes += static_cast<char>(n * 37 + 200);
    }
    CHECK(sbx::net::proxy_auth::encode_base64("sbx:secret") == "c2J4OnNlY3JldA==");
    CHECK(sbx::net::proxy_auth::basic_value("sbx", "a:b") == "Basic " + sbx_test::base64("sbx:a:b"));
}
