// FORMAT.md §7.1: arguments are stored as differences from the same site's
// previous record in the frame. These tests pin what that must not break.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <terse/portable_libc.hpp>

#include "test_support.hpp"

using namespace terse::test;

namespace {

constexpr int kPerThread = 3000;

// Two threads log the same site with values that move differently, so the
// delta chain of the site interleaves both threads' records.
std::vector<std::uint64_t> log_two_threads(const std::string& directory) {
  terse::start(test_config(directory));
  std::vector<std::uint64_t> tids(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([t, &tids] {
      tids[static_cast<std::size_t>(t)] = os_thread_id();
      for (int i = 0; i < kPerThread; ++i) {
        std::int64_t wobble = (t == 0 ? 1 : -7) * static_cast<std::int64_t>(i) * i;
        float quarter = static_cast<float>(i) * 0.25f;
        TERSE_INFO("thread {} value {} {} {:.3f} {}", t, i, wobble, quarter, static_cast<std::uint8_t>(i * 31));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  terse::stop();
  return tids;
}

std::string expected(int t, int i) {
  std::int64_t wobble = (t == 0 ? 1 : -7) * static_cast<std::int64_t>(i) * i;
  float quarter = static_cast<float>(i) * 0.25f;
  return fmt::format("thread {} value {} {} {:.3f} {}", t, i, wobble, quarter, static_cast<std::uint8_t>(i * 31));
}

}  // namespace

TEST_CASE("values of one site logged from two threads all come back exactly") {
  TempDir dir;
  log_two_threads(dir.path());
  Decoded decoded = decode_dir(dir.path());
  CHECK(decoded.intact());
  REQUIRE(decoded.lines.size() == 2 * kPerThread);
  std::vector<int> next(2, 0);
  for (const auto& line : decoded.lines) {
    int t = line.message.rfind("thread 0 ", 0) == 0 ? 0 : 1;
    CHECK(line.message == expected(t, next[t]));
    ++next[t];
  }
}

TEST_CASE("a thread filter still walks the skipped records' deltas") {
  TempDir dir;
  auto tids = log_two_threads(dir.path());
  for (int keep = 0; keep < 2; ++keep) {
    terse::decoder::Filter filter;
    filter.thread = [&](const terse::decoder::Thread& t) { return t.os_tid == tids[static_cast<std::size_t>(keep)]; };
    std::vector<std::string> messages;
    for (const auto& file : log_files(dir.path())) {
      terse::decoder::StreamDecoder decoder(file, {});
      decoder.set_filter(filter);
      int fd = ::open(file.c_str(), O_RDONLY | terse::kOpenFlags);
      REQUIRE(fd >= 0);
      decoder.decode_fd(fd, [&](const terse::decoder::Record& r) {
        std::string message;
        terse::decoder::render_message(r, message);
        messages.push_back(message);
      });
      ::close(fd);
    }
    REQUIRE(messages.size() == kPerThread);
    for (int i = 0; i < kPerThread; ++i) CHECK(messages[static_cast<std::size_t>(i)] == expected(keep, i));
  }
}

TEST_CASE("counting arguments cost almost nothing on disk") {
  TempDir dir;
  auto config = test_config(dir.path());
  terse::start(config);
  for (int i = 0; i < 100000; ++i) TERSE_INFO("request {} status {} path {}", i, 200, "/api/v1/items");
  terse::stop();
  std::uint64_t bytes = 0;
  for (const auto& file : log_files(dir.path())) bytes += std::filesystem::file_size(file);
  // Timestamps keep some entropy; the arguments must not add much to it.
  CHECK(static_cast<double>(bytes) / 100000 < 2.0);
}
