// `terse cat` filters, run through the real CLI on files the runtime wrote:
// level ranges, times, threads, call sites and message regexes; and the
// decoder's filter hook that decides them before arguments are read.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

#include "cli_helpers.hpp"
#include "filters.hpp"

using namespace terse::test;

namespace {

std::uint64_t os_tid() { return terse::test::os_thread_id(); }

// Three groups of records 30 ms apart, from two threads, at every level.
struct Fixture {
  TempDir dir;
  std::string path;
  std::uint64_t other_tid = 0;
  int warn_line = 0;
  std::string warn_file;

  Fixture() {
    terse::start(test_config(dir.path()));
    for (int group = 0; group < 3; ++group) {
      TERSE_TRACE("group {} trace", group);
      TERSE_DEBUG("group {} debug", group);
      TERSE_INFO("group {} info user {} Logged in", group, 42);
      warn_line = __LINE__ + 1;
      TERSE_WARN("group {} queue depth {} over limit", group, 1200);
      TERSE_ERROR("group {} error code {}", group, -5);
      TERSE_CRITICAL("group {} critical", group);
      terse::flush();
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
    std::thread other([this] {
      other_tid = os_tid();
      TERSE_INFO("from the other thread {}", 7);
    });
    other.join();
    terse::stop();
    path = log_files(dir.path()).at(0);
  }
};

std::vector<std::string> messages(const std::vector<std::string>& args) {
  std::vector<std::string> all{"cat", "-o", "cat"};
  all.insert(all.end(), args.begin(), args.end());
  auto run = run_terse(all);
  INFO(run.err);
  CHECK(run.exit_code == 0);
  return split_lines(run.out);
}

std::vector<std::string> containing(const std::vector<std::string>& lines, const std::string& text) {
  std::vector<std::string> out;
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("--level LEVEL keeps that level and above; LO..HI keeps a range") {
  Fixture fx;
  auto warn_up = messages({"--level", "warn", fx.path});
  CHECK(warn_up.size() == 9);
  CHECK(containing(warn_up, "info").empty());
  auto range = messages({"--level", "debug..info", fx.path});
  CHECK(range.size() == 7);  // 3 debug, 3 info, the other thread's info
  CHECK(containing(range, "debug").size() == 3);
  CHECK(containing(range, "warn").empty());
  CHECK(messages({"--level", "..debug", fx.path}).size() == 6);
  CHECK(messages({"--level", "error..", fx.path}).size() == 6);
  CHECK(messages({"--level", "WARNING..critical", fx.path}).size() == 9);

  auto backwards = run_terse({"cat", "--level", "error..info", fx.path});
  CHECK(backwards.exit_code == 2);
  CHECK(backwards.err.find("error..info") != std::string::npos);
  auto unknown = run_terse({"cat", "--level", "info..loud", fx.path});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("loud") != std::string::npos);
}

TEST_CASE("--since and --until take absolute times: RFC 3339, local 'YYYY-MM-DD HH:MM[:SS]'") {
  Fixture fx;
  // The exact time of the first record of group 1, in the forms printed.
  auto json = run_terse({"cat", "--json", "--utc", "-g", "group 1 trace", fx.path});
  REQUIRE(json.exit_code == 0);
  std::string rfc3339 = json.out.substr(json.out.find("\"time\":\"") + 8, 30);
  REQUIRE(rfc3339.back() == 'Z');
  auto local =
      split_lines(run_terse({"cat", "-o", "precise", "--format", "{time}", "-g", "group 1 trace", fx.path}).out);
  REQUIRE(local.size() == 1);

  for (const std::string& since : {rfc3339, local[0]}) {
    INFO(since);
    auto from_group1 = messages({"--since", since, fx.path});
    REQUIRE_FALSE(from_group1.empty());
    CHECK(from_group1.front() == "group 1 trace");
    CHECK(containing(from_group1, "group 0").empty());
    CHECK(containing(from_group1, "group 1").size() == 6);
    // --until is inclusive: the boundary record is in both.
    auto to_group1 = messages({"--until", since, fx.path});
    REQUIRE_FALSE(to_group1.empty());
    CHECK(to_group1.back() == "group 1 trace");
    CHECK(containing(to_group1, "group 0").size() == 6);
  }

  // The same instant written with a zone offset.
  std::string offset = rfc3339;
  offset.pop_back();
  offset += "+00:00";
  CHECK(messages({"--since", offset, fx.path}).front() == "group 1 trace");

  // Minute precision: the minute before the first record leaves nothing.
  std::string minute = local[0].substr(0, 16);  // "YYYY-MM-DD HH:MM"
  auto before = messages({"--until", minute, fx.path});
  // Only a record written at exactly HH:MM:00.000000000 could match.
  CHECK(before.size() <= 1);
  CHECK(messages({"--since", minute, fx.path}).size() == 19);

  auto bad = run_terse({"cat", "--since", "next tuesday-ish", fx.path});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--since") != std::string::npos);
  CHECK(bad.err.find("1h ago") != std::string::npos);  // says what would work
}

TEST_CASE("--since and --until take relative times: -10m, 1h ago, 30s, +1h") {
  Fixture fx;
  CHECK(messages({"--since", "-10m", fx.path}).size() == 19);
  CHECK(messages({"--since", "1h ago", fx.path}).size() == 19);
  CHECK(messages({"--since", "30s", fx.path}).size() == 19);
  CHECK(messages({"--since", "today", "--until", "now", fx.path}).size() == 19);
  CHECK(messages({"--until", "1h ago", fx.path}).empty());
  CHECK(messages({"--since", "+1h", fx.path}).empty());
  auto empty = run_terse({"cat", "--since", "now", "--until", "1h ago", fx.path});
  CHECK(empty.exit_code == 2);
}

TEST_CASE("--thread keeps one thread's records by OS thread id") {
  Fixture fx;
  auto other = messages({"--thread", std::to_string(fx.other_tid), fx.path});
  CHECK(other == std::vector<std::string>{"from the other thread 7"});
  auto main_thread = messages({"--thread", std::to_string(os_tid()), fx.path});
  CHECK(main_thread.size() == 18);
  CHECK(messages({"--thread", "1", "--thread", std::to_string(fx.other_tid), fx.path}).size() == 1);
}

TEST_CASE("--site matches a format substring, a file, or file:line") {
  Fixture fx;
  auto by_format = messages({"--site", "queue depth", fx.path});
  CHECK(by_format.size() == 3);
  CHECK(containing(by_format, "queue depth").size() == 3);
  auto by_line = messages({"--site", "filters_test.cpp:" + std::to_string(fx.warn_line), fx.path});
  CHECK(by_line == by_format);
  auto with_dir = messages({"--site", "cli/filters_test.cpp:" + std::to_string(fx.warn_line), fx.path});
  CHECK(with_dir == by_format);
  CHECK(messages({"--site", "filters_test.cpp", fx.path}).size() == 19);
  CHECK(messages({"--site", "ters_test.cpp", fx.path}).empty());  // a file name matches whole
  CHECK(messages({"--site", "filters_test.cpp:1", fx.path}).empty());
  // Repeated: either; with --level: both.
  CHECK(messages({"--site", "queue depth", "--site", "critical", fx.path}).size() == 6);
  CHECK(messages({"--site", "group", "--level", "error", fx.path}).size() == 6);
}

TEST_CASE("-g/--grep matches the formatted message; no capitals means any case") {
  Fixture fx;
  CHECK(messages({"-g", "logged in", fx.path}).size() == 3);
  CHECK(messages({"-g", "Logged in", fx.path}).size() == 3);
  CHECK(messages({"-g", "logged In", fx.path}).empty());
  CHECK(messages({"--grep", "user 42|code -5", fx.path}).size() == 6);  // matches arguments, not the format
  CHECK(messages({"-g", "group [02] crit", "--level", "critical", fx.path}).size() == 2);
  auto bad = run_terse({"cat", "-g", "(unclosed", fx.path});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--grep") != std::string::npos);
}

TEST_CASE("the decoder asks the site filter once per call site, never per record") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  for (int i = 0; i < 1000; ++i) {
    TERSE_INFO("common {}", i);
    if (i % 100 == 0) TERSE_WARN("rare {}", i);
  }
  terse::stop();
  int asked = 0;
  terse::decoder::Filter filter;
  filter.site = [&](const terse::decoder::Site& site) {
    ++asked;
    return site.format.find("rare") != std::string::npos;
  };
  std::vector<std::string> seen;
  terse::decoder::StreamDecoder decoder("test", nullptr);
  decoder.set_filter(filter);
  std::string bytes = read_file(log_files(dir.path()).at(0));
  auto summary = decoder.decode_bytes(bytes, [&](const terse::decoder::Record& r) {
    std::string message;
    terse::decoder::render_message(r, message);
    seen.push_back(message);
  });
  CHECK(asked == 2);
  CHECK(seen.size() == 10);
  CHECK(seen.front() == "rare 0");
  CHECK(summary.records == 1010);
  CHECK(summary.skipped == 1000);
}

TEST_CASE("the pull interface gives the same records as the push one, one at a time") {
  TempDir dir;
  auto sample = write_sample(dir.path(), 5, 50);
  finish_sample(dir.path(), sample);
  terse::decoder::StreamDecoder decoder("test", nullptr);
  decoder.start_bytes(sample.bytes);
  std::vector<std::string> pulled;
  terse::decoder::Record record;
  while (decoder.next(record)) {
    std::string message;
    terse::decoder::render_message(record, message);
    pulled.push_back(message);
  }
  CHECK(pulled == sample.messages);
  CHECK(decoder.summary().intact());
}

TEST_CASE("time parsing: forms journalctl users type") {
  using terse::cli::parse_time;
  const std::int64_t now = 1'795'000'000'000'000'000;  // a fixed "now"
  constexpr std::int64_t s = 1'000'000'000;
  CHECK(parse_time("--since", "-10m", true, now) == now - 600 * s);
  CHECK(parse_time("--since", "10 min ago", true, now) == now - 600 * s);
  CHECK(parse_time("--since", "1h ago", true, now) == now - 3600 * s);
  CHECK(parse_time("--since", "30s", true, now) == now - 30 * s);
  CHECK(parse_time("--since", "+2d", true, now) == now + 2 * 86400 * s);
  CHECK(parse_time("--since", "1.5s ago", true, now) == now - 1500 * 1'000'000);
  CHECK(parse_time("--since", "2026-11-29T14:00:05Z", true, now) == 1'795'960'805 * s);
  CHECK(parse_time("--since", "2026-11-29T16:00:05+02:00", false, now) == 1'795'960'805 * s);
  CHECK(parse_time("--since", "2026-11-29T13:30:05.25-00:30", false, now) == 1'795'960'805 * s + 250'000'000);
  CHECK(parse_time("--since", "2026-11-29 14:00:05", true, now) == 1'795'960'805 * s);
  CHECK(parse_time("--since", "2026-11-29 14:00", true, now) == 1'795'960'800 * s);
  CHECK(parse_time("--since", "2026-11-29", true, now) == 1'795'910'400 * s);
  CHECK_THROWS_AS(parse_time("--since", "2026-13-01", true, now), terse::cli::UsageError);
  CHECK_THROWS_AS(parse_time("--since", "soon", true, now), terse::cli::UsageError);
}
