// Helpers shared by the tests: a scratch directory, starting the logger into
// it, and decoding what it wrote with the real decoder.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <terse/decoder.hpp>
#include <terse/seal.hpp>
#include <terse/terse.hpp>

#include "process.hpp"
#include "temp_dir.hpp"

namespace terse::test {

struct Line {
  std::string message;
  std::uint8_t level = 0;
  std::uint64_t thread = 0;  // OS thread id
  std::string file;
  std::uint32_t line = 0;
  std::int64_t unix_ns = 0;
  std::uint64_t ticks = 0;
  bool dropped = false;
  std::uint64_t dropped_count = 0;
  // A rate-limited site's calls suppressed before this record; with
  // suppressed_report, a report of those after the site's last record.
  std::uint64_t suppressed = 0;
  bool suppressed_report = false;
  bool flight = false;  // written by the flight recorder
  std::string context;  // the terse::Context fields, as {context} prints them
  bool formatted = true;
  // The record's JSON "args": for a site without argument names, the inside
  // of the array as one text ("1,\"a\""); for one with names (an object),
  // each argument's JSON text, in argument order.
  std::vector<std::string> json_args;
};

struct Decoded {
  std::vector<Line> lines;
  std::vector<decoder::Problem> problems;
  std::vector<decoder::Summary> summaries;  // one per file
  std::vector<std::string> files;           // in decode order
  bool intact() const {
    for (const auto& s : summaries)
      if (!s.intact()) return false;
    return problems.empty();
  }
};

// What on_error reported, from whichever of terse's threads.
class ErrorLog {
 public:
  std::function<void(const std::string&)> reporter() {
    return [this](const std::string& message) {
      std::lock_guard lock(mutex_);
      messages_.push_back(message);
    };
  }
  bool any_contains(const std::string& text) {
    std::lock_guard lock(mutex_);
    for (const auto& m : messages_)
      if (m.find(text) != std::string::npos) return true;
    return false;
  }
  std::vector<std::string> messages() {
    std::lock_guard lock(mutex_);
    return messages_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> messages_;
};

// The .tlog files of a directory in the order the writer created them.
std::vector<std::string> log_files(const std::string& directory);

Line to_line(const decoder::Record& record);
Decoded decode_files(const std::vector<std::string>& files);
inline Decoded decode_dir(const std::string& directory) { return decode_files(log_files(directory)); }
// With `keys`, sealed files (FORMAT.md §11) are opened with them.
Decoded decode_bytes(const std::string& bytes, const std::vector<seal::SecretKey>& keys = {});
// The sealed files of `directory` opened with `key`, in the writer's order; `all_bytes` gets
// every byte of them (a test looks there for text that must not be in the clear).
Decoded decode_sealed_dir(const std::string& directory, const seal::SecretKey& key, std::string& all_bytes);
// A new key pair whose files are in `dir` ("key", "key.pub"): the public key file's path, for
// Config::encrypt_to, and the private key that opens what is sealed to it.
std::pair<std::string, seal::SecretKey> sealing_keys(const TempDir& dir);
// The check most end-to-end tests end with: the files are intact and hold
// exactly the messages `expected`, in order.
void require_messages(const Decoded& decoded, const std::vector<std::string>& expected);

// The kernel ids of this process's threads named `name` ("terse-io",
// "terse-write"), for tests that signal one of them.
std::vector<int> threads_named(const std::string& name);

std::string read_file(const std::string& path);

// The calling thread's id as the OS numbers it (what a log's thread column shows), asked
// of the OS directly rather than of terse.
std::uint64_t os_thread_id();
// Sets or removes an environment variable of this process.
void set_environment(const char* name, const char* value);
void unset_environment(const char* name);

// TERSE_TEST_SCALE (default 1.0): how much of their record counts the long
// tests run; CI lowers it under the sanitizers.
double test_scale();
// `count` scaled, never below `at_least`.
std::uint64_t scaled(std::uint64_t count, std::uint64_t at_least = 1);
// Lines without their newlines; a last line without one still counts.
std::vector<std::string> split_lines(const std::string& text);

void write_file(const std::string& path, const std::string& bytes);

// A config writing into `directory` with everything at its defaults but the
// level, which lets every call through, and the environment, which a test
// reads only when it says so (a TERSE_DIR in the shell that runs the tests
// must not move their files).
inline Config test_config(const std::string& directory) {
  Config config;
  config.directory = directory;
  config.name = "test";
  config.level = Level::trace;
  config.read_environment = false;
  return config;
}

// What start() says when it refuses `config`, or "started" (and then it
// stops again); any other exception fails the test on its own.
inline std::string start_error(const Config& config) {
  try {
    start(config);
  } catch (const Error& e) {
    return e.what();
  }
  stop();
  return "started";
}

}  // namespace terse::test
