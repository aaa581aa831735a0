// Throughput until flushed: N records as fast as the producers can go, the
// clock stopped when the logger's flush returns (every record in the file).
// Reports records/s, bytes on disk per record, peak RSS and the CPU time
// of the logger's own threads per million records, for terse and its
// baselines, then the scenarios of kScenarios.
//
//   terse_bench_throughput [--millions X] [--csv FILE] [--keep-terse DIR]
//
// Each run happens in a fresh child process (this program re-executed), so
// that peak RSS and thread CPU belong to that run alone.
//
// --csv writes one line per run:
//   throughput,RUN,LOGGER,threads,records,seconds,records_per_s,disk_bytes,
//   bytes_per_record,peak_rss_kib,io_cpu_ms,io_cpu_ms_per_million,p99_ns,
//   text_zstd_bytes_per_record
// p99_ns is empty for the canonical runs, which time nothing per call;
// the scenario runs time one call in 16 (unfenced rdtsc pair, included).
#include <sys/wait.h>

#include <cinttypes>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <zstd.h>

#include "baselines.hpp"
#include "harness.hpp"

namespace {

enum class Mix { short_only, long_only, two_thirds_short, two_thirds_json };

struct Scenario {
  const char* run;  // the name reported
  int threads;
  Mix mix;
  double share;  // of the N records this scenario logs
  bool sample;   // time one call in 16 for a p99
};

// Long records are 4 KiB, so their scenarios log fewer of them: the same
// number of 4 KiB records would be gigabytes of text for the baselines.
constexpr Scenario kCanonical{"canonical", 1, Mix::short_only, 1.0, false};
constexpr Scenario kScenarios[] = {
    {"1 thread short", 1, Mix::short_only, 1.0, true},
    {"8 threads short", 8, Mix::short_only, 1.0, true},
    {"4 threads 4 KiB", 4, Mix::long_only, 1.0 / 32, true},
    {"1 thread 2/3 short 1/3 4 KiB", 1, Mix::two_thirds_short, 1.0 / 16, true},
    {"1 thread 1/3 4 KiB JSON", 1, Mix::two_thirds_json, 1.0 / 16, true},
};

constexpr std::size_t kLongBytes = 4096;
constexpr std::size_t kJsonVariants = 64;

// Payloads as services log them: JSON documents of about 4 KiB, 64 of them
// with different ids, names and amounts, each with a sequence number that
// every record changes, so that no record repeats one before it (a repeated
// string is interned and costs nothing). Each producer thread has its own.
class JsonPayloads {
 public:
  JsonPayloads() {
    std::mt19937_64 random(20261204);
    auto pick = [&](std::uint64_t n) { return random() % n; };
    const char* words[] = {"alpha", "bravo",  "charlie", "delta", "echo", "foxtrot",  "golf",  "hotel",
                           "india", "juliet", "kilo",    "lima",  "mike", "november", "oscar", "papa"};
    for (std::size_t v = 0; v < kJsonVariants; ++v) {
      std::string doc = fmt::format(
          R"({{"seq":"{:010}","order":"ord-{:08x}","customer":{{"id":{},"name":"{} {}","tier":"{}"}},"items":[)", 0,
          pick(1u << 31), pick(1000000), words[pick(16)], words[pick(16)], words[pick(16)]);
      for (int item = 0; doc.size() < kLongBytes - 200; ++item) {
        doc += fmt::format(R"({}{{"sku":"{}-{:05}","qty":{},"price":{}.{:02},"warehouse":"{}","note":"{} {} {}"}})",
                           item == 0 ? "" : ",", words[pick(16)], pick(100000), 1 + pick(20), pick(500), pick(100),
                           words[pick(16)], words[pick(16)], words[pick(16)], words[pick(16)]);
      }
      doc += fmt::format(R"(],"total":{}.{:02},"currency":"EUR","status":"{}"}})", pick(100000), pick(100),
                         words[pick(16)]);
      variants_.push_back(std::move(doc));
    }
  }
  // Variant n % 64, with n as its sequence number.
  std::string_view next(std::uint64_t n) {
    std::string& doc = variants_[n % kJsonVariants];
    char* digits = doc.data() + kSeqAt;
    for (int i = 9; i >= 0; --i, n /= 10) digits[i] = static_cast<char>('0' + n % 10);
    return doc;
  }

 private:
  static constexpr std::size_t kSeqAt = 8;  // after {"seq":"
  std::vector<std::string> variants_;
};
constexpr int kPinnedRuns = 5;
constexpr unsigned kSampleMask = 15;

const Scenario* find_scenario(const std::string& name) {
  if (name == kCanonical.run) return &kCanonical;
  for (const auto& s : kScenarios)
    if (name == s.run) return &s;
  return nullptr;
}

struct Result {
  double seconds = 0;
  std::int64_t io_cpu_ns = 0;
  std::vector<std::uint32_t> samples;
};

template <typename Logger>
void produce(Logger& logger, const Scenario& scenario, std::uint64_t first, std::uint64_t count, int cpu,
             const std::string& text, bench::StartLine& start_line, std::vector<std::uint32_t>& samples) {
  if (cpu >= 0) bench::pin_to_cpu(cpu);
  if (scenario.sample) samples.reserve(count / (kSampleMask + 1) + 1);
  JsonPayloads json;
  auto one = [&](std::uint64_t n) {
    bool is_long = scenario.mix == Mix::long_only || (scenario.mix != Mix::short_only && n % 3 == 2);
    if (is_long && scenario.mix == Mix::two_thirds_json)
      logger.log_text(json.next(n));
    else if (is_long)
      logger.log_text(text);
    else
      logger.log_short(bench::short_args(n));
  };
  one(first);  // warm-up outside the timed region: registration, thread buffer
  start_line.arrive_and_wait();
  std::uint64_t end = first + count;
  if (!scenario.sample) {
    for (std::uint64_t n = first; n < end; ++n) one(n);
    return;
  }
  for (std::uint64_t n = first; n < end; ++n) {
    if ((n & kSampleMask) == 0) {
      std::uint64_t t0 = bench::tsc_now();
      one(n);
      std::uint64_t t1 = bench::tsc_now();
      samples.push_back(static_cast<std::uint32_t>(std::min<std::uint64_t>(t1 - t0, UINT32_MAX)));
    } else {
      one(n);
    }
  }
}

std::int64_t cpu_of(const std::vector<std::uint64_t>& tids) {
  std::int64_t total = 0;
  for (auto tid : tids) total += bench::thread_cpu_ns(tid);
  return total;
}

template <typename Logger>
Result run(Logger& logger, const Scenario& scenario, std::uint64_t records, const std::string& dir) {
  std::string text = bench::make_text(kLongBytes);
  logger.start(dir);
  auto io_threads = logger.io_threads();
  auto cpus = bench::allowed_cpus();
  int threads = scenario.threads;
  bench::StartLine start_line(threads);
  std::vector<std::vector<std::uint32_t>> samples(static_cast<std::size_t>(threads));
  std::vector<std::thread> producers;
  for (int p = 0; p < threads; ++p) {
    std::uint64_t first = records * static_cast<std::uint64_t>(p) / static_cast<std::uint64_t>(threads);
    std::uint64_t last = records * static_cast<std::uint64_t>(p + 1) / static_cast<std::uint64_t>(threads);
    // Pinned only when each producer can have a CPU of its own; the first
    // CPU is left to the IO threads when there is one to spare.
    int cpu = threads <= static_cast<int>(cpus.size()) ? cpus[cpus.size() - 1 - static_cast<std::size_t>(p)] : -1;
    producers.emplace_back([&, p, first, last, cpu] {
      produce(logger, scenario, first, last - first, cpu, text, start_line, samples[static_cast<std::size_t>(p)]);
    });
  }
  start_line.wait_all_ready();
  Result result;
  std::int64_t cpu0 = cpu_of(io_threads);
  std::int64_t t0 = bench::monotonic_ns();
  start_line.release();
  for (auto& t : producers) t.join();
  logger.flush();
  std::int64_t t1 = bench::monotonic_ns();
  result.io_cpu_ns = cpu_of(io_threads) - cpu0;
  result.seconds = static_cast<double>(t1 - t0) * 1e-9;
  logger.stop();
  for (auto& s : samples) result.samples.insert(result.samples.end(), s.begin(), s.end());
  return result;
}

// What the same log costs as plain text compressed with zstd at its
// default level: the yardstick for terse's bytes per record.
std::uint64_t zstd_size_of_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string out(ZSTD_compressBound(data.size()), '\0');
  std::size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), ZSTD_CLEVEL_DEFAULT);
  return ZSTD_isError(n) ? 0 : n;
}

int child_main(const std::string& logger_name, const std::string& run_name, std::uint64_t records,
               const std::string& keep_dir) {
  const Scenario* scenario = find_scenario(run_name);
  if (scenario == nullptr) {
    std::fprintf(stderr, "throughput: unknown run '%s'\n", run_name.c_str());
    return 2;
  }
  bench::TempDir temp("bench-throughput");
  std::string dir = keep_dir.empty() ? temp.path() : keep_dir;
  Result result;
  std::string text_file;
  if (logger_name == "terse") {
    bench::TerseLogger logger;
    result = run(logger, *scenario, records, dir);
  } else if (logger_name == "terse-fixed-level") {
    bench::TerseFixedLevelLogger logger;
    result = run(logger, *scenario, records, dir);
  } else if (logger_name == "terse-sealed") {
    bench::TerseSealedLogger logger;
    result = run(logger, *scenario, records, dir);
  } else if (logger_name == "terse-pinned") {
    bench::TersePinnedLogger logger;
    result = run(logger, *scenario, records, dir);
  } else if (logger_name == "spdlog-async") {
    bench::SpdlogAsync logger;
    result = run(logger, *scenario, records, dir);
    text_file = dir + "/spdlog.log";
  } else if (logger_name == "fprintf" || logger_name == "fprintf-40k") {
    bench::Fprintf logger(logger_name == "fprintf" ? 0 : 40 * 1024);
    result = run(logger, *scenario, records, dir);
    text_file = dir + "/fprintf.log";
  } else if (logger_name == "fmt::format_to") {
    bench::FmtToMemory logger;
    result = run(logger, *scenario, records, dir);
  } else {
    std::fprintf(stderr, "throughput: unknown logger '%s'\n", logger_name.c_str());
    return 2;
  }
  std::uint64_t disk = bench::directory_bytes(dir);
  long rss_kib = bench::peak_rss_kib();  // before the zstd yardstick below reads whole files
  double zstd_per_record = 0;
  if (!text_file.empty())
    zstd_per_record = static_cast<double>(zstd_size_of_file(text_file)) / static_cast<double>(records);
  std::string p99;
  if (!result.samples.empty()) {
    std::sort(result.samples.begin(), result.samples.end());
    double ticks_per_ns = bench::calibrate_ticks_per_ns(20'000'000);
    p99 = std::to_string(bench::percentile_sorted(result.samples, 99) / ticks_per_ns);
  }
  bool has_io_threads = logger_name.rfind("terse", 0) == 0 || logger_name == "spdlog-async";
  double io_ms = static_cast<double>(result.io_cpu_ns) * 1e-6;
  std::printf("throughput,%s,%s,%d,%" PRIu64 ",%.4f,%.0f,%" PRIu64 ",%.2f,%ld,%s,%s,%s,%s\n", run_name.c_str(),
              logger_name.c_str(), scenario->threads, records, result.seconds,
              static_cast<double>(records) / result.seconds, disk,
              static_cast<double>(disk) / static_cast<double>(records), rss_kib,
              has_io_threads ? std::to_string(io_ms).c_str() : "",
              has_io_threads ? std::to_string(io_ms / (static_cast<double>(records) * 1e-6)).c_str() : "", p99.c_str(),
              zstd_per_record > 0 ? std::to_string(zstd_per_record).c_str() : "");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 5 && std::strcmp(argv[1], "--child") == 0) {
    std::string keep = argc >= 7 && std::strcmp(argv[5], "--keep") == 0 ? argv[6] : "";
    return child_main(argv[2], argv[3], std::stoull(argv[4]), keep);
  }
  double millions = 1;
  std::string csv_path, keep_terse;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--millions" && i + 1 < argc)
      millions = std::stod(argv[++i]);
    else if (arg == "--csv" && i + 1 < argc)
      csv_path = argv[++i];
    else if (arg == "--keep-terse" && i + 1 < argc)
      keep_terse = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--millions X] [--csv FILE] [--keep-terse DIR]\n", argv[0]);
      return 2;
    }
  }
  auto records = static_cast<std::uint64_t>(millions * 1e6);
  if (records < 1000) records = 1000;

  struct Job {
    std::string logger;
    const Scenario* scenario;
  };
  std::vector<Job> jobs;
  for (const char* logger : {"terse", "spdlog-async", "fprintf", "fprintf-40k", "fmt::format_to"})
    jobs.push_back({logger, &kCanonical});
  // Steady or not: the same run several times, terse's threads on a CPU of their own.
  for (int k = 0; k < kPinnedRuns; ++k) jobs.push_back({"terse-pinned", &kCanonical});
  for (const auto& s : kScenarios) {
    for (const char* logger : {"terse", "spdlog-async", "fprintf-40k"}) jobs.push_back({logger, &s});
    if (s.mix == Mix::two_thirds_json) jobs.push_back({"terse-fixed-level", &s});
  }

  std::FILE* csv = nullptr;
  if (!csv_path.empty() && (csv = std::fopen(csv_path.c_str(), "w")) == nullptr) {
    std::perror(csv_path.c_str());
    return 2;
  }
  std::printf("%-30s %-15s %7s %9s %12s %9s %9s %11s %9s\n", "run", "logger", "threads", "records", "records/s",
              "B/record", "RSS MiB", "IO ms/M", "p99 ns");
  std::string self = bench::self_path();
  int failures = 0;
  for (const auto& job : jobs) {
    auto count = static_cast<std::uint64_t>(static_cast<double>(records) * job.scenario->share);
    std::string command = bench::shell_quote(self) + " --child " + bench::shell_quote(job.logger) + " " +
                          bench::shell_quote(job.scenario->run) + " " + std::to_string(count);
    if (job.scenario == &kCanonical && job.logger == "terse" && !keep_terse.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(keep_terse, ec);
      std::filesystem::create_directories(keep_terse, ec);
      command += " --keep " + bench::shell_quote(keep_terse);
    }
    std::string line;
    int status = 0;
    if (!bench::run_child(command, "throughput,", line, status)) {
      std::fprintf(stderr, "throughput: run '%s' with %s failed (status %d)\n", job.scenario->run, job.logger.c_str(),
                   status);
      ++failures;
      continue;
    }
    auto f = bench::split_csv(line);
    std::printf("%-30s %-15s %7s %9s %12.0f %9s %9.1f %11s %9s\n", f[1].c_str(), f[2].c_str(), f[3].c_str(),
                f[4].c_str(), std::stod(f[6]), f[8].c_str(), std::stod(f[9]) / 1024.0,
                f[11].empty() ? "-" : f[11].substr(0, f[11].find('.') + 2).c_str(),
                f[12].empty() ? "-" : f[12].substr(0, f[12].find('.')).c_str());
    std::fflush(stdout);
    if (csv != nullptr) std::fprintf(csv, "%s\n", line.c_str());
  }
  if (csv != nullptr) std::fclose(csv);
  return failures == 0 ? 0 : 1;
}
