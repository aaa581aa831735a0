// Timestamp accuracy from process start: three threads log the
// CLOCK_REALTIME value read just before each call, every 2–10 ms, for
// `--seconds`; the files are decoded with the decoder library and decoded −
// logged is printed as percentiles over all records, the first second, the
// rest, and each thread's first call apart. A preemption between the read and the call adds a positive error,
// so the negative side (min) is the calibration's alone.
//
//   terse_bench_clock_accuracy [--seconds S]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <terse/decoder.hpp>
#include <terse/terse.hpp>

#include "temp_dir.hpp"

namespace {

namespace dec = terse::decoder;

std::int64_t realtime_now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void log_paced(std::chrono::milliseconds run_for) {
  auto until = std::chrono::steady_clock::now() + run_for;
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([t, until] {
      // Apart: a thread's first call sets up its buffer before it reads the clock.
      std::int64_t first = realtime_now();
      TERSE_INFO("first {}", first);
      for (int i = 0; std::chrono::steady_clock::now() < until; ++i) {
        std::int64_t now = realtime_now();
        TERSE_INFO("paced {}", now);
        std::this_thread::sleep_for(std::chrono::milliseconds(2 + (i * 7 + t * 3) % 9));
      }
    });
  }
  for (auto& thread : threads) thread.join();
}

struct Decoded {
  std::vector<std::pair<std::int64_t, std::int64_t>> logged_and_error;
  std::vector<std::int64_t> first_call_errors;
  std::uint64_t reversals = 0;  // within a thread
};

Decoded decode(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".tlog") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  Decoded out;
  std::map<std::uint64_t, std::int64_t> last_by_thread;
  std::string message;
  auto sink = [&](const dec::Record& record) {
    message.clear();
    if (!dec::render_message(record, message)) return;
    std::size_t space = message.find(' ');
    if (space == std::string::npos) return;
    std::int64_t logged = std::strtoll(message.c_str() + space + 1, nullptr, 10);
    if (message.rfind("first ", 0) == 0) out.first_call_errors.push_back(record.unix_ns - logged);
    if (message.rfind("paced ", 0) == 0) out.logged_and_error.emplace_back(logged, record.unix_ns - logged);
    auto [last, first] = last_by_thread.try_emplace(record.thread->os_tid, record.unix_ns);
    if (!first && record.unix_ns < last->second) ++out.reversals;
    last->second = record.unix_ns;
  };
  dec::Reporter reporter = [](const dec::Problem& p) { std::fprintf(stderr, "decode: %s\n", p.what.c_str()); };
  for (const auto& file : files) dec::decode_file(file, sink, reporter);
  return out;
}

void print_row(const char* name, std::vector<std::int64_t> errors) {
  if (errors.empty()) return;
  std::sort(errors.begin(), errors.end());
  auto at = [&](double p) {
    return static_cast<double>(errors[static_cast<std::size_t>(p * static_cast<double>(errors.size() - 1))]) / 1e3;
  };
  double max_abs = std::max(-at(0), at(1));
  std::printf("%-14s %6zu %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n", name, errors.size(), at(0), at(0.01), at(0.5),
              at(0.99), at(1), max_abs);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::atof(argv[i + 1]);
  terse::test::TempDir dir("clock");
  terse::Config config;
  config.directory = dir.path();
  config.name = "clock";
  terse::start(config);
  log_paced(std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000)));
  terse::stop();

  Decoded decoded = decode(dir.path());
  if (decoded.logged_and_error.empty()) return 1;
  std::int64_t start_ns = decoded.logged_and_error.front().first;
  for (const auto& [logged, error] : decoded.logged_and_error) start_ns = std::min(start_ns, logged);
  std::vector<std::int64_t> all, first_second, later;
  for (const auto& [logged, error] : decoded.logged_and_error) {
    all.push_back(error);
    (logged - start_ns < 1'000'000'000 ? first_second : later).push_back(error);
  }
  std::printf("decoded - logged, microseconds (a preemption before the call adds a positive error)\n");
  std::printf("%-14s %6s %10s %10s %10s %10s %10s %10s\n", "records", "count", "min", "p1", "p50", "p99", "max",
              "max|err|");
  print_row("all", all);
  print_row("first second", first_second);
  print_row("after", later);
  print_row("thread's first", decoded.first_call_errors);
  std::printf("reversals within a thread: %llu\n", static_cast<unsigned long long>(decoded.reversals));
  return 0;
}
