// FORMAT.md §6 kind 3 and §8: a top-level string argument may be a text
// entry of its file, referred to by id, or (3.1) such an entry patched.
#include <catch2/catch.hpp>

#include "tlog_builder.hpp"

using namespace terse::test;
using namespace std::string_literals;

namespace {

constexpr auto kString = static_cast<std::uint8_t>(TypeTag::string);

std::string interned_then_int(std::uint32_t id, int value) {
  std::string args;
  val::interned(args, id);
  val::le(args, value);
  return args;
}

}  // namespace

TEST_CASE("an interned string reads back as its text entry's bytes") {
  TlogBuilder file;
  std::string body(300, 'b');
  file.site(1, "{} {}", {kString, kI32});
  file.text(7, body);
  file.record(1, interned_then_int(7, 1));
  file.record(1, interned_then_int(7, 2));  // the int is delta-coded past the interned string
  std::string plain;
  val::string(plain, "short");
  val::le(plain, 3);
  file.record(1, plain);
  Decoded d = decode(file.finish());
  CHECK(d.problems.empty());
  CHECK(d.messages == std::vector<std::string>{body + " 1", body + " 2", "short 3"});
  REQUIRE(d.json.size() == 3);
  CHECK(json_args(d.json[0]) == "[\"" + body + "\",1]");
}

TEST_CASE("an undefined text id costs its record only; a new file forgets the texts") {
  TlogBuilder first;
  first.site(1, "{} {}", {kString, kI32});
  first.text(7, "seven");
  first.record(1, interned_then_int(8, 1));
  first.record(1, interned_then_int(7, 2));
  TlogBuilder second;
  second.site(1, "{} {}", {kString, kI32});
  second.record(1, interned_then_int(7, 3));
  Decoded d = decode(first.finish() + second.finish());
  CHECK(any_problem_says(d, "text entry the file has not defined"));
  CHECK(d.messages == std::vector<std::string>{"seven 2"});
}

TEST_CASE("text entries are checked and replaced by id; structured values may not intern") {
  TlogBuilder file;
  file.site(1, "{}", {kString});
  file.text(0, "zero is no id");
  file.text(3, "old");
  file.text(3, "new");
  std::string args;
  val::interned(args, 3);
  file.record(1, args);
  EncodedArgs structured;
  std::string value;
  val::count(value, 1, 1);
  val::interned(value, 3);
  add_arg(structured, RawStructured{expr::sequence(expr::scalar(TypeTag::string)), value});
  file.site(2, "{}", structured);
  file.record(2, structured.args);
  Decoded d = decode(file.finish());
  CHECK(any_problem_says(d, "dictionary entry for a text is malformed"));
  CHECK(any_problem_says(d, "call site 2 has a structured argument that does not match"));
  CHECK(d.messages == std::vector<std::string>{"new"});
}

namespace {

std::string patched_then_int(std::uint32_t id, const std::vector<val::Patch>& patches, int value) {
  std::string args;
  val::patched(args, id, patches);
  val::le(args, value);
  return args;
}

}  // namespace

TEST_CASE("a patched string reads back as its text entry with the patches applied") {
  TlogBuilder file;
  const std::string base = "{\"seq\":\"0000000000\",\"name\":\"alpha\",\"pad\":\"" + std::string(200, 'p') + "\"}";
  file.site(1, "{} {}", {kString, kI32});
  file.text(5, base);
  std::vector<std::string> expected;
  file.record(1, patched_then_int(5, {{8, 10, "0000000042"}}, 1));
  expected.push_back(base.substr(0, 8) + "0000000042" + base.substr(18) + " 1");
  // At the start and at the end, several, of another length than they
  // replace, and nothing replaced at all: the int after each is delta-coded.
  file.record(1, patched_then_int(5, {{0, 1, "["}, {1, 3, "S"}, {base.size() - 6, 1, "}}}"}}, 2));
  expected.push_back("[" + base.substr(1, 1) + "S" + base.substr(5, base.size() - 6) + "}}}" + " 2");
  file.record(1, patched_then_int(5, {{base.size(), 0, " tail"}}, 3));
  expected.push_back(base + " tail 3");
  file.record(1, patched_then_int(5, {{20, base.size() - 20, ""}}, 4));
  expected.push_back(base.substr(0, 20) + " 4");
  file.record(1, patched_then_int(5, {}, 5));
  expected.push_back(base + " 5");
  Decoded d = decode(file.finish());
  CHECK(d.problems.empty());
  CHECK(d.messages == expected);
  REQUIRE(d.json.size() == expected.size());
  std::string escaped = base.substr(0, 8) + "0000000042" + base.substr(18);
  for (std::size_t at = 0; (at = escaped.find('"', at)) != std::string::npos; at += 2) escaped.insert(at, 1, '\\');
  CHECK(json_args(d.json[0]) == "[\"" + escaped + "\",1]");
}

TEST_CASE("a patched string its entry cannot make costs its record only") {
  TlogBuilder file;
  const std::string base(150, 'b');
  file.site(1, "{} {}", {kString, kI32});
  file.text(5, base);
  file.record(1, patched_then_int(6, {{0, 1, "x"}}, 1));                   // no such text
  file.record(1, patched_then_int(5, {{150, 1, "x"}}, 2));                 // removes past the end
  file.record(1, patched_then_int(5, {{151, 0, "x"}}, 3));                 // skips past the end
  file.record(1, patched_then_int(5, {{10, 0, ""}}, 4));                   // a patch that does nothing
  file.record(1, patched_then_int(5, {{100, 40, "y"}, {0, 20, "z"}}, 5));  // the second overruns
  std::string cut_short;
  val::patched(cut_short, 5, {{1, 1, "x"}});
  cut_short[14] = '\x05';  // its inserted length reaches past the patches' end
  val::le(cut_short, 6);
  file.record(1, cut_short);
  file.record(1, patched_then_int(5, {{149, 1, "!"}}, 7));
  Decoded d = decode(file.finish());
  CHECK(any_problem_says(d, "patched string"));
  // Each bad record is skipped alone and the deltas of the ints go on: the
  // last record's int is its own, not 7 plus the skipped ones.
  CHECK(d.messages == std::vector<std::string>{base.substr(0, 149) + "! 7"});
}

TEST_CASE("a patched string is malformed inside a structured value") {
  TlogBuilder file;
  file.text(3, std::string(130, 't'));
  EncodedArgs structured;
  std::string value;
  val::count(value, 1, 1);
  val::patched(value, 3, {{0, 1, "x"}});
  add_arg(structured, RawStructured{expr::sequence(expr::scalar(TypeTag::string)), value});
  file.site(2, "{}", structured);
  file.record(2, structured.args);
  Decoded d = decode(file.finish());
  CHECK(any_problem_says(d, "call site 2 has a structured argument that does not match"));
  CHECK(d.messages.empty());
}
