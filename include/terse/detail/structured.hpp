#pragma once

// Structured arguments (FORMAT.md §8.1): every argument that is not a
// number, a string or a pointer. The call site copies their values as
// binary; the type expression that explains those bytes is built once, when
// the site registers, and written into the file's dictionary.
//
// Each kind of value is defined in one place, a specialization of
// Encoding<T, Kind>. This header holds the machinery and the kinds that cost
// nothing to include (private values, codecs, eagerly formatted values,
// enums); standard types and aggregates come with opt-in headers
// (<terse/std.hpp>, <terse/std/*.hpp>, <terse/aggregate.hpp>), so a file
// that logs numbers and strings does not pay for fmt/chrono.h, fmt/ranges.h
// or Boost.PFR.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include <fmt/core.h>

#include <terse/codec.hpp>
#include <terse/detail/encode.hpp>
#include <terse/detail/reflect.hpp>
#include <terse/schema.hpp>
#include <terse/secret.hpp>
#include <terse/wire.hpp>

namespace terse {

// Field names for an aggregate (or the public members to log of any class),
// given with TERSE_FIELDS (<terse/fields.hpp>).
template <typename T>
struct fields;

}  // namespace terse

namespace terse::detail {

// How much of a structured value a call may store; the IO thread's buffer
// never blocks on a huge container.
// Read once per call, so the size pass and the write pass agree even when
// a setting changes in between.
struct Limits {
  std::uint32_t max_elements;
  std::uint32_t max_string;
  schema::PrivateMode private_mode;
};

// A keyed hash (SipHash-2-4) with the key Config::private_key set; equal
// values hash alike within and across runs with the same key.
std::uint64_t private_hash(const void* data, std::size_t size) noexcept;
// Scratch space for a private value's bytes before they are hashed.
std::string& private_scratch() noexcept;

// ---- kinds ------------------------------------------------------------------

// Tags naming the kinds of value. A kind that belongs to one type template
// (std::optional, std::chrono::duration, std::bitset …) specializes
// Encoding<T> for it; a kind recognised by its shape (ranges, tuples,
// aggregates) specializes Encoding<T, kind::…> for every T of that shape.
namespace kind {
struct own;
struct scalar;
struct secret;
struct codec;
struct eager;
struct enumeration;
struct path;
struct field_list;
struct map;
struct set;
struct sequence;
struct tuple;
struct aggregate;
struct formatter_only;  // has an fmt::formatter and nothing terse can store
struct unsupported;
}  // namespace kind

// What one kind needs on the writing side:
//   using checked_as = …;              the type fmt checks the format spec against
//   static void describe(std::string& out);       its type expression (FORMAT.md §8.1)
//   static constexpr std::size_t fixed_size();    bytes of every value; 0: they depend on the value
//   static std::size_t size(const T&, const Limits&) noexcept;         bytes of this value
//   static char* write(char* out, const T&, const Limits&) noexcept;  stores it, returns the end
template <typename T, typename Kind = kind::own>
struct Encoding;

template <typename T, typename Kind = kind::own>
concept Encodable = requires {
  sizeof(Encoding<T, Kind>);
};

template <typename T>
inline constexpr bool is_secret = false;
template <typename T>
inline constexpr bool is_secret<Secret<T>> = true;

template <typename T>
concept HasCodec = requires(const T& value) {
  codec<T>::fields(value);
  codec<T>::format;
};

template <typename T>
concept HasFieldList = requires {
  fields<T>::names;
  fields<T>::members;
};

// std::filesystem::path, recognised by its shape so that no header of terse
// pulls <filesystem> into a file that logs.
template <typename T>
concept PathLike = requires(const T& p) {
  typename T::string_type;
  typename T::value_type;
  T::preferred_separator;
  p.native();
  p.filename();
};

template <typename T>
concept IterableRange = requires(const T& r) {
  std::begin(r);
  std::end(r);
};

template <typename T>
concept MapLike = IterableRange<T> && requires {
  typename T::key_type;
  typename T::mapped_type;
};

template <typename T>
concept SetLike = IterableRange<T> && !MapLike<T> && requires {
  typename T::key_type;
};

template <typename T>
concept TupleLike = !IterableRange<T> && requires {
  std::tuple_size<T>::value;
};

template <typename T>
inline constexpr bool is_scalar_argument = std::is_arithmetic_v<T> || is_string_like<T> || is_void_pointer<T>;

// The one place that decides a type's kind; the first match wins.
template <typename T>
constexpr auto kind_of() {
  if constexpr (is_secret<T>)
    return std::type_identity<kind::secret>{};
  else if constexpr (HasCodec<T>)
    return std::type_identity<kind::codec>{};
  else if constexpr (format_eagerly<T>)
    return std::type_identity<kind::eager>{};
  else if constexpr (is_scalar_argument<T>)
    return std::type_identity<kind::scalar>{};
  else if constexpr (std::is_enum_v<T>)
    return std::type_identity<kind::enumeration>{};
  else if constexpr (Encodable<T>)
    return std::type_identity<kind::own>{};
  else if constexpr (PathLike<T>)
    return std::type_identity<kind::path>{};
  else if constexpr (HasFieldList<T>)
    return std::type_identity<kind::field_list>{};
  else if constexpr (MapLike<T>)
    return std::type_identity<kind::map>{};
  else if constexpr (SetLike<T>)
    return std::type_identity<kind::set>{};
  else if constexpr (IterableRange<T>)
    return std::type_identity<kind::sequence>{};
  else if constexpr (TupleLike<T>)
    return std::type_identity<kind::tuple>{};
  else if constexpr (fmt::is_formattable<T>::value)
    return std::type_identity<kind::formatter_only>{};
  else if constexpr (std::is_aggregate_v<T> && std::is_class_v<T>)
    return std::type_identity<kind::aggregate>{};
  else
    return std::type_identity<kind::unsupported>{};
}

template <typename T>
using kind_t = typename decltype(kind_of<T>())::type;

template <typename T>
inline constexpr bool is_structured = !std::is_same_v<kind_t<T>, kind::scalar>;

template <typename T>
constexpr bool names_std_type(std::string_view prefix) {
  return type_name<T>().starts_with(prefix);
}

// Says, in the compiler's error, what to do with a type terse cannot store
// here: most often, which header to include.
template <typename T, typename Kind>
constexpr void require_loggable() {
  constexpr bool missing = !Encodable<T, Kind>;
  constexpr bool is_range = std::is_same_v<Kind, kind::map> || std::is_same_v<Kind, kind::set> ||
                            std::is_same_v<Kind, kind::sequence> || std::is_same_v<Kind, kind::tuple>;
  static_assert(!(missing && is_range),
                "terse: to log containers, ranges, pairs and tuples, #include <terse/std/containers.hpp> "
                "(or <terse/std.hpp> for every standard type)");
  static_assert(!(missing && std::is_same_v<Kind, kind::aggregate>),
                "terse: to log an aggregate by reflection, #include <terse/aggregate.hpp>");
  static_assert(!(missing && std::is_same_v<Kind, kind::path>),
                "terse: to log a std::filesystem::path, #include <terse/std/system.hpp> (or <terse/std.hpp>)");
  static_assert(!(missing && std::is_same_v<Kind, kind::field_list>),
                "terse: a type named by TERSE_FIELDS needs #include <terse/fields.hpp>");
  static_assert(!std::is_same_v<Kind, kind::formatter_only>,
                "terse: this type has its own fmt::formatter, which the decoder cannot run later. Specialize "
                "terse::codec<T> (its fields are stored in binary and formatted by the decoder), or declare "
                "`template <> inline constexpr bool terse::format_eagerly<T> = true;` to format it on the calling "
                "thread (slow), or name its fields with TERSE_FIELDS(T, ...)");
  if constexpr (std::is_same_v<Kind, kind::unsupported>) {
    static_assert(!names_std_type<T>("std::optional<"),
                  "terse: to log a std::optional, #include <terse/std/optional.hpp> (or <terse/std.hpp>)");
    static_assert(!names_std_type<T>("std::variant<") && !names_std_type<T>("std::monostate"),
                  "terse: to log a std::variant, #include <terse/std/variant.hpp> (or <terse/std.hpp>)");
    static_assert(!names_std_type<T>("std::chrono::"),
                  "terse: to log std::chrono durations and time points, #include <terse/std/chrono.hpp> "
                  "(or <terse/std.hpp>)");
    static_assert(!names_std_type<T>("std::error_code") && !names_std_type<T>("std::thread::id"),
                  "terse: to log a std::error_code or std::thread::id, #include <terse/std/system.hpp> "
                  "(or <terse/std.hpp>)");
    static_assert(!names_std_type<T>("std::bitset<"),
                  "terse: to log a std::bitset, #include <terse/std/bitset.hpp> (or <terse/std.hpp>)");
    constexpr bool named_above = names_std_type<T>("std::optional<") || names_std_type<T>("std::variant<") ||
                                 names_std_type<T>("std::monostate") || names_std_type<T>("std::chrono::") ||
                                 names_std_type<T>("std::error_code") || names_std_type<T>("std::thread::id") ||
                                 names_std_type<T>("std::bitset<");
    static_assert(named_above || !names_std_type<T>("std::"),
                  "terse: this standard type cannot be logged; <terse/std.hpp> lists the ones that can");
    static_assert(names_std_type<T>("std::"),
                  "terse: this argument type cannot be logged: use a number, string, standard container, "
                  "aggregate, enum or chrono type, or specialize terse::codec<T> (see <terse/codec.hpp>)");
  }
}

template <typename T>
constexpr auto encoding_of() {
  using Kind = kind_t<T>;
  require_loggable<T, Kind>();
  if constexpr (Encodable<T, Kind>) {
    return std::type_identity<Encoding<T, Kind>>{};
  } else {
    return std::type_identity<Encoding<T, kind::unsupported>>{};
  }
}

// The encoding of T, with a compile error that says what to do when T has none.
template <typename T>
using encoding_t = typename decltype(encoding_of<T>())::type;

// ---- named arguments (fmt::arg) ---------------------------------------------

template <typename T>
using fmt_named_t = decltype(fmt::arg("", std::declval<const T&>()));

template <typename T>
concept NamedArgument = requires(const T& argument) {
  argument.name;
  argument.value;
}
&&std::is_same_v<T, fmt_named_t<std::remove_cvref_t<decltype(std::declval<const T&>().value)>>>;

template <typename T>
inline constexpr bool is_named_argument = NamedArgument<T>;

template <typename T>
struct unnamed {
  using type = T;
};
template <NamedArgument T>
struct unnamed<T> {
  using type = std::remove_cvref_t<decltype(std::declval<const T&>().value)>;
};
template <typename T>
using unnamed_t = typename unnamed<T>::type;

template <typename T>
const auto& unnamed_value(const T& argument) noexcept {
  if constexpr (is_named_argument<T>) {
    return argument.value;
  } else {
    return argument;
  }
}

// ---- the type fmt checks the format string against ---------------------

// A value terse renders its own way, as fmt 10 would or as FORMAT.md §8.1
// documents; fmt 9 has no formatter for it, so the format string is checked
// against these stand-ins: an empty spec only, or a string's spec.
struct RenderedWithoutSpec {};
struct RenderedAsText {};

template <typename T>
constexpr auto checked_type_of() {
  if constexpr (is_named_argument<T>) {
    using Value = typename decltype(checked_type_of<unnamed_t<T>>())::type;
    return std::type_identity<fmt_named_t<Value>>{};
  } else {
    return std::type_identity<typename encoding_t<T>::checked_as>{};
  }
}

template <typename T>
struct checked_as {
  using type = typename decltype(checked_type_of<T>())::type;
};
template <typename T>
using checked_as_t = typename checked_as<T>::type;

}  // namespace terse::detail

template <>
struct fmt::formatter<terse::detail::RenderedWithoutSpec> {
  constexpr auto parse(format_parse_context& ctx) { return ctx.begin(); }
  auto format(const terse::detail::RenderedWithoutSpec&, format_context& ctx) const { return ctx.out(); }
};

template <>
struct fmt::formatter<terse::detail::RenderedAsText> : fmt::formatter<fmt::string_view> {
  auto format(const terse::detail::RenderedAsText&, format_context& ctx) const { return ctx.out(); }
};

namespace terse::detail {

// ---- the parts every kind uses ------------------------------------------------

inline void put_byte(std::string& out, std::uint8_t byte) { out.push_back(static_cast<char>(byte)); }
inline void put_node(std::string& out, schema::TypeNode node) { put_byte(out, static_cast<std::uint8_t>(node)); }
using wire::put_bytes;
using wire::put_varint;

template <typename Word>
inline char* put_raw(char* out, Word word) noexcept {
  std::memcpy(out, &word, sizeof word);
  return out + sizeof word;
}

// Type expressions run once per site, at registration; sizes and writes on
// every call.
template <typename T>
void describe(std::string& out) {
  encoding_t<T>::describe(out);
}

// Fixed-size values with no bytes (an empty tuple, a monostate) count as
// variable: 0 would read as "depends on the value" anyway, and they are rare.
template <typename T>
constexpr std::size_t fixed_size_of() {
  return encoding_t<T>::fixed_size();
}

template <typename T>
std::size_t value_size(const T& value, const Limits& limits) noexcept {
  if constexpr (constexpr std::size_t fixed = fixed_size_of<T>(); fixed != 0) {
    (void)value;
    (void)limits;
    return fixed;
  } else {
    return encoding_t<T>::size(value, limits);
  }
}

template <typename T>
char* write_value(char* out, const T& value, const Limits& limits) noexcept {
  return encoding_t<T>::write(out, value, limits);
}

template <typename Tuple, std::size_t... I>
void describe_elements(std::string& out, std::index_sequence<I...>) {
  (describe<std::remove_cvref_t<std::tuple_element_t<I, Tuple>>>(out), ...);
}

// The sum of the parts' fixed sizes, or 0 when any part's size depends on its value.
constexpr std::size_t fixed_sum(std::initializer_list<std::size_t> sizes) {
  std::size_t total = 0;
  for (std::size_t size : sizes) {
    if (size == 0) return 0;
    total += size;
  }
  return total;
}

template <typename Tuple>
std::size_t tuple_size_of(const Tuple& elements, const Limits& limits) noexcept {
  return std::apply([&](const auto&... element) { return (std::size_t{0} + ... + value_size(element, limits)); },
                    elements);
}

template <typename Tuple>
char* write_tuple(char* out, const Tuple& elements, const Limits& limits) noexcept {
  std::apply([&](const auto&... element) { ((out = write_value(out, element, limits)), ...); }, elements);
  return out;
}

// A kind whose values have no bytes of their own beyond the ones it names.
struct Unsized {
  static constexpr std::size_t fixed_size() { return 0; }
};

// ---- the kinds every file may log ---------------------------------------------

template <typename T>
struct Encoding<T, kind::scalar> {
  static constexpr auto tag = static_cast<std::uint8_t>(natural_tag<T>());
  static constexpr bool is_text = tag == static_cast<std::uint8_t>(TypeTag::string);
  using checked_as = T;
  static void describe(std::string& out) { put_byte(out, tag); }
  static constexpr std::size_t fixed_size() {
    return is_text ? 0 : static_cast<std::size_t>(schema::type_tag_size(tag));
  }
  // Strings; a null one has length 0.
  static std::size_t size(const T& value, const Limits& limits) noexcept {
    std::size_t length = string_length(value);
    return 4 + (length > limits.max_string ? limits.max_string : length);
  }
  static char* write(char* out, const T& value, const Limits& limits) noexcept {
    if constexpr (is_text) {
      // A null `const char*` has length 0, and encode_arg marks it null.
      std::size_t length = string_length(value);
      if (length <= limits.max_string) return encode_arg<tag>(out, value, static_cast<std::uint32_t>(length), false);
      // Inside a structured value a cut string keeps the truncated bit alone
      // (FORMAT.md §8.1): the value's size was measured without a cut's prefix.
      std::uint32_t header = limits.max_string | schema::kStringTruncatedBit;
      std::memcpy(out, &header, 4);
      if (const char* text = string_data(value)) std::memcpy(out + 4, text, limits.max_string);
      return out + 4 + limits.max_string;
    } else {
      return encode_arg<tag>(out, value, 0, false);
    }
  }
};

template <typename V>
struct Encoding<Secret<V>, kind::secret> : Unsized {
  using checked_as = RenderedAsText;
  static void describe(std::string& out) {
    put_node(out, schema::TypeNode::secret);
    detail::describe<std::remove_cv_t<V>>(out);
  }
  static std::size_t size(const Secret<V>& secret, const Limits& limits) noexcept {
    switch (limits.private_mode) {
      case schema::PrivateMode::hashed:
        return 9;
      case schema::PrivateMode::clear:
        return 1 + value_size(secret.value, limits);
      default:
        return 1;
    }
  }
  static char* write(char* out, const Secret<V>& secret, const Limits& limits) noexcept {
    *out++ = static_cast<char>(limits.private_mode);
    if (limits.private_mode == schema::PrivateMode::clear) return write_value(out, secret.value, limits);
    if (limits.private_mode != schema::PrivateMode::hashed) return out;
    // The hash covers the value's encoding, the same for equal values.
    std::string& scratch = private_scratch();
    Limits whole = limits;
    whole.private_mode = schema::PrivateMode::clear;
    scratch.resize(value_size(secret.value, whole));
    char* end = write_value(scratch.data(), secret.value, whole);
    return put_raw(out, private_hash(scratch.data(), static_cast<std::size_t>(end - scratch.data())));
  }
};

// A codec's format string meets fmt's compile-time check against its
// fields, and names every field, like a logging call's.
template <typename T>
struct CodecCheck {
  using Fields = std::remove_cvref_t<decltype(codec<T>::fields(std::declval<const T&>()))>;

  template <typename... F>
  static consteval bool check(std::type_identity<std::tuple<F...>>) {
    fmt::format_string<checked_as_t<std::remove_cvref_t<F>>...> checked(codec<T>::format);
    (void)checked;
    ArgumentUse uses[sizeof...(F) + 1] = {};
    scan_argument_uses(std::string_view(codec<T>::format), uses, sizeof...(F));
    for (std::size_t i = 0; i < sizeof...(F); ++i)
      if (!uses[i].used) return false;
    return true;
  }
  static constexpr bool ok = check(std::type_identity<Fields>{});
  static_assert(ok, "terse: a codec's format string must use each of its fields");
};

template <typename T>
struct Encoding<T, kind::codec> : Unsized {
  using Fields = std::remove_cvref_t<decltype(codec<T>::fields(std::declval<const T&>()))>;
  // Naming CodecCheck<T>::ok here makes the check run with the logging call's.
  using checked_as = std::conditional_t<CodecCheck<T>::ok, RenderedAsText, RenderedAsText>;
  static void describe(std::string& out) {
    put_node(out, schema::TypeNode::user);
    put_bytes(out, type_name<T>());
    put_bytes(out, std::string_view(codec<T>::format));
    put_varint(out, std::tuple_size_v<Fields>);
    describe_elements<Fields>(out, std::make_index_sequence<std::tuple_size_v<Fields>>{});
  }
  static std::size_t size(const T& value, const Limits& limits) noexcept {
    return tuple_size_of(codec<T>::fields(value), limits);
  }
  static char* write(char* out, const T& value, const Limits& limits) noexcept {
    return write_tuple(out, codec<T>::fields(value), limits);
  }
};

// Eagerly formatted texts of one record: measured in the size pass, copied
// in the write pass, in the same order. A formatter that logs while it runs
// stacks its own record's texts above and removes them again.
struct EagerTexts {
  std::string text;
  std::size_t read = 0;
};
EagerTexts& eager_texts() noexcept;
// Formats on the calling thread; an exception becomes the stored text.
template <typename T>
std::uint32_t format_eagerly_now(const T& value, const Limits& limits) noexcept {
  EagerTexts& eager = eager_texts();
  std::size_t start = eager.text.size();
  try {
    fmt::format_to(std::back_inserter(eager.text), "{}", value);
  } catch (const std::exception& e) {
    eager.text.resize(start);
    try {
      eager.text += "<format error: ";
      eager.text += e.what();
      eager.text += '>';
    } catch (...) {
      eager.text.resize(start);
    }
  }
  std::size_t length = eager.text.size() - start;
  std::uint32_t kept = length > limits.max_string ? limits.max_string : static_cast<std::uint32_t>(length);
  // The length is stored in front of the text, so the write pass finds it.
  eager.text.insert(start, reinterpret_cast<const char*>(&kept), 4);
  eager.text.resize(start + 4 + kept);
  return kept;
}

template <typename T>
struct Encoding<T, kind::eager> : Unsized {
  using checked_as = RenderedAsText;
  static void describe(std::string& out) { put_node(out, schema::TypeNode::preformatted); }
  static std::size_t size(const T& value, const Limits& limits) noexcept {
    return 4 + format_eagerly_now(value, limits);
  }
  static char* write(char* out, const T&, const Limits&) noexcept {
    EagerTexts& eager = eager_texts();
    std::uint32_t length;
    std::memcpy(&length, eager.text.data() + eager.read, 4);
    std::memcpy(out, eager.text.data() + eager.read, 4 + length);
    eager.read += 4 + length;
    return out + 4 + length;
  }
};

template <typename T>
struct Encoding<T, kind::enumeration> {
  using Underlying = std::underlying_type_t<T>;
  using checked_as = RenderedAsText;
  static void describe(std::string& out) {
    put_node(out, schema::TypeNode::enumeration);
    put_byte(out, static_cast<std::uint8_t>(natural_tag<Underlying>()));
    put_bytes(out, type_name<T>());
    put_varint(out, enumerators_of<T>.size());
    for (const Enumerator& e : enumerators_of<T>) {
      put_varint(out, wire::zigzag(e.value));
      put_bytes(out, e.name);
    }
  }
  static constexpr std::size_t fixed_size() { return sizeof(Underlying); }
  static char* write(char* out, const T& value, const Limits&) noexcept {
    return put_raw(out, static_cast<Underlying>(value));
  }
};

// What a type that cannot be logged compiles to once require_loggable has
// said why, so that the error stands alone.
template <typename T>
struct Encoding<T, kind::unsupported> : Unsized {
  using checked_as = RenderedWithoutSpec;
  static void describe(std::string&) {}
  static std::size_t size(const T&, const Limits&) noexcept { return 0; }
  static char* write(char* out, const T&, const Limits&) noexcept { return out; }
};

}  // namespace terse::detail
