// The state of a rate-limited call site (TERSE_LOG_EVERY, TERSE_LOG_EVERY_N,
// TERSE_LOG_FIRST_N): a constant-initialised static beside the site. Each
// decides whether a call passes and counts the calls it suppresses; the next
// record the site writes takes that count (FORMAT.md §6 flags), and stop()
// writes what is left.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include <terse/detail/clock.hpp>

namespace terse::detail {

// Ticks per nanosecond, set by start() from the clock calibration.
inline std::atomic<double> g_ticks_per_ns{1.0};

// Every field of a limiter is its own, so their cache line is the site's:
// a suppressed call costs a disabled one plus an increment on it.
struct FirstN {
  std::atomic<std::uint64_t> passed{0};
  std::atomic<std::uint64_t> suppressed{0};

  bool pass(std::uint64_t n) noexcept {
    // Once n have passed, a call only reads before it counts itself.
    if (passed.load(std::memory_order_relaxed) < n && passed.fetch_add(1, std::memory_order_relaxed) < n) return true;
    suppressed.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
};

struct EveryN {
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> suppressed{0};

  bool pass(std::uint64_t n) noexcept {
    if (calls.fetch_add(1, std::memory_order_relaxed) % (n > 0 ? n : 1) == 0) return true;
    suppressed.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
};

struct Every {
  std::atomic<std::uint64_t> next_ticks{0};  // the earliest a call passes again
  std::atomic<std::uint64_t> suppressed{0};

  template <typename Rep, typename Period>
  bool pass(std::chrono::duration<Rep, Period> interval) noexcept {
    std::uint64_t now = ticks();
    std::uint64_t next = next_ticks.load(std::memory_order_relaxed);
    if (now >= next) {
      auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(interval).count();
      auto span = static_cast<std::uint64_t>(static_cast<double>(ns > 0 ? ns : 0) *
                                             g_ticks_per_ns.load(std::memory_order_relaxed));
      // Of calls that find the interval over at once, one passes.
      if (next_ticks.compare_exchange_strong(next, now + span, std::memory_order_relaxed)) return true;
    }
    suppressed.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
};

}  // namespace terse::detail
