// `terse cat` output modes: -o short|precise|cat|json, --schema-header,
// --format, --color, -n, and the help text, run through the real CLI.
#include <chrono>
#include <regex>
#include <set>

#include <catch2/catch.hpp>

#include "cli_helpers.hpp"
#include "json_reader.hpp"

using namespace terse::test;
using namespace std::chrono_literals;

namespace {

struct Fixture {
  TempDir dir;
  std::string path;
  Fixture() {
    terse::start(test_config(dir.path()));
    TERSE_DEBUG("debug {}", 1);
    TERSE_INFO("info {}", 2);
    TERSE_WARN("warn {}", 3);
    TERSE_ERROR("error {}", 4);
    TERSE_CRITICAL("critical {}", 5);
    TERSE_INFO("quote \" and bytes {}", std::string("\x01\xff"));
    terse::stop();
    path = log_files(dir.path()).at(0);
  }
};

}  // namespace

TEST_CASE("the default and -o precise print nanoseconds, -o short microseconds, -o cat the message only") {
  Fixture fx;
  static const std::regex short_line(
      R"(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6} debug \[\d+\] \S+output_test\.cpp:\d+ debug 1)");
  static const std::regex precise_line(
      R"(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{9} debug \[\d+\] \S+output_test\.cpp:\d+ debug 1)");
  auto plain = split_lines(run_terse({"cat", fx.path}).out);
  auto short_mode = split_lines(run_terse({"cat", "-o", "short", fx.path}).out);
  auto precise = split_lines(run_terse({"cat", "--output", "precise", fx.path}).out);
  REQUIRE(plain.size() == 6);
  CHECK(precise == plain);
  CHECK(std::regex_match(plain[0], precise_line));
  REQUIRE(short_mode.size() == 6);
  CHECK(std::regex_match(short_mode[0], short_line));
  // The same instant, only fewer digits.
  CHECK(short_mode[0].substr(0, 26) == plain[0].substr(0, 26));

  auto cat = run_terse({"cat", "-o", "cat", "--level", "warn", fx.path});
  CHECK(cat.out == "warn 3\nerror 4\ncritical 5\n");

  auto bad = run_terse({"cat", "-o", "fancy", fx.path});
  CHECK(bad.exit_code == 2);
  auto both = run_terse({"cat", "-o", "cat", "--format", "{message}", fx.path});
  CHECK(both.exit_code == 2);
}

TEST_CASE("-o json is --json: NDJSON, valid for any bytes") {
  Fixture fx;
  auto json = run_terse({"cat", "-o", "json", fx.path});
  auto short_form = run_terse({"cat", "--json", fx.path});
  CHECK(json.exit_code == 0);
  CHECK(json.out == short_form.out);
  auto lines = split_lines(json.out);
  REQUIRE(lines.size() == 6);
  for (const auto& line : lines) {
    CHECK(line.front() == '{');
    CHECK(line.back() == '}');
    for (char c : line) CHECK(static_cast<unsigned char>(c) >= 0x20);
  }
  CHECK(lines[5].find(R"("message":"quote \" and bytes \u0001\ufffd")") != std::string::npos);
  CHECK(run_terse({"cat", "--json", "-o", "json", fx.path}).exit_code == 2);
}

TEST_CASE("--schema-header: the first JSON line describes every key the records use") {
  Fixture fx;
  auto check_run = [&](const std::vector<std::string>& args, bool with_cursor) {
    auto run = run_terse(args);
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    auto lines = split_lines(run.out);
    REQUIRE(lines.size() == 7);
    auto header = parse_json(lines[0]);
    REQUIRE(header);
    REQUIRE(header->kind == Json::Kind::object);
    CHECK(header->members["schema"].text == "terse.record/1");
    const Json& fields = header->members["fields"];
    REQUIRE(fields.kind == Json::Kind::object);
    std::set<std::string> described, used;
    for (const auto& [key, what] : fields.members) {
      CHECK(what.kind == Json::Kind::string);
      CHECK(!what.text.empty());
      described.insert(key);
    }
    for (std::size_t i = 1; i < lines.size(); ++i) {
      auto record = parse_json(lines[i]);
      INFO(lines[i]);
      REQUIRE(record);
      CHECK(record->members.count("schema") == 0);
      for (const auto& member : record->members) used.insert(member.first);
    }
    // Every key the records use, and no other but those a record has only
    // sometimes (these records are of sites without a rate limit, none is
    // the flight recorder's, none in a terse::Context).
    std::set<std::string> expected = used;
    expected.insert("suppressed");
    expected.insert("flight");
    expected.insert("context");
    CHECK(used.count("suppressed") == 0);
    CHECK(used.count("flight") == 0);
    CHECK(used.count("context") == 0);
    CHECK(expected == described);
    CHECK(described.count("cursor") == (with_cursor ? 1u : 0u));
    // Without the flag, the same records and no header.
    std::vector<std::string> plain;
    for (const auto& arg : args)
      if (arg != "--schema-header") plain.push_back(arg);
    CHECK(run_terse(plain).out == run.out.substr(lines[0].size() + 1));
  };
  check_run({"cat", "-o", "json", "--schema-header", fx.path}, false);
  check_run({"cat", "--json", "--schema-header", "--show-cursor", fx.path}, true);

  // Following, it is the first line, once.
  Process follow(cli({"cat", "-f", "--json", "--schema-header", fx.dir.path()}), Process::Output::pipe);
  REQUIRE(follow.read_until([](const std::string& out) { return split_lines(out).size() >= 7; }, 20s));
  follow.stop();
  auto lines = split_lines(follow.out);
  CHECK(lines[0].find("\"schema\":\"terse.record/1\"") != std::string::npos);
  CHECK(std::count_if(lines.begin(), lines.end(),
                      [](const std::string& l) { return l.find("\"schema\"") != std::string::npos; }) == 1);

  auto text = run_terse({"cat", "--schema-header", fx.path});
  CHECK(text.exit_code == 2);
  CHECK(text.err.find("-o json") != std::string::npos);
}

TEST_CASE("--format with -o precise or short sets the digits of {time}") {
  Fixture fx;
  auto ns = split_lines(run_terse({"cat", "--format", "{time}", fx.path}).out);
  auto us = split_lines(run_terse({"cat", "-o", "short", "--format", "{time}", fx.path}).out);
  REQUIRE(ns.size() == 6);
  REQUIRE(us.size() == 6);
  CHECK(ns[0].size() == 29);
  CHECK(us[0].size() == 26);
}

TEST_CASE("--color: levels in colour when asked, never by default into a file or pipe") {
  Fixture fx;
  auto never = run_terse({"cat", "--format", "{level}", fx.path});
  CHECK(never.out.find('\x1b') == std::string::npos);
  auto always = split_lines(run_terse({"cat", "--color", "always", "--format", "{level}", fx.path}).out);
  REQUIRE(always.size() == 6);
  CHECK(always[0] == "\x1b[2mdebug\x1b[0m");
  CHECK(always[1] == "info");
  CHECK(always[2] == "\x1b[33mwarn\x1b[0m");
  CHECK(always[3] == "\x1b[31merror\x1b[0m");
  CHECK(always[4] == "\x1b[1;31mcritical\x1b[0m");
  auto off = run_terse({"cat", "--color", "never", fx.path});
  CHECK(off.out.find('\x1b') == std::string::npos);
  // JSON is never coloured.
  CHECK(run_terse({"cat", "--json", "--color", "always", fx.path}).out.find('\x1b') == std::string::npos);
  CHECK(run_terse({"cat", "--color=sometimes", fx.path}).exit_code == 2);
  // A bare --color means always, as with ls and grep, also right before an input.
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"cat", "--format", "{level}", "--color", fx.path},
                                             {"cat", "--format", "{level}", fx.path, "--color"},
                                             {"cat", "--format", "{level}", "--color=always", fx.path}}) {
    auto bare = run_terse(args);
    INFO(bare.err);
    CHECK(bare.exit_code == 0);
    CHECK(split_lines(bare.out) == always);
  }
  CHECK(run_terse({"cat", "--color=never", fx.path}).out.find('\x1b') == std::string::npos);
}

TEST_CASE("terse with no command prints its help") {
  auto run = run_terse({});
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("Examples:") != std::string::npos);
  CHECK(run.out.find("cat") != std::string::npos);
}

TEST_CASE("-n N prints the last N records") {
  Fixture fx;
  CHECK(run_terse({"cat", "-n", "2", "-o", "cat", fx.path}).out == "critical 5\nquote \" and bytes \x01\xff\n");
  CHECK(run_terse({"cat", "-n", "2", "-o", "cat", "--level", "warn", fx.path}).out == "error 4\ncritical 5\n");
  CHECK(run_terse({"cat", "-n", "0", fx.path}).out.empty());
  CHECK(split_lines(run_terse({"cat", "-n", "100", fx.path}).out).size() == 6);
}

TEST_CASE("--help shows examples for the program and each command") {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"cat", "--help"}, {"stats", "--help"}, {"verify", "--help"}}) {
    auto run = run_terse(args);
    INFO(args[0]);
    CHECK(run.exit_code == 0);
    CHECK(run.out.find("Examples:") != std::string::npos);
    CHECK(run.out.find("terse ") != std::string::npos);
  }
  auto cat = run_terse({"cat", "--help"});
  for (const char* option : {"--since", "--until", "--level", "--site", "--thread", "--grep", "--follow", "--lines",
                             "--output", "--color", "--utc", "--show-cursor", "--after-cursor", "--schema-header"})
    CHECK(cat.out.find(option) != std::string::npos);
}

TEST_CASE("errors name the file and say what to do") {
  Fixture fx;
  auto missing = run_terse({"cat", fx.dir / "nope.tlog"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("nope.tlog") != std::string::npos);
  CHECK(missing.err.find("No such file") != std::string::npos);
  std::string bytes = read_file(fx.path);
  bytes[0] = 'X';
  write_file(fx.dir / "bad.tlog.x", bytes);
  auto bad = run_terse({"cat", fx.dir / "bad.tlog.x"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("bad.tlog.x: offset 0") != std::string::npos);
}
