// The clock calibration on its own: a rate measured at start, and refreshed
// no more than once a period.
#include <catch2/catch.hpp>

#include "clock.hpp"

using terse::detail::Calibration;
using terse::detail::ClockCalibration;

TEST_CASE("the calibration starts from the wall clock with a positive rate") {
  std::int64_t before = terse::detail::realtime_ns();
  ClockCalibration clock;
  std::int64_t after = terse::detail::realtime_ns();
  const Calibration& c = clock.current();
  CHECK(c.unix_ns >= before);
  CHECK(c.unix_ns <= after);
  CHECK(c.ticks_per_second > 1e6);
  auto second = static_cast<double>(clock.ticks_in(std::chrono::seconds(1)));
  CHECK(second == Approx(c.ticks_per_second).epsilon(1e-9));
  CHECK(clock.ticks_in(std::chrono::microseconds(0)) == 0);
}

TEST_CASE("a refresh comes at most once a period") {
  ClockCalibration clock;
  Calibration out{1, 2, 3.0};
  CHECK_FALSE(clock.refresh(out));
  CHECK(out.ticks == 1);  // untouched when there is nothing new
}
