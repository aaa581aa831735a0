// Rolling: files named NAME-YYYYMMDD-NNN.tlog, each decodable alone, that
// together hold every record once and in order.
#include <map>
#include <regex>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "file_helpers.hpp"

using namespace terse::test;

namespace {

struct Named {
  std::string date;
  unsigned sequence = 0;
};

Named parse_name(const std::string& path) {
  static const std::regex pattern(R"(test-(\d{8})-(\d{3})\.tlog)");
  std::string name = std::filesystem::path(path).filename().string();
  std::smatch m;
  INFO("file name " << name);
  REQUIRE(std::regex_match(name, m, pattern));
  return Named{m[1].str(), static_cast<unsigned>(std::stoul(m[2].str()))};
}

// Logs `count` uniquely numbered records with a roll size far below what
// they need, flushing now and then so the writer sees many batches.
std::vector<std::string> log_rolling(const std::string& directory, int first, int count) {
  auto config = test_config(directory);
  config.roll_bytes = 4096;
  config.compression_level = 0;  // uncompressed: the bytes add up fast and predictably
  terse::start(config);
  std::vector<std::string> expected;
  std::string padding(40, '.');
  for (int i = first; i < first + count; ++i) {
    TERSE_INFO("rolling record {} {} {:>8.2f}", i, padding, i * 1.25);
    expected.push_back(fmt::format("rolling record {} {} {:>8.2f}", i, padding, i * 1.25));
    if (i % 50 == 49) terse::flush();
  }
  terse::stop();
  return expected;
}

// Checks the names: one date (or consecutive runs per date should the test
// straddle midnight), numbers counting up from `first_sequence` without gaps.
void check_names(const std::vector<std::string>& files, unsigned first_sequence) {
  std::map<std::string, std::vector<unsigned>> by_date;
  for (const auto& f : files) {
    Named n = parse_name(f);
    by_date[n.date].push_back(n.sequence);
  }
  bool first_date = true;
  for (const auto& [date, sequences] : by_date) {
    unsigned expect = first_date ? first_sequence : 1;
    first_date = false;
    for (unsigned s : sequences) {
      INFO("date " << date);
      CHECK(s == expect);
      ++expect;
    }
  }
}

}  // namespace

TEST_CASE("a small roll size produces several files named NAME-YYYYMMDD-NNN.tlog numbered from 001") {
  TempDir dir;
  log_rolling(dir.path(), 0, 3000);
  auto files = log_files(dir.path());
  REQUIRE(files.size() >= 3);
  check_names(files, 1);
  // Nothing but .tlog files is left behind.
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  CHECK(entries == files.size());
}

TEST_CASE("every rolled file decodes on its own, intact") {
  TempDir dir;
  auto expected = log_rolling(dir.path(), 0, 3000);
  auto files = log_files(dir.path());
  REQUIRE(files.size() >= 3);
  std::size_t next = 0;
  for (const auto& file : files) {
    INFO("file " << file);
    // A fresh decoder per file: nothing may leak over from the file before.
    Decoded decoded = decode_files({file});
    INFO(describe(decoded));
    CHECK(decoded.intact());
    for (const auto& line : decoded.lines) {
      REQUIRE(next < expected.size());
      CHECK(line.formatted);
      CHECK(line.message == expected[next]);
      CHECK(line.file.find("rolling_test.cpp") != std::string::npos);
      ++next;
    }
  }
  CHECK(next == expected.size());
}

TEST_CASE("rolled files together hold every record exactly once, in order") {
  TempDir dir;
  auto expected = log_rolling(dir.path(), 0, 3000);
  Decoded decoded = decode_dir(dir.path());
  INFO(describe(decoded));
  CHECK(decoded.intact());
  CHECK(messages_of(decoded) == expected);
  // Times never go backwards across a roll.
  for (std::size_t i = 1; i < decoded.lines.size(); ++i)
    CHECK(decoded.lines[i - 1].unix_ns <= decoded.lines[i].unix_ns);
}

TEST_CASE("each rolled file starts with its own preamble and stays near the roll size") {
  TempDir dir;
  log_rolling(dir.path(), 0, 3000);
  auto files = log_files(dir.path());
  REQUIRE(files.size() >= 3);
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::string bytes = read_file(files[i]);
    INFO("file " << files[i] << " of " << bytes.size() << " bytes");
    auto frames = frames_of(bytes);  // one preamble, then whole frames only
    CHECK_FALSE(frames.empty());
    // The writer rolls before a batch once the file is past the roll size,
    // so a file overshoots by at most one batch (50 records here).
    if (i + 1 < files.size()) {
      CHECK(bytes.size() >= 4096);
      CHECK(bytes.size() < 4096 + 16 * 1024);
    }
  }
}

TEST_CASE("a restart in the same directory continues the file sequence and overwrites nothing") {
  TempDir dir;
  auto first_expected = log_rolling(dir.path(), 0, 1500);
  auto first_files = log_files(dir.path());
  REQUIRE(first_files.size() >= 2);
  std::map<std::string, std::string> before;
  for (const auto& f : first_files) before[f] = read_file(f);

  auto second_expected = log_rolling(dir.path(), 1500, 1500);
  auto all_files = log_files(dir.path());
  REQUIRE(all_files.size() > first_files.size());
  for (const auto& [path, bytes] : before) {
    INFO("earlier file " << path);
    CHECK(read_file(path) == bytes);
  }
  // The new files continue after the highest earlier number.
  std::vector<std::string> earlier(all_files.begin(), all_files.begin() + static_cast<long>(first_files.size()));
  CHECK(earlier == first_files);
  check_names(all_files, 1);

  std::vector<std::string> expected = first_expected;
  expected.insert(expected.end(), second_expected.begin(), second_expected.end());
  Decoded decoded = decode_dir(dir.path());
  INFO(describe(decoded));
  CHECK(decoded.intact());
  CHECK(messages_of(decoded) == expected);
}
