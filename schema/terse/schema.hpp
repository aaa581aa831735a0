// Constants of the .tlog file format. See schema/FORMAT.md: this header
// states nothing that the spec does not.
#pragma once

#include <cstddef>
#include <cstdint>

namespace terse::schema {

// FORMAT.md §2 "Preamble".
inline constexpr unsigned char kMagic[8] = {0x89, 'T', 'L', 'O', 'G', '\r', '\n', 0x1A};
inline constexpr std::size_t kPreambleSize = 16;
inline constexpr std::size_t kPreambleCrcOffset = 12;
inline constexpr std::uint16_t kVersionMajor = 1;
inline constexpr std::uint16_t kVersionMinor = 0;

// FORMAT.md §3 "Frames".
inline constexpr unsigned char kFrameSync[4] = {0xD7, 'T', 'F', 0xB1};
inline constexpr std::size_t kFrameHeaderSize = 24;
inline constexpr std::size_t kFrameHeaderCrcOffset = 20;
inline constexpr std::uint32_t kMaxFrameRawSize = 64u << 20;

enum class FrameType : std::uint8_t {
  info = 1,         // FORMAT.md §4
  calibration = 2,  // FORMAT.md §5
  dictionary = 3,   // FORMAT.md §6
  records = 4,      // FORMAT.md §7
};

inline constexpr std::uint8_t kFrameFlagZstd = 0x01;
inline constexpr std::uint8_t kFrameFlagsKnown = kFrameFlagZstd;

// FORMAT.md §4: info entries.
enum class InfoKey : std::uint8_t {
  writer = 1,
  pid = 2,
  host = 3,
  program = 4,
  file_sequence = 5,
  clock = 6,
  created_unix_ns = 7,
};

// FORMAT.md §6: dictionary entries.
enum class DictKind : std::uint8_t {
  site = 1,
  thread = 2,
};

// FORMAT.md §7: site id 0 marks a control record; its first argument byte is the kind.
inline constexpr std::uint32_t kControlSiteId = 0;
enum class ControlKind : std::uint8_t {
  dropped = 1,
};

// FORMAT.md §8: string arguments store their length in a u32 whose top bit
// says the writer cut the string short.
inline constexpr std::uint32_t kStringTruncatedBit = 0x80000000u;
inline constexpr std::uint32_t kStringLengthMask = 0x7FFFFFFFu;
// A null `const char*` (no bytes follow).
inline constexpr std::uint32_t kStringNull = 0xFFFFFFFFu;

// FORMAT.md §8, the type-tag table. One list feeds both sides: the tag value,
// its name and the number of bytes its value occupies (0: length-prefixed).
#define TERSE_SCHEMA_TYPE_TAGS(X) \
  X(i8, 0x01, 1)                  \
  X(i16, 0x02, 2)                 \
  X(i32, 0x03, 4)                 \
  X(i64, 0x04, 8)                 \
  X(u8, 0x05, 1)                  \
  X(u16, 0x06, 2)                 \
  X(u32, 0x07, 4)                 \
  X(u64, 0x08, 8)                 \
  X(boolean, 0x09, 1)             \
  X(character, 0x0A, 1)           \
  X(f32, 0x0B, 4)                 \
  X(f64, 0x0C, 8)                 \
  X(f80, 0x0D, 10)                \
  X(f128, 0x0E, 16)               \
  X(string, 0x0F, 0)              \
  X(pointer, 0x10, 8)

enum class TypeTag : std::uint8_t {
#define TERSE_X(name, value, size) name = value,
  TERSE_SCHEMA_TYPE_TAGS(TERSE_X)
#undef TERSE_X
};

// Fixed byte size of a tag's value; 0 for length-prefixed strings, -1 for unknown tags.
constexpr int type_tag_size(std::uint8_t tag) {
  switch (tag) {
#define TERSE_X(name, value, size) \
  case value:                      \
    return size;
    TERSE_SCHEMA_TYPE_TAGS(TERSE_X)
#undef TERSE_X
    default:
      return -1;
  }
}

// FORMAT.md §6: level values in site entries.
#define TERSE_SCHEMA_LEVELS(X) \
  X(trace, 0)                  \
  X(debug, 1)                  \
  X(info, 2)                   \
  X(warn, 3)                   \
  X(error, 4)                  \
  X(critical, 5)

inline constexpr int kLevelCount = 6;

constexpr const char* level_name(std::uint8_t level) {
  switch (level) {
#define TERSE_X(name, value) \
  case value:                \
    return #name;
    TERSE_SCHEMA_LEVELS(TERSE_X)
#undef TERSE_X
    default:
      return "unknown";
  }
}

}  // namespace terse::schema
