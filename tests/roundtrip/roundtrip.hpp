// Round-trip harness: every call logged through TERSE_EXPECT is also
// formatted with fmt::format at the same place, with the same format string
// and the same argument expressions, so the expectation cannot drift from
// what was logged.
#pragma once

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "test_support.hpp"

namespace terse::test {

class RoundTrip {
 public:
  RoundTrip() { terse::start(test_config(dir_.path())); }
  // `adjust` edits the test config before start, e.g. to shrink the buffers.
  template <typename Adjust>
  explicit RoundTrip(Adjust adjust) {
    Config config = test_config(dir_.path());
    adjust(config);
    terse::start(config);
  }
  ~RoundTrip() { terse::stop(); }  // also when a REQUIRE left the test early
  RoundTrip(const RoundTrip&) = delete;
  RoundTrip& operator=(const RoundTrip&) = delete;

  const TempDir& dir() const { return dir_; }

  // Stops the logger, decodes the directory and compares message by message.
  Decoded check() {
    terse::stop();
    Decoded decoded = decode_dir(dir_.path());
    CHECK(decoded.intact());
    REQUIRE(decoded.lines.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      INFO("record " << i);
      CHECK(decoded.lines[i].formatted);
      CHECK(decoded.lines[i].message == expected[i]);
    }
    return decoded;
  }

 private:
  TempDir dir_;  // first: it must exist before the constructor starts the logger

 public:
  std::vector<std::string> expected;
};

}  // namespace terse::test

// Logs one call and records what fmt::format makes of the same call.
#define TERSE_EXPECT(rt, ...)                          \
  do {                                                 \
    TERSE_INFO(__VA_ARGS__);                           \
    (rt).expected.push_back(fmt::format(__VA_ARGS__)); \
  } while (false)
