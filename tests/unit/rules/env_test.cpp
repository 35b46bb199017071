// command_environment(): which variables reach the command, which go to the
// in-sandbox stage only, and which stay out, each with the reason it names.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/fs_view.hpp"
#include "sbx/rules/env.hpp"
#include "sbx/settings/policy.hpp"
#include "sbx/settings/settings.hpp"

namespace {

constexpr std::string_view kTmp = "/tmp/sbx-0123456789abcdef";
constexpr std::string_view kUserFile = "/home/u/.claude/settings.json";

// The environment a policy and a request give; the request must be valid.
sbx::CommandEnvironment environment(const sbx::Policy& policy, const std::vector<std::string>& vars,
                                    const std::vector<std::string>& pass = {}) {
    auto env = sbx::command_environment(policy, sbx::EnvRequest{vars, pass, std::string(kTmp)});
    REQUIRE_MESSAGE(env.has_value(), (env ? std::string() : sbx::to_string(env.error())));
    return std::move(*env);
}

// The same under a policy with no credentials.envVars.
sbx::CommandEnvironment plain_environment(const std::vector<std::string>& vars, const std::vector<std::string>& pass = {}) {
    return environment(sbx::Policy{}, vars, pass);
}

// The value of `name` in `vars`, or "<unset>".
std::string value_of(const std::vector<sbx::EnvVar>& vars, std::string_view name) {
    for (const auto& v : vars)
        if (v.name == name) return v.value;
    return "<unset>";
}

bool has(const std::vector<sbx::EnvVar>& vars, std::string_view name) { return value_of(vars, name) != "<unset>"; }

std::size_t count(const std::vector<sbx::EnvVar>& vars, std::string_view name) {
    return static_cast<std::size_t>(
        std::count_if(vars.begin(), vars.end(), [&](const sbx::EnvVar& v) { return v.name == name; }));
}

// The reason `name` was left out, or "<kept>".
std::string why_removed(const sbx::CommandEnvironment& e, std::string_view name) {
    for (const auto& r : e.removed)
        if (r.name == name) return r.why;
    return "<kept>";
}

bool removed(const sbx::CommandEnvironment& e, std::string_view name) { return why_removed(e, name) != "<kept>"; }

std::vector<std::string> names(const std::vector<sbx::EnvVar>& vars) {
    std::vector<std::string> out;
    for (const auto& v : vars) out.push_back(v.name);
    return out;
}

// A policy whose credentials.envVars are `vars`, all from the user's file.
sbx::Policy credential_policy(const std::vector<std::string>& vars) {
    sbx::Policy p;
    std::size_t i = 0;
    for (const auto& v : vars) {
        sbx::Source src{sbx::LayerKind::user, sbx::FileName(std::string(kUserFile)),
                        "sandbox.credentials.envVars[" + std::to_string(i++) + "]"};
        p.credentials.env_vars.push_back(sbx::Sourced<std::string>{v, src});
    }
    return p;
}

// Every other letter upper-cased, starting with the first: "token" -> "ToKeN".
std::string mixed_case(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        const bool up = i % 2 == 0;
        if (up && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        if (!up && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        out += c;
    }
    return out;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

}  // namespace

TEST_CASE("env: every secret name part matched anywhere, in any case and anywhere in the name, keeps a variable out") {
    // Fillers hold none of the parts, so the part found is the one put in.
    for (const auto& p : sbx::kSecretNameParts) {
        if (p.match != sbx::NameMatch::anywhere) continue;
        const std::string upper(p.part);
        for (const std::string& spelled : {upper, lower(upper), mixed_case(upper)}) {
            for (const std::string& name : {spelled, spelled + "_ZZ", "ZZ_" + spelled, "ZZ_" + spelled + "_ZZ",
                                            "zz" + spelled + "zz"}) {
                CAPTURE(name);
                auto e = plain_environment({name + "=hunter2", "PATH=/usr/bin"});
                CHECK_FALSE(has(e.env, name));
                CHECK_FALSE(has(e.loader, name));
                const auto why = why_removed(e, name);
                CHECK(why.find("the name contains " + upper + ",") != std::string::npos);
                CHECK(why.find("--env " + name) != std::string::npos);
                CHECK(value_of(e.env, "PATH") == "/usr/bin");
            }
        }
    }
}

TEST_CASE("env: names that come close to a secret part pass") {
    auto e = plain_environment({"KE=1", "SECRE_T=2", "TOKE=3", "PASSWOR=4", "PASSWDX=5", "AUT=6", "COOKI=7", "MONKEY_X=8"});
    // PASSWDX holds PASSWD and MONKEY_X holds KEY: those two stay out.
    CHECK(names(e.env) == std::vector<std::string>{"KE", "SECRE_T", "TOKE", "PASSWOR", "AUT", "COOKI", "TMPDIR"});
    CHECK(why_removed(e, "PASSWDX").find("contains PASSWD,") != std::string::npos);
    CHECK(why_removed(e, "MONKEY_X").find("contains KEY,") != std::string::npos);
    CHECK(e.removed.size() == 2);
}

TEST_CASE("env: the secret parts, each with its reason") {
    std::vector<std::string_view> parts;
    for (const auto& p : sbx::kSecretNameParts) {
        parts.push_back(p.part);
        CHECK_FALSE(p.reason.empty());
    }
    CHECK(parts == std::vector<std::string_view>{"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL",
                                                 "PRIVATE", "AUTH", "SESSION", "COOKIE", "JWT", "DSN", "PASSPHRASE",
                                                 "PWD", "PAT"});
    auto part_of = [](std::string_view name) {
        const auto* p = sbx::secret_name_part(name);
        return p == nullptr ? std::string_view() : p->part;
    };
    CHECK(part_of("GIT_AUTHOR_NAME") == "AUTH");
    CHECK(part_of("XDG_SESSION_TYPE") == "SESSION");
    CHECK(part_of("CI_JOB_JWT") == "JWT");
    CHECK(part_of("SENTRY_DSN") == "DSN");
    CHECK(part_of("GPG_PASSPHRASE") == "PASSPHRASE");
    CHECK(part_of("PATH").empty());
    CHECK(part_of("").empty());
}

TEST_CASE("env: PWD marks a secret at the end of a name only, and never PWD or OLDPWD themselves") {
    auto e = plain_environment({"MYSQL_PWD=hunter2", "db_pwd=x", "PWD=/r", "OLDPWD=/home/u", "PWD_DIR=/x", "PATH=/bin"});
    CHECK_FALSE(has(e.env, "MYSQL_PWD"));
    CHECK(why_removed(e, "MYSQL_PWD").find("the name ends with PWD,") != std::string::npos);
    CHECK_FALSE(has(e.env, "db_pwd"));
    CHECK(value_of(e.env, "PWD") == "/r");
    CHECK(value_of(e.env, "OLDPWD") == "/home/u");
    CHECK(has(e.env, "PWD_DIR"));
}

TEST_CASE("env: PAT marks a secret as a word of its own, not inside PATH or PATTERN") {
    auto e = plain_environment({"GH_PAT=ghp_x", "PAT=y", "gitlab_pat_2=z", "PATH=/bin", "PATTERN=*.c", "MYPATH=/m",
                                "SPAT=1"});
    for (const char* out : {"GH_PAT", "PAT", "gitlab_pat_2"}) {
        CAPTURE(std::string(out));
        CHECK_FALSE(has(e.env, out));
        CHECK(why_removed(e, out).find("the name has the word PAT,") != std::string::npos);
    }
    for (const char* in : {"PATH", "PATTERN", "MYPATH", "SPAT"}) {
        CAPTURE(std::string(in));
        CHECK(has(e.env, in));
    }
}

TEST_CASE("env: a value with credentials in a URL stays out; a URL without a password passes") {
    auto e = plain_environment({"DATABASE_URL=postgres://user:pass@db.internal:5432/app",
                                "MIRRORS=https://a.example/x https://bob:s3cret@b.example/y",
                                "REDIS=redis://:hunter2@cache:6379",
                                "REPO=ssh://git@github.com/o/r.git", "HOMEPAGE=https://example.com/a:b@c",
                                "ANON_URL=ftp://anon:@ftp.example/", "NOTE=see http://x: @y",
                                "PATH=/bin"});
    for (const char* out : {"DATABASE_URL", "MIRRORS", "REDIS"}) {
        CAPTURE(std::string(out));
        CHECK_FALSE(has(e.env, out));
        CHECK(why_removed(e, out).find("credentials in a URL") != std::string::npos);
        CHECK(why_removed(e, out).find("--env " + std::string(out)) != std::string::npos);
    }
    // A user without a password, '@' in the path, an empty password, a space in the authority.
    for (const char* in : {"REPO", "HOMEPAGE", "ANON_URL", "NOTE"}) {
        CAPTURE(std::string(in));
        CHECK(has(e.env, in));
    }
    auto passed = environment(credential_policy({}), {"DATABASE_URL=postgres://u:p@db/x", "PATH=/bin"},
                              {"DATABASE_URL"});
    CHECK(value_of(passed.env, "DATABASE_URL") == "postgres://u:p@db/x");
}

TEST_CASE("env: credentials.envVars names stay out, with the file and key that list them") {
    auto policy = credential_policy({"DATABASE_URL", "GITHUB_TOKEN"});
    auto e = environment(policy, {"DATABASE_URL=postgres://u:p@db/x", "GITHUB_TOKEN=ghp_x", "PATH=/bin"});
    CHECK_FALSE(has(e.env, "DATABASE_URL"));
    CHECK(why_removed(e, "DATABASE_URL") ==
          "listed in credentials.envVars [/home/u/.claude/settings.json sandbox.credentials.envVars[0]]");
    // A listed name that also looks secret is reported for the listing, which is the stronger reason.
    CHECK(why_removed(e, "GITHUB_TOKEN") ==
          "listed in credentials.envVars [/home/u/.claude/settings.json sandbox.credentials.envVars[1]]");
    CHECK(names(e.env) == std::vector<std::string>{"PATH", "TMPDIR"});
    // Names are compared exactly: a listed name in another case is another variable.
    auto other_case = environment(policy, {"database_url=x"});
    CHECK(has(other_case.env, "database_url"));
}

TEST_CASE("env: credentials.envVars from a settings file, through parse_settings and merge") {
    sbx::SettingsSource src{sbx::LayerKind::project, "/r/.claude/settings.json", {"/home/u", "/r"}, "/r"};
    auto parsed = sbx::parse_settings(R"J({"sandbox": {"credentials": {"envVars": ["PGURL", {"name": "OPENAI_BASE"}]}}})J",
                                       src);
    REQUIRE_MESSAGE(parsed.has_value(), (parsed ? std::string() : sbx::to_string(parsed.error())));
    std::vector<sbx::Settings> layers;
    layers.push_back(std::move(*parsed));
    sbx::MemoryFs fs;
    auto policy = sbx::merge(std::move(layers), {}, fs);
    REQUIRE_MESSAGE(policy.has_value(), (policy ? std::string() : sbx::to_string(policy.error())));
    auto e = environment(*policy, {"PGURL=postgres://db", "OPENAI_BASE=https://x", "LANG=C.UTF-8"});
    CHECK(why_removed(e, "PGURL") == "listed in credentials.envVars [/r/.claude/settings.json sandbox.credentials.envVars[0]]");
    CHECK(why_removed(e, "OPENAI_BASE") ==
          "listed in credentials.envVars [/r/.claude/settings.json sandbox.credentials.envVars[1]]");
    CHECK(names(e.env) == std::vector<std::string>{"LANG", "TMPDIR"});
}

TEST_CASE("env: --env NAME passes a variable that would stay out") {
    auto policy = credential_policy({"DATABASE_URL"});
    auto e = environment(policy, {"AWS_SECRET_ACCESS_KEY=abc", "DATABASE_URL=pg", "XDG_SESSION_TYPE=x11", "HOME=/home/u"},
                         {"DATABASE_URL", "XDG_SESSION_TYPE"});
    CHECK(value_of(e.env, "DATABASE_URL") == "pg");
    CHECK(value_of(e.env, "XDG_SESSION_TYPE") == "x11");
    CHECK_FALSE(removed(e, "DATABASE_URL"));
    CHECK_FALSE(removed(e, "XDG_SESSION_TYPE"));
    CHECK(removed(e, "AWS_SECRET_ACCESS_KEY"));  // not passed
    // Passing keeps the environment's order.
    CHECK(names(e.env) == std::vector<std::string>{"DATABASE_URL", "XDG_SESSION_TYPE", "HOME", "TMPDIR"});
    // Passing an ordinary variable changes nothing.
    auto plain = plain_environment({"HOME=/home/u"}, {"HOME"});
    CHECK(names(plain.env) == std::vector<std::string>{"HOME", "TMPDIR"});
    CHECK(plain.removed.empty());
}

TEST_CASE("env: a passed name that is not set, or is no name, is an INVALID_ARGUMENT") {
    const std::vector<std::string> vars{"HOME=/home/u", "EMPTY=", "NOEQUALS", "=orphan"};
    struct Case {
        std::string name;
        const char* message_part;
    };
    const Case cases[] = {
        {"MISSING", "not set"},
        {"HOM", "not set"},      // a prefix of a set name
        {"HOME_X", "not set"},   // longer than a set name
        {"NOEQUALS", "not set"}, // an entry without '=' sets nothing
        {"", "not a variable name"},
        {"HOME=/home/u", "not a variable name"},
        {"A=B", "not a variable name"},
        {"=orphan", "not a variable name"},
        {std::string("HO\0ME", 5), "not a variable name"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.name);
        const std::vector<std::string> pass{c.name};
        auto e = sbx::command_environment(sbx::Policy{}, sbx::EnvRequest{vars, pass, std::string(kTmp)});
        REQUIRE_FALSE(e.has_value());
        CHECK(e.error().code == sbx::Errc::invalid_argument);
        CHECK(e.error().message.find(c.message_part) != std::string::npos);
    }
    // A variable set to the empty string is set.
    const std::vector<std::string> pass{"EMPTY"};
    auto e = sbx::command_environment(sbx::Policy{}, sbx::EnvRequest{vars, pass, std::string(kTmp)});
    REQUIRE(e.has_value());
    CHECK(value_of(e->env, "EMPTY").empty());
    // One bad name among good ones fails the whole request.
    const std::vector<std::string> mixed{"HOME", "NOPE"};
    CHECK_FALSE(sbx::command_environment(sbx::Policy{}, sbx::EnvRequest{vars, mixed, std::string(kTmp)}).has_value());
}

TEST_CASE("env: loader variables go to the in-sandbox stage, never to the command's environment") {
    auto e = plain_environment({"PATH=/bin", "LD_PRELOAD=/x/evil.so", "LD_LIBRARY_PATH=/x/lib", "LD_AUDIT=/x/audit.so",
                          "GCONV_PATH=/x/gconv", "LD_BIND_NOW=1", "HOME=/home/u"});
    CHECK(names(e.env) == std::vector<std::string>{"PATH", "HOME", "TMPDIR"});
    CHECK(e.loader == std::vector<sbx::EnvVar>{{"LD_PRELOAD", "/x/evil.so"},
                                               {"LD_LIBRARY_PATH", "/x/lib"},
                                               {"LD_AUDIT", "/x/audit.so"},
                                               {"GCONV_PATH", "/x/gconv"},
                                               {"LD_BIND_NOW", "1"}});
    CHECK(e.removed.empty());
    for (const auto* name : {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GCONV_PATH"}) {
        CAPTURE(name);
        CHECK(sbx::is_loader_variable(name));
        CHECK_FALSE(has(e.env, name));
    }
    // The loader reads upper-case names only; these are ordinary variables.
    CHECK_FALSE(sbx::is_loader_variable("ld_preload"));
    CHECK_FALSE(sbx::is_loader_variable("GCONV_PATHS"));
    CHECK_FALSE(sbx::is_loader_variable("XLD_PRELOAD"));
}

TEST_CASE("env: a loader variable whose name looks secret stays out unless passed, then goes to the loader") {
    auto kept_out = plain_environment({"LD_TOKEN=t", "LD_PRELOAD=/x.so"});
    CHECK_FALSE(has(kept_out.env, "LD_TOKEN"));
    CHECK_FALSE(has(kept_out.loader, "LD_TOKEN"));
    CHECK(why_removed(kept_out, "LD_TOKEN").find("contains TOKEN,") != std::string::npos);
    CHECK(has(kept_out.loader, "LD_PRELOAD"));

    auto passed = plain_environment({"LD_TOKEN=t"}, {"LD_TOKEN"});
    CHECK(value_of(passed.loader, "LD_TOKEN") == "t");
    CHECK_FALSE(has(passed.env, "LD_TOKEN"));
    CHECK(passed.removed.empty());

    // Listed in credentials.envVars: the same.
    auto policy = credential_policy({"LD_PRELOAD"});
    auto listed = environment(policy, {"LD_PRELOAD=/x.so"});
    CHECK(listed.loader.empty());
    CHECK(why_removed(listed, "LD_PRELOAD").find("credentials.envVars") != std::string::npos);
    auto listed_passed = environment(policy, {"LD_PRELOAD=/x.so"}, {"LD_PRELOAD"});
    CHECK(value_of(listed_passed.loader, "LD_PRELOAD") == "/x.so");
}

TEST_CASE("env: TMPDIR is the request's, once, last") {
    auto e = plain_environment({"TMPDIR=/var/tmp", "PATH=/bin", "TMPDIR=/other"});
    CHECK(count(e.env, "TMPDIR") == 1);
    CHECK(value_of(e.env, "TMPDIR") == kTmp);
    CHECK(names(e.env) == std::vector<std::string>{"PATH", "TMPDIR"});
    CHECK(e.removed.empty());  // replaced, not removed

    auto unset = plain_environment({"PATH=/bin"});
    CHECK(count(unset.env, "TMPDIR") == 1);
    CHECK(value_of(unset.env, "TMPDIR") == kTmp);

    // Passing TMPDIR does not keep the caller's.
    auto passed = plain_environment({"TMPDIR=/var/tmp"}, {"TMPDIR"});
    CHECK(count(passed.env, "TMPDIR") == 1);
    CHECK(value_of(passed.env, "TMPDIR") == kTmp);

    // Only the exact name: tmpdir and TMPDIR2 are ordinary variables.
    auto others = plain_environment({"tmpdir=/a", "TMPDIR2=/b"});
    CHECK(value_of(others.env, "tmpdir") == "/a");
    CHECK(value_of(others.env, "TMPDIR2") == "/b");
}

TEST_CASE("env: the first of a duplicated name wins, for every kind of variable") {
    auto policy = credential_policy({"DATABASE_URL"});
    auto e = environment(policy, {"HOME=/first", "LD_PRELOAD=/first.so", "HOME=/second", "LD_PRELOAD=/second.so",
                                  "API_KEY=one", "API_KEY=two", "DATABASE_URL=a", "DATABASE_URL=b"});
    CHECK(e.env == std::vector<sbx::EnvVar>{{"HOME", "/first"}, {"TMPDIR", std::string(kTmp)}});
    CHECK(e.loader == std::vector<sbx::EnvVar>{{"LD_PRELOAD", "/first.so"}});
    // A removed name is reported once.
    CHECK(e.removed.size() == 2);
    auto passed = plain_environment({"API_KEY=one", "API_KEY=two"}, {"API_KEY"});
    CHECK(value_of(passed.env, "API_KEY") == "one");
    CHECK(count(passed.env, "API_KEY") == 1);
}

TEST_CASE("env: entries without '=' or with an empty name are ignored") {
    auto e = plain_environment({"NOEQUALS", "=value", "=", "", "PATH=/bin", "EMPTY=", "A==b"});
    CHECK(e.env == std::vector<sbx::EnvVar>{{"PATH", "/bin"}, {"EMPTY", ""}, {"A", "=b"}, {"TMPDIR", std::string(kTmp)}});
    CHECK(e.removed.empty());
    CHECK(e.loader.empty());
}

TEST_CASE("env: a name or value that is not valid UTF-8 is removed with a reason") {
    const std::string bad_value = "LANG=caf\xe9";                 // Latin-1
    const std::string bad_name = "CAF\xc3\x28=1";                 // a broken two-byte sequence
    const std::string overlong = "SLASH=\xc0\xaf";                // an overlong '/'
    const std::string surrogate = "SUR=\xed\xa0\x80";             // a UTF-16 surrogate
    const std::string good = "NAME=\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80";  // real UTF-8 passes
    auto e = plain_environment({bad_value, bad_name, overlong, surrogate, good, "PATH=/bin"});
    for (const auto& name : {std::string("LANG"), std::string("CAF\xc3\x28"), std::string("SLASH"), std::string("SUR")}) {
        CAPTURE(name);
        CHECK_FALSE(has(e.env, name));
        CHECK(why_removed(e, name) == "its name or value is not valid UTF-8");
    }
    CHECK(value_of(e.env, "NAME") == "\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80");
    CHECK(names(e.env) == std::vector<std::string>{"NAME", "PATH", "TMPDIR"});
    // Passing does not help: such a variable cannot be written into a plan unchanged.
    auto passed = plain_environment({bad_value}, {"LANG"});
    CHECK(removed(passed, "LANG"));
    // Nor does being a loader variable.
    auto loader = plain_environment({"LD_PRELOAD=/x\xff.so"});
    CHECK(loader.loader.empty());
    CHECK(removed(loader, "LD_PRELOAD"));
}

TEST_CASE("env: ordinary variables reach the command in their order, values unchanged") {
    auto e = plain_environment({"PATH=/usr/local/bin:/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "TERM=xterm-256color",
                          "EDITOR=vi -n", "MULTI=a\nb", "SPACES=  x  "});
    CHECK(e.env == std::vector<sbx::EnvVar>{{"PATH", "/usr/local/bin:/usr/bin"},
                                            {"HOME", "/home/u"},
                                            {"LANG", "C.UTF-8"},
                                            {"TERM", "xterm-256color"},
                                            {"EDITOR", "vi -n"},
                                            {"MULTI", "a\nb"},
                                            {"SPACES", "  x  "},
                                            {"TMPDIR", std::string(kTmp)}});
    CHECK(e.loader.empty());
    CHECK(e.removed.empty());
    CHECK(e.warnings.empty());
    // An empty environment still gets TMPDIR.
    auto empty = plain_environment({});
    CHECK(empty.env == std::vector<sbx::EnvVar>{{"TMPDIR", std::string(kTmp)}});
}

TEST_CASE("env: removed variables are reported in the environment's order") {
    auto policy = credential_policy({"PGURL"});
    auto e = environment(policy, {"B_TOKEN=1", "PGURL=2", "A_KEY=3", "PATH=/bin", "X=\xff"});
    std::vector<std::string> order;
    for (const auto& r : e.removed) order.push_back(r.name);
    CHECK(order == std::vector<std::string>{"B_TOKEN", "PGURL", "A_KEY", "X"});
}

TEST_CASE("env: secrets in values: a token as an http(s) URL's user, password= parameters, Authorization headers") {
    const std::vector<std::string> out = {
        "REMOTE=https://ghp_abc123@github.com/o/r.git",
        "MIRROR=http://TOKEN@proxy.internal:8080",
        "PG=postgres://db/app?sslmode=require&password=hunter2",
        "JDBC=jdbc:mysql://db:3306/app?user=app&password=hunter2",
        "MSSQL=Server=db;Database=app;User Id=app;Password=hunter2;",
        "ODBC=DRIVER={x};SERVER=db; PWD=hunter2",
        "HOOK=https://hooks.example/x?token=abc",
        "BLOB=https://acct.blob.core.windows.net/c?sv=2022&sas=abc",
        "GIT_CONFIG_VALUE_0=Authorization: Bearer abc",
        "GIT_CONFIG_PARAMETERS='http.https://github.com/.extraheader'='AUTHORIZATION: basic eDphYmM='",
    };
    std::vector<std::string> all = out;
    const std::vector<std::string> in = {
        "REPO=ssh://git@github.com/o/r.git",  // a user name, but no http(s): git's own account
        "SITE=https://github.com/o/r",
        "Q=https://example.com/search?q=password",  // the word, not a parameter
        "EMPTY=https://db/x?password=",            // no value
        "LS_COLORS=rs=0:di=01;34:ln=01;36",
        "PS1=\\u@\\h:\\w\\$ ",
        "GIT_CONFIG_VALUE_1=main",
    };
    all.insert(all.end(), in.begin(), in.end());
    auto e = plain_environment(all);
    for (const auto& kv : out) {
        const std::string name = kv.substr(0, kv.find('='));
        CAPTURE(name);
        CHECK_FALSE(has(e.env, name));
        CHECK(why_removed(e, name).find("the value holds ") != std::string::npos);
        CHECK(why_removed(e, name).find("--env " + name) != std::string::npos);
        // The reason names the form, never the value.
        CHECK(why_removed(e, name).find("hunter2") == std::string::npos);
        CHECK(why_removed(e, name).find("abc") == std::string::npos);
    }
    for (const auto& kv : in) {
        const std::string name = kv.substr(0, kv.find('='));
        CAPTURE(name);
        CHECK(has(e.env, name));
    }
    CHECK(why_removed(e, "MSSQL").find("a PASSWORD= parameter") != std::string::npos);
    CHECK(why_removed(e, "GIT_CONFIG_VALUE_0").find("an HTTP Authorization header") != std::string::npos);
    CHECK(why_removed(e, "REMOTE").find("a user name in an http(s) URL") != std::string::npos);
}

TEST_CASE("env: names documented as no secret pass (their values still looked at); SSH_AUTH_SOCK stays out") {
    auto e = plain_environment({"GIT_AUTHOR_NAME=Ana", "GIT_AUTHOR_EMAIL=ana@example.com", "GIT_COMMITTER_NAME=Ana",
                                "GIT_COMMITTER_EMAIL=ana@example.com", "XDG_SESSION_TYPE=wayland",
                                "GIT_AUTHOR_DATE=https://x:y@z", "SSH_AUTH_SOCK=/run/user/1000/ssh", "git_author_name=x"});
    for (const char* in : {"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
                           "XDG_SESSION_TYPE"}) {
        CAPTURE(std::string(in));
        CHECK(has(e.env, in));
    }
    CHECK(why_removed(e, "GIT_AUTHOR_DATE").find("credentials in a URL") != std::string::npos);
    CHECK(why_removed(e, "SSH_AUTH_SOCK").find("contains AUTH") != std::string::npos);
    CHECK(why_removed(e, "git_author_name").find("contains AUTH") != std::string::npos);  // the name exactly
    for (const auto& n : sbx::kNotSecretNames) {
        CHECK(sbx::secret_name_part(n.name) != nullptr);  // each is there for a reason
        CHECK_FALSE(n.reason.empty());
    }
}

TEST_CASE("env: SSH_AUTH_SOCK reaches the command where the settings open the agent's socket, and only there") {
    const std::vector<std::string> vars{"SSH_AUTH_SOCK=/run/user/1000/ssh/agent.sock", "PATH=/bin"};
    // Not opened: left out as a name that may hold a secret.
    CHECK_FALSE(has(plain_environment(vars).env, "SSH_AUTH_SOCK"));
    // The socket listed, or a folder above it, or every socket: it passes as it is.
    for (const char* entry : {"/run/user/1000/ssh/agent.sock", "/run/user/1000/ssh", "/run/user/1000/"}) {
        CAPTURE(entry);
        sbx::Policy p;
        p.network.allow_unix_sockets.push_back({sbx::paths::normalize(entry), {}});
        const auto env = environment(p, vars);
        CHECK(value_of(env.env, "SSH_AUTH_SOCK") == "/run/user/1000/ssh/agent.sock");
        CHECK(env.removed.empty());
    }
    sbx::Policy all;
    all.network.allow_all_unix_sockets.value = true;
    CHECK(has(environment(all, vars).env, "SSH_AUTH_SOCK"));
    // Another socket listed, or a value that is no absolute path: left out.
    sbx::Policy other;
    other.network.allow_unix_sockets.push_back({"/run/docker.sock", {}});
    CHECK_FALSE(has(environment(other, vars).env, "SSH_AUTH_SOCK"));
    sbx::Policy listed;
    listed.network.allow_unix_sockets.push_back({"/run/user/1000/ssh/agent.sock", {}});
    CHECK_FALSE(has(environment(listed, {"SSH_AUTH_SOCK=agent.sock"}).env, "SSH_AUTH_SOCK"));
    CHECK_FALSE(has(environment(listed, {"SSH_AUTH_SOCK=/run/user/1000/ssh/agent.sock/../../x"}).env, "SSH_AUTH_SOCK"));
}
