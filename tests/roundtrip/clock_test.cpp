// A record's decoded time against the wall clock around its call: whatever
// the counter (the TSC, the Arm generic timer, the monotonic clock) and
// whatever rate it runs at, the calibration frames must map its ticks back
// into the interval between a system_clock reading just before the call and
// one just after. A wrong rate (the counter's frequency misread, or ticks
// taken for nanoseconds) puts records milliseconds to seconds outside it.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace terse::test;

namespace {

std::int64_t system_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Call {
  std::int64_t before_ns;
  std::int64_t after_ns;
};

}  // namespace

TEST_CASE("a record decodes to a time between the wall clock before and after its call", "[clock]") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  TERSE_INFO("warm-up");  // the thread's first call sets up its buffer
  // Spread over a second and a half, so that the records fall under the
  // first calibration, the young ones 10, 20, 40 … ms in, and those a second
  // apart after them.
  const std::uint64_t count = scaled(300, 100);
  const auto pause = std::chrono::microseconds(1'500'000 / count);
  std::vector<Call> calls;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::int64_t before = system_ns();
    TERSE_INFO("call {}", i);
    std::int64_t after = system_ns();
    calls.push_back({before, after});
    std::this_thread::sleep_for(pause);
  }
  terse::stop();

  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  REQUIRE(decoded.lines.size() == count + 1);
  // The calibration is a line fitted to the wall clock, which meets it again
  // at each new frame: it is off by well under a microsecond on a quiet
  // machine, and by a few where the wall clock's own readings jitter (under
  // emulation). The counter's tick is at most tens of nanoseconds.
  constexpr std::int64_t kSlackNs = 10'000;
  std::int64_t worst_early_ns = std::numeric_limits<std::int64_t>::min();
  std::int64_t worst_late_ns = worst_early_ns;
  std::uint64_t outside = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const Line& line = decoded.lines[i + 1];
    REQUIRE(line.message == "call " + std::to_string(i));
    std::int64_t early = calls[i].before_ns - line.unix_ns;
    std::int64_t late = line.unix_ns - calls[i].after_ns;
    worst_early_ns = std::max(worst_early_ns, early);
    worst_late_ns = std::max(worst_late_ns, late);
    if (early > kSlackNs || late > kSlackNs) ++outside;
  }
  INFO(count << " records; the earliest is " << worst_early_ns << " ns before its call began, the latest "
             << worst_late_ns << " ns after its call ended (negative: inside)");
  CHECK(outside == 0);
  CHECK(worst_early_ns <= kSlackNs);
  CHECK(worst_late_ns <= kSlackNs);
}

// A thread's first call makes its buffer (a mapping, its first pages, its
// signal stack), which takes tens to hundreds of microseconds; its record
// must carry the time the call began, as every later record does, not the
// time the buffer was ready. Each thread here logs one record and waits
// until all have: a thread that ended would leave its buffer as a spare for
// the next, whose call would then be too short to tell the two apart.
TEST_CASE("a thread's first record is stamped when its call begins, not once its buffer is made", "[clock]") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  const std::size_t count = static_cast<std::size_t>(scaled(16, 8));
  std::vector<Call> calls(count + 1);
  std::atomic<bool> all_logged{false};
  std::vector<std::thread> threads;
  // Thread 0 runs the first-call path once before those that count: the
  // first run of code costs what has nothing to do with the stamp (symbols
  // bound, or under an emulator the code translated, milliseconds).
  for (std::size_t t = 0; t <= count; ++t) {
    std::atomic<bool> logged{false};
    threads.emplace_back([&calls, &all_logged, &logged, t] {
      calls[t].before_ns = system_ns();
      TERSE_INFO("first call of thread {}", t);
      calls[t].after_ns = system_ns();
      logged.store(true);
      while (!all_logged.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    // One call at a time, so that no thread waits for a CPU another holds.
    while (!logged.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  all_logged.store(true);
  for (std::thread& thread : threads) thread.join();
  terse::stop();

  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  REQUIRE(decoded.lines.size() == count + 1);
  // Stamped when the buffer is ready, a record lies near the end of its
  // call, which the buffer's making fills. Stamped at the call, it lies in
  // the first tenth (here within 0.3 µs of a 10-40 µs call), unless the
  // thread lost its CPU before it read the clock (a loaded two-core machine
  // preempted one for 270 µs of a 300 µs call): most threads must show it.
  // The calibration that maps the record's ticks to wall time is off by
  // well under a microsecond natively, by a few under an emulator.
  constexpr std::int64_t kSlackNs = 10'000;
  std::int64_t calibration_slack_ns = *program_emulator() == '\0' ? 2'000 : kSlackNs;
#if defined(__SANITIZE_THREAD__) || defined(__has_feature)
#if defined(__SANITIZE_THREAD__) || __has_feature(thread_sanitizer)
  // ThreadSanitizer intercepts the clock reads that calibration pairs with
  // ticks, and maps every record some microseconds late, the same for all:
  // 5-8 us in this test, 25-47 us since libsodium is linked too (the calls
  // themselves take 150-500 us there, so a stamp at the call's end is still
  // told apart).
  calibration_slack_ns = 60'000;
#endif
#endif
  std::size_t in_first_tenth = 0;
  for (const Line& line : decoded.lines) {
    std::size_t t = std::stoul(line.message.substr(line.message.rfind(' ') + 1));
    REQUIRE(t <= count);
    if (t == 0) continue;
    const Call& call = calls[t];
    INFO("thread " << t << ": the call took " << call.after_ns - call.before_ns << " ns, its record is stamped "
                   << line.unix_ns - call.before_ns << " ns after it began");
    CHECK(line.unix_ns >= call.before_ns - kSlackNs);
    CHECK(line.unix_ns <= call.after_ns + kSlackNs);
    if (line.unix_ns - call.before_ns <= (call.after_ns - call.before_ns) / 10 + calibration_slack_ns) ++in_first_tenth;
  }
  INFO(in_first_tenth << " of " << count << " records are stamped in the first tenth of their call");
  CHECK(in_first_tenth * 4 >= count * 3);
}
