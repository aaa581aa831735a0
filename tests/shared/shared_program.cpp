// A program linked to the shared libterse, with two shared libraries that
// log (each linked to it too): shared_program DIRECTORY. They must share one
// runtime. Exit codes: 0, 2 usage, 3 libterse.so not loaded, 4 not exactly
// one IO thread.
#include <dirent.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include <terse/terse.hpp>

#include "shared_records.hpp"

namespace {

bool libterse_so_loaded() {
  std::ifstream maps("/proc/self/maps");
  std::string text{std::istreambuf_iterator<char>(maps), std::istreambuf_iterator<char>()};
  return text.find("/libterse.so") != std::string::npos;
}

int threads_named(const std::string& name) {
  int count = 0;
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) return -1;
  while (dirent* task = ::readdir(tasks)) {
    if (task->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + task->d_name + "/comm");
    std::string line;
    if (std::getline(comm, line) && line == name) ++count;
  }
  ::closedir(tasks);
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  if (!libterse_so_loaded()) return 3;
  terse::Config config;
  config.directory = argv[1];
  config.name = "shared";
  config.level = terse::Level::trace;
  terse::start(config);
  std::thread library_a([] { terse::test::library_a_log(terse::test::kSharedRecordsEach); });
  terse::test::library_b_log(terse::test::kSharedRecordsEach);
  for (int i = 0; i < terse::test::kSharedRecordsEach; ++i)
    TERSE_INFO("main record {} of {}", i, terse::test::kSharedRecordsEach);
  library_a.join();
  terse::flush();
  int io_threads = threads_named("terse-io");
  std::fprintf(stderr, "terse-io threads: %d\n", io_threads);
  terse::stop();
  return io_threads == 1 ? 0 : 4;
}
