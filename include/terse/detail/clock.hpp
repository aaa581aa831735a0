#pragma once

#include <cstdint>
#include <ctime>

// The compiler's builtin reads the TSC without <x86intrin.h>, whose 48,000
// lines every file that logs would otherwise compile.
#if defined(__x86_64__) || defined(__i386__)
#define TERSE_CLOCK_TSC 1
#else
#define TERSE_CLOCK_TSC 0
#endif
// The Arm generic timer's virtual count, which Linux lets user space read
// (and emulates by trapping the read on the few cores whose counter is
// faulty, so the instruction is always safe to use).
#if defined(__aarch64__)
#define TERSE_CLOCK_CNTVCT 1
#else
#define TERSE_CLOCK_CNTVCT 0
#endif
// Ticks of a hardware counter, whose rate the writer measures against the
// wall clock; otherwise nanoseconds of CLOCK_MONOTONIC.
#define TERSE_CLOCK_COUNTER (TERSE_CLOCK_TSC || TERSE_CLOCK_CNTVCT)

namespace terse::detail {

// The caller's timestamp: a hardware counter where there is one (a few
// cycles, no syscall), else the monotonic clock in nanoseconds. The file
// carries the calibration that maps these ticks to wall time.
inline std::uint64_t ticks() noexcept {
#if TERSE_CLOCK_TSC
  return __builtin_ia32_rdtsc();
#elif TERSE_CLOCK_CNTVCT
  // No `isb` before the read, as there is no fence beside rdtsc: either
  // would keep the read from running ahead of the instructions before it,
  // at the price of draining the pipeline (tens of cycles) in every call.
  // A timestamp taken a few instructions early is still within the call.
  // Within a thread the ring keeps program order whatever the ticks say;
  // across threads the IO thread merges by ticks, and a read run ahead can
  // only swap records logged nanoseconds apart, which the counter (1 to
  // 100 MHz on most parts, 1 GHz from Armv8.6) barely tells apart anyway.
  // The IO thread's ordering window, microseconds, absorbs it in the
  // cutoff as it absorbs a late store to in_call_since.
  std::uint64_t count;
  asm volatile("mrs %0, cntvct_el0" : "=r"(count));
  return count;
#else
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
#endif
}

#if TERSE_CLOCK_CNTVCT
// The rate firmware wrote for the counter: the starting rate, which the
// writer then measures (a board may state it wrongly).
inline std::uint64_t counter_frequency() noexcept {
  std::uint64_t hz;
  asm volatile("mrs %0, cntfrq_el0" : "=r"(hz));
  return hz;
}
#endif

}  // namespace terse::detail
