// Retention, fork() and the IO thread's name.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace terse::test;
namespace fs = std::filesystem;

namespace {

// Several runs into one directory, each rolling through several files.
void log_runs(const terse::Config& config, int runs, int per_run) {
  std::string padding(100, 'r');
  for (int run = 0; run < runs; ++run) {
    terse::start(config);
    for (int i = 0; i < per_run; ++i) {
      TERSE_INFO("run {} record {} {}", run, i, padding);
      if (i % 200 == 199) terse::flush();  // each flush writes a batch: files roll
    }
    terse::stop();
  }
}

std::uint64_t total_bytes(const std::vector<std::string>& files) {
  std::uint64_t total = 0;
  for (const auto& f : files) total += fs::file_size(f);
  return total;
}

}  // namespace

TEST_CASE("retention by file count keeps the newest files, across restarts") {
  TempDir dir;
  auto config = test_config(dir.path());
  config.roll_bytes = 4096;
  config.compression_level = 0;
  config.max_files = 3;
  log_runs(config, 3, 1000);
  auto files = log_files(dir.path());
  REQUIRE(files.size() == 3);
  // The newest three: the last run's last records are there, the first run's are not.
  Decoded decoded = decode_files(files);
  CHECK(decoded.intact());
  REQUIRE_FALSE(decoded.lines.empty());
  CHECK(decoded.lines.back().message.rfind("run 2 record 999 ", 0) == 0);
  for (const auto& line : decoded.lines) CHECK(line.message.rfind("run 0 ", 0) != 0);
}

TEST_CASE("retention by total bytes never removes the file being written") {
  TempDir dir;
  auto config = test_config(dir.path());
  config.roll_bytes = 4096;
  config.compression_level = 0;
  config.max_total_bytes = 20000;
  log_runs(config, 2, 1000);
  auto files = log_files(dir.path());
  REQUIRE_FALSE(files.empty());
  // At the last roll the limit held; the current file has grown since.
  CHECK(total_bytes(files) <= config.max_total_bytes + 2 * config.roll_bytes + 8192);
  CHECK(decode_files(files).intact());
  // A limit smaller than one file still leaves the current file alone.
  config.max_total_bytes = 1;
  terse::start(config);
  TERSE_INFO("alone {}", 1);
  terse::stop();
  files = log_files(dir.path());
  REQUIRE(files.size() == 1);
  Decoded decoded = decode_files(files);
  REQUIRE(decoded.lines.size() == 1);
  CHECK(decoded.lines[0].message == "alone 1");
}

TEST_CASE("retention leaves other names and other files alone") {
  TempDir dir;
  std::ofstream(dir / "notes.txt") << "keep me";
  std::ofstream(dir / "other-20260101-001.tlog") << "not ours";
  auto config = test_config(dir.path());
  config.max_files = 1;
  log_runs(config, 3, 10);
  CHECK(fs::exists(dir / "notes.txt"));
  CHECK(fs::exists(dir / "other-20260101-001.tlog"));
  CHECK(log_files(dir.path()).size() == 2);  // other-… and the one test-… file left
}

TEST_CASE("a forked child neither deadlocks nor writes into the parent's file, and can start terse into its own") {
  TempDir parent_dir, child_dir;
  terse::start(test_config(parent_dir.path()));
  for (int i = 0; i < 1000; ++i) TERSE_INFO("parent before fork {}", i);
  pid_t pid = ::fork();
  if (pid == 0) {
    // Into a file of the child's own beside the parent's (Config::log_after_fork).
    TERSE_INFO("child before start {}", 1);
    terse::flush();
    terse::Config config = test_config(child_dir.path());
    terse::start(config);
    for (int i = 0; i < 100; ++i) TERSE_INFO("child record {}", i);
    terse::stop();
    std::_Exit(0);
  }
  for (int i = 0; i < 1000; ++i) TERSE_INFO("parent after fork {}", i);
  int status = 0;
  ::waitpid(pid, &status, 0);
  terse::stop();
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);

  Decoded parent = decode_dir(parent_dir.path());
  CHECK(parent.intact());
  CHECK(parent.lines.size() == 2001);
  for (const auto& line : parent.lines) {
    if (line.thread == static_cast<std::uint64_t>(pid)) {
      CHECK(line.message == "child before start 1");
    } else {
      CHECK(line.message.rfind("parent ", 0) == 0);
    }
  }
  CHECK(log_files(parent_dir.path()).size() == 2);  // the parent's file and the child's
  Decoded child = decode_dir(child_dir.path());
  CHECK(child.intact());
  REQUIRE(child.lines.size() == 100);
  CHECK(child.lines.front().message == "child record 0");
}

TEST_CASE("the IO thread is named terse-io") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  bool found = false;
  for (const auto& entry : fs::directory_iterator("/proc/self/task")) {
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name == "terse-io") found = true;
  }
  terse::stop();
  CHECK(found);
}
