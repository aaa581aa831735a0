// FORMAT.md §6 kind 3 and §8: a top-level string argument may be a text
// entry of its file, referred to by id.
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
