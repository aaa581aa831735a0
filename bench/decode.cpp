// Decoder speed on a directory of .tlog files (the throughput run's): the
// decoder library rendering into memory, and the built `terse cat` CLI
// writing to /dev/null, as text (default pattern) and as JSON lines, on as
// many threads as the CPUs it may use (cli-text, cli-json) and on one
// (cli-text-1, cli-json-1: --threads 1, today's one-core figure).
//
//   terse_bench_decode --cli PATH --dir DIR [--reps N] [--csv FILE]
//
// --csv writes one line per mode:
//   decode,MODE,lines,bytes,seconds,lines_per_s,mb_per_s,cpu_seconds
// where seconds is the median wall time of the repetitions and cpu_seconds
// the user+system time of that (median) run; and one line for `terse cat -f`:
//   follow,appends,median_ms,max_ms
// the time from appending a records frame to a followed file to the first
// byte of its lines on the CLI's stdout.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <terse/decoder.hpp>

namespace dec = terse::decoder;
namespace fs = std::filesystem;

namespace {

struct Measure {
  std::uint64_t lines = 0;
  std::uint64_t bytes = 0;
  double seconds = 0;
  double cpu_seconds = 0;
};

double now_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double cpu_seconds_self() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

std::vector<std::string> tlog_files(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".tlog") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// In-process: what the library costs without any output system call.
// The text is built in one buffer, counted, and dropped every MiB, as the
// CLI does with its output buffer.
Measure library_run(const std::vector<std::string>& files, bool json) {
  dec::LinePattern pattern(dec::kDefaultPattern);
  dec::TimeStyle style;
  std::string out;
  out.reserve(2 << 20);
  Measure m;
  double cpu0 = cpu_seconds_self();
  double t0 = now_seconds();
  auto sink = [&](const dec::Record& record) {
    if (json)
      dec::append_json_record(out, record, style);
    else
      pattern.append(out, record, style);
    ++m.lines;
    if (out.size() >= (1 << 20)) {
      m.bytes += out.size();
      out.clear();
    }
  };
  dec::Reporter reporter = [](const dec::Problem& p) {
    std::fprintf(stderr, "decode: %s: offset %llu: %s\n", p.source.c_str(), static_cast<unsigned long long>(p.offset),
                 p.what.c_str());
  };
  for (const auto& file : files) dec::decode_file(file, sink, reporter);
  m.bytes += out.size();
  m.seconds = now_seconds() - t0;
  m.cpu_seconds = cpu_seconds_self() - cpu0;
  return m;
}

// Runs the CLI with stdout on `out_fd`; returns wall seconds and the
// child's CPU seconds.
bool cli_once(const std::vector<std::string>& argv_strings, int out_fd, double& wall, double& cpu) {
  std::vector<char*> argv;
  for (const auto& s : argv_strings) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  double t0 = now_seconds();
  pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    ::dup2(out_fd, STDOUT_FILENO);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  wall = now_seconds() - t0;
  cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
        static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Counts the CLI's output once through a pipe, then times it to /dev/null.
// threads 0: the CLI's default (every CPU it may use).
bool cli_run(const std::string& cli, const std::string& dir, bool json, int threads, int reps, Measure& m) {
  std::vector<std::string> args{cli, "cat"};
  if (json) args.push_back("--json");
  if (threads > 0) {
    args.push_back("--threads");
    args.push_back(std::to_string(threads));
  }
  args.push_back(dir);

  int fds[2];
  if (::pipe(fds) != 0) return false;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDOUT_FILENO);
    std::vector<char*> argv;
    for (const auto& s : args) argv.push_back(const_cast<char*>(s.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  ::close(fds[1]);
  std::vector<char> buffer(1 << 16);
  ssize_t n;
  while ((n = ::read(fds[0], buffer.data(), buffer.size())) > 0) {
    m.bytes += static_cast<std::uint64_t>(n);
    m.lines += static_cast<std::uint64_t>(std::count(buffer.begin(), buffer.begin() + n, '\n'));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;

  int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  std::vector<std::pair<double, double>> runs;
  for (int r = 0; r < reps; ++r) {
    double wall = 0, cpu = 0;
    if (!cli_once(args, null_fd, wall, cpu)) {
      ::close(null_fd);
      return false;
    }
    runs.emplace_back(wall, cpu);
  }
  ::close(null_fd);
  std::sort(runs.begin(), runs.end());
  m.seconds = runs[runs.size() / 2].first;
  m.cpu_seconds = runs[runs.size() / 2].second;
  return true;
}

// `terse cat -f FILE` while FILE grows by one records frame at a time (with
// whatever frames precede it): the milliseconds from each append to the
// first output it causes. The output is read on its own thread, so a frame
// of output never waits for the pipe.
bool follow_latency(const std::string& cli, const std::string& source, std::vector<double>& latencies) {
  std::ifstream in(source, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::size_t> ends;  // of each records frame
  for (std::size_t pos = 16; pos + 24 <= bytes.size();) {
    std::uint32_t stored;
    std::memcpy(&stored, bytes.data() + pos + 8, 4);  // FORMAT.md §3, little-endian like the hosts we run on
    std::size_t end = pos + 24 + stored;
    if (end > bytes.size()) break;
    if (bytes[pos + 4] == 4 || bytes[pos + 4] == 6) ends.push_back(end);  // records, of either layout (§7.4)
    pos = end;
  }
  if (ends.size() < 3) return false;
  std::string dir = (fs::temp_directory_path() / ("terse-follow-" + std::to_string(::getpid()))).string();
  fs::create_directories(dir);
  std::string path = dir + "/" + fs::path(source).filename().string();
  std::size_t written = ends[0];
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(written));

  int fds[2];
  if (::pipe(fds) != 0) return false;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDOUT_FILENO);
    std::vector<std::string> args{cli, "cat", "-f", "-o", "cat", path};
    std::vector<char*> argv;
    for (const auto& s : args) argv.push_back(const_cast<char*>(s.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  ::close(fds[1]);
  std::atomic<std::uint64_t> reads{0};
  std::atomic<double> last_read_at{0};
  std::thread reader([&] {
    std::vector<char> buffer(1 << 20);
    while (::read(fds[0], buffer.data(), buffer.size()) > 0) {
      last_read_at = now_seconds();
      ++reads;
    }
  });
  auto quiet = [&] {  // the output of what was appended so far is all out
    double until = now_seconds() + 5;
    while (now_seconds() < until && (reads == 0 || now_seconds() - last_read_at < 0.3))
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  quiet();
  for (std::size_t k = 1; k < ends.size() && k <= 20; ++k) {
    std::uint64_t before = reads;
    double t0 = now_seconds();
    std::ofstream(path, std::ios::binary | std::ios::app)
        .write(bytes.data() + written, static_cast<std::streamsize>(ends[k] - written));
    written = ends[k];
    while (reads == before && now_seconds() - t0 < 5) std::this_thread::sleep_for(std::chrono::microseconds(100));
    if (reads != before) latencies.push_back((last_read_at - t0) * 1e3);
    quiet();
  }
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
  reader.join();
  ::close(fds[0]);
  fs::remove_all(dir);
  std::sort(latencies.begin(), latencies.end());
  return !latencies.empty();
}

}  // namespace

int main(int argc, char** argv) {
  std::string cli, dir, csv_path;
  int reps = 3;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--cli" && i + 1 < argc)
      cli = argv[++i];
    else if (arg == "--dir" && i + 1 < argc)
      dir = argv[++i];
    else if (arg == "--reps" && i + 1 < argc)
      reps = std::max(1, std::stoi(argv[++i]));
    else if (arg == "--csv" && i + 1 < argc)
      csv_path = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s --cli PATH --dir DIR [--reps N] [--csv FILE]\n", argv[0]);
      return 2;
    }
  }
  if (cli.empty() || dir.empty()) {
    std::fprintf(stderr, "usage: %s --cli PATH --dir DIR [--reps N] [--csv FILE]\n", argv[0]);
    return 2;
  }
  auto files = tlog_files(dir);
  if (files.empty()) {
    std::fprintf(stderr, "decode: no .tlog files in %s\n", dir.c_str());
    return 2;
  }

  struct Row {
    const char* mode;
    Measure m;
  };
  std::vector<Row> rows;
  for (bool json : {false, true}) {
    std::vector<Measure> runs;
    for (int r = 0; r < reps; ++r) runs.push_back(library_run(files, json));
    std::sort(runs.begin(), runs.end(), [](const Measure& a, const Measure& b) { return a.seconds < b.seconds; });
    rows.push_back({json ? "library-json" : "library-text", runs[runs.size() / 2]});
  }
  for (int threads : {0, 1}) {
    for (bool json : {false, true}) {
      Measure m;
      if (!cli_run(cli, dir, json, threads, reps, m)) {
        std::fprintf(stderr, "decode: %s cat%s %s failed\n", cli.c_str(), json ? " --json" : "", dir.c_str());
        return 1;
      }
      rows.push_back({threads == 1 ? (json ? "cli-json-1" : "cli-text-1") : (json ? "cli-json" : "cli-text"), m});
    }
  }

  std::vector<double> follow;
  if (!follow_latency(cli, files.front(), follow))
    std::fprintf(stderr, "decode: following %s failed\n", files[0].c_str());

  std::FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  std::printf("%-14s %10s %10s %9s %12s %9s %9s\n", "decoder", "lines", "MB", "seconds", "lines/s", "MB/s", "CPU s");
  for (const auto& row : rows) {
    const Measure& m = row.m;
    double lines_per_s = static_cast<double>(m.lines) / m.seconds;
    double mb_per_s = static_cast<double>(m.bytes) / 1e6 / m.seconds;
    std::printf("%-14s %10llu %10.1f %9.3f %12.0f %9.1f %9.3f\n", row.mode, static_cast<unsigned long long>(m.lines),
                static_cast<double>(m.bytes) / 1e6, m.seconds, lines_per_s, mb_per_s, m.cpu_seconds);
    if (csv != nullptr)
      std::fprintf(csv, "decode,%s,%llu,%llu,%.4f,%.0f,%.2f,%.4f\n", row.mode, static_cast<unsigned long long>(m.lines),
                   static_cast<unsigned long long>(m.bytes), m.seconds, lines_per_s, mb_per_s, m.cpu_seconds);
  }
  if (!follow.empty()) {
    double median = follow[follow.size() / 2], max = follow.back();
    std::printf(
        "cat -f: a records frame appended to the followed file is on stdout after %.2f ms (median of %zu, "
        "max %.2f)\n",
        median, follow.size(), max);
    if (csv != nullptr) std::fprintf(csv, "follow,%zu,%.3f,%.3f\n", follow.size(), median, max);
  }
  if (csv != nullptr) std::fclose(csv);
  return 0;
}
