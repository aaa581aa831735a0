// fork() as a prefork server uses it: the parent starts terse, forks its
// workers, and each worker logs without calling anything of terse's.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace terse::test;

namespace {

constexpr int kWorkers = 4;

pid_t fork_worker(int worker, int records) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  for (int i = 0; i < records; ++i) TERSE_INFO("worker {} record {}", worker, i);
  if (worker % 2 == 0) std::exit(0);  // exit handlers stop the worker's logger
  terse::flush();                     // _exit() runs none: what it needs first
  ::_exit(0);
}

int exit_status(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("a prefork server's workers log into files of their own with no call to terse") {
  TempDir dir;
  const int per_process = static_cast<int>(scaled(10'000, 1000));
  terse::start(test_config(dir.path()));
  for (int i = 0; i < per_process; ++i) TERSE_INFO("parent before fork {}", i);
  std::vector<pid_t> workers;
  for (int w = 0; w < kWorkers; ++w) workers.push_back(fork_worker(w, per_process));
  for (int i = 0; i < per_process; ++i) TERSE_INFO("parent after fork {}", i);
  for (pid_t pid : workers) CHECK(exit_status(pid) == 0);
  terse::stop();

  Decoded decoded = decode_dir(dir.path());
  CHECK(decoded.intact());
  // Each writer's records in its own order, each exactly once: the records
  // the parent logged before fork() are not written again by the workers.
  int parent_before = 0;
  int parent_after = 0;
  std::vector<int> next(kWorkers, 0);
  std::map<int, std::uint64_t> worker_thread;
  for (const auto& line : decoded.lines) {
    int w = -1, i = -1;
    if (std::sscanf(line.message.c_str(), "worker %d record %d", &w, &i) == 2) {
      REQUIRE((w >= 0 && w < kWorkers));
      CHECK(i == next[w]);
      next[w] = i + 1;
      CHECK(line.thread == static_cast<std::uint64_t>(workers[w]));  // its own main thread
    } else if (std::sscanf(line.message.c_str(), "parent before fork %d", &i) == 1) {
      CHECK(i == parent_before++);
    } else {
      REQUIRE(std::sscanf(line.message.c_str(), "parent after fork %d", &i) == 1);
      CHECK(i == parent_after++);
    }
  }
  CHECK(parent_before == per_process);
  CHECK(parent_after == per_process);
  for (int w = 0; w < kWorkers; ++w) CHECK(next[w] == per_process);
  CHECK(decoded.lines.size() == static_cast<std::size_t>((2 + kWorkers) * per_process));
  // Files of their own: one writer per file, the parent's and each worker's.
  CHECK(log_files(dir.path()).size() >= 1 + kWorkers);
}

TEST_CASE("with log_after_fork off a child's calls are discarded until it starts terse itself") {
  TempDir dir;
  terse::Config config = test_config(dir.path());
  config.log_after_fork = false;
  terse::start(config);
  TERSE_INFO("parent {}", 1);
  pid_t pid = ::fork();
  if (pid == 0) {
    TERSE_INFO("child discarded {}", 2);
    terse::flush();
    ::_exit(0);
  }
  CHECK(exit_status(pid) == 0);
  TERSE_INFO("parent {}", 3);
  terse::stop();
  require_messages(decode_dir(dir.path()), {"parent 1", "parent 3"});
}
