// Records at the edges of a process's life, through a program shaped as
// users hit them: a service that fails before start(), one that logs from
// static destructors after stop(), threads that log before start().
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "process.hpp"
#include "test_support.hpp"

using namespace terse::test;

namespace {

struct Run {
  int exit_code = -1;
  std::string out;
  std::vector<std::string> err;
};

Run run_edge_program(const TempDir& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv{TERSE_EDGE_PROGRAM};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string out_path = dir / "stdout.txt";
  int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(out_fd >= 0);
  Run run;
  run.exit_code = exit_code(run_process(argv, out_fd, dir / "stderr.txt"));
  ::close(out_fd);
  run.out = read_file(out_path);
  run.err = split_lines(read_file(dir / "stderr.txt"));
  return run;
}

// `terse cat`'s default line: time, level, thread, file:line, message.
void check_line(const std::string& line, const std::string& level, const std::string& message) {
  static const std::regex layout(
      R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{9} (\w+) \[\d+\] tests/lifecycle/edge_program\.cpp:\d+ (.*))");
  std::smatch match;
  INFO(line);
  REQUIRE(std::regex_match(line, match, layout));
  CHECK(match[1] == level);
  CHECK(match[2] == message);
}

}  // namespace

TEST_CASE("a program that ends before start() prints what it logged at warn and above on stderr") {
  TempDir dir;
  std::string logs = dir / "logs";
  Run run = run_edge_program(dir, {"never-started", logs});
  CHECK(run.exit_code == 1);
  REQUIRE(run.err.size() == 5);
  CHECK(run.err[0].find("ended before terse::start() was called") != std::string::npos);
  CHECK(run.err[0].find("its 3 records at warn and above follow (200 below warn are not shown)") != std::string::npos);
  // The two threads' last records in time order: either may come first.
  std::vector<std::string> threads{run.err[1], run.err[2]};
  std::sort(threads.begin(), threads.end(),
            [](const std::string& a, const std::string& b) { return a.substr(a.size() - 9) < b.substr(b.size() - 9); });
  check_line(threads[0], "warn", "early thread 0 is done");
  check_line(threads[1], "warn", "early thread 1 is done");
  check_line(run.err[3], "error",
             fmt::format("config file {} could not be parsed: {}", "/etc/app.conf", "line 3: unexpected '}'"));
  // A static destructor runs after the exit handler printed the rest.
  check_line(run.err[4], "warn", "static destructor says goodbye");
  CHECK(!std::filesystem::exists(logs));
}

TEST_CASE("records logged before start() are written by it, with their own times") {
  TempDir dir;
  std::string logs = dir / "logs";
  Run run = run_edge_program(dir, {"started-later", logs});
  REQUIRE(run.exit_code == 0);
  CHECK(run.err.empty());
  Decoded decoded = decode_dir(logs);
  CHECK(decoded.intact());
  REQUIRE(decoded.lines.size() == 2 * 1001 + 1 + 100);
  std::vector<int> next(2, 0);
  std::int64_t latest_early_ns = 0;
  std::size_t at = 0;
  for (; at < 2 * 1001; ++at) {
    const Line& line = decoded.lines[at];
    int t = -1, i = -1;
    if (std::sscanf(line.message.c_str(), "early thread %d record %d", &t, &i) == 2) {
      REQUIRE((t == 0 || t == 1));
      CHECK(i == next[t]);
      next[t] = i + 1;
    } else {
      REQUIRE(std::sscanf(line.message.c_str(), "early thread %d is done", &t) == 1);
      CHECK(next[t] == 1000);
    }
    latest_early_ns = std::max(latest_early_ns, line.unix_ns);
  }
  CHECK(decoded.lines[at].message == fmt::format("config file {} parsed with {} warnings", "/etc/app.conf", 2));
  CHECK(decoded.lines[at].level == static_cast<std::uint8_t>(terse::Level::error));
  ++at;
  CHECK(decoded.lines[at].message == "after start 0");
  CHECK(decoded.lines[at].unix_ns > latest_early_ns);
  // True to the wall clock: the program ran within the last minute.
  auto now_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  CHECK(decoded.lines.front().unix_ns > now_ns - std::int64_t{60'000'000'000});
  CHECK(decoded.lines.front().unix_ns <= decoded.lines[at].unix_ns);
}

TEST_CASE("keep_before_start(off) discards calls before start()") {
  TempDir dir;
  std::string logs = dir / "logs";
  Run run = run_edge_program(dir, {"discarded-before-start", logs});
  REQUIRE(run.exit_code == 0);
  std::vector<std::string> expected;
  for (int i = 0; i < 100; ++i) expected.push_back(fmt::format("after start {}", i));
  require_messages(decode_dir(logs), expected);
}

TEST_CASE("records before start() that do not fit a thread's buffer are counted, and the log says how many") {
  TempDir dir;
  std::string logs = dir / "logs";
  const int count = 50'000;  // some 6 MiB of records for a 1 MiB buffer
  Run run = run_edge_program(dir, {"overflow-before-start", logs, std::to_string(count)});
  REQUIRE(run.exit_code == 0);
  Decoded decoded = decode_dir(logs);
  CHECK(decoded.intact());
  std::uint64_t kept = 0;
  std::uint64_t dropped = 0;
  for (const auto& line : decoded.lines) {
    if (line.dropped) {
      dropped += line.dropped_count;
    } else if (line.message != "started") {
      CHECK(line.message == fmt::format("early {} {}", kept, std::string(100, 'x')));
      ++kept;
    }
  }
  CHECK(kept > 1000);
  CHECK(dropped > 0);
  CHECK(kept + dropped == count);
  CHECK(decoded.lines.back().message == "started");
}

TEST_CASE("calls at warn and above after stop() are printed on stderr as terse cat prints them, the rest counted") {
  TempDir dir;
  std::string logs = dir / "logs";
  Run run = run_edge_program(dir, {"after-stop", logs});
  REQUIRE(run.exit_code == 0);
  CHECK(run.out == "printed 2 not written 1\n");
  REQUIRE(run.err.size() == 3);
  check_line(run.err[0], "warn", "after stop 2");
  check_line(run.err[1], "error", "after stop from a new thread 4");
  check_line(run.err[2], "warn", "static destructor says farewell");
  require_messages(decode_dir(logs), {"running 1"});
}

TEST_CASE("a static destructor that logs after stop() ran at exit is printed on stderr") {
  TempDir dir;
  std::string logs = dir / "logs";
  Run run = run_edge_program(dir, {"stopped-at-exit", logs});
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.err.size() == 1);
  check_line(run.err[0], "warn", "static destructor says after exit");
  require_messages(decode_dir(logs), {"running 1"});
}

TEST_CASE("stats() after stop() counts the calls printed and those only counted") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  terse::stop();
  terse::Stats before = terse::stats();
  TERSE_DEBUG("not written after stop {}", 1);
  TERSE_ERROR("printed after stop {}", 2);
  terse::Stats after = terse::stats();
  CHECK(after.records_not_written == before.records_not_written + 1);
  CHECK(after.stderr_records == before.stderr_records + 1);
  CHECK(after.records_written == 0);
}
