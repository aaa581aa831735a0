// Config::fastest_compression_level: a writer that falls behind compresses
// at faster levels and steps back once it has caught up; every record
// decodes as logged whatever level its frame was compressed at.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace terse::test;

namespace {

// Long strings that never repeat, so interning cannot take them out of the
// writer's way: each is as compressible as text, and none is a copy.
std::vector<std::string> distinct_texts(std::size_t count, std::size_t length) {
  std::mt19937 random(7);
  const std::string words[] = {"order ", "shipped ", "warehouse ", "customer ", "pending ", "42 ", "refund ", "eu "};
  std::vector<std::string> texts(count);
  for (auto& text : texts) {
    while (text.size() < length) text += words[random() % 8];
    text.resize(length);
  }
  return texts;
}

// Starts the logger at `level` .. `fastest`, logs `count` distinct 4000-byte
// texts flat out and waits for them all to be written; returns the texts.
std::vector<std::string> log_distinct_texts(const TempDir& dir, int level, int fastest, std::size_t count) {
  auto config = test_config(dir.path());
  config.compression_level = level;
  config.fastest_compression_level = fastest;
  terse::start(config);
  std::vector<std::string> texts = distinct_texts(count, 4000);
  for (const auto& text : texts) TERSE_INFO("payload {}", text);
  terse::flush();
  return texts;
}

// Records that each end a batch of their own, with the writer idle: the
// writer is caught up at each.
void log_caught_up_batches(int count) {
  for (int k = 0; k < count; ++k) {
    TERSE_INFO("quiet {}", k);
    terse::flush();
  }
}

}  // namespace

TEST_CASE("a writer behind compresses faster, steps back once caught up, and every record decodes") {
  TempDir dir;
  // zstd's level 19 compresses a few MB/s: the writer falls behind at once.
  const std::vector<std::string> texts = log_distinct_texts(dir, 19, -5, static_cast<std::size_t>(scaled(4096, 2048)));
  std::uint64_t behind = terse::stats().batches_compressed_faster;
  INFO(behind << " batches compressed faster than level 19");
  CHECK(behind > 0);
  // A step up every 4 batches caught up, from -5 to 19 in four steps.
  log_caught_up_batches(20);
  std::uint64_t settled = terse::stats().batches_compressed_faster;
  log_caught_up_batches(5);
  CHECK(terse::stats().batches_compressed_faster == settled);
  terse::stop();

  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  REQUIRE(decoded.lines.size() == texts.size() + 25);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    INFO("record " << i);
    REQUIRE(decoded.lines[i].message == "payload " + texts[i]);
  }
}

TEST_CASE("with fastest_compression_level at compression_level the level never changes") {
  TempDir dir;
  const std::vector<std::string> texts = log_distinct_texts(dir, 9, 9, static_cast<std::size_t>(scaled(2048, 1024)));
  CHECK(terse::stats().batches_compressed_faster == 0);
  terse::stop();
  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  CHECK(decoded.lines.size() == texts.size());
}

TEST_CASE("uncompressed stays uncompressed, and a fastest level out of range is refused at start") {
  TempDir dir;
  log_distinct_texts(dir, 0, -5, static_cast<std::size_t>(scaled(1024, 512)));
  CHECK(terse::stats().batches_compressed_faster == 0);
  terse::stop();

  for (int bad : {0, -8, 23}) {
    auto wrong = test_config(dir.path());
    wrong.fastest_compression_level = bad;
    INFO("fastest_compression_level " << bad);
    CHECK_THROWS_WITH(terse::start(wrong), Catch::Contains("fastest_compression_level"));
  }
}

TEST_CASE("a faster level that is no faster on the records at hand is left again, so their bytes stay few") {
  TempDir dir;
  auto config = test_config(dir.path());
  config.compression_level = 1;
  config.fastest_compression_level = -5;
  terse::start(config);
  // Rows of delta-coded counters: zstd's levels -3 and -5 take longer on
  // them than level 1 and write four to six times the bytes (level 1 about
  // 0.8 a record, -1 1.1, -3 3.0, -5 4.7). Logged flat out, the writer
  // falls behind now and then all the same; stepping down regardless made
  // 2.3 to 3.5 bytes a record of it.
  const int count = static_cast<int>(scaled(6'000'000, 1'000'000));
  for (int i = 0; i < count; ++i)
    TERSE_INFO("request {} took {} us status {} path {}", i, i * 0.25, 200, "/api/v1/orders");
  terse::flush();
  terse::Stats stats = terse::stats();
  double bytes_a_record = static_cast<double>(stats.bytes_out) / count;
  INFO(stats.batches_compressed_faster << " batches compressed faster, " << bytes_a_record << " bytes a record");
  CHECK(bytes_a_record < 1.6);
  terse::stop();
  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  REQUIRE(decoded.lines.size() == static_cast<std::size_t>(count));
  CHECK(decoded.lines.back().message ==
        fmt::format("request {} took {} us status {} path {}", count - 1, (count - 1) * 0.25, 200, "/api/v1/orders"));
}
