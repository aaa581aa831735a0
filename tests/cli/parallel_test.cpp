// `terse cat`, `verify` and `stats` decode on several threads by default:
// their output, their problem reports and their exit code are byte for byte
// those of --threads 1, on logs that hold everything that carries from frame
// to frame (dictionary entries first used mid-file, interned strings,
// calibrations, contexts open across frames and files, flight frames), and
// on damaged copies of them. Labelled "concurrency" too, so that CI runs it
// against a ThreadSanitizer build of the CLI.
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <terse/terse.hpp>

#include "file_helpers.hpp"
#include "test_support.hpp"

using namespace terse;
using namespace terse::test;
namespace fs = std::filesystem;

namespace {

// Several threads, each with a context open for all of its records and one
// opened and closed every few hundred; debug records kept by the flight
// recorder until an error writes them; a call site first used late, with a
// long string the writer interns; flushes every 50 records so that files of
// 6 KiB hold several frames each.
void write_log(const std::string& dir) {
  Config config = test_config(dir);
  config.level = Level::info;
  config.flight_level = Level::debug;
  config.roll_bytes = 6 * 1024;
  start(config);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([t] {
      Context request("request_id", 100 + t);
      std::string long_text(160, static_cast<char>('a' + t));
      for (int i = 0; i < 1500; ++i) {
        TERSE_INFO("thread {} record {} value {:.3f}", t, i, i * 0.25);
        TERSE_DEBUG("thread {} detail {}", t, i);
        if (i % 300 == 0) {
          Context phase("phase", fmt::format("p{}", i / 300));
          TERSE_WARN("phase {} begins on thread {}", i / 300, t);
          if (i % 600 == 0) TERSE_ERROR("thread {} trigger at {}", t, i);
        }
        if (i >= 1000) TERSE_INFO("late site on thread {}: {}", t, long_text);
        if (i % 50 == 0) flush();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  stop();
}

// A copy of the log's files with damage in three places: the first file
// loses a records frame's payload (a bad checksum), the second its first
// dictionary frame (its records are reported, once per site, in whichever
// frame each site's first record is), and the last file its final bytes (a
// torn tail).
void damaged_copy(const std::string& from, const std::string& to) {
  auto files = log_files(from);
  REQUIRE(files.size() >= 3);
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::string bytes = read_file(files[i]);
    if (i == 0) {
      auto records = frames_of_type(bytes, kRecordsFrame);
      REQUIRE(records.size() >= 3);
      flip_byte(bytes, records[records.size() / 2].payload() + 5);
    } else if (i == 1) {
      auto dictionaries = frames_of_type(bytes, 3);
      REQUIRE(!dictionaries.empty());
      flip_byte(bytes, dictionaries.front().payload() + 3);
    } else if (i + 1 == files.size()) {
      auto frames = frames_of(bytes);
      bytes.resize(bytes.size() - frames.back().stored / 2 - 1);
    }
    write_file(to + "/" + fs::path(files[i]).filename().string(), bytes);
  }
}

// Runs `args` with --threads 1 and with several, and checks that nothing tells them apart.
void same_on_any_threads(std::vector<std::string> args, bool expect_output = true) {
  std::string path = args.back();
  args.pop_back();
  auto with = [&](const char* threads) {
    std::vector<std::string> a = args;
    a.insert(a.begin() + 1, {"--threads", threads});
    a.push_back(path);
    return run_terse(a);
  };
  Run one = with("1");
  if (expect_output) REQUIRE(!one.out.empty());
  for (const char* threads : {"2", "3", "8"}) {
    INFO("terse " << fmt::format("{}", fmt::join(args, " ")) << " --threads " << threads);
    Run many = with(threads);
    CHECK(many.exit_code == one.exit_code);
    CHECK(many.err == one.err);
    CHECK(many.out.size() == one.out.size());
    CHECK(many.out == one.out);
  }
}

const std::string& sample_log() {
  static TempDir dir("parallel");
  static bool written = [] {
    write_log(dir.path());
    return true;
  }();
  (void)written;
  return dir.path();
}

}  // namespace

TEST_CASE("the sample log spans files with mid-file dictionaries, contexts and flight frames") {
  auto files = log_files(sample_log());
  REQUIRE(files.size() >= 3);
  std::size_t dictionaries = 0, flights = 0, records = 0;
  for (const auto& file : files) {
    std::string bytes = read_file(file);
    dictionaries += frames_of_type(bytes, 3).size();
    flights += frames_of_type(bytes, kFlightFrame).size();
    records += frames_of_type(bytes, kRecordsFrame).size();
  }
  CHECK(records >= 4 * files.size());
  CHECK(dictionaries > files.size());
  CHECK(flights > 0);
}

TEST_CASE("cat prints the same bytes on one thread and on several") {
  const std::string& dir = sample_log();
  same_on_any_threads({"cat", dir});
  same_on_any_threads({"cat", "-o", "json", dir});
  same_on_any_threads({"cat", "-o", "short", "--utc", dir});
  same_on_any_threads({"cat", "--format", "{level:<8} {thread} {context} {message}", dir});
}

TEST_CASE("filters select the same records on one thread and on several") {
  const std::string& dir = sample_log();
  same_on_any_threads({"cat", "--level", "warn", dir});
  same_on_any_threads({"cat", "-o", "json", "--grep", "record 1[0-9]+ ", dir});
  same_on_any_threads({"cat", "--context", "request_id=101", dir});
  same_on_any_threads({"cat", "--context", "phase=p2", "-o", "json", dir});
  same_on_any_threads({"cat", "--site", "late site", dir});
  same_on_any_threads({"cat", "--since", "2000-01-01", "--until", "now", dir});
  same_on_any_threads({"cat", "--until", "2000-01-01", dir}, false);
}

TEST_CASE("verify and stats say the same on one thread and on several") {
  const std::string& dir = sample_log();
  same_on_any_threads({"verify", dir});
  same_on_any_threads({"stats", dir});
  same_on_any_threads({"stats", "--json", dir});
}

TEST_CASE("damage is reported in the same place on one thread and on several") {
  TempDir damaged("parallel-damaged");
  damaged_copy(sample_log(), damaged.path());
  Run one = run_terse({"cat", "--threads", "1", damaged.path()});
  REQUIRE(one.exit_code == 1);
  CHECK(one.err.find("cannot be decoded") != std::string::npos);
  CHECK(one.err.find("checksum") != std::string::npos);
  same_on_any_threads({"cat", damaged.path()});
  same_on_any_threads({"cat", "-o", "json", "--level", "info", damaged.path()});
  same_on_any_threads({"verify", damaged.path()});
  same_on_any_threads({"stats", damaged.path()});
}

TEST_CASE("files concatenated on standard input decode the same on one thread and on several") {
  TempDir damaged("parallel-stdin");
  damaged_copy(sample_log(), damaged.path());
  std::string stream;
  for (const auto& file : log_files(damaged.path())) stream += read_file(file);
  std::string path = damaged.path() + "/stream.bin";
  write_file(path, stream);
  Run one = run_terse({"cat", "--threads", "1", "-"}, path);
  REQUIRE(!one.out.empty());
  for (const char* threads : {"2", "5"}) {
    Run many = run_terse({"cat", "--threads", threads, "-"}, path);
    CHECK(many.exit_code == one.exit_code);
    CHECK(many.err == one.err);
    CHECK(many.out == one.out);
  }
}
