#include "clock.hpp"

#include <ctime>
#include <thread>

#include <terse/terse.hpp>

namespace terse::detail {
namespace {

constexpr std::int64_t kCalibrationPeriodNs = 1'000'000'000;

// The tick count halfway through reading the wall clock.
Calibration sample_clock() {
  Calibration c;
  std::uint64_t before = ticks();
  c.unix_ns = realtime_ns();
  std::uint64_t after = ticks();
  c.ticks = before + (after - before) / 2;
  return c;
}

}  // namespace

std::int64_t realtime_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

ClockCalibration::ClockCalibration() {
  anchor_ = sample_clock();
#if TERSE_CLOCK_TSC
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  Calibration later = sample_clock();
  anchor_.ticks_per_second =
      static_cast<double>(later.ticks - anchor_.ticks) * 1e9 / static_cast<double>(later.unix_ns - anchor_.unix_ns);
  calibration_ = later;
  calibration_.ticks_per_second = anchor_.ticks_per_second;
#else
  anchor_.ticks_per_second = 1e9;
  calibration_ = anchor_;
#endif
}

std::uint64_t ClockCalibration::ticks_in(std::chrono::microseconds span) const {
  return static_cast<std::uint64_t>(static_cast<double>(span.count()) * 1e-6 * calibration_.ticks_per_second);
}

// The rate is measured over the whole time since start, so it sharpens as
// the process runs; the anchor follows the wall clock.
bool ClockCalibration::refresh(Calibration& out) {
  Calibration now = sample_clock();
  if (now.unix_ns - calibration_.unix_ns < kCalibrationPeriodNs) return false;
#if TERSE_CLOCK_TSC
  if (now.unix_ns > anchor_.unix_ns && now.ticks > anchor_.ticks) {
    now.ticks_per_second =
        static_cast<double>(now.ticks - anchor_.ticks) * 1e9 / static_cast<double>(now.unix_ns - anchor_.unix_ns);
  } else {
    now.ticks_per_second = calibration_.ticks_per_second;
  }
#else
  now.ticks_per_second = 1e9;
#endif
  calibration_ = now;
  out = calibration_;
  return true;
}

}  // namespace terse::detail
