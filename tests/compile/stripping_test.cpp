// Built with TERSE_MIN_LEVEL=3 (warn): debug and info calls are removed at
// compile time. check_stripped.cmake proves their strings are not in this
// binary; this test proves at run time that they evaluate nothing and log
// nothing, while warn and above still work.
#include <catch2/catch.hpp>

#include <string>

#include "test_support.hpp"

#if TERSE_MIN_LEVEL != 3
#error "this test must be built with TERSE_MIN_LEVEL=3"
#endif

using namespace terse::test;

namespace {

int g_evaluations = 0;
int counted(int value) {
  ++g_evaluations;
  return value;
}

}  // namespace

TEST_CASE("calls below TERSE_MIN_LEVEL are removed, the rest are kept") {
  TempDir dir;
  terse::start(test_config(dir.path()));  // runtime level trace: only the compile-time floor filters
  g_evaluations = 0;
  // Each marker appears once in the source; the ctest reading the binary
  // looks for exactly these texts.
  TERSE_TRACE("terse-strip-marker-trace-format {}", counted(1));
  TERSE_DEBUG("terse-strip-marker-debug-format {} {}", counted(2), "terse-strip-marker-debug-argument");
  TERSE_INFO("terse-strip-marker-info-format {}", counted(3));
  TERSE_INFO("{}", "terse-strip-marker-info-argument");
  CHECK(g_evaluations == 0);
  TERSE_WARN("terse-keep-marker-warn-format {} {}", counted(4), "terse-keep-marker-warn-argument");
  TERSE_ERROR("terse-keep-marker-error-format {}", counted(5));
  CHECK(g_evaluations == 2);
  terse::stop();

  const Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  REQUIRE(decoded.lines.size() == 2);
  CHECK(decoded.lines[0].message == "terse-keep-marker-warn-format 4 terse-keep-marker-warn-argument");
  CHECK(decoded.lines[1].message == "terse-keep-marker-error-format 5");
}
