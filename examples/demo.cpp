// A small service that logs from several threads, then stops. Its warnings
// and errors show on the console as it runs (in colour on a terminal); all
// of it is in the files: read them back with `terse cat demo-logs/`.
#include <terse/terse.hpp>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  terse::Config config;
  config.directory = argc > 1 ? argv[1] : "demo-logs";
  config.name = "demo";
  config.level = terse::Level::debug;
  config.console = terse::Console::automatic;
  config.console_level = terse::Level::warn;
  terse::start(config);

  TERSE_INFO("demo starting with {} worker threads", 4);
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([w] {
      std::string path = "/api/v1/orders/" + std::to_string(w);
      for (int i = 0; i < 1000; ++i) {
        double took_us = 12.5 + i * 0.25;
        TERSE_DEBUG("worker {} request {} took {} us status {} path {}", w, i, took_us, 200, path);
        if (i % 100 == 0) TERSE_INFO("worker {} progress {:>5.1f}% ({:#x})", w, static_cast<float>(i) / 10.0f, i);
        if (i % 250 == 0) TERSE_WARN("worker {}: queue depth {} over limit {}", w, i * 3, 500);
      }
      TERSE_INFO("worker {} done, last char {:?}, flag {}", w, static_cast<char>('a' + w), w % 2 == 0);
    });
  }
  for (auto& t : workers) t.join();
  TERSE_ERROR("sample error: {:<12}|{:^9}|{:>8.3e}", "left", "mid", 31415.9265);
  TERSE_CRITICAL("pointer {} and {:p}, unsigned {} and {}", static_cast<const void*>(&config), "literal",
                 std::uint64_t{18446744073709551615ull}, std::int8_t{-7});
  terse::stop();
  return 0;
}
