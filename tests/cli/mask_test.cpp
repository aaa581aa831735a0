// `terse cat --mask RULES`: regex redaction of messages and string
// arguments in every output mode, rule-file errors, and rules re-read while
// following a live writer.
#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "cli_helpers.hpp"

using namespace terse::test;
using namespace std::chrono_literals;

namespace {

void write_rules(const std::string& path, const std::string& text) {
  // Written beside and renamed over, as an editor or a config manager does.
  std::string temporary = path + ".new";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
  }
  std::filesystem::rename(temporary, path);
}

const char* const kPhoneRules =
    "# mobile numbers: keep the operator prefix and the last four digits\n"
    "\n"
    "(1[3-9]\\d)\\d{4}(\\d{4}) => $1****$2\n"
    "   # indented comment\n"
    "token=\\w+ => token=<hidden>\n";

}  // namespace

TEST_CASE("--mask redacts formatted messages and string arguments in text and JSON") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  TERSE_INFO("sms to {} sent", std::string("13812345678"));
  TERSE_WARN("callback 15900001111 failed with {} for {}", 503, std::string("token=abc123 user 17712345678"));
  TERSE_INFO("order {} has no personal data", 42);
  terse::stop();
  std::string rules = dir.path() + "/rules.mask";
  write_rules(rules, kPhoneRules);

  auto text = run_terse({"cat", "-o", "cat", "--mask", rules, dir.path()});
  CHECK(text.exit_code == 0);
  CHECK(text.out ==
        "sms to 138****5678 sent\n"
        "callback 159****1111 failed with 503 for token=<hidden> user 177****5678\n"
        "order 42 has no personal data\n");
  // The whole line, the default pattern too.
  auto short_lines = split_lines(run_terse({"cat", "--mask", rules, dir.path()}).out);
  REQUIRE(short_lines.size() == 3);
  CHECK(short_lines[0].ends_with(" sms to 138****5678 sent"));

  auto json = split_lines(run_terse({"cat", "-o", "json", "--mask", rules, dir.path()}).out);
  REQUIRE(json.size() == 3);
  CHECK(json[0].find(R"("message":"sms to 138****5678 sent","args":["138****5678"])") != std::string::npos);
  CHECK(json[1].find(R"("args":[503,"token=<hidden> user 177****5678"])") != std::string::npos);
  CHECK(json[2].find(R"("args":[42])") != std::string::npos);
  for (const auto& line : json) CHECK(line.find("12345678") == std::string::npos);

  // --grep sees what is printed: the hidden digits cannot be searched for.
  CHECK(run_terse({"cat", "-o", "cat", "--mask", rules, "-g", "12345678", dir.path()}).out.empty());
  CHECK(run_terse({"cat", "-o", "cat", "--mask", rules, "-g", "138\\*{4}", dir.path()}).out ==
        "sms to 138****5678 sent\n");
  // Without --mask nothing changes.
  CHECK(run_terse({"cat", "-o", "cat", dir.path()}).out.find("13812345678") != std::string::npos);
}

TEST_CASE("a rules file that does not parse is exit code 2 naming its line") {
  TempDir dir;
  REQUIRE(run_writer({dir.path(), "app", "bursts", "1", "1", "0", "x"}) == 0);
  std::string rules = dir.path() + "/bad.mask";
  write_rules(rules, "# fine\n\\d+ => N\nno arrow here\n");
  auto no_arrow = run_terse({"cat", "--mask", rules, dir.path()});
  CHECK(no_arrow.exit_code == 2);
  CHECK(no_arrow.out.empty());
  CHECK(no_arrow.err.find("bad.mask:3:") != std::string::npos);
  CHECK(no_arrow.err.find("REGEX => REPLACEMENT") != std::string::npos);

  write_rules(rules, "\n\n(unclosed => x\n");
  auto bad_regex = run_terse({"cat", "--mask", rules, dir.path()});
  CHECK(bad_regex.exit_code == 2);
  CHECK(bad_regex.err.find("bad.mask:3: bad regex '(unclosed'") != std::string::npos);

  auto missing = run_terse({"cat", "--mask", dir.path() + "/none.mask", dir.path()});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("none.mask") != std::string::npos);
}

TEST_CASE("cat -f re-reads changed rules between records: every line once, masked by the old rules or the new") {
  TempDir dir;
  std::string rules = dir.path() + "/rules.mask";
  write_rules(rules, "(1[3-9]\\d)\\d{4}(\\d{4}) => $1****$2\n");
  REQUIRE(run_writer({dir.path(), "app", "bursts", "3", "20", "0", "13812345678"}) == 0);
  Process cat(cli({"cat", "-f", "-o", "cat", "--mask", rules, dir.path()}), Process::Output::pipe);
  REQUIRE(
      cat.read_until([](const std::string& out) { return out.find("burst 2 record 19\n") != std::string::npos; }, 20s));

  write_rules(rules, "1[3-9]\\d{9} => <phone>\n");
  // The writer goes on until a line shows the new rules; cat picks them up
  // between two polls, so no time limit is assumed beyond the usual one.
  int batches = 0;
  while (cat.out.find("<phone>") == std::string::npos && batches < 50) {
    std::string tag = fmt::format("13812345678 batch {}", batches);
    REQUIRE(run_writer({dir.path(), "app", "bursts", "1", "5", "0", tag}) == 0);
    REQUIRE(cat.read_until(
        [&](const std::string& out) {
          return out.find(" batch " + std::to_string(batches) + " burst 0 record 4\n") != std::string::npos;
        },
        20s));
    ++batches;
  }
  cat.stop();
  REQUIRE(cat.out.find("<phone>") != std::string::npos);

  std::vector<std::string> want;
  for (int b = 0; b < 3; ++b)
    for (int r = 0; r < 20; ++r) want.push_back(fmt::format("13812345678 burst {} record {}", b, r));
  for (int n = 0; n < batches; ++n)
    for (int r = 0; r < 5; ++r) want.push_back(fmt::format("13812345678 batch {} burst 0 record {}", n, r));
  auto got = split_lines(cat.out);
  REQUIRE(got.size() == want.size());
  // Each line is one of the written records, in order, masked by the old
  // rules until the switch and by the new ones from then on.
  bool switched = false;
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO(i << ": " << got[i]);
    std::string old_rules = std::regex_replace(want[i], std::regex("(138)1234(5678)"), "$1****$2");
    std::string new_rules = std::regex_replace(want[i], std::regex("13812345678"), "<phone>");
    if (i < 60) {
      CHECK(got[i] == old_rules);
      continue;
    }
    if (got[i] == new_rules) switched = true;
    CHECK(got[i] == (switched ? new_rules : old_rules));
  }
  CHECK(switched);
}
