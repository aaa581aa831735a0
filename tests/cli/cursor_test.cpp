// Cursors for pipelines: --show-cursor puts a resume position in each JSON
// record, --after-cursor continues right after it, across rolled files,
// while following, past files that retention removed, and for several
// inputs merged into one stream.
#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <catch2/catch.hpp>

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

// A shipper's first run: `cat -f -o json --show-cursor` on `inputs`, stopped
// once it has printed `taken` complete lines. Their messages, and the cursor
// of the last of them.
struct FirstRun {
  std::vector<std::string> messages;
  std::string cursor;
};

FirstRun ship_until(const std::vector<std::string>& inputs, std::size_t taken) {
  std::vector<std::string> args{"cat", "-f", "-o", "json", "--show-cursor"};
  args.insert(args.end(), inputs.begin(), inputs.end());
  Process ship(cli(args), Process::Output::pipe);
  bool got = ship.read_until([&](const std::string& out) { return complete_lines(out).size() >= taken; }, 20s);
  ship.stop();
  REQUIRE(got);
  auto lines = complete_lines(ship.out);
  lines.resize(taken);
  return FirstRun{messages(lines), field(lines.back(), "cursor")};
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
    CHECK(split_lines(rest.out) ==
          std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(k) + 1, lines.end()));
  }
}

TEST_CASE("a shipper that stops and resumes with --after-cursor while the writer rolls gets every record once") {
  TempDir dir;
  Writer writer({dir.path(), "app", "bursts", "24", "50", "30", "ship"});
  auto [first, cursor] = ship_until({dir.path()}, 130);
  // The writer is still logging and rolling while the second run starts.
  Process ship(cli({"cat", "-f", "-o", "json", "--show-cursor", "--after-cursor", cursor, dir.path()}),
               Process::Output::pipe);
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
  Process follow(cli({"cat", "-f", "-o", "cat", "--after-cursor", cursor, dir.path()}), Process::Output::pipe);
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
  REQUIRE(good.rfind("3.", 0) == 0);
  std::string changed = good;
  changed[good.size() / 2] = changed[good.size() / 2] == 'A' ? 'B' : 'A';

  struct Bad {
    std::string cursor;
    const char* why;
  };
  for (const Bad& bad :
       {Bad{"garbage", "does not start with a cursor version"}, Bad{"", "empty"},
        Bad{"4" + good.substr(1), "does not start with a cursor version"}, Bad{changed, "checksum does not match"},
        Bad{good.substr(0, good.size() - 4), "cut short"}, Bad{good + "AAAA", "checksum does not match"},
        Bad{good.substr(0, 5) + "!" + good.substr(6), "'!'"}, Bad{"2.", "too short"}, Bad{"1-zz-1-1-1", "version 1"}}) {
    INFO(bad.cursor);
    auto run = run_terse({"cat", "--after-cursor", bad.cursor, dir.path()});
    CHECK(run.exit_code == 2);
    CHECK(run.out.empty());
    CHECK(run.err.find("not a cursor") != std::string::npos);
    CHECK(run.err.find(bad.why) != std::string::npos);
  }
  // A well-formed cursor for a log that is not there, in either version.
  std::string other_v1 = terse::input::encode_cursor_v1({"db-20261129-001.tlog", 0xfb, 0, 1});
  std::string other_v2 = terse::input::encode_cursor({{12345u, {"db-20261129-001.tlog", 0xfb, 0, 1}, std::nullopt}});
  for (const auto& other : {other_v1, other_v2}) {
    auto run = run_terse({"cat", "--after-cursor", other, dir.path()});
    CHECK(run.exit_code == 2);
    CHECK(run.err.find("not of the log 'db' nor of any input given (here: 'app' in") != std::string::npos);
  }
  // The right file, but not the record the cursor remembers.
  auto wrong = terse::input::parse_cursor(good);
  REQUIRE(wrong.why().empty());
  wrong->at(0).at.ticks = 1;
  auto mismatch = run_terse({"cat", "--after-cursor", terse::input::encode_cursor(*wrong), dir.path()});
  CHECK(mismatch.exit_code == 1);
  CHECK(mismatch.out.empty());
  CHECK(mismatch.err.find("does not fit") != std::string::npos);

  CHECK(run_terse({"cat", "--show-cursor", dir.path()}).exit_code == 2);
  CHECK(run_terse({"cat", "-n", "3", "--after-cursor", good, dir.path()}).exit_code == 2);
  // Standard input has no place to come back to.
  auto from_stdin = run_terse({"cat", "-o", "json", "--show-cursor", "-"}, log_files(dir.path()).at(0));
  CHECK(from_stdin.exit_code == 2);
  CHECK(from_stdin.err.find("standard input") != std::string::npos);
}

TEST_CASE("a cursor of version 1, as terse printed for one log before merged cursors, still resumes") {
  TempDir dir;
  REQUIRE(run_writer({dir.path(), "app", "bursts", "6", "40", "0", "t"}) == 0);
  auto lines = split_lines(run_terse({"cat", "-o", "json", "--show-cursor", dir.path()}).out);
  REQUIRE(lines.size() == 240);
  for (std::size_t k : {0u, 39u, 100u, 239u}) {
    auto parsed = terse::input::parse_cursor(field(lines[k], "cursor"));
    REQUIRE(parsed->size() == 1);
    auto old = run_terse({"cat", "-o", "json", "--show-cursor", "--after-cursor",
                          terse::input::encode_cursor_v1((*parsed)[0].at), dir.path()});
    INFO(old.err);
    CHECK(old.exit_code == 0);
    CHECK(split_lines(old.out) ==
          std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(k) + 1, lines.end()));
  }
}

TEST_CASE("a cursor reads back as what was encoded, and nothing else reads as one") {
  using terse::input::Cursor;
  using terse::input::InputPosition;
  std::vector<InputPosition> inputs{
      {0xdeadbeefu, {"app-20261129-1000.tlog", UINT64_MAX, UINT32_MAX, 0x0123456789abcdefULL}, 0xfedcba9876543210ULL},
      {7u, {"copied by hand.tlog", 0, 0, 0}, std::nullopt}};
  auto text = terse::input::encode_cursor(inputs);
  CHECK(text.rfind("3.", 0) == 0);
  CHECK(text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", 2) ==
        std::string::npos);
  auto back = terse::input::parse_cursor(text);
  REQUIRE(back.why().empty());
  REQUIRE(back->size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK((*back)[i].dir_hash == inputs[i].dir_hash);
    CHECK((*back)[i].at.file == inputs[i].at.file);
    CHECK((*back)[i].at.frame_offset == inputs[i].at.frame_offset);
    CHECK((*back)[i].at.frame_index == inputs[i].at.frame_index);
    CHECK((*back)[i].at.ticks == inputs[i].at.ticks);
    CHECK((*back)[i].writer == inputs[i].writer);
  }
  // Version 2, as terse printed before writers were told apart: no writer.
  auto v2 = terse::input::parse_cursor(terse::input::encode_cursor_v2(inputs));
  REQUIRE(v2.why().empty());
  REQUIRE(v2->size() == 2);
  CHECK((*v2)[0].at.file == inputs[0].at.file);
  CHECK((*v2)[0].dir_hash == inputs[0].dir_hash);
  CHECK(!(*v2)[0].writer);
  // Every cut and every one-character change is refused, not read as another place.
  for (std::size_t n = 0; n < text.size(); ++n) CHECK(!terse::input::parse_cursor(text.substr(0, n)).why().empty());
  for (std::size_t i = 2; i < text.size(); ++i) {
    std::string changed = text;
    changed[i] = changed[i] == 'x' ? 'y' : 'x';
    CHECK(!terse::input::parse_cursor(changed).why().empty());
  }
  // A path in place of a file name, and no input at all.
  CHECK(terse::input::parse_cursor(
            terse::input::encode_cursor({{1u, {"../app-20261129-001.tlog", 1, 1, 1}, std::nullopt}}))
            .why()
            .find("path") != std::string::npos);
  CHECK(terse::input::parse_cursor(terse::input::encode_cursor({})).why().find("count") != std::string::npos);

  // Version 1.
  Cursor c{"app-20261129-1000.tlog", UINT64_MAX, UINT32_MAX, 0x0123456789abcdefULL};
  auto v1 = terse::input::encode_cursor_v1(c);
  CHECK(v1.find_first_not_of("0123456789abcdef-") == std::string::npos);
  auto old = terse::input::parse_cursor(v1);
  REQUIRE(old.why().empty());
  REQUIRE(old->size() == 1);
  CHECK(!(*old)[0].dir_hash);
  CHECK((*old)[0].at.file == c.file);
  CHECK((*old)[0].at.frame_offset == c.frame_offset);
  CHECK((*old)[0].at.frame_index == c.frame_index);
  CHECK((*old)[0].at.ticks == c.ticks);
  // A path, a name the runtime would not choose, an index past 32 bits.
  CHECK(!terse::input::decode_cursor_v1(terse::input::encode_cursor_v1(Cursor{"../app-20261129-001.tlog", 1, 1, 1})));
  CHECK(!terse::input::decode_cursor_v1(terse::input::encode_cursor_v1(Cursor{"notes.txt", 1, 1, 1})));
  CHECK(!terse::input::decode_cursor_v1(v1.substr(0, v1.find('-', 2)) + "-1-100000000-1"));
  CHECK(!terse::input::decode_cursor_v1(v1.substr(0, v1.find('-', 2)) + "-1-1-10000000000000000"));
  CHECK(!terse::input::decode_cursor_v1(v1 + "-"));
}

// ---- merged inputs ---------------------------------------------------------------

namespace {

// Two writers logging at the same time into two directories under the same
// NAME (so only the directory tells their logs apart), each rolling its files.
void write_two(const std::string& dir_a, const std::string& dir_b, int bursts) {
  int rc_a = -1, rc_b = -1;
  std::thread a([&] { rc_a = run_writer({dir_a, "app", "bursts", std::to_string(bursts), "50", "7", "A"}); });
  std::thread b([&] { rc_b = run_writer({dir_b, "app", "bursts", std::to_string(bursts), "50", "11", "B"}); });
  a.join();
  b.join();
  REQUIRE(rc_a == 0);
  REQUIRE(rc_b == 0);
}

// The file each input's place names, per input, after each line.
std::vector<std::vector<std::string>> files_after(const std::vector<std::string>& lines) {
  std::vector<std::vector<std::string>> out;
  for (const auto& line : lines) {
    auto parsed = terse::input::parse_cursor(field(line, "cursor"));
    REQUIRE(parsed.why().empty());
    std::vector<std::string> files;
    for (const auto& input : *parsed) files.push_back(input.at.file);
    out.push_back(files);
  }
  return out;
}

}  // namespace

TEST_CASE("a merged run resumed from any of its cursors prints exactly the rest: the runs add up to one") {
  TempDir a, b;
  write_two(a.path(), b.path(), 10);
  REQUIRE(log_files(a.path()).size() > 2);
  REQUIRE(log_files(b.path()).size() > 2);
  auto full = run_terse({"cat", "-o", "json", "--show-cursor", a.path(), b.path()});
  REQUIRE(full.exit_code == 0);
  auto lines = split_lines(full.out);
  REQUIRE(lines.size() == 1000);
  // One place per input once both have printed, and short.
  auto files = files_after(lines);
  CHECK(files.back().size() == 2);
  CHECK(field(lines.back(), "cursor").size() < 160);

  // The first lines, the last, a few between, and both sides of every roll.
  std::set<std::size_t> cut_after{0, 1, 2, 499, 998, 999};
  for (std::size_t k = 1; k < lines.size(); ++k)
    if (files[k] != files[k - 1]) {
      cut_after.insert(k - 1);
      cut_after.insert(k);
    }
  REQUIRE(cut_after.size() > 10);
  for (std::size_t k : cut_after) {
    INFO("after line " << k);
    auto rest = run_terse(
        {"cat", "-o", "json", "--show-cursor", "--after-cursor", field(lines[k], "cursor"), a.path(), b.path()});
    INFO(rest.err);
    REQUIRE(rest.exit_code == 0);
    CHECK(rest.err.empty());
    CHECK(split_lines(rest.out) ==
          std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(k) + 1, lines.end()));
  }

  // Each place goes back to its own directory however the inputs are
  // given: in the other order, or with a directory moved (its log is then
  // the only one of the NAME left without a place).
  std::string cursor = field(lines[600], "cursor");
  std::vector<std::string> want;
  for (std::size_t k = 601; k < lines.size(); ++k) want.push_back(field(lines[k], "message"));
  std::sort(want.begin(), want.end());
  auto reordered = run_terse({"cat", "-o", "json", "--after-cursor", cursor, b.path(), a.path()});
  CHECK(reordered.exit_code == 0);
  auto got = messages(split_lines(reordered.out));
  std::sort(got.begin(), got.end());
  CHECK(got == want);
  TempDir elsewhere;
  std::string moved = elsewhere / "moved";
  std::filesystem::rename(a.path(), moved);
  auto after_move = run_terse({"cat", "-o", "json", "--after-cursor", cursor, moved, b.path()});
  std::filesystem::rename(moved, a.path());
  INFO(after_move.err);
  CHECK(after_move.exit_code == 0);
  got = messages(split_lines(after_move.out));
  std::sort(got.begin(), got.end());
  CHECK(got == want);
  // Two directories both moved: each place still names the process that
  // wrote its log.
  TempDir copies;
  std::filesystem::copy(a.path(), copies / "a");
  std::filesystem::copy(b.path(), copies / "b");
  auto both_moved = run_terse({"cat", "-o", "json", "--after-cursor", cursor, copies / "a", copies / "b"});
  INFO(both_moved.err);
  CHECK(both_moved.exit_code == 0);
  got = messages(split_lines(both_moved.out));
  std::sort(got.begin(), got.end());
  CHECK(got == want);
  // A cursor of version 2 names no process: neither place can tell which log is its own.
  auto places = *terse::input::parse_cursor(cursor);
  auto old = run_terse({"cat", "--after-cursor", terse::input::encode_cursor_v2(places), copies / "a", copies / "b"});
  CHECK(old.exit_code == 2);
  CHECK(old.err.find("fits inputs of the log 'app' in several directories") != std::string::npos);
}

TEST_CASE(
    "a merged cursor keeps the place of an input that printed nothing since, and starts a new input from its "
    "beginning") {
  TempDir a, b;
  REQUIRE(run_writer({a.path(), "app", "bursts", "3", "20", "0", "A"}) == 0);
  auto only_a = split_lines(run_terse({"cat", "-o", "json", "--show-cursor", a.path()}).out);
  REQUIRE(only_a.size() == 60);
  // A cursor taken on A alone, then B appears: B is read from its start.
  REQUIRE(run_writer({b.path(), "db", "bursts", "2", "20", "0", "B"}) == 0);
  auto with_b = run_terse(
      {"cat", "-o", "json", "--show-cursor", "--after-cursor", field(only_a[29], "cursor"), a.path(), b.path()});
  CHECK(with_b.exit_code == 0);
  auto lines = split_lines(with_b.out);
  REQUIRE(lines.size() == 30 + 40);
  auto got = messages(lines);
  auto a_all = messages(only_a);
  std::vector<std::string> want(a_all.begin() + 30, a_all.end());
  auto b_all = expected("B", 2, 20);
  want.insert(want.end(), b_all.begin(), b_all.end());
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  CHECK(got == want);
  // The last cursor still holds A's place after B's records, so resuming
  // from it prints nothing, also when B was last and A printed long before.
  std::size_t last_a = 0;
  for (std::size_t k = 0; k < lines.size(); ++k)
    if (field(lines[k], "message")[0] == 'A') last_a = k;
  std::size_t after_a = last_a + 1 < lines.size() ? last_a + 1 : last_a;
  auto rest = run_terse(
      {"cat", "-o", "json", "--show-cursor", "--after-cursor", field(lines[after_a], "cursor"), a.path(), b.path()});
  CHECK(split_lines(rest.out) ==
        std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(after_a) + 1, lines.end()));
  auto end = run_terse({"cat", "-o", "json", "--after-cursor", field(lines.back(), "cursor"), a.path(), b.path()});
  CHECK(end.exit_code == 0);
  CHECK(end.out.empty());
}

TEST_CASE(
    "a shipper following two live directories that stops and resumes with --after-cursor gets every record once") {
  TempDir a, b;
  int rc_a = -1, rc_b = -1;
  std::thread writer_a([&] { rc_a = run_writer({a.path(), "app", "bursts", "20", "40", "30", "A"}); });
  std::thread writer_b([&] { rc_b = run_writer({b.path(), "app", "bursts", "20", "40", "40", "B"}); });
  struct Join {
    std::thread& a;
    std::thread& b;
    ~Join() {
      if (a.joinable()) a.join();
      if (b.joinable()) b.join();
    }
  } join{writer_a, writer_b};
  auto [first, cursor] = ship_until({a.path(), b.path()}, 250);
  // The writers are still logging and rolling while the second run starts.
  Process ship(cli({"cat", "-f", "-o", "json", "--show-cursor", "--after-cursor", cursor, a.path(), b.path()}),
               Process::Output::pipe);
  auto has_both_ends = [](const std::string& out) {
    return out.find("\"message\":\"A burst 19 record 39\"") != std::string::npos &&
           out.find("\"message\":\"B burst 19 record 39\"") != std::string::npos;
  };
  bool done = ship.read_until(has_both_ends, 30s);
  writer_a.join();
  writer_b.join();
  ship.stop();
  REQUIRE(rc_a == 0);
  REQUIRE(rc_b == 0);
  REQUIRE(done);
  REQUIRE(log_files(a.path()).size() > 2);
  REQUIRE(log_files(b.path()).size() > 2);
  auto second = messages(complete_lines(ship.out));
  // Each writer's records once, in its own order, the two runs together.
  std::map<char, std::vector<std::string>> per_writer;
  for (const auto* run : {&first, &second})
    for (const auto& message : *run) per_writer[message[0]].push_back(message);
  CHECK(per_writer['A'] == expected("A", 20, 40));
  CHECK(per_writer['B'] == expected("B", 20, 40));
}
