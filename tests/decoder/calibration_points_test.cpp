// FORMAT.md §5: a record's time by the calibration frames before it. The
// writer keeps each frame on the line of the one before, so a record's time
// must not depend on whether the next frame was already read: a thread's
// records that straddle a frame (the ordering window puts some of them on
// either side) keep their order to the nanosecond. Coarse counters (the
// generic timer's 62.5 MHz under emulation, 16 ns a tick) give many records
// one tick value, where a 1 ns disagreement shows as time running backward.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include <terse/schema.hpp>

#include "tlog_builder.hpp"

using namespace terse::test;
namespace schema = terse::schema;

namespace {

constexpr std::int64_t kStart = 1'700'000'000'000'000'000;

struct Point {
  std::uint64_t ticks;
  std::int64_t unix_ns;
  double rate;
};

// Where the writer puts its next frame: on the current line at `ticks`,
// with the rate it measured since (ClockCalibration::continue_line).
Point continue_line(const Point& from, std::uint64_t ticks, double rate) {
  return {ticks, schema::unix_ns_at(from.ticks, from.unix_ns, from.rate, ticks), rate};
}

void add(TlogBuilder& file, const Point& p) { file.calibration(p.ticks, p.unix_ns, p.rate); }

// Records of site 1 at ticks first, first+step, ... (count of them).
void records_at(TlogBuilder& file, std::uint64_t first, std::uint64_t step, int count) {
  for (int i = 0; i < count; ++i) {
    std::uint64_t at = first + static_cast<std::uint64_t>(i) * step;
    file.record(1, "", static_cast<std::int64_t>(at - file.ticks()));
  }
}

}  // namespace

TEST_CASE("a record's time is the same before and after the next calibration frame is read") {
  // Rates as the writer's refreshes give them: near the nominal one, each a
  // little off, so the lines through successive frames differ in their last bits.
  const double nominal = 62.5e6;
  Point p0{0, kStart, nominal};
  Point p1 = continue_line(p0, 625'000, nominal * 1.000'137);  // 10 ms
  Point p2 = continue_line(p1, 1'875'000, nominal * 0.999'871);

  TlogBuilder file;
  file.site(1, "tick", std::vector<std::uint8_t>{});
  add(file, p0);
  add(file, p1);
  const int kCount = 2000;
  // The records after p1 that were drained before p2 was taken, and the
  // same ticks again in the next batch, which comes after p2.
  records_at(file, p1.ticks + 1, 7, kCount);
  add(file, p2);
  records_at(file, p1.ticks + 1, 7, kCount);

  Decoded d = decode(file.finish());
  CHECK(d.problems.empty());
  REQUIRE(d.unix_ns.size() == 2 * kCount);
  int differing = 0;
  for (int i = 0; i < kCount; ++i)
    if (d.unix_ns[i] != d.unix_ns[kCount + i]) ++differing;
  CHECK(differing == 0);
  // And both are the writer's own line through p1.
  for (int i = 0; i < kCount; i += 97)
    CHECK(d.unix_ns[i] == schema::unix_ns_at(p1.ticks, p1.unix_ns, p1.rate, p1.ticks + 1 + 7 * i));
}

TEST_CASE("records in tick order keep their time order across calibration frames") {
  const double nominal = 62.5e6;
  Point p{0, kStart, nominal};
  TlogBuilder file;
  file.site(1, "tick", std::vector<std::uint8_t>{});
  add(file, p);
  // As the writer lays them out: a frame is sampled after the records of
  // the batches before it, and goes ahead of its own batch, whose records
  // run from before the frame's ticks (the last tick again: one thread,
  // several records a tick, some left to the next batch by the ordering
  // window) to past them. Frames every 3 ms with drifting rates.
  for (int frame = 1; frame <= 40; ++frame) {
    std::uint64_t frame_ticks = p.ticks + 187'500;
    records_at(file, file.ticks(), 3, static_cast<int>((frame_ticks - 300 - file.ticks()) / 3));
    p = continue_line(p, frame_ticks, nominal * (1.0 + (frame % 7 - 3) * 1e-4));
    add(file, p);
    file.record(1, "", 0);
  }
  records_at(file, file.ticks(), 3, 1000);  // past the last frame
  Decoded d = decode(file.finish());
  CHECK(d.problems.empty());
  REQUIRE(d.unix_ns.size() > 1000);
  int backward = 0;
  for (std::size_t i = 1; i < d.unix_ns.size(); ++i)
    if (d.unix_ns[i] < d.unix_ns[i - 1]) ++backward;
  CHECK(backward == 0);
}

TEST_CASE("a frame off the line before it (an older writer's) is still interpolated to") {
  // A 1.2 writer measured each frame afresh: frames sit where the wall
  // clock was, and the records between two of them follow the line through both.
  TlogBuilder file;
  file.site(1, "tick", std::vector<std::uint8_t>{});
  Point p0{0, kStart, 1e9};
  Point p1{10'000'000, kStart + 10'000'050, 1e9};  // 50 ns off p0's line
  add(file, p0);
  add(file, p1);
  file.record(1, "", 5'000'000 - static_cast<std::int64_t>(file.ticks()));
  Decoded d = decode(file.finish());
  REQUIRE(d.unix_ns.size() == 1);
  CHECK(d.unix_ns[0] == kStart + 5'000'025);
}
