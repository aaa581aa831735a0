// A write that fails at run time (here EFBIG, from RLIMIT_FSIZE) must not
// crash the process or tear the file: it is reported once, records are held
// (block) or counted as dropped (drop), and logging resumes afterwards.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace terse::test;
using namespace std::chrono_literals;

namespace {

constexpr int kBefore = 20000;
constexpr int kAfter = 500;
constexpr rlim_t kFileLimit = 48 * 1024;

void set_file_limit(rlim_t limit) {
  rlimit r{};
  ::getrlimit(RLIMIT_FSIZE, &r);
  r.rlim_cur = limit;
  ::setrlimit(RLIMIT_FSIZE, &r);
}

// What the child's configuration asks of a failing disk.
enum class Policy { drop, block_waiting_for_disk, block };

// A program that logs this many records onto a full disk must get past them.
constexpr int kOntoFullDisk = 200000;

// Child: logs past the file-size limit, lifts the limit, logs again. Exit
// status 0 when the error callback saw one failure and one recovery.
[[noreturn]] void run_child(const std::string& directory, Policy policy) {
  std::signal(SIGXFSZ, SIG_IGN);  // the failure arrives as EFBIG instead of a signal
  static std::atomic<int> failures{0}, recoveries{0};
  terse::Config config = test_config(directory);
  config.overflow = policy == Policy::drop ? terse::Overflow::drop : terse::Overflow::block;
  config.wait_for_disk = policy == Policy::block_waiting_for_disk;
  config.compression_level = 0;  // so the limit is reached quickly
  config.on_error = [](const std::string& message) {
    (message.find("failed") != std::string::npos ? failures : recoveries)++;
  };
  terse::start(config);
  set_file_limit(kFileLimit);
  if (policy == Policy::block) {
    // Nobody lifts the limit while the loop runs: it must return on its own
    // (the alarm ends a child that hangs, which the parent then reports).
    ::alarm(120);
    std::string padding(64, 'p');
    for (int i = 0; i < kOntoFullDisk; ++i) TERSE_INFO("before {} {}", i, padding);
    terse::flush();
    ::alarm(0);
    set_file_limit(RLIM_INFINITY);
    for (int i = 0; i < kAfter; ++i) TERSE_INFO("after {}", i);
    terse::stop();
    std::_Exit(failures == 1 && recoveries == 1 ? 0 : 10 + failures * 3 + recoveries);
  }
  std::thread lifter;
  if (policy == Policy::block_waiting_for_disk) {
    // The logging thread will block once the buffers are full; someone else
    // has to make room.
    lifter = std::thread([] {
      std::this_thread::sleep_for(300ms);
      set_file_limit(RLIM_INFINITY);
    });
  }
  std::string padding(64, 'p');
  for (int i = 0; i < kBefore; ++i) TERSE_INFO("before {} {}", i, padding);
  if (policy == Policy::drop) {
    terse::flush();
    set_file_limit(RLIM_INFINITY);
  } else {
    lifter.join();
  }
  for (int i = 0; i < kAfter; ++i) TERSE_INFO("after {}", i);
  terse::stop();
  std::_Exit(failures == 1 && recoveries == 1 ? 0 : 10 + failures * 3 + recoveries);
}

int fork_child(const std::string& directory, Policy policy) {
  pid_t pid = ::fork();
  if (pid == 0) run_child(directory, policy);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

struct Counts {
  int before = 0;
  int after = 0;
  std::uint64_t reported_dropped = 0;
};

Counts count(const Decoded& decoded) {
  Counts c;
  for (const auto& line : decoded.lines) {
    if (line.dropped) {
      c.reported_dropped += line.dropped_count;
    } else if (line.message.rfind("before ", 0) == 0) {
      ++c.before;
    } else if (line.message.rfind("after ", 0) == 0) {
      ++c.after;
    }
  }
  return c;
}

}  // namespace

TEST_CASE("with the drop policy, records lost to a failing disk are counted in the log") {
  TempDir dir;
  int status = fork_child(dir.path(), Policy::drop);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);  // one failure report, one recovery report
  Decoded decoded = decode_dir(dir.path());
  CHECK(decoded.intact());  // failed writes were cut back, no torn frames
  Counts c = count(decoded);
  CHECK(c.before < kBefore);  // the limit really cost records
  CHECK(c.reported_dropped > 0);
  CHECK(c.before + c.reported_dropped == kBefore);
  CHECK(c.after == kAfter);
}

TEST_CASE("with the block policy and wait_for_disk, a failing disk holds records until writes work again") {
  TempDir dir;
  int status = fork_child(dir.path(), Policy::block_waiting_for_disk);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  Decoded decoded = decode_dir(dir.path());
  CHECK(decoded.intact());
  Counts c = count(decoded);
  CHECK(c.before == kBefore);
  CHECK(c.reported_dropped == 0);
  CHECK(c.after == kAfter);
}

TEST_CASE("with the block policy, a full disk never stops the loggers: what the writer cannot hold is counted") {
  TempDir dir;
  int status = fork_child(dir.path(), Policy::block);
  REQUIRE_FALSE(WIFSIGNALED(status));  // SIGALRM: the loop never got past the full disk
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);  // one failure report, one recovery report
  Decoded decoded = decode_dir(dir.path());
  CHECK(decoded.intact());
  Counts c = count(decoded);
  CHECK(c.before < kOntoFullDisk);
  CHECK(c.reported_dropped > 0);
  CHECK(c.before + c.reported_dropped == kOntoFullDisk);
  CHECK(c.after == kAfter);
}
