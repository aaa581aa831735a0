// The console's rendering rate against `terse cat`'s. One producer logs the
// canonical record as fast as it can (the canonical throughput run) with
// Config::console = text to /dev/null; the console renders on terse's view
// thread what it keeps up with and counts the rest as not shown. Then the
// built CLI prints the same file to /dev/null. Both rates are lines per
// CPU-second of the threads that render (the view and console threads; the
// CLI process) and lines per second of wall time. A paced run (the console
// keeps up) and the same unpaced run without a console come beside them.
// Each run starts with a burst of 200,000 records that is not measured:
// the threads' first pages and buffers are a cost a run pays once (and
// `terse cat`, reading a finished file, has no such thing to pay).
//
//   terse_bench_console --cli PATH [--millions X] [--reps N] [--csv FILE]
//
// --csv writes one line per measurement, the median of the repetitions:
//   console,RUN,records,seconds,records_per_s,shown,not_shown,render_cpu_s,shown_per_cpu_s,shown_per_wall_s
//   cli,RUN,lines,wall_s,cpu_s,lines_per_cpu_s,lines_per_wall_s
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <terse/terse.hpp>

#include "baselines.hpp"
#include "harness.hpp"

namespace {

struct ConsoleRun {
  double records = 0;
  double seconds = 0;  // first call until flush() returned
  double shown = 0;
  double not_shown = 0;
  double render_cpu_s = 0;
  double records_per_s() const { return records / seconds; }
  double shown_per_cpu_s() const { return render_cpu_s > 0 ? shown / render_cpu_s : 0; }
  double shown_per_wall_s() const { return shown / seconds; }
};

struct CliRun {
  double lines = 0;
  double wall_s = 0;
  double cpu_s = 0;
};

constexpr std::uint64_t kWarmUpRecords = 200'000;

double now_s() { return static_cast<double>(bench::monotonic_ns()) * 1e-9; }

// One producer; `per_second` 0 is unpaced. The directory is kept for the CLI.
ConsoleRun log_with_console(const std::string& dir, std::uint64_t records, double per_second, bool console) {
  int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  terse::Config config;
  config.directory = dir;
  config.name = "bench";
  config.read_environment = false;
  if (console) {
    config.console = terse::Console::text;
    config.console_fd = null_fd;
  }
  terse::start(config);
  // Warm-up, not measured: the threads' first pages and buffers, which a
  // run pays for once.
  for (std::uint64_t i = 0; i < kWarmUpRecords; ++i) bench::TerseLogger::log_short(bench::short_args(i));
  terse::flush();
  terse::Stats warm = terse::stats();
  ConsoleRun run;
  run.records = static_cast<double>(records);
  double t0 = now_s();
  for (std::uint64_t i = 0; i < records; ++i) {
    bench::TerseLogger::log_short(bench::short_args(i));
    if (per_second > 0 && i % 64 == 63) {
      double due = t0 + static_cast<double>(i + 1) / per_second;
      while (now_s() < due) {
      }
    }
  }
  terse::flush();
  run.seconds = now_s() - t0;
  terse::Stats stats = terse::stats();
  terse::stop();
  ::close(null_fd);
  run.shown = static_cast<double>(stats.console_records - warm.console_records);
  run.not_shown = static_cast<double>(stats.console_not_shown - warm.console_not_shown);
  run.render_cpu_s = static_cast<double>((stats.view_busy - warm.view_busy).count()) * 1e-9;
  return run;
}

bool cli_once(const std::string& cli, const std::string& dir, CliRun& run) {
  int out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  double t0 = now_s();
  pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    ::dup2(out, STDOUT_FILENO);
    ::execl(cli.c_str(), cli.c_str(), "cat", "--color", "never", dir.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  run.wall_s = now_s() - t0;
  run.cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
              static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  ::close(out);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

template <typename T, typename Key>
T median_by(std::vector<T> runs, Key key) {
  std::sort(runs.begin(), runs.end(), [&](const T& a, const T& b) { return key(a) < key(b); });
  return runs[runs.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string cli;
  std::string csv_path;
  double millions = 2;
  int reps = 3;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--cli" && i + 1 < argc) {
      cli = argv[++i];
    } else if (arg == "--millions" && i + 1 < argc) {
      millions = std::stod(argv[++i]);
    } else if (arg == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::stoi(argv[++i]));
    } else if (arg == "--csv" && i + 1 < argc) {
      csv_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s --cli PATH [--millions X] [--reps N] [--csv FILE]\n", argv[0]);
      return 2;
    }
  }
  if (cli.empty()) {
    std::fprintf(stderr, "%s: --cli PATH (the terse binary) is needed\n", argv[0]);
    return 2;
  }
  auto records = static_cast<std::uint64_t>(millions * 1e6);
  const double paced_rate = 200'000;
  auto paced_records = std::min<std::uint64_t>(records, static_cast<std::uint64_t>(paced_rate));

  std::vector<ConsoleRun> unpaced, paced, without;
  std::vector<CliRun> cli_runs;
  for (int r = 0; r < reps; ++r) {
    bench::TempDir dir("bench-console");
    unpaced.push_back(log_with_console(dir / "unpaced", records, 0, true));
    CliRun c;
    c.lines = unpaced.back().records;
    if (!cli_once(cli, dir / "unpaced", c)) {
      std::fprintf(stderr, "%s: %s cat failed\n", argv[0], cli.c_str());
      return 1;
    }
    cli_runs.push_back(c);
    without.push_back(log_with_console(dir / "without", records, 0, false));
    paced.push_back(log_with_console(dir / "paced", paced_records, paced_rate, true));
  }
  auto by_render = [](const ConsoleRun& r) { return r.shown_per_cpu_s(); };
  auto by_rate = [](const ConsoleRun& r) { return r.records_per_s(); };
  struct Row {
    const char* run;
    ConsoleRun value;
  };
  Row rows[] = {{"unpaced", median_by(unpaced, by_render)},
                {"paced", median_by(paced, by_render)},
                {"no-console", median_by(without, by_rate)}};
  CliRun cat = median_by(cli_runs, [](const CliRun& c) { return c.lines / c.cpu_s; });

  std::printf("console = text to /dev/null, one producer, canonical record, median of %d\n\n", reps);
  std::printf("%-12s %10s %12s %10s %10s %12s %14s %14s\n", "run", "records", "records/s", "shown", "not shown",
              "render CPU s", "shown/CPU-s", "shown/wall-s");
  for (const Row& row : rows) {
    const ConsoleRun& v = row.value;
    std::printf("%-12s %10.0f %12.0f %10.0f %10.0f %12.3f %14.0f %14.0f\n", row.run, v.records, v.records_per_s(),
                v.shown, v.not_shown, v.render_cpu_s, v.shown_per_cpu_s(), v.shown_per_wall_s());
  }
  std::printf(
      "\nterse cat of the unpaced run's file to /dev/null: %.0f lines, %.3f s wall, %.3f s CPU: %.0f lines/CPU-s, "
      "%.0f lines/wall-s\n",
      cat.lines, cat.wall_s, cat.cpu_s, cat.lines / cat.cpu_s, cat.lines / cat.wall_s);

  if (!csv_path.empty()) {
    std::FILE* out = std::fopen(csv_path.c_str(), "w");
    if (out == nullptr) {
      std::perror(csv_path.c_str());
      return 2;
    }
    for (const Row& row : rows) {
      const ConsoleRun& v = row.value;
      std::fprintf(out, "console,%s,%.0f,%.4f,%.0f,%.0f,%.0f,%.4f,%.0f,%.0f\n", row.run, v.records, v.seconds,
                   v.records_per_s(), v.shown, v.not_shown, v.render_cpu_s, v.shown_per_cpu_s(), v.shown_per_wall_s());
    }
    std::fprintf(out, "cli,unpaced,%.0f,%.4f,%.4f,%.0f,%.0f\n", cat.lines, cat.wall_s, cat.cpu_s, cat.lines / cat.cpu_s,
                 cat.lines / cat.wall_s);
    std::fclose(out);
  }
  return 0;
}
