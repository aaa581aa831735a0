// Per-call latency: each call is timed alone with the TSC, in bursts of
// `--burst` calls followed by a spin of `--pause-ns`, so that the IO thread
// keeps up and what is measured is the call, not a full buffer. The cost of
// an empty timed region is measured the same way and printed; it is
// included in every figure, as it is in the published figures of other
// loggers measured this way.
//
//   terse_bench_latency [--calls N] [--burst N] [--pause-ns NS] [--csv FILE]
//   terse_bench_latency --mode burst20 [--samples N] [--csv FILE]
//
// --mode burst20 is the method of the third-party logger_benchmarks suite,
// whose tables other loggers publish: one producer, 20 back-to-back calls
// timed together and divided by 20, then a random 1.7-4 ms busy wait, for
// --samples bursts (default 10,000). The timing cost is shared among the
// 20 calls, so the figures sit below a single call's; they do not compare
// with the per-call table.
//
// terse_bench_latency_shared is the same harness linked to libterse.so; it
// measures terse only: the call in the program (terse-shared) and the call
// in a shared library (terse-shared-in-lib), whose thread-local access goes
// through the dynamic TLS model.
//
// terse+console is terse with Config::console = text to /dev/null: the
// caller's side of a console should cost nothing.
//
// The human table goes to stdout; --csv writes one line per row:
//   calibration,ticks_per_ns,VALUE
//   calibration,tsc_step_ns,VALUE
//   latency,PRODUCERS,LOGGER,p50,p90,p99,p99.9,p99.99,max   (nanoseconds)
//   burst20,1,LOGGER,p50,p90,p99,p99.9,p99.99,max           (ns per call; --mode burst20)
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "baselines.hpp"
#include "harness.hpp"
#ifdef TERSE_BENCH_SHARED
#include "shared_caller.hpp"
#endif

namespace {

struct Options {
  bool burst20 = false;
  std::size_t samples = 10'000;
  std::size_t calls = 400'000;  // per producer
  std::size_t burst = 20;
  std::int64_t pause_ns = 10'000;
  std::string csv;
};

struct Row {
  int producers;
  std::string logger;
  double values[6];  // the percentiles, then max, in ns
};

double g_ticks_per_ns = 1;
double g_tsc_step_ns = 0;
std::vector<Row> g_rows;

// `calls` made each sample (20 in a burst), so that the figures are per call.
Row summarize(int producers, const std::string& logger, std::vector<std::uint32_t>& ticks, std::size_t calls = 1) {
  std::sort(ticks.begin(), ticks.end());
  Row row{producers, logger, {}};
  double per_call = g_ticks_per_ns * static_cast<double>(calls);
  for (std::size_t k = 0; k < std::size(bench::kPercentiles); ++k)
    row.values[k] = bench::percentile_sorted(ticks, bench::kPercentiles[k]) / per_call;
  row.values[5] = ticks.empty() ? 0 : ticks.back() / per_call;
  return row;
}

std::uint32_t clamp_ticks(std::uint64_t t) { return t > UINT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(t); }

template <typename Logger>
void produce(Logger& logger, int cpu, const Options& options, std::vector<std::uint32_t>& samples,
             bench::StartLine& start_line) {
  bench::pin_to_cpu(cpu);
  samples.assign(options.calls, 0);  // touched now, not inside the timed loop
  // Warm-up: first-call registration, thread buffer creation, cold caches.
  for (std::size_t n = 0; n < 2000; ++n) {
    logger.log_short(bench::short_args(n));
    if (n % options.burst == options.burst - 1) bench::spin_for_ns(options.pause_ns);
  }
  start_line.arrive_and_wait();
  std::size_t n = 0;
  while (n < options.calls) {
    std::size_t end = std::min(options.calls, n + options.burst);
    for (; n < end; ++n) {
      auto args = bench::short_args(n);
      std::uint64_t t0 = bench::tsc_begin();
      logger.log_short(args);
      std::uint64_t t1 = bench::tsc_end();
      samples[n] = clamp_ticks(t1 - t0);
    }
    bench::spin_for_ns(options.pause_ns);
  }
}

template <typename Logger>
void measure(Logger& logger, const std::vector<int>& cpus, const Options& options) {
  bench::TempDir dir("bench-latency");
  logger.start(dir.path());
  std::vector<std::vector<std::uint32_t>> samples(cpus.size());
  bench::StartLine start_line(static_cast<int>(cpus.size()));
  std::vector<std::thread> producers;
  for (std::size_t p = 0; p < cpus.size(); ++p) {
    producers.emplace_back([&, p] { produce(logger, cpus[p], options, samples[p], start_line); });
  }
  start_line.wait_all_ready();
  start_line.release();
  for (auto& t : producers) t.join();
  logger.flush();
  logger.stop();
  std::vector<std::uint32_t> all;
  for (auto& s : samples) all.insert(all.end(), s.begin(), s.end());
  g_rows.push_back(summarize(static_cast<int>(cpus.size()), logger.name(), all));
}

template <typename Logger>
void measure_burst20(Logger& logger, int cpu, const Options& options) {
  bench::TempDir dir("bench-burst20");
  logger.start(dir.path());
  std::vector<std::uint32_t> samples;
  std::thread([&] {
    bench::pin_to_cpu(cpu);
    samples.reserve(options.samples);
    std::uint64_t n = 0;
    for (; n < 2000; ++n) logger.log_short(bench::short_args(n));
    // The IO thread drains the warm-up before the first sample, not during it.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::uint64_t random = bench::kBurst20Seed;
    for (std::size_t s = 0; s < options.samples; ++s) {
      std::uint64_t t0 = bench::tsc_rdtscp();
      for (std::size_t k = 0; k < bench::kBurst20Calls; ++k) logger.log_short(bench::short_args(n++));
      std::uint64_t t1 = bench::tsc_rdtscp();
      samples.push_back(clamp_ticks(t1 - t0));
      bench::burst20_wait(random);
    }
  }).join();
  logger.flush();
  logger.stop();
  g_rows.push_back(summarize(1, logger.name(), samples, bench::kBurst20Calls));
}

void measure_empty(int cpu, const Options& options) {
  std::vector<std::uint32_t> samples(options.calls);
  std::thread([&] {
    bench::pin_to_cpu(cpu);
    for (std::size_t n = 0; n < options.calls; ++n) {
      std::uint64_t t0 = bench::tsc_begin();
      std::uint64_t t1 = bench::tsc_end();
      samples[n] = clamp_ticks(t1 - t0);
      if (n % options.burst == options.burst - 1) bench::spin_for_ns(options.pause_ns);
    }
  }).join();
  // Some virtual machines advance the TSC in coarse steps (26 ticks, 10 ns,
  // has been seen), which quantizes every figure; the greatest common
  // divisor of the empty-region readings finds that step.
  std::uint32_t step = 0;
  for (auto t : samples) step = std::gcd(step, t);
  g_tsc_step_ns = step / g_ticks_per_ns;
  g_rows.push_back(summarize(1, "empty-timed-region", samples));
}

#ifdef TERSE_BENCH_SHARED
class TerseSharedLogger : public bench::TerseLogger {
 public:
  const char* name() const { return "terse-shared"; }
};

class TerseInLibraryLogger : public bench::TerseLogger {
 public:
  const char* name() const { return "terse-shared-in-lib"; }
  static void log_short(const bench::ShortArgs& a) noexcept { bench::log_short_from_library(a); }
};

void measure_loggers(const std::vector<int>& one, const std::vector<int>& two, const Options& options) {
  TerseSharedLogger shared_logger;
  TerseInLibraryLogger library_logger;
  if (options.burst20) {
    measure_burst20(shared_logger, one.front(), options);
    measure_burst20(library_logger, one.front(), options);
    return;
  }
  measure(shared_logger, one, options);
  measure(library_logger, one, options);
  measure(shared_logger, two, options);
  measure(library_logger, two, options);
}
#else
void measure_loggers(const std::vector<int>& one, const std::vector<int>& two, const Options& options) {
  bench::TerseLogger terse_logger;
  bench::TerseConsoleLogger console_logger;
  bench::TersePinnedLogger pinned_logger;
  bench::SpdlogAsync spdlog_logger;
  bench::Fprintf fprintf_logger(40 * 1024);
  bench::FmtToMemory fmt_logger;
  if (options.burst20) {
    measure_burst20(terse_logger, one.front(), options);
    measure_burst20(spdlog_logger, one.front(), options);
    measure_burst20(fprintf_logger, one.front(), options);
    measure_burst20(fmt_logger, one.front(), options);
    return;
  }
  measure(terse_logger, one, options);
  measure(console_logger, one, options);
  // Only one producer: two take both CPUs of a 2-core machine.
  measure(pinned_logger, one, options);
  measure(spdlog_logger, one, options);
  measure(fprintf_logger, one, options);
  measure(fmt_logger, one, options);
  measure(terse_logger, two, options);
  measure(console_logger, two, options);
  measure(spdlog_logger, two, options);
  measure(fprintf_logger, two, options);
  measure(fmt_logger, two, options);
}
#endif

[[noreturn]] void usage(const char* self) {
  std::fprintf(stderr,
               "usage: %s [--calls N] [--burst N] [--pause-ns NS] [--csv FILE]\n"
               "       %s --mode burst20 [--samples N] [--csv FILE]\n",
               self, self);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "latency: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--calls")
      o.calls = std::stoull(value());
    else if (arg == "--burst")
      o.burst = std::max<std::size_t>(1, std::stoull(value()));
    else if (arg == "--pause-ns")
      o.pause_ns = std::stoll(value());
    else if (arg == "--csv")
      o.csv = value();
    else if (arg == "--mode") {
      std::string mode = value();
      if (mode != "calls" && mode != "burst20") usage(argv[0]);
      o.burst20 = mode == "burst20";
    } else if (arg == "--samples")
      o.samples = std::stoull(value());
    else
      usage(argv[0]);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parse(argc, argv);
  g_ticks_per_ns = bench::calibrate_ticks_per_ns();
  auto cpus = bench::allowed_cpus();
  // One producer on the last CPU leaves the first to the IO threads; two
  // producers take the first two CPUs (and share them with the IO threads
  // on a 2-core machine).
  std::vector<int> one{cpus.back()};
  std::vector<int> two{cpus[0], cpus.size() > 1 ? cpus[1] : cpus[0]};

  // The empty region is what a single call's figures include; a burst's
  // timing cost is shared among its 20 calls.
  if (!options.burst20) measure_empty(cpus.back(), options);
  measure_loggers(one, two, options);

  if (options.burst20)
    std::printf(
        "bursts of 20 back-to-back calls timed together, ns per call, %zu bursts 1.7-4 ms apart, "
        "%.3f ticks/ns, CPUs",
        options.samples, g_ticks_per_ns);
  else
    std::printf(
        "latency per call in ns (timing cost included), %zu calls per producer, bursts of %zu, "
        "pause %lld ns, %.3f ticks/ns, TSC step %.1f ns, CPUs",
        options.calls, options.burst, static_cast<long long>(options.pause_ns), g_ticks_per_ns, g_tsc_step_ns);
  for (int c : cpus) std::printf(" %d", c);
  std::printf("\n\n%-10s %-20s", "producers", "logger");
  for (const char* name : bench::kPercentileNames) std::printf(" %9s", name);
  std::printf(" %10s\n", "max");
  for (const auto& row : g_rows) {
    std::printf("%-10d %-20s", row.producers, row.logger.c_str());
    for (int k = 0; k < 5; ++k) std::printf(" %9.1f", row.values[k]);
    std::printf(" %10.1f\n", row.values[5]);
  }

  if (!options.csv.empty()) {
    std::FILE* out = std::fopen(options.csv.c_str(), "w");
    if (out == nullptr) {
      std::perror(options.csv.c_str());
      return 2;
    }
    std::fprintf(out, "calibration,ticks_per_ns,%.6f\n", g_ticks_per_ns);
    if (!options.burst20) std::fprintf(out, "calibration,tsc_step_ns,%.1f\n", g_tsc_step_ns);
    for (const auto& row : g_rows) {
      std::fprintf(out, "%s,%d,%s", options.burst20 ? "burst20" : "latency", row.producers, row.logger.c_str());
      for (double v : row.values) std::fprintf(out, ",%.1f", v);
      std::fprintf(out, "\n");
    }
    std::fclose(out);
  }
  return 0;
}
