// Writing text fast, for the text line, the message and the JSON object:
// each piece goes through a pointer into room made in the string (Room for a
// known size, TextOut piece by piece), so a piece costs no call and no
// capacity check of std::string. Numbers come out as fmt's "{}" writes
// them, strings as JSON string literals. Internal to the decoder's
// rendering files.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/compile.h>
#include <fmt/format.h>

#include <terse/decoder.hpp>
#include <terse/schema.hpp>

namespace terse::decoder::detail {

// ---- writing through a pointer ------------------------------------------------
//
// The hot paths (a default text line, a JSON object of a plain site) size
// their output first, make that room in the string once, and write into it
// through a pointer: no capacity check, no call, per piece.

inline constexpr char kDigitPairs[] =
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

inline constexpr std::uint64_t kPowersOf10[] = {1,
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

// What scalar_text_room says of a tag that put_scalar_text leaves to fmt.
constexpr std::size_t kNotWritten = SIZE_MAX;

// How much room put_scalar_text needs for an argument.
inline std::size_t scalar_text_room(const Arg& a) {
  switch (static_cast<schema::TypeTag>(a.tag)) {
    case schema::TypeTag::i8:
    case schema::TypeTag::i16:
    case schema::TypeTag::i32:
    case schema::TypeTag::i64:
    case schema::TypeTag::u8:
    case schema::TypeTag::u16:
    case schema::TypeTag::u32:
    case schema::TypeTag::u64:
      return kMostIntegerChars;
    case schema::TypeTag::boolean:
      return 5;
    case schema::TypeTag::character:
      return 1;
    case schema::TypeTag::f32:
    case schema::TypeTag::f64:
      return kMostFloatChars;
    case schema::TypeTag::string:
      return a.null_string ? 6 : a.text.size();
    default:
      return kNotWritten;  // long double, pointer: rare, left to fmt
  }
}

// An argument as fmt's "{}" writes it, for the tags scalar_text_room gives room.
inline char* put_scalar_text(char* to, const Arg& a) {
  switch (static_cast<schema::TypeTag>(a.tag)) {
    case schema::TypeTag::i8:
    case schema::TypeTag::i16:
    case schema::TypeTag::i32:
    case schema::TypeTag::i64:
      return put_decimal(to, a.i);
    case schema::TypeTag::u8:
    case schema::TypeTag::u16:
    case schema::TypeTag::u32:
    case schema::TypeTag::u64:
      return put_decimal(to, a.u);
    case schema::TypeTag::boolean:
      return a.b ? put(to, "true", 4) : put(to, "false", 5);
    case schema::TypeTag::character:
      *to = a.c;
      return to + 1;
    case schema::TypeTag::f32:
      return put_shortest(to, a.f32);
    case schema::TypeTag::f64:
      return put_shortest(to, a.f64);
    case schema::TypeTag::string:
      return a.null_string ? put(to, "(null)", 6) : put(to, a.text);
    default:
      return to;
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

// The bytes a JSON string takes as they are: printable ASCII but '"' and '\\'.
constexpr std::array<bool, 256> kJsonPlain = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x7F; ++c) plain[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
  return plain;
}();

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
inline char* put_json_string(char* to, std::string_view text) {
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

// Room for put_json_scalar, or kNotWritten for what only append_json_scalar writes.
inline std::size_t json_scalar_room(const Arg& a) {
  switch (static_cast<schema::TypeTag>(a.tag)) {
    case schema::TypeTag::character:
      return json_string_room(1);
    case schema::TypeTag::f32:
    case schema::TypeTag::f64:
      return kMostFloatChars;  // or "-inf" in quotes
    case schema::TypeTag::string:
      return a.null_string ? 4 : json_string_room(a.text.size());
    default:
      return scalar_text_room(a);  // integers and bools as in text; kNotWritten for the rest
  }
}

// A non-finite number as a JSON string.
inline char* put_json_non_finite(char* to, double value) {
  return std::isnan(value) ? put(to, "\"nan\"", 5) : value > 0 ? put(to, "\"inf\"", 5) : put(to, "\"-inf\"", 6);
}

inline char* put_json_scalar(char* to, const Arg& a) {
  switch (static_cast<schema::TypeTag>(a.tag)) {
    case schema::TypeTag::character:
      return put_json_string(to, std::string_view(&a.c, 1));
    case schema::TypeTag::f32:
      return std::isfinite(a.f32) ? put_shortest(to, a.f32) : put_json_non_finite(to, static_cast<double>(a.f32));
    case schema::TypeTag::f64:
      return std::isfinite(a.f64) ? put_shortest(to, a.f64) : put_json_non_finite(to, a.f64);
    case schema::TypeTag::string:
      return a.null_string ? put(to, "null", 4) : put_json_string(to, a.text);
    default:
      return put_scalar_text(to, a);
  }
}

// Appends to a string piece by piece through a pointer: a piece costs one
// comparison with the room left. The pieces gather on the stack and reach
// the string in one append at the end, or at flush() before something else
// appends to it; making room in the string itself would zero-fill it first.
// A piece too large for the stack goes straight into the string.
class TextOut {
 public:
  explicit TextOut(std::string& out) : out_(out) {}
  ~TextOut() { flush(); }
  TextOut(const TextOut&) = delete;
  TextOut& operator=(const TextOut&) = delete;

  // Where `n` bytes may be written; advance() past what was.
  [[gnu::always_inline]] char* room(std::size_t n) {
    if (static_cast<std::size_t>(end_ - to_) < n) [[unlikely]]
      make_room(n);
    return to_;
  }
  void advance(char* written_to) { to_ = written_to; }

  [[gnu::always_inline]] void append(const char* p, std::size_t n) { to_ = put(room(n), p, n); }
  [[gnu::always_inline]] TextOut& operator+=(std::string_view text) {
    append(text.data(), text.size());
    return *this;
  }
  [[gnu::always_inline]] TextOut& operator+=(char c) {
    *room(1) = c;
    ++to_;
    return *this;
  }
  // Integers as fmt's "{}" writes them.
  template <typename T>
  void decimal(T value) {
    static_assert(std::is_integral_v<T>);
    if constexpr (std::is_signed_v<T>) {
      to_ = put_decimal(room(kMostIntegerChars), static_cast<std::int64_t>(value));
    } else {
      to_ = put_decimal(room(kMostIntegerChars), static_cast<std::uint64_t>(value));
    }
  }
  void json_string(std::string_view text) { to_ = put_json_string(room(json_string_room(text.size())), text); }

  // The string holding what was written, for a writer that appends to it
  // itself; the pieces after that go after what it wrote.
  std::string& flush() {
    if (end_ == stack_ + sizeof stack_) {
      out_.append(stack_, static_cast<std::size_t>(to_ - stack_));
    } else {
      out_.resize(static_cast<std::size_t>(to_ - out_.data()));
    }
    to_ = stack_;
    end_ = stack_ + sizeof stack_;
    return out_;
  }

 private:
  [[gnu::noinline]] void make_room(std::size_t n) {
    flush();
    if (n <= sizeof stack_) return;
    std::size_t used = out_.size();
    out_.resize(used + n);
    to_ = out_.data() + used;
    end_ = out_.data() + out_.size();
  }

  std::string& out_;
  // A JSON object of a few strings, each given room for the worst of escapes.
  char stack_[2048];
  // Into stack_, or into the string for a large piece.
  char* to_ = stack_;
  char* end_ = stack_ + sizeof stack_;
};

}  // namespace terse::decoder::detail
