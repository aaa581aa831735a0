// The clock calibration (FORMAT.md §5): how the callers' ticks map to wall
// time. Measured at start and refined once a second by the collector.
#pragma once

#include <chrono>
#include <cstdint>

namespace terse::detail {

struct Calibration {
  std::uint64_t ticks = 0;
  std::int64_t unix_ns = 0;
  double ticks_per_second = 1e9;
};

std::int64_t realtime_ns() noexcept;

class ClockCalibration {
 public:
  // Measures the tick rate (over 2 ms with the TSC, so start() takes that).
  ClockCalibration();

  const Calibration& current() const { return calibration_; }
  // The ticks in `span` at the current rate.
  std::uint64_t ticks_in(std::chrono::microseconds span) const;
  // At most once per period: a new calibration into `out`, true when there is one.
  bool refresh(Calibration& out);

 private:
  Calibration anchor_;       // the first sample: rates are measured from it
  Calibration calibration_;  // the latest
};

}  // namespace terse::detail
