// Writes golden-v1.4.tlog: a file of format 1.4, with rate-limited call sites
// (FORMAT.md §6 flags, the suppressed count before a record's arguments) and
// the suppressed-calls report stop() writes (§7 kind 3); tests/files/golden.cmake
// decodes it with the CLI and compares text and JSON byte for byte with
// golden-v1.4.txt and golden-v1.4.jsonl, which that same CLI printed, and
// checks that it verifies.
//
// Run by hand only, never by ctest:
//   terse_make_golden_v1_4 OUT_DIR      -> OUT_DIR/golden-YYYYMMDD-001.tlog
//   terse cat --utc FILE > golden-v1.4.txt
//   terse cat --utc -o json FILE > golden-v1.4.jsonl
// Regenerating the file on purpose means checking the new text by hand first.
#include <string>

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
  cfg.level = terse::Level::trace;
  cfg.read_environment = false;
  terse::start(cfg);
  TERSE_INFO("plain {}", 1);
  for (int i = 0; i < 25; ++i) {
    // Fixed-size arguments, delta-coded after the count; a string; none.
    TERSE_LOG_EVERY_N(terse::Level::warn, 10, "every tenth {} of {:.1f}", i, i * 0.5);
    TERSE_LOG_FIRST_N(terse::Level::error, 2, "first two {} [{}]", i, std::string(i + 1, 'x'));
    TERSE_LOG_EVERY_N(terse::Level::info, 12, "no arguments");
  }
  terse::flush();
  TERSE_LOG_EVERY_N(terse::Level::debug, 3, "named {who}", fmt::arg("who", "ann"));
  TERSE_INFO("plain {}", 2);
  terse::stop();
  return 0;
}
