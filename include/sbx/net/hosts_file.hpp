// sbx/net/hosts_file.hpp - where a name leads without asking the network.
//
// An address pattern (`127.0.0.1:3000`) reaches that address by any name that
// leads there: `localhost:3000`, a name /etc/hosts gives 127.0.0.1. The proxy
// looks such names up here, in the hosts file and the localhost names of RFC
// 6761, before the rules decide (HostTarget::local_addresses); never through
// DNS, whose lookup would carry the name out of the sandbox before anything
// allowed it. Pure functions of the file's text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/ascii.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/net/address.hpp"

namespace sbx::net {

// The addresses the hosts file `text` (the format of hosts(5): an address,
// then names, white space between, `#` to the end of a line) gives `name`,
// compared without case and without a final dot, in the file's order, each
// once. A line whose address does not parse is skipped, as the resolver skips it.
SBX_INLINE std::vector<Address> hosts_file_addresses(std::string_view text, std::string_view name);

// Where `name` (a host name, canonical: lower case, no final dot) leads
// without asking the network: 127.0.0.1 and ::1 for `localhost` and the names
// under it (RFC 6761 6.3), then what the hosts file `text` gives it.
SBX_INLINE std::vector<Address> local_addresses(std::string_view hosts_text, std::string_view name);

}  // namespace sbx::net

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_NET)

namespace sbx::net {

SBX_INLINE std::vector<Address> hosts_file_addresses(std::string_view text, std::string_view name) {
    auto folded = [](std::string_view s) {
        if (!s.empty() && s.back() == '.') s.remove_suffix(1);
        return ascii_lower(s);
    };
    const std::string wanted = folded(name);
    std::vector<Address> out;
    if (wanted.empty()) return out;
    auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    while (!text.empty()) {
        const auto end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
        if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
        std::vector<std::string_view> fields;
        for (std::size_t i = 0; i < line.size();) {
            while (i < line.size() && is_space(line[i])) ++i;
            const std::size_t start = i;
            while (i < line.size() && !is_space(line[i])) ++i;
            if (i > start) fields.push_back(line.substr(start, i - start));
        }
        if (fields.size() < 2) continue;
        auto address = fields[0].find(':') == std::string_view::npos ? parse_ipv4_dotted(fields[0]) : parse_ipv6(fields[0]);
        if (!address) continue;
        for (std::size_t f = 1; f < fields.size(); ++f) {
            if (folded(fields[f]) != wanted) continue;
            const Address a = unmap(*address);
            bool seen = false;
            for (const auto& o : out) seen = seen || o == a;
            if (!seen) out.push_back(a);
            break;
        }
    }
    return out;
}

SBX_INLINE std::vector<Address> local_addresses(std::string_view hosts_text, std::string_view name) {
    std::vector<Address> out;
    if (name == "localhost" || (name.size() > 10 && name.substr(name.size() - 10) == ".localhost")) {
        out.push_back(Address::v4(127, 0, 0, 1));
        out.push_back(*parse_ipv6("::1"));
    }
    for (const auto& a : hosts_file_addresses(hosts_text, name)) {
        bool seen = false;
        for (const auto& o : out) seen = seen || o == a;
        if (!seen) out.push_back(a);
    }
    return out;
}

}  // namespace sbx::net

#endif
