// A thread's own thread_local objects that log from their destructors: one
// made before the thread's first log call is destroyed after terse's state
// for the thread (made by that call), as C++ destroys them in reverse.
// A connection pool or a per-thread cache that says goodbye is that shape.
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace terse::test;

namespace {

struct Connection {
  int thread = 0;
  int closes = 0;
  ~Connection() {
    for (int i = 0; i < closes; ++i) TERSE_WARN("thread {} closes connection {}", thread, i);
  }
};
thread_local std::optional<Connection> tls_connection;

std::size_t threads_with_buffers() { return terse::stats().threads.size(); }

}  // namespace

TEST_CASE("a thread_local whose destructor logs after the thread's buffer is gone is written, and its memory freed") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  constexpr int kThreads = 40;
  constexpr int kCloses = 3;
  std::size_t before = threads_with_buffers();
  std::vector<std::string> expected;
  for (int t = 0; t < kThreads; ++t) {
    // One at a time: the record of a thread that has ended goes on a
    // buffer of its own, which must be freed with the thread.
    std::thread([t] {
      tls_connection.emplace();  // before the first call: destroyed after terse's thread state
      tls_connection->thread = t;
      tls_connection->closes = kCloses;
      TERSE_INFO("thread {} opens its connection", t);
    }).join();
    expected.push_back(fmt::format("thread {} opens its connection", t));
    for (int i = 0; i < kCloses; ++i) expected.push_back(fmt::format("thread {} closes connection {}", t, i));
  }
  terse::flush();
  // The IO thread frees an ended thread's buffers once it has drained them.
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (threads_with_buffers() > before && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(threads_with_buffers() <= before);
  terse::stop();

  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  std::vector<std::string> messages;
  for (const Line& line : decoded.lines) {
    CHECK_FALSE(line.dropped);
    messages.push_back(line.message);
  }
  // One thread after the other: the files hold them in that order.
  CHECK(messages == expected);
}
