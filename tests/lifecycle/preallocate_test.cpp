// A thread's first logging call sets up the thread's buffer, and stamps its
// record only after that: the record is late by the set-up. A thread that
// called terse::preallocate() at its start has its buffer already, so its
// first record carries the time of the call. Each record holds the
// CLOCK_REALTIME value read just before its call; the smallest lateness
// over a few threads is robust to preemption.
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <limits>
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

// The least (decoded − logged) time of each thread's first record.
std::int64_t least_lateness_of_first_records(bool preallocate) {
  constexpr int kThreads = 4;
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 16u << 20;  // a set-up long enough to see
  terse::start(config);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([preallocate] {
      if (preallocate) terse::preallocate();
      const std::int64_t now = realtime_now();
      TERSE_INFO("first {}", now);
    });
  }
  for (auto& thread : threads) thread.join();
  terse::stop();
  std::int64_t least = std::numeric_limits<std::int64_t>::max();
  const Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.lines.size() == kThreads);
  for (const Line& line : decoded.lines) {
    const std::int64_t logged = std::stoll(line.message.substr(line.message.find(' ') + 1));
    least = std::min(least, line.unix_ns - logged);
  }
  return least;
}

}  // namespace

TEST_CASE("a thread that preallocated stamps its first record at its call") {
  const std::int64_t without = least_lateness_of_first_records(false);
  const std::int64_t with = least_lateness_of_first_records(true);
  INFO("least lateness of a first record: " << without << " ns without preallocate(), " << with << " ns with it");
  CHECK(with > -5'000);  // the calibration's error bound (clock_accuracy_test)
  CHECK(with < 100'000);
  CHECK(with < without);
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
