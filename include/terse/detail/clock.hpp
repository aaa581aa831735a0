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

namespace terse::detail {

// The caller's timestamp: the TSC where there is one (a few cycles, no
// syscall), else the monotonic clock in nanoseconds. The file carries the
// calibration that maps these ticks to wall time.
inline std::uint64_t ticks() noexcept {
#if TERSE_CLOCK_TSC
  return __builtin_ia32_rdtsc();
#else
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
#endif
}

}  // namespace terse::detail
