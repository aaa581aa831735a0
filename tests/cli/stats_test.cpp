// `terse stats` on files the runtime wrote: counts per level and call site,
// bytes and compression, time span, drops, the per-minute sparkline, JSON.
#include <catch2/catch.hpp>

#include "cli_helpers.hpp"

using namespace terse::test;

namespace {

struct Fixture {
  TempDir dir;
  int hot_line = 0;
  Fixture() {
    terse::start(test_config(dir.path()));
    for (int i = 0; i < 300; ++i) {
      hot_line = __LINE__ + 1;
      TERSE_DEBUG("hot path {} of {}", i, 300);
      if (i % 10 == 0) TERSE_WARN("every tenth {}", i);
    }
    TERSE_ERROR("one error {}", "here");
    terse::stop();
  }
};

}  // namespace

TEST_CASE("stats counts records per level and per call site, and shows bytes, span and rate") {
  Fixture fx;
  auto run = run_terse({"stats", fx.dir.path()});
  INFO(run.out);
  CHECK(run.exit_code == 0);
  CHECK(run.err.empty());
  CHECK(run.out.find("records    331") != std::string::npos);
  CHECK(run.out.find("compression") != std::string::npos);
  CHECK(run.out.find("time span") != std::string::npos);
  CHECK(run.out.find("dropped    0 records") != std::string::npos);
  CHECK(run.out.find("  debug             300\n") != std::string::npos);
  CHECK(run.out.find("  warn               30\n") != std::string::npos);
  CHECK(run.out.find("  error               1\n") != std::string::npos);
  // Sites, most records first, with file:line and format.
  std::size_t hot = run.out.find("stats_test.cpp:" + std::to_string(fx.hot_line) + "  hot path {} of {}");
  std::size_t tenth = run.out.find("every tenth {}");
  CHECK(hot != std::string::npos);
  CHECK(tenth != std::string::npos);
  CHECK(hot < tenth);
  // One sparkline row per level that has records, drawn with block characters.
  CHECK(run.out.find("records per minute") != std::string::npos);
  CHECK(run.out.find("█") != std::string::npos);
}

TEST_CASE("stats --json gives the same figures to machines") {
  Fixture fx;
  auto run = run_terse({"stats", "--json", fx.dir.path()});
  CHECK(run.exit_code == 0);
  auto lines = split_lines(run.out);
  REQUIRE(lines.size() == 1);
  const std::string& j = lines[0];
  CHECK(j.find("\"records\":331") != std::string::npos);
  CHECK(j.find("\"levels\":{\"trace\":0,\"debug\":300,\"info\":0,\"warn\":30,\"error\":1,\"critical\":0}") !=
        std::string::npos);
  CHECK(j.find("\"format\":\"hot path {} of {}\",\"count\":300") != std::string::npos);
  CHECK(j.find("\"compression_ratio\":") != std::string::npos);
  CHECK(j.find("\"dropped\":0") != std::string::npos);
  CHECK(j.find("\"per_minute\":{\"start\":") != std::string::npos);
  CHECK(j.find("\"files\":1,") != std::string::npos);
}

TEST_CASE("stats reports damage with the file and exits 1") {
  Fixture fx;
  auto file = log_files(fx.dir.path()).at(0);
  std::string bytes = read_file(file);
  auto records = frames_of_type(bytes, kRecordsFrame);
  REQUIRE_FALSE(records.empty());
  flip_byte(bytes, records[0].payload() + 1);
  write_file(file, bytes);
  auto run = run_terse({"stats", file});
  CHECK(run.exit_code == 1);
  CHECK(run.err.find(file + ": offset " + std::to_string(records[0].offset)) != std::string::npos);
}

TEST_CASE("stats says how the files store private values") {
  TempDir dir;
  auto config = test_config(dir.path());
  config.private_values = terse::PrivateValues::hash;
  config.private_key = "stats test key";
  terse::start(config);
  TERSE_INFO("token {}", terse::secret(std::string("hunter2")));
  terse::stop();
  auto text = run_terse({"stats", dir.path()});
  INFO(text.out);
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("private    values stored as: hash\n") != std::string::npos);
  auto json = run_terse({"stats", "--json", dir.path()});
  CHECK(json.out.find("\"private_values\":[\"hash\"]") != std::string::npos);
}

TEST_CASE("stats of files concatenated on a pipe counts each file's sites as the files themselves") {
  // Two writers' files, one after the other on standard input: the second
  // file's sites may sit where the first file's were in memory, and must
  // still be counted as their own.
  TempDir first, second, both;
  terse::start(test_config(first.path()));
  for (int i = 0; i < 40; ++i) TERSE_INFO("first writer {}", i);
  terse::stop();
  terse::start(test_config(second.path()));
  for (int i = 0; i < 25; ++i) TERSE_WARN("second writer {}", i);
  TERSE_ERROR("second writer's error {}", 1);
  terse::stop();
  std::string piped = both / "piped.tlog";
  write_file(piped, read_file(log_files(first.path()).at(0)) + read_file(log_files(second.path()).at(0)));

  for (const char* threads : {"1", "3"}) {
    auto run = run_terse({"stats", "--json", "--threads", threads, "-"}, piped);
    INFO(run.err);
    CHECK(run.exit_code == 0);
    CHECK(run.out.find("\"records\":66") != std::string::npos);
    CHECK(run.out.find("\"format\":\"first writer {}\",\"count\":40") != std::string::npos);
    CHECK(run.out.find("\"format\":\"second writer {}\",\"count\":25") != std::string::npos);
    CHECK(run.out.find("\"format\":\"second writer's error {}\",\"count\":1") != std::string::npos);
  }
}
