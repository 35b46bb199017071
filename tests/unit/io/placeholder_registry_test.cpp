// The list of a root group's placeholders, and the view of the disk without them.
#include "sbx/io/placeholder_registry.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

TEST_CASE("the group's list: records read back, and a malformed one ends it") {
    const sbx::RegisteredPlaceholder a{sbx::Placeholder::file, 2049, 17, "/r/.bashrc"};
    const sbx::RegisteredPlaceholder b{sbx::Placeholder::directory, 2049, 18, "/r/.claude/hooks"};
    const sbx::RegisteredPlaceholder c{sbx::Placeholder::commondir, 2049, 19, "/r/.git/commondir"};
    const std::string text = sbx::registry_record(a) + sbx::registry_record(b) + sbx::registry_record(c);
    CHECK(sbx::registry_record(c).starts_with("C 2049 19 /r/.git/commondir"));
    auto back = sbx::parse_registry(text);
    REQUIRE(back.size() == 3);
    CHECK(back[0].kind == sbx::Placeholder::file);
    CHECK(back[0].dev == 2049);
    CHECK(back[0].ino == 17);
    CHECK(back[0].path == "/r/.bashrc");
    CHECK(back[1].kind == sbx::Placeholder::directory);
    CHECK(back[1].path == "/r/.claude/hooks");
    CHECK(back[2].kind == sbx::Placeholder::commondir);
    for (std::string_view bad : {"Q 1 2 /p", "X 1 /p", "X 1 2 rel", "F 1 /p", "F x 2 /p", "F 1 2 relative", "F 1 2 /a/../b", "F1 2 /p",
                                 "F 1 2"}) {
        CAPTURE(bad);
        const std::string doc = sbx::registry_record(a) + std::string(bad) + '\0' + sbx::registry_record(b);
        CHECK(sbx::parse_registry(doc).size() == 1);  // a, then the bad record ends the list
    }
    // A placeholder is still the one made while its inode and size are: a
    // commondir's size is that of `.` and a line end.
    struct stat st {};
    st.st_dev = 2049;
    st.st_ino = 19;
    st.st_mode = S_IFREG | 0444;
    st.st_size = static_cast<off_t>(std::string(".\n").size());
    CHECK(sbx::is_made_placeholder(st, c));
    st.st_size = 0;
    CHECK_FALSE(sbx::is_made_placeholder(st, c));
    st.st_ino = 17;
    CHECK(sbx::is_made_placeholder(st, a));
    st.st_size = 1;
    CHECK_FALSE(sbx::is_made_placeholder(st, a));
    CHECK(sbx::parse_registry(sbx::registry_record(a).substr(0, 8)).empty());  // no terminating NUL
    CHECK(sbx::parse_registry("").empty());
}

TEST_CASE("the group's list: exclude files it edited are records of their own") {
    const sbx::RegisteredPlaceholder a{sbx::Placeholder::file, 2049, 17, "/r/.bashrc"};
    const std::string x = sbx::exclude_record({2049, 30, "/r/.git/info/exclude"});
    CHECK(x == std::string("X 2049 30 /r/.git/info/exclude") + '\0');
    std::vector<sbx::RegisteredExclude> excludes;
    auto back = sbx::parse_registry(sbx::registry_record(a) + x + sbx::registry_record(a), &excludes);
    CHECK(back.size() == 2);  // the exclude record is no placeholder, and does not end the list
    REQUIRE(excludes.size() == 1);
    CHECK(excludes[0].ino == 30);
    CHECK(excludes[0].path == "/r/.git/info/exclude");
    CHECK(sbx::parse_registry(x).empty());  // and without somewhere to put it, is read past
}

TEST_CASE("a placeholder of a JSON file holds an empty object, others nothing") {
    CHECK(sbx::placeholder_content(sbx::Placeholder::file, "/r/.claude/settings.local.json") == "{}\n");
    CHECK(sbx::placeholder_content(sbx::Placeholder::file, "/r/.mcp.json") == "{}\n");
    CHECK(sbx::placeholder_content(sbx::Placeholder::file, "/r/.json").empty());  // a dotfile named json
    CHECK(sbx::placeholder_content(sbx::Placeholder::file, "/r/.bashrc").empty());
    CHECK(sbx::placeholder_content(sbx::Placeholder::directory, "/r/x.json").empty());
    const sbx::RegisteredPlaceholder j{sbx::Placeholder::file, 1, 2, "/r/.mcp.json"};
    struct stat st {};
    st.st_dev = 1;
    st.st_ino = 2;
    st.st_mode = S_IFREG | 0444;
    st.st_size = 3;
    CHECK(sbx::is_made_placeholder(st, j));
    st.st_size = 0;
    CHECK_FALSE(sbx::is_made_placeholder(st, j));
}

TEST_CASE("HidingFs shows the disk without the given placeholders") {
    sbx::MemoryFs fs;
    fs.dir("/r/.claude/hooks").dir("/r/src").file("/r/.bashrc").file("/r/README", "hi");
    const sbx::HidingFs view(fs, {"/r/.bashrc", "/r/.claude"});
    auto st = view.lstat("/r/.bashrc");
    REQUIRE(st.has_value());
    CHECK_FALSE(st->has_value());
    st = view.lstat("/r/.claude/hooks");  // below a hidden directory
    REQUIRE(st.has_value());
    CHECK_FALSE(st->has_value());
    st = view.lstat("/r/README");
    REQUIRE(st.has_value());
    CHECK(st->has_value());
    auto names = view.list("/r");
    REQUIRE(names.has_value());
    CHECK(std::find(names->begin(), names->end(), ".bashrc") == names->end());
    CHECK(std::find(names->begin(), names->end(), ".claude") == names->end());
    CHECK(std::find(names->begin(), names->end(), "README") != names->end());
    auto typed = view.list_typed("/r");
    REQUIRE(typed.has_value());
    CHECK(typed->size() == 2);  // README and src
    auto text = view.read_text("/r/.bashrc", 100);
    REQUIRE(text.has_value());
    CHECK_FALSE(text->has_value());
    // A name that only starts like a hidden one is not hidden.
    fs.file("/r/.bashrc.orig");
    CHECK(view.lstat("/r/.bashrc.orig")->has_value());
}

TEST_CASE("the group directory is made again when another group's last sandbox removes it meanwhile") {
    // Another root's last sandbox removes the directory once it is empty; here a
    // thread does that every 20 microseconds while this one asks for the
    // directory. Before, the directory could go between the mkdir and the look
    // at it, and the run failed before its command ("cannot look at the
    // directory"): a few times in 20,000 here.
    const std::string dir = sbx::placeholder_group_directory();
    if (struct stat st {}; ::lstat(dir.c_str(), &st) == 0 && ::rmdir(dir.c_str()) != 0) {
        MESSAGE("skipped: " << dir << " holds other sandboxes' files now");
        return;
    }
    std::atomic<bool> done{false};
    std::thread remover([&] {
        while (!done) {
            (void)::rmdir(dir.c_str());
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
    });
    int failures = 0;
    std::string first;
    for (int i = 0; i < 20000; ++i)
        if (auto made = sbx::make_group_directory(); !made) {
            if (failures++ == 0) first = sbx::to_string(made.error());
        }
    done = true;
    remover.join();
    (void)::rmdir(dir.c_str());  // as the last sandbox out leaves it
    CHECK_MESSAGE(failures == 0, failures << " of 20000 failed, the first with: " << first);
}
