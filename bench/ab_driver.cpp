// The A/B driver: one scenario per process, compiled twice by bench/ab.sh
// (against the working tree and against a previous build of terse), so that
// the two builds run the same code and differ only in terse. It therefore
// uses only API that every earlier release has: Config's directory and name,
// start, TERSE_INFO, flush and stop (and the fastest level where there is one).
//
//   terse_bench_ab single --dir DIR [--producers 1|2] [--calls N]
//   terse_bench_ab burst20 --dir DIR [--samples N]
//   terse_bench_ab throughput --dir DIR [--records N]
//   terse_bench_ab throughput-fixed --dir DIR [--records N]
//
// single: producers pinned to the first (and second) CPU, 2,000 untimed
//   calls, then calls timed one by one between lfence;rdtsc and rdtscp;lfence,
//   in bursts of 20 calls 1.5 us apart with a 100 us sleep between bursts;
//   then the first call of each burst alone (single-1p-first, single-2p-first)
//   and the second (single-1p-second, single-2p-second).
// burst20: the method of the logger_benchmarks suite: 20 back-to-back calls
//   timed together and divided by 20, then a random 1.7-4 ms busy wait.
// throughput: one producer logs N records back to back, then flushes.
// throughput-fixed: the same with the zstd level fixed (the writer's level
//   drops while it is behind, which moves IO CPU and bytes with the pace).
//
// TERSE_AB_NO_HUGE_PAGES in the environment: Config::huge_pages = false, to
// weigh what huge pages buy (calls that enter a new page) against what they
// cost (on some VMs, the call after a pause).
//
// terse starts before any producer pins itself, so its threads keep the
// process's whole CPU mask, as they do in an application that pins later.
//
// Prints one line per figure, SCENARIO,METRIC,VALUE, for ab.sh to gather.
#include <terse/terse.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"

namespace {

struct Options {
  std::string scenario;
  std::string dir;
  int producers = 1;
  std::size_t calls = 200'000;  // per producer
  std::size_t samples = 10'000;
  std::size_t records = 10'000'000;
};

constexpr std::size_t kWarmup = 2'000;
constexpr std::size_t kBurst = 20;
constexpr std::int64_t kApartNs = 1'500;
constexpr auto kBetweenBursts = std::chrono::microseconds(100);

double g_ticks_per_ns = 1;

// The canonical record of terse's benchmarks: an int, a double, an int, a short string.
inline void log_one(int i) noexcept {
  TERSE_INFO("request {} took {} us status {} path {}", i, i * 0.25, 200, "/api/v1/orders");
}

// Builds before the level adapted (1d2a99a) had it fixed already.
template <typename Config>
void fix_compression_level(Config& config) {
  if constexpr (requires { config.fastest_compression_level = config.compression_level; })
    config.fastest_compression_level = config.compression_level;
}

// Builds before 14ffe81 have no such setting: their rings never move.
template <typename Config>
void keep_rings_off_huge_pages(Config& config) {
  if constexpr (requires { config.huge_pages = false; }) config.huge_pages = false;
}

void start_terse(const std::string& dir, bool fixed_level = false) {
  terse::Config config;
  config.directory = dir;
  config.name = "ab";
  if (std::getenv("TERSE_AB_NO_HUGE_PAGES") != nullptr) keep_rings_off_huge_pages(config);
  // The writer's level no longer drops while it is behind: the IO CPU and
  // the bytes then compare the same work on both sides.
  if (fixed_level) fix_compression_level(config);
  terse::start(config);
}

void pin_or_warn(int cpu) {
  if (!bench::pin_to_cpu(cpu)) std::fprintf(stderr, "ab_driver: could not pin to CPU %d; figures are noisier\n", cpu);
}

std::uint32_t clamp_ticks(std::uint64_t t) { return t > UINT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(t); }

// `divisor` calls made each sample (burst20's 20), so that the figures are per call.
void print_percentiles(const char* scenario, std::vector<std::uint32_t>& ticks, double divisor) {
  std::sort(ticks.begin(), ticks.end());
  double scale = 1.0 / (divisor * g_ticks_per_ns);
  for (std::size_t k = 0; k < std::size(bench::kPercentiles); ++k)
    std::printf("%s,%s,%.1f\n", scenario, bench::kPercentileNames[k],
                bench::percentile_sorted(ticks, bench::kPercentiles[k]) * scale);
  std::printf("%s,max,%.1f\n", scenario, ticks.empty() ? 0.0 : ticks.back() * scale);
}

// One producer's share of the single-call scenario: the same burst shape
// for the warm-up as for the timed calls, so that the timed calls find the
// ring and the caches as the warm-up left them.
void single_producer(int cpu, int first_index, const Options& options, std::vector<std::uint32_t>& samples,
                     bench::StartLine& start_line) {
  pin_or_warn(cpu);
  samples.assign(options.calls, 0);  // touched here, not inside the timed loop
  int i = first_index;
  for (std::size_t n = 0; n < kWarmup; ++n) {
    log_one(i++);
    bench::spin_for_ns(kApartNs);
    if (n % kBurst == kBurst - 1) std::this_thread::sleep_for(kBetweenBursts);
  }
  start_line.arrive_and_wait();
  for (std::size_t n = 0; n < options.calls;) {
    std::size_t end = std::min(options.calls, n + kBurst);
    for (; n < end; ++n) {
      std::uint64_t t0 = bench::tsc_begin();
      log_one(i++);
      std::uint64_t t1 = bench::tsc_end();
      samples[n] = clamp_ticks(t1 - t0);
      bench::spin_for_ns(kApartNs);
    }
    std::this_thread::sleep_for(kBetweenBursts);
  }
}

void run_single(const Options& options) {
  auto cpus = bench::allowed_cpus();
  start_terse(options.dir);
  std::vector<std::vector<std::uint32_t>> samples(options.producers);
  bench::StartLine start_line(options.producers);
  std::vector<std::thread> producers;
  for (int p = 0; p < options.producers; ++p) {
    int cpu = cpus[static_cast<std::size_t>(p) % cpus.size()];
    producers.emplace_back([&, p, cpu] {
      single_producer(cpu, p * 100'000'000, options, samples[static_cast<std::size_t>(p)], start_line);
    });
  }
  start_line.wait_all_ready();
  start_line.release();
  for (auto& t : producers) t.join();
  terse::flush();
  terse::stop();
  std::vector<std::uint32_t> all, first_of_burst, second_of_burst;
  for (auto& s : samples) {
    all.insert(all.end(), s.begin(), s.end());
    for (std::size_t n = 0; n < s.size(); n += kBurst) first_of_burst.push_back(s[n]);
    for (std::size_t n = 1; n < s.size(); n += kBurst) second_of_burst.push_back(s[n]);
  }
  print_percentiles(options.producers == 1 ? "single-1p" : "single-2p", all, 1);
  // The call after each 100 us pause on its own: one call in 20, which sets
  // the whole scenario's p99. It pays for what the pause evicted (on the
  // VMs we measure on, mostly the walk to the ring page's translation), so
  // a change that makes a call touch one more page shows here first, while
  // the other 19 calls stay put.
  print_percentiles(options.producers == 1 ? "single-1p-first" : "single-2p-first", first_of_burst, 1);
  // The call 1.5 us after that one: in the peer harness, only terse's second
  // call of a burst shows among the slowest 0.1% of all calls (a seventh to
  // a fifth of them, at 0.5-1.2 us, after a first call of 50 ns), while
  // every peer's second call is as fast as its third. It is the call that
  // crosses look_again_at, a quarter ring past where the IO thread drained
  // the ring between bursts, which lands on this record of every burst for
  // this record's size (bench/results/peers.md).
  print_percentiles(options.producers == 1 ? "single-1p-second" : "single-2p-second", second_of_burst, 1);
}

void run_burst20(const Options& options) {
  start_terse(options.dir);
  pin_or_warn(bench::allowed_cpus().front());
  for (std::size_t n = 0; n < kWarmup; ++n) log_one(static_cast<int>(n));
  // Lets the IO thread drain the warm-up, which would otherwise land on the first samples.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::vector<std::uint32_t> samples;
  samples.reserve(options.samples);
  std::uint64_t random = bench::kBurst20Seed;
  int i = static_cast<int>(kWarmup);
  for (std::size_t s = 0; s < options.samples; ++s) {
    std::uint64_t t0 = bench::tsc_rdtscp();
    for (std::size_t k = 0; k < bench::kBurst20Calls; ++k) log_one(i++);
    std::uint64_t t1 = bench::tsc_rdtscp();
    samples.push_back(clamp_ticks(t1 - t0));
    bench::burst20_wait(random);
  }
  terse::flush();
  terse::stop();
  print_percentiles("burst20", samples, static_cast<double>(bench::kBurst20Calls));
}

std::int64_t cpu_ns(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void run_throughput(const Options& options, bool fixed_level) {
  const char* name = fixed_level ? "throughput-fixed" : "throughput";
  start_terse(options.dir, fixed_level);
  pin_or_warn(bench::allowed_cpus().front());
  std::int64_t producer0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
  std::int64_t process0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
  std::int64_t wall0 = bench::monotonic_ns();
  int n = static_cast<int>(options.records);
  for (int i = 0; i < n; ++i) log_one(i);
  terse::flush();
  std::int64_t wall1 = bench::monotonic_ns();
  std::int64_t producer1 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
  std::int64_t process1 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
  terse::stop();
  // terse's own threads are all of the process but the producer; main is the producer here.
  double background_ms = static_cast<double>((process1 - process0) - (producer1 - producer0)) / 1e6;
  double records = static_cast<double>(n);
  std::printf("%s,records/s,%.0f\n", name, records / (static_cast<double>(wall1 - wall0) / 1e9));
  std::printf("%s,bytes/record,%.3f\n", name, static_cast<double>(bench::directory_bytes(options.dir)) / records);
  std::printf("%s,IO CPU ms per M records,%.1f\n", name, background_ms / (records / 1e6));
  std::printf("%s,peak RSS MiB,%.1f\n", name, static_cast<double>(bench::peak_rss_kib()) / 1024.0);
}

[[noreturn]] void usage(const char* self) {
  std::fprintf(stderr,
               "usage: %s single|burst20|throughput --dir DIR [--producers 1|2] [--calls N] [--samples N] "
               "[--records N]\n",
               self);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  if (argc < 2) usage(argv[0]);
  Options o;
  o.scenario = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) usage(argv[0]);
    std::string value = argv[++i];
    if (arg == "--dir")
      o.dir = value;
    else if (arg == "--producers")
      o.producers = std::stoi(value);
    else if (arg == "--calls")
      o.calls = std::stoull(value);
    else if (arg == "--samples")
      o.samples = std::stoull(value);
    else if (arg == "--records")
      o.records = std::stoull(value);
    else
      usage(argv[0]);
  }
  if (o.dir.empty() || o.producers < 1 || o.records > INT32_MAX) usage(argv[0]);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parse(argc, argv);
  // Before terse starts, so that its threads do not share the CPU with the spin.
  g_ticks_per_ns = bench::calibrate_ticks_per_ns();
  if (options.scenario == "single")
    run_single(options);
  else if (options.scenario == "burst20")
    run_burst20(options);
  else if (options.scenario == "throughput" || options.scenario == "throughput-fixed")
    run_throughput(options, options.scenario == "throughput-fixed");
  else
    usage(argv[0]);
  return 0;
}
