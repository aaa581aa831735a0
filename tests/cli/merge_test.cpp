// Several inputs given together come out as one stream in time order: the
// rolled files of one NAME are read one after another, different NAMEs and
// directories are merged by time, also while following live writers.
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "cli_helpers.hpp"

using namespace terse::test;
using namespace std::chrono_literals;

namespace {

// Two writer processes logging at the same time, each rolling its files.
void write_two(const std::string& dir_a, const std::string& name_a, const std::string& dir_b,
               const std::string& name_b) {
  int rc_a = -1, rc_b = -1;
  std::thread a([&] { rc_a = run_writer({dir_a, name_a, "bursts", "10", "50", "15", "A"}); });
  std::thread b([&] { rc_b = run_writer({dir_b, name_b, "bursts", "10", "50", "15", "B"}); });
  a.join();
  b.join();
  REQUIRE(rc_a == 0);
  REQUIRE(rc_b == 0);
}

// Checks the "{time} {message}" lines: every record once, each writer's in
// its own order, times never going back.
void check_merged(const std::string& out) {
  auto lines = split_lines(out);
  REQUIRE(lines.size() == 1000);
  std::string last_time;
  std::map<std::string, int> next_of;  // writer tag -> its next record number
  for (const auto& line : lines) {
    std::string time = line.substr(0, 29);
    CHECK(time >= last_time);
    last_time = time;
    std::string message = line.substr(30);
    std::string tag = message.substr(0, 1);
    int burst = 0, record = 0;
    REQUIRE(std::sscanf(message.c_str() + 2, "burst %d record %d", &burst, &record) == 2);
    CHECK(burst * 50 + record == next_of[tag]);
    ++next_of[tag];
  }
  CHECK(next_of["A"] == 500);
  CHECK(next_of["B"] == 500);
}

}  // namespace

TEST_CASE("two directories given together merge by time") {
  TempDir a, b;
  write_two(a.path(), "app", b.path(), "app");
  REQUIRE(log_files(a.path()).size() > 1);  // the writer rolled
  auto run = run_terse({"cat", "--utc", "--format", "{time} {message}", a.path(), b.path()});
  INFO(run.err);
  CHECK(run.exit_code == 0);
  check_merged(run.out);
}

TEST_CASE("one directory with two NAMEs: each NAME is a sequence, the NAMEs merge by time") {
  TempDir dir;
  write_two(dir.path(), "alpha", dir.path(), "beta");
  auto run = run_terse({"cat", "--utc", "--format", "{time} {message}", dir.path()});
  CHECK(run.exit_code == 0);
  check_merged(run.out);
  // Files given one by one (as a shell glob does) are grouped the same way.
  std::vector<std::string> args{"cat", "--utc", "--format", "{time} {message}"};
  auto files = log_files(dir.path());
  args.insert(args.end(), files.rbegin(), files.rend());  // any order
  auto globbed = run_terse(args);
  CHECK(globbed.out == run.out);
}

TEST_CASE("files of one sequence read in sequence-number order, not name order") {
  TempDir dir;
  REQUIRE(run_writer({dir.path(), "app", "bursts", "20", "50", "0", "A"}) == 0);
  auto files = log_files(dir.path());
  REQUIRE(files.size() >= 3);
  auto run = run_terse({"cat", "-o", "cat", dir.path()});
  auto lines = split_lines(run.out);
  REQUIRE(lines.size() == 1000);
  for (int i = 0; i < 1000; ++i)
    CHECK(lines[static_cast<std::size_t>(i)] == fmt::format("A burst {} record {}", i / 50, i % 50));
}

TEST_CASE("cat -f of two directories written live prints one stream in time order with every record once") {
  TempDir a, b;
  // Following from before either writer starts: both directories are empty.
  Process cat(cli({"cat", "-f", "--utc", "--format", "{time} {message}", a.path(), b.path()}), Process::Output::pipe);
  std::this_thread::sleep_for(300ms);
  // Records every 1 ms and every 1.3 ms, never flushed: each writer's IO
  // thread writes them up to 50 ms late, so the two files grow out of step
  // and a record of one often reaches its file after later ones of the other.
  const int count_a = 600, count_b = 460;
  int rc_a = -1, rc_b = -1;
  std::thread writer_a([&] { rc_a = run_writer({a.path(), "app", "steady", std::to_string(count_a), "1000", "A"}); });
  std::thread writer_b([&] { rc_b = run_writer({b.path(), "app", "steady", std::to_string(count_b), "1300", "B"}); });
  bool all = cat.read_until(
      [&](const std::string& out) {
        return out.find(fmt::format(" A record {}\n", count_a - 1)) != std::string::npos &&
               out.find(fmt::format(" B record {}\n", count_b - 1)) != std::string::npos;
      },
      30s);
  writer_a.join();
  writer_b.join();
  cat.stop();
  REQUIRE(rc_a == 0);
  REQUIRE(rc_b == 0);
  REQUIRE(all);
  REQUIRE(log_files(a.path()).size() > 1);  // followed across rolls
  REQUIRE(log_files(b.path()).size() > 1);

  auto lines = split_lines(cat.out);
  CHECK(lines.size() == static_cast<std::size_t>(count_a + count_b));
  std::string last_time;
  std::size_t out_of_order = 0;
  std::map<std::string, int> next_of;  // writer tag -> its next record number
  for (const auto& line : lines) {
    REQUIRE(line.size() > 30);
    std::string time = line.substr(0, 29);
    if (time < last_time) {
      ++out_of_order;
      UNSCOPED_INFO("went back in time: " << last_time << " then " << line);
    }
    last_time = std::max(last_time, time);
    std::string tag = line.substr(30, 1);
    int record = -1;
    REQUIRE(std::sscanf(line.c_str() + 32, "record %d", &record) == 1);
    CHECK(record == next_of[tag]);  // nothing lost, nothing twice
    next_of[tag] = record + 1;
  }
  CHECK(out_of_order == 0);
  CHECK(next_of["A"] == count_a);
  CHECK(next_of["B"] == count_b);
}

TEST_CASE(
    "cat -f of two directories: a record held back while the other directory was awaited comes out first and whole "
    "when that directory's first file is still too new to read") {
  TempDir a, b;
  Process cat(cli({"cat", "-f", "--utc", "--format", "{time} {message}", a.path(), b.path()}), Process::Output::pipe);
  std::this_thread::sleep_for(300ms);
  // B's first burst reaches its file; the follower holds its first record
  // back for up to the grace period, since A's directory may still show an
  // earlier one.
  int rc_b = -1;
  std::thread writer_b([&] { rc_b = run_writer({b.path(), "app", "bursts", "3", "40", "400", "B"}); });
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (log_files(b.path()).empty() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(50ms);
  // Within that grace period a file appears in A that tells nothing yet (a
  // writer that has created its file and not written its header).
  {
    std::FILE* created = std::fopen((a.path() + "/app-20260101-001.tlog").c_str(), "w");
    REQUIRE(created != nullptr);
    std::fclose(created);
  }
  bool all = cat.read_until(
      [](const std::string& out) { return out.find(" B burst 2 record 39\n") != std::string::npos; }, 30s);
  writer_b.join();
  cat.stop();
  REQUIRE(rc_b == 0);
  REQUIRE(all);
  auto lines = split_lines(cat.out);
  CHECK(lines.size() == 120);
  int next = 0;
  for (const auto& line : lines) {
    REQUIRE(line.size() > 30);
    int burst = -1, record = -1;
    REQUIRE(std::sscanf(line.c_str() + 32, "burst %d record %d", &burst, &record) == 2);
    INFO(line);
    CHECK(burst * 40 + record == next);  // in order, nothing lost, nothing twice, each with its own arguments
    next = burst * 40 + record + 1;
  }
}
