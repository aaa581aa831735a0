// The format pieces both sides share (schema/terse/): frame headers, the
// preamble, dictionary entries, file names and the timing contract.
#include <string>

#include <catch2/catch.hpp>

#include <terse/crc.hpp>
#include <terse/dictionary.hpp>
#include <terse/file_name.hpp>
#include <terse/frame.hpp>
#include <terse/timing.hpp>
#include <terse/wire.hpp>

using namespace terse;

TEST_CASE("a frame header decodes to the fields it was encoded from") {
  schema::FrameHeader header;
  header.type = static_cast<std::uint8_t>(schema::FrameType::records);
  header.flags = schema::kFrameFlagZstd;
  header.stored_size = 0x01020304;
  header.raw_size = 0x0A0B0C0D;
  header.payload_crc = 0xDEADBEEF;
  unsigned char bytes[schema::kFrameHeaderSize];
  schema::encode_frame_header(header, bytes);
  CHECK(schema::frame_sync_at(bytes));
  CHECK(schema::frame_header_crc_ok(bytes));
  schema::FrameHeader back = schema::decode_frame_header(bytes);
  CHECK(back.type == header.type);
  CHECK(back.flags == header.flags);
  CHECK(back.reserved == 0);
  CHECK(back.stored_size == header.stored_size);
  CHECK(back.raw_size == header.raw_size);
  CHECK(back.payload_crc == header.payload_crc);
}

TEST_CASE("a frame header is laid out as FORMAT.md §3 says, little-endian") {
  schema::FrameHeader header;
  header.type = 3;
  header.stored_size = 0x11223344;
  header.raw_size = 0x55667788;
  header.payload_crc = 0x99AABBCC;
  unsigned char b[schema::kFrameHeaderSize];
  schema::encode_frame_header(header, b);
  const unsigned char expected_head[] = {0xD7, 'T',  'F',  0xB1, 3,    0,    0,    0,    0x44, 0x33,
                                         0x22, 0x11, 0x88, 0x77, 0x66, 0x55, 0xCC, 0xBB, 0xAA, 0x99};
  CHECK(std::string(reinterpret_cast<const char*>(b), 20) ==
        std::string(reinterpret_cast<const char*>(expected_head), 20));
  CHECK(wire::get_le<std::uint32_t>(b + 20) == wire::crc32c(b, 20));
}

TEST_CASE("a damaged frame header fails its checksum") {
  unsigned char b[schema::kFrameHeaderSize];
  schema::encode_frame_header(schema::FrameHeader{}, b);
  b[9] ^= 1;
  CHECK_FALSE(schema::frame_header_crc_ok(b));
  b[0] ^= 1;
  CHECK_FALSE(schema::frame_sync_at(b));
}

TEST_CASE("the preamble carries the magic, the versions and its checksum") {
  unsigned char b[schema::kPreambleSize];
  schema::encode_preamble(schema::Preamble{}, b);
  CHECK(std::memcmp(b, schema::kMagic, sizeof schema::kMagic) == 0);
  CHECK(schema::preamble_crc_ok(b));
  schema::Preamble p = schema::decode_preamble(b);
  CHECK(p.version_major == schema::kVersionMajor);
  CHECK(p.version_minor == schema::kVersionMinor);
  CHECK(wire::get_le<std::uint16_t>(b + 8) == schema::kVersionMajor);
  b[10] ^= 1;
  CHECK_FALSE(schema::preamble_crc_ok(b));
}

TEST_CASE("file names parse into prefix, date and sequence") {
  auto name = schema::parse_file_name("app-20260101-001.tlog");
  REQUIRE(name);
  CHECK(name->prefix == "app");
  CHECK(name->date == "20260101");
  CHECK(name->sequence == 1);

  auto dashed = schema::parse_file_name("my-app-v2-20261231-1000.tlog");
  REQUIRE(dashed);
  CHECK(dashed->prefix == "my-app-v2");
  CHECK(dashed->date == "20261231");
  CHECK(dashed->sequence == 1000);

  auto dated = schema::parse_file_name("app-20260101-20260102-7.tlog");
  REQUIRE(dated);
  CHECK(dated->prefix == "app-20260101");
  CHECK(dated->date == "20260102");
}

TEST_CASE("a sequence number has one to nine digits") {
  auto nine = schema::parse_file_name("app-20260101-999999999.tlog");
  REQUIRE(nine);
  CHECK(nine->sequence == schema::kMaxSequence);
  CHECK_FALSE(schema::parse_file_name("app-20260101-1000000000.tlog"));
  CHECK_FALSE(schema::parse_file_name("app-20260101-0000000001.tlog"));
  CHECK_FALSE(schema::parse_file_name("app-20260101-.tlog"));
  REQUIRE(schema::parse_file_name("app-20260101-7.tlog"));
}

TEST_CASE("names that are not log files' do not parse") {
  CHECK_FALSE(schema::parse_file_name("app-20260101-001.log"));
  CHECK_FALSE(schema::parse_file_name("app-20260101-001.tlog.gz"));
  CHECK_FALSE(schema::parse_file_name("app-20260101-001.TLOG"));
  CHECK_FALSE(schema::parse_file_name("app-2026010-001.tlog"));
  CHECK_FALSE(schema::parse_file_name("app-202601011-001.tlog"));
  CHECK_FALSE(schema::parse_file_name("app20260101-001.tlog"));
  CHECK_FALSE(schema::parse_file_name("app-2026o101-001.tlog"));
  CHECK_FALSE(schema::parse_file_name("app-20260101-0x1.tlog"));
  CHECK_FALSE(schema::parse_file_name(".tlog"));
  CHECK_FALSE(schema::parse_file_name(""));
  auto empty_prefix = schema::parse_file_name("-20260101-001.tlog");
  REQUIRE(empty_prefix);
  CHECK(empty_prefix->prefix.empty());
}

TEST_CASE("file names format with at least three digits and parse back") {
  CHECK(schema::format_file_name("app", "20260101", 1) == "app-20260101-001.tlog");
  CHECK(schema::format_file_name("app", "20260101", 42) == "app-20260101-042.tlog");
  CHECK(schema::format_file_name("app", "20260101", 1000) == "app-20260101-1000.tlog");
  CHECK(schema::format_file_name("a-b", "20260101", schema::kMaxSequence) == "a-b-20260101-999999999.tlog");
  for (std::uint32_t sequence : {1u, 99u, 100u, 12345u, schema::kMaxSequence}) {
    std::string file = schema::format_file_name("x-y", "19991231", sequence);
    auto back = schema::parse_file_name(file);
    REQUIRE(back);
    CHECK(back->prefix == "x-y");
    CHECK(back->date == "19991231");
    CHECK(back->sequence == sequence);
  }
}

TEST_CASE("dictionary entries encode as FORMAT.md §6 says, into bounded memory") {
  const std::uint8_t tags[] = {0x03, 0x0F};
  schema::SiteEntry site{300, 2, 17, "a.cpp", "x {} {}", tags, 2, "\x01"};
  std::string expected;
  std::string body;
  wire::put_varint(body, 300);
  body.push_back(2);
  wire::put_varint(body, 17);
  wire::put_bytes(body, "a.cpp");
  wire::put_bytes(body, "x {} {}");
  wire::put_varint(body, 2);
  body.append("\x03\x0F\x01", 3);
  expected.push_back(static_cast<char>(schema::DictKind::site));
  wire::put_varint(expected, body.size());
  expected += body;

  REQUIRE(schema::entry_size(site) == expected.size());
  std::string out(expected.size(), '\0');
  char* end = schema::encode_entry(site, out.data(), out.data() + out.size());
  CHECK(end == out.data() + out.size());
  CHECK(out == expected);
  // One byte short: nothing is written.
  std::string small(expected.size() - 1, '?');
  CHECK(schema::encode_entry(site, small.data(), small.data() + small.size()) == nullptr);
  CHECK(small == std::string(expected.size() - 1, '?'));
}

TEST_CASE("thread entries hold index, OS thread id and name") {
  schema::ThreadEntry thread{5, 123456, "worker"};
  std::string expected;
  expected.push_back(static_cast<char>(schema::DictKind::thread));
  std::string body;
  wire::put_varint(body, 5);
  wire::put_varint(body, 123456);
  wire::put_bytes(body, "worker");
  wire::put_varint(expected, body.size());
  expected += body;
  char out[64];
  char* end = schema::encode_entry(thread, out, out + sizeof out);
  REQUIRE(end != nullptr);
  CHECK(std::string(out, end) == expected);
  CHECK(schema::entry_size(thread) == expected.size());
}

TEST_CASE("the follower's grace is derived from the writer's batch delay") {
  STATIC_REQUIRE(schema::kMaxBatchDelay == std::chrono::milliseconds(50));
  STATIC_REQUIRE(schema::kFollowGrace == std::chrono::milliseconds(200));
  STATIC_REQUIRE(schema::kFollowGrace > schema::kMaxBatchDelay);
}
