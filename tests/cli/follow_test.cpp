// `terse cat -f` against a live writer process: records appear while they
// are written, across rolled files and a restarted writer; -n; a closed
// pipe ends it quietly.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "cli_helpers.hpp"

using namespace terse::test;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> expected(const std::string& tag, int bursts, int per) {
  std::vector<std::string> lines;
  for (int b = 0; b < bursts; ++b)
    for (int r = 0; r < per; ++r) lines.push_back(fmt::format("{} burst {} record {}", tag, b, r));
  return lines;
}

auto has(const std::string& text) {
  return [text](const std::string& out) { return out.find(text + "\n") != std::string::npos; };
}

}  // namespace

TEST_CASE("cat -f follows a directory from empty through rolled files and a restarted writer") {
  TempDir dir;
  Process cat(cli({"cat", "-f", "-o", "cat", dir.path()}), Process::Output::pipe);
  // The first writer logs while cat is already following: its files appear
  // later, roll every 4 KiB, and are read while still being written.
  int rc = -1;
  std::thread writer([&] { rc = run_writer({dir.path(), "app", "bursts", "8", "80", "40", "first"}); });
  bool first_seen = cat.read_until(has("first burst 7 record 79"), 20s);
  writer.join();
  REQUIRE(rc == 0);
  REQUIRE(first_seen);
  REQUIRE(log_files(dir.path()).size() > 2);
  // A restarted writer continues with new sequence numbers.
  REQUIRE(run_writer({dir.path(), "app", "bursts", "3", "40", "0", "second"}) == 0);
  REQUIRE(cat.read_until(has("second burst 2 record 39"), 20s));
  cat.stop();
  auto want = expected("first", 8, 80);
  auto second = expected("second", 3, 40);
  want.insert(want.end(), second.begin(), second.end());
  CHECK(split_lines(cat.out) == want);
}

TEST_CASE("cat -f FILE follows that file and the files it rolls to") {
  TempDir dir;
  REQUIRE(run_writer({dir.path(), "app", "bursts", "1", "10", "0", "old"}) == 0);
  auto old_files = log_files(dir.path());
  // A file that does not exist yet: the next one this writer will create.
  std::string next = old_files.back();
  next.replace(next.size() - 8, 3, fmt::format("{:03}", std::stoi(next.substr(next.size() - 8, 3)) + 1));
  Process cat(cli({"cat", "-f", "-o", "cat", next}), Process::Output::pipe);
  std::this_thread::sleep_for(200ms);
  REQUIRE(run_writer({dir.path(), "app", "bursts", "4", "40", "10", "new"}) == 0);
  REQUIRE(cat.read_until(has("new burst 3 record 39"), 20s));
  cat.stop();
  CHECK(split_lines(cat.out) == expected("new", 4, 40));  // nothing of the older file
}

TEST_CASE("cat -f -n N starts with the last N records, then follows") {
  TempDir dir;
  REQUIRE(run_writer({dir.path(), "app", "bursts", "3", "40", "0", "before"}) == 0);
  Process cat(cli({"cat", "-f", "-n", "3", "-o", "cat", dir.path()}), Process::Output::pipe);
  REQUIRE(cat.read_until(has("before burst 2 record 39"), 20s));
  REQUIRE(run_writer({dir.path(), "app", "bursts", "1", "2", "0", "after"}) == 0);
  REQUIRE(cat.read_until(has("after burst 0 record 1"), 20s));
  cat.stop();
  CHECK(split_lines(cat.out) == std::vector<std::string>{"before burst 2 record 37", "before burst 2 record 38",
                                                         "before burst 2 record 39", "after burst 0 record 0",
                                                         "after burst 0 record 1"});
}

TEST_CASE("cat -f ends quietly with exit code 0 when its reader goes away") {
  TempDir dir;
  REQUIRE(run_writer({dir.path(), "app", "bursts", "1", "5", "0", "x"}) == 0);
  Process cat(cli({"cat", "-f", "-o", "cat", dir.path()}), Process::Output::pipe);
  REQUIRE(cat.read_until(has("x burst 0 record 4"), 20s));
  cat.close_output();
#ifdef _WIN32
  // Windows cannot tell a pipe's writer that its reader left but by failing a write: cat
  // notices at the next record.
  REQUIRE(run_writer({dir.path(), "app", "bursts", "1", "1", "0", "y"}) == 0);
#endif
  // (Elsewhere nothing new is written: cat notices the closed pipe while idle.)
  CHECK(cat.wait(10s) == 0);
}

TEST_CASE("cat -f shows the records appended to the file it follows") {
  TempDir source("follow-source"), dir("follow-append");
  Sample sample = write_sample(source.path(), 6, 20, 1, "appended");
  auto frames = frames_of(sample.bytes);
  auto through = records_through(sample.bytes, frames);
  std::vector<std::size_t> records;  // indexes of the records frames
  for (std::size_t i = 0; i < frames.size(); ++i)
    if (frames[i].type == kRecordsFrame) records.push_back(i);
  REQUIRE(records.size() >= 6);
  // The file starts with two records frames; the rest comes in two appends
  // while cat waits for them (woken by the change, or by its poll without inotify).
  std::string path = dir.path() + "/" + std::filesystem::path(sample.path).filename().string();
  std::vector<std::size_t> cuts{records[1], records[3], frames.size() - 1};
  std::size_t written = 0;
  auto append_through = [&](std::size_t frame) {
    std::ofstream(path, std::ios::binary | std::ios::app)
        << sample.bytes.substr(written, frames[frame].end() - written);
    written = frames[frame].end();
    return sample.messages[through[frame] - 1];
  };
  std::string last = append_through(cuts[0]);
  Process cat(cli({"cat", "-f", "-o", "cat", path}), Process::Output::pipe);
  REQUIRE(cat.read_until(has(last), 20s));
  for (std::size_t k = 1; k < cuts.size(); ++k) {
    last = append_through(cuts[k]);
    REQUIRE(cat.read_until(has(last), 20s));
  }
  cat.stop();
  CHECK(split_lines(cat.out) == sample.messages);
}
