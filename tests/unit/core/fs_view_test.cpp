// fs_view.hpp and fs_view_disk.hpp: where a path really leads, in memory and on disk.
#include "sbx/core/fs_view.hpp"
#include "sbx/io/fs_view_disk.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace {

using sbx::MemoryFs;

std::vector<std::string> sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
}

// A chain of `n` symlinks /chain/l1 -> l2 -> ... -> ln -> /target.
MemoryFs memory_chain(int n) {
    MemoryFs fs;
    fs.dir("/target");
    for (int k = 1; k <= n; ++k) {
        const std::string next = k == n ? "/target" : "l" + std::to_string(k + 1);
        fs.symlink("/chain/l" + std::to_string(k), next);
    }
    return fs;
}

// An FsView that records every path resolve() asks about, and answers from a MemoryFs.
class RecordingFs final : public sbx::FsView {
public:
    explicit RecordingFs(const MemoryFs& inner) : inner_(inner) {}
    sbx::expected<std::optional<sbx::FileStat>> lstat(const std::string& path) const override {
        asked.push_back(path);
        return inner_.lstat(path);
    }
    sbx::expected<std::string> readlink(const std::string& path) const override { return inner_.readlink(path); }
    sbx::expected<std::vector<std::string>> list(const std::string& path) const override { return inner_.list(path); }
    sbx::expected<std::optional<std::string>> read_text(const std::string& path, std::size_t max) const override {
        return inner_.read_text(path, max);
    }

    mutable std::vector<std::string> asked;

private:
    const MemoryFs& inner_;
};

using sbx_test::TempDir;

// What realpath(3) says, for paths that exist.
std::string real(const std::string& p) {
    char buf[PATH_MAX];
    REQUIRE_MESSAGE(::realpath(p.c_str(), buf) != nullptr, "realpath failed for " << p);
    return buf;
}

}  // namespace

TEST_CASE("fs_view: resolve leaves a path without symlinks alone") {
    MemoryFs fs;
    fs.dir("/a/b").file("/a/b/f");
    CHECK(sbx::resolve(fs, "/").value() == "/");
    CHECK(sbx::resolve(fs, "/a").value() == "/a");
    CHECK(sbx::resolve(fs, "/a/b/f").value() == "/a/b/f");
}

TEST_CASE("fs_view: resolve follows absolute symlinks") {
    MemoryFs fs;
    fs.dir("/real/dir").file("/real/dir/f");
    fs.symlink("/link", "/real/dir");
    fs.symlink("/a/file-link", "/real/dir/f");
    fs.symlink("/root-link", "/");
    fs.symlink("/messy", "//real/./dir//");
    CHECK(sbx::resolve(fs, "/link").value() == "/real/dir");
    CHECK(sbx::resolve(fs, "/link/f").value() == "/real/dir/f");
    CHECK(sbx::resolve(fs, "/a/file-link").value() == "/real/dir/f");
    CHECK(sbx::resolve(fs, "/root-link").value() == "/");
    CHECK(sbx::resolve(fs, "/root-link/real/dir").value() == "/real/dir");
    CHECK(sbx::resolve(fs, "/messy/f").value() == "/real/dir/f");
}

TEST_CASE("fs_view: resolve follows relative symlinks from the link's own directory") {
    MemoryFs fs;
    fs.dir("/a/b").dir("/x/y").file("/a/b/f");
    fs.symlink("/a/same", "b");
    fs.symlink("/a/dot", "./b/f");
    fs.symlink("/a/up", "../x/y");
    fs.symlink("/a/b/upup", "../../x");
    fs.symlink("/a/b/too-high", "../../../../../x/y");
    fs.symlink("/a/self-dir", ".");
    CHECK(sbx::resolve(fs, "/a/same").value() == "/a/b");
    CHECK(sbx::resolve(fs, "/a/same/f").value() == "/a/b/f");
    CHECK(sbx::resolve(fs, "/a/dot").value() == "/a/b/f");
    CHECK(sbx::resolve(fs, "/a/up").value() == "/x/y");
    CHECK(sbx::resolve(fs, "/a/b/upup/y").value() == "/x/y");
    CHECK(sbx::resolve(fs, "/a/b/too-high").value() == "/x/y");  // `..` stops at `/`
    CHECK(sbx::resolve(fs, "/a/self-dir/b").value() == "/a/b");
}

TEST_CASE("fs_view: resolve follows chains of symlinks, each from where it is") {
    MemoryFs fs;
    fs.dir("/p").dir("/q").file("/q/n");
    fs.symlink("/p/l", "../q/m");  // relative to /p
    fs.symlink("/q/m", "n");       // relative to /q, not to /p
    fs.symlink("/start", "/p/l");
    CHECK(sbx::resolve(fs, "/p/l").value() == "/q/n");
    CHECK(sbx::resolve(fs, "/start").value() == "/q/n");

    // A symlink in the middle of a target is followed too.
    MemoryFs mid;
    mid.dir("/real/deep").file("/real/deep/f");
    mid.symlink("/hop", "/real");
    mid.symlink("/outer", "/hop/deep/f");
    CHECK(sbx::resolve(mid, "/outer").value() == "/real/deep/f");

    CHECK(sbx::resolve(memory_chain(5), "/chain/l1").value() == "/target");
    CHECK(sbx::resolve(memory_chain(5), "/chain/l3").value() == "/target");
}

TEST_CASE("fs_view: `..` after a symlink resolves against the symlink's target") {
    MemoryFs fs;
    fs.dir("/x/y/z").dir("/a").dir("/x/y/w");
    fs.symlink("/a/l", "/x/y/z");
    fs.symlink("/b/m", "../a/l/../w");  // /a/l/.. is /x/y, not /a
    CHECK(sbx::resolve(fs, "/b/m").value() == "/x/y/w");
    // As realpath(3) does it: the same with `..` in the path asked about.
    CHECK(sbx::resolve(fs, "/a/l/..").value() == "/x/y");
    CHECK(sbx::resolve(fs, "/a/l/../w").value() == "/x/y/w");
    CHECK(sbx::resolve(fs, "/a/l/../../..").value() == "/");
    // `..` before any symlink is plain.
    CHECK(sbx::resolve(fs, "/a/../x/y").value() == "/x/y");
}

TEST_CASE("fs_view: resolve keeps a missing tail as written") {
    MemoryFs fs;
    fs.dir("/a/b").file("/a/file");
    fs.symlink("/a/l", "/a/b");
    fs.symlink("/dangling", "/nowhere/at/all");
    fs.symlink("/dangling-rel", "gone/x");
    CHECK(sbx::resolve(fs, "/nope").value() == "/nope");
    CHECK(sbx::resolve(fs, "/nope/x/y").value() == "/nope/x/y");
    CHECK(sbx::resolve(fs, "/a/l/missing").value() == "/a/b/missing");
    CHECK(sbx::resolve(fs, "/a/l/missing/deeper").value() == "/a/b/missing/deeper");
    CHECK(sbx::resolve(fs, "/dangling").value() == "/nowhere/at/all");
    CHECK(sbx::resolve(fs, "/dangling/more").value() == "/nowhere/at/all/more");
    CHECK(sbx::resolve(fs, "/dangling-rel").value() == "/gone/x");
    // Below a regular file nothing exists.
    CHECK(sbx::resolve(fs, "/a/file/x").value() == "/a/file/x");
}

TEST_CASE("fs_view: resolve looks nothing up past the first missing component") {
    MemoryFs mem;
    mem.dir("/a").symlink("/a/l", "/a/gone/../y");
    RecordingFs fs(mem);
    CHECK(sbx::resolve(fs, "/a/missing/b/c").value() == "/a/missing/b/c");
    CHECK(fs.asked == std::vector<std::string>{"/a", "/a/missing"});
    fs.asked.clear();
    // `..` in a target after a missing name folds lexically.
    CHECK(sbx::resolve(fs, "/a/l/z").value() == "/a/y/z");
    CHECK(fs.asked == std::vector<std::string>{"/a", "/a/l", "/a", "/a/gone"});
}

TEST_CASE("fs_view: symlink loops are errors, 40 hops are not") {
    MemoryFs fs;
    fs.symlink("/loop1", "/loop2");
    fs.symlink("/loop2", "/loop1");
    fs.symlink("/self", "self");
    fs.dir("/d");
    fs.symlink("/d/up", "../d/up");
    fs.symlink("/d/into", "into/x");  // grows forever
    for (const char* p : {"/loop1", "/loop2", "/loop1/below", "/self", "/d/up", "/d/into"}) {
        CAPTURE(p);
        auto r = sbx::resolve(fs, p);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == sbx::Errc::invalid_argument);
        CHECK(r.error().message.find("too many levels of symbolic links") != std::string::npos);
        CHECK(r.error().file == p);
    }
    CHECK(sbx::resolve(memory_chain(sbx::kMaxSymlinkHops), "/chain/l1").value() == "/target");
    CHECK_FALSE(sbx::resolve(memory_chain(sbx::kMaxSymlinkHops + 1), "/chain/l1").has_value());
    // The count is per resolve, not per link: two chains of 30 in a row are too many.
    MemoryFs two = memory_chain(30);
    two.symlink("/second/l", "/chain/l1");
    two.symlink("/target/back", "/second/l");
    CHECK(sbx::resolve(two, "/chain/l1").value() == "/target");
    CHECK_FALSE(sbx::resolve(two, "/chain/l1/back").has_value());
}

TEST_CASE("fs_view: an unreadable component is an error, not a missing path") {
    MemoryFs fs;
    fs.dir("/secret/inner").file("/secret/inner/f").dir("/open");
    fs.symlink("/open/into-secret", "/secret/inner/f");
    fs.unreadable("/secret");
    // /secret itself can be looked at; what is in it cannot.
    CHECK(sbx::resolve(fs, "/secret").value() == "/secret");
    for (const char* p : {"/secret/inner", "/secret/inner/f", "/secret/missing", "/open/into-secret"}) {
        CAPTURE(p);
        auto r = sbx::resolve(fs, p);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == sbx::Errc::io_error);
        CHECK(r.error().file.rfind("/secret/", 0) == 0);
    }
    CHECK(sbx::resolve(fs, "/open").value() == "/open");
}

TEST_CASE("fs_view: an empty symlink is an error") {
    MemoryFs fs;
    fs.symlink("/empty", "");
    auto r = sbx::resolve(fs, "/empty/x");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == sbx::Errc::invalid_argument);
    CHECK(r.error().file == "/empty");
}

TEST_CASE("fs_view: MemoryFs lstat reports types, identities and hard-link counts") {
    MemoryFs fs;
    fs.dir("/d").file("/d/f").file("/d/g").symlink("/d/l", "f");

    auto f = fs.lstat("/d/f").value();
    REQUIRE(f.has_value());
    CHECK(f->type == sbx::FileType::regular);
    CHECK(f->nlink == 1);
    auto g = fs.lstat("/d/g").value();
    REQUIRE(g.has_value());
    CHECK(g->ino != f->ino);
    auto d = fs.lstat("/d").value();
    REQUIRE(d.has_value());
    CHECK(d->type == sbx::FileType::directory);
    CHECK(d->nlink == 2);
    auto l = fs.lstat("/d/l").value();
    REQUIRE(l.has_value());
    CHECK(l->type == sbx::FileType::symlink);  // the link itself, not its target
    CHECK(l->nlink == 1);
    CHECK(fs.readlink("/d/l").value() == "f");

    fs.hardlink("/e/f2", "/d/f");
    auto f_again = fs.lstat("/d/f").value();
    auto f2 = fs.lstat("/e/f2").value();
    REQUIRE(f_again.has_value());
    REQUIRE(f2.has_value());
    CHECK(f_again->nlink == 2);
    CHECK(f2->nlink == 2);
    CHECK(f2->ino == f_again->ino);
    CHECK(f2->dev == f_again->dev);
    CHECK(f2->type == sbx::FileType::regular);
    CHECK(fs.lstat("/d/g").value()->nlink == 1);  // the others are untouched

    fs.hardlink("/d/f3", "/e/f2");
    CHECK(fs.lstat("/d/f").value()->nlink == 3);
    CHECK(fs.lstat("/e/f2").value()->nlink == 3);
    CHECK(fs.lstat("/d/f3").value()->nlink == 3);
    CHECK(fs.lstat("/e").value()->type == sbx::FileType::directory);  // made on the way
}

TEST_CASE("fs_view: MemoryFs lstat of what is not there") {
    MemoryFs fs;
    fs.file("/f");
    fs.unreadable("/locked");
    CHECK_FALSE(fs.lstat("/missing").value().has_value());
    CHECK_FALSE(fs.lstat("/missing/deeper").value().has_value());
    CHECK_FALSE(fs.lstat("/f/x").value().has_value());  // below a regular file: ENOTDIR
    auto locked = fs.lstat("/locked/x");
    REQUIRE_FALSE(locked.has_value());
    CHECK(locked.error().code == sbx::Errc::io_error);
    CHECK(locked.error().file == "/locked/x");
    CHECK_FALSE(fs.readlink("/f").has_value());
    CHECK_FALSE(fs.readlink("/missing").has_value());
}

TEST_CASE("fs_view: MemoryFs list names the direct children only") {
    MemoryFs fs;
    fs.dir("/a/empty").file("/a/f").file("/a/sub/deep").symlink("/a/l", "/x").file("/top");
    using V = std::vector<std::string>;
    CHECK(sorted(fs.list("/a").value()) == V{"empty", "f", "l", "sub"});
    CHECK(sorted(fs.list("/").value()) == V{"a", "top"});
    CHECK(fs.list("/a/empty").value().empty());
    CHECK(fs.list("/a/sub").value() == V{"deep"});
    CHECK(sorted(fs.list("/a/").value()) == V{"empty", "f", "l", "sub"});  // normalised first
    auto not_dir = fs.list("/a/f");
    REQUIRE_FALSE(not_dir.has_value());
    CHECK(not_dir.error().code == sbx::Errc::io_error);
    CHECK_FALSE(fs.list("/nope").has_value());
    CHECK_FALSE(fs.list("/a/l").has_value());  // a symlink is not listed through
}

TEST_CASE("fs_view: DiskFs resolve in a real directory") {
    TempDir t;
    const std::string& root = t.path;
    t.mkdir("real");
    t.mkdir("real/dir");
    t.touch("real/dir/f");
    t.mkdir("x");
    t.mkdir("x/y");
    t.mkdir("x/y/z");
    t.mkdir("x/y/w");
    t.mkdir("b");
    t.symlink("abs", t.at("real/dir"));
    t.symlink("rel", "real/dir");
    t.symlink("real/up", "../x/y");
    t.symlink("chain1", "chain2");
    t.symlink("chain2", "real/../abs");
    t.symlink("zlink", t.at("x/y/z"));
    t.symlink("b/m", "../zlink/../w");
    t.symlink("dangling", "nowhere/x");
    t.symlink("loop1", "loop2");
    t.symlink("loop2", "loop1");
    t.symlink("self", "./self");
    sbx::DiskFs fs;

    SUBCASE("paths that exist resolve as realpath(3) does") {
        for (const char* rel : {"real", "real/dir/f", "abs", "abs/f", "rel", "rel/f", "real/up", "real/up/z",
                                "chain1", "chain1/f", "zlink", "b/m"}) {
            CAPTURE(rel);
            const std::string p = t.at(rel);
            CHECK(sbx::resolve(fs, p).value() == real(p));
        }
        CHECK(sbx::resolve(fs, t.at("abs/f")).value() == root + "/real/dir/f");
        CHECK(sbx::resolve(fs, t.at("real/up")).value() == root + "/x/y");
        CHECK(sbx::resolve(fs, t.at("chain1/f")).value() == root + "/real/dir/f");
    }
    SUBCASE("`..` after a symlink resolves against its target") {
        CHECK(sbx::resolve(fs, t.at("b/m")).value() == root + "/x/y/w");
        CHECK(sbx::resolve(fs, t.at("zlink/..")).value() == root + "/x/y");
        CHECK(real(t.at("zlink/..")) == root + "/x/y");  // the kernel agrees
    }
    SUBCASE("a missing tail is kept as written") {
        CHECK(sbx::resolve(fs, t.at("missing")).value() == root + "/missing");
        CHECK(sbx::resolve(fs, t.at("abs/missing/deeper")).value() == root + "/real/dir/missing/deeper");
        CHECK(sbx::resolve(fs, t.at("dangling")).value() == root + "/nowhere/x");
        CHECK(sbx::resolve(fs, t.at("dangling/y")).value() == root + "/nowhere/x/y");
        CHECK(sbx::resolve(fs, t.at("real/dir/f/below")).value() == root + "/real/dir/f/below");  // ENOTDIR
    }
    SUBCASE("loops are errors") {
        for (const char* rel : {"loop1", "loop2/x", "self"}) {
            CAPTURE(rel);
            auto r = sbx::resolve(fs, t.at(rel));
            REQUIRE_FALSE(r.has_value());
            CHECK(r.error().code == sbx::Errc::invalid_argument);
        }
    }
    SUBCASE("a name too long for the kernel is an error") {
        auto r = sbx::resolve(fs, t.at(std::string(300, 'n')));
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == sbx::Errc::io_error);
    }
}

TEST_CASE("fs_view: DiskFs unreadable directory is an error (unprivileged only)") {
    if (::geteuid() == 0) {
        MESSAGE("skipped: running as root, so directory permissions do not stop lstat");
        return;
    }
    TempDir t;
    t.mkdir("locked");
    t.touch("locked/f");
    REQUIRE(::chmod(t.at("locked").c_str(), 0) == 0);
    sbx::DiskFs fs;
    auto r = sbx::resolve(fs, t.at("locked/f"));
    ::chmod(t.at("locked").c_str(), 0700);  // so the guard can remove it
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == sbx::Errc::io_error);
    CHECK(r.error().file == t.at("locked/f"));
}

TEST_CASE("fs_view: DiskFs lstat, readlink and list") {
    TempDir t;
    t.mkdir("d");
    t.touch("d/f");
    t.touch("d/.hidden");
    t.symlink("d/l", "f");
    t.link("d/f2", "d/f");
    sbx::DiskFs fs;

    auto f = fs.lstat(t.at("d/f")).value();
    REQUIRE(f.has_value());
    CHECK(f->type == sbx::FileType::regular);
    CHECK(f->nlink == 2);
    auto f2 = fs.lstat(t.at("d/f2")).value();
    REQUIRE(f2.has_value());
    CHECK(f2->ino == f->ino);
    CHECK(f2->dev == f->dev);
    CHECK(fs.lstat(t.at("d/.hidden")).value()->nlink == 1);
    CHECK(fs.lstat(t.at("d")).value()->type == sbx::FileType::directory);
    CHECK(fs.lstat(t.at("d/l")).value()->type == sbx::FileType::symlink);
    CHECK(fs.lstat("/dev/null").value()->type == sbx::FileType::other);
    CHECK_FALSE(fs.lstat(t.at("missing")).value().has_value());
    CHECK_FALSE(fs.lstat(t.at("d/f/below")).value().has_value());  // ENOTDIR

    CHECK(fs.readlink(t.at("d/l")).value() == "f");
    CHECK_FALSE(fs.readlink(t.at("d/f")).has_value());
    CHECK(fs.readlink(t.at("d/f")).error().code == sbx::Errc::io_error);

    using V = std::vector<std::string>;
    CHECK(sorted(fs.list(t.at("d")).value()) == V{".hidden", "f", "f2", "l"});
    CHECK(fs.list(t.path).value() == V{"d"});
    CHECK_FALSE(fs.list(t.at("d/f")).has_value());
    CHECK_FALSE(fs.list(t.at("missing")).has_value());
}

TEST_CASE("fs_view: DiskFs readlink returns long targets whole") {
    TempDir t;
    sbx::DiskFs fs;
    // Around the first buffer size, and well past it.
    for (std::size_t len : {1, 255, 256, 257, 511, 512, 513, 1000, 4000}) {
        CAPTURE(len);
        std::string target(len, 't');
        for (std::size_t k = 50; k < len; k += 50) target[k] = '/';
        const std::string name = "l" + std::to_string(len);
        t.symlink(name, target);
        CHECK(fs.readlink(t.at(name)).value() == target);
    }
}

TEST_CASE("fs_view: TempDir removes its directory") {
    TempDir outside;
    outside.touch("keep");
    std::string kept;
    {
        TempDir t;
        t.mkdir("a");
        t.touch("a/f");
        t.symlink("a/l", outside.path);  // removal must not follow it
        kept = t.path;
        CHECK(std::filesystem::exists(kept + "/a/f"));
    }
    CHECK_FALSE(std::filesystem::exists(kept));
    CHECK(std::filesystem::exists(outside.at("keep")));
}

TEST_CASE("fs_view: MemoryFs walks symlinked directories on the way, as the kernel does") {
    sbx::MemoryFs fs;
    fs.dir("/data/real").file("/data/real/f").symlink("/home/link", "/data/real").symlink("/home/rel", "../data");
    auto st = fs.lstat("/home/link/f");
    REQUIRE(st.has_value());
    REQUIRE(st->has_value());
    CHECK((*st)->type == sbx::FileType::regular);
    auto st2 = fs.lstat("/home/rel/real/f");
    REQUIRE(st2.has_value());
    CHECK(st2->has_value());
    // The last component is not followed by lstat ...
    auto link = fs.lstat("/home/link");
    REQUIRE(link.has_value());
    CHECK((*link)->type == sbx::FileType::symlink);
    // ... but list follows it.
    auto names = fs.list("/home/link");
    REQUIRE(names.has_value());
    CHECK(*names == std::vector<std::string>{"f"});
    // A file on the way is not a directory: nothing is there.
    auto under_file = fs.lstat("/data/real/f/x");
    REQUIRE(under_file.has_value());
    CHECK_FALSE(under_file->has_value());
}

TEST_CASE("fs_view: read_text reads small regular files and refuses the rest") {
    sbx::MemoryFs fs;
    fs.file("/r/.git", "gitdir: ../main/.git/worktrees/r\n").symlink("/r/l", ".git").dir("/r/d");
    auto t = fs.read_text("/r/l", 100);
    REQUIRE(t.has_value());
    REQUIRE(t->has_value());
    CHECK(**t == "gitdir: ../main/.git/worktrees/r\n");
    auto none = fs.read_text("/r/missing", 100);
    REQUIRE(none.has_value());
    CHECK_FALSE(none->has_value());
    CHECK_FALSE(fs.read_text("/r/d", 100).has_value());
    CHECK_FALSE(fs.read_text("/r/.git", 5).has_value());

    TempDir dir;
    const std::string fifo = dir.at("fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    sbx::DiskFs disk;
    auto r = disk.read_text(fifo, 100);  // refused, and without blocking
    CHECK_FALSE(r.has_value());
    const std::string small = dir.at("small");
    {
        std::FILE* f = std::fopen(small.c_str(), "w");
        REQUIRE(f != nullptr);
        std::fputs("gitdir: /x\n", f);
        std::fclose(f);
    }
    auto s2 = disk.read_text(small, 100);
    REQUIRE(s2.has_value());
    CHECK(**s2 == "gitdir: /x\n");
    CHECK_FALSE(disk.read_text(small, 3).has_value());
}
