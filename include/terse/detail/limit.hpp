// The state of a rate-limited call site (TERSE_LOG_EVERY, TERSE_LOG_EVERY_N,
// TERSE_LOG_FIRST_N): a constant-initialised static beside the site. Each
// kind decides whether a call passes and how many calls the passing one
// reports as suppressed since the site's previous record (FORMAT.md §6
// flags); stop() writes what is left after the last.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include <terse/detail/clock.hpp>

namespace terse::detail {

// Ticks per nanosecond, set by start() from the clock calibration.
inline std::atomic<double> g_ticks_per_ns{1.0};

// What every kind keeps, and what stop() reads. A suppressed call costs a
// disabled one plus one atomic increment here, on the site's own cache line.
struct LimitState {
  // Suppressed calls no record has reported yet (for EVERY_N only those of
  // a record that could not be written).
  std::atomic<std::uint64_t> suppressed{0};
  // EVERY_N: the calls so far, and the n of the latest, from which stop()
  // knows how many came after the last record.
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> every{0};

  // What a passing call reports, and takes from `suppressed`.
  std::uint64_t take(std::uint64_t more) noexcept {
    if (suppressed.load(std::memory_order_relaxed) != 0) more += suppressed.exchange(0, std::memory_order_relaxed);
    return more;
  }
  // At stop: the suppressed calls after the site's last record.
  std::uint64_t take_remaining() noexcept {
    std::uint64_t remaining = suppressed.exchange(0, std::memory_order_relaxed);
    std::uint64_t n = every.load(std::memory_order_relaxed);
    if (n > 1) {
      // Numbered afresh: the first call after a restart passes.
      std::uint64_t count = calls.exchange(0, std::memory_order_relaxed);
      if (count > 0) remaining += (count - 1) % n;
    }
    return remaining;
  }
};

struct FirstN : LimitState {
  bool pass(std::uint64_t n, std::uint64_t& report) noexcept {
    // Once n have passed, a call only reads before it counts itself.
    if (calls.load(std::memory_order_relaxed) < n && calls.fetch_add(1, std::memory_order_relaxed) < n) {
      report = take(0);
      return true;
    }
    suppressed.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
};

// Calls are numbered, so the ones in between are never counted one by one:
// every call but the first passing one reports n - 1.
struct EveryN : LimitState {
  bool pass(std::uint64_t n, std::uint64_t& report) noexcept {
    if (n <= 1) {
      report = take(0);
      return true;
    }
    if (every.load(std::memory_order_relaxed) != n) every.store(n, std::memory_order_relaxed);
    std::uint64_t call = calls.fetch_add(1, std::memory_order_relaxed);
    if (call % n != 0) return false;
    report = take(call == 0 ? 0 : n - 1);
    return true;
  }
};

struct Every : LimitState {
  std::atomic<std::uint64_t> next_ticks{0};  // the earliest a call passes again

  template <typename Rep, typename Period>
  bool pass(std::chrono::duration<Rep, Period> interval, std::uint64_t& report) noexcept {
    std::uint64_t now = ticks();
    std::uint64_t next = next_ticks.load(std::memory_order_relaxed);
    if (now >= next) {
      auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(interval).count();
      auto span = static_cast<std::uint64_t>(static_cast<double>(ns > 0 ? ns : 0) *
                                             g_ticks_per_ns.load(std::memory_order_relaxed));
      // Of calls that find the interval over at once, one passes.
      if (next_ticks.compare_exchange_strong(next, now + span, std::memory_order_relaxed)) {
        report = take(0);
        return true;
      }
    }
    suppressed.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
};

}  // namespace terse::detail
