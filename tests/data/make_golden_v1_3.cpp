// Writes golden-v1.3.tlog: a file of format 1.3, whose frames carry their
// numbers (FORMAT.md §3.1) and whose cut strings their original length
// (FORMAT.md §8); tests/files/golden.cmake decodes it with the CLI and
// compares text and JSON byte for byte with golden-v1.3.txt and
// golden-v1.3.jsonl, which that same CLI printed, and checks that it verifies.
//
// Run by hand only, never by ctest:
//   terse_make_golden_v1_3 OUT_DIR      -> OUT_DIR/golden-YYYYMMDD-001.tlog
//   terse cat --utc FILE > golden-v1.3.txt
//   terse cat --utc -o json FILE > golden-v1.3.jsonl
// Regenerating the file on purpose means checking the new text by hand first.
#include <cstdint>
#include <string>
#include <vector>

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
  cfg.thread_buffer_bytes = 16 << 10;  // a record may take 8 KiB: the 20 KiB string below is cut
  terse::start(cfg);
  TERSE_INFO("first frame {} {}", 1, "one");
  terse::flush();
  TERSE_WARN("cut [{}] after {}", std::string(20000, 'c'), 2);
  TERSE_INFO("two cut {} and {}", std::string(6000, 'a'), std::string(6000, 'b'));
  terse::flush();
  TERSE_INFO("container {} text {}", std::vector<int>(3, 7), "kept");
  TERSE_ERROR("null {} long {}", static_cast<const char*>(nullptr), std::string(300, 'l'));
  terse::flush();
  TERSE_ERROR("last {}", std::uint64_t{1} << 40);
  terse::stop();
  return 0;
}
