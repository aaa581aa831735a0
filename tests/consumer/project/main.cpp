#include <terse/terse.hpp>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  terse::Config config;
  config.directory = argv[1];
  config.name = "consumer";
  terse::start(config);
  TERSE_INFO("consumer says {} and {:.2f}", 42, 2.5);
  TERSE_DEBUG("below the level: {}", 1);
  terse::stop();
  return 0;
}
