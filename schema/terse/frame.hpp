// The preamble (FORMAT.md §2) and the frame header (FORMAT.md §3) as named
// fields: the writer, its crash path and the reader all go through these,
// so the byte layout is spelled out here and nowhere else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <terse/crc.hpp>
#include <terse/schema.hpp>
#include <terse/wire.hpp>

namespace terse::schema {

// Where each field sits; nothing outside this header needs an offset.
namespace layout {
inline constexpr std::size_t kPreambleMajor = 8;
inline constexpr std::size_t kPreambleMinor = 10;
static_assert(kPreambleCrcOffset == 12 && kPreambleSize == 16);

inline constexpr std::size_t kFrameType = 4;
inline constexpr std::size_t kFrameFlags = 5;
inline constexpr std::size_t kFrameReserved = 6;
inline constexpr std::size_t kFrameStoredSize = 8;
inline constexpr std::size_t kFrameRawSize = 12;
inline constexpr std::size_t kFramePayloadCrc = 16;
static_assert(kFrameHeaderCrcOffset == 20 && kFrameHeaderSize == 24);
}  // namespace layout

// A file is 2.0 unless it is sealed (FORMAT.md §11), which makes it 3.0.
struct Preamble {
  std::uint16_t version_major = kUnsealedVersionMajor;
  std::uint16_t version_minor = kVersionMinor;
};

// Magic, versions and the preamble checksum.
inline void encode_preamble(const Preamble& preamble, unsigned char (&out)[kPreambleSize]) {
  std::memcpy(out, kMagic, sizeof kMagic);
  wire::store_le<std::uint16_t>(out + layout::kPreambleMajor, preamble.version_major);
  wire::store_le<std::uint16_t>(out + layout::kPreambleMinor, preamble.version_minor);
  wire::store_le<std::uint32_t>(out + kPreambleCrcOffset, wire::crc32c(out, kPreambleCrcOffset));
}

// `p` holds kPreambleSize bytes; the magic is the caller's to check.
inline Preamble decode_preamble(const unsigned char* p) {
  return {wire::get_le<std::uint16_t>(p + layout::kPreambleMajor),
          wire::get_le<std::uint16_t>(p + layout::kPreambleMinor)};
}

inline bool preamble_crc_ok(const unsigned char* p) {
  return wire::crc32c(p, kPreambleCrcOffset) == wire::get_le<std::uint32_t>(p + kPreambleCrcOffset);
}

// Every field of a frame header but the sync marker and the header checksum,
// which encoding supplies and decoding has checked.
struct FrameHeader {
  std::uint8_t type = 0;  // a FrameType; a reader keeps unknown values to skip them
  std::uint8_t flags = 0;
  std::uint16_t reserved = 0;
  std::uint32_t stored_size = 0;
  std::uint32_t raw_size = 0;
  std::uint32_t payload_crc = 0;
};

inline void encode_frame_header(const FrameHeader& header, unsigned char (&out)[kFrameHeaderSize]) {
  std::memcpy(out, kFrameSync, sizeof kFrameSync);
  out[layout::kFrameType] = header.type;
  out[layout::kFrameFlags] = header.flags;
  wire::store_le<std::uint16_t>(out + layout::kFrameReserved, header.reserved);
  wire::store_le<std::uint32_t>(out + layout::kFrameStoredSize, header.stored_size);
  wire::store_le<std::uint32_t>(out + layout::kFrameRawSize, header.raw_size);
  wire::store_le<std::uint32_t>(out + layout::kFramePayloadCrc, header.payload_crc);
  wire::store_le<std::uint32_t>(out + kFrameHeaderCrcOffset, wire::crc32c(out, kFrameHeaderCrcOffset));
}

// `p` holds at least the sync marker's bytes.
inline bool frame_sync_at(const unsigned char* p) { return std::memcmp(p, kFrameSync, sizeof kFrameSync) == 0; }

// `p` holds kFrameHeaderSize bytes.
inline bool frame_header_crc_ok(const unsigned char* p) {
  return wire::crc32c(p, kFrameHeaderCrcOffset) == wire::get_le<std::uint32_t>(p + kFrameHeaderCrcOffset);
}

// `p` holds kFrameHeaderSize bytes; the sync marker and header checksum are
// the caller's to check first.
inline FrameHeader decode_frame_header(const unsigned char* p) {
  FrameHeader header;
  header.type = p[layout::kFrameType];
  header.flags = p[layout::kFrameFlags];
  header.reserved = wire::get_le<std::uint16_t>(p + layout::kFrameReserved);
  header.stored_size = wire::get_le<std::uint32_t>(p + layout::kFrameStoredSize);
  header.raw_size = wire::get_le<std::uint32_t>(p + layout::kFrameRawSize);
  header.payload_crc = wire::get_le<std::uint32_t>(p + layout::kFramePayloadCrc);
  return header;
}

}  // namespace terse::schema
