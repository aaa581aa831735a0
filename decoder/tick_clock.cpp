#include "tick_clock.hpp"

#include <algorithm>
#include <cmath>

#include <terse/schema.hpp>

namespace terse::decoder::detail {
namespace {

// Two points whose line runs at a rate further than this from the later
// point's own rate have a wall-clock step between them (the clock was set):
// it shows as a step instead of being spread over the records between.
constexpr double kInterpolationTolerance = 0.01;
constexpr double kLimit = 9.2e18;  // inside int64 with room for rounding

// Ticks are compared modulo 2^64, as FORMAT.md §5 takes their differences.
bool before(std::uint64_t a, std::uint64_t b) { return static_cast<std::int64_t>(a - b) < 0; }

}  // namespace

void TickClock::add(std::uint64_t ticks, std::int64_t unix_ns, double ticks_per_second) {
  // A repeated frame takes the place of the one it repeats; a point before
  // the latest (a writer that started over) starts the line again.
  if (count_ > 0 && points_[count_ - 1].ticks == ticks) --count_;
  if (count_ > 0 && !before(points_[count_ - 1].ticks, ticks)) count_ = 0;
  if (count_ == kPointsKept) {
    std::move(points_.begin() + 1, points_.end(), points_.begin());
    --count_;
  }
  points_[count_++] = Point{ticks, unix_ns, ticks_per_second};
}

std::int64_t TickClock::to_unix_ns(std::uint64_t ticks) const {
  if (count_ == 0) return static_cast<std::int64_t>(ticks & INT64_MAX);
  std::size_t at = count_ - 1;  // the latest point at or before `ticks`, else the earliest
  while (at > 0 && before(ticks, points_[at].ticks)) --at;
  std::int64_t unix_ns;
  if (at + 1 < count_ && !before(ticks, points_[at].ticks) && interpolate(points_[at], points_[at + 1], ticks, unix_ns))
    return unix_ns;
  return extrapolate(points_[at], ticks);
}

std::int64_t TickClock::extrapolate(const Point& point, std::uint64_t ticks) {
  return schema::unix_ns_at(point.ticks, point.unix_ns, point.ticks_per_second, ticks);
}

// earlier.ticks <= ticks < later.ticks. The result lies between the two
// points' times, so it cannot overflow. A later point on the earlier one's
// line (what the writer writes, §5) gives that line itself: the records the
// reader converted before it met the later point had only that line, and
// the two computations round differently, by a nanosecond now and then,
// which turned a thread's records backward where a tick held several.
bool TickClock::interpolate(const Point& earlier, const Point& later, std::uint64_t ticks, std::int64_t& unix_ns) {
  if (later.unix_ns <= earlier.unix_ns || later.unix_ns == extrapolate(earlier, later.ticks)) return false;
  auto span_ns = static_cast<std::uint64_t>(later.unix_ns) - static_cast<std::uint64_t>(earlier.unix_ns);
  double span_ticks = static_cast<double>(later.ticks - earlier.ticks);
  double rate = span_ticks * 1e9 / static_cast<double>(span_ns);
  if (!(std::abs(rate - later.ticks_per_second) <= later.ticks_per_second * kInterpolationTolerance)) return false;
  double offset = static_cast<double>(ticks - earlier.ticks) * static_cast<double>(span_ns) / span_ticks;
  auto rounded = static_cast<std::uint64_t>(std::llround(std::clamp(offset, 0.0, kLimit)));
  unix_ns = static_cast<std::int64_t>(static_cast<std::uint64_t>(earlier.unix_ns) + std::min(rounded, span_ns));
  return true;
}

}  // namespace terse::decoder::detail
