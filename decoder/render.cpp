#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <ctime>
#include <iterator>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <fmt/args.h>
#include <fmt/compile.h>
#include <fmt/format.h>

#include <terse/decoder.hpp>
#include <terse/schema.hpp>

#include "structured.hpp"

// The rendering rule (a decoded message is byte for byte what fmt::format
// printed in the program) holds against fmt 9: this file and the structured
// formatters reproduce fmt 9.1's choices, several of which fmt 10 changed.
static_assert(FMT_VERSION >= 90000 && FMT_VERSION < 100000,
              "the decoder reproduces fmt 9's formatting; build it against fmt 9.x");

namespace terse::decoder {
namespace {

using schema::TypeTag;

// Level names as enumerators, generated from the schema's one list.
enum class LevelValue : std::uint8_t {
#define TERSE_X(name, value) name = value,
  TERSE_SCHEMA_LEVELS(TERSE_X)
#undef TERSE_X
};

// FORMAT.md §6: a site has at most 255 arguments.
constexpr std::size_t kMaxArgs = 255;

// One argument as fmt's own argument type, made through the public
// make_format_args so the record needs no allocation per argument.
template <typename T>
fmt::basic_format_arg<fmt::format_context> fmt_arg(const T& value) {
  return fmt::basic_format_args<fmt::format_context>(fmt::make_format_args(value)).get(0);
}

// Hands each argument to fmt as the type the writer's fmt::format would
// have seen after its own argument mapping, so the output is identical.
fmt::basic_format_arg<fmt::format_context> to_fmt_arg(const Arg& a) {
  return detail::visit_scalar(a, [](auto value) { return fmt_arg(value); });
}

bool is_structured(const Arg& a) { return a.tag == static_cast<std::uint8_t>(TypeTag::structured); }

// Collects the pieces of a text line on the stack and hands them to the
// string in one append: std::string::append is out of line, and a line is
// twenty small pieces.
class Staged {
 public:
  explicit Staged(std::string& out) : out_(out) {}
  ~Staged() { flush(); }
  Staged(const Staged&) = delete;
  Staged& operator=(const Staged&) = delete;

  void append(const char* p, std::size_t n) {
    if (n > sizeof buffer_ - size_) [[unlikely]] {
      append_long(p, n);
      return;
    }
    char* to = buffer_ + size_;
    size_ += n;
    // Most pieces are a few bytes: copied with two fixed-size moves that
    // overlap (never reading outside the piece), not a call to memcpy.
    if (n >= 8 && n <= 16) {
      std::memcpy(to, p, 8);
      std::memcpy(to + n - 8, p + n - 8, 8);
    } else if (n >= 4 && n < 8) {
      std::memcpy(to, p, 4);
      std::memcpy(to + n - 4, p + n - 4, 4);
    } else if (n < 4) {
      for (std::size_t i = 0; i < n; ++i) to[i] = p[i];
    } else {
      std::memcpy(to, p, n);
    }
  }
  Staged& operator+=(std::string_view text) {
    append(text.data(), text.size());
    return *this;
  }
  Staged& operator+=(char c) {
    if (size_ == sizeof buffer_) flush();
    buffer_[size_++] = c;
    return *this;
  }
  // Before anything writes to the string itself.
  std::string& flush() {
    out_.append(buffer_, size_);
    size_ = 0;
    return out_;
  }

 private:
  [[gnu::noinline]] void append_long(const char* p, std::size_t n) {
    flush();
    if (n > sizeof buffer_) {
      out_.append(p, n);
    } else {
      std::memcpy(buffer_, p, n);
      size_ = n;
    }
  }

  std::string& out_;
  char buffer_[512];
  std::size_t size_ = 0;
};

// Integers as fmt's "{}" writes them, without its back_inserter.
template <typename Out, typename T>
void append_integer(Out& out, T value) {
  fmt::format_int digits(value);
  out.append(digits.data(), digits.size());
}

// A float as fmt's "{}" writes it (the compiled "{}" calls the same writer),
// into a stack buffer: the shortest form of a double or float is at most 24
// characters.
template <typename Out, typename T>
void append_shortest(Out& out, T value) {
  char buffer[32];
  char* end = fmt::format_to(buffer, FMT_COMPILE("{}"), value);
  out.append(buffer, static_cast<std::size_t>(end - buffer));
}

// Whether render_message() takes format_plain() for the record.
bool renders_plain(const Record& record) {
  return record.kind == RecordKind::log && record.site->check.plain && record.site->types.roots.empty() &&
         record.site->arg_names.empty();
}

// FormatCheck::plain: the text between the fields as it is, and each
// argument as fmt writes it for `{}` (the compiled "{}" calls the same
// writers as fmt's runtime formatting does for an empty spec), so the bytes
// are the same without parsing the format string for every record.
template <typename Out>
void format_plain(Out& out, std::string_view format, std::span<const Arg> args) {
  const char* p = format.data();
  const char* end = p + format.size();
  std::size_t next = 0;
  for (;;) {
    const auto* open = static_cast<const char*>(std::memchr(p, '{', static_cast<std::size_t>(end - p)));
    if (open == nullptr) {
      out.append(p, static_cast<std::size_t>(end - p));
      return;
    }
    out.append(p, static_cast<std::size_t>(open - p));
    detail::visit_scalar(args[next++], [&out](auto value) {
      using T = decltype(value);
      if constexpr (std::is_same_v<T, bool>) {
        out += value ? "true" : "false";
      } else if constexpr (std::is_same_v<T, char>) {
        out += value;
      } else if constexpr (std::is_integral_v<T>) {
        append_integer(out, value);
      } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        append_shortest(out, value);
      } else if constexpr (std::is_same_v<T, fmt::string_view>) {
        out.append(value.data(), value.size());
      } else {
        fmt::memory_buffer text;  // long double, pointer: rare
        fmt::format_to(fmt::appender(text), FMT_COMPILE("{}"), value);
        out.append(text.data(), text.size());
      }
    });
    p = open + 2;
  }
}

// fmt keeps pointers to custom arguments while it formats: the views of a
// record's structured arguments live here, one per argument.
std::vector<detail::StructuredView>& structured_views(const Record& record) {
  thread_local std::vector<detail::StructuredView> views;
  views.assign(record.args.size(), detail::StructuredView{});
  for (std::size_t i = 0; i < record.args.size(); ++i) {
    const Arg& a = record.args[i];
    if (is_structured(a)) views[i] = detail::StructuredView{&record.site->types, a.type, a.text};
  }
  return views;
}

// FORMAT.md §6: with argument names, `{name}` fields find their argument
// by name and `{0}` by position, as fmt::arg arguments do.
void format_named(fmt::memory_buffer& message, const Record& record, const std::vector<detail::StructuredView>& views) {
  const Site& site = *record.site;
  thread_local fmt::dynamic_format_arg_store<fmt::format_context> store;
  store.clear();
  for (std::size_t i = 0; i < record.args.size(); ++i) {
    const std::string& name = site.arg_names[i];
    auto push = [&](const auto& value) {
      if (name.empty()) {
        store.push_back(value);
      } else {
        store.push_back(fmt::arg(name.c_str(), value));
      }
    };
    if (is_structured(record.args[i])) {
      push(std::cref(views[i]));
    } else {
      detail::visit_scalar(record.args[i], push);
    }
  }
  fmt::vformat_to(fmt::appender(message), fmt::string_view(site.format.data(), site.format.size()), store);
}

bool dynamic_value_in_bounds(const Arg& a) {
  switch (static_cast<TypeTag>(a.tag)) {
    case TypeTag::i8:
    case TypeTag::i16:
    case TypeTag::i32:
    case TypeTag::i64:
      return a.i <= kMaxWidthOrPrecision;  // negatives: fmt rejects them itself
    case TypeTag::u8:
    case TypeTag::u16:
    case TypeTag::u32:
    case TypeTag::u64:
      return a.u <= static_cast<std::uint64_t>(kMaxWidthOrPrecision);
    default:
      return true;  // not an integer: fmt rejects it itself
  }
}

// Sites with structured or named arguments. Kept out of line: it would
// otherwise be inlined into render_message and cost the scalar-only records
// their compact fast path.
[[gnu::noinline]] void format_structured(fmt::memory_buffer& message, const Record& record) {
  const Site& site = *record.site;
  detail::reset_render_budget();
  const auto& views = structured_views(record);
  if (!site.arg_names.empty()) {
    format_named(message, record, views);
    return;
  }
  thread_local std::vector<fmt::basic_format_arg<fmt::format_context>> fmt_args;
  fmt_args.clear();
  for (std::size_t i = 0; i < record.args.size(); ++i)
    fmt_args.push_back(is_structured(record.args[i]) ? fmt_arg(views[i]) : to_fmt_arg(record.args[i]));
  fmt::vformat_to(fmt::appender(message), fmt::string_view(site.format.data(), site.format.size()),
                  fmt::basic_format_args<fmt::format_context>(fmt_args.data(), static_cast<int>(fmt_args.size())));
}

void append_raw(std::string& out, const Record& record) {
  const Site& site = *record.site;
  out += "<unformattable> ";
  out += site.format;
  detail::reset_render_budget();
  for (const Arg& a : record.args) {
    out += " | ";
    if (static_cast<TypeTag>(a.tag) == TypeTag::string) {
      out.append(a.text);
    } else if (is_structured(a)) {
      try {
        fmt::format_to(std::back_inserter(out), "{}", detail::StructuredView{&site.types, a.type, a.text});
      } catch (const fmt::format_error&) {
        out += '?';
      }
    } else {
      auto arg = to_fmt_arg(a);
      try {
        fmt::vformat_to(std::back_inserter(out), "{}", fmt::basic_format_args<fmt::format_context>(&arg, 1));
      } catch (const fmt::format_error&) {
        out += '?';
      }
    }
  }
}

}  // namespace

const char* level_name(std::uint8_t level) { return schema::level_name(level); }

const char* level_color(std::uint8_t level) {
  switch (static_cast<LevelValue>(level)) {
    case LevelValue::trace:
    case LevelValue::debug:
      return "\x1b[2m";  // dim
    case LevelValue::warn:
      return "\x1b[33m";  // yellow
    case LevelValue::error:
      return "\x1b[31m";  // red
    case LevelValue::critical:
      return "\x1b[1;31m";  // bold red
    default:
      return nullptr;
  }
}

bool render_message(const Record& record, std::string& out, std::string* error, const TimeStyle* style) {
  if (record.kind == RecordKind::suppressed) {
    fmt::format_to(std::back_inserter(out), "{} call{} suppressed after the site's last record", record.suppressed,
                   record.suppressed == 1 ? "" : "s");
    return true;
  }
  if (record.kind == RecordKind::dropped) {
    TimeStyle zone = style ? *style : TimeStyle{};
    std::string first, last;
    append_time(first, record.dropped_first_ns, zone);
    append_time(last, record.dropped_last_ns, zone);
    fmt::format_to(std::back_inserter(out), "{} record{} dropped on thread {} between {} and {}", record.dropped_count,
                   record.dropped_count == 1 ? "" : "s",
                   record.thread->os_tid ? record.thread->os_tid : record.thread->index, first, last);
    return true;
  }
  const Site& site = *record.site;
  std::string why;
  if (!site.check.ok) {
    why = site.check.error;
  } else {
    for (std::uint16_t index : site.check.dynamic_args) {
      if (!dynamic_value_in_bounds(record.args[index])) {
        why = "dynamic width or precision over " + std::to_string(kMaxWidthOrPrecision);
        break;
      }
    }
  }
  if (why.empty()) {
    // fmt's own buffer grows without zero-filling, where a std::string
    // behind back_inserter is resized (and cleared) on every growth.
    if (site.check.plain && site.types.roots.empty() && site.arg_names.empty()) {
      format_plain(out, site.format, record.args);
      return true;
    }
    thread_local fmt::memory_buffer message;
    message.clear();
    try {
      if (site.types.roots.empty() && site.arg_names.empty() && record.args.size() <= kMaxArgs) {
        // A fixed array: this loop runs for every argument of every record.
        thread_local std::array<fmt::basic_format_arg<fmt::format_context>, kMaxArgs> fmt_args;
        std::size_t count = 0;
        for (const Arg& a : record.args) fmt_args[count++] = to_fmt_arg(a);
        fmt::vformat_to(fmt::appender(message), fmt::string_view(site.format.data(), site.format.size()),
                        fmt::basic_format_args<fmt::format_context>(fmt_args.data(), static_cast<int>(count)));
      } else {
        format_structured(message, record);
      }
      out.append(message.data(), message.size());
      return true;
    } catch (const fmt::format_error& e) {
      why = e.what();
    }
  }
  if (error) *error = why;
  append_raw(out, record);
  return false;
}

namespace {

// The bytes a JSON string takes as they are: printable ASCII but '"' and '\\'.
constexpr std::array<bool, 256> kJsonPlain = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x7F; ++c) plain[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
  return plain;
}();

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    // Most text is printable ASCII that needs no escape: copied a run at a time.
    const auto* run = p;
    while (p < end && kJsonPlain[*p]) ++p;
    if (p != run) out.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(p - run));
    if (p == end) break;
    unsigned char c = *p;
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (c < 0x20 || c == 0x7F) {
            out += "\\u00";
            out += kHex[c >> 4];
            out += kHex[c & 15];
          } else {
            out += static_cast<char>(c);
          }
      }
      ++p;
      continue;
    }
    // A well-formed UTF-8 sequence passes through; anything else is U+FFFD.
    std::size_t n = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool valid = n != 0 && static_cast<std::size_t>(end - p) >= n;
    std::uint32_t cp = n == 2 ? (c & 0x1Fu) : n == 3 ? (c & 0x0Fu) : (c & 0x07u);
    for (std::size_t k = 1; valid && k < n; ++k) {
      if ((p[k] & 0xC0) != 0x80) valid = false;
      cp = (cp << 6) | (p[k] & 0x3Fu);
    }
    if (valid) {
      static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      valid = cp >= kMin[n] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    }
    if (valid) {
      out.append(reinterpret_cast<const char*>(p), n);
      p += n;
    } else {
      out += "\\ufffd";
      ++p;
    }
  }
  out += '"';
}

namespace {

struct CivilTime {
  tm parts{};
  long offset_seconds = 0;
};

// localtime_r is slow and the same second repeats for many records.
const CivilTime& civil(std::int64_t seconds, bool utc) {
  thread_local std::int64_t cached_seconds = INT64_MIN;
  thread_local bool cached_utc = false;
  thread_local CivilTime cached;
  if (seconds != cached_seconds || utc != cached_utc) {
    time_t t = static_cast<time_t>(seconds);
    cached = CivilTime{};
    if (utc) {
      gmtime_r(&t, &cached.parts);
    } else {
      localtime_r(&t, &cached.parts);
      cached.offset_seconds = cached.parts.tm_gmtoff;
    }
    cached_seconds = seconds;
    cached_utc = utc;
  }
  return cached;
}

// The first `shown` of the 9 digits of a fraction of a second.
template <typename Out>
void append_nanos(Out& out, std::int64_t nanos, std::size_t shown) {
  char digits[9];
  auto n = static_cast<std::uint32_t>(nanos);
  for (int i = 8; i >= 0; --i, n /= 10) digits[i] = static_cast<char>('0' + n % 10);
  out.append(digits, shown);
}

void split(std::int64_t unix_ns, std::int64_t& seconds, std::int64_t& nanos) {
  seconds = unix_ns / 1'000'000'000;
  nanos = unix_ns % 1'000'000'000;
  if (nanos < 0) {
    nanos += 1'000'000'000;
    --seconds;
  }
}

}  // namespace

namespace {

// "2026-11-29 14:03:07." for the second; consecutive records share their
// second, so it is formatted once.
const std::string& time_prefix(std::int64_t seconds, bool utc) {
  thread_local std::int64_t cached_seconds = INT64_MIN;
  thread_local bool cached_utc = false;
  thread_local std::string cached_prefix;
  if (seconds != cached_seconds || utc != cached_utc) {
    const tm& t = civil(seconds, utc).parts;
    cached_prefix = fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday,
                                t.tm_hour, t.tm_min, t.tm_sec);
    cached_seconds = seconds;
    cached_utc = utc;
  }
  return cached_prefix;
}

template <typename Out>
void append_time_to(Out& out, std::int64_t unix_ns, const TimeStyle& style) {
  std::int64_t seconds, nanos;
  split(unix_ns, seconds, nanos);
  const std::string& prefix = time_prefix(seconds, style.utc);
  int shown = std::clamp(style.digits, 0, 9);
  if (shown == 0) {
    out.append(prefix.data(), prefix.size() - 1);  // no '.'
    return;
  }
  out.append(prefix.data(), prefix.size());
  append_nanos(out, nanos, static_cast<std::size_t>(shown));
}

}  // namespace

void append_time(std::string& out, std::int64_t unix_ns, const TimeStyle& style) {
  append_time_to(out, unix_ns, style);
}

void append_time_rfc3339(std::string& out, std::int64_t unix_ns, const TimeStyle& style) {
  std::int64_t seconds, nanos;
  split(unix_ns, seconds, nanos);
  // As in append_time: what a second's records share is formatted once.
  thread_local std::int64_t cached_seconds = INT64_MIN;
  thread_local bool cached_utc = false;
  thread_local std::string cached_prefix, cached_zone;
  if (seconds != cached_seconds || style.utc != cached_utc) {
    const CivilTime& c = civil(seconds, style.utc);
    const tm& t = c.parts;
    cached_prefix = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday,
                                t.tm_hour, t.tm_min, t.tm_sec);
    if (style.utc || c.offset_seconds == 0) {
      cached_zone = "Z";
    } else {
      long offset = c.offset_seconds;
      char sign = offset < 0 ? '-' : '+';
      if (offset < 0) offset = -offset;
      cached_zone = fmt::format("{}{:02}:{:02}", sign, offset / 3600, offset / 60 % 60);
    }
    cached_seconds = seconds;
    cached_utc = style.utc;
  }
  out += cached_prefix;
  append_nanos(out, nanos, 9);
  out += cached_zone;
}

LinePattern::LinePattern(std::string pattern) {
  // fmt is the judge of what a valid pattern is; the pieces below only
  // spare it the named-argument lookups on every line.
  try {
    std::string probe;
    fmt::vformat_to(
        std::back_inserter(probe), pattern,
        fmt::make_format_args(fmt::arg("time", ""), fmt::arg("level", ""), fmt::arg("thread", 0u), fmt::arg("file", ""),
                              fmt::arg("line", 0u), fmt::arg("message", ""), fmt::arg("context", "")));
  } catch (const fmt::format_error& e) {
    throw std::invalid_argument("bad --format pattern '" + pattern + "': " + e.what() +
                                " (placeholders: {time} {level} {thread} {file} {line} {message} {context})");
  }
  static const std::pair<std::string_view, Field> kFields[] = {
      {"time", Field::time}, {"level", Field::level},     {"thread", Field::thread},  {"file", Field::file},
      {"line", Field::line}, {"message", Field::message}, {"context", Field::context}};
  std::string literal;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if ((c == '{' || c == '}') && i + 1 < pattern.size() && pattern[i + 1] == c) {
      literal += c;
      ++i;
      continue;
    }
    if (c != '{') {
      literal += c;
      continue;
    }
    std::size_t close = pattern.find('}', i);
    std::string_view inside(pattern.data() + i + 1, close - i - 1);
    std::size_t colon = inside.find(':');
    std::string_view name = inside.substr(0, colon);
    Field field = Field::literal;
    for (const auto& [known, value] : kFields)
      if (name == known) field = value;
    if (field == Field::context) has_context_field_ = true;
    if (!literal.empty()) pieces_.push_back({Field::literal, std::move(literal)});
    literal.clear();
    pieces_.push_back(
        {field, colon == std::string_view::npos ? std::string() : "{" + std::string(inside.substr(colon)) + "}"});
    i = close;
  }
  if (!literal.empty()) pieces_.push_back({Field::literal, std::move(literal)});
}

void LinePattern::append(std::string& out, const Record& record, const TimeStyle& style) const {
  append_line(out, record, style, nullptr);
}

void LinePattern::append(std::string& out, const Record& record, const TimeStyle& style,
                         std::string_view message) const {
  append_line(out, record, style, &message);
}

void LinePattern::append_line(std::string& out, const Record& record, const TimeStyle& style,
                              const std::string_view* rendered) const {
  // Log records and suppressed-calls reports have a site; drop reports do not.
  bool is_log = record.site != nullptr;
  // The pieces without a spec go through `line`; everything else is written
  // to `out` after flushing it, so the order is kept.
  Staged line(out);
  auto put = [&line](const Piece& piece, const auto& value) {
    if constexpr (std::is_integral_v<std::decay_t<decltype(value)>>) {
      if (piece.text.empty()) {
        append_integer(line, value);
        return;
      }
    }
    std::string& text = line.flush();
    if (piece.text.empty()) {
      fmt::format_to(std::back_inserter(text), "{}", value);
    } else {
      fmt::vformat_to(std::back_inserter(text), piece.text, fmt::make_format_args(value));
    }
  };
  for (const Piece& piece : pieces_) {
    switch (piece.field) {
      case Field::literal:
        line += piece.text;
        break;
      case Field::time:
        if (piece.text.empty()) {
          append_time_to(line, record.unix_ns, style);
        } else {
          std::string time;
          append_time(time, record.unix_ns, style);
          put(piece, time);
        }
        break;
      case Field::level: {
        std::uint8_t level = is_log ? record.site->level : static_cast<std::uint8_t>(LevelValue::warn);
        std::string_view name = level_name(level);
        const char* color = style.color ? level_color(level) : nullptr;
        if (color) line += color;
        if (piece.text.empty()) {
          line += name;
        } else {
          put(piece, name);
        }
        if (color) line += "\x1b[0m";
        if (record.flight) line += kFlightMarker;
        break;
      }
      case Field::thread:
        put(piece, record.thread->os_tid ? record.thread->os_tid : record.thread->index);
        break;
      case Field::file: {
        std::string_view file = is_log ? std::string_view(record.site->file) : std::string_view("terse");
        if (piece.text.empty()) {
          line += file;
        } else {
          put(piece, file);
        }
        break;
      }
      case Field::line:
        put(piece, is_log ? record.site->line : 0u);
        break;
      case Field::message:
        if (rendered) {
          if (piece.text.empty()) {
            line += *rendered;
          } else {
            put(piece, *rendered);
          }
        } else if (piece.text.empty()) {
          if (renders_plain(record)) {
            format_plain(line, record.site->format, record.args);  // as render_message() would
          } else {
            render_message(record, line.flush(), nullptr, &style);
          }
        } else {
          std::string message;
          render_message(record, message, nullptr, &style);
          put(piece, message);
        }
        if (record.kind == RecordKind::log && record.suppressed > 0)
          fmt::format_to(std::back_inserter(line.flush()), " [{} suppressed]", record.suppressed);
        if (!has_context_field_ && !record.context.empty()) {
          std::string& text = line.flush();
          text += " {";
          append_context_text(text, record.context);
          text += '}';
        }
        break;
      case Field::context:
        if (piece.text.empty()) {
          append_context_text(line.flush(), record.context);
        } else {
          std::string text;
          append_context_text(text, record.context);
          put(piece, text);
        }
        break;
    }
  }
  line += '\n';
}

namespace {

void append_json_number(std::string& out, double value) {
  if (std::isfinite(value)) {
    append_shortest(out, value);
  } else {
    append_json_string(out, std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf");
  }
}

}  // namespace

void detail::append_json_scalar(std::string& out, const Arg& a) {
  switch (static_cast<TypeTag>(a.tag)) {
    case TypeTag::i8:
    case TypeTag::i16:
    case TypeTag::i32:
    case TypeTag::i64:
      append_integer(out, a.i);
      return;
    case TypeTag::u8:
    case TypeTag::u16:
    case TypeTag::u32:
    case TypeTag::u64:
      append_integer(out, a.u);
      return;
    case TypeTag::boolean:
      out += a.b ? "true" : "false";
      return;
    case TypeTag::character:
      append_json_string(out, std::string_view(&a.c, 1));
      return;
    case TypeTag::f32:
      if (std::isfinite(a.f32)) {
        append_shortest(out, a.f32);
      } else {
        append_json_number(out, static_cast<double>(a.f32));
      }
      return;
    case TypeTag::f64:
      append_json_number(out, a.f64);
      return;
    case TypeTag::f80:
    case TypeTag::f128:
      if (std::isfinite(a.f80)) {
        fmt::format_to(std::back_inserter(out), "{}", a.f80);
      } else {
        append_json_number(out, static_cast<double>(a.f80));
      }
      return;
    case TypeTag::string:
      if (a.null_string) {
        out += "null";
      } else {
        append_json_string(out, a.text);
      }
      return;
    case TypeTag::pointer:
      fmt::format_to(std::back_inserter(out), "\"{}\"",
                     reinterpret_cast<const void*>(static_cast<std::uintptr_t>(a.u)));
      return;
    case TypeTag::structured:
      break;  // not a scalar: see append_json_value
  }
  out += "null";
}

void append_json_record(std::string& out, const Record& record, const TimeStyle& style) {
  thread_local std::string message;
  message.clear();
  render_message(record, message, nullptr, &style);
  append_json_record(out, record, style, message, TextRewrite{});
}

void append_json_record(std::string& out, const Record& record, const TimeStyle& style, std::string_view message,
                        const TextRewrite& rewrite) {
  bool is_log = record.site != nullptr;
  out += "{\"time\":\"";
  append_time_rfc3339(out, record.unix_ns, style);
  out += "\",\"level\":\"";
  out += is_log ? level_name(record.site->level) : "warn";
  out += "\",\"thread\":";
  append_integer(out, record.thread->os_tid ? record.thread->os_tid : record.thread->index);
  out += ",\"file\":";
  append_json_string(out, is_log ? std::string_view(record.site->file) : std::string_view("terse"));
  out += ",\"line\":";
  append_integer(out, is_log ? record.site->line : 0u);
  out += ",\"message\":";
  append_json_string(out, message);
  out += ",\"args\":";
  if (record.kind == RecordKind::dropped) {
    fmt::format_to(std::back_inserter(out), "[{}]}}\n", record.dropped_count);
    return;
  }
  if (record.kind == RecordKind::suppressed) {
    fmt::format_to(std::back_inserter(out), "[],\"suppressed\":{}}}\n", record.suppressed);
    return;
  }
  // With argument names, "args" is an object: by name, or by position
  // (a decimal string) for an argument given without one.
  const Site& site = *record.site;
  bool named = !site.arg_names.empty();
  out += named ? '{' : '[';
  if (!site.types.roots.empty()) detail::reset_render_budget();  // user types render their text
  for (std::size_t i = 0; i < record.args.size(); ++i) {
    const Arg& a = record.args[i];
    if (i > 0) out += ',';
    if (named) {
      const std::string& name = site.arg_names[i];
      if (name.empty()) {
        fmt::format_to(std::back_inserter(out), "\"{}\":", i);
      } else {
        append_json_string(out, name);
        out += ':';
      }
    }
    if (is_structured(a)) {
      detail::append_json_value(out, detail::StructuredView{&site.types, a.type, a.text}, rewrite);
    } else if (rewrite && a.tag == static_cast<std::uint8_t>(TypeTag::string) && !a.null_string) {
      std::string text(a.text);
      rewrite(text);
      append_json_string(out, text);
    } else {
      detail::append_json_scalar(out, a);
    }
  }
  out += named ? '}' : ']';
  if (record.suppressed > 0) fmt::format_to(std::back_inserter(out), ",\"suppressed\":{}", record.suppressed);
  if (record.flight) out += ",\"flight\":true";
  append_json_context(out, record.context);
  out += "}\n";
}

bool context_shows(std::span<const ContextField> context, std::size_t i) {
  for (std::size_t j = i + 1; j < context.size(); ++j)
    if (context[j].key == context[i].key) return false;
  return true;
}

const ContextField* context_find(std::span<const ContextField> context, std::string_view key) {
  for (std::size_t i = context.size(); i-- > 0;)
    if (context[i].key == key) return &context[i];
  return nullptr;
}

void append_context_text(std::string& out, std::span<const ContextField> context) {
  bool first = true;
  for (std::size_t i = 0; i < context.size(); ++i) {
    if (!context_shows(context, i)) continue;
    if (!first) out += ' ';
    first = false;
    out += context[i].key;
    out += '=';
    out += context[i].text;
  }
}

void append_json_context(std::string& out, std::span<const ContextField> context) {
  if (context.empty()) return;
  out += ",\"context\":{";
  bool first = true;
  for (std::size_t i = 0; i < context.size(); ++i) {
    if (!context_shows(context, i)) continue;
    if (!first) out += ',';
    first = false;
    append_json_string(out, context[i].key);
    out += ':';
    out += context[i].json;
  }
  out += '}';
}

}  // namespace terse::decoder
