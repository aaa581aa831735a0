// The format pieces both sides share (schema/terse/): frame headers, the
// preamble, dictionary entries, file names and the timing contract.
#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <terse/crc.hpp>
#include <terse/delta.hpp>
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
  CHECK(p.version_major == schema::kUnsealedVersionMajor);
  CHECK(p.version_minor == schema::kVersionMinor);
  CHECK(wire::get_le<std::uint16_t>(b + 8) == schema::kUnsealedVersionMajor);
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

namespace {

// FORMAT.md §7.1 one argument at a time, as plainly as it reads: the
// reference that the plan's wide loads and stores must agree with.
void reference_encode(const std::vector<std::uint8_t>& tags, std::string& args, std::vector<std::uint64_t>& previous) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < tags.size(); ++i) {
    auto tag = static_cast<schema::TypeTag>(tags[i]);
    auto width = static_cast<std::size_t>(std::max(schema::type_tag_size(tags[i]), 0));
    if (width == 0) {
      std::uint32_t header;
      std::memcpy(&header, args.data() + at, 4);
      at += 4 + (tag == schema::TypeTag::string ? schema::string_bytes_after(header) : header);
      continue;
    }
    if (tag == schema::TypeTag::f80 || tag == schema::TypeTag::f128) {
      at += width;
      continue;
    }
    std::uint64_t value = 0;
    std::memcpy(&value, args.data() + at, std::min<std::size_t>(width, 8));
    bool bits = tag == schema::TypeTag::f32 || tag == schema::TypeTag::f64;
    std::uint64_t mask = width == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * width)) - 1;
    std::uint64_t stored = (bits ? value ^ previous[i] : value - previous[i]) & mask;
    previous[i] = value;
    std::memcpy(args.data() + at, &stored, std::min<std::size_t>(width, 8));
    at += width;
  }
}

}  // namespace

TEST_CASE("a delta plan codes every argument kind as FORMAT.md §7.1 says, and decodes it back") {
  using schema::TypeTag;
  const std::vector<TypeTag> kinds{
      TypeTag::i8,     TypeTag::i16,  TypeTag::i32,     TypeTag::i64,       TypeTag::u8,        TypeTag::u16,
      TypeTag::u32,    TypeTag::u64,  TypeTag::f32,     TypeTag::f64,       TypeTag::f80,       TypeTag::boolean,
      TypeTag::string, TypeTag::f128, TypeTag::pointer, TypeTag::character, TypeTag::structured};
  std::mt19937_64 random(7);
  for (int site = 0; site < 400; ++site) {
    std::vector<std::uint8_t> tags(1 + random() % 8);
    for (auto& tag : tags) tag = static_cast<std::uint8_t>(kinds[random() % kinds.size()]);
    wire::DeltaPlan plan(tags.data(), tags.size());
    REQUIRE(plan.valid());
    std::vector<std::uint64_t> encoded_by(tags.size()), reference(tags.size()), decoded_by(tags.size()),
        followed_by(tags.size()), in_place_by(tags.size());
    for (int record = 0; record < 20; ++record) {
      // Values, then strings of every length up to past the inline copies'.
      std::string args;
      for (std::uint8_t tag : tags) {
        int width = schema::type_tag_size(tag);
        std::size_t length = width > 0 ? static_cast<std::size_t>(width) : random() % 41;
        if (width == 0) {
          auto header = static_cast<std::uint32_t>(length);
          args.append(reinterpret_cast<const char*>(&header), 4);
        }
        for (std::size_t b = 0; b < length; ++b) args.push_back(static_cast<char>(random() % 4 == 0 ? random() : b));
      }
      INFO("site " << site << " record " << record << " of " << args.size() << " bytes");
      std::string expected = args;
      reference_encode(tags, expected, reference);
      std::string encoded(args.size(), '\0');
      REQUIRE(plan.apply<wire::Delta::encode>(reinterpret_cast<unsigned char*>(encoded.data()),
                                              reinterpret_cast<const unsigned char*>(args.data()), args.size(),
                                              encoded_by.data()));
      CHECK(encoded == expected);
      CHECK(encoded_by == reference);
      std::string in_place = args;
      REQUIRE(plan.apply<wire::Delta::encode>(reinterpret_cast<unsigned char*>(in_place.data()), in_place.size(),
                                              in_place_by.data()));
      CHECK(in_place == expected);
      REQUIRE(plan.follow(reinterpret_cast<const unsigned char*>(encoded.data()), encoded.size(), followed_by.data()));
      CHECK(followed_by == reference);
      REQUIRE(plan.apply<wire::Delta::decode>(reinterpret_cast<unsigned char*>(encoded.data()), encoded.size(),
                                              decoded_by.data()));
      CHECK(encoded == args);
      // A record cut short never passes.
      if (!args.empty())
        CHECK_FALSE(plan.follow(reinterpret_cast<const unsigned char*>(args.data()), args.size() - 1,
                                std::vector<std::uint64_t>(tags.size()).data()));
    }
  }
}

namespace {

template <schema::TypeTag... Kinds>
constexpr std::array<std::uint8_t, sizeof...(Kinds)> kTags{static_cast<std::uint8_t>(Kinds)...};

// Random values; strings (and structured values) of every length up to past
// the inline copies', and strings that are null, interned or cut.
std::string random_args(const std::uint8_t* tags, std::size_t count, std::mt19937_64& random) {
  std::string args;
  for (std::size_t i = 0; i < count; ++i) {
    int width = schema::type_tag_size(tags[i]);
    std::size_t length = width > 0 ? static_cast<std::size_t>(width) : random() % 41;
    if (width == 0) {
      auto header = static_cast<std::uint32_t>(length);
      bool string = tags[i] == static_cast<std::uint8_t>(schema::TypeTag::string);
      switch (string ? random() % 6 : 0) {
        case 1:
          header = schema::kStringNull;
          length = 0;
          break;
        case 2:
          header = schema::kStringInterned;
          length = 4;
          break;
        case 3: {  // cut: a prefix, then the kept bytes' own header
          auto cut = schema::kStringCut;
          args.append(reinterpret_cast<const char*>(&cut), 4);
          args.append(schema::kStringCutPrefix - 4, 'c');
          break;
        }
        default:
          break;
      }
      args.append(reinterpret_cast<const char*>(&header), 4);
    }
    for (std::size_t b = 0; b < length; ++b) args.push_back(static_cast<char>(random() % 4 == 0 ? random() : b));
  }
  return args;
}

// A call site's unrolled coder against the plan the decoder reads with.
template <auto Tags>
void check_unrolled_coder(std::mt19937_64& random) {
  wire::DeltaPlan plan(Tags.data(), Tags.size());
  REQUIRE(plan.valid());
  std::vector<std::uint64_t> by_plan(Tags.size()), unrolled(Tags.size()), scratch(Tags.size());
  for (int record = 0; record < 40; ++record) {
    std::string args = random_args(Tags.data(), Tags.size(), random);
    INFO(Tags.size() << " arguments, record " << record << " of " << args.size() << " bytes");
    std::string expected(args.size(), '\0');
    std::string coded(args.size(), '\0');
    const auto* in = reinterpret_cast<const unsigned char*>(args.data());
    REQUIRE(plan.apply<wire::Delta::encode>(reinterpret_cast<unsigned char*>(expected.data()), in, args.size(),
                                            by_plan.data()));
    REQUIRE(
        wire::encode_deltas<Tags>(reinterpret_cast<unsigned char*>(coded.data()), in, args.size(), unrolled.data()));
    CHECK(coded == expected);
    CHECK(unrolled == by_plan);
    // Bytes that do not match the tags: short by one, or one too many.
    if (!args.empty())
      CHECK_FALSE(wire::encode_deltas<Tags>(reinterpret_cast<unsigned char*>(coded.data()), in, args.size() - 1,
                                            scratch.data()));
    args.push_back('x');
    coded.push_back('\0');
    CHECK_FALSE(wire::encode_deltas<Tags>(reinterpret_cast<unsigned char*>(coded.data()),
                                          reinterpret_cast<const unsigned char*>(args.data()), args.size(),
                                          scratch.data()));
  }
}

template <schema::TypeTag... Kinds>
void check_each_alone(std::mt19937_64& random) {
  (check_unrolled_coder<kTags<Kinds>>(random), ...);
}

}  // namespace

TEST_CASE("a call site's unrolled coder writes the bytes the delta plan writes, for every argument kind") {
  using enum schema::TypeTag;
  std::mt19937_64 random(11);
  check_each_alone<i8, i16, i32, i64, u8, u16, u32, u64, boolean, character, f32, f64, f80, f128, string, pointer,
                   structured>(random);
  check_unrolled_coder<kTags<>>(random);
  check_unrolled_coder<kTags<i32, f64, i32, string>>(random);  // the benchmarks' record
  check_unrolled_coder<kTags<i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, pointer, boolean, character>>(random);
  check_unrolled_coder<kTags<u8, f80, i32, f128, u16, f64>>(random);
  check_unrolled_coder<kTags<string, i64, string, string, f32, structured, u8>>(random);
  check_unrolled_coder<kTags<structured, string, u16, i8, string, f64, f80>>(random);
}
