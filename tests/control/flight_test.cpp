// The flight recorder: records below the level a call site logs at, from
// Config::flight_level up, are kept in memory and written only when a
// trigger record or a crash comes, all threads' together in time order,
// marked in the decoded records, the CLI's text and JSON, and terse stats.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <terse/terse.hpp>

#include "file_helpers.hpp"
#include "json_reader.hpp"
#include "test_support.hpp"

using namespace terse;
using namespace terse::test;

namespace {

Config flight_config(const std::string& directory) {
  Config config = test_config(directory);
  config.level = Level::info;
  config.flight_level = Level::debug;
  return config;
}

std::vector<std::string> messages_of(const std::vector<Line>& lines) {
  std::vector<std::string> messages;
  for (const Line& line : lines) messages.push_back(line.message);
  return messages;
}

std::size_t count_flight(const std::vector<Line>& lines) {
  std::size_t n = 0;
  for (const Line& line : lines) n += line.flight;
  return n;
}

}  // namespace

TEST_CASE("recorded records are not written without a trigger") {
  TempDir dir("flight-none");
  start(flight_config(dir.path()));
  for (int i = 0; i < 100; ++i) TERSE_DEBUG("recorded {}", i);
  TERSE_TRACE("below the recorder {}", 1);
  TERSE_INFO("written {}", 1);
  TERSE_WARN("below the trigger {}", 2);
  flush();
  Stats stats = terse::stats();
  CHECK(stats.flight_recorded == 100);
  CHECK(stats.flight_written == 0);
  CHECK(stats.flight_overwritten == 0);
  stop();

  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  CHECK(messages_of(decoded.lines) == std::vector<std::string>{"written 1", "below the trigger 2"});
  CHECK(count_flight(decoded.lines) == 0);
}

TEST_CASE("a trigger writes every thread's recorded records in time order, marked, just before itself") {
  TempDir dir("flight-trigger");
  Config config = flight_config(dir.path());
  std::mutex seen_mutex;
  std::vector<std::pair<std::string, bool>> seen;  // what on_record got
  config.callback_level = Level::debug;
  config.on_record = [&](const Record& r) {
    std::lock_guard lock(seen_mutex);
    seen.emplace_back(std::string(r.message), r.flight);
  };
  start(config);
  TERSE_INFO("before {}", 0);
  constexpr int kThreads = 3;
  constexpr int kEach = 200;
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &ready] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      for (int i = 0; i < kEach; ++i) TERSE_DEBUG("thread {} step {}", t, i);
    });
  }
  for (auto& thread : threads) thread.join();
  TERSE_ERROR("failed {}", 1);
  TERSE_ERROR("failed {}", 2);  // nothing was recorded in between: nothing more is written
  TERSE_DEBUG("after {}", 1);
  TERSE_CRITICAL("failed {}", 3);
  flush();
  Stats stats = terse::stats();
  CHECK(stats.callback_missed == 0);
  CHECK(stats.flight_recorded == kThreads * kEach + 1);
  CHECK(stats.flight_written == kThreads * kEach + 1);
  stop();

  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  const std::vector<Line>& lines = decoded.lines;
  REQUIRE(lines.size() == 1 + kThreads * kEach + 2 + 1 + 1);
  CHECK(lines[0].message == "before 0");
  CHECK_FALSE(lines[0].flight);
  std::vector<int> next_step(kThreads, 0);
  for (std::size_t k = 1; k <= kThreads * kEach; ++k) {
    const Line& line = lines[k];
    REQUIRE(line.flight);
    CHECK(line.level == static_cast<std::uint8_t>(Level::debug));
    CHECK(line.ticks >= lines[k - 1].ticks);  // all threads merged by time
    int t = -1, i = -1;
    REQUIRE(std::sscanf(line.message.c_str(), "thread %d step %d", &t, &i) == 2);
    REQUIRE(t >= 0);
    REQUIRE(t < kThreads);
    CHECK(i == next_step[static_cast<std::size_t>(t)]++);  // each thread's, none lost, in its order
  }
  std::size_t k = 1 + kThreads * kEach;
  CHECK(messages_of({lines.begin() + static_cast<std::ptrdiff_t>(k), lines.end()}) ==
        std::vector<std::string>{"failed 1", "failed 2", "after 1", "failed 3"});
  CHECK_FALSE(lines[k].flight);
  CHECK_FALSE(lines[k + 1].flight);
  CHECK(lines[k + 2].flight);
  CHECK_FALSE(lines[k + 3].flight);

  // The callback gets them marked too, in the file's order.
  std::lock_guard lock(seen_mutex);
  for (std::size_t j = 0; j < std::max(seen.size(), lines.size()); ++j)
    if (j >= seen.size() || j >= lines.size() || seen[j].first != lines[j].message) {
      FAIL_CHECK("first difference at " << j << ": " << (j < seen.size() ? seen[j].first : "-") << " / "
                                        << (j < lines.size() ? lines[j].message : "-"));
      break;
    }
  REQUIRE(seen.size() == lines.size());
  for (std::size_t j = 0; j < seen.size(); ++j) {
    CHECK(seen[j].first == lines[j].message);
    CHECK(seen[j].second == lines[j].flight);
  }
}

TEST_CASE("the CLI marks flight records in text and JSON and counts them in stats") {
  TempDir dir("flight-cli");
  start(flight_config(dir.path()));
  TERSE_DEBUG("kept {}", 7);
  TERSE_INFO("normal {}", 8);
  TERSE_ERROR("broke {}", 9);
  stop();

  Run text = run_terse({"cat", "--format", "{level} {message}", dir.path()});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out == "info normal 8\ndebug (flight) kept 7\nerror broke 9\n");
  Run json = run_terse({"cat", "-o", "json", dir.path()});
  REQUIRE(json.exit_code == 0);
  std::vector<std::string> lines = split_lines(json.out);
  REQUIRE(lines.size() == 3);
  std::vector<std::optional<Json>> objects;
  for (const std::string& line : lines) {
    objects.push_back(parse_json(line));
    REQUIRE(objects.back());
  }
  CHECK(objects[0]->members.count("flight") == 0);
  CHECK(objects[1]->members["message"].text == "kept 7");
  REQUIRE(objects[1]->members.count("flight") == 1);
  CHECK(objects[1]->members["flight"].kind == Json::Kind::boolean);
  CHECK(objects[1]->members["flight"].boolean);
  CHECK(objects[2]->members.count("flight") == 0);
  Run stats = run_terse({"stats", dir.path()});
  REQUIRE(stats.exit_code == 0);
  CHECK(stats.out.find("flight     1 records of the flight recorder") != std::string::npos);
  Run verify = run_terse({"verify", dir.path()});
  CHECK(verify.exit_code == 0);
}

TEST_CASE("each thread's recorder keeps the newest flight_bytes of records") {
  TempDir dir("flight-bounded");
  Config config = flight_config(dir.path());
  config.flight_bytes = 1024;
  start(config);
  constexpr int kCalls = 1000;
  for (int i = 0; i < kCalls; ++i) TERSE_DEBUG("step {}", i);
  TERSE_ERROR("failed {}", 1);
  flush();
  Stats stats = terse::stats();
  stop();

  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  REQUIRE(decoded.lines.size() >= 2);
  std::vector<Line> kept(decoded.lines.begin(), decoded.lines.end() - 1);
  // A record of one int is 16 bytes of header and 4 of argument: 51 fit.
  CHECK(kept.size() == 1024 / 20);
  for (std::size_t j = 0; j < kept.size(); ++j) {
    CHECK(kept[j].flight);
    CHECK(kept[j].message == fmt::format("step {}", kCalls - kept.size() + j));
  }
  CHECK(stats.flight_recorded == kCalls);
  CHECK(stats.flight_written == kept.size());
  CHECK(stats.flight_overwritten == kCalls - kept.size());
}

TEST_CASE("a call site's own level decides: written at it, recorded below it, nothing when off") {
  TempDir dir("flight-levels");
  start(flight_config(dir.path()));
  set_level("flight_test.cpp", Level::debug);
  TERSE_DEBUG("written at debug {}", 1);
  TERSE_TRACE("below the recorder {}", 2);
  set_level("flight_test.cpp", Level::warn);
  TERSE_INFO("recorded below warn {}", 3);
  set_level("flight_test.cpp", Level::off);
  TERSE_DEBUG("off records nothing {}", 4);
  set_level("flight_test.cpp", Level::info);
  TERSE_ERROR("trigger {}", 5);
  stop();

  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  CHECK(messages_of(decoded.lines) ==
        std::vector<std::string>{"written at debug 1", "recorded below warn 3", "trigger 5"});
  REQUIRE(decoded.lines.size() == 3);
  CHECK_FALSE(decoded.lines[0].flight);
  CHECK(decoded.lines[1].flight);
  CHECK_FALSE(decoded.lines[2].flight);
}

TEST_CASE("flight_trigger sets the level that writes the recorder out") {
  TempDir dir("flight-warn-trigger");
  Config config = flight_config(dir.path());
  config.flight_trigger = Level::warn;
  start(config);
  TERSE_DEBUG("kept {}", 1);
  TERSE_INFO("no trigger {}", 2);
  TERSE_WARN("trigger {}", 3);
  stop();
  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  CHECK(messages_of(decoded.lines) == std::vector<std::string>{"no trigger 2", "kept 1", "trigger 3"});
}

TEST_CASE("a crash writes what the recorder holds") {
  TempDir dir("flight-crash");
  pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGABRT, SIG_DFL);
    std::set_terminate(nullptr);
    start(flight_config(dir.path()));
    for (int i = 0; i < 100; ++i) TERSE_DEBUG("before the crash {}", i);
    flush();  // these in the collector's recorder
    for (int i = 100; i < 150; ++i) TERSE_DEBUG("before the crash {}", i);
    TERSE_INFO("last {}", 1);
    std::abort();
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);

  Decoded decoded = decode_dir(dir.path());
  std::vector<std::string> recorded;
  bool last_seen = false;
  for (const Line& line : decoded.lines) {
    if (line.flight) recorded.push_back(line.message);
    if (line.message == "last 1") {
      CHECK_FALSE(line.flight);
      last_seen = true;
    }
  }
  CHECK(last_seen);
  REQUIRE(recorded.size() == 150);
  for (int i = 0; i < 150; ++i) CHECK(recorded[static_cast<std::size_t>(i)] == fmt::format("before the crash {}", i));
}

TEST_CASE("a bad flight recorder config is refused at start") {
  TempDir dir("flight-config");
  Config config = flight_config(dir.path());
  config.flight_bytes = 100;
  CHECK(start_error(config) == "terse: Config::flight_bytes must be 1 KiB to 64 MiB, not 100");
  config.flight_bytes = std::size_t{1} << 30;
  CHECK(start_error(config).find("Config::flight_bytes must be 1 KiB to 64 MiB") != std::string::npos);
  config.flight_bytes = 4096;
  config.flight_level = static_cast<Level>(42);
  CHECK(start_error(config) == "terse: Config::flight_level is not a valid level");
  config.flight_level = Level::debug;
  config.flight_trigger = static_cast<Level>(42);
  CHECK(start_error(config) == "terse: Config::flight_trigger is not a valid level");
  // Without a recorder its size is not looked at.
  config = test_config(dir.path());
  config.flight_bytes = 0;
  CHECK(start_error(config) == "started");
}
