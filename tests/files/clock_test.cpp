// The clock calibration on its own: a rate measured at start, refreshed no
// more than once a period, each point on the line of the one before.
#include <chrono>
#include <cmath>
#include <thread>

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

TEST_CASE("a refresh continues the line of the calibration before it, near the wall clock") {
  ClockCalibration clock;
  Calibration before = clock.current();
  Calibration next;
  // The first refresh is due 10 ms after start; on a loaded machine the
  // sleep may take longer, which only makes it more due.
  std::this_thread::sleep_for(std::chrono::milliseconds(12));
  REQUIRE(clock.refresh(next));
  auto ticks_since = static_cast<double>(static_cast<std::int64_t>(next.ticks - before.ticks));
  double since = ticks_since * 1e9 / before.ticks_per_second;
  CHECK(std::abs(static_cast<double>(next.unix_ns - before.unix_ns) - since) <= 1.0);
  CHECK(std::abs(next.ticks_per_second / before.ticks_per_second - 1) < 0.01);
  // Due again after twice the period, not after a second.
  std::this_thread::sleep_for(std::chrono::milliseconds(25));
  CHECK(clock.refresh(next));
}
