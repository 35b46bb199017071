// cli_common.cpp - the exit statuses, the error line, and the small facts every
// subcommand of sbx reads (cli_common.hpp).
#include "cli_common.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string_view>

#include "sbx/core/paths.hpp"
#include "sbx/io/settings_files.hpp"

namespace sbx::cli {

int exit_for(const sbx::Error& e) {
    switch (e.code) {
        case sbx::Errc::invalid_settings:
        case sbx::Errc::invalid_plan: return kInvalidInput;
        case sbx::Errc::io_error: return kNoInput;
        case sbx::Errc::invalid_argument: return kUsage;
        default: return kInternal;
    }
}

int report(const sbx::Error& e) {
    std::cerr << "sbx: " << sbx::errc_name(e.code) << ": " << sbx::to_string(e) << "\n";
    return exit_for(e);
}

std::string shell_words(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& word : words) {
        if (!out.empty()) out += ' ';
        const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char ch) {
            return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                   std::string_view("_@%+=:,./-").find(ch) != std::string_view::npos;
        });
        if (plain) {
            out += word;
            continue;
        }
        out += '\'';
        for (char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
        out += '\'';
    }
    return out;
}

std::string absolute(const std::string& p) {
    if (sbx::paths::is_absolute(p)) return sbx::paths::normalize(p);
    char buf[PATH_MAX];
    if (::getcwd(buf, sizeof buf) == nullptr) return sbx::paths::normalize("/" + p);
    return sbx::paths::join(buf, p);
}

sbx::expected<std::string> read_given_file(const std::string& given) {
    auto text = sbx::read_settings_text(absolute(given));
    SBX_TRY(text);
    if (!*text) return sbx::fail(sbx::Error(sbx::Errc::io_error, "no such file").in_file(given));
    return std::move(**text);
}

sbx::expected<std::string> home_directory() {
    if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
        if (!sbx::paths::is_absolute(h))
            return sbx::fail(sbx::Errc::invalid_argument, std::string("HOME is not an absolute path: ") + h);
        return sbx::paths::normalize(h);
    }
    if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr)
        return sbx::paths::normalize(pw->pw_dir);
    return sbx::fail(sbx::Errc::invalid_argument, "HOME is not set and the user has no home directory");
}

std::string temporary_directory() {
    std::string base = "/tmp";
    if (const char* t = std::getenv("TMPDIR"); t != nullptr && sbx::paths::is_absolute(t)) base = sbx::paths::normalize(t);
    std::random_device rd;
    char name[32];
    std::snprintf(name, sizeof name, "sbx-%08x%08x", rd(), rd());
    return sbx::paths::join(base, name);
}

void write_root(sbx::json::Writer& w, const sbx::ProjectRoot& r) {
    w.key("root").value(r.root).key("rootReason").value(sbx::root_reason_name(r.reason));
    w.key("rootWhy").value(sbx::root_why(r)).key("rootFrom");
    if (r.decided_by.empty()) w.null();
    else w.value(r.decided_by);
}

}  // namespace sbx::cli
