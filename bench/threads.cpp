// Memory and time for many threads, as services with large pools run them:
//
//   churn: 10,000 short-lived threads, 20 alive at a time, each logging one
//          canonical record, against the same threads logging nothing. Also
//          the first call of a new thread beside its second one.
//   many:  N threads alive at once, each logging M records, then flushed:
//          the process's peak RSS, and its RSS once the threads have exited
//          (what terse gives back).
//   quiet: the same, but RSS measured while the threads live on without
//          logging, past Config::release_idle_after (what idle threads give back);
//          then each thread logs again, its first call after the release timed
//          beside its second one.
//
//   terse_bench_threads [--csv FILE]
//
// Each run happens in a fresh child process (this program re-executed), so
// that peak RSS belongs to that run alone. --csv writes one line per run:
//   threads,RUN,LOGGER,threads,records_per_thread,seconds,peak_rss_kib,
//   rss_after_kib,first_call_ns,later_call_ns
// first_call_ns and later_call_ns are medians over the threads (churn: a new
// thread's first and second call; quiet: the first and second after the release).
#include <sys/wait.h>

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <fstream>
#include <latch>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <terse/terse.hpp>

#include "harness.hpp"

namespace {

constexpr int kChurnThreads = 10'000;
constexpr int kChurnAlive = 20;

struct Outcome {
  double seconds = 0;
  long rss_after_kib = 0;
  double first_call_ns = 0;
  double later_call_ns = 0;
};

long current_rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return 0;
}

void log_one(std::uint64_t n) {
  bench::ShortArgs a = bench::short_args(n);
  TERSE_INFO("request {} took {} us status {} path {}", a.request, a.took_us, a.status, a.path);
}

double median(std::vector<std::int64_t>& values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return static_cast<double>(values[values.size() / 2]);
}

// Waves of kChurnAlive threads until kChurnThreads have run, each joined
// before the next wave starts, as a pool that replaces its threads does.
Outcome churn(bool log) {
  std::vector<std::int64_t> first(kChurnThreads), later(kChurnThreads);
  std::int64_t t0 = bench::monotonic_ns();
  std::vector<std::thread> wave;
  for (int started = 0; started < kChurnThreads;) {
    wave.clear();
    for (int k = 0; k < kChurnAlive && started < kChurnThreads; ++k, ++started) {
      wave.emplace_back([log, n = started, &first, &later] {
        if (!log) {
          bench::compiler_barrier();
          return;
        }
        std::int64_t a = bench::monotonic_ns();
        log_one(static_cast<std::uint64_t>(n));
        std::int64_t b = bench::monotonic_ns();
        log_one(static_cast<std::uint64_t>(n) + 1);
        std::int64_t c = bench::monotonic_ns();
        first[static_cast<std::size_t>(n)] = b - a;
        later[static_cast<std::size_t>(n)] = c - b;
      });
    }
    for (auto& t : wave) t.join();
  }
  if (log) terse::flush();
  Outcome out;
  out.seconds = static_cast<double>(bench::monotonic_ns() - t0) * 1e-9;
  if (log) {
    out.first_call_ns = median(first);
    out.later_call_ns = median(later);
  }
  return out;
}

// N threads alive together, each logging M records; all of them exist
// before any exits, so the peak holds every thread's buffer at once. With
// `stay_idle`, RSS is taken while they are still alive, idle for longer
// than Config::release_idle_after.
Outcome many(int threads, std::uint64_t per_thread, bool stay_idle) {
  std::int64_t t0 = bench::monotonic_ns();
  std::latch all_logged(threads);
  std::vector<std::thread> pool;
  std::atomic<bool> leave{false};
  std::vector<std::int64_t> first_again(static_cast<std::size_t>(threads)), later_again(first_again.size());
  for (int p = 0; p < threads; ++p) {
    pool.emplace_back([&, p] {
      std::uint64_t first = static_cast<std::uint64_t>(p) * per_thread;
      for (std::uint64_t n = first; n < first + per_thread; ++n) log_one(n);
      all_logged.count_down();
      leave.wait(false, std::memory_order_acquire);  // blocked, as an idle thread of a pool is
      if (!stay_idle) return;
      // Woken after its memory was given back: what the next call costs
      // while the ring maps its pages again.
      std::int64_t a = bench::monotonic_ns();
      log_one(first);
      std::int64_t b = bench::monotonic_ns();
      log_one(first + 1);
      std::int64_t c = bench::monotonic_ns();
      first_again[static_cast<std::size_t>(p)] = b - a;
      later_again[static_cast<std::size_t>(p)] = c - b;
    });
  }
  all_logged.wait();
  terse::flush();
  Outcome out;
  if (stay_idle) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    out.rss_after_kib = current_rss_kib();
  }
  leave.store(true, std::memory_order_release);
  leave.notify_all();
  for (auto& t : pool) t.join();
  out.seconds = static_cast<double>(bench::monotonic_ns() - t0) * 1e-9;
  if (stay_idle) {
    out.first_call_ns = median(first_again);
    out.later_call_ns = median(later_again);
    return out;
  }
  // The IO thread frees an exited thread's buffer on its next pass.
  terse::flush();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  out.rss_after_kib = current_rss_kib();
  return out;
}

int child_main(const std::string& run, const std::string& logger, int threads, std::uint64_t per_thread) {
  bench::TempDir temp("bench-threads");
  bool log = logger == "terse";
  if (log) {
    terse::Config config;
    config.directory = temp.path();
    config.name = "bench";
    terse::start(config);
  }
  Outcome out;
  if (run == "churn")
    out = churn(log);
  else
    out = many(threads, per_thread, run == "quiet");
  if (log) terse::stop();
  std::printf("threads,%s,%s,%d,%" PRIu64 ",%.4f,%ld,%ld,%.0f,%.0f\n", run.c_str(), logger.c_str(), threads, per_thread,
              out.seconds, bench::peak_rss_kib(), out.rss_after_kib, out.first_call_ns, out.later_call_ns);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 6 && std::strcmp(argv[1], "--child") == 0)
    return child_main(argv[2], argv[3], std::atoi(argv[4]), std::stoull(argv[5]));
  std::string csv_path;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--csv" && i + 1 < argc) {
      csv_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--csv FILE]\n", argv[0]);
      return 2;
    }
  }
  struct Job {
    const char* run;
    const char* logger;
    int threads;
    std::uint64_t per_thread;
  };
  const Job jobs[] = {
      {"churn", "none", kChurnThreads, 1}, {"churn", "terse", kChurnThreads, 1}, {"many", "terse", 1, 100},
      {"many", "terse", 200, 100},         {"many", "terse", 50, 100'000},       {"many", "terse", 200, 100'000},
      {"quiet", "terse", 200, 100'000},
  };
  std::FILE* csv = nullptr;
  if (!csv_path.empty() && (csv = std::fopen(csv_path.c_str(), "w")) == nullptr) {
    std::perror(csv_path.c_str());
    return 2;
  }
  std::printf("%-6s %-6s %8s %12s %9s %9s %10s %12s %12s\n", "run", "logger", "threads", "records/thr", "seconds",
              "peak MiB", "after MiB", "first ns", "later ns");
  std::string self = bench::self_path();
  int failures = 0;
  for (const Job& job : jobs) {
    std::string command = bench::shell_quote(self) + " --child " + job.run + " " + job.logger + " " +
                          std::to_string(job.threads) + " " + std::to_string(job.per_thread);
    std::string line;
    int status = 0;
    if (!bench::run_child(command, "threads,", line, status)) {
      std::fprintf(stderr, "threads: run '%s' with %s failed (status %d)\n", job.run, job.logger, status);
      ++failures;
      continue;
    }
    std::vector<std::string> f = bench::split_csv(line);
    std::printf("%-6s %-6s %8s %12s %9s %9.1f %10.1f %12s %12s\n", f[1].c_str(), f[2].c_str(), f[3].c_str(),
                f[4].c_str(), f[5].c_str(), std::stod(f[6]) / 1024.0, std::stod(f[7]) / 1024.0, f[8].c_str(),
                f[9].c_str());
    std::fflush(stdout);
    if (csv != nullptr) std::fprintf(csv, "%s\n", line.c_str());
  }
  if (csv != nullptr) std::fclose(csv);
  return failures == 0 ? 0 : 1;
}
