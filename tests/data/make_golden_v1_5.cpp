// Writes golden-v1.5.tlog: a file of format 1.5, with flight frames (FORMAT.md
// §7.2): records the flight recorder kept, several threads' merged by time,
// one of a rate-limited site, written before the records that triggered
// them; and scoped contexts (§7.3): nested, of a string, a number and a
// vector, closed out of order, in the normal stream and in flight frames;
// tests/files/golden.cmake decodes it with the CLI and compares text and JSON
// byte for byte with golden-v1.5.txt and golden-v1.5.jsonl, which that same
// CLI printed, and checks that it verifies.
//
// Run by hand only, never by ctest:
//   terse_make_golden_v1_5 OUT_DIR      -> OUT_DIR/golden-YYYYMMDD-001.tlog
//   terse cat --utc FILE > golden-v1.5.txt
//   terse cat --utc -o json FILE > golden-v1.5.jsonl
// Regenerating the file on purpose means checking the new text by hand first.
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>

#include <terse/std.hpp>
#include <terse/terse.hpp>

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: {} OUT_DIR\n", argv[0]);
    return 2;
  }
  terse::Config cfg;
  cfg.directory = argv[1];
  cfg.name = "golden";
  cfg.level = terse::Level::info;
  cfg.flight_level = terse::Level::trace;
  cfg.read_environment = false;
  terse::start(cfg);
  TERSE_INFO("plain {}", 1);
  terse::Context request("request_id", 42);
  for (int i = 0; i < 3; ++i) {
    TERSE_DEBUG("step {} of {:.1f}", i, i * 0.5);  // delta-coded within the flight frame
    std::thread([i] {
      terse::Context worker("worker", std::string(i + 1, 'w'));
      TERSE_TRACE("worker {} says {}", i, std::string(i + 1, 'w'));
    }).join();
  }
  TERSE_LOG_EVERY_N(terse::Level::debug, 2, "limited {}", 7);
  TERSE_ERROR("failed {}", 2);
  TERSE_DEBUG("after the trigger {}", 3);
  {
    auto outer = std::make_unique<terse::Context>("ids", std::vector<int>{1, 2});
    terse::Context inner("request_id", 43);
    TERSE_INFO("plain {}", 4);
    outer.reset();  // closed before the inner one
    TERSE_INFO("plain {}", 5);
  }
  TERSE_CRITICAL("failed again {}", 6);
  terse::stop();
  return 0;
}
