#include <cstdio>
#include <string>

#include <terse/reader.hpp>
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

  // The log read back in the same program, through terse::reader.
  terse::reader::Reader reader({argv[1]});
  terse::reader::Record record;
  int records = 0;
  while (reader.next(record)) {
    ++records;
    if (record.message() != "consumer says 42 and 2.50") return 3;
  }
  std::printf("read back %d record\n", records);
  return records == 1 ? 0 : 4;
}
