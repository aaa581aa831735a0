// Shared by the latency, throughput and decoder harnesses: the timer, the
// workload every logger is given, and the process/thread accounting.
#pragma once

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "temp_dir.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TERSE_BENCH_TSC 1
#else
#define TERSE_BENCH_TSC 0
#endif

namespace bench {

// ---- the workload -----------------------------------------------------------

// Every logger gets the same text: a short request record (ShortArgs) and
// a 4 KiB payload. Values vary with the record number so that compressed
// sizes reflect a log whose fields change, not one line repeated.
inline constexpr const char* kPaths[] = {"/api/v1/users", "/api/v1/orders", "/healthz", "/api/v2/search"};

struct ShortArgs {
  int request;
  double took_us;
  int status;
  const char* path;
};

inline ShortArgs short_args(std::uint64_t i) noexcept {
  return {static_cast<int>(i), 12.5 + static_cast<double>(i % 1000) * 0.25, i % 97 == 0 ? 503 : 200, kPaths[i & 3]};
}

// Printable, not compressible within itself: one fixed string, so a
// logger's compressor can only win by noticing records repeat.
inline std::string make_text(std::size_t size, std::uint32_t seed = 12345) {
  std::string text(size, ' ');
  std::uint32_t x = seed;
  for (auto& c : text) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>('!' + (x >> 24) % 94);
  }
  return text;
}

// ---- the timer ----------------------------------------------------------------

inline void compiler_barrier() noexcept { asm volatile("" ::: "memory"); }

// The fences keep the timed call from drifting out of the timed region in
// either direction; their own cost is what the empty region measures.
inline std::uint64_t tsc_begin() noexcept {
#if TERSE_BENCH_TSC
  _mm_lfence();
  std::uint64_t t = __rdtsc();
  _mm_lfence();
  compiler_barrier();
  return t;
#else
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
#endif
}

inline std::uint64_t tsc_end() noexcept {
#if TERSE_BENCH_TSC
  compiler_barrier();
  unsigned aux;
  std::uint64_t t = __rdtscp(&aux);
  _mm_lfence();
  return t;
#else
  return tsc_begin();
#endif
}

// Cheap unfenced read for sampling inside a throughput run, where the
// fences would slow the very loop being measured.
inline std::uint64_t tsc_now() noexcept {
#if TERSE_BENCH_TSC
  return __rdtsc();
#else
  return tsc_begin();
#endif
}

inline std::int64_t monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Ticks per nanosecond, measured against CLOCK_MONOTONIC over `span_ns`.
inline double calibrate_ticks_per_ns(std::int64_t span_ns = 100'000'000) {
#if TERSE_BENCH_TSC
  std::int64_t n0 = monotonic_ns();
  std::uint64_t t0 = __rdtsc();
  while (monotonic_ns() - n0 < span_ns) {
  }
  std::int64_t n1 = monotonic_ns();
  std::uint64_t t1 = __rdtsc();
  return static_cast<double>(t1 - t0) / static_cast<double>(n1 - n0);
#else
  (void)span_ns;
  return 1.0;
#endif
}

inline void spin_for_ns(std::int64_t ns) noexcept {
  std::int64_t until = monotonic_ns() + ns;
  while (monotonic_ns() < until) {
#if TERSE_BENCH_TSC
    _mm_pause();
#endif
  }
}

// ---- bursts of 20 -------------------------------------------------------------

// The method of the third-party logger_benchmarks suite, whose tables other
// loggers publish: 20 back-to-back calls timed together and divided by 20,
// then a random busy wait of 1.7-4 ms.
inline constexpr std::size_t kBurst20Calls = 20;

// The suite's timer: rdtscp alone at both ends, without the lfences of
// tsc_begin/tsc_end, as its figures were taken. Whatever of the last call
// drifts past the second read is shared among the 20 calls.
inline std::uint64_t tsc_rdtscp() noexcept {
#if TERSE_BENCH_TSC
  compiler_barrier();
  unsigned aux;
  std::uint64_t t = __rdtscp(&aux);
  compiler_barrier();
  return t;
#else
  return tsc_begin();
#endif
}

// The wait after a burst, drawn from `state` (xorshift64): started from the
// same seed, every logger and every build waits the same sequence of times.
inline constexpr std::uint64_t kBurst20Seed = 88172645463325252ull;
inline void burst20_wait(std::uint64_t& state) noexcept {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  spin_for_ns(1'700'000 + static_cast<std::int64_t>(state % 2'300'000));
}

// ---- percentiles --------------------------------------------------------------

inline constexpr double kPercentiles[] = {50, 90, 99, 99.9, 99.99};
inline constexpr const char* kPercentileNames[] = {"p50", "p90", "p99", "p99.9", "p99.99"};

// Nearest-rank percentile of sorted samples. The tolerance keeps a rank that
// is whole in decimal whole in binary: 99.9 / 100 * 1000 is 999.0000000000001
// in doubles, whose ceiling made p99.9 of 1,000 samples their maximum.
inline double percentile_sorted(const std::vector<std::uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size()) - 1e-6));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

// ---- CPUs and threads ---------------------------------------------------------

inline std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

// Best effort: a container may forbid it, and the figures are still valid
// (only noisier) without it.
inline bool pin_to_cpu(int cpu) noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

inline std::uint64_t gettid_u64() noexcept { return static_cast<std::uint64_t>(::syscall(SYS_gettid)); }

inline std::vector<std::uint64_t> thread_ids() {
  std::vector<std::uint64_t> ids;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* e = readdir(dir)) {
      if (e->d_name[0] != '.') ids.push_back(std::strtoull(e->d_name, nullptr, 10));
    }
    closedir(dir);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

inline std::string thread_name(std::uint64_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

// CPU time of another thread of this process in ns. The per-thread CPU
// clock id is what pthread_getcpuclockid builds from a kernel thread id; it
// has nanosecond resolution, where /proc/.../stat counts 10 ms ticks, too
// coarse for runs of a second. The stat file is the fallback.
inline std::int64_t thread_cpu_ns(std::uint64_t tid) {
  auto clock = static_cast<clockid_t>((~static_cast<clockid_t>(tid) << 3) | 6);
  timespec ts;
  if (clock_gettime(clock, &ts) == 0) return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  // Fields after the name: state is field 3, utime 14, stime 15.
  std::vector<std::string> fields;
  std::size_t pos = close + 2;
  while (pos < stat.size() && fields.size() < 13) {
    auto space = stat.find(' ', pos);
    fields.push_back(stat.substr(pos, space - pos));
    if (space == std::string::npos) break;
    pos = space + 1;
  }
  if (fields.size() < 13) return 0;
  long hz = sysconf(_SC_CLK_TCK);
  auto ticks = std::strtoll(fields[11].c_str(), nullptr, 10) + std::strtoll(fields[12].c_str(), nullptr, 10);
  return ticks * (1'000'000'000 / (hz > 0 ? hz : 100));
}

inline long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// ---- files ----------------------------------------------------------------------

// The tests' scratch directory (tests/support/temp_dir.hpp).
using terse::test::TempDir;

inline std::uint64_t directory_bytes(const std::string& dir, std::string_view extension = {}) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file()) continue;
    if (!extension.empty() && entry.path().extension() != extension) continue;
    total += entry.file_size();
  }
  return total;
}

// ---- child processes ----------------------------------------------------------

// This program's own path, for harnesses that run each measurement in a
// fresh child (re-executed) so that its peak RSS and CPU are its own.
inline std::string self_path() {
  char path[4096];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) {
    std::perror("bench: readlink /proc/self/exe");
    std::exit(2);
  }
  return std::string(path, static_cast<std::size_t>(n));
}

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

// Runs `command` (a child of this program) and returns its output, without
// the trailing newline, in `line`; false when it failed or printed
// something that does not start with `prefix`.
inline bool run_child(const std::string& command, std::string_view prefix, std::string& line, int& status) {
  line.clear();
  std::FILE* pipe = ::popen(command.c_str(), "r");
  char chunk[4096];
  while (pipe != nullptr && std::fgets(chunk, sizeof chunk, pipe) != nullptr) line += chunk;
  status = pipe != nullptr ? ::pclose(pipe) : -1;
  if (status != 0 || line.rfind(prefix, 0) != 0) return false;
  while (!line.empty() && line.back() == '\n') line.pop_back();
  return true;
}

// The fields of one CSV line a child printed (no quoting: the harnesses'
// own lines hold none).
inline std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t pos = 0;
  for (;;) {
    auto comma = line.find(',', pos);
    fields.push_back(line.substr(pos, comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return fields;
}

// A barrier that producers spin on, so every thread starts at once and the
// timed region holds no thread creation.
class StartLine {
 public:
  explicit StartLine(int parties) : waiting_(parties) {}
  void arrive_and_wait() noexcept {
    waiting_.fetch_sub(1, std::memory_order_acq_rel);
    // Yields rather than spins: with more producers than cores a spinning
    // thread would hold the core the releasing thread needs.
    while (!go_.load(std::memory_order_acquire)) sched_yield();
  }
  void wait_all_ready() const noexcept {
    while (waiting_.load(std::memory_order_acquire) > 0) sched_yield();
  }
  void release() noexcept { go_.store(true, std::memory_order_release); }

 private:
  std::atomic<int> waiting_;
  std::atomic<bool> go_{false};
};

}  // namespace bench
