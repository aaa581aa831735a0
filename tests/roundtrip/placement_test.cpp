// Config::cpus: terse's own threads run on the CPUs it names and nowhere
// else, the application's threads are left where they were, and a set the
// process may not run on is refused at start.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "roundtrip.hpp"

using namespace terse::test;
using Catch::Matchers::Contains;

namespace {

std::vector<int> affinity_of(int tid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(tid, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

#if defined(TERSE_POSIX_ONLY)
constexpr bool kPosixOnly = true;
#else
constexpr bool kPosixOnly = false;
#endif

const char* const kTerseThreads[] = {"terse-io", "terse-write", "terse-view", "terse-console", "terse-levels"};

}  // namespace

TEST_CASE("Config::cpus pins every thread of terse's to those CPUs and leaves the application's alone") {
  const std::vector<int> allowed = affinity_of(0);
  REQUIRE(!allowed.empty());
  const int cpu = allowed.back();
  TempDir dir;
  const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  REQUIRE(null_fd >= 0);
  auto config = test_config(dir.path());
  config.cpus = {cpu};
  config.console = terse::Console::text;
  config.console_fd = null_fd;
  config.levels_file = dir / "levels";
  terse::start(config);
  for (const char* name : kTerseThreads) {
    const std::vector<int> tids = threads_named(name);
    INFO("thread " << name);
    REQUIRE(tids.size() == 1);
#if defined(TERSE_POSIX_ONLY)
    CHECK(affinity_of(tids[0]) == allowed);  // POSIX has no affinity: the OS places them
#else
    CHECK(affinity_of(tids[0]) == std::vector<int>{cpu});
#endif
  }
  CHECK(affinity_of(0) == allowed);
  TERSE_INFO("pinned to {}", cpu);
  terse::stop();
  ::close(null_fd);
  require_messages(decode_dir(dir.path()), {"pinned to " + std::to_string(cpu)});
}

TEST_CASE("without Config::cpus terse's threads may run wherever the process may") {
  const std::vector<int> allowed = affinity_of(0);
  TempDir dir;
  terse::start(test_config(dir.path()));
  for (const char* name : {"terse-io", "terse-write"}) {
    const std::vector<int> tids = threads_named(name);
    REQUIRE(tids.size() == 1);
    CHECK(affinity_of(tids[0]) == allowed);
  }
  terse::stop();
}

TEST_CASE("Config::cpus naming no CPU, or one the process may not run on, is refused at start") {
  TempDir dir;
  auto config = test_config(dir.path());
  config.cpus = {-1};
  CHECK_THAT(start_error(config), Contains("Config::cpus") && Contains("-1"));
  config.cpus = {CPU_SETSIZE};
  CHECK_THAT(start_error(config), Contains("no CPU number"));
  const std::vector<int> allowed = affinity_of(0);
  int outside = 0;
  while (outside < CPU_SETSIZE && std::find(allowed.begin(), allowed.end(), outside) != allowed.end()) ++outside;
  // Only where the OS says which CPUs a process may run on.
  if (outside < CPU_SETSIZE && !kPosixOnly) {
    config.cpus = {allowed.front(), outside};
    CHECK_THAT(start_error(config), Contains("CPU " + std::to_string(outside)) && Contains("may not run on"));
  }
  // The refusals leave nothing behind: a start after them works.
  terse::start(test_config(dir.path()));
  TERSE_INFO("after {}", "refusals");
  terse::stop();
  require_messages(decode_dir(dir.path()), {"after refusals"});
}
