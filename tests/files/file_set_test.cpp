// The file set's rules on their own, with no logger and no threads: which
// files are this log's, the sequence a restart continues from, when to roll
// and which files retention removes.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>

#include <catch2/catch.hpp>

#include "clock.hpp"
#include "file_set.hpp"
#include "test_support.hpp"

using terse::detail::FileSet;
using terse::test::TempDir;

namespace {

constexpr std::int64_t kDayNs = 86'400'000'000'000;

FileSet::Rules rules(const TempDir& dir) {
  FileSet::Rules r;
  r.directory = dir.path();
  r.name = "app";
  r.roll_bytes = 1000;
  r.roll_daily = true;
  return r;
}

void touch(const TempDir& dir, const std::string& name, std::size_t bytes = 0) {
  std::ofstream(dir / name, std::ios::binary) << std::string(bytes, 'x');
}

std::vector<std::string> names(const std::vector<FileSet::LogFile>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.path.filename().string());
  return out;
}

// Some instant whose local date is `date`, a day at a time from now.
std::int64_t instant_on(const std::string& date) {
  std::int64_t t = terse::detail::realtime_ns();
  for (int i = 0; i < 4000 && FileSet::local_date(t) != date; ++i)
    t += FileSet::local_date(t) < date ? kDayNs : -kDayNs;
  return t;
}

}  // namespace

TEST_CASE("only this name's well-formed files belong to the set, oldest first") {
  TempDir dir;
  touch(dir, "app-20260102-001.tlog");
  touch(dir, "app-20260101-010.tlog");
  touch(dir, "app-20260101-9.tlog");
  touch(dir, "app-x-20260101-001.tlog");       // another name with a dash
  touch(dir, "apps-20260101-001.tlog");        // another name
  touch(dir, "app-20260101-001.log");          // wrong suffix
  touch(dir, "app-2026011-001.tlog");          // seven date digits
  touch(dir, "app-20260101-1234567890.tlog");  // ten sequence digits
  FileSet set(rules(dir));
  CHECK(names(set.files()) ==
        std::vector<std::string>{"app-20260101-9.tlog", "app-20260101-010.tlog", "app-20260102-001.tlog"});
}

TEST_CASE("a name with dashes owns only its own files") {
  TempDir dir;
  touch(dir, "my-app-20260101-001.tlog");
  touch(dir, "app-20260101-002.tlog");
  auto r = rules(dir);
  r.name = "my-app";
  FileSet set(r);
  CHECK(names(set.files()) == std::vector<std::string>{"my-app-20260101-001.tlog"});
}

TEST_CASE("sequence numbers continue after the highest of the same date") {
  TempDir dir;
  touch(dir, "app-20260101-001.tlog");
  touch(dir, "app-20260101-1000.tlog");
  touch(dir, "app-20260102-007.tlog");
  FileSet set(rules(dir));
  CHECK(set.next_sequence("20260101") == 1001);
  CHECK(set.next_sequence("20260102") == 8);
  CHECK(set.next_sequence("20260103") == 1);
}

TEST_CASE("created files are named by date and sequence and never reuse a name") {
  TempDir dir;
  FileSet set(rules(dir));
  std::int64_t now = terse::detail::realtime_ns();
  std::string today = FileSet::local_date(now);
  touch(dir, "app-" + today + "-002.tlog");
  FileSet::Opened first = set.create_next(now);
  REQUIRE(first.fd >= 0);
  ::close(first.fd);
  CHECK(std::filesystem::path(first.path).filename() == "app-" + today + "-003.tlog");
  CHECK(first.sequence == 3);
  touch(dir, "app-" + today + "-004.tlog");  // another process took the next one
  FileSet::Opened second = set.create_next(now);
  REQUIRE(second.fd >= 0);
  ::close(second.fd);
  CHECK(std::filesystem::path(second.path).filename() == "app-" + today + "-005.tlog");
  CHECK(set.date() == today);
}

TEST_CASE("a directory that cannot take a file gives the reason") {
  TempDir dir;
  auto r = rules(dir);
  r.directory = dir / "missing";
  FileSet set(r);
  FileSet::Opened opened = set.create_next(terse::detail::realtime_ns());
  CHECK(opened.fd == -1);
  CHECK(opened.error == ENOENT);
  CHECK(opened.message.find("cannot create") == 0);
}

TEST_CASE("a file rolls at the size limit and at a new local date") {
  TempDir dir;
  FileSet set(rules(dir));
  std::int64_t now = instant_on("20260101");
  REQUIRE(FileSet::local_date(now) == "20260101");
  FileSet::Opened opened = set.create_next(now);
  REQUIRE(opened.fd >= 0);
  ::close(opened.fd);
  CHECK_FALSE(set.roll_due(999, now));
  CHECK(set.roll_due(1000, now));
  CHECK(set.roll_due(0, now + kDayNs));

  auto r = rules(dir);
  r.roll_daily = false;
  FileSet no_daily(r);
  FileSet::Opened other = no_daily.create_next(now);
  REQUIRE(other.fd >= 0);
  ::close(other.fd);
  CHECK_FALSE(no_daily.roll_due(0, now + kDayNs));
}

TEST_CASE("retention removes the oldest files first and never the current one") {
  TempDir dir;
  touch(dir, "app-20260101-001.tlog", 100);
  touch(dir, "app-20260101-002.tlog", 100);
  touch(dir, "app-20260102-001.tlog", 100);
  touch(dir, "other-20260101-001.tlog", 100);
  auto r = rules(dir);
  r.max_files = 2;
  FileSet set(r);
  std::vector<std::string> errors;
  auto report = [&](const std::string& e) { errors.push_back(e); };
  CHECK(set.apply_retention(dir / "app-20260101-001.tlog", report) == 1);
  CHECK(names(set.files()) == std::vector<std::string>{"app-20260101-001.tlog", "app-20260102-001.tlog"});
  CHECK(std::filesystem::exists(dir / "other-20260101-001.tlog"));
  CHECK(errors.empty());
}

TEST_CASE("retention by total bytes counts earlier runs' files") {
  TempDir dir;
  touch(dir, "app-20260101-001.tlog", 400);
  touch(dir, "app-20260101-002.tlog", 400);
  touch(dir, "app-20260101-003.tlog", 400);
  auto r = rules(dir);
  r.max_total_bytes = 900;
  FileSet set(r);
  auto ignore = [](const std::string&) {};
  CHECK(set.apply_retention(dir / "app-20260101-003.tlog", ignore) == 1);
  CHECK(names(set.files()) == std::vector<std::string>{"app-20260101-002.tlog", "app-20260101-003.tlog"});
  CHECK(set.apply_retention(dir / "app-20260101-003.tlog", ignore) == 0);
}

TEST_CASE("no limits keep every file") {
  TempDir dir;
  for (int i = 1; i <= 5; ++i) touch(dir, "app-20260101-00" + std::to_string(i) + ".tlog", 100);
  FileSet set(rules(dir));
  CHECK(set.apply_retention("", [](const std::string&) {}) == 0);
  CHECK(set.files().size() == 5);
}
