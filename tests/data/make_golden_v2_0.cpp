// Writes golden-v2.0.tlog: a file of format 2.0, whose records and flight
// frames hold their tick deltas as one column ahead of the rows (FORMAT.md
// §7.4): records of several threads merged by time, deltas that go back,
// argument deltas, a rate-limited site, an interned string, a context and a
// flight frame; tests/files/golden.cmake decodes it with the CLI and
// compares text and JSON byte for byte with golden-v2.0.txt and
// golden-v2.0.jsonl, which that same CLI printed, and checks that it verifies.
//
// Run by hand only, never by ctest:
//   terse_make_golden_v2_0 OUT_DIR      -> OUT_DIR/golden-YYYYMMDD-001.tlog
//   terse cat --utc FILE > golden-v2.0.txt
//   terse cat --utc -o json FILE > golden-v2.0.jsonl
// Regenerating the file on purpose means checking the new text by hand first.
#include <string>
#include <thread>
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
  cfg.level = terse::Level::info;
  cfg.flight_level = terse::Level::debug;
  cfg.read_environment = false;
  terse::start(cfg);
  const std::string long_text(200, 'x');  // interned the second time (FORMAT.md §6 kind 3)
  for (int i = 0; i < 4; ++i) TERSE_INFO("counter {} ratio {:.2f} text {}", i, i * 0.25, long_text);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([t] {
      for (int i = 0; i < 3; ++i) TERSE_WARN("thread {} step {} of {}", t, i, std::vector<int>{t, i});
    });
  for (auto& t : threads) t.join();
  terse::flush();  // a frame of its own
  {
    terse::Context request("request_id", 7);
    for (int i = 0; i < 3; ++i) TERSE_DEBUG("kept for the flight frame {}", i);
    TERSE_LOG_EVERY_N(terse::Level::info, 2, "limited {}", 1);
    TERSE_LOG_EVERY_N(terse::Level::info, 2, "limited {}", 2);
    TERSE_LOG_EVERY_N(terse::Level::info, 2, "limited {}", 3);
    TERSE_ERROR("failed {} with {}", 42, "reason");
  }
  TERSE_CRITICAL("the end {}", 2.5f);
  terse::stop();
  return 0;
}
