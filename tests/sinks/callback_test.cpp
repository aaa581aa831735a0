// Config::on_record: records at or above callback_level, on terse's thread,
// in order, with the message as `terse cat` prints it; a callback that
// throws or falls behind costs the file nothing.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <terse/terse.hpp>

#include "json_reader.hpp"
#include "sink_helpers.hpp"
#include "test_support.hpp"

using namespace terse;
using namespace terse::test;

namespace {

struct Seen {
  Level level;
  std::int64_t time_ns;
  std::uint64_t thread;
  std::string file;
  std::uint32_t line;
  std::string format;
  std::string message;
  std::string json;
  std::thread::id called_on;
};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

TEST_CASE("on_record gets every record at or above callback_level, on terse's thread, as terse cat shows it") {
  TempDir dir("callback");
  std::mutex mutex;
  std::vector<Seen> seen;
  Config config = test_config(dir.path());
  config.callback_level = Level::warn;
  config.on_record = [&](const Record& r) {
    std::lock_guard lock(mutex);
    seen.push_back(Seen{r.level, r.time_ns, r.thread, std::string(r.file), r.line, std::string(r.format),
                        std::string(r.message), std::string(r.json()), std::this_thread::get_id()});
  };
  std::int64_t before = now_ns();
  start(config);
  std::vector<std::string> expected;
  int line_of_warn = 0;
  for (int i = 0; i < 400; ++i) {
    TERSE_INFO("info {}", i);
    if (i % 4 == 0) {
      line_of_warn = __LINE__ + 1;
      TERSE_WARN("warn {} of {:>5}", i, "q");
      expected.push_back(fmt::format("warn {} of {:>5}", i, "q"));
    }
    if (i % 40 == 0) {
      TERSE_ERROR("error {:.2f}", i / 3.0);
      expected.push_back(fmt::format("error {:.2f}", i / 3.0));
    }
  }
  TERSE_CRITICAL("critical {}", true);
  expected.push_back("critical true");
  flush();  // the callback has seen everything logged before it
  std::int64_t after = now_ns();
  std::lock_guard lock(mutex);
  Stats stats = terse::stats();
  REQUIRE(seen.size() == expected.size());
  CHECK(stats.callback_records == expected.size());
  CHECK(stats.callback_missed == 0);
  auto self = static_cast<std::uint64_t>(::gettid());
  for (std::size_t i = 0; i < seen.size(); ++i) {
    INFO(i);
    const Seen& s = seen[i];
    REQUIRE(s.message == expected[i]);
    CHECK(s.level >= Level::warn);
    CHECK(s.thread == self);
    CHECK(s.called_on != std::this_thread::get_id());
    CHECK(s.time_ns >= before);
    CHECK(s.time_ns <= after);
    CHECK(s.file == "tests/sinks/callback_test.cpp");
    auto object = parse_json(s.json);
    REQUIRE(object);
    CHECK(object->members["message"].text == s.message);
  }
  CHECK(seen[0].line == static_cast<std::uint32_t>(line_of_warn));
  CHECK(seen[0].format == "warn {} of {:>5}");
  CHECK(seen.back().level == Level::critical);
  for (std::size_t i = 1; i < seen.size(); ++i) CHECK(seen[i - 1].time_ns <= seen[i].time_ns);
  stop();
}

TEST_CASE("a callback that throws is counted and reported once; it goes on being called and the file misses nothing") {
  TempDir dir("callback-throws");
  std::atomic<int> calls{0};
  std::vector<std::string> errors;
  std::mutex errors_mutex;
  Config config = test_config(dir.path());
  config.callback_level = Level::info;
  config.on_record = [&](const Record&) {
    ++calls;
    throw std::runtime_error("alerting backend is down");
  };
  config.on_error = [&](const std::string& e) {
    std::lock_guard lock(errors_mutex);
    errors.push_back(e);
  };
  start(config);
  std::vector<std::string> expected;
  for (int i = 0; i < 1000; ++i) {
    TERSE_INFO("record {}", i);
    expected.push_back(fmt::format("record {}", i));
  }
  flush();
  Stats stats = terse::stats();
  stop();
  CHECK(calls == 1000);
  CHECK(stats.callback_errors == 1000);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("on_record threw: alerting backend is down") != std::string::npos);
  require_messages(decode_dir(dir.path()), expected);
}

TEST_CASE("a callback that stalls misses records, says so, and holds up neither the callers nor the file") {
  TempDir dir("callback-slow");
  std::mutex mutex;
  std::condition_variable cv;
  bool released = false;
  std::atomic<std::uint64_t> calls{0};
  std::vector<std::string> errors;
  Config config = test_config(dir.path());
  config.callback_level = Level::info;
  config.on_record = [&](const Record&) {
    ++calls;
    std::unique_lock lock(mutex);
    // Stuck until the test has logged everything (or, if logging itself were
    // held up by this, long enough for the test to fail rather than hang).
    cv.wait_for(lock, std::chrono::seconds(60), [&] { return released; });
  };
  config.on_error = [&](const std::string& e) {
    std::lock_guard lock(mutex);
    errors.push_back(e);
  };
  start(config);
  std::vector<std::string> expected;
  // Bursts apart in time: each goes to the writer as a batch of its own, of
  // 800 KiB, so that the few batches that wait for the view (4 MiB) fill up.
  const int bursts = 12;
  const std::string padding(8 << 10, 'p');
  for (int b = 0; b < bursts; ++b) {
    for (int i = 0; i < 100; ++i) {
      TERSE_INFO("burst {} record {} {}", b, i, padding);
      expected.push_back(fmt::format("burst {} record {} {}", b, i, padding));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(80));
  }
  {
    std::lock_guard lock(mutex);
    released = true;  // all logged while the callback was stuck
  }
  cv.notify_all();
  flush();
  Stats stats = terse::stats();
  stop();
  require_messages(decode_dir(dir.path()), expected);
  CHECK(stats.callback_missed > 0);
  CHECK(stats.callback_records + stats.callback_missed == expected.size());
  CHECK(calls == stats.callback_records);
  std::lock_guard lock(mutex);
  bool said = false;
  for (const auto& e : errors) said |= e.find("on_record could not keep up") != std::string::npos;
  CHECK(said);
}
