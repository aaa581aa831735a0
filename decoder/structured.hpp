// Structured arguments (FORMAT.md §8.1) inside the decoder library: reading
// type expressions from dictionary entries, checking values against them,
// and handing them to fmt as one custom argument type whose formatter
// behaves as fmt 9.1's formatter for the equivalent C++ type would.
#pragma once

#include <cfloat>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <terse/decoder.hpp>
#include <terse/schema.hpp>
#include <terse/wire.hpp>

namespace terse::decoder::detail {

// Exact arithmetic on 64-bit counts times 64-bit periods.
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

// An integer count of periods as whole seconds and the nanoseconds left
// over: rounded toward zero as duration_cast does, or down (the
// nanoseconds then never negative) as a calendar time wants. False when the
// product does not fit or the seconds leave int64.
inline bool period_seconds(const Arg& count, const Period& period, bool round_down, std::int64_t& seconds,
                           std::int64_t& nanos) {
  bool is_signed = count.tag >= 0x01 && count.tag <= 0x04;
  Int128 ticks = is_signed ? static_cast<Int128>(count.i) : static_cast<Int128>(count.u);
  UInt128 magnitude = static_cast<UInt128>(ticks < 0 ? -ticks : ticks);
  constexpr UInt128 kMax = ~UInt128{0} >> 1;
  if (magnitude != 0 && period.num > kMax / magnitude) return false;
  Int128 scaled = ticks * static_cast<Int128>(period.num);
  Int128 den = static_cast<Int128>(period.den);
  Int128 whole = scaled / den;
  Int128 rest = scaled % den;
  if (round_down && rest < 0) {
    rest += den;
    --whole;
  }
  if (whole > INT64_MAX || whole < INT64_MIN) return false;
  seconds = static_cast<std::int64_t>(whole);
  nanos = static_cast<std::int64_t>(rest * 1000000000 / den);
  return true;
}

// ---- scalars (FORMAT.md §8), shared by records and structured values --------

// x87 extended and binary128 values become a long double only where the
// reading platform's long double is that very format (FORMAT.md §8).
inline bool read_long_double(wire::ByteReader& r, std::size_t size, long double& out) {
  std::string_view bytes;
  if (!r.bytes(size, bytes)) return false;
  out = 0;
#if LDBL_MANT_DIG == 64
  if (size == 10) std::memcpy(&out, bytes.data(), 10);
#elif LDBL_MANT_DIG == 113
  if (size == 16) std::memcpy(&out, bytes.data(), 16);
#endif
  return true;
}

inline bool read_string(wire::ByteReader& r, Arg& a) {
  std::uint32_t header;
  if (!r.le(header)) return false;
  if (header == schema::kStringNull) {
    a.null_string = true;
    return true;
  }
  // Only the decoder's top-level arguments resolve interned strings (it
  // looks before calling this); anywhere else the header is malformed.
  if (header == schema::kStringInterned) return false;
  a.truncated = (header & schema::kStringTruncatedBit) != 0;
  return r.bytes(header & schema::kStringLengthMask, a.text);
}

template <typename Stored, typename Field>
inline bool read_as(wire::ByteReader& r, Field& field) {
  Stored value;
  if (!r.le(value)) return false;
  field = static_cast<Field>(value);
  return true;
}

// One value of a scalar tag (0x01-0x10) into `a`, which the caller has reset.
// It runs for every argument of every record: forced inline, as GCC stops
// inlining it once the calling translation unit grows.
[[gnu::always_inline]] inline bool read_scalar(wire::ByteReader& r, std::uint8_t tag, Arg& a) {
  using schema::TypeTag;
  a.tag = tag;
  switch (static_cast<TypeTag>(tag)) {
    case TypeTag::i8:
      return read_as<std::int8_t>(r, a.i);
    case TypeTag::i16:
      return read_as<std::int16_t>(r, a.i);
    case TypeTag::i32:
      return read_as<std::int32_t>(r, a.i);
    case TypeTag::i64:
      return read_as<std::int64_t>(r, a.i);
    case TypeTag::u8:
      return read_as<std::uint8_t>(r, a.u);
    case TypeTag::u16:
      return read_as<std::uint16_t>(r, a.u);
    case TypeTag::u32:
      return read_as<std::uint32_t>(r, a.u);
    case TypeTag::u64:
    case TypeTag::pointer:
      return read_as<std::uint64_t>(r, a.u);
    case TypeTag::boolean: {
      std::uint8_t v = 0;
      bool ok = r.le(v);
      a.b = v != 0;
      return ok;
    }
    case TypeTag::character:
      return read_as<char>(r, a.c);
    case TypeTag::f32:
      return read_as<float>(r, a.f32);
    case TypeTag::f64:
      return read_as<double>(r, a.f64);
    case TypeTag::f80:
      return read_long_double(r, 10, a.f80);
    case TypeTag::f128:
      return read_long_double(r, 16, a.f80);
    case TypeTag::string:
      return read_string(r, a);
    case TypeTag::structured:
      return false;  // never a scalar
  }
  return false;
}

constexpr bool is_scalar_code(std::uint8_t code) {
  return code >= static_cast<std::uint8_t>(schema::TypeTag::i8) &&
         code <= static_cast<std::uint8_t>(schema::TypeTag::pointer);
}

// ---- type expressions and values ---------------------------------------------

// Reads the `arg_types` field of a site entry (FORMAT.md §6) into
// site.types, one expression per structured tag. Fails when the field is
// malformed or exceeds the reader bounds of §8.1.
Result<> read_type_expressions(wire::ByteReader& body, Site& site);

// Work one record's structured values may cause, counted while they are
// checked (FORMAT.md §8.1 "Values").
struct ValueBudget {
  std::uint64_t elements = 0;  // container elements
  std::uint64_t values = 0;    // every value, scalars and empty ones included
};
inline constexpr std::uint64_t kMaxElementsPerRecord = 1u << 20;
inline constexpr std::uint64_t kMaxValuesPerRecord = 1u << 24;

// True when `bytes` is exactly one value of expression `node`.
bool check_value(const SiteTypes& types, std::uint32_t node, std::string_view bytes, ValueBudget& budget);

// Steps over one value already checked by check_value.
void skip_value(const SiteTypes& types, const TypeExpr& node, wire::ByteReader& r);

// The enumerator an enum node names `value` (read as its underlying tag)
// with, or nullptr.
const Enumerator* find_enumerator(const SiteTypes& types, const TypeExpr& node, const Arg& value);

// ---- rendering ---------------------------------------------------------------

// A structured argument as fmt sees it: a custom type whose formatter reads
// the value bytes by the type expression.
struct StructuredView {
  const SiteTypes* types = nullptr;
  std::uint32_t node = 0;
  std::string_view bytes;
};

// A rendered message may not grow past this however its structured values
// and their specs multiply (each element of a million may take a width of
// 65536): fmt reports it as a format_error and the record prints raw.
inline constexpr std::size_t kMaxRenderedBytes = std::size_t{64} << 20;
// Starts the rendering budget of one record.
void reset_render_budget();

// A scalar as JSON, as in a record's "args" (json_record.cpp).
void append_json_scalar(std::string& out, const Arg& a);

// Where the pieces of a structured value go, in order. Each kind describes
// its value once, in these events (structured_kind.hpp); JsonText makes the
// JSON of `terse cat -o json` from them and the reader its Value trees, so
// the two cannot drift apart.
class ValueOut {
 public:
  virtual ~ValueOut() = default;
  virtual void begin_list() = 0;
  virtual void end_list() = 0;
  virtual void begin_object() = 0;
  // The name of the member whose value comes next.
  virtual void member(std::string_view name) = 0;
  virtual void end_object() = 0;
  virtual void null() = 0;
  // A value of a scalar tag, typed as it was logged.
  virtual void scalar(const Arg& a) = 0;
  virtual void string(std::string_view text) = 0;
  // Throws ValueTooLarge once the value has grown past kMaxRenderedBytes;
  // called after each element of a container.
  virtual void check() const = 0;
};

struct ValueTooLarge {};
// What stands for a structured value whose JSON would pass kMaxRenderedBytes.
inline constexpr std::string_view kValueTooLargeNote = "<structured value over 64 MiB of JSON>";

// Structured values as JSON text, appended to `out`.
class JsonText final : public ValueOut {
 public:
  explicit JsonText(std::string& out) : out_(out), limit_(out.size() + kMaxRenderedBytes) {}

  void begin_list() override;
  void end_list() override;
  void begin_object() override;
  void member(std::string_view name) override;
  void end_object() override;
  void null() override;
  void scalar(const Arg& a) override;
  void string(std::string_view text) override;
  void check() const override;

  // Writes the comma that goes before a value that follows another, so
  // that the value's own text starts at out().size().
  void separate();
  const std::string& out() const { return out_; }

 private:
  std::string& out_;
  std::size_t limit_;
  bool after_value_ = false;
};

// One checked structured value as events. `rewrite`, when set, applies to
// the text of string values. Throws ValueTooLarge from `out`.
void write_value(const StructuredView& view, ValueOut& out, const TextRewrite& rewrite);

// The JSON form of a structured value, or kValueTooLargeNote as a string.
void append_json_value(std::string& out, const StructuredView& view, const TextRewrite& rewrite);

// FORMAT.md §8's "handed to fmt as" type of a scalar, as a callback's argument.
template <typename F>
[[gnu::always_inline]] inline decltype(auto) visit_scalar(const Arg& a, F&& f) {
  using schema::TypeTag;
  switch (static_cast<TypeTag>(a.tag)) {
    case TypeTag::i8:
    case TypeTag::i16:
    case TypeTag::i32:
      return f(static_cast<int>(a.i));
    case TypeTag::i64:
      return f(static_cast<long long>(a.i));
    case TypeTag::u8:
    case TypeTag::u16:
    case TypeTag::u32:
      return f(static_cast<unsigned>(a.u));
    case TypeTag::u64:
      return f(static_cast<unsigned long long>(a.u));
    case TypeTag::boolean:
      return f(a.b);
    case TypeTag::character:
      return f(a.c);
    case TypeTag::f32:
      return f(a.f32);
    case TypeTag::f64:
      return f(a.f64);
    case TypeTag::f80:
    case TypeTag::f128:
      return f(a.f80);
    case TypeTag::string:
      return f(a.null_string ? fmt::string_view("(null)") : fmt::string_view(a.text.data(), a.text.size()));
    case TypeTag::pointer:
      return f(reinterpret_cast<const void*>(static_cast<std::uintptr_t>(a.u)));
    case TypeTag::structured:
      break;
  }
  return f(0);
}

}  // namespace terse::decoder::detail

// fmt calls parse() with the field's spec before it has the value, so parse
// only takes the spec's extent (and the argument ids it uses, in fmt's
// order); format() builds the formatters of the value's type and parses the
// spec with them.
template <>
struct fmt::formatter<terse::decoder::detail::StructuredView> {
  fmt::format_parse_context::iterator parse(fmt::format_parse_context& ctx);
  fmt::format_context::iterator format(const terse::decoder::detail::StructuredView& view,
                                       fmt::format_context& ctx) const;

 private:
  std::string spec_;  // ends with the field's '}'; automatic ids made explicit
};
