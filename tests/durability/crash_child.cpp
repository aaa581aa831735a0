// A program that logs from two threads and then dies without flush() or stop(), for the
// crash tests that start it as a process of its own (where fork() is not there to make one):
//
//   terse_crash_child DIR HOW
//       HOW: fault (a write through a null pointer), abort, terminate.
//
// It ends as such a program ends without terse; what it logged must be in DIR all the same.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include <terse/terse.hpp>

#include "crash_child.hpp"

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: terse_crash_child DIR fault|abort|terminate [PUBLIC-KEY-TO-SEAL-TO]\n");
    return 2;
  }
  const std::string how = argv[2];
  if (how != "fault" && how != "abort" && how != "terminate") {
    std::fprintf(stderr, "terse_crash_child: no such way to end: %s\n", argv[2]);
    return 2;
  }
  terse::Config config;
  config.directory = argv[1];
  config.name = "crash";
  config.level = terse::Level::trace;
  config.read_environment = false;
  if (argc == 4) config.encrypt_to = argv[3];
  terse::start(config);
  std::vector<std::thread> threads;
  for (int t = 0; t < terse::test::kCrashThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < terse::test::kCrashRecordsPerThread; ++i) TERSE_INFO("thread {} record {}", t, i);
    });
  }
  for (auto& thread : threads) thread.join();
  TERSE_CRITICAL("about to end by {}", how);
  if (how == "fault") {
    volatile int* null = nullptr;
    *null = 1;
  } else if (how == "abort") {
    std::abort();
  } else {
    std::terminate();
  }
  return 99;  // not reached
}
