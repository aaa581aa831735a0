// Constants of the .tlog file format. See schema/FORMAT.md: this header
// states nothing that the spec does not.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace terse::schema {

// FORMAT.md §2 "Preamble".
inline constexpr unsigned char kMagic[8] = {0x89, 'T', 'L', 'O', 'G', '\r', '\n', 0x1A};
inline constexpr std::size_t kPreambleSize = 16;
inline constexpr std::size_t kPreambleCrcOffset = 12;
inline constexpr std::uint16_t kVersionMajor = 3;
inline constexpr std::uint16_t kVersionMinor = 1;
// FORMAT.md §11: only a sealed file needs major 3; every other file is
// written as 2.1, which 2.x readers read (a 2.0 one skips patched strings).
inline constexpr std::uint16_t kUnsealedVersionMajor = 2;
// FORMAT.md §10: every major version from this one up to kVersionMajor is read.
inline constexpr std::uint16_t kOldestVersionMajor = 1;

// FORMAT.md §3 "Frames".
inline constexpr unsigned char kFrameSync[4] = {0xD7, 'T', 'F', 0xB1};
inline constexpr std::size_t kFrameHeaderSize = 24;
inline constexpr std::size_t kFrameHeaderCrcOffset = 20;
inline constexpr std::uint32_t kMaxFrameRawSize = 64u << 20;

enum class FrameType : std::uint8_t {
  info = 1,              // FORMAT.md §4
  calibration = 2,       // FORMAT.md §5
  dictionary = 3,        // FORMAT.md §6
  records = 4,           // FORMAT.md §7
  flight = 5,            // FORMAT.md §7.2 (1.5): records kept by the flight recorder
  records_columnar = 6,  // FORMAT.md §7.4 (2.0): the ticks of a records frame as one column
  flight_columnar = 7,   // FORMAT.md §7.4 (2.0): the same for a flight frame
  seal = 8,              // FORMAT.md §11.1 (3.0): the file key, sealed to its recipient
  end = 9,               // FORMAT.md §11.4 (3.0): a sealed file closed by its writer
};

// FORMAT.md §7.4: the payload of types 6 and 7 starts with a tick column.
constexpr bool is_columnar(FrameType type) {
  return type == FrameType::records_columnar || type == FrameType::flight_columnar;
}
constexpr bool holds_records(FrameType type) {
  return type == FrameType::records || type == FrameType::flight || is_columnar(type);
}
constexpr bool holds_flight(FrameType type) { return type == FrameType::flight || type == FrameType::flight_columnar; }

inline constexpr std::uint8_t kFrameFlagZstd = 0x01;
inline constexpr std::uint8_t kFrameFlagSealed = 0x02;  // FORMAT.md §11.2 (3.0)
inline constexpr std::uint8_t kFrameFlagsKnown = kFrameFlagZstd | kFrameFlagSealed;

// FORMAT.md §4: info entries.
enum class InfoKey : std::uint8_t {
  writer = 1,
  pid = 2,
  host = 3,
  program = 4,
  file_sequence = 5,
  clock = 6,
  created_unix_ns = 7,
  private_values = 8,
  run_id = 9,  // 1.3
  // 3.0, sealed files only (FORMAT.md §11.4): the file id of the file its
  // writer closed, with an end frame, just before it opened this one.
  previous_file = 10,
};

// FORMAT.md §6: dictionary entries.
enum class DictKind : std::uint8_t {
  site = 1,
  thread = 2,
  text = 3,          // 1.1
  frame_number = 4,  // 1.3
};

// FORMAT.md §7: site id 0 marks a control record; its first argument byte is the kind.
inline constexpr std::uint32_t kControlSiteId = 0;
enum class ControlKind : std::uint8_t {
  dropped = 1,
  frame_number = 2,  // 1.3
  suppressed = 3,    // 1.4
  context_push = 4,  // 1.5
  context_pop = 5,   // 1.5
};

// FORMAT.md §6 (1.4): the bits of a call site's `flags`.
inline constexpr std::uint64_t kSiteFlagLimited = 1;  // its records start with a suppressed count
inline constexpr std::uint64_t kSiteFlagContext = 2;  // 1.5: a context's key and value, named by context_push
// FORMAT.md §7.3 (1.5): the format of every context site.
inline constexpr std::string_view kContextFormat = "{}={}";
// The file of the records terse writes itself (context sites, notices, drop
// reports): no source file, so readers show this name where one would be.
inline constexpr char kOwnFileName[] = "terse";

// FORMAT.md §3.1 (1.3): where a calibration frame carries its frame number.
inline constexpr std::size_t kCalibrationFrameNumberOffset = 24;

// FORMAT.md §5: the wall-clock time of `ticks` by a calibration point (its
// ticks, its time, its rate). The reader converts records with it, and the
// writer uses it to continue its line exactly as readers will see it. A
// hostile point cannot overflow it: the result is held inside int64.
inline std::int64_t unix_ns_at(std::uint64_t point_ticks, std::int64_t point_unix_ns, double ticks_per_second,
                               std::uint64_t ticks) {
  constexpr double kLimit = 9.2e18;  // inside int64 with room for rounding
  double delta = static_cast<double>(static_cast<std::int64_t>(ticks - point_ticks)) * 1e9 / ticks_per_second;
  double when = static_cast<double>(point_unix_ns) + delta;
  if (!(when > -kLimit)) return static_cast<std::int64_t>(-kLimit);
  if (!(when < kLimit)) return static_cast<std::int64_t>(kLimit);
  return point_unix_ns + static_cast<std::int64_t>(std::llround(std::clamp(delta, -kLimit, kLimit)));
}

// FORMAT.md §8: string arguments store their length in a u32 whose top bit
// says the writer cut the string short.
inline constexpr std::uint32_t kStringTruncatedBit = 0x80000000u;
inline constexpr std::uint32_t kStringLengthMask = 0x7FFFFFFFu;
// A null `const char*` (no bytes follow).
inline constexpr std::uint32_t kStringNull = 0xFFFFFFFFu;
// 1.1: the string is a text entry of the file's dictionary; its u32 id follows.
inline constexpr std::uint32_t kStringInterned = 0xFFFFFFFEu;
// 1.3: the string was cut; its original length (u64) follows, then the
// stored string as a header with the truncated bit and its bytes.
inline constexpr std::uint32_t kStringCut = 0xFFFFFFFDu;
inline constexpr std::size_t kStringCutPrefix = 12;
// 3.1: the string is a text entry with byte ranges replaced; its u32 text
// id, a u32 size and that many bytes of patches follow.
inline constexpr std::uint32_t kStringPatched = 0xFFFFFFFCu;
inline constexpr std::size_t kStringPatchedPrefix = 12;

// The bytes that follow a string's u32 header: none for a null string, the
// text id for an interned one, else the length bits. A cut string's header
// (kStringCut) is followed by more than its header says: see
// encoded_string_size.
constexpr std::size_t string_bytes_after(std::uint32_t header) {
  return header == kStringNull ? 0 : header == kStringInterned ? 4 : (header & kStringLengthMask);
}

// The bytes a string argument takes at `p`, header included, or 0 when the
// `available` bytes do not hold it all. `p` is little-endian like the file.
inline std::size_t encoded_string_size(const unsigned char* p, std::size_t available) {
  auto header_at = [p](std::size_t at) {
    return std::uint32_t{p[at]} | std::uint32_t{p[at + 1]} << 8 | std::uint32_t{p[at + 2]} << 16 |
           std::uint32_t{p[at + 3]} << 24;
  };
  if (available < 4) return 0;
  std::size_t at = 0;
  std::uint32_t header = header_at(0);
  if (header == kStringPatched) {
    if (available < kStringPatchedPrefix) return 0;
    std::size_t patches = header_at(8);
    return available - kStringPatchedPrefix < patches ? 0 : kStringPatchedPrefix + patches;
  }
  if (header == kStringCut) {
    if (available < kStringCutPrefix + 4) return 0;
    at = kStringCutPrefix;
    header = header_at(at);
    if (header == kStringNull || header == kStringInterned || header == kStringCut || header == kStringPatched)
      return 0;
  }
  std::size_t after = string_bytes_after(header);
  return available - at - 4 < after ? 0 : at + 4 + after;
}

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
  X(pointer, 0x10, 8)             \
  X(structured, 0x11, 0)

enum class TypeTag : std::uint8_t {
#define TERSE_X(name, value, size) name = value,
  TERSE_SCHEMA_TYPE_TAGS(TERSE_X)
#undef TERSE_X
};

// Fixed byte size of a tag's value; 0 for length-prefixed values (string,
// structured), -1 for unknown tags.
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

// FORMAT.md §8.1: the node kinds of a structured argument's type expression
// (a scalar node is one of the tags above).
#define TERSE_SCHEMA_TYPE_NODES(X) \
  X(sequence, 0x40)                \
  X(set, 0x41)                     \
  X(map, 0x42)                     \
  X(tuple, 0x43)                   \
  X(aggregate, 0x44)               \
  X(optional, 0x45)                \
  X(variant, 0x46)                 \
  X(enumeration, 0x47)             \
  X(duration, 0x48)                \
  X(time_point, 0x49)              \
  X(error_code, 0x4A)              \
  X(path, 0x4B)                    \
  X(thread_id, 0x4C)               \
  X(monostate, 0x4D)               \
  X(user, 0x4E)                    \
  X(secret, 0x4F)                  \
  X(preformatted, 0x50)            \
  X(bitset, 0x51)

enum class TypeNode : std::uint8_t {
#define TERSE_X(name, value) name = value,
  TERSE_SCHEMA_TYPE_NODES(TERSE_X)
#undef TERSE_X
};

// FORMAT.md §8.1: a container's count carries this bit when the writer cut
// the container short; a u64 with the real size follows the count.
inline constexpr std::uint32_t kCountTruncatedBit = 0x80000000u;
inline constexpr std::uint32_t kCountMask = 0x7FFFFFFFu;
// A variant that holds no alternative.
inline constexpr std::uint8_t kVariantValueless = 0xFF;

// Time point clocks.
enum class Clock : std::uint8_t { other = 0, system = 1, steady = 2 };

// How a private value was stored (FORMAT.md §8.1), and the info key's words.
enum class PrivateMode : std::uint8_t { omitted = 0, hashed = 1, clear = 2 };

// Reader bounds of FORMAT.md §8.1.
inline constexpr int kMaxTypeDepth = 16;
inline constexpr std::size_t kMaxTypeNodes = 4096;
inline constexpr std::size_t kMaxCompositeFields = 255;
inline constexpr std::size_t kMaxEnumerators = 65536;
// The most bits a bitset node may declare; a writer refuses more at compile time.
inline constexpr std::size_t kMaxBitsetBits = 65536;

// FORMAT.md §6: level values in site entries, and their names.
enum class LevelValue : std::uint8_t { trace = 0, debug = 1, info = 2, warn = 3, error = 4, critical = 5 };
inline constexpr int kLevelCount = 6;
inline constexpr const char* kLevelNames[kLevelCount] = {"trace", "debug", "info", "warn", "error", "critical"};

constexpr const char* level_name(std::uint8_t level) { return level < kLevelCount ? kLevelNames[level] : "unknown"; }

}  // namespace terse::schema
