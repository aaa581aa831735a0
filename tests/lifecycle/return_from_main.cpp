// Logs from several threads and returns from main without terse::stop().
#include <terse/terse.hpp>

#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  terse::Config config;
  config.directory = argv[1];
  config.name = "exit";
  config.level = terse::Level::trace;
  terse::start(config);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 5000; ++i) TERSE_INFO("thread {} record {}", t, i);
    });
  }
  for (auto& thread : threads) thread.join();
  TERSE_WARN("last words of {}", "main");
  return 3;
}
