#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace terse::test;

TEST_CASE("a logged record decodes to exactly what fmt::format prints") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  int user = 42;
  double ms = 3.14159;
  TERSE_INFO("user {} logged in from {} in {:.3f} ms", user, "10.0.0.1", ms);
  terse::stop();
  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  REQUIRE(decoded.lines.size() == 1);
  CHECK(decoded.lines[0].message == fmt::format("user {} logged in from {} in {:.3f} ms", user, "10.0.0.1", ms));
  CHECK(decoded.lines[0].level == static_cast<std::uint8_t>(terse::Level::info));
}
