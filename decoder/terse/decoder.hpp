// The reader side of the .tlog format (schema/FORMAT.md) as a library:
// frames, dictionary, argument decoding and formatting. It shares nothing
// with the runtime but schema/.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace terse::decoder {

// Damage or trouble found while reading, with where it was found. Library
// code never prints: it hands every problem to the caller's reporter.
struct Problem {
  std::string source;
  std::uint64_t offset = 0;
  std::string what;
  // The input ends inside a frame: the writer stopped mid-write (a crash, or
  // a live file). Everything before it was read; it is not damage.
  bool torn_tail = false;
};
using Reporter = std::function<void(const Problem&)>;

// Largest width or precision (static or dynamic) the decoder lets fmt apply;
// a file that asks for more gets the record reported instead of formatted.
inline constexpr int kMaxWidthOrPrecision = 1 << 16;

// What check_format learned about a site's format string.
struct FormatCheck {
  bool ok = false;
  std::string error;
  std::vector<std::uint16_t> dynamic_args;  // arguments used as a width or a precision
};
FormatCheck check_format(std::string_view format, std::span<const std::uint8_t> tags);

struct Site {
  std::uint32_t id = 0;
  std::uint8_t level = 0;
  std::uint32_t line = 0;
  std::string file;
  std::string format;
  std::vector<std::uint8_t> tags;
  FormatCheck check;
};

struct Thread {
  std::uint32_t index = 0;
  std::uint64_t os_tid = 0;
  std::string name;
};

struct Arg {
  std::uint8_t tag = 0;
  union {
    std::int64_t i;
    std::uint64_t u;
    float f32;
    double f64;
    long double f80;
    bool b;
    char c;
  };
  std::string_view text;  // strings
  bool truncated = false;
  bool null_string = false;
  Arg() : u(0) {}
};

enum class RecordKind { log, dropped };

struct Record {
  RecordKind kind = RecordKind::log;
  std::uint64_t ticks = 0;
  std::int64_t unix_ns = 0;
  const Site* site = nullptr;      // kind == log
  const Thread* thread = nullptr;  // never null
  std::span<const Arg> args;
  std::uint64_t dropped_count = 0;  // kind == dropped
  std::int64_t dropped_first_ns = 0;
  std::int64_t dropped_last_ns = 0;
};

struct Summary {
  std::uint64_t frames = 0;
  std::uint64_t records = 0;
  std::uint64_t damaged = 0;  // problems reported, a torn tail not counted
  bool torn_tail = false;
  bool intact() const { return damaged == 0 && !torn_tail; }
};

using RecordSink = std::function<void(const Record&)>;

// Decodes one input stream (a file, or several files concatenated on a
// pipe) from a file descriptor to its end. Damaged frames are reported and
// skipped; a torn tail ends the stream.
class StreamDecoder {
 public:
  StreamDecoder(std::string source, Reporter reporter);
  ~StreamDecoder();
  StreamDecoder(const StreamDecoder&) = delete;
  StreamDecoder& operator=(const StreamDecoder&) = delete;

  Summary decode_fd(int fd, const RecordSink& sink);
  // The same over bytes in memory (tests, fuzzing).
  Summary decode_bytes(std::string_view bytes, const RecordSink& sink);

 struct State;  // the decoding state of one stream, internal to the library

 private:
  std::unique_ptr<State> state_;
};

// Convenience: decodes a file path; problems go to the reporter.
Summary decode_file(const std::string& path, const RecordSink& sink, const Reporter& reporter);

// ---- rendering -------------------------------------------------------------

// Appends the message exactly as fmt::format(site format, args...) would
// print it; a record the decoder cannot format safely is rendered as the
// raw format and arguments behind a marker, and `error` says why.
struct TimeStyle;
bool render_message(const Record& record, std::string& out, std::string* error = nullptr,
                    const TimeStyle* style = nullptr);

// Appends `text` as a JSON string literal; invalid UTF-8 becomes U+FFFD.
void append_json_string(std::string& out, std::string_view text);

struct TimeStyle {
  bool utc = false;
};
// "2026-11-29 14:03:07.123456789" (local time unless utc).
void append_time(std::string& out, std::int64_t unix_ns, const TimeStyle& style);
// RFC 3339 with nanoseconds and the zone offset.
void append_time_rfc3339(std::string& out, std::int64_t unix_ns, const TimeStyle& style);

const char* level_name(std::uint8_t level);

// A `--format` pattern with {time} {level} {thread} {file} {line} {message};
// fmt specs such as {level:<8} apply.
class LinePattern {
 public:
  // Throws std::invalid_argument with a readable message for a bad pattern.
  explicit LinePattern(std::string pattern);
  void append(std::string& out, const Record& record, const TimeStyle& style) const;

 private:
  enum class Field : std::uint8_t { literal, time, level, thread, file, line, message };
  struct Piece {
    Field field;
    std::string text;  // the literal, or "{:SPEC}" for a field with a spec
  };
  std::vector<Piece> pieces_;
};

inline constexpr const char* kDefaultPattern = "{time} {level} [{thread}] {file}:{line} {message}";

// One JSON object: time, level, thread, file, line, message, args.
void append_json_record(std::string& out, const Record& record, const TimeStyle& style);

}  // namespace terse::decoder
