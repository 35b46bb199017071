// sbx/plan/plan_json.hpp - a plan written as the versioned JSON document of docs/plan.md.
//
// to_json() is the only writer of the document read_plan.hpp reads: keys in a
// fixed order, optional ones left out when empty, so the same plan gives the
// same bytes, and a plan read back is written again as it was.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/inline.hpp"
#include "sbx/core/json_write.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/net/forwards.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/rules/protected_paths.hpp"

namespace sbx {

namespace detail {

SBX_INLINE void write_identity(json::Writer& w, const Identity& id);

SBX_INLINE void write_host_rules(json::Writer& w, const std::vector<net::HostRule>& rules);

SBX_INLINE void write_network(json::Writer& w, const NetworkPlan& n);

// Answers held for a session (network.answers, and answers_file_json):
// [{"host": "pypi.org", "port": 443, "answer": "allow"}], port left out for
// every port.
SBX_INLINE void write_host_answers(json::Writer& w, const std::vector<net::HostAnswer>& answers);


// "command": the argv, the directory, the environment (the loader's apart), the
// variables removed, the descriptors passed.
SBX_INLINE void write_command(json::Writer& w, const Plan& p);

// "filesystem": the mounts, the placeholders, what is renamed after the run,
// git's exclude file, the tool cache home, the audit and its record, the rules.
SBX_INLINE void write_filesystem(json::Writer& w, const Plan& p);

}  // namespace detail

// The plan as the versioned JSON document of docs/plan.md.
SBX_INLINE std::string to_json(const Plan& p);

// An answers file (sbx run --answers; parse_host_answers reads it):
// {"answers": [...]}, on one line.
SBX_INLINE std::string answers_file_json(const std::vector<net::HostAnswer>& answers);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_PLAN)

namespace sbx::detail {

SBX_INLINE void write_identity(json::Writer& w, const Identity& id) {
    w.begin_object().key("exists").value(id.exists);
    if (id.exists) {
        std::string_view type = id.type == FileType::directory ? "directory"
                                : id.type == FileType::regular ? "file"
                                : id.type == FileType::symlink ? "symlink"
                                                               : "other";
        w.key("type").value(type).key("dev").value(id.dev).key("ino").value(id.ino).key("nlink").value(id.nlink);
    }
    w.end_object();
}

SBX_INLINE void write_host_rules(json::Writer& w, const std::vector<net::HostRule>& rules) {
    w.begin_array();
    for (const auto& r : rules) {
        w.begin_object().key("pattern").value(r.text).key("source");
        write_source(w, r.source);
        w.end_object();
    }
    w.end_array();
}

SBX_INLINE void write_host_answers(json::Writer& w, const std::vector<net::HostAnswer>& answers) {
    w.begin_array();
    for (const auto& a : answers) {
        w.begin_object().key("host").value(a.host);
        if (a.port != 0) w.key("port").value(static_cast<int>(a.port));
        w.key("answer").value(a.allow ? "allow" : "deny").end_object();
    }
    w.end_array();
}

SBX_INLINE void write_network(json::Writer& w, const NetworkPlan& n) {
    w.key("network").begin_object().key("mode").value(n.mode == NetworkMode::proxy ? "proxy" : "none");
    if (n.mode == NetworkMode::proxy) {
        w.key("allowed");
        write_host_rules(w, n.rules.allowed);
        w.key("denied");
        write_host_rules(w, n.rules.denied);
        w.key("strict").value(n.rules.strict);
        if (!n.strict_why.empty()) w.key("strictWhy").value(n.strict_why);
        if (n.rules.local) {
            w.key("local").value(true);
            if (!n.local_why.empty()) w.key("localWhy").value(n.local_why);
        }
        if (n.rules.on_unknown) w.key("onUnknownHost").value(net::unknown_host_name(*n.rules.on_unknown));
        if (n.call.hosts) {
            w.key("callHosts");
            write_host_rules(w, *n.call.hosts);
        }
        if (n.call.on_unknown) w.key("callOnUnknownHost").value(net::unknown_host_name(*n.call.on_unknown));
        if (!n.call.answers.empty()) {
            w.key("answers");
            write_host_answers(w, n.call.answers);
        }
        if (!n.forwards.empty()) {
            w.key("forwards").begin_array();
            for (const auto& f : n.forwards)
                w.begin_object()
                    .key("listen")
                    .value(net::to_string(f.listen))
                    .key("port")
                    .value(static_cast<int>(f.port))
                    .key("target")
                    .value(f.target)
                    .key("targetPort")
                    .value(static_cast<int>(f.target_port))
                    .key("why")
                    .value(f.why)
                    .end_object();
            w.end_array();
        }
    }
    w.end_object();
}

SBX_INLINE void write_command(json::Writer& w, const Plan& p) {
    auto env_object = [&](const std::vector<EnvVar>& vars) {
        w.begin_object();
        for (const auto& v : vars) w.key(v.name).value(v.value);
        w.end_object();
    };
    w.key("command").begin_object().key("argv").begin_array();
    for (const auto& a : p.argv) w.value(a);
    w.end_array().key("cwd").value(p.cwd).key("env");
    env_object(p.env);
    w.key("loaderEnv");
    env_object(p.loader_env);
    w.key("envRemoved").begin_array();
    for (const auto& r : p.env_removed) w.begin_object().key("name").value(r.name).key("why").value(r.why).end_object();
    w.end_array();
    if (!p.pass_fds.empty()) {
        w.key("passFds").begin_array();
        for (const int fd : p.pass_fds) w.value(fd);
        w.end_array();
    }
    w.end_object();
}

SBX_INLINE void write_filesystem(json::Writer& w, const Plan& p) {
    w.key("filesystem").begin_object().key("isolated").value(p.filesystem.isolated).key("mounts").begin_array();
    for (const auto& m : p.filesystem.mounts) {
        w.begin_object().key("kind").value(mount_kind_name(m.kind)).key("path").value(m.path);
        if (m.kind == MountKind::bind || m.kind == MountKind::ro_bind) w.key("source").value(m.source);
        w.key("expect");
        detail::write_identity(w, m.expect);
        w.key("why").value(m.why).end_object();
    }
    w.end_array().key("placeholders").begin_array();
    for (const auto& ph : p.filesystem.placeholders) {
        w.begin_object().key("path").value(ph.path).key("kind").value(placeholder_name(ph.kind)).key("parent");
        detail::write_identity(w, ph.parent);
        w.key("why").value(ph.why).end_object();
    }
    w.end_array();
    if (!p.filesystem.neutralise.empty()) {
        w.key("neutralise").begin_array();
        for (const auto& n : p.filesystem.neutralise)
            w.begin_object().key("path").value(n.path).key("why").value(n.why).end_object();
        w.end_array();
    }
    if (!p.filesystem.neutralise_new.empty()) {
        w.key("neutraliseNew").begin_array();
        for (const auto& n : p.filesystem.neutralise_new) {
            w.begin_object().key("dir").value(n.dir).key("pattern").value(n.pattern).key("present").begin_array();
            for (const auto& name : n.present) w.value(name);
            w.end_array().key("why").value(n.why).end_object();
        }
        w.end_array();
    }
    if (const auto& ex = p.filesystem.git_exclude) {
        w.key("gitExclude").begin_object().key("path").value(ex->path).key("expect");
        detail::write_identity(w, ex->expect);
        w.key("content").value(ex->content).end_object();
    }
    w.key("toolCache");
    if (const auto& tc = p.tool_cache) {
        w.begin_object().key("path").value(tc->path).key("set").begin_array();
        for (const auto& n : tc->set) w.value(n);
        w.end_array().key("kept").begin_array();
        for (const auto& k : tc->kept) w.begin_object().key("name").value(k.name).key("why").value(k.why).end_object();
        w.end_array().end_object();
    } else {
        w.null();
    }
    if (!p.filesystem.git_audit.empty()) {
        w.key("gitAudit").begin_array();
        for (const auto& d : p.filesystem.git_audit) w.value(d);
        w.end_array();
    }
    if (p.filesystem.git_record) w.key("gitRecord").value(*p.filesystem.git_record);
    if (!p.rules.empty()) {
        w.key("rules").begin_array();
        for (const auto& r : p.rules) {
            w.begin_object().key("kind").value(plan_rule_kind_name(r.kind)).key("pattern").value(r.pattern).key("why").value(r.why);
            if (r.deny == FsRule::Deny::credential_store) w.key("credentialStore").value(true);
            w.end_object();
        }
        w.end_array();
    }
    w.end_object();
}

}  // namespace sbx::detail

namespace sbx {

SBX_INLINE std::string to_json(const Plan& p) {
    json::Writer w;
    w.begin_object().key("version").value(p.version);
    detail::write_command(w, p);
    w.key("root").value(p.root).key("tmpdir").value(p.tmpdir);
    if (!p.root_why.empty()) w.key("rootWhy").value(p.root_why);
    if (!p.bwrap_path.empty()) w.key("bwrapPath").value(p.bwrap_path);
    w.key("enabled").value(p.enabled).key("failIfUnavailable").value(p.fail_if_unavailable);
    if (p.weaker_sandbox) w.key("weakerSandbox").value(true);
    w.key("seccomp").begin_object().key("allowUnixSockets").value(p.allow_unix_sockets).end_object();
    if (p.all_unix_sockets || !p.unix_socket_paths.empty()) {
        w.key("unixSockets").begin_object().key("all").value(p.all_unix_sockets).key("paths").begin_array();
        for (const auto& u : p.unix_socket_paths) w.value(u);
        w.end_array().end_object();
    }
    detail::write_network(w, p.network);
    if (!p.ignore_violations.empty()) {
        w.key("ignoreViolations").begin_array();
        for (const auto& v : p.ignore_violations) w.value(v);
        w.end_array();
    }
    if (p.scan_stderr) w.key("scanStderr").value(true);
    w.key("hints").begin_object().key("hosts").value(p.hints.hosts).key("local").value(p.hints.local);
    w.key("call").value(p.hints.call).key("write").value(p.hints.write).key("read").value(p.hints.read);
    w.key("env").value(p.hints.env).key("sockets").value(p.hints.sockets).end_object();
    detail::write_filesystem(w, p);
    if (std::any_of(p.limits.begin(), p.limits.end(), [](const auto& l) { return l.has_value(); })) {
        w.key("limits").begin_object();
        for (std::size_t i = 0; i < kLimitCount; ++i)
            if (const auto& l = p.limits[i])
                w.key(kLimits[i].key).begin_object().key("value").value(l->value).key("setBy").value(l->set_by)
                    .key("raise").value(l->raise).end_object();
        w.end_object();
    }
    w.key("warnings").begin_array();
    for (const auto& wn : p.warnings) {
        w.begin_object().key("file").value(wn.file).key("key").value(wn.key).key("message").value(wn.message);
        // Written only when set: a warning for every launcher reads as before.
        if (wn.scope == WarningScope::linux_only) w.key("platform").value("linux");
        w.end_object();
    }
    w.end_array().end_object();
    return w.take();
}

SBX_INLINE std::string answers_file_json(const std::vector<net::HostAnswer>& answers) {
    json::Writer w;
    w.begin_object().key("answers");
    detail::write_host_answers(w, answers);
    w.end_object();
    return w.take();
}

}  // namespace sbx
#endif
