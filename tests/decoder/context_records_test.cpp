// FORMAT.md 1.5 §7.3: context pushes and pops (control kinds 4 and 5) and
// the context sites they name; the decoder attaches the open contexts to a
// thread's records, keeps flight frames' apart, and reports hostile ones at
// no cost to the records around them.
#include <catch2/catch.hpp>

#include "tlog_builder.hpp"

using namespace terse::test;
namespace wire = terse::wire;
namespace schema = terse::schema;

namespace {

constexpr auto kString = static_cast<std::uint8_t>(TypeTag::string);

// A context site of an i32 value (flags bit 1), or with other tags or flags.
std::string context_site(std::uint32_t id, std::vector<std::uint8_t> tags = {kString, kI32}, char flags = '\x02') {
  std::string body;
  wire::put_varint(body, id);
  body += static_cast<char>(2);  // info
  wire::put_varint(body, 0);
  wire::put_bytes(body, "terse");
  wire::put_bytes(body, schema::kContextFormat);
  wire::put_varint(body, tags.size());
  for (std::uint8_t t : tags) body += static_cast<char>(t);
  wire::put_varint(body, 0);  // arg_types
  wire::put_varint(body, 0);  // arg_names
  body += flags;
  return body;
}

std::string push(std::uint64_t serial, std::uint64_t site, std::string_view key, int value) {
  std::string args(1, static_cast<char>(schema::ControlKind::context_push));
  wire::put_varint(args, serial);
  wire::put_varint(args, site);
  val::string(args, key);
  val::le(args, value);
  return args;
}

std::string pop(std::uint64_t serial) {
  std::string args(1, static_cast<char>(schema::ControlKind::context_pop));
  wire::put_varint(args, serial);
  return args;
}

// The record's "context" member as JSON text, "" when it has none.
std::string context_json(const std::string& json) {
  auto at = json.find(",\"context\":");
  if (at == std::string::npos) return "";
  return json.substr(at + 11, json.size() - at - 11 - 2);  // without the closing "}\n"
}

}  // namespace

TEST_CASE("pushes and pops open and close a thread's contexts, in any order") {
  TlogBuilder file;
  file.site_body(context_site(1));
  file.site(2, "step {}", {kI32});
  file.record(2, val::i32_args(0));
  file.record(0, push(1, 1, "request_id", 42));
  file.record(0, push(2, 1, "attempt", 1));
  file.record(2, val::i32_args(1));
  file.record(0, pop(1));  // the outer one first
  file.record(2, val::i32_args(2));
  file.record(0, pop(2));
  file.record(0, pop(9));  // never opened: ignored
  file.record(2, val::i32_args(3));
  Decoded d = decode(file.finish());
  CHECK(d.problems.empty());
  CHECK(d.messages == std::vector<std::string>{"step 0", "step 1", "step 2", "step 3"});
  REQUIRE(d.json.size() == 4);
  CHECK(context_json(d.json[0]).empty());
  CHECK(context_json(d.json[1]) == R"({"request_id":42,"attempt":1})");
  CHECK(context_json(d.json[2]) == R"({"attempt":1})");
  CHECK(context_json(d.json[3]).empty());
}

TEST_CASE("a later push of a key hides an earlier one while both are open") {
  TlogBuilder file;
  file.site_body(context_site(1));
  file.site(2, "step {}", {kI32});
  file.record(0, push(1, 1, "id", 1));
  file.record(0, push(2, 1, "id", 2));
  file.record(2, val::i32_args(1));
  file.record(0, pop(2));
  file.record(2, val::i32_args(2));
  Decoded d = decode(file.finish());
  CHECK(d.problems.empty());
  REQUIRE(d.json.size() == 2);
  CHECK(context_json(d.json[0]) == R"({"id":2})");
  CHECK(context_json(d.json[1]) == R"({"id":1})");
}

TEST_CASE("a run of flight frames has contexts of its own") {
  TlogBuilder file;
  file.site_body(context_site(1));
  file.site(2, "step {}", {kI32});
  file.record(0, push(1, 1, "id", 1));
  file.record(2, val::i32_args(1));
  file.records_as(schema::FrameType::flight);
  file.record(2, val::i32_args(2));  // none pushed in the run yet
  file.record(0, push(5, 1, "id", 5));
  file.record(2, val::i32_args(3));
  file.records_as(schema::FrameType::flight);
  file.record(2, val::i32_args(4));  // the same run
  file.records_as(schema::FrameType::records);
  file.record(2, val::i32_args(5));
  file.records_as(schema::FrameType::flight);
  file.record(2, val::i32_args(6));  // a new run starts empty
  Decoded d = decode(file.finish());
  CHECK(d.problems.empty());
  REQUIRE(d.json.size() == 6);
  CHECK(context_json(d.json[0]) == R"({"id":1})");
  CHECK(context_json(d.json[1]).empty());
  CHECK(context_json(d.json[2]) == R"({"id":5})");
  CHECK(context_json(d.json[3]) == R"({"id":5})");
  CHECK(context_json(d.json[4]) == R"({"id":1})");
  CHECK(context_json(d.json[5]).empty());
}

TEST_CASE("hostile context records are reported and cost only themselves") {
  TlogBuilder file;
  file.site_body(context_site(1));
  file.site(2, "step {}", {kI32});
  file.site_body(context_site(3, {kI32, kI32}));  // a context site must start with a string key
  file.record(0, push(1, 2, "id", 1));            // names a call site
  file.record(0, push(2, 7, "id", 1));            // names no site
  file.record(0, push(3, 3, "id", 1));            // names an unusable site
  std::string cut = push(4, 1, "id", 1);
  cut.pop_back();
  file.record(0, cut);                                                                   // its value cut short
  file.record(0, std::string(1, static_cast<char>(schema::ControlKind::context_push)));  // no serial
  file.record(0, std::string(1, static_cast<char>(schema::ControlKind::context_pop)));   // no serial
  file.record(2, val::i32_args(1));
  std::string as_record;
  val::string(as_record, "id");
  val::le(as_record, 2);
  file.record(1, as_record);  // a record of a context site: never shown
  file.record(0, push(5, 1, "ok", 5));
  file.record(2, val::i32_args(3));
  Decoded d = decode(file.finish());
  CHECK(d.messages == std::vector<std::string>{"step 1", "step 3"});
  REQUIRE(d.json.size() == 2);
  CHECK(context_json(d.json[0]).empty());
  CHECK(context_json(d.json[1]) == R"({"ok":5})");
  CHECK(any_problem_says(d, "which is no context site"));
  CHECK(any_problem_says(d, "its dictionary entry is missing"));
  CHECK(any_problem_says(d, "it is a context site but not a key and a value"));
  CHECK(any_problem_says(d, "does not match the site's argument types"));
  CHECK(any_problem_says(d, "context record is malformed"));
}

TEST_CASE("a thread holds at most 256 open contexts") {
  TlogBuilder file;
  file.site_body(context_site(1));
  file.site(2, "step {}", {kI32});
  for (int i = 1; i <= 300; ++i) file.record(0, push(static_cast<std::uint64_t>(i), 1, "k" + std::to_string(i), i));
  file.record(2, val::i32_args(1));
  Decoded d = decode(file.finish());
  REQUIRE(d.json.size() == 1);
  CHECK(context_json(d.json[0]).find("\"k256\":256") != std::string::npos);
  CHECK(context_json(d.json[0]).find("\"k257\"") == std::string::npos);
  CHECK(any_problem_says(d, "more than 256 contexts open on one thread"));
}
