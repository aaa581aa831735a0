// What the overflow policies cost and keep: producers logging the canonical
// record, each pacing itself to a target rate (or not at all), under
// Overflow::block and Overflow::drop. Reports how long the producers took
// (a producer on schedule takes records / rate) and how many records
// terse::stats() counts as dropped after flush(), plus the share written.
//
//   terse_bench_overflow [--records N] [--burst N] [--buffer BYTES] [--pace spin|sleep] [--csv FILE]
//
// Cases: 2 threads paced to 1, 3 and 8 M/s each, N records each
// (default 1,000,000); 4 threads unpaced, --burst records each (default
// 300,000). Buffers are --buffer bytes (default 1 MiB, the default Config).
// --pace spin (default): a paced producer spins between its calls, as a
// thread busy with other work does; where producers and IO threads share
// too few cores, drop then loses records to CPU starvation rather than to
// the IO thread's sleep. --pace sleep: it sleeps 50 us between runs of calls,
// leaving the cores free, which isolates how fast the IO thread wakes.
//
// --csv writes one line per run:
//   overflow,CASE,POLICY,threads,records_per_thread,rate_per_thread,ms,dropped,written_share,io_cpu_ms
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <terse/terse.hpp>

#include "harness.hpp"

namespace {

struct Case {
  const char* name;
  int threads;
  std::uint64_t records;  // per thread
  double rate;            // records/s per thread; 0: as fast as it goes
};

struct Outcome {
  double ms = 0;  // until the last producer finished, before the flush
  std::uint64_t dropped = 0;
  double io_ms = 0;  // CPU time of the IO threads, start to flush
};

// Spins on the clock rather than sleeping: a service thread that logs at a
// steady rate is busy between its calls, which is what keeps the IO thread
// off a core.
void produce(std::uint64_t records, double rate, bool sleep, std::chrono::steady_clock::time_point start) {
  std::uint64_t i = 0;
  while (i < records) {
    std::uint64_t due = records;
    if (rate > 0) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      due = std::min<std::uint64_t>(records, static_cast<std::uint64_t>(elapsed * rate) + 1);
    }
    for (; i < due; ++i) {
      const bench::ShortArgs a = bench::short_args(i);
      TERSE_INFO("request {} took {} us status {} path {}", a.request, a.took_us, a.status, a.path);
    }
    if (sleep && rate > 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

Outcome run(const Case& c, terse::Overflow policy, std::size_t buffer_bytes, bool sleep) {
  bench::TempDir dir("bench-overflow");
  terse::Config config;
  config.directory = dir.path();
  config.name = "overflow";
  config.overflow = policy;
  config.thread_buffer_bytes = buffer_bytes;
  terse::start(config);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the IO thread idle, as before a burst
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < c.threads; ++t) threads.emplace_back([&] { produce(c.records, c.rate, sleep, start); });
  for (auto& thread : threads) thread.join();
  Outcome outcome;
  outcome.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  terse::flush();
  const terse::Stats stats = terse::stats();
  outcome.dropped = stats.records_dropped;
  outcome.io_ms = std::chrono::duration<double, std::milli>(stats.io_busy).count();
  terse::stop();
  return outcome;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t records = 1'000'000;
  std::uint64_t burst = 300'000;
  std::size_t buffer_bytes = std::size_t{1} << 20;
  const char* csv_path = nullptr;
  bool sleep = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--records") == 0) {
      records = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (std::strcmp(argv[i], "--burst") == 0) {
      burst = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (std::strcmp(argv[i], "--buffer") == 0) {
      buffer_bytes = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (std::strcmp(argv[i], "--pace") == 0 &&
               (std::strcmp(argv[i + 1], "spin") == 0 || std::strcmp(argv[i + 1], "sleep") == 0)) {
      sleep = std::strcmp(argv[i + 1], "sleep") == 0;
    } else if (std::strcmp(argv[i], "--csv") == 0) {
      csv_path = argv[i + 1];
    } else {
      std::fprintf(stderr,
                   "usage: terse_bench_overflow [--records N] [--burst N] [--buffer BYTES] [--pace spin|sleep] "
                   "[--csv FILE]\n");
      return 2;
    }
  }
  std::FILE* csv = csv_path != nullptr ? std::fopen(csv_path, "w") : nullptr;
  const Case cases[] = {
      {"2 x 1 M/s", 2, records, 1e6},
      {"2 x 3 M/s", 2, records, 3e6},
      {"2 x 8 M/s", 2, records, 8e6},
      {"4 x unpaced", 4, burst, 0},
  };
  std::printf(
      "| case | on schedule | block: ms / dropped (IO CPU) | drop: ms / dropped (IO CPU, written) |\n"
      "|---|---:|---|---|\n");
  for (const Case& c : cases) {
    const Outcome block = run(c, terse::Overflow::block, buffer_bytes, sleep);
    const Outcome drop = run(c, terse::Overflow::drop, buffer_bytes, sleep);
    const double total = static_cast<double>(c.records) * c.threads;
    const double written_share = 1.0 - static_cast<double>(drop.dropped) / total;
    const double schedule_ms = c.rate > 0 ? 1e3 * static_cast<double>(c.records) / c.rate : 0;
    std::string schedule = c.rate > 0 ? std::to_string(static_cast<int>(schedule_ms)) + " ms" : "-";
    std::printf("| %s | %s | %.0f ms / %" PRIu64 " (%.0f ms) | %.0f ms / %" PRIu64 " (%.0f ms, %.1f %%) |\n", c.name,
                schedule.c_str(), block.ms, block.dropped, block.io_ms, drop.ms, drop.dropped, drop.io_ms,
                100 * written_share);
    if (csv != nullptr) {
      for (const auto& [policy, o] : {std::pair{"block", block}, std::pair{"drop", drop}}) {
        std::fprintf(csv, "overflow,%s,%s,%d,%" PRIu64 ",%.0f,%.1f,%" PRIu64 ",%.4f,%.1f\n", c.name, policy, c.threads,
                     c.records, c.rate, o.ms, o.dropped, 1.0 - static_cast<double>(o.dropped) / total, o.io_ms);
      }
    }
  }
  if (csv != nullptr) std::fclose(csv);
}
