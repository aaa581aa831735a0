// Several inputs given together come out as one stream in time order: the
// rolled files of one NAME are read one after another, different NAMEs and
// directories are merged by time.
#include <cstdio>
#include <map>
#include <thread>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "cli_helpers.hpp"

using namespace terse::test;

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
  for (int i = 0; i < 1000; ++i) CHECK(lines[static_cast<std::size_t>(i)] == fmt::format("A burst {} record {}", i / 50, i % 50));
}
