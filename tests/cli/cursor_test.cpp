// Cursors for pipelines: --show-cursor puts a resume position in each JSON
// record, --after-cursor continues right after it, across rolled files,
// while following, and past files that retention removed.
#include <filesystem>
#include <regex>
#include <thread>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "cli_helpers.hpp"
#include "cursor.hpp"

using namespace terse::test;
using namespace std::chrono_literals;

namespace {

std::string field(const std::string& json_line, const char* key) {
  std::regex pattern(std::string("\"") + key + "\":\"([^\"]*)\"");
  std::smatch m;
  REQUIRE(std::regex_search(json_line, m, pattern));
  return m[1];
}

std::vector<std::string> messages(const std::vector<std::string>& json_lines) {
  std::vector<std::string> out;
  for (const auto& line : json_lines) out.push_back(field(line, "message"));
  return out;
}

std::vector<std::string> expected(const std::string& tag, int bursts, int per) {
  std::vector<std::string> lines;
  for (int b = 0; b < bursts; ++b)
    for (int r = 0; r < per; ++r) lines.push_back(fmt::format("{} burst {} record {}", tag, b, r));
  return lines;
}

// Joins the writer however the test ends.
struct Writer {
  int rc = -1;
  std::thread thread;
  explicit Writer(std::vector<std::string> args) : thread([this, args] { rc = run_writer(args); }) {}
  ~Writer() {
    if (thread.joinable()) thread.join();
  }
};

// Complete lines only: a shipper that stops mid-line has not taken that one.
std::vector<std::string> complete_lines(const std::string& out) {
  return split_lines(out.substr(0, out.rfind('\n') + 1));
}

}  // namespace

TEST_CASE("--after-cursor continues right after any record, and after the last one prints nothing") {
  TempDir dir;
  REQUIRE(run_writer({dir.path(), "app", "bursts", "6", "40", "0", "t"}) == 0);
  REQUIRE(log_files(dir.path()).size() > 1);
  auto all = run_terse({"cat", "-o", "json", "--show-cursor", dir.path()});
  REQUIRE(all.exit_code == 0);
  auto lines = split_lines(all.out);
  REQUIRE(messages(lines) == expected("t", 6, 40));
  // Every record: first and last of frames and of files included.
  for (std::size_t k = 0; k < lines.size(); ++k) {
    std::string cursor = field(lines[k], "cursor");
    INFO("after record " << k);
    auto rest = run_terse({"cat", "-o", "json", "--show-cursor", "--after-cursor", cursor, dir.path()});
    REQUIRE(rest.exit_code == 0);
    CHECK(split_lines(rest.out) == std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(k) + 1, lines.end()));
  }
}

TEST_CASE("a shipper that stops and resumes with --after-cursor while the writer rolls gets every record once") {
  TempDir dir;
  Writer writer({dir.path(), "app", "bursts", "24", "50", "30", "ship"});
  const std::size_t taken = 130;
  std::string cursor;
  std::vector<std::string> first;
  {
    Child ship(cli({"cat", "-f", "-o", "json", "--show-cursor", dir.path()}));
    bool got = ship.read_until([&](const std::string& out) { return complete_lines(out).size() >= taken; }, 20s);
    ship.stop();
    REQUIRE(got);
    auto lines = complete_lines(ship.out);
    lines.resize(taken);
    first = messages(lines);
    cursor = field(lines.back(), "cursor");
  }
  // The writer is still logging and rolling while the second run starts.
  Child ship(cli({"cat", "-f", "-o", "json", "--show-cursor", "--after-cursor", cursor, dir.path()}));
  bool done = ship.read_until(
      [](const std::string& out) { return out.find("\"message\":\"ship burst 23 record 49\"") != std::string::npos; },
      30s);
  writer.thread.join();
  ship.stop();
  REQUIRE(writer.rc == 0);
  REQUIRE(done);
  REQUIRE(log_files(dir.path()).size() > 3);
  auto union_of_runs = first;
  auto second = messages(complete_lines(ship.out));
  union_of_runs.insert(union_of_runs.end(), second.begin(), second.end());
  CHECK(union_of_runs == expected("ship", 24, 50));
}

TEST_CASE("a cursor whose file retention removed resumes at the oldest later file and says so") {
  TempDir dir;
  REQUIRE(run_writer({dir.path(), "app", "bursts", "16", "40", "10", "r"}) == 0);
  auto files = log_files(dir.path());
  REQUIRE(files.size() >= 3);
  auto first_file = split_lines(run_terse({"cat", "-o", "json", "--show-cursor", files[0]}).out);
  REQUIRE(first_file.size() > 2);
  std::string cursor = field(first_file[1], "cursor");
  std::filesystem::remove(files[0]);
  std::filesystem::remove(files[1]);
  std::vector<std::string> later(files.begin() + 2, files.end());
  std::vector<std::string> args{"cat", "-o", "cat"};
  args.insert(args.end(), later.begin(), later.end());
  auto want = run_terse(args).out;
  REQUIRE(!want.empty());

  auto resumed = run_terse({"cat", "-o", "cat", "--after-cursor", cursor, dir.path()});
  CHECK(resumed.exit_code == 0);
  CHECK(resumed.out == want);
  CHECK(resumed.err.find("is gone") != std::string::npos);
  CHECK(resumed.err.find(std::filesystem::path(files[2]).filename().string()) != std::string::npos);

  // Following from such a cursor picks up files the writer adds later.
  Child follow(cli({"cat", "-f", "-o", "cat", "--after-cursor", cursor, dir.path()}));
  REQUIRE(follow.read_until([&](const std::string& out) { return out == want; }, 20s));
  REQUIRE(run_writer({dir.path(), "app", "bursts", "1", "3", "0", "more"}) == 0);
  REQUIRE(follow.read_until([&](const std::string& out) { return out.size() > want.size() + 40; }, 20s));
  follow.stop();
  CHECK(follow.out == want + "more burst 0 record 0\nmore burst 0 record 1\nmore burst 0 record 2\n");
}

TEST_CASE("bad cursors and cursor options that do not fit are refused with a clear message") {
  TempDir dir;
  REQUIRE(run_writer({dir.path(), "app", "bursts", "2", "10", "0", "b"}) == 0);
  auto lines = split_lines(run_terse({"cat", "-o", "json", "--show-cursor", dir.path()}).out);
  REQUIRE(lines.size() == 20);
  std::string good = field(lines[3], "cursor");

  for (std::string bad : {std::string("garbage"), std::string(""), good + "0-1", "2" + good.substr(1),
                          good.substr(0, good.rfind('-')) + "-xyz"}) {
    INFO(bad);
    auto run = run_terse({"cat", "--after-cursor", bad, dir.path()});
    CHECK(run.exit_code == 2);
    CHECK(run.out.empty());
    CHECK(run.err.find("not a cursor") != std::string::npos);
  }
  // A well-formed cursor for a log that is not there.
  std::string other_name = "1-";
  for (unsigned char c : std::string("db-20261129-001.tlog")) other_name += fmt::format("{:02x}", c);
  auto other = run_terse({"cat", "--after-cursor", other_name + "-fb-0-1", dir.path()});
  CHECK(other.exit_code == 2);
  CHECK(other.err.find("not of the log 'app'") != std::string::npos);
  // The right file, but not the record the cursor remembers.
  std::string wrong_ticks = good.substr(0, good.rfind('-')) + "-1";
  auto mismatch = run_terse({"cat", "--after-cursor", wrong_ticks, dir.path()});
  CHECK(mismatch.exit_code == 1);
  CHECK(mismatch.out.empty());
  CHECK(mismatch.err.find("does not fit") != std::string::npos);

  CHECK(run_terse({"cat", "--show-cursor", dir.path()}).exit_code == 2);
  CHECK(run_terse({"cat", "-n", "3", "--after-cursor", good, dir.path()}).exit_code == 2);
  TempDir other_dir;
  REQUIRE(run_writer({other_dir.path(), "db", "bursts", "1", "1", "0", "x"}) == 0);
  auto two = run_terse({"cat", "-o", "json", "--show-cursor", dir.path(), other_dir.path()});
  CHECK(two.exit_code == 2);
  CHECK(two.err.find("one log") != std::string::npos);
}

TEST_CASE("a cursor reads back as what was encoded, and nothing else reads as one") {
  using terse::cli::Cursor;
  Cursor c{"app-20261129-1000.tlog", UINT64_MAX, UINT32_MAX, 0x0123456789abcdefULL};
  auto text = terse::cli::encode_cursor(c);
  CHECK(text.find_first_not_of("0123456789abcdef-") == std::string::npos);
  auto back = terse::cli::decode_cursor(text);
  REQUIRE(back);
  CHECK(back->file == c.file);
  CHECK(back->frame_offset == c.frame_offset);
  CHECK(back->frame_index == c.frame_index);
  CHECK(back->ticks == c.ticks);
  // A path, a name the runtime would not choose, an index past 32 bits.
  CHECK(!terse::cli::decode_cursor(terse::cli::encode_cursor(Cursor{"../app-20261129-001.tlog", 1, 1, 1})));
  CHECK(!terse::cli::decode_cursor(terse::cli::encode_cursor(Cursor{"notes.txt", 1, 1, 1})));
  CHECK(!terse::cli::decode_cursor(text.substr(0, text.find('-', 2)) + "-1-100000000-1"));
  CHECK(!terse::cli::decode_cursor(text.substr(0, text.find('-', 2)) + "-1-1-10000000000000000"));
  CHECK(!terse::cli::decode_cursor(text + "-"));
}
