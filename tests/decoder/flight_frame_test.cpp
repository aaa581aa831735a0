// FORMAT.md 1.5: flight frames (type 5, §7.2) hold records in the layout of
// a records frame that were not part of the normal stream; the decoder
// marks each, and a reader that does not know the type skips them whole.
#include <catch2/catch.hpp>

#include "tlog_builder.hpp"

using namespace terse::test;
namespace schema = terse::schema;

namespace {

bool has_flight_key(const std::string& json) { return json.find(",\"flight\":true}") != std::string::npos; }

}  // namespace

TEST_CASE("records of a flight frame are marked, delta-coded within their own frame") {
  TlogBuilder file;
  file.site(1, "step {}", {kI32});
  file.record(1, val::i32_args(10));
  file.records_as(schema::FrameType::flight);
  file.record(1, val::i32_args(1));  // the chain starts again at 0 in the new frame
  file.record(1, val::i32_args(2));
  file.records_as(schema::FrameType::records);
  file.record(1, val::i32_args(11));
  Decoded d = decode(file.finish());
  CHECK(d.problems.empty());
  CHECK(d.messages == std::vector<std::string>{"step 10", "step 1", "step 2", "step 11"});
  REQUIRE(d.json.size() == 4);
  CHECK_FALSE(has_flight_key(d.json[0]));
  CHECK(has_flight_key(d.json[1]));
  CHECK(has_flight_key(d.json[2]));
  CHECK_FALSE(has_flight_key(d.json[3]));
}

TEST_CASE("a reader skips a frame type it does not know whole, as a 1.4 reader skips flight frames") {
  TlogBuilder file;
  file.site(1, "step {}", {kI32});
  file.record(1, val::i32_args(10));
  file.records_as(static_cast<schema::FrameType>(10));  // the first type no version defines
  file.record(1, val::i32_args(1));
  file.records_as(schema::FrameType::records);
  file.record(1, val::i32_args(11));
  Decoded d = decode(file.finish());
  CHECK(d.problems.empty());
  CHECK(d.messages == std::vector<std::string>{"step 10", "step 11"});
}

TEST_CASE("a garbled flight frame costs its own records only") {
  TlogBuilder file;
  file.site(1, "step {}", {kI32});
  file.records_as(schema::FrameType::flight);
  file.record(1, val::i32_args(1));
  file.record(1, "\x01");  // shorter than its site's i32
  file.records_as(schema::FrameType::records);
  file.record(1, val::i32_args(11));
  Decoded d = decode(file.finish());
  CHECK(d.messages == std::vector<std::string>{"step 1", "step 11"});
  CHECK(d.problems.size() == 1);
}
