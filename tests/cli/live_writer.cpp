// A writer process for the CLI tests: logs through the real runtime into a
// directory, in bursts that it flushes, so a test can watch `terse cat -f`
// pick up records and rolled files while they are written.
//
//   live_writer DIR NAME bursts COUNT PER_BURST PAUSE_MS TAG
//       COUNT bursts of PER_BURST records "TAG burst B record R", each burst
//       flushed, PAUSE_MS between bursts; files roll every 4 KiB.
//   live_writer DIR NAME steady COUNT PERIOD_US TAG
//       COUNT records "TAG record R", one every PERIOD_US microseconds and
//       never flushed: they reach the file when the IO thread writes its
//       batch (up to 50 ms later), as a busy service's records do. Two of
//       these into two directories give interleaved times that reach the
//       disk out of order. Files roll every 4 KiB.
//   live_writer DIR NAME mix RECORDS
//       RECORDS records from 100 call sites, one of which ("rare event")
//       gets 1% of them: the file for measuring --site against a full decode.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <terse/terse.hpp>

namespace {

// 99 distinct common call sites, one per value of N.
template <int N>
void one_common(int which, long i) {
  if (which == N) {
    TERSE_INFO("request {} on worker {} took {} us status {} path {}", i, N, 12.5 + static_cast<double>(i % 100), 200,
               "/api/v1/orders");
    return;
  }
  if constexpr (N > 1) one_common<N - 1>(which, i);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: live_writer DIR NAME bursts|mix ...\n");
    return 2;
  }
  terse::Config config;
  config.directory = argv[1];
  config.name = argv[2];
  config.level = terse::Level::trace;
  std::string mode = argv[3];
  if (mode == "bursts" && argc == 8) {
    config.roll_bytes = 4096;
    config.compression_level = 0;  // bigger frames, so files roll often
    terse::start(config);
    // 64-bit counters: a record's size, and with it where files roll, is the same where a
    // long has 32 bits (Windows).
    std::int64_t count = std::atoll(argv[4]), per = std::atoll(argv[5]), pause_ms = std::atoll(argv[6]);
    std::string tag = argv[7];
    for (std::int64_t b = 0; b < count; ++b) {
      for (std::int64_t r = 0; r < per; ++r) TERSE_INFO("{} burst {} record {}", tag, b, r);
      terse::flush();
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    }
    terse::stop();
    return 0;
  }
  if (mode == "steady" && argc == 7) {
    config.roll_bytes = 4096;
    config.compression_level = 0;
    terse::start(config);
    std::int64_t count = std::atoll(argv[4]), period_us = std::atoll(argv[5]);
    std::string tag = argv[6];
    for (std::int64_t r = 0; r < count; ++r) {
      TERSE_INFO("{} record {}", tag, r);
      std::this_thread::sleep_for(std::chrono::microseconds(period_us));
    }
    terse::stop();
    return 0;
  }
  if (mode == "mix" && argc == 5) {
    config.roll_bytes = std::uint64_t{1} << 40;
    terse::start(config);
    long records = std::atol(argv[4]);
    for (long i = 0; i < records; ++i) {
      if (i % 100 == 0) {
        TERSE_WARN("rare event {} at depth {}", i, static_cast<int>(i % 7));
      } else {
        one_common<99>(static_cast<int>(i % 100), i);
      }
    }
    terse::stop();
    return 0;
  }
  std::fprintf(stderr, "live_writer: bad arguments\n");
  return 2;
}
