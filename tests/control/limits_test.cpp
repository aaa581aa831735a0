// Rate limits per call site: which calls pass, and the exact count of those
// that did not, in the decoded records, the CLI's text and JSON, and terse
// stats.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <terse/terse.hpp>

#include "file_helpers.hpp"
#include "json_reader.hpp"
#include "test_support.hpp"

using namespace terse;
using namespace terse::test;
using namespace std::chrono_literals;

namespace {

int g_evaluations = 0;
int counted(int value) {
  ++g_evaluations;
  return value;
}

void every_tenth(int count) {
  for (int i = 0; i < count; ++i) TERSE_LOG_EVERY_N(Level::info, 10, "every tenth {}", counted(i));
}

void first_three(int count) {
  for (int i = 0; i < count; ++i) TERSE_LOG_FIRST_N(Level::warn, 3, "first three {}", i);
}

void every_n_at_debug(int count) {
  for (int i = 0; i < count; ++i) TERSE_LOG_EVERY_N(Level::debug, 2, "debug every other {}", i);
}

}  // namespace

TEST_CASE("TERSE_LOG_EVERY_N writes every nth call and the count of the calls in between; stop() the rest") {
  TempDir dir("limits-every-n");
  start(test_config(dir.path()));
  g_evaluations = 0;
  every_tenth(35);
  CHECK(g_evaluations == 4);  // a suppressed call evaluates no argument
  stop();

  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  std::vector<std::pair<std::string, std::uint64_t>> got;
  for (const Line& line : decoded.lines) got.emplace_back(line.message, line.suppressed);
  CHECK(got ==
        std::vector<std::pair<std::string, std::uint64_t>>{{"every tenth 0", 0},
                                                           {"every tenth 10", 9},
                                                           {"every tenth 20", 9},
                                                           {"every tenth 30", 9},
                                                           {"4 calls suppressed after the site's last record", 4}});
  REQUIRE(decoded.lines.size() == 5);
  CHECK(decoded.lines[4].suppressed_report);
  CHECK(decoded.lines[4].file == decoded.lines[0].file);
  CHECK(decoded.lines[4].line == decoded.lines[0].line);
  CHECK(decoded.lines[4].level == static_cast<std::uint8_t>(Level::info));

  // The CLI: text after the message, JSON as a key.
  Run text = run_terse({"cat", "-o", "cat", dir.path()});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out ==
        "every tenth 0\nevery tenth 10 [9 suppressed]\nevery tenth 20 [9 suppressed]\nevery tenth 30 [9 "
        "suppressed]\n4 calls suppressed after the site's last record\n");
  Run json = run_terse({"cat", "-o", "json", dir.path()});
  REQUIRE(json.exit_code == 0);
  std::vector<std::string> lines = split_lines(json.out);
  REQUIRE(lines.size() == 5);
  std::vector<double> counts;
  for (const std::string& line : lines) {
    auto object = parse_json(line);
    REQUIRE(object);
    counts.push_back(object->members.count("suppressed") ? object->members["suppressed"].number : 0);
  }
  CHECK(counts == std::vector<double>{0, 9, 9, 9, 4});
  CHECK(parse_json(lines[4])->members["args"].items.empty());

  Run stats = run_terse({"stats", "--json", dir.path()});
  REQUIRE(stats.exit_code == 0);
  auto totals = parse_json(split_lines(stats.out).at(0));
  REQUIRE(totals);
  CHECK(totals->members["records"].number == 4);
  CHECK(totals->members["suppressed"].number == 31);
  REQUIRE(totals->members["sites"].items.size() == 1);
  CHECK(totals->members["sites"].items[0].members["count"].number == 4);
  CHECK(totals->members["sites"].items[0].members["suppressed"].number == 31);
  Run stats_text = run_terse({"stats", dir.path()});
  CHECK(stats_text.out.find("suppressed 31 calls by rate limits") != std::string::npos);
  CHECK(stats_text.out.find("[31 suppressed]") != std::string::npos);
}

TEST_CASE("TERSE_LOG_FIRST_N writes the first n calls; the rest are counted at stop()") {
  TempDir dir("limits-first-n");
  start(test_config(dir.path()));
  first_three(10);
  first_three(5);
  stop();
  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  std::vector<std::string> messages;
  for (const Line& line : decoded.lines) messages.push_back(line.message);
  CHECK(messages == std::vector<std::string>{"first three 0", "first three 1", "first three 2",
                                             "12 calls suppressed after the site's last record"});
  CHECK(decoded.lines.back().level == static_cast<std::uint8_t>(Level::warn));
  Run text = run_terse({"cat", "--level", "error", dir.path()});  // filtered as its site is
  CHECK(text.out.empty());
}

TEST_CASE("TERSE_LOG_EVERY writes at most one record per interval, and counts every call in between") {
  TempDir dir("limits-every");
  start(test_config(dir.path()));
  // A thread's first call sets up its buffer (milliseconds under
  // ThreadSanitizer on a loaded machine) between the limit's clock read and
  // the record's timestamp, which would shorten the first interval as seen.
  TERSE_INFO("warm-up");
  int calls = 0;
  auto until = std::chrono::steady_clock::now() + 260ms;
  while (std::chrono::steady_clock::now() < until) {
    TERSE_LOG_EVERY(Level::info, 50ms, "every 50 ms {}", calls);
    ++calls;
    std::this_thread::sleep_for(100us);
  }
  stop();
  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  std::uint64_t records = 0, suppressed = 0;
  std::int64_t previous_ns = 0;
  for (const Line& line : decoded.lines) {
    suppressed += line.suppressed;
    if (line.suppressed_report || line.message == "warm-up") continue;
    // The clock's rate is calibrated, not exact. The first record of the
    // loop is the site's first call, which registers the site after the
    // limit's clock read and before its timestamp (2 ms under emulation):
    // its interval to the next may look that much shorter.
    if (records > 1) CHECK(line.unix_ns - previous_ns >= 49'000'000);
    if (records == 1) CHECK(line.unix_ns - previous_ns >= 45'000'000);
    previous_ns = line.unix_ns;
    ++records;
  }
  CHECK(records >= 2);
  CHECK(records <= 6);
  CHECK(records + suppressed == static_cast<std::uint64_t>(calls));
}

TEST_CASE("a rate-limited call below the level is neither written nor counted") {
  TempDir dir("limits-level");
  Config config = test_config(dir.path());
  config.level = Level::info;
  start(config);
  every_n_at_debug(10);
  set_level(Level::debug);
  every_n_at_debug(5);
  stop();
  std::vector<std::pair<std::string, std::uint64_t>> got;
  for (const Line& line : decode_dir(dir.path()).lines) got.emplace_back(line.message, line.suppressed);
  CHECK(got == std::vector<std::pair<std::string, std::uint64_t>>{
                   {"debug every other 0", 0},
                   {"debug every other 2", 1},
                   {"debug every other 4", 1},
               });
}

TEST_CASE("threads sharing a rate-limited site: the counts add up exactly") {
  TempDir dir("limits-threads");
  start(test_config(dir.path()));
  constexpr int kThreads = 4;
  const int per_thread = static_cast<int>(scaled(20'000, 2'000)) / 100 * 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < per_thread; ++i) TERSE_LOG_EVERY_N(Level::info, 100, "shared {}", i);
    });
  }
  for (auto& thread : threads) thread.join();
  stop();
  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  std::uint64_t records = 0, suppressed = 0;
  for (const Line& line : decoded.lines) {
    suppressed += line.suppressed;
    if (!line.suppressed_report) ++records;
  }
  CHECK(records == static_cast<std::uint64_t>(kThreads * per_thread / 100));
  CHECK(records + suppressed == static_cast<std::uint64_t>(kThreads * per_thread));
}
