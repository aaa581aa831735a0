// Long strings that repeat are written once per file (FORMAT.md §6 kind 3,
// §8 interned strings): every record still decodes to its exact text, every
// file alone, and the repeats cost a few bytes each instead of a copy per
// frame.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <terse/schema.hpp>

#include "file_helpers.hpp"

using namespace terse::test;

namespace {

std::string payload(std::size_t size, int seed) {
  std::string text;
  std::uint32_t x = static_cast<std::uint32_t>(seed) * 2654435761u + 1;
  while (text.size() < size) {
    x = x * 1664525u + 1013904223u;
    text += static_cast<char>('!' + (x >> 24) % 90);
  }
  return text;
}

// AddressSanitizer's allocator keeps freed memory in quarantine: what the
// writer lets go does not leave the process's resident size. Nor does
// glibc's keep less without malloc_trim(), which only the Linux platform
// calls (the POSIX one leaves freed memory to the allocator).
#if defined(__SANITIZE_ADDRESS__) || defined(TERSE_POSIX_ONLY) || !defined(__linux__)
constexpr bool kResidentSizeShowsFree = false;
#elif defined(__has_feature)
constexpr bool kResidentSizeShowsFree = !__has_feature(address_sanitizer);
#else
constexpr bool kResidentSizeShowsFree = true;
#endif

std::uint64_t resident_bytes() {
#if defined(__linux__)
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
#else
  return 0;  // only read where kResidentSizeShowsFree
#endif
}

// Service payloads: 64 documents of 4 KiB, each record's with its own
// sequence number, so that none repeats another exactly; each is an earlier
// one patched (FORMAT.md §8, 3.1).
std::vector<std::string> numbered_documents(int count) {
  std::vector<std::string> documents;
  for (int v = 0; v < 64; ++v)
    documents.push_back("{\"seq\":\"0000000000\",\"doc\":\"" + payload(4096, 100 + v) + "\"}");
  std::vector<std::string> texts;
  texts.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    std::string text = documents[static_cast<std::size_t>(i) % documents.size()];
    std::string seq = fmt::format("{:010}", i);
    text.replace(8, seq.size(), seq);
    texts.push_back(std::move(text));
  }
  return texts;
}

// Long texts that have nothing in common: neither interned nor patched, so
// that only a frame of several batches compresses them well.
std::vector<std::string> unrelated_documents(int count) {
  std::vector<std::string> texts;
  texts.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) texts.push_back(payload(4096, 100000 + i));
  return texts;
}

std::size_t directory_bytes(const std::string& directory) {
  std::size_t total = 0;
  for (const auto& file : log_files(directory)) total += read_file(file).size();
  return total;
}

}  // namespace

TEST_CASE("a repeated 4 KiB string costs a few bytes per record, and reads back exactly") {
  TempDir dir;
  const std::string big = payload(4096, 1);
  const std::string other = payload(300, 2);
  std::vector<std::string> expected;
  terse::start(test_config(dir.path()));
  for (int i = 0; i < 3000; ++i) {
    // Repeats, a second repeated text, short strings (never interned) and
    // long unique ones (interned only if they come back).
    TERSE_INFO("{} body {} tag {}", i, big, "short");
    expected.push_back(fmt::format("{} body {} tag {}", i, big, "short"));
    if (i % 3 == 0) {
      std::string unique = payload(200, 1000 + i);
      TERSE_WARN("{} {} {}", other, unique, i);
      expected.push_back(fmt::format("{} {} {}", other, unique, i));
    }
    if (i % 500 == 0) terse::flush();  // many frames, so that texts span them
  }
  terse::stop();
  require_messages(decode_dir(dir.path()), expected);
  // 3000 copies of 4 KiB would be 12 MiB; the 1000 unique 200-byte
  // strings alone are about 200 KiB of incompressible text.
  CHECK(directory_bytes(dir.path()) < 300 * 1024);
}

TEST_CASE("long texts that differ from earlier ones in a counter cost about the bytes that differ") {
  TempDir dir;
  constexpr int kRecords = 20000;
  const std::vector<std::string> texts = numbered_documents(kRecords);
  std::vector<std::string> expected;
  terse::start(test_config(dir.path()));
  for (int i = 0; i < kRecords; ++i) {
    TERSE_INFO("{} at {} payload {} end", i, i * 0.25, texts[static_cast<std::size_t>(i)]);
    expected.push_back(fmt::format("{} at {} payload {} end", i, i * 0.25, texts[static_cast<std::size_t>(i)]));
    if (i % 3 == 0) {
      TERSE_INFO("between {}", i);
      expected.push_back(fmt::format("between {}", i));
    }
    if (i % 5000 == 0) terse::flush();  // texts defined in one frame, patched in later ones
  }
  terse::stop();
  require_messages(decode_dir(dir.path()), expected);
  // 80 MiB of text: the 64 documents once (4 KiB each, incompressible) and
  // a few bytes per record (0.56 MiB in all when this was written). In
  // frames that start zstd afresh every 4 MiB, each frame held each
  // document once: about 4 MiB in all.
  std::size_t bytes = directory_bytes(dir.path());
  INFO(bytes << " bytes on disk");
  CHECK(bytes < 64 * 4096 + kRecords * 24);
}

namespace {

// Logs 400 records of `long_text(i)` and a short unique text (never
// interned) that fills files of `roll_bytes` so that they roll, then reads
// each file alone.
template <typename LongText>
void check_rolled_files_decode_alone(std::size_t roll_bytes, LongText long_text) {
  TempDir dir;
  auto filler = [](int i) { return payload(100, 5000 + i); };
  auto config = test_config(dir.path());
  config.roll_bytes = roll_bytes;
  terse::start(config);
  for (int i = 0; i < 400; ++i) {
    TERSE_INFO("{} {} {}", i, long_text(i), filler(i));
    if (i % 20 == 19) terse::flush();
  }
  terse::stop();
  auto files = log_files(dir.path());
  REQUIRE(files.size() > 3);
  int next = 0;
  for (const auto& file : files) {
    Decoded alone = decode_files({file});
    INFO(file);
    CHECK(alone.intact());
    for (const auto& line : alone.lines) {
      CHECK(line.message == fmt::format("{} {} {}", next, long_text(next), filler(next)));
      ++next;
    }
  }
  CHECK(next == 400);
}

}  // namespace

TEST_CASE("every rolled file decodes alone although its strings were patched") {
  const std::vector<std::string> texts = numbered_documents(400);
  check_rolled_files_decode_alone(3 * 4096, [&](int i) { return texts[static_cast<std::size_t>(i)]; });
}

TEST_CASE("every rolled file decodes alone although its strings were interned") {
  const std::string big = payload(2000, 3);
  check_rolled_files_decode_alone(8192, [&](int) { return big; });
}

TEST_CASE("a lost text entry costs the records that use it, reported, and nothing else") {
  TempDir dir;
  const std::string big = payload(1000, 4);
  auto config = test_config(dir.path());
  config.compression_level = 0;
  terse::start(config);
  TERSE_INFO("first {}", big);
  terse::flush();
  TERSE_INFO("second {}", big);  // interned here: its text entry precedes it
  terse::flush();
  TERSE_INFO("plain {}", 7);
  terse::stop();
  auto files = log_files(dir.path());
  REQUIRE(files.size() == 1);
  std::string bytes = read_file(files[0]);
  // The text entry's frame is the only dictionary frame holding the text.
  auto dictionaries = frames_of_type(bytes, 3);
  std::size_t damaged = 0;
  for (const auto& frame : dictionaries) {
    std::string_view payload_bytes(bytes.data() + frame.payload(), frame.raw);
    if (payload_bytes.find(big) != std::string_view::npos) {
      flip_byte(bytes, frame.payload() + frame.raw - 1);  // payload checksum fails
      ++damaged;
    }
  }
  REQUIRE(damaged == 1);
  Decoded decoded = decode_bytes(bytes);
  std::vector<std::string> messages;
  for (const auto& line : decoded.lines) messages.push_back(line.message);
  CHECK(messages == std::vector<std::string>{"first " + big, "plain 7"});
  CHECK(decoded.problems.size() >= 2);  // the damaged frame, the record it costs
}

TEST_CASE("full batches that interning shrank go out joined in fewer frames, every value intact") {
  TempDir dir;
  const std::string big = payload(4096, 3);
  std::vector<std::string> expected;
  terse::start(test_config(dir.path()));
  // About 80 batches of 1 MiB before interning, logged as fast as they go:
  // the writer joins the ones that follow each other closely. The counters,
  // floats and the rate-limited site check that argument deltas (FORMAT.md
  // §7.1) continue across the joined batches.
  constexpr int kRecords = 20000;
  for (int i = 0; i < kRecords; ++i) {
    TERSE_INFO("{} ratio {} body {}", i, i * 0.5, big);
    expected.push_back(fmt::format("{} ratio {} body {}", i, i * 0.5, big));
    if (i % 700 == 0) {
      TERSE_WARN("now and then {} {}", static_cast<std::uint16_t>(i), -i);
      expected.push_back(fmt::format("now and then {} {}", static_cast<std::uint16_t>(i), -i));
    }
    TERSE_LOG_EVERY_N(terse::Level::info, 1000, "every thousandth {}", i);
    if (i % 1000 == 0) expected.push_back(fmt::format("every thousandth {}", i));
  }
  terse::stop();
  Decoded decoded = decode_dir(dir.path());
  // The site's report of the calls after its last record comes at stop().
  std::erase_if(decoded.lines, [](const Line& line) { return line.suppressed_report; });
  require_messages(decoded, expected);
  CHECK(std::count_if(decoded.lines.begin(), decoded.lines.end(),
                      [](const Line& line) { return line.suppressed == 999; }) == kRecords / 1000 - 1);
  std::size_t frames = 0;
  for (const auto& file : log_files(dir.path()))
    frames +=
        frames_of_type(read_file(file), static_cast<std::uint8_t>(terse::schema::FrameType::records_columnar)).size();
  // One frame per batch, unjoined, makes at least one frame per MiB of the
  // records' strings: fewer frames than that means batches were joined. How
  // many are joined depends on the pace: on a quiet machine about half the
  // frames go (a bound of half failed once while another test loaded both
  // cores, which broke the run of full batches).
  INFO(frames << " records frames");
  CHECK(frames < kRecords * 4096 / (1 << 20));
}

TEST_CASE("long texts that are like no other go out in frames of several MiB, every value intact") {
  TempDir dir;
  constexpr int kRecords = 20000;
  const std::vector<std::string> texts = unrelated_documents(kRecords);
  std::vector<std::string> expected;
  terse::start(test_config(dir.path()));
  // As fast as one thread goes, so that the batches are full. The
  // counter and the float check that argument deltas continue across the
  // joined batches.
  for (int i = 0; i < kRecords; ++i) {
    TERSE_INFO("{} at {} payload {}", i, i * 0.25, texts[static_cast<std::size_t>(i)]);
    if (i % 3 == 0) TERSE_INFO("between {}", i);
  }
  terse::stop();
  for (int i = 0; i < kRecords; ++i) {
    expected.push_back(fmt::format("{} at {} payload {}", i, i * 0.25, texts[static_cast<std::size_t>(i)]));
    if (i % 3 == 0) expected.push_back(fmt::format("between {}", i));
  }
  require_messages(decode_dir(dir.path()), expected);
  std::uint32_t largest = 0;
  for (const auto& file : log_files(dir.path()))
    for (const auto& frame :
         frames_of_type(read_file(file), static_cast<std::uint8_t>(terse::schema::FrameType::records_columnar)))
      largest = std::max(largest, frame.raw);
  // A batch goes to the writer at 1 MiB; a frame well past that holds
  // several batches joined.
  CHECK(largest > 3 * (1u << 20) / 2);
}

TEST_CASE("the memory that frames of long texts took goes back once short records follow") {
  TempDir dir;
  const std::vector<std::string> texts = unrelated_documents(20000);
  terse::start(test_config(dir.path()));
  for (const auto& text : texts) TERSE_INFO("payload {}", text);
  terse::flush();
  const std::uint64_t after_long_texts = resident_bytes();
  // Batches of short records, each written while nothing is held.
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < 50000; ++i) TERSE_INFO("short {} {}", i, i * 0.5);
    terse::flush();
  }
  const std::uint64_t after_short = resident_bytes();
  terse::stop();
  INFO("resident after the long texts " << after_long_texts << " bytes, after the short records " << after_short);
  // The joined payload, the columnar frame being built and zstd's output,
  // some 4 MiB each, beyond what 1 MiB frames need.
  if (kResidentSizeShowsFree) CHECK(after_short + (8u << 20) < after_long_texts);
  std::size_t lines = decode_dir(dir.path()).lines.size();
  CHECK(lines == texts.size() + 10 * 50000);
}
