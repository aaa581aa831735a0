// Helpers for the console and callback tests: a pipe standing in for the
// terminal, read on a thread of its own, and the environment set for the
// length of a test.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

namespace terse::test {

// The console's descriptor: a pipe whose other end a thread reads into
// `text` (or nobody reads, for a stalled console).
class ConsolePipe {
 public:
  explicit ConsolePipe(bool read = true) {
    REQUIRE(::pipe2(fds_, O_CLOEXEC) == 0);
    if (read) start_reading();
  }
  ~ConsolePipe() {
    close_write_end();
    if (reader_.joinable()) reader_.join();
    if (fds_[0] >= 0) ::close(fds_[0]);
  }
  int write_fd() const { return fds_[1]; }
  void start_reading() {
    reader_ = std::thread([this] {
      char chunk[1 << 16];
      ssize_t n;
      while ((n = ::read(fds_[0], chunk, sizeof chunk)) > 0) text_.append(chunk, static_cast<std::size_t>(n));
    });
  }
  // After terse::stop(): everything the console wrote.
  const std::string& finish() {
    close_write_end();
    if (reader_.joinable()) reader_.join();
    return text_;
  }
  void close_read_end() {
    ::close(fds_[0]);
    fds_[0] = -1;
  }

 private:
  void close_write_end() {
    if (fds_[1] >= 0) ::close(fds_[1]);
    fds_[1] = -1;
  }
  int fds_[2] = {-1, -1};
  std::thread reader_;
  std::string text_;
};

// Sets (or, with nullopt, unsets) an environment variable until it goes.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace terse::test
