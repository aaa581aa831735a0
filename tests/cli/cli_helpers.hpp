// Helpers for the CLI tests: the writer process, and the CLI running as a
// child whose output the test reads through a pipe while it runs.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "file_helpers.hpp"

namespace terse::test {

// Runs tests/cli/live_writer with `args` to completion; its exit code.
int run_writer(const std::vector<std::string>& args);

// A process started with its stdout on a pipe the test reads.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Reads until `done(output so far)` holds or the time is up; true when it held.
  template <typename Done>
  bool read_until(Done done, std::chrono::milliseconds limit) {
    auto until = std::chrono::steady_clock::now() + limit;
    while (!done(out)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !read_some(left)) return done(out);
    }
    return true;
  }
  // Closes the test's end of the pipe, as a pager that quits does.
  void close_output();
  // Waits for the child to exit on its own; its exit code, or -1 on timeout
  // (then it is killed).
  int wait(std::chrono::milliseconds limit);
  // Stops it (SIGTERM) and reaps it.
  void stop();

  std::string out;

 private:
  bool read_some(std::chrono::milliseconds limit);
  pid_t pid_ = -1;
  int fd_ = -1;
};

std::vector<std::string> cli(std::vector<std::string> args);  
}  // namespace terse::test
