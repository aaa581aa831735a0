// The clock calibration (FORMAT.md §5): how the callers' ticks map to wall
// time. Measured at start, refined at 10 ms, 20, 40 … after it while the
// rate is young, then once a second, by the collector.
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
  // Measures the tick rate (over 2 ms with the TSC, so start() takes that;
  // the Arm generic timer states its own).
  ClockCalibration();

  const Calibration& current() const { return calibration_; }
  // The ticks in `span` at the current rate.
  std::uint64_t ticks_in(std::chrono::microseconds span) const;
  // When one is due: a new calibration into `out`, true when there is one.
  // Each new point lies on the line of the one before, so that converted
  // times never jump, and its rate steers back onto the wall clock by the
  // next point.
  bool refresh(Calibration& out);

 private:
  Calibration continue_line(const Calibration& measured);

  Calibration anchor_;       // the first sample: rates are measured from it
  Calibration calibration_;  // the latest
  std::int64_t period_ns_;   // until the next point
};

}  // namespace terse::detail
