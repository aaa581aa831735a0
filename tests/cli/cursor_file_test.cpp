// The cursor file of `terse ship`: saved whole or not at all, locked against
// a second shipper, and saved on a thread of its own while the shipper posts
// newer places (run under ThreadSanitizer in CI, label "concurrency").
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "cursor_file.hpp"
#include "test_support.hpp"

using terse::Result;
using terse::cli::CursorFile;
using terse::cli::CursorSaver;
using terse::test::read_file;
using terse::test::TempDir;
using terse::test::write_file;

TEST_CASE("a cursor file starts empty, reads back what was saved, and has one user at a time") {
  TempDir dir;
  {
    CursorFile file(dir / "app.cursor");
    Result<std::string> opened = file.open();
    REQUIRE(opened.why().empty());
    CHECK(opened->empty());
    CHECK(file.save("2.first").why().empty());
    CHECK(read_file(dir / "app.cursor") == "2.first\n");

    CursorFile second(dir / "app.cursor");
    CHECK(second.open().why().find("another terse ship") != std::string::npos);
  }
  CursorFile again(dir / "app.cursor");  // the first one's lock went with it
  Result<std::string> reopened = again.open();
  REQUIRE(reopened.why().empty());
  CHECK(*reopened == "2.first");
  CHECK(!std::filesystem::exists(dir / "app.cursor.tmp"));
}

TEST_CASE("a cursor file in a directory that cannot be written is refused at open") {
  TempDir dir;
  CursorFile file(dir / "missing/app.cursor");
  CHECK(!file.open().why().empty());
}

TEST_CASE("the saver writes the last place posted, however fast places are posted") {
  TempDir dir;
  CursorFile file(dir / "app.cursor");
  REQUIRE(file.open().why().empty());
  std::atomic<bool> posting{true};
  std::string news;
  {
    CursorSaver saver(file);
    // The shipper's thread posts and asks for news while the saver writes.
    std::thread shipper([&] {
      for (int i = 0; i < 20000; ++i) {
        saver.post("2.place-" + std::to_string(i));
        news += saver.news();
        if (i % 100 == 99) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a save takes longer
      }
      posting = false;
    });
    // Meanwhile every read of the file finds a whole cursor, never a torn one.
    int reads = 0;
    while (posting) {
      std::string text = read_file(dir / "app.cursor");
      if (!text.empty()) {
        CHECK(text.rfind("2.place-", 0) == 0);
        CHECK(text.back() == '\n');
        ++reads;
      }
    }
    shipper.join();
    saver.finish();
    CHECK(reads > 0);
  }
  CHECK(news == "");  // compared with text, so that a failure shows what the saver said
  CHECK(read_file(dir / "app.cursor") == "2.place-19999\n");
}

TEST_CASE("a save that fails is reported once, retried, and reported mended") {
  TempDir dir;
  std::filesystem::create_directory(dir / "state");
  CursorFile file(dir / "state/app.cursor");
  REQUIRE(file.open().why().empty());
  CursorSaver saver(file);
#ifdef _WIN32
  // A directory with a file open in it cannot be removed there: a directory where the saver
  // writes its temporary file makes each save fail instead, until it is gone.
  std::filesystem::create_directory(dir / "state/app.cursor.tmp");
#else
  std::filesystem::remove_all(dir / "state");  // the disk goes away under it
#endif
  saver.post("2.lost-for-now");
  std::string news;
  for (int i = 0; i < 200 && news.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    news = saver.news();
  }
  CHECK(news.find("will retry") != std::string::npos);
#ifdef _WIN32
  std::filesystem::remove(dir / "state/app.cursor.tmp");
#else
  std::filesystem::create_directory(dir / "state");
#endif
  for (int i = 0; i < 400 && news != "saved again"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (std::string more = saver.news(); !more.empty()) news = more;
  }
  CHECK(news == "saved again");
  saver.finish();
  CHECK(read_file(dir / "state/app.cursor") == "2.lost-for-now\n");
}
