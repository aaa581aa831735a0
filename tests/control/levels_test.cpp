// Levels per module: selectors through set_level() and set_levels(),
// TERSE_LEVEL's syntax, and the levels file an operator edits while the
// process runs; each decoded from the files the logger wrote.
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <terse/terse.hpp>

#include "modules.hpp"
#include "sink_helpers.hpp"
#include "test_support.hpp"

using namespace terse;
using namespace terse::test;
using namespace levels_test;
using namespace std::chrono_literals;

namespace {

Config info_config(const std::string& directory) {
  Config config = test_config(directory);
  config.level = Level::info;
  return config;
}

std::string db_site() { return fmt::format("db/query.cpp:{}", db_debug_line()); }

// Polls: the levels file is looked at four times a second.
bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit = 3000ms) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

std::vector<std::string> messages_of(const Decoded& decoded, const std::string& file_part) {
  std::vector<std::string> messages;
  for (const Line& line : decoded.lines)
    if (line.file.find(file_part) != std::string::npos) messages.push_back(line.message);
  return messages;
}

}  // namespace

TEST_CASE("a selector sets the level of a path, a file or a call site; the best match wins") {
  TempDir dir("levels-selectors");
  start(info_config(dir.path()));
  net_log(1);
  db_log(1);
  set_level("net/", Level::debug);  // also covers tests/control/net/conn.cpp
  net_log(2);
  db_log(2);
  set_level("tests/control/net/conn.cpp", Level::warn);  // a file over a prefix, though shorter
  net_log(3);
  db_log(3);
  set_level(db_site(), Level::debug);  // one call site: its neighbours stay at info
  set_level("db/", Level::error);      // a call site over a prefix
  net_log(4);
  db_log(4);
  set_level(Level::warn);
  set_level("db/", Level::info);
  net_log(5);
  db_log(5);
  CHECK(levels() == "warn,net/=debug,tests/control/net/conn.cpp=warn," + db_site() + "=debug,db/=info");
  CHECK(terse::level() == Level::warn);
  stop();
  Decoded decoded = decode_dir(dir.path());
  require_messages(decoded, {"net info 1", "db info 1", "net debug 2", "net info 2", "db info 2", "db info 3",
                             "db debug 4", "db debug 5", "db info 5"});
  for (const Line& line : decoded.lines) {
    if (line.message.starts_with("db debug")) CHECK(line.line == static_cast<std::uint32_t>(db_debug_line()));
  }
}

TEST_CASE("a site that has not run yet follows the levels in force at its first call, and every change after") {
  TempDir dir("levels-fresh");
  db_early(0);  // before start(): discarded, and settled as off
  Config config = info_config(dir.path());
  config.level = Level::warn;
  start(config);
  db_early(1);
  db_late(1);  // its first call, at warn: skipped
  set_level("net/", Level::debug);
  net_fresh(1);  // its first call comes after the selector
  set_level(Level::info);
  db_early(2);
  db_late(2);
  set_level("net/", Level::info);
  net_fresh(2);
  stop();
  db_early(3);  // after stop(): discarded
  require_messages(decode_dir(dir.path()), {"net fresh 1", "db early 2", "db late 2"});
}

TEST_CASE("set_levels replaces every selector; a bad text or selector is an error and changes nothing") {
  TempDir dir("levels-replace");
  CHECK(levels() == "off");
  start(info_config(dir.path()));
  CHECK(levels() == "info");
  set_levels("debug, net/ = trace ,db/=warn");
  CHECK(levels() == "debug,net/=trace,db/=warn");
  set_levels("net/=warn");  // no default: the one in force stays
  CHECK(levels() == "debug,net/=warn");
  CHECK_THROWS_WITH(set_levels("info,net/=loud"), Catch::Contains("'net/=loud': 'loud' is not a level"));
  CHECK_THROWS_WITH(set_level("", Level::debug), Catch::Contains("a selector is empty"));
  CHECK_THROWS_WITH(set_level("db/query.cpp:0", Level::debug), Catch::Contains("is not a line number"));
  CHECK(levels() == "debug,net/=warn");
  net_log(1);
  db_log(1);
  stop();
  CHECK(levels() == "off");
  require_messages(decode_dir(dir.path()), {"db debug 1", "db info 1"});
}

TEST_CASE("TERSE_LEVEL sets the default and the selectors at start") {
  TempDir dir("levels-env");
  ScopedEnv file("TERSE_LEVELS_FILE", std::nullopt);
  Config config = info_config(dir.path());
  config.read_environment = true;
  {
    ScopedEnv level("TERSE_LEVEL", "warn, net/=debug ," + db_site() + "=trace");
    start(config);
    CHECK(levels() == "warn,net/=debug," + db_site() + "=trace");
    net_log(1);
    db_log(1);
    stop();
    require_messages(decode_dir(dir.path()), {"net debug 1", "net info 1", "db debug 1"});
  }
  struct Bad {
    const char* value;
    const char* says;
  };
  for (const Bad& bad :
       {Bad{"info,warn", "two default levels, 'info' and 'warn'"}, Bad{"=debug", "'=debug' has no selector before '='"},
        Bad{"info,net/=loud", "'net/=loud': 'loud' is not a level"},
        Bad{"db/query.cpp:0=trace", "'db/query.cpp:0': '0' is not a line number"},
        Bad{"db/query.cpp:=trace", "'db/query.cpp:' has no line number after ':'"},
        Bad{"verbose", "'verbose' is not a level"}}) {
    ScopedEnv level("TERSE_LEVEL", std::string(bad.value));
    std::string error = start_error(config);
    INFO(error);
    CHECK(error.find("TERSE_LEVEL='" + std::string(bad.value) + "' is not valid: " + bad.says) != std::string::npos);
    CHECK(error.find("SELECTOR=LEVEL") != std::string::npos);
    CHECK(error.find("trace, debug, info, warn, error, critical or off") != std::string::npos);
  }
}

TEST_CASE("the levels file is read at start and again when it changes; a bad one is reported and changes nothing") {
  TempDir dir("levels-file");
  std::string path = dir.path() + "/terse.levels";
  write_file(path, "# during the incident\nwarn\nnet/=debug\n");
  std::mutex errors_mutex;
  std::vector<std::string> errors;
  Config config = info_config(dir.path() + "/logs");
  config.levels_file = path;
  config.on_error = [&](const std::string& message) {
    std::lock_guard lock(errors_mutex);
    errors.push_back(message);
  };
  start(config);
  CHECK(levels() == "warn,net/=debug");  // before the first call
  net_log(1);
  db_log(1);

  write_file(path, "info");  // a new default, and no selector any more
  auto changed = std::chrono::steady_clock::now();
  REQUIRE(eventually([] { return levels() == "info"; }));
  CHECK(std::chrono::steady_clock::now() - changed < 2s);  // within a second, and some slack for a busy machine
  net_log(2);
  db_log(2);

  write_file(path, "info,net/=loud");
  REQUIRE(eventually([&] {
    std::lock_guard lock(errors_mutex);
    return !errors.empty();
  }));
  CHECK(levels() == "info");
  net_log(3);

  ::unlink(path.c_str());  // gone: the levels in force stay
  std::this_thread::sleep_for(600ms);
  CHECK(levels() == "info");
  write_file(path, "info,db/=trace");
  REQUIRE(eventually([] { return levels() == "info,db/=trace"; }));
  db_log(4);
  stop();

  {
    std::lock_guard lock(errors_mutex);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].find("levels file '" + path + "' does not parse: 'net/=loud': 'loud' is not a level") !=
          std::string::npos);
    CHECK(errors[0].find("the levels in force stay: info") != std::string::npos);
  }
  Decoded decoded = decode_dir(dir.path() + "/logs");
  REQUIRE(decoded.intact());
  CHECK(messages_of(decoded, "tests/control/") == std::vector<std::string>{"net debug 1", "net info 1", "net info 2",
                                                                           "db info 2", "net info 3", "db trace 4",
                                                                           "db debug 4", "db info 4"});
  // What the operator did is in the log too, from terse itself.
  std::vector<std::string> notices;
  std::vector<std::uint8_t> notice_levels;
  for (const Line& line : decoded.lines) {
    if (line.file != "terse") continue;
    notices.push_back(line.message);
    notice_levels.push_back(line.level);
  }
  REQUIRE(notices.size() == 5);
  CHECK(notices[0] == "levels from '" + path + "': warn,net/=debug");
  CHECK(notices[1] == "levels from '" + path + "': info");
  CHECK(notices[2] == errors[0]);
  CHECK(notice_levels[2] == static_cast<std::uint8_t>(Level::error));
  CHECK(notices[3] == "levels file '" + path + "' is gone; the levels in force stay: info");
  CHECK(notices[4] == "levels from '" + path + "': info,db/=trace");
}

TEST_CASE("TERSE_LEVELS_FILE names the levels file; a missing one sets nothing until it appears") {
  TempDir dir("levels-file-env");
  std::string path = dir.path() + "/later.levels";
  ScopedEnv level("TERSE_LEVEL", std::nullopt);
  ScopedEnv file("TERSE_LEVELS_FILE", path);
  Config config = info_config(dir.path() + "/logs");
  config.read_environment = true;
  start(config);
  CHECK(levels() == "info");
  net_log(1);
  write_file(path, "net/=debug");
  REQUIRE(eventually([] { return levels() == "info,net/=debug"; }));
  net_log(2);
  stop();
  CHECK(messages_of(decode_dir(dir.path() + "/logs"), "tests/control/") ==
        std::vector<std::string>{"net info 1", "net debug 2", "net info 2"});
}

TEST_CASE("levels change while threads log: every record is whole, and the last levels hold exactly") {
  TempDir dir("levels-load");
  start(info_config(dir.path()));
  constexpr int kThreads = 4;
  std::atomic<bool> running{true};
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      for (int round = t * 1'000'000; running.load(std::memory_order_relaxed); ++round) {
        net_log(round);
        db_log(round);
      }
    });
  }
  while (ready.load() < kThreads) std::this_thread::yield();
  const char* settings[] = {"info", "debug,net/=off", "warn,db/=trace", "trace", "off,net/=debug"};
  int changes = static_cast<int>(scaled(2000, 200));
  for (int i = 0; i < changes; ++i) {
    if (i % 3 == 0) {
      set_levels(settings[i % 5]);
    } else if (i % 3 == 1) {
      set_level("net/", static_cast<Level>(i % 7));
    } else {
      set_level(db_site(), static_cast<Level>(i % 7));
    }
  }
  running.store(false);
  for (auto& thread : threads) thread.join();
  set_levels("info,net/=debug");
  std::thread last([] {
    net_log(-1);
    db_log(-1);
  });
  last.join();
  stop();
  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  REQUIRE(decoded.lines.size() > 5);
  for (const Line& line : decoded.lines) {
    bool known = line.message.starts_with("net ") || line.message.starts_with("db ");
    CHECK(known);
  }
  std::vector<std::string> tail;
  for (auto it = decoded.lines.end() - 3; it != decoded.lines.end(); ++it) tail.push_back(it->message);
  CHECK(tail == std::vector<std::string>{"net debug -1", "net info -1", "db info -1"});
}
