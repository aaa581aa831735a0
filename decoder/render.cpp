#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <ctime>
#include <iterator>
#include <limits>
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

// ---- writing through a pointer ------------------------------------------------
//
// The hot paths (a default text line, a JSON object of a plain site) size
// their output first, make that room in the string once, and write into it
// through a pointer: no capacity check, no call, per piece.

constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Copies a piece that is usually a few bytes without calling memcpy: moves
// of a fixed size that overlap, never reading outside the piece.
[[gnu::always_inline]] inline char* put(char* to, const char* p, std::size_t n) {
  if (n <= 16) {
    if (n >= 8) {
      std::memcpy(to, p, 8);
      std::memcpy(to + n - 8, p + n - 8, 8);
    } else if (n >= 4) {
      std::memcpy(to, p, 4);
      std::memcpy(to + n - 4, p + n - 4, 4);
    } else if (n > 0) {
      to[0] = p[0];
      to[n / 2] = p[n / 2];
      to[n - 1] = p[n - 1];
    }
  } else if (n <= 32) {
    std::memcpy(to, p, 16);
    std::memcpy(to + n - 16, p + n - 16, 16);
  } else {
    std::memcpy(to, p, n);
  }
  return to + n;
}

[[gnu::always_inline]] inline char* put(char* to, std::string_view text) { return put(to, text.data(), text.size()); }

// Room for any 64-bit integer in decimal, with its sign.
constexpr std::size_t kMostIntegerChars = 20;

// Room for {level}: the longest name, in its colour, with the flight marker.
constexpr std::size_t kMostLevelChars = 32;

constexpr std::uint64_t kPowersOf10[] = {1,
                                         10,
                                         100,
                                         1000,
                                         10000,
                                         100000,
                                         1000000,
                                         10000000,
                                         100000000,
                                         1000000000,
                                         10000000000,
                                         100000000000,
                                         1000000000000,
                                         10000000000000,
                                         100000000000000,
                                         1000000000000000,
                                         10000000000000000,
                                         100000000000000000,
                                         1000000000000000000,
                                         10000000000000000000u};

// How many decimal digits `value` has: log10 from log2 (1233 / 4096 is just
// above log10(2)), corrected by one comparison.
inline std::size_t decimal_digits(std::uint64_t value) {
  value |= 1;  // the same count, and a log2
  auto guess = static_cast<std::size_t>((std::bit_width(value) * 1233) >> 12);
  return guess + (value >= kPowersOf10[guess] ? 1 : 0);
}

// Decimal digits as fmt's "{}" writes them, two at a time from the end.
inline char* put_decimal(char* to, std::uint64_t value) {
  char* end = to + decimal_digits(value);
  char* first = end;
  while (value >= 100) {
    first -= 2;
    std::memcpy(first, kDigitPairs + (value % 100) * 2, 2);
    value /= 100;
  }
  if (value >= 10) {
    std::memcpy(first - 2, kDigitPairs + value * 2, 2);
  } else {
    first[-1] = static_cast<char>('0' + value);
  }
  return end;
}

// Exactly `count` digits of `value` (below 10^count), leading zeros included.
inline char* put_fixed_digits(char* to, std::uint64_t value, std::size_t count) {
  char* end = to + count;
  for (char* at = end; at > to; value /= 10) *--at = static_cast<char>('0' + value % 10);
  return end;
}

inline char* put_decimal(char* to, std::int64_t value) {
  if (value >= 0) return put_decimal(to, static_cast<std::uint64_t>(value));
  *to++ = '-';
  return put_decimal(to, std::uint64_t{0} - static_cast<std::uint64_t>(value));
}

// All 9 digits of a fraction of a second (nanoseconds, below 10^9).
inline void put_nanos(char* to, std::uint32_t nanos) {
  std::uint32_t high = nanos / 100000;  // the first 4 digits
  std::uint32_t low = nanos % 100000;   // the last 5
  std::memcpy(to, kDigitPairs + (high / 100) * 2, 2);
  std::memcpy(to + 2, kDigitPairs + (high % 100) * 2, 2);
  to[4] = static_cast<char>('0' + low / 10000);
  low %= 10000;
  std::memcpy(to + 5, kDigitPairs + (low / 100) * 2, 2);
  std::memcpy(to + 7, kDigitPairs + (low % 100) * 2, 2);
}

// The longest "{}" of a float or double ("-2.2250738585072014e-308") fits.
constexpr std::size_t kMostFloatChars = 32;

// A float or double as fmt's "{}" writes it: the shortest digits that read
// back as the value, in fixed notation from 1e-4 up to 1e16.
//
// Dragonbox finds those digits for any value, at a cost. A value that is
// exactly a short decimal (12.5, 0.25, 1024) needs no search: when its
// exact digits N (times 10^-k) satisfy N < 2^(mantissa bits + 1), every
// shorter decimal lies at least 10^-k away, farther than half a unit in
// the last place, so the exact digits are the shortest and also the nearest
// -- what dragonbox returns. Other values go to fmt.
template <typename T>
char* put_shortest(char* to, T value) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  using Bits = std::conditional_t<std::is_same_v<T, float>, std::uint32_t, std::uint64_t>;
  constexpr int kFractionBits = std::numeric_limits<T>::digits - 1;
  constexpr int kExponentBias = std::numeric_limits<T>::max_exponent - 1 + kFractionBits;
  constexpr std::uint64_t kExactBelow = std::uint64_t{1} << (kFractionBits + 1);
  // 5^k up to the k beyond which an exact N, below 10^16, would be written
  // with an exponent (below 1e-4).
  static constexpr std::uint64_t kPowersOf5[] = {
      1,          5,           25,           125,          625,           3125,          15625,
      78125,      390625,      1953125,      9765625,      48828125,      244140625,     1220703125,
      6103515625, 30517578125, 152587890625, 762939453125, 3814697265625, 19073486328125};
  Bits bits;
  std::memcpy(&bits, &value, sizeof bits);
  auto biased = static_cast<int>((bits >> kFractionBits) & ((Bits{1} << (sizeof(T) * 8 - 1 - kFractionBits)) - 1));
  std::uint64_t mantissa = bits & ((Bits{1} << kFractionBits) - 1);
  // Zero, subnormals, infinities and NaN: fmt's own rules.
  if (biased != 0 && biased != (1 << (sizeof(T) * 8 - 1 - kFractionBits)) - 1) {
    mantissa |= std::uint64_t{1} << kFractionBits;
    int exponent = biased - kExponentBias;  // value = mantissa * 2^exponent
    int zeros = std::countr_zero(mantissa);
    if (exponent < 0) {
      int shift = std::min(zeros, -exponent);
      mantissa >>= shift;
      exponent += shift;
    }
    bool negative = (bits >> (sizeof(T) * 8 - 1)) != 0;
    if (exponent == 0) {
      // An integer below 2^(mantissa bits + 1), hence below 1e16. With a
      // positive exponent the value is above that.
      if (negative) *to++ = '-';
      return put_decimal(to, mantissa);
    }
    if (exponent < 0 && -exponent < static_cast<int>(std::size(kPowersOf5)) &&
        mantissa <= (kExactBelow - 1) / kPowersOf5[-exponent]) {
      std::uint64_t digits_value = mantissa * kPowersOf5[-exponent];
      auto k = static_cast<std::size_t>(-exponent);  // digits after the point
      // fmt writes values below 1e-4 with an exponent.
      if (k < 4 || digits_value >= kPowersOf10[k - 4]) {
        if (negative) *to++ = '-';
        to = put_decimal(to, digits_value / kPowersOf10[k]);
        *to++ = '.';
        return put_fixed_digits(to, digits_value % kPowersOf10[k], k);
      }
    }
  }
  return fmt::format_to(to, FMT_COMPILE("{}"), value);
}

template <typename Out, typename T>
void append_shortest(Out& out, T value) {
  char buffer[kMostFloatChars];
  out.append(buffer, static_cast<std::size_t>(put_shortest(buffer, value) - buffer));
}

// What scalar_text_room says of a tag that put_scalar_text leaves to fmt.
constexpr std::size_t kNotWritten = SIZE_MAX;

// How much room put_scalar_text needs for an argument.
std::size_t scalar_text_room(const Arg& a) {
  switch (static_cast<TypeTag>(a.tag)) {
    case TypeTag::i8:
    case TypeTag::i16:
    case TypeTag::i32:
    case TypeTag::i64:
    case TypeTag::u8:
    case TypeTag::u16:
    case TypeTag::u32:
    case TypeTag::u64:
      return kMostIntegerChars;
    case TypeTag::boolean:
      return 5;
    case TypeTag::character:
      return 1;
    case TypeTag::f32:
    case TypeTag::f64:
      return kMostFloatChars;
    case TypeTag::string:
      return a.null_string ? 6 : a.text.size();
    default:
      return kNotWritten;  // long double, pointer: rare, left to fmt
  }
}

// An argument as fmt's "{}" writes it, for the tags scalar_text_room gives room.
inline char* put_scalar_text(char* to, const Arg& a) {
  switch (static_cast<TypeTag>(a.tag)) {
    case TypeTag::i8:
    case TypeTag::i16:
    case TypeTag::i32:
    case TypeTag::i64:
      return put_decimal(to, a.i);
    case TypeTag::u8:
    case TypeTag::u16:
    case TypeTag::u32:
    case TypeTag::u64:
      return put_decimal(to, a.u);
    case TypeTag::boolean:
      return a.b ? put(to, "true", 4) : put(to, "false", 5);
    case TypeTag::character:
      *to = a.c;
      return to + 1;
    case TypeTag::f32:
      return put_shortest(to, a.f32);
    case TypeTag::f64:
      return put_shortest(to, a.f64);
    case TypeTag::string:
      return a.null_string ? put(to, "(null)", 6) : put(to, a.text);
    default:
      return to;
  }
}

// Room for the message of a record renders_plain() takes, or kNotWritten
// when an argument is of a type only fmt writes. Arguments the format does
// not use are counted too: room to spare.
std::size_t plain_message_room(const Record& record) {
  std::size_t room = record.site->format.size();
  for (const Arg& a : record.args) {
    std::size_t n = scalar_text_room(a);
    if (n == kNotWritten) return kNotWritten;
    room += n;
  }
  return room;
}

// format_plain through a pointer, into room plain_message_room made.
char* put_plain_message(char* to, std::string_view format, std::span<const Arg> args) {
  const char* p = format.data();
  const char* end = p + format.size();
  for (std::size_t next = 0;; ++next) {
    const auto* open = static_cast<const char*>(std::memchr(p, '{', static_cast<std::size_t>(end - p)));
    if (open == nullptr) return put(to, p, static_cast<std::size_t>(end - p));
    to = put(to, p, static_cast<std::size_t>(open - p));
    to = put_scalar_text(to, args[next]);
    p = open + 2;
  }
}

// Room made at the end of a string, then given back but for what was written.
class Room {
 public:
  Room(std::string& out, std::size_t size) : out_(out), start_(out.size()) { out.resize(start_ + size); }
  char* begin() { return out_.data() + start_; }
  void finish(const char* end) { out_.resize(static_cast<std::size_t>(end - out_.data())); }

 private:
  std::string& out_;
  std::size_t start_;
};

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
                   record.dropped_count == 1 ? "" : "s", record.thread->shown_id(), first, last);
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

namespace {

// Whether any of 8 bytes needs more than copying into a JSON string: below
// 0x20, '"', '\\', 0x7F or above (the bit tricks of "Bit Twiddling Hacks":
// a zero byte, a byte below n).
inline bool any_json_special(std::uint64_t x) {
  constexpr std::uint64_t kOnes = 0x0101010101010101, kHighs = 0x8080808080808080;
  auto has_zero = [](std::uint64_t v) { return (v - kOnes) & ~v & kHighs; };
  std::uint64_t below_space = (x - kOnes * 0x20) & ~x;
  // With no byte at 0x80 or above, adding one carries into a high bit only from 0x7F.
  std::uint64_t high_or_delete = x | (x + kOnes);
  return ((below_space | high_or_delete) & kHighs) != 0 || has_zero(x ^ (kOnes * '"')) != 0 ||
         has_zero(x ^ (kOnes * '\\')) != 0;
}

// The room put_json_string may take: six characters a byte at most (an escape).
constexpr std::size_t json_string_room(std::size_t size) { return 6 * size + 2; }

// `text` as a JSON string literal into room json_string_room made.
char* put_json_string(char* to, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  *to++ = '"';
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    // Most text is printable ASCII that needs no escape: copied 8 bytes at a
    // time up to the first byte that does.
    std::uint64_t chunk;
    while (end - p >= 8 && (std::memcpy(&chunk, p, 8), !any_json_special(chunk))) {
      std::memcpy(to, &chunk, 8);
      to += 8;
      p += 8;
    }
    while (p < end && kJsonPlain[*p]) *to++ = static_cast<char>(*p++);
    if (p == end) break;
    unsigned char c = *p;
    if (c < 0x80) {
      *to++ = '\\';
      switch (c) {
        case '"':
        case '\\':
          *to++ = static_cast<char>(c);
          break;
        case '\n':
          *to++ = 'n';
          break;
        case '\r':
          *to++ = 'r';
          break;
        case '\t':
          *to++ = 't';
          break;
        default:  // a control character or DEL
          to = put(to, "u00", 3);
          *to++ = kHex[c >> 4];
          *to++ = kHex[c & 15];
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
      to = put(to, reinterpret_cast<const char*>(p), n);
      p += n;
    } else {
      to = put(to, "\\ufffd", 6);
      ++p;
    }
  }
  *to++ = '"';
  return to;
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  Room room(out, json_string_room(text.size()));
  room.finish(put_json_string(room.begin(), text));
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
  put_nanos(digits, static_cast<std::uint32_t>(nanos));
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

namespace {

// "2026-11-29T14:03:07." and the zone ("Z", "+01:00") of a second, which
// the records of that second share.
struct Rfc3339Second {
  std::string prefix, zone;
};

const Rfc3339Second& rfc3339_second(std::int64_t seconds, bool utc) {
  thread_local std::int64_t cached_seconds = INT64_MIN;
  thread_local bool cached_utc = false;
  thread_local Rfc3339Second cached;
  if (seconds != cached_seconds || utc != cached_utc) {
    const CivilTime& c = civil(seconds, utc);
    const tm& t = c.parts;
    cached.prefix = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday,
                                t.tm_hour, t.tm_min, t.tm_sec);
    if (utc || c.offset_seconds == 0) {
      cached.zone = "Z";
    } else {
      long offset = c.offset_seconds;
      char sign = offset < 0 ? '-' : '+';
      if (offset < 0) offset = -offset;
      cached.zone = fmt::format("{}{:02}:{:02}", sign, offset / 3600, offset / 60 % 60);
    }
    cached_seconds = seconds;
    cached_utc = utc;
  }
  return cached;
}

}  // namespace

void append_time_rfc3339(std::string& out, std::int64_t unix_ns, const TimeStyle& style) {
  std::int64_t seconds, nanos;
  split(unix_ns, seconds, nanos);
  const Rfc3339Second& second = rfc3339_second(seconds, style.utc);
  out += second.prefix;
  append_nanos(out, nanos, 9);
  out += second.zone;
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
  plain_ = !has_context_field_;
  for (const Piece& piece : pieces_) {
    if (piece.field != Field::literal && !piece.text.empty()) plain_ = false;
    switch (piece.field) {
      case Field::literal:
        fixed_room_ += piece.text.size();
        break;
      case Field::time:
        ++count_.time;
        break;
      case Field::level:
        fixed_room_ += kMostLevelChars;
        break;
      case Field::thread:
      case Field::line:
        fixed_room_ += kMostIntegerChars;
        break;
      case Field::file:
        ++count_.file;
        break;
      case Field::message:
        ++count_.message;
        break;
      case Field::context:
        break;
    }
  }
}

void LinePattern::append(std::string& out, const Record& record, const TimeStyle& style) const {
  append_line(out, record, style, nullptr);
}

void LinePattern::append(std::string& out, const Record& record, const TimeStyle& style,
                         std::string_view message) const {
  append_line(out, record, style, &message);
}

bool LinePattern::append_plain_line(std::string& out, const Record& record, const TimeStyle& style,
                                    const std::string_view* rendered) const {
  // A log record without suppressed calls or context fields: the pieces are
  // exactly those of the pattern.
  if (!plain_ || record.kind != RecordKind::log || record.suppressed > 0 || !record.context.empty()) return false;
  std::size_t message_room = rendered                ? rendered->size()
                             : renders_plain(record) ? plain_message_room(record)
                                                     : kNotWritten;
  if (message_room == kNotWritten) return false;
  const Site& site = *record.site;
  std::int64_t seconds, nanos;
  split(record.unix_ns, seconds, nanos);
  const std::string& prefix = time_prefix(seconds, style.utc);
  auto shown = static_cast<std::size_t>(std::clamp(style.digits, 0, 9));
  std::size_t size = fixed_room_ + count_.time * (prefix.size() + 9) + count_.file * site.file.size() +
                     count_.message * message_room + 1;
  Room room(out, size);
  char* to = room.begin();
  for (const Piece& piece : pieces_) {
    switch (piece.field) {
      case Field::literal:
        to = put(to, piece.text);
        break;
      case Field::time:
        if (shown == 0) {
          to = put(to, prefix.data(), prefix.size() - 1);  // no '.'
        } else {
          to = put(to, prefix);
          put_nanos(to, static_cast<std::uint32_t>(nanos));
          to += shown;
        }
        break;
      case Field::level: {
        const char* color = style.color ? level_color(site.level) : nullptr;
        if (color) to = put(to, color, std::strlen(color));
        to = put(to, level_name(site.level), std::strlen(level_name(site.level)));
        if (color) to = put(to, "\x1b[0m", 4);
        if (record.flight) to = put(to, kFlightMarker, std::strlen(kFlightMarker));
        break;
      }
      case Field::thread:
        to = put_decimal(to, record.thread->shown_id());
        break;
      case Field::file:
        to = put(to, site.file);
        break;
      case Field::line:
        to = put_decimal(to, std::uint64_t{site.line});
        break;
      case Field::message:
        to = rendered ? put(to, *rendered) : put_plain_message(to, site.format, record.args);
        break;
      case Field::context:
        break;  // not in a plain pattern
    }
  }
  *to++ = '\n';
  room.finish(to);
  return true;
}

void LinePattern::append_line(std::string& out, const Record& record, const TimeStyle& style,
                              const std::string_view* rendered) const {
  if (append_plain_line(out, record, style, rendered)) return;
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
        put(piece, record.thread->shown_id());
        break;
      case Field::file: {
        std::string_view file = is_log ? std::string_view(record.site->file) : std::string_view(schema::kOwnFileName);
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

// Room for put_json_scalar, or kNotWritten for what only append_json_scalar writes.
std::size_t json_scalar_room(const Arg& a) {
  switch (static_cast<TypeTag>(a.tag)) {
    case TypeTag::character:
      return json_string_room(1);
    case TypeTag::f32:
    case TypeTag::f64:
      return kMostFloatChars;  // or "-inf" in quotes
    case TypeTag::string:
      return a.null_string ? 4 : json_string_room(a.text.size());
    default:
      return scalar_text_room(a);  // integers and bools as in text; kNotWritten for the rest
  }
}

// A non-finite number as a JSON string.
char* put_json_non_finite(char* to, double value) {
  return std::isnan(value) ? put(to, "\"nan\"", 5) : value > 0 ? put(to, "\"inf\"", 5) : put(to, "\"-inf\"", 6);
}

char* put_json_scalar(char* to, const Arg& a) {
  switch (static_cast<TypeTag>(a.tag)) {
    case TypeTag::character:
      return put_json_string(to, std::string_view(&a.c, 1));
    case TypeTag::f32:
      return std::isfinite(a.f32) ? put_shortest(to, a.f32) : put_json_non_finite(to, static_cast<double>(a.f32));
    case TypeTag::f64:
      return std::isfinite(a.f64) ? put_shortest(to, a.f64) : put_json_non_finite(to, a.f64);
    case TypeTag::string:
      return a.null_string ? put(to, "null", 4) : put_json_string(to, a.text);
    default:
      return put_scalar_text(to, a);
  }
}

}  // namespace

void detail::append_json_scalar(std::string& out, const Arg& a) {
  if (std::size_t size = json_scalar_room(a); size != kNotWritten) {
    Room room(out, size);
    room.finish(put_json_scalar(room.begin(), a));
    return;
  }
  switch (static_cast<TypeTag>(a.tag)) {
    case TypeTag::f80:
    case TypeTag::f128:
      if (std::isfinite(a.f80)) {
        fmt::format_to(std::back_inserter(out), "{}", a.f80);
      } else {
        Room room(out, kMostFloatChars);
        room.finish(put_json_non_finite(room.begin(), static_cast<double>(a.f80)));
      }
      return;
    case TypeTag::pointer:
      fmt::format_to(std::back_inserter(out), "\"{}\"",
                     reinterpret_cast<const void*>(static_cast<std::uintptr_t>(a.u)));
      return;
    default:
      break;  // structured: not a scalar, see append_json_value
  }
  out += "null";
}

namespace {

// Literal keys and punctuation of a plain JSON object, and the room its
// optional keys take: an upper bound, not a count.
constexpr std::size_t kJsonObjectFixedRoom = 128;

// append_json_record's object for a log record render_message writes
// through format_plain: sized, then written through a pointer. False,
// having written nothing, for any other record.
bool append_plain_json_record(std::string& out, const Record& record, const TimeStyle& style) {
  if (record.kind != RecordKind::log || !renders_plain(record)) return false;
  const Site& site = *record.site;
  std::size_t message_room = plain_message_room(record);
  if (message_room == kNotWritten) return false;
  std::size_t args_room = 0;
  for (const Arg& a : record.args) {
    std::size_t n = json_scalar_room(a);
    if (n == kNotWritten) return false;
    args_room += n + 1;
  }
  // The whole message first: an escape looks at a whole UTF-8 sequence,
  // which may span a literal and an argument.
  thread_local std::string message;
  message.clear();
  Room message_text(message, message_room);
  message_text.finish(put_plain_message(message_text.begin(), site.format, record.args));

  std::int64_t seconds, nanos;
  split(record.unix_ns, seconds, nanos);
  const Rfc3339Second& second = rfc3339_second(seconds, style.utc);
  std::size_t size = kJsonObjectFixedRoom + second.prefix.size() + 9 + second.zone.size() + kMostLevelChars +
                     2 * kMostIntegerChars + json_string_room(site.file.size()) + json_string_room(message.size()) +
                     args_room + kMostIntegerChars;
  Room room(out, size);
  char* to = room.begin();
  to = put(to, "{\"time\":\"", 9);
  to = put(to, second.prefix);
  put_nanos(to, static_cast<std::uint32_t>(nanos));
  to = put(to + 9, second.zone);
  to = put(to, "\",\"level\":\"", 11);
  to = put(to, level_name(site.level), std::strlen(level_name(site.level)));
  to = put(to, "\",\"thread\":", 11);
  to = put_decimal(to, record.thread->shown_id());
  to = put(to, ",\"file\":", 8);
  to = put_json_string(to, site.file);
  to = put(to, ",\"line\":", 8);
  to = put_decimal(to, std::uint64_t{site.line});
  to = put(to, ",\"message\":", 11);
  to = put_json_string(to, message);
  to = put(to, ",\"args\":[", 9);
  for (std::size_t i = 0; i < record.args.size(); ++i) {
    if (i > 0) *to++ = ',';
    to = put_json_scalar(to, record.args[i]);
  }
  *to++ = ']';
  if (record.suppressed > 0) {
    to = put(to, ",\"suppressed\":", 14);
    to = put_decimal(to, record.suppressed);
  }
  if (record.flight) to = put(to, ",\"flight\":true", 14);
  if (record.context.empty()) {
    to = put(to, "}\n", 2);
    room.finish(to);
    return true;
  }
  room.finish(to);
  append_json_context(out, record.context);
  out += "}\n";
  return true;
}

}  // namespace

void append_json_record(std::string& out, const Record& record, const TimeStyle& style) {
  if (append_plain_json_record(out, record, style)) return;
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
  append_integer(out, record.thread->shown_id());
  out += ",\"file\":";
  append_json_string(out, is_log ? std::string_view(record.site->file) : std::string_view(schema::kOwnFileName));
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
