#include <cstdio>
#include <vector>

#include <terse/reader.hpp>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  terse::reader::Reader reader({argv[1]});
  terse::reader::Record record;
  while (reader.next(record)) {
    std::vector<terse::reader::Value> args = record.args();
    std::printf("%s %s (%lld)\n", terse::reader::level_name(record.level()), record.message().c_str(),
                args.empty() ? -1LL : static_cast<long long>(args[0].as_int64()));
  }
  return reader.summary().damaged == 0 ? 0 : 1;
}
