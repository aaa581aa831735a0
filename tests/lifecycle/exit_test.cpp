// A process that never calls terse::stop() still gets every record it
// logged into its file: stop() runs at exit.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "process.hpp"
#include "test_support.hpp"

using namespace terse::test;

namespace {

constexpr int kThreads = 3;
constexpr int kPerThread = 5000;

// Runs `body` in a forked child that has a fresh logger; returns its exit status.
template <typename Body>
int in_child(const std::string& directory, Body body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    terse::Config config = test_config(directory);
    terse::start(config);
    body();
    std::_Exit(99);  // not reached: body leaves the process itself
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

void log_from_threads() {
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kPerThread; ++i) TERSE_INFO("thread {} record {}", t, i);
    });
  }
  for (auto& thread : threads) thread.join();
  TERSE_WARN("last words of {}", "main");
}

void check_everything_written(const std::string& directory) {
  Decoded decoded = decode_dir(directory);
  CHECK(decoded.intact());
  REQUIRE(decoded.lines.size() == kThreads * kPerThread + 1);
  std::vector<int> next(kThreads, 0);
  for (const auto& line : decoded.lines) {
    if (line.message == "last words of main") continue;
    int t = -1, i = -1;
    REQUIRE(std::sscanf(line.message.c_str(), "thread %d record %d", &t, &i) == 2);
    REQUIRE(t >= 0);
    REQUIRE(t < kThreads);
    CHECK(i == next[t]);
    next[t] = i + 1;
  }
  CHECK(decoded.lines.back().message == "last words of main");
}

}  // namespace

TEST_CASE("exit() without stop() writes every record") {
  TempDir dir;
  int status = in_child(dir.path(), [] {
    log_from_threads();
    std::exit(0);
  });
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  check_everything_written(dir.path());
}

TEST_CASE("returning from main without stop() writes every record") {
  TempDir dir;
  int status = run_process({TERSE_RETURN_FROM_MAIN, dir.path()});
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
  check_everything_written(dir.path());
}

TEST_CASE("terse::flush() right before exec() keeps every record, and the new program logs on beside them") {
  TempDir dir;
  const std::string directory = dir.path();
  int status = in_child(directory, [&directory] {
    for (int i = 0; i < 2000; ++i) TERSE_INFO("before exec {}", i);
    terse::flush();  // exec() runs no exit handler: this is the one call it needs
    std::vector<std::string> args;
    if (*program_emulator() != '\0') args.emplace_back(program_emulator());
    args.emplace_back(TERSE_RETURN_FROM_MAIN);
    args.push_back(directory);
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    std::_Exit(98);
  });
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);  // the exec'd program's own status
  Decoded decoded = decode_dir(directory);
  CHECK(decoded.intact());
  int before_exec = 0;
  std::size_t after_exec = 0;
  for (const auto& line : decoded.lines) {
    if (line.message.rfind("before exec ", 0) == 0) {
      CHECK(line.message == fmt::format("before exec {}", before_exec));
      ++before_exec;
    } else {
      ++after_exec;
    }
  }
  CHECK(before_exec == 2000);
  CHECK(after_exec == kThreads * kPerThread + 1);
  CHECK(log_files(directory).size() == 2);
}

TEST_CASE("stop() from another thread writes everything and later calls are discarded") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  for (int i = 0; i < 1000; ++i) TERSE_INFO("before stop {}", i);
  std::thread([] { terse::stop(); }).join();
  TERSE_INFO("after stop {}", 1);
  terse::stop();  // a second stop is harmless
  Decoded decoded = decode_dir(dir.path());
  CHECK(decoded.intact());
  REQUIRE(decoded.lines.size() == 1000);
  CHECK(decoded.lines.back().message == "before stop 999");
}
