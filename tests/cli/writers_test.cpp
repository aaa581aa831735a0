// Several processes writing one NAME into one directory at the same time (the
// workers of a prefork server): their sequence numbers interleave, and the
// reader tells the writers apart by their files' info frames, reads each
// writer's files in order and merges the writers by time, also following
// and resuming from a cursor.
#include <chrono>
#include <cstdio>
#include <map>
#include <regex>
#include <thread>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "cli_helpers.hpp"

using namespace terse::test;
using namespace std::chrono_literals;

namespace {

constexpr int kBursts = 10, kPerBurst = 50;

std::string field(const std::string& json_line, const char* key) {
  std::regex pattern(std::string("\"") + key + "\":\"([^\"]*)\"");
  std::smatch m;
  REQUIRE(std::regex_search(json_line, m, pattern));
  return m[1];
}

// Two writer processes logging to one NAME at the same time, each rolling
// its files every 4 KiB, so that their sequence numbers interleave.
void write_two(const std::string& dir) {
  int rc_a = -1, rc_b = -1;
  std::string bursts = std::to_string(kBursts), per = std::to_string(kPerBurst);
  std::thread a([&] { rc_a = run_writer({dir, "app", "bursts", bursts, per, "15", "A"}); });
  std::thread b([&] { rc_b = run_writer({dir, "app", "bursts", bursts, per, "15", "B"}); });
  a.join();
  b.join();
  REQUIRE(rc_a == 0);
  REQUIRE(rc_b == 0);
}

// Checks "{time} {message}" lines: every record of both writers once, each
// writer's in its own order, times never going back.
void check_merged(const std::vector<std::string>& lines) {
  REQUIRE(lines.size() == 2 * kBursts * kPerBurst);
  std::string last_time;
  int reversals = 0;
  std::map<std::string, int> next_of;  // writer tag -> its next record number
  for (const auto& line : lines) {
    std::string time = line.substr(0, 29);
    if (time < last_time) ++reversals;
    last_time = time;
    std::string message = line.substr(30);
    std::string tag = message.substr(0, 1);
    int burst = 0, record = 0;
    REQUIRE(std::sscanf(message.c_str() + 2, "burst %d record %d", &burst, &record) == 2);
    CHECK(burst * kPerBurst + record == next_of[tag]);
    ++next_of[tag];
  }
  CHECK(reversals == 0);
  CHECK(next_of["A"] == kBursts * kPerBurst);
  CHECK(next_of["B"] == kBursts * kPerBurst);
}

auto has_both_ends() {
  auto last = [](const char* tag) { return fmt::format("{} burst {} record {}\n", tag, kBursts - 1, kPerBurst - 1); };
  return [a = last("A"), b = last("B")](const std::string& out) {
    return out.find(a) != std::string::npos && out.find(b) != std::string::npos;
  };
}

}  // namespace

TEST_CASE("two processes writing one NAME at the same time come out merged by time") {
  TempDir dir;
  write_two(dir.path());
  REQUIRE(log_files(dir.path()).size() > 4);  // both rolled, taking turns at the numbers
  auto run = run_terse({"cat", "--utc", "--format", "{time} {message}", dir.path()});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  check_merged(split_lines(run.out));
}

TEST_CASE("cat -f follows each of two processes writing one NAME") {
  TempDir dir;
  Process cat(cli({"cat", "-f", "--utc", "--format", "{time} {message}", dir.path()}), Process::Output::pipe);
  write_two(dir.path());
  bool all_seen = cat.read_until(has_both_ends(), 20s);
  cat.stop();
  INFO(cat.out);
  REQUIRE(all_seen);
  check_merged(split_lines(cat.out));
}

TEST_CASE("a cursor taken while reading two processes' files resumes each of them") {
  TempDir dir;
  write_two(dir.path());
  auto lines = split_lines(run_terse({"cat", "-o", "json", "--show-cursor", dir.path()}).out);
  REQUIRE(lines.size() == 2 * kBursts * kPerBurst);
  for (std::size_t k : {0u, 77u, 333u, 500u, 998u, 999u}) {
    std::string cursor = field(lines[k], "cursor");
    auto rest = run_terse({"cat", "-o", "json", "--show-cursor", "--after-cursor", cursor, dir.path()});
    INFO("after record " << k << ": " << rest.err);
    CHECK(rest.exit_code == 0);
    // Nothing missing, nothing twice, and the same cursors on the way.
    CHECK(split_lines(rest.out) ==
          std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(k) + 1, lines.end()));
  }
}
