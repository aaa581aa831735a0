// FORMAT.md 2.0: columnar records and flight frames (types 6 and 7, §7.4)
// hold a frame's tick deltas as one column ahead of its rows. They read as
// the same records as the row layout; a column that disagrees with the rows
// costs the records from the disagreement on, and nothing before it.
#include <catch2/catch.hpp>

#include "tlog_builder.hpp"

using namespace terse::test;
namespace schema = terse::schema;
namespace wire = terse::wire;

namespace {

// Five records of one site, in a frame of `type`, then one more in a frame
// of the row layout that damage must not reach.
std::string five_and_one(schema::FrameType type,
                         const std::function<void(std::string&, std::string&)>& edit = nullptr) {
  TlogBuilder file;
  file.site(1, "step {}", {kI32});
  file.records_as(type);
  file.edit_columns = edit;
  const std::int64_t deltas[] = {0, 1000, -300, 70000, 5};  // out of order too (§7)
  for (int i = 0; i < 5; ++i) file.record(1, val::i32_args(i * 3), deltas[i]);
  file.records_as(schema::FrameType::records);
  file.edit_columns = nullptr;
  file.record(1, val::i32_args(99));
  return file.finish();
}

const std::vector<std::string> kAll{"step 0", "step 3", "step 6", "step 9", "step 12", "step 99"};

// The tick column as the varints it holds, less its last `n`.
void drop_last_ticks(std::string& ticks, int n) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < ticks.size(); ++i)
    if (i == 0 || (static_cast<unsigned char>(ticks[i - 1]) & 0x80) == 0) starts.push_back(i);
  ticks.resize(starts[starts.size() - static_cast<std::size_t>(n)]);
}

}  // namespace

TEST_CASE("a columnar records frame reads as the same records, times included, as the row layout") {
  Decoded rows = decode(five_and_one(schema::FrameType::records));
  Decoded columns = decode(five_and_one(schema::FrameType::records_columnar));
  INFO(columns.problems.size());
  CHECK(columns.problems.empty());
  CHECK(columns.messages == kAll);
  CHECK(columns.json == rows.json);  // "time" comes from the ticks
}

TEST_CASE("a columnar flight frame's records are marked as flight records") {
  Decoded d = decode(five_and_one(schema::FrameType::flight_columnar));
  CHECK(d.problems.empty());
  CHECK(d.messages == kAll);
  REQUIRE(d.json.size() == 6);
  CHECK(d.json[0].find(",\"flight\":true}") != std::string::npos);
  CHECK(d.json[5].find(",\"flight\":true}") == std::string::npos);
}

TEST_CASE("a tick column with fewer deltas than rows costs the rows it has no tick for") {
  Decoded d = decode(five_and_one(schema::FrameType::records_columnar,
                                  [](std::string& ticks, std::string&) { drop_last_ticks(ticks, 2); }));
  CHECK(d.messages == std::vector<std::string>{"step 0", "step 3", "step 6", "step 99"});
  REQUIRE(d.problems.size() == 1);
  CHECK(any_problem_says(d, "tick column ends before record 3"));
}

TEST_CASE("a tick column with more deltas than rows keeps every row and says so") {
  Decoded d = decode(five_and_one(schema::FrameType::records_columnar, [](std::string& ticks, std::string&) {
    wire::put_varint(ticks, wire::zigzag(7));
    wire::put_varint(ticks, wire::zigzag(8));
  }));
  CHECK(d.messages == kAll);
  REQUIRE(d.problems.size() == 1);
  CHECK(any_problem_says(d, "tick column holds more ticks than its 5 records"));
}

TEST_CASE("a garbled delta in the tick column costs the rows from it on") {
  Decoded d = decode(five_and_one(schema::FrameType::records_columnar, [](std::string& ticks, std::string&) {
    drop_last_ticks(ticks, 1);
    ticks += "\xFF\xFF";  // a varint that runs off the column's end
  }));
  CHECK(d.messages == std::vector<std::string>{"step 0", "step 3", "step 6", "step 9", "step 99"});
  REQUIRE(d.problems.size() == 1);
  CHECK(any_problem_says(d, "tick column ends before record 4"));
}

TEST_CASE("a columnar payload too short for its tick column's length is reported, and reading goes on") {
  // Built by hand: base_ticks, then a tick_bytes of 200 with 3 bytes behind it.
  std::string payload;
  wire::put_le<std::uint64_t>(payload, 0);
  wire::put_varint(payload, 200);
  payload += "\x00\x02\x04";
  TlogBuilder hand;
  hand.site(1, "step {}", {kI32});
  hand.raw_frame(schema::FrameType::records_columnar, payload);
  hand.record(1, val::i32_args(5));
  Decoded d = decode(hand.finish());
  CHECK(d.messages == std::vector<std::string>{"step 5"});
  REQUIRE(d.problems.size() == 1);
  CHECK(any_problem_says(d, "too short for its tick column"));
}

TEST_CASE("the example frame of FORMAT.md §7.4 decodes to the records the spec says") {
  const unsigned char frame[] = {0xD7, 0x54, 0x46, 0xB1, 0x06, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0x28,
                                 0x00, 0x00, 0x00, 0xF2, 0x61, 0x59, 0x40, 0x8C, 0x05, 0xB5, 0x2C, 0x33, 0x9F,
                                 0x5E, 0x0A, 0x27, 0x0B, 0x00, 0x00, 0x05, 0x00, 0x00, 0xD0, 0x28, 0x19, 0x00,
                                 0x00, 0x02, 0x02, 0x05, 0x03, 0x01, 0x04, 0x07, 0x00, 0x00, 0x00, 0x03, 0x01,
                                 0x04, 0x01, 0x00, 0x00, 0x00, 0x03, 0x02, 0x04, 0x08, 0x00, 0x00, 0x00};
  TlogBuilder file;
  file.site(3, "value {}", {kI32});
  std::string bytes = file.finish() + std::string(reinterpret_cast<const char*>(frame), sizeof frame);
  std::vector<std::string> messages;
  std::vector<std::uint64_t> ticks;
  std::vector<std::uint32_t> threads;
  std::vector<std::string> problems;
  terse::decoder::StreamDecoder decoder("<test>",
                                        [&](const terse::decoder::Problem& p) { problems.push_back(p.what); });
  decoder.decode_bytes(bytes, [&](const terse::decoder::Record& r) {
    std::string message;
    terse::decoder::render_message(r, message);
    messages.push_back(message);
    ticks.push_back(r.ticks);
    threads.push_back(r.thread->index);
  });
  CHECK(messages == std::vector<std::string>{"value 7", "value 8", "value 16"});
  CHECK(ticks == std::vector<std::uint64_t>{12262305603379u, 12262305605979u, 12262305605966u});
  CHECK(threads == std::vector<std::uint32_t>{1, 1, 2});
  // The builder's frames carry no numbers, so numbers 1 to 4 are all that is amiss.
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("frames 1 to 4 are missing") != std::string::npos);
}
