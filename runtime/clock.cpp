#include "clock.hpp"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <thread>

#include <terse/schema.hpp>
#include <terse/terse.hpp>

namespace terse::detail {
namespace {

// A rate measured over a span T is off by about (sampling jitter) / T, and
// an error in it grows with the time it is used for: the period doubles from
// the first, so each point is used for about as long as it was measured
// over, and then stays at a second.
constexpr std::int64_t kFirstPeriodNs = 10'000'000;
constexpr std::int64_t kCalibrationPeriodNs = 1'000'000'000;
// A wall clock that moved further than this from the line (set by hand or
// stepped by NTP) is followed at once instead of steered towards: a rate
// changed by more than 0.5 % would no longer be a clock's.
constexpr std::int64_t kLongestSlewNs = 1'000'000;
constexpr std::int64_t kSlewDivisor = 200;
// The first call of the wall clock in a process can take microseconds (its
// data page is cold), and a preemption between the reads makes any sample
// wide: the narrowest of a few is kept.
constexpr int kSamplesPerPoint = 4;

// The tick count halfway through reading the wall clock.
Calibration sample_clock() {
  Calibration best;
  std::uint64_t narrowest = UINT64_MAX;
  for (int i = 0; i < kSamplesPerPoint; ++i) {
    std::uint64_t before = ticks();
    std::int64_t unix_ns = realtime_ns();
    std::uint64_t after = ticks();
    if (after - before >= narrowest) continue;
    narrowest = after - before;
    best.ticks = before + (after - before) / 2;
    best.unix_ns = unix_ns;
  }
  return best;
}

}  // namespace

std::int64_t realtime_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

ClockCalibration::ClockCalibration() : period_ns_(kFirstPeriodNs) {
  anchor_ = sample_clock();
#if TERSE_CLOCK_CNTVCT
  // The generic timer states its rate, so start() need not measure one;
  // the refreshes measure it all the same, from here on.
  if (std::uint64_t hz = counter_frequency(); hz != 0) {
    anchor_.ticks_per_second = static_cast<double>(hz);
    calibration_ = anchor_;
    return;
  }
#endif
#if TERSE_CLOCK_COUNTER
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

bool ClockCalibration::refresh(Calibration& out) {
  Calibration now = sample_clock();
  if (now.unix_ns - calibration_.unix_ns < period_ns_) return false;
  period_ns_ = std::min(period_ns_ * 2, kCalibrationPeriodNs);
  calibration_ = continue_line(now);
  out = calibration_;
  return true;
}

// The rate is measured over the whole time since start, so it sharpens as
// the process runs. The new point is where the current line is at `measured`
// (never where the wall clock is: times would jump there), with a rate that
// makes up the line's distance to the wall clock over the next period.
Calibration ClockCalibration::continue_line(const Calibration& measured) {
  double rate = anchor_.ticks_per_second;
#if TERSE_CLOCK_COUNTER
  if (measured.unix_ns > anchor_.unix_ns && measured.ticks > anchor_.ticks)
    rate = static_cast<double>(measured.ticks - anchor_.ticks) * 1e9 /
           static_cast<double>(measured.unix_ns - anchor_.unix_ns);
#endif
  std::int64_t ahead_ns =
      schema::unix_ns_at(calibration_.ticks, calibration_.unix_ns, calibration_.ticks_per_second, measured.ticks) -
      measured.unix_ns;
  if (std::llabs(ahead_ns) > std::min(kLongestSlewNs, period_ns_ / kSlewDivisor)) {
    // The wall clock stepped: rates measured across the step would be wrong,
    // so they are measured from here on, starting from the last good one.
    double last_rate = anchor_.ticks_per_second;
    anchor_ = measured;
    anchor_.ticks_per_second = last_rate;
    return anchor_;
  }
  anchor_.ticks_per_second = rate;
  double period = static_cast<double>(period_ns_);
  return {measured.ticks, measured.unix_ns + ahead_ns, rate * period / (period - static_cast<double>(ahead_ns))};
}

}  // namespace terse::detail
