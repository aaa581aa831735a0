// Decoded times against the wall clock from the very start of a process: the
// first second is when the clock calibration is youngest, and a program logs
// its configuration and first failures then. Each record carries the
// CLOCK_REALTIME value read just before its call, so decoded − logged is the
// calibration's error plus the time between that read and the call's own
// timestamp. A preemption there only adds to the error, so the smallest error
// among the records of a short window is the calibration's: bounding that
// keeps the test safe on a loaded machine. This binary holds this one test so
// that the logger starts with the process.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "test_support.hpp"

namespace {

using namespace std::chrono_literals;
using terse::test::TempDir;

std::int64_t realtime_now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct Sample {
  std::int64_t logged_ns;
  std::int64_t error_ns;  // decoded − logged
};

constexpr std::int64_t kWindowNs = 50'000'000;

// Paced threads log their own wall-clock reading every 2–10 ms; one dense
// thread logs every ~50 µs so that a step back at a recalibration shows as a
// reversal within a thread.
void log_paced(std::chrono::milliseconds run_for) {
  auto until = std::chrono::steady_clock::now() + run_for;
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([t, until] {
      // A thread's first call sets up its buffer before it reads the clock:
      // that is the call's cost, not the calibration's.
      TERSE_INFO("warm-up {}", std::int64_t{0});
      for (int i = 0; std::chrono::steady_clock::now() < until; ++i) {
        std::int64_t now = realtime_now();
        TERSE_INFO("paced {}", now);
        std::this_thread::sleep_for(std::chrono::milliseconds(2 + (i * 7 + t * 3) % 9));
      }
    });
  }
  threads.emplace_back([until] {
    TERSE_INFO("warm-up {}", std::int64_t{0});
    while (std::chrono::steady_clock::now() < until) {
      std::int64_t now = realtime_now();
      TERSE_INFO("dense {}", now);
      std::this_thread::sleep_for(50us);
    }
  });
  for (auto& thread : threads) thread.join();
}

// The calibration's error in each window of kWindowNs from the first record.
std::map<std::int64_t, std::int64_t> error_by_window(const std::vector<Sample>& samples) {
  std::int64_t start_ns = samples.front().logged_ns;
  for (const auto& s : samples) start_ns = std::min(start_ns, s.logged_ns);
  std::map<std::int64_t, std::int64_t> smallest;
  for (const auto& s : samples) {
    auto [it, fresh] = smallest.try_emplace((s.logged_ns - start_ns) / kWindowNs, s.error_ns);
    if (!fresh) it->second = std::min(it->second, s.error_ns);
  }
  return smallest;
}

}  // namespace

TEST_CASE("records decode to the wall clock at their call from the first second on", "[clock]") {
  TempDir dir;
  terse::start(terse::test::test_config(dir.path()));
  log_paced(2500ms);
  terse::stop();

  auto decoded = terse::test::decode_dir(dir.path());
  REQUIRE(decoded.intact());
  std::vector<Sample> paced;
  std::map<std::uint64_t, std::int64_t> last_by_thread;
  std::uint64_t reversals = 0;
  for (const auto& line : decoded.lines) {
    auto [last, first] = last_by_thread.try_emplace(line.thread, line.unix_ns);
    if (!first && line.unix_ns < last->second) ++reversals;
    last->second = line.unix_ns;
    if (line.message.rfind("paced ", 0) != 0) continue;
    std::int64_t logged = std::stoll(line.message.substr(6));
    paced.push_back({logged, line.unix_ns - logged});
  }
  REQUIRE(paced.size() > 300);

  auto windows = error_by_window(paced);
  std::int64_t worst_ns = 0, worst_window = 0;
  for (auto [window, error_ns] : windows) {
    if (std::abs(error_ns) <= std::abs(worst_ns)) continue;
    worst_ns = error_ns;
    worst_window = window;
  }
  INFO(paced.size() << " paced records in " << windows.size() << " windows; the worst is off by " << worst_ns << " ns, "
                    << worst_window * kWindowNs / 1'000'000 << " ms after the first record");
  // The goal is ±10 µs for every record (the bench checks it on a quiet
  // machine); the calibration's own error stays under a microsecond, and it
  // was tens to hundreds of microseconds in the first second before.
  CHECK(std::abs(worst_ns) <= 5'000);
  CHECK(reversals == 0);
}
