// The writer's frame encoder on its own: headers the reader accepts,
// compression only where it pays, dictionaries split at entry boundaries,
// and the opening frames of a file.
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <terse/crc.hpp>
#include <terse/dictionary.hpp>
#include <terse/frame.hpp>
#include <terse/wire.hpp>

#include "frames.hpp"
#include "test_support.hpp"

using terse::detail::FrameEncoder;
namespace schema = terse::schema;
namespace wire = terse::wire;

namespace {

struct Walked {
  schema::FrameHeader header;
  std::string_view stored;
};

// Every frame in `bytes` from `at` on, each checked as a reader would.
std::vector<Walked> walk(const std::string& bytes, std::size_t at = 0) {
  std::vector<Walked> frames;
  while (at < bytes.size()) {
    REQUIRE(bytes.size() - at >= schema::kFrameHeaderSize);
    const auto* h = reinterpret_cast<const unsigned char*>(bytes.data() + at);
    REQUIRE(schema::frame_sync_at(h));
    REQUIRE(schema::frame_header_crc_ok(h));
    Walked w{schema::decode_frame_header(h), {}};
    REQUIRE(bytes.size() - at - schema::kFrameHeaderSize >= w.header.stored_size);
    w.stored = std::string_view(bytes).substr(at + schema::kFrameHeaderSize, w.header.stored_size);
    CHECK(wire::crc32c(w.stored.data(), w.stored.size()) == w.header.payload_crc);
    frames.push_back(w);
    at += schema::kFrameHeaderSize + w.header.stored_size;
  }
  return frames;
}

// A records payload as the writer numbers it (FORMAT.md §3.1): base ticks,
// the frame-number control record, then the records given.
std::string numbered_records(std::string_view payload, std::uint64_t number) {
  std::string out(payload.substr(0, 8));
  std::string args(1, static_cast<char>(schema::ControlKind::frame_number));
  wire::put_varint(args, number);
  wire::put_varint(out, schema::kControlSiteId);
  wire::put_varint(out, 0);
  wire::put_varint(out, 0);
  wire::put_bytes(out, args);
  out.append(payload.substr(8));
  return out;
}

// A dictionary frame's entries without its leading frame-number entry.
std::string_view entries_of(std::string_view stored) {
  wire::ByteReader r(stored);
  std::uint8_t kind;
  std::string_view body;
  REQUIRE(r.le(kind));
  REQUIRE(kind == static_cast<std::uint8_t>(schema::DictKind::frame_number));
  REQUIRE(r.length_prefixed(body, stored.size()));
  return stored.substr(static_cast<std::size_t>(r.position() - reinterpret_cast<const unsigned char*>(stored.data())));
}

}  // namespace

TEST_CASE("level 0 stores the payload as it is") {
  FrameEncoder frames;
  std::string out;
  std::string payload(4096, 'a');
  frames.append_frame(out, schema::FrameType::records, payload, 0);
  auto walked = walk(out);
  REQUIRE(walked.size() == 1);
  CHECK(walked[0].header.type == static_cast<std::uint8_t>(schema::FrameType::records));
  CHECK(walked[0].header.flags == 0);
  CHECK(walked[0].header.raw_size == walked[0].stored.size());
  CHECK(walked[0].stored == numbered_records(payload, 0));
}

TEST_CASE("a compressible payload is compressed, a short or random one is not") {
  FrameEncoder frames;
  std::string out;
  std::string repetitive(4096, 'a');
  frames.append_frame(out, schema::FrameType::records, repetitive, 1);
  // 50 bytes and the frame number's 6: still below the 64 worth compressing.
  frames.append_frame(out, schema::FrameType::records, std::string(50, 'b'), 1);
  std::string noise;
  std::uint32_t x = 12345;
  for (int i = 0; i < 256; ++i) noise.push_back(static_cast<char>((x = x * 1664525u + 1013904223u) >> 24));
  frames.append_frame(out, schema::FrameType::records, noise, 1);
  auto walked = walk(out);
  REQUIRE(walked.size() == 3);
  CHECK(walked[0].header.flags == schema::kFrameFlagZstd);
  CHECK(walked[0].header.raw_size == numbered_records(repetitive, 0).size());
  CHECK(walked[0].header.stored_size < 4096);
  CHECK(walked[1].header.flags == 0);
  CHECK(walked[2].header.flags == 0);
  CHECK(walked[2].stored == numbered_records(noise, 2));
}

TEST_CASE("dictionary frames are split at entry boundaries near 1 MiB") {
  FrameEncoder frames;
  std::string entries;
  std::string file(100'000, 'f');
  for (std::uint32_t id = 1; id <= 30; ++id) {
    schema::SiteEntry site{id, 2, id, file, "message {}", nullptr, 0, {}};
    std::size_t at = entries.size();
    entries.resize(at + schema::entry_size(site));
    schema::encode_entry(site, entries.data() + at, entries.data() + entries.size());
  }
  std::string out;
  frames.append_dictionary(out, entries, 0);
  auto walked = walk(out);
  REQUIRE(walked.size() == 3);
  std::string joined;
  for (const auto& w : walked) {
    CHECK(w.header.type == static_cast<std::uint8_t>(schema::FrameType::dictionary));
    CHECK(w.stored.size() <= (1u << 20));
    std::string_view stored = entries_of(w.stored);
    wire::ByteReader r(stored);  // whole entries only
    while (!r.empty()) {
      std::uint8_t kind;
      std::string_view body;
      REQUIRE(r.le(kind));
      REQUIRE(r.length_prefixed(body, stored.size()));
    }
    joined.append(stored);
  }
  CHECK(joined == entries);
}

TEST_CASE("a file opens with its preamble, info and calibration") {
  FrameEncoder frames;
  std::string out;
  terse::detail::Calibration calibration{123, 456, 2.5e9};
  frames.append_file_start(out, 7, calibration);
  REQUIRE(out.size() > schema::kPreambleSize);
  const auto* p = reinterpret_cast<const unsigned char*>(out.data());
  CHECK(std::memcmp(p, schema::kMagic, sizeof schema::kMagic) == 0);
  CHECK(schema::preamble_crc_ok(p));
  CHECK(schema::decode_preamble(p).version_major ==
        schema::kUnsealedVersionMajor);  // a file not sealed (FORMAT.md §11)
  auto walked = walk(out, schema::kPreambleSize);
  REQUIRE(walked.size() == 2);
  CHECK(walked[0].header.type == static_cast<std::uint8_t>(schema::FrameType::info));
  CHECK(walked[1].header.type == static_cast<std::uint8_t>(schema::FrameType::calibration));
  REQUIRE(walked[1].stored.size() == 25);  // and frame number 1 (FORMAT.md §3.1)
  CHECK(walked[1].stored[24] == 1);
  CHECK(wire::get_le<std::uint64_t>(reinterpret_cast<const unsigned char*>(walked[1].stored.data())) == 123);
  // The file decodes on its own.
  auto decoded = terse::test::decode_bytes(out);
  CHECK(decoded.intact());
  CHECK(decoded.lines.empty());
}

TEST_CASE("frames are numbered from the info frame on, and a write that failed gives its numbers back") {
  FrameEncoder frames;
  std::string out;
  terse::detail::Calibration calibration{123, 456, 2.5e9};
  frames.append_file_start(out, 1, calibration);
  frames.keep_numbers();
  std::string records(16, '\0');
  std::string lost;
  frames.append_frame(lost, schema::FrameType::records, records, 0);
  frames.discard_numbers();
  std::string batch;
  frames.append_calibration(batch, calibration);
  frames.append_frame(batch, schema::FrameType::records, records, 0);
  CHECK(lost.substr(schema::kFrameHeaderSize) == numbered_records(records, 2));
  auto walked = walk(batch);
  REQUIRE(walked.size() == 2);
  CHECK(walked[0].stored[24] == 2);
  CHECK(walked[1].stored == numbered_records(records, 3));
  auto decoded = terse::test::decode_bytes(out + batch);
  CHECK(decoded.intact());
}

namespace {

// FORMAT.md §7.4 by hand: the rows of a columnar payload with their tick
// deltas put back, as the rows of a records payload.
std::string rows_of_columnar(std::string_view payload) {
  wire::ByteReader r(payload);
  std::string_view base, ticks_column;
  REQUIRE(r.bytes(8, base));
  REQUIRE(r.length_prefixed(ticks_column, payload.size()));
  wire::ByteReader ticks(ticks_column);
  std::string rows(base);
  while (!r.empty()) {
    std::uint64_t site = 0, thread = 0, delta = 0;
    std::string_view args;
    REQUIRE((r.varint(site) && r.varint(thread) && ticks.varint(delta) && r.length_prefixed(args, payload.size())));
    wire::put_varint(rows, site);
    wire::put_varint(rows, thread);
    wire::put_varint(rows, delta);
    wire::put_bytes(rows, args);
  }
  CHECK(ticks.empty());
  return rows;
}

std::string records_payload(int count, std::uint64_t delta, std::size_t args_size) {
  std::string rows;
  wire::put_le<std::uint64_t>(rows, 123456789);
  for (int i = 0; i < count; ++i) {
    wire::put_varint(rows, 5 + static_cast<std::uint64_t>(i % 3));
    wire::put_varint(rows, static_cast<std::uint64_t>(i % 2));
    wire::put_varint(rows, delta + static_cast<std::uint64_t>(i));
    wire::put_bytes(rows, std::string(args_size, static_cast<char>('a' + i % 26)));
  }
  return rows;
}

}  // namespace

TEST_CASE("records frames are columnar, whatever share of their bytes the ticks take") {
  FrameEncoder encoder;
  std::string out;
  encoder.append_file_start(out, 0, {});
  std::size_t opening = out.size();
  // Rows of long arguments; rows that are mostly ticks (ten-byte deltas,
  // no arguments), which outgrow the room the first frame left for them;
  // then long arguments again, after a frame of many ticks.
  std::vector<std::string> payloads{records_payload(2000, 3, 300), records_payload(50000, 1ull << 62, 0),
                                    records_payload(3000, 1, 40), records_payload(1, 0, 0)};
  for (const auto& payload : payloads) encoder.append_records(out, schema::FrameType::records, payload, 0);
  auto frames = walk(out, opening);
  REQUIRE(frames.size() == payloads.size());
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    INFO("frame " << i);
    CHECK(frames[i].header.type == static_cast<std::uint8_t>(schema::FrameType::records_columnar));
    // The frame numbers: preamble and info frame 0, calibration 1, then these.
    CHECK(rows_of_columnar(frames[i].stored) == numbered_records(payloads[i], 2 + i));
  }
}

namespace {

// Rows of every shape a batch holds, mixed: ids, thread indexes and deltas
// of one to ten varint bytes, arguments from none to a few hundred bytes.
std::string mixed_records_payload(int count, std::uint32_t seed) {
  std::string rows;
  wire::put_le<std::uint64_t>(rows, 987654321);
  std::uint64_t state = seed;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  for (int i = 0; i < count; ++i) {
    wire::put_varint(rows, next() % 3 == 0 ? next() : next() % 100);
    wire::put_varint(rows, next() % 5 == 0 ? next() << 20 : next() % 8);
    wire::put_varint(rows, next() % 7 == 0 ? ~std::uint64_t{0} - next() : next() % 300);
    std::size_t args_size = next() % 4 == 0 ? next() % 400 : next() % 40;
    wire::put_bytes(rows, std::string(args_size, static_cast<char>('a' + i % 26)));
  }
  return rows;
}

}  // namespace

TEST_CASE("records frames are columnar for rows of every shape, and a damaged payload is stored as it is") {
  FrameEncoder encoder;
  std::string out;
  encoder.append_file_start(out, 0, {});
  std::size_t opening = out.size();
  std::vector<std::string> payloads;
  for (std::uint32_t seed = 1; seed <= 20; ++seed)
    payloads.push_back(mixed_records_payload(static_cast<int>(seed * 7), seed));
  // A last row whose arguments run past the payload's end, and one whose
  // site id never ends: neither may be read past, both are kept whole.
  std::string overrun = mixed_records_payload(50, 99);
  wire::put_varint(overrun, 3);
  wire::put_varint(overrun, 0);
  wire::put_varint(overrun, 1);
  wire::put_varint(overrun, 100);
  overrun.append(10, 'x');
  std::string endless = mixed_records_payload(50, 98) + std::string(80, '\xff');
  payloads.push_back(overrun);
  payloads.push_back(endless);
  for (const auto& payload : payloads) encoder.append_records(out, schema::FrameType::records, payload, 0);
  auto frames = walk(out, opening);
  REQUIRE(frames.size() == payloads.size());
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    INFO("frame " << i);
    std::string numbered = numbered_records(payloads[i], 2 + i);
    if (i + 2 < payloads.size()) {
      CHECK(frames[i].header.type == static_cast<std::uint8_t>(schema::FrameType::records_columnar));
      CHECK(rows_of_columnar(frames[i].stored) == numbered);
    } else {
      CHECK(frames[i].header.type == static_cast<std::uint8_t>(schema::FrameType::records));
      CHECK(frames[i].stored == numbered);
    }
  }
}

TEST_CASE("records in columns make the frame their payload makes, in place or copied") {
  for (std::uint32_t seed = 1; seed <= 10; ++seed) {
    INFO("seed " << seed);
    std::string payload = mixed_records_payload(static_cast<int>(seed * 13), seed);
    // The payload's columns by hand, as the collector leaves them.
    wire::ByteReader r(payload);
    std::uint64_t base = 0;
    REQUIRE(r.le(base));
    std::string rows, ticks;
    while (!r.empty()) {
      std::uint64_t site = 0, thread = 0, delta = 0;
      std::string_view args;
      REQUIRE((r.varint(site) && r.varint(thread) && r.varint(delta) && r.length_prefixed(args, payload.size())));
      wire::put_varint(rows, site);
      wire::put_varint(rows, thread);
      wire::put_bytes(rows, args);
      wire::put_varint(ticks, delta);
    }
    auto frames_of = [&](auto append) {
      FrameEncoder encoder;
      std::string out;
      encoder.append_file_start(out, 0, {});
      std::size_t opening = out.size();
      append(encoder, out);
      append(encoder, out);  // a second frame, numbered after the first
      return out.substr(opening);
    };
    std::string split = frames_of([&](FrameEncoder& encoder, std::string& out) {
      encoder.append_records(out, schema::FrameType::records, payload, 0);
    });
    std::string in_place = frames_of([&](FrameEncoder& encoder, std::string& out) {
      std::string memory = std::string(terse::detail::kRowsHeadRoom, '?') + rows;
      encoder.append_columns(out, schema::FrameType::records, base, ticks, memory.data() + terse::detail::kRowsHeadRoom,
                             rows.size(), terse::detail::kRowsHeadRoom, 0);
    });
    std::string copied = frames_of([&](FrameEncoder& encoder, std::string& out) {
      std::string memory = rows;
      encoder.append_columns(out, schema::FrameType::records, base, ticks, memory.data(), rows.size(), 0, 0);
    });
    CHECK(in_place == split);
    CHECK(copied == split);
    auto frames = walk(split);
    REQUIRE(frames.size() == 2);
    CHECK(rows_of_columnar(frames[1].stored) == numbered_records(payload, 3));
  }
}
