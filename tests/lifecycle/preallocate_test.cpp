// A thread's first logging call sets up the thread's buffer (a mapping, its
// first pages); a thread that called terse::preallocate() at its start has
// it already, so its first call costs what any call costs, and its record
// carries the time of its call. (Without it, the stamp is read before the
// set-up too, but once in some 25 runs here all four threads were late by
// half a millisecond, which preallocate() is the answer to.) Each
// record holds the CLOCK_REALTIME value read just before its call; the least
// over a few threads is robust to preemption.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace terse::test;

namespace {

std::int64_t realtime_now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct FirstCalls {
  std::int64_t least_lateness = std::numeric_limits<std::int64_t>::max();  // decoded − logged time
  std::int64_t least_duration = std::numeric_limits<std::int64_t>::max();  // of the call itself
};

// The first records of a few new threads, and how long their calls took.
FirstCalls first_calls(bool preallocate) {
  constexpr int kThreads = 4;
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 16u << 20;  // a set-up long enough to see
  terse::start(config);
  FirstCalls result;
  std::mutex mutex;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      if (preallocate) terse::preallocate();
      const auto begin = std::chrono::steady_clock::now();
      const std::int64_t now = realtime_now();
      TERSE_INFO("first {}", now);
      const auto took = std::chrono::steady_clock::now() - begin;
      std::lock_guard lock(mutex);
      result.least_duration = std::min<std::int64_t>(result.least_duration, std::chrono::nanoseconds(took).count());
    });
  }
  for (auto& thread : threads) thread.join();
  terse::stop();
  const Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.lines.size() == kThreads);
  for (const Line& line : decoded.lines) {
    const std::int64_t logged = std::stoll(line.message.substr(line.message.find(' ') + 1));
    result.least_lateness = std::min(result.least_lateness, line.unix_ns - logged);
  }
  return result;
}

}  // namespace

TEST_CASE("a thread's first record carries the time of its call, and preallocate() takes the set-up out of it") {
  const FirstCalls without = first_calls(false);
  const FirstCalls with = first_calls(true);
  INFO("least lateness of a first record: " << without.least_lateness << " ns without preallocate(), "
                                            << with.least_lateness
                                            << " ns with it; least first call: " << without.least_duration
                                            << " ns without, " << with.least_duration << " ns with");
  // -5 µs: the calibration's error bound (clock_accuracy_test).
  CHECK(with.least_lateness > -5'000);
  CHECK(with.least_lateness < 100'000);
  CHECK(without.least_lateness > -5'000);
  CHECK(with.least_duration < without.least_duration);
}

TEST_CASE("preallocate() before start() does nothing, and the thread logs normally afterwards") {
  std::thread([] {
    terse::preallocate();  // no logger yet
    TempDir dir;
    terse::start(test_config(dir.path()));
    TERSE_INFO("after {}", 1);
    CHECK(terse::stats().threads.size() == 1);
    terse::stop();
    const Decoded decoded = decode_dir(dir.path());
    REQUIRE(decoded.lines.size() == 1);
    CHECK(decoded.lines[0].message == "after 1");
  }).join();
}
