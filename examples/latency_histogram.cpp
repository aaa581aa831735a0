// A tool over terse logs with terse::reader: a histogram, per call site, of
// one numeric argument of its records (a latency, a size, a queue depth).
//
//   terse_latency_histogram LOGS [--arg NAME] [--site TEXT]
//
// LOGS is a .tlog file or a directory of them (every writer's files, merged
// by time). The argument is the one named NAME ({NAME} in the format
// string), or else each record's first numeric argument; sites without one
// are left out. Buckets are powers of two: [0, 1), [1, 2), [2, 4), [4, 8)...
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <tuple>

#include <terse/reader.hpp>

namespace {

struct Histogram {
  std::string format;
  std::uint64_t count = 0;
  double min = 0, max = 0, sum = 0;
  std::map<int, std::uint64_t> buckets;  // by bucket number: 0 is [0, 1), k is [2^(k-1), 2^k)

  void add(double value) {
    min = count == 0 ? value : std::fmin(min, value);
    max = count == 0 ? value : std::fmax(max, value);
    sum += value;
    ++count;
    int bucket = 0;
    while (bucket < 64 && std::ldexp(1.0, bucket) <= value) ++bucket;
    ++buckets[bucket];
  }
};

const terse::reader::Value* numeric_arg(const std::vector<terse::reader::Value>& args, const std::string& name) {
  for (const auto& arg : args)
    if (arg.is_number() && (name.empty() || arg.name == name)) return &arg;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path, arg_name;
  terse::reader::Options options;
  for (int k = 1; k < argc; ++k) {
    if (std::strcmp(argv[k], "--arg") == 0 && k + 1 < argc) {
      arg_name = argv[++k];
    } else if (std::strcmp(argv[k], "--site") == 0 && k + 1 < argc) {
      options.filter.sites.emplace_back(argv[++k]);
    } else if (path.empty()) {
      path = argv[k];
    } else {
      path.clear();
      break;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "usage: %s LOGS [--arg NAME] [--site TEXT]\n", argv[0]);
    return 2;
  }
  std::uint64_t problems = 0;
  options.on_problem = [&problems](const terse::reader::Problem& p) {
    if (p.torn_tail) return;  // where a writer stopped: the end of its data
    ++problems;
    std::fprintf(stderr, "%s: offset %llu: %s\n", p.source.c_str(), static_cast<unsigned long long>(p.offset),
                 p.what.c_str());
  };

  // Sites by file and line, so the report comes out in the same order every time.
  std::map<std::tuple<std::string, std::uint32_t, std::string>, Histogram> sites;
  try {
    terse::reader::Reader reader({path}, options);
    terse::reader::Record record;
    while (reader.next(record)) {
      if (record.kind() != terse::reader::RecordKind::log) continue;
      std::vector<terse::reader::Value> args = record.args();
      const terse::reader::Value* value = numeric_arg(args, arg_name);
      if (!value) continue;
      Histogram& h = sites[{std::string(record.file()), record.line(), std::string(record.format())}];
      h.add(value->as_double());
    }
  } catch (const terse::reader::OpenError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }

  for (const auto& [site, h] : sites) {
    std::printf("%s:%u %s\n", std::get<0>(site).c_str(), std::get<1>(site), std::get<2>(site).c_str());
    std::printf("  count %llu min %g max %g mean %.3f\n", static_cast<unsigned long long>(h.count), h.min, h.max,
                h.sum / static_cast<double>(h.count));
    for (const auto& [bucket, n] : h.buckets) {
      double low = bucket == 0 ? 0 : std::ldexp(1.0, bucket - 1), high = std::ldexp(1.0, bucket);
      std::printf("  [%g, %g) %llu\n", low, high, static_cast<unsigned long long>(n));
    }
  }
  return problems == 0 ? 0 : 1;
}
