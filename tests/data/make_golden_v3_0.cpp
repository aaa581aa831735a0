// Writes golden-v3.0.tlog: a sealed file (FORMAT.md §11), sealed to
// golden-v3.0.key.pub, whose private half golden-v3.0.key is committed
// beside it (a key made for this file and published with it, never one that
// guards anything). It holds what golden-v2.0.tlog holds: records of several
// threads, argument deltas, a rate-limited site, an interned string, a
// context and a flight frame, then the end frame. tests/files/golden.cmake
// decodes it with the CLI and the key and compares text and JSON byte for
// byte with golden-v3.0.txt and golden-v3.0.jsonl, and checks that it
// verifies; the Python reader decrypts it from the spec alone.
//
// Run by hand only, never by ctest:
//   terse_make_golden_v3_0 OUT_DIR golden-v3.0.key.pub  -> OUT_DIR/golden-YYYYMMDD-001.tlog
//   terse cat --utc --key golden-v3.0.key FILE > golden-v3.0.txt
//   terse cat --utc --key golden-v3.0.key -o json FILE > golden-v3.0.jsonl
// Regenerating the file on purpose means checking the new text by hand first.
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <terse/std.hpp>
#include <terse/terse.hpp>

int main(int argc, char** argv) {
  if (argc != 3) {
    fmt::print(stderr, "usage: {} OUT_DIR PUBLIC_KEY\n", argv[0]);
    return 2;
  }
  terse::Config cfg;
  cfg.directory = argv[1];
  cfg.name = "golden";
  cfg.level = terse::Level::info;
  cfg.flight_level = terse::Level::debug;
  cfg.read_environment = false;
  cfg.encrypt_to = argv[2];
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
