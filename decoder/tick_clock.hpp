// FORMAT.md §5: a record's ticks to wall-clock time, through the calibration
// points of the current file.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace terse::decoder::detail {

// Ticks between two points are interpolated between them: the writer takes
// a point after the records of its batch were logged, so most records lie
// before the latest point, and the line through the points on both sides is
// continuous where extrapolating from one point at a time steps at each.
class TickClock {
 public:
  bool calibrated() const { return count_ > 0; }
  void reset() { count_ = 0; }
  void add(std::uint64_t ticks, std::int64_t unix_ns, double ticks_per_second);
  // Saturates instead of overflowing: a hostile calibration can put any
  // record at any time, but never into undefined behaviour. Raw ticks
  // (within int64) before any calibration.
  std::int64_t to_unix_ns(std::uint64_t ticks) const;

 private:
  struct Point {
    std::uint64_t ticks;
    std::int64_t unix_ns;
    double ticks_per_second;
  };
  // Records come within the writer's ordering window and batch delay of a
  // point, so a few points back are all a file needs.
  static constexpr std::size_t kPointsKept = 4;

  static std::int64_t extrapolate(const Point& point, std::uint64_t ticks);
  static bool interpolate(const Point& earlier, const Point& later, std::uint64_t ticks, std::int64_t& unix_ns);

  std::array<Point, kPointsKept> points_{};
  std::size_t count_ = 0;
};

}  // namespace terse::decoder::detail
