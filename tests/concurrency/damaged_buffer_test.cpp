// A thread's buffer holding a record no call writes: what a log call in a
// signal handler that interrupts another on the same thread could leave, or
// a stray write of the program's. The IO thread must report it and go on,
// never spin on a site id it cannot find or trust a size it cannot check.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace terse::test;

namespace {

// Ends the process when the test does not finish in time: an IO thread
// that spins makes flush() wait forever.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit)
      : thread_([this, limit] {
          std::unique_lock lock(mutex_);
          if (!done_cv_.wait_for(lock, limit, [this] { return done_; })) {
            std::fprintf(stderr, "the IO thread never got past the damaged record\n");
            std::_Exit(1);
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

// Writes one record into the calling thread's buffer the way a call does,
// with the header given: the shape two calls writing one reservation leave.
void forge_record(std::uint32_t site_id, std::uint32_t args_size, std::size_t bytes_written) {
  using namespace terse::detail;
  ThreadBuffer* buffer = tls_buffer;
  REQUIRE(buffer != nullptr);
  REQUIRE(buffer->begin_call());
  std::uint64_t stamp = ticks();
  char* out = buffer->try_reserve(ring_stride(bytes_written));
  REQUIRE(out != nullptr);
  RingRecordHeader header{site_id, args_size, stamp};
  std::memcpy(out, &header, sizeof header);
  std::memset(out + sizeof header, 0xAB, bytes_written);
  buffer->commit(stamp, buffer->write_pos);
}

void check_damage_reported_and_logging_goes_on(std::uint32_t site_id, std::uint32_t args_size) {
  TempDir dir;
  ErrorLog errors;
  terse::Config config = test_config(dir.path());
  config.on_error = errors.reporter();
  Watchdog watchdog(std::chrono::seconds(60));
  terse::start(config);
  TERSE_INFO("before the damage {}", 1);
  terse::flush();
  forge_record(site_id, args_size, 8);
  terse::flush();
  std::uint64_t given_up = terse::stats().buffer_bytes_given_up;
  TERSE_INFO("after the damage {}", 2);
  terse::stop();

  CHECK(given_up > 0);
  CHECK(errors.any_contains("are given up"));
  Decoded decoded = decode_dir(dir.path());
  CHECK(decoded.intact());
  std::vector<std::string> messages;
  bool reported = false;
  for (const auto& line : decoded.lines) {
    if (line.file == "terse") {
      reported = reported || line.message.find("are given up") != std::string::npos;
    } else {
      messages.push_back(line.message);
    }
  }
  CHECK(reported);
  CHECK(messages == std::vector<std::string>{"before the damage 1", "after the damage 2"});
}

}  // namespace

TEST_CASE("a record whose site id no call site has is reported, and the thread logs on", "[concurrency]") {
  check_damage_reported_and_logging_goes_on(0x7FFFFFF0u, 8);
}

TEST_CASE("a record whose size runs past what its thread committed is reported, and the thread logs on",
          "[concurrency]") {
  check_damage_reported_and_logging_goes_on(1, 1u << 30);
}
