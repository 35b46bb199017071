// filter_fallback(): whether a plan runs when its seccomp program cannot be built.
#include <doctest/doctest.h>

#include "sbx/linux/filter_fallback.hpp"

namespace lx = sbx::linux_sandbox;

TEST_CASE("filter_fallback: a built program is loaded, a missing one is needed unless every Unix socket is open") {
    struct Row {
        bool allow_unix_sockets;
        bool built;
        lx::FilterVerdict verdict;
        std::string_view rule;
    };
    const Row rows[] = {
        {false, true, lx::FilterVerdict::filtered, "filter-built"},
        {true, true, lx::FilterVerdict::filtered, "filter-built"},
        {true, false, lx::FilterVerdict::unfiltered, "every-unix-socket-allowed"},
        {false, false, lx::FilterVerdict::unavailable, "filter-needed"},
    };
    for (const auto& row : rows) {
        CAPTURE(row.allow_unix_sockets);
        CAPTURE(row.built);
        sbx::Plan plan;
        plan.allow_unix_sockets = row.allow_unix_sockets;
        const auto& rule = lx::filter_fallback(plan, row.built);
        CHECK(rule.verdict == row.verdict);
        CHECK(rule.name == row.rule);
    }
}

TEST_CASE("filter_fallback: the unfiltered rule's reason ends sbx-linux's warning, word for word") {
    sbx::Plan plan;
    plan.allow_unix_sockets = true;
    CHECK(lx::filter_fallback(plan, false).why ==
          "the plan allows every Unix socket, so --disable-userns alone keeps namespaces shut");
}
