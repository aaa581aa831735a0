// fsync policy, durable flush, file permissions and runtime stats.
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace terse::test;
using namespace std::chrono_literals;

namespace {

std::uint64_t bytes_in_files(const std::string& directory) {
  std::uint64_t total = 0;
  for (const auto& file : log_files(directory)) total += std::filesystem::file_size(file);
  return total;
}

// Starts the logger into `dir` with the given fsync policy.
void start_with_fsync(const TempDir& dir, std::chrono::milliseconds interval, std::uint64_t bytes,
                      int compression_level = 1) {
  auto config = test_config(dir.path());
  config.fsync_interval = interval;
  config.fsync_bytes = bytes;
  config.compression_level = compression_level;
  terse::start(config);
}

}  // namespace

TEST_CASE("data waiting longer than fsync_interval is synced") {
  TempDir dir;
  start_with_fsync(dir, 20ms, 0);
  TERSE_INFO("needs to reach the disk: {}", 1);
  terse::flush();
  std::this_thread::sleep_for(300ms);
  CHECK(terse::stats().syncs >= 1);
  terse::stop();
}

TEST_CASE("without an interval or a byte threshold nothing is synced until stop") {
  TempDir dir;
  start_with_fsync(dir, 0ms, 0);
  for (int i = 0; i < 1000; ++i) TERSE_INFO("record {}", i);
  terse::flush();
  std::this_thread::sleep_for(100ms);
  CHECK(terse::stats().syncs == 0);
  terse::stop();
}

TEST_CASE("passing fsync_bytes of unsynced data syncs") {
  TempDir dir;
  start_with_fsync(dir, 0ms, 4096, 0);  // stored frames reach the threshold quickly
  std::string padding(200, 'p');
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 50; ++i) TERSE_INFO("record {} {}", i, padding);
    terse::flush();
  }
  CHECK(terse::stats().syncs >= 2);
  terse::stop();
}

TEST_CASE("flush(durable) returns after a sync of everything written") {
  TempDir dir;
  start_with_fsync(dir, 0ms, 0);
  TERSE_INFO("durable record {}", 7);
  terse::flush(terse::durable);
  CHECK(terse::stats().syncs == 1);
  // Nothing new to sync, unless the writer wrote meanwhile: the clock's
  // calibration is refreshed 10, 20, 40 ms... after start, and a loaded
  // machine can take that long between the two calls.
  const terse::Stats before = terse::stats();
  terse::flush(terse::durable);
  const terse::Stats after = terse::stats();
  if (after.bytes_out == before.bytes_out) {
    CHECK(after.syncs == before.syncs);
  } else {
    CHECK(after.syncs <= before.syncs + 1);
  }
  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.lines.size() == 1);
  CHECK(decoded.lines[0].message == "durable record 7");
  terse::stop();
}

TEST_CASE("files are created with Config::file_mode, 0640 by default") {
  for (unsigned mode : {0640u, 0600u}) {
    TempDir dir;
    auto config = test_config(dir.path());
    if (mode != 0640u) config.file_mode = mode;
    mode_t old_mask = ::umask(022);
    terse::start(config);
    TERSE_INFO("mode {:o}", mode);
    terse::stop();
    ::umask(old_mask);
    auto files = log_files(dir.path());
    REQUIRE(files.size() == 1);
    struct stat info {};
    REQUIRE(::stat(files[0].c_str(), &info) == 0);
    CHECK((info.st_mode & 07777) == mode);
  }
}

TEST_CASE("stats() counts what was written, per thread and in total") {
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 64 * 1024;
  terse::start(config);
  constexpr int kRecords = 20000;
  std::thread([&] {
    for (int i = 0; i < kRecords; ++i) TERSE_INFO("worker record {} of {}", i, kRecords);
  }).join();
  for (int i = 0; i < 10; ++i) TERSE_WARN("main record {}", i);
  terse::flush();
  terse::Stats s = terse::stats();
  CHECK(s.records_written == kRecords + 10);
  CHECK(s.records_dropped == 0);
  CHECK(s.files_opened == 1);
  CHECK(s.write_errors == 0);
  CHECK(s.bytes_out == bytes_in_files(dir.path()));
  CHECK(s.bytes_in > s.bytes_out / 2);
  CHECK(s.io_busy.count() > 0);
  bool found_main = false;
  for (const auto& t : s.threads) {
    if (t.os_tid == static_cast<std::uint64_t>(::gettid())) {
      found_main = true;
      CHECK(t.buffer_bytes >= 4096);  // this thread may have its buffer from an earlier start()
      CHECK(t.highest_fill > 0);
      CHECK(t.highest_fill <= t.buffer_bytes);
    }
  }
  CHECK(found_main);
  terse::stop();
  CHECK(terse::stats().records_written == 0);  // not running
}

TEST_CASE("stats() counts drops, also of threads that have exited") {
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 4096;
  config.overflow = terse::Overflow::drop;
  terse::start(config);
  std::string padding(100, 'd');
  std::thread([&] {
    for (int i = 0; i < 100000; ++i) TERSE_INFO("flood {} {}", i, padding);
  }).join();
  terse::flush();
  std::this_thread::sleep_for(50ms);  // the exited thread's buffer is released
  terse::flush();
  terse::Stats s = terse::stats();
  CHECK(s.records_dropped > 0);
  terse::stop();
  Decoded decoded = decode_dir(dir.path());
  std::uint64_t reported = 0, logged = 0;
  for (const auto& line : decoded.lines) {
    if (line.dropped) {
      reported += line.dropped_count;
    } else {
      ++logged;
    }
  }
  CHECK(reported == s.records_dropped);
  CHECK(logged + reported == 100000);
}

TEST_CASE("stats() after stop() and start() counts the drops of the new run only") {
  // The thread's buffer outlives the logger: the first run's drops stay on it.
  std::thread([] {
    std::string padding(100, 'd');
    for (int run = 1; run <= 2; ++run) {
      TempDir dir;
      auto config = test_config(dir.path());
      config.thread_buffer_bytes = 4096;
      config.overflow = terse::Overflow::drop;
      terse::start(config);
      const int records = run == 1 ? 100000 : 10;  // the second run fits in the buffer
      for (int i = 0; i < records; ++i) TERSE_INFO("run {} record {} {}", run, i, padding);
      terse::flush();
      const terse::Stats s = terse::stats();
      terse::stop();
      std::uint64_t reported = 0;
      for (const auto& line : decode_dir(dir.path()).lines) reported += line.dropped ? line.dropped_count : 0;
      INFO("run " << run);
      CHECK(s.records_dropped == reported);
      const auto self = static_cast<std::uint64_t>(::syscall(SYS_gettid));
      auto mine = std::find_if(s.threads.begin(), s.threads.end(), [&](const auto& t) { return t.os_tid == self; });
      REQUIRE(mine != s.threads.end());
      CHECK(mine->dropped == reported);
      if (run == 1) CHECK(reported > 0);
      if (run == 2) CHECK(reported == 0);
    }
  }).join();
}

TEST_CASE("in sync mode every call returns with its record in the file") {
  TempDir dir;
  auto config = test_config(dir.path());
  terse::start(config);
  // The thread's buffer exists before the switch (it carries its own copy of the mode).
  TERSE_INFO("asynchronous record");
  terse::set_async(false);
  for (int i = 0; i < 5; ++i) {
    TERSE_INFO("synchronous record {}", i);
    Decoded decoded = decode_dir(dir.path());  // no flush: the call itself waited
    REQUIRE(decoded.lines.size() == static_cast<std::size_t>(i + 2));
    CHECK(decoded.lines.back().message == fmt::format("synchronous record {}", i));
  }
  terse::set_async(true);
  terse::stop();
}

TEST_CASE("switching sync mode while other threads log loses and repeats nothing") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  constexpr int kThreads = 3;
  constexpr int kPerThread = 3000;
  std::atomic<bool> done{false};
  std::thread toggler([&] {
    for (bool async = false; !done.load(); async = !async) {
      terse::set_async(async);
      std::this_thread::sleep_for(1ms);
    }
    terse::set_async(true);
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kPerThread; ++i) TERSE_INFO("thread {} record {}", t, i);
    });
  }
  for (auto& thread : threads) thread.join();
  done = true;
  toggler.join();
  terse::stop();
  Decoded decoded = decode_dir(dir.path());
  CHECK(decoded.intact());
  REQUIRE(decoded.lines.size() == kThreads * kPerThread);
  std::vector<int> next(kThreads, 0);
  for (const auto& line : decoded.lines) {
    int t = -1, i = -1;
    REQUIRE(std::sscanf(line.message.c_str(), "thread %d record %d", &t, &i) == 2);
    CHECK(i == next[t]);
    next[t] = i + 1;
  }
}
