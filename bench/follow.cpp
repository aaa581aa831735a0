// Live records: how long a record takes from the logging call to its line on
// the stdout of `terse cat -f`, for a writer that logs one record every few
// milliseconds (an operator watching a quiet service, a pipeline alerting
// on errors). Each record carries the CLOCK_REALTIME of its call; the line's
// arrival on the pipe is stamped with the same clock.
//
//   terse_bench_follow --cli PATH [--records N] [--interval-ms MS] [--csv FILE]
//
// --csv writes one line:
//   follow,records,interval_ms,p50_ms,p90_ms,p99_ms,max_ms,lost
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <terse/terse.hpp>

#include "harness.hpp"

extern char** environ;

namespace {

std::int64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct Follower {
  pid_t pid = -1;
  int out = -1;  // the follower's stdout
};

Follower start_follower(const std::string& cli, const std::string& dir) {
  int fds[2];
  if (::pipe(fds) != 0) {
    std::perror("follow: pipe");
    std::exit(2);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::string format = "{message}";
  std::vector<char*> argv{const_cast<char*>(cli.c_str()),
                          const_cast<char*>("cat"),
                          const_cast<char*>("-f"),
                          const_cast<char*>("--format"),
                          format.data(),
                          const_cast<char*>(dir.c_str()),
                          nullptr};
  Follower f;
  if (posix_spawn(&f.pid, cli.c_str(), &actions, nullptr, argv.data(), environ) != 0) {
    std::perror("follow: spawn the CLI");
    std::exit(2);
  }
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  f.out = fds[0];
  return f;
}

// Lines as they arrive, each with the time it was read.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // The next whole line and when its last byte arrived; false at the end.
  bool next(std::string& line, std::int64_t& arrived_ns) {
    for (;;) {
      auto newline = pending_.find('\n');
      if (newline != std::string::npos) {
        line = pending_.substr(0, newline);
        pending_.erase(0, newline + 1);
        arrived_ns = last_read_ns_;
        return true;
      }
      char chunk[4096];
      ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n <= 0) return false;
      last_read_ns_ = realtime_ns();
      pending_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_;
  std::string pending_;
  std::int64_t last_read_ns_ = 0;
};

double percentile_ms(std::vector<std::int64_t> sorted, double p) {
  if (sorted.empty()) return 0;
  auto k = static_cast<std::size_t>(p / 100.0 * static_cast<double>(sorted.size() - 1) + 0.5);
  return static_cast<double>(sorted[std::min(k, sorted.size() - 1)]) * 1e-6;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cli, csv_path;
  int records = 200;
  int interval_ms = 5;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--cli" && i + 1 < argc)
      cli = argv[++i];
    else if (arg == "--records" && i + 1 < argc)
      records = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--interval-ms" && i + 1 < argc)
      interval_ms = std::max(0, std::atoi(argv[++i]));
    else if (arg == "--csv" && i + 1 < argc)
      csv_path = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s --cli PATH [--records N] [--interval-ms MS] [--csv FILE]\n", argv[0]);
      return 2;
    }
  }
  if (cli.empty()) {
    std::fprintf(stderr, "follow: --cli is required\n");
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  bench::TempDir temp("bench-follow");
  terse::Config config;
  config.directory = temp.path();
  config.name = "bench";
  terse::start(config);
  // The follower must be following before the timed records: the first
  // record's line says it is.
  TERSE_INFO("ready {}", 0);
  terse::flush();
  Follower follower = start_follower(cli, temp.path());
  LineReader reader(follower.out);
  std::string line;
  std::int64_t arrived = 0;
  if (!reader.next(line, arrived) || line != "ready 0") {
    std::fprintf(stderr, "follow: the follower printed '%s' first, not 'ready 0'\n", line.c_str());
    return 1;
  }
  std::vector<std::int64_t> latencies;
  std::thread consumer([&] {
    std::string l;
    std::int64_t at = 0;
    while (static_cast<int>(latencies.size()) < records && reader.next(l, at)) {
      auto space = l.rfind(' ');
      if (l.rfind("live ", 0) != 0 || space == std::string::npos) continue;
      latencies.push_back(at - std::stoll(l.substr(space + 1)));
    }
  });
  for (int i = 0; i < records; ++i) {
    TERSE_INFO("live {} {}", i, realtime_ns());
    std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
  }
  // Whatever has not arrived 2 s after the last call counts as lost.
  std::int64_t give_up = bench::monotonic_ns() + 2'000'000'000;
  while (bench::monotonic_ns() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (kill(follower.pid, 0) != 0) break;
    if (static_cast<int>(latencies.size()) >= records) break;
  }
  ::kill(follower.pid, SIGTERM);
  consumer.join();
  ::close(follower.out);
  int status = 0;
  ::waitpid(follower.pid, &status, 0);
  terse::stop();

  std::sort(latencies.begin(), latencies.end());
  int lost = records - static_cast<int>(latencies.size());
  double p50 = percentile_ms(latencies, 50), p90 = percentile_ms(latencies, 90), p99 = percentile_ms(latencies, 99);
  double max = latencies.empty() ? 0 : static_cast<double>(latencies.back()) * 1e-6;
  std::printf(
      "live records: %d records, one every %d ms, call to the follower's stdout: p50 %.1f ms, p90 %.1f ms, "
      "p99 %.1f ms, max %.1f ms%s\n",
      records, interval_ms, p50, p90, p99, max, lost > 0 ? (", " + std::to_string(lost) + " lost").c_str() : "");
  if (!csv_path.empty()) {
    std::FILE* csv = std::fopen(csv_path.c_str(), "w");
    if (csv == nullptr) {
      std::perror(csv_path.c_str());
      return 2;
    }
    std::fprintf(csv, "follow,%d,%d,%.3f,%.3f,%.3f,%.3f,%d\n", records, interval_ms, p50, p90, p99, max, lost);
    std::fclose(csv);
  }
  return lost == 0 ? 0 : 1;
}
