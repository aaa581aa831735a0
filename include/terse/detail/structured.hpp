#pragma once

// Structured arguments (FORMAT.md §8.1): containers, tuples, aggregates,
// enums, optionals, variants, chrono types, error codes, paths, thread ids,
// user types and private values. The call site copies their values as
// binary; the type expression that explains those bytes is built once, when
// the site registers, and written into the file's dictionary.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <map>
#include <set>
#include <vector>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include <boost/pfr/core.hpp>
#include <boost/pfr/tuple_size.hpp>
#include <fmt/chrono.h>
#include <fmt/ranges.h>

#include <terse/detail/encode.hpp>
#include <terse/detail/reflect.hpp>
#include <terse/schema.hpp>
#include <terse/wire.hpp>

namespace terse {

// A user type with its own fmt::formatter cannot be formatted later by the
// decoder, which does not have that code. Two ways to log it:
//
// 1. A codec: the call stores the fields it returns (any loggable types,
//    in binary), and the decoder formats them with `format`:
//      template <> struct terse::codec<Money> {
//        static constexpr std::string_view format = "{}.{:02} {}";
//        static auto fields(const Money& m) {
//          return std::tuple(m.cents / 100, m.cents % 100, m.currency);
//        }
//      };
// 2. Formatting on the calling thread, with the type's own formatter, into
//    a string (slow: this is the cost terse exists to avoid):
//      template <> inline constexpr bool terse::format_eagerly<Money> = true;
template <typename T>
struct codec;

template <typename T>
inline constexpr bool format_eagerly = false;

// Field names for an aggregate (or the public members to log of any
// class): TERSE_FIELDS(Type, member, member...) at global scope.
template <typename T>
struct fields;

// terse::secret(value): the value is private. By default it never reaches
// the file (the decoder prints <private>); Config::private_values can store
// a keyed hash instead, or the value itself for debugging.
template <typename T>
struct Secret {
  const T& value;
};
template <typename T>
Secret<T> secret(const T& value) noexcept {
  return Secret<T>{value};
}

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

// ---- classification ------------------------------------------------------

template <typename T, template <typename...> class Template>
inline constexpr bool is_instance_of = false;
template <template <typename...> class Template, typename... A>
inline constexpr bool is_instance_of<Template<A...>, Template> = true;

template <typename T>
inline constexpr bool is_duration = false;
template <typename R, typename P>
inline constexpr bool is_duration<std::chrono::duration<R, P>> = true;

template <typename T>
inline constexpr bool is_time_point = false;
template <typename C, typename D>
inline constexpr bool is_time_point<std::chrono::time_point<C, D>> = true;

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

// std::filesystem::path, recognised by its shape so that this header does
// not pull <filesystem> into every file that logs.
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
concept SetLike = IterableRange<T> && !MapLike<T> && requires { typename T::key_type; };

template <typename T>
concept TupleLike = !IterableRange<T> && requires { std::tuple_size<T>::value; };

template <typename T>
inline constexpr bool is_scalar_argument =
    std::is_arithmetic_v<T> || is_string_like<T> || is_void_pointer<T>;

enum class Kind {
  unsupported,
  scalar,
  secret,
  user,
  preformatted,
  enumeration,
  optional,
  variant,
  monostate,
  duration,
  time_point,
  error_code,
  path,
  thread_id,
  field_list,
  map,
  set,
  sequence,
  tuple,
  aggregate,
  formatter_only,  // has an fmt::formatter and nothing terse can store
};

template <typename T>
constexpr Kind kind_of() {
  if constexpr (is_secret<T>) return Kind::secret;
  else if constexpr (HasCodec<T>) return Kind::user;
  else if constexpr (format_eagerly<T>) return Kind::preformatted;
  else if constexpr (is_scalar_argument<T>) return Kind::scalar;
  else if constexpr (std::is_enum_v<T>) return Kind::enumeration;
  else if constexpr (is_instance_of<T, std::optional>) return Kind::optional;
  else if constexpr (is_instance_of<T, std::variant>) return Kind::variant;
  else if constexpr (std::is_same_v<T, std::monostate>) return Kind::monostate;
  else if constexpr (is_duration<T>) return Kind::duration;
  else if constexpr (is_time_point<T>) return Kind::time_point;
  else if constexpr (std::is_same_v<T, std::error_code>) return Kind::error_code;
  else if constexpr (PathLike<T>) return Kind::path;
  else if constexpr (std::is_same_v<T, std::thread::id>) return Kind::thread_id;
  else if constexpr (HasFieldList<T>) return Kind::field_list;
  else if constexpr (MapLike<T>) return Kind::map;
  else if constexpr (SetLike<T>) return Kind::set;
  else if constexpr (IterableRange<T>) return Kind::sequence;
  else if constexpr (TupleLike<T>) return Kind::tuple;
  else if constexpr (fmt::is_formattable<T>::value) return Kind::formatter_only;
  else if constexpr (std::is_aggregate_v<T> && std::is_class_v<T>) return Kind::aggregate;
  else return Kind::unsupported;
}

template <typename T>
inline constexpr bool is_structured = kind_of<T>() != Kind::scalar;

template <typename R>
using range_element_t = std::remove_cvref_t<decltype(*std::begin(std::declval<const R&>()))>;

template <typename T>
inline constexpr bool is_named_argument = fmt::detail::is_named_arg<T>::value;

template <typename T>
struct unnamed {
  using type = T;
};
template <typename T>
struct unnamed<fmt::detail::named_arg<char, T>> {
  using type = std::remove_cvref_t<T>;
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

// Says, in the compiler's error, what to do with a type terse cannot store.
template <typename T>
constexpr void require_loggable() {
  constexpr Kind kind = kind_of<T>();
  static_assert(kind != Kind::formatter_only,
                "terse: this type has its own fmt::formatter, which the decoder cannot run later. Specialize "
                "terse::codec<T> (its fields are stored in binary and formatted by the decoder), or declare "
                "`template <> inline constexpr bool terse::format_eagerly<T> = true;` to format it on the calling "
                "thread (slow), or name its fields with TERSE_FIELDS(T, ...)");
  static_assert(kind != Kind::unsupported,
                "terse: this argument type cannot be logged: use a number, string, standard container, "
                "aggregate, enum or chrono type, or specialize terse::codec<T> (see terse/detail/structured.hpp)");
}

// ---- the type fmt checks the format string against ----------------------

// A value terse renders its own way, as fmt 10 would or as FORMAT.md §8.1
// documents; fmt 9 has no formatter for it, so the format string is checked
// against these stand-ins: an empty spec only, or a string's spec.
struct RenderedWithoutSpec {};
struct RenderedAsText {};

template <typename T>
struct CodecCheck;
template <typename T>
struct checked_as;
template <typename T>
using checked_as_t = typename checked_as<T>::type;

template <typename T>
struct checked_as_tuple;
template <typename... E>
struct checked_as_tuple<std::tuple<E...>> {
  using type = std::tuple<checked_as_t<std::remove_cvref_t<E>>...>;
};
template <typename A, typename B>
struct checked_as_tuple<std::pair<A, B>> {
  using type = std::tuple<checked_as_t<std::remove_cvref_t<A>>, checked_as_t<std::remove_cvref_t<B>>>;
};
template <typename T, std::size_t N>
struct checked_as_tuple<std::array<T, N>> {
  using type = std::array<checked_as_t<T>, N>;
};

template <typename T>
constexpr auto checked_type_of() {
  constexpr Kind kind = kind_of<T>();
  if constexpr (is_named_argument<T>) {
    return std::type_identity<fmt::detail::named_arg<char, checked_as_t<unnamed_t<T>>>>{};
  } else if constexpr (kind == Kind::scalar || kind == Kind::duration) {
    return std::type_identity<T>{};
  } else if constexpr (kind == Kind::path || kind == Kind::thread_id) {
    // fmt/std.h formats both with a string's spec; stand-ins spare every
    // logging file that header's cost.
    return std::type_identity<RenderedAsText>{};
  } else if constexpr (kind == Kind::variant || kind == Kind::monostate) {
    return std::type_identity<RenderedWithoutSpec>{};
  } else if constexpr (kind == Kind::user) {
    static_assert(CodecCheck<T>::ok);
    return std::type_identity<RenderedAsText>{};
  } else if constexpr (kind == Kind::enumeration || kind == Kind::secret || kind == Kind::preformatted) {
    return std::type_identity<RenderedAsText>{};
  } else if constexpr (kind == Kind::time_point) {
    if constexpr (std::is_same_v<typename T::clock, std::chrono::system_clock>) {
      return std::type_identity<T>{};
    } else {
      return std::type_identity<typename T::duration>{};
    }
  } else if constexpr (kind == Kind::map) {
    return std::type_identity<std::map<checked_as_t<std::remove_cvref_t<typename T::key_type>>,
                                       checked_as_t<std::remove_cvref_t<typename T::mapped_type>>>>{};
  } else if constexpr (kind == Kind::set) {
    return std::type_identity<std::set<checked_as_t<range_element_t<T>>>>{};
  } else if constexpr (kind == Kind::sequence) {
    return std::type_identity<std::vector<checked_as_t<range_element_t<T>>>>{};
  } else if constexpr (kind == Kind::tuple) {
    return std::type_identity<typename checked_as_tuple<T>::type>{};
  } else {
    require_loggable<T>();
    return std::type_identity<RenderedWithoutSpec>{};
  }
}

template <typename T>
struct checked_as {
  using type = typename decltype(checked_type_of<T>())::type;
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

// ---- type expressions (run once per site, at registration) ---------------

inline void put_byte(std::string& out, std::uint8_t byte) { out.push_back(static_cast<char>(byte)); }
inline void put_node(std::string& out, schema::TypeNode node) { put_byte(out, static_cast<std::uint8_t>(node)); }
using wire::put_bytes;
using wire::put_varint;

template <typename T>
void describe(std::string& out);

template <typename Tuple, std::size_t... I>
void describe_elements(std::string& out, std::index_sequence<I...>) {
  (describe<std::remove_cvref_t<std::tuple_element_t<I, Tuple>>>(out), ...);
}

template <typename T, std::size_t... I>
void describe_aggregate_fields(std::string& out, std::index_sequence<I...>) {
  ((put_bytes(out, std::string_view{}), describe<std::remove_cvref_t<boost::pfr::tuple_element_t<I, T>>>(out)), ...);
}

// The macro's list ends in a placeholder so that every entry can end in a comma.
template <typename... P>
constexpr auto member_list(P... pointers) {
  auto all = std::make_tuple(pointers...);
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::make_tuple(std::get<I>(all)...);
  }(std::make_index_sequence<sizeof...(P) - 1>{});
}

template <typename Class, typename Members, std::size_t... I>
void describe_listed_fields(std::string& out, std::index_sequence<I...>) {
  ((put_bytes(out, fields<Class>::names[I]),
    describe<std::remove_cvref_t<decltype(std::declval<const Class&>().*std::get<I>(fields<Class>::members))>>(out)),
   ...);
}

template <typename Rep>
constexpr std::uint8_t rep_tag() {
  static_assert(std::is_arithmetic_v<Rep> && !std::is_same_v<Rep, bool>,
                "terse: a duration's count must be an integer or floating-point type");
  return static_cast<std::uint8_t>(natural_tag<Rep>());
}

template <typename T>
void describe(std::string& out) {
  constexpr Kind kind = kind_of<T>();
  using schema::TypeNode;
  if constexpr (kind == Kind::scalar) {
    put_byte(out, static_cast<std::uint8_t>(natural_tag<T>()));
  } else if constexpr (kind == Kind::secret) {
    put_node(out, TypeNode::secret);
    describe<std::remove_cvref_t<decltype(std::declval<T>().value)>>(out);
  } else if constexpr (kind == Kind::user) {
    using Fields = std::remove_cvref_t<decltype(codec<T>::fields(std::declval<const T&>()))>;
    put_node(out, TypeNode::user);
    put_bytes(out, type_name<T>());
    put_bytes(out, std::string_view(codec<T>::format));
    put_varint(out, std::tuple_size_v<Fields>);
    describe_elements<Fields>(out, std::make_index_sequence<std::tuple_size_v<Fields>>{});
  } else if constexpr (kind == Kind::preformatted) {
    put_node(out, TypeNode::preformatted);
  } else if constexpr (kind == Kind::enumeration) {
    put_node(out, TypeNode::enumeration);
    put_byte(out, static_cast<std::uint8_t>(natural_tag<std::underlying_type_t<T>>()));
    put_bytes(out, type_name<T>());
    put_varint(out, enumerators_of<T>.size());
    for (const Enumerator& e : enumerators_of<T>) {
      put_varint(out, wire::zigzag(e.value));
      put_bytes(out, e.name);
    }
  } else if constexpr (kind == Kind::optional) {
    put_node(out, TypeNode::optional);
    describe<std::remove_cv_t<typename T::value_type>>(out);
  } else if constexpr (kind == Kind::variant) {
    static_assert(std::variant_size_v<T> < schema::kVariantValueless, "terse: a variant has too many alternatives");
    put_node(out, TypeNode::variant);
    put_varint(out, std::variant_size_v<T>);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (describe<std::variant_alternative_t<I, T>>(out), ...);
    }(std::make_index_sequence<std::variant_size_v<T>>{});
  } else if constexpr (kind == Kind::monostate) {
    put_node(out, TypeNode::monostate);
  } else if constexpr (kind == Kind::duration) {
    put_node(out, TypeNode::duration);
    put_byte(out, rep_tag<typename T::rep>());
    put_varint(out, static_cast<std::uint64_t>(T::period::num));
    put_varint(out, static_cast<std::uint64_t>(T::period::den));
  } else if constexpr (kind == Kind::time_point) {
    using Duration = typename T::duration;
    schema::Clock clock = std::is_same_v<typename T::clock, std::chrono::system_clock>   ? schema::Clock::system
                          : std::is_same_v<typename T::clock, std::chrono::steady_clock> ? schema::Clock::steady
                                                                                        : schema::Clock::other;
    put_node(out, TypeNode::time_point);
    put_byte(out, static_cast<std::uint8_t>(clock));
    put_byte(out, rep_tag<typename Duration::rep>());
    put_varint(out, static_cast<std::uint64_t>(Duration::period::num));
    put_varint(out, static_cast<std::uint64_t>(Duration::period::den));
  } else if constexpr (kind == Kind::error_code) {
    put_node(out, TypeNode::error_code);
  } else if constexpr (kind == Kind::path) {
    put_node(out, TypeNode::path);
  } else if constexpr (kind == Kind::thread_id) {
    put_node(out, TypeNode::thread_id);
  } else if constexpr (kind == Kind::field_list) {
    constexpr std::size_t n = std::tuple_size_v<std::remove_cvref_t<decltype(fields<T>::members)>>;
    static_assert(n <= schema::kMaxCompositeFields, "terse: too many fields");
    put_node(out, TypeNode::aggregate);
    put_bytes(out, type_name<T>());
    put_varint(out, n);
    describe_listed_fields<T, decltype(fields<T>::members)>(out, std::make_index_sequence<n>{});
  } else if constexpr (kind == Kind::map) {
    put_node(out, TypeNode::map);
    describe<std::remove_cvref_t<typename T::key_type>>(out);
    describe<std::remove_cvref_t<typename T::mapped_type>>(out);
  } else if constexpr (kind == Kind::set) {
    put_node(out, TypeNode::set);
    describe<range_element_t<T>>(out);
  } else if constexpr (kind == Kind::sequence) {
    put_node(out, TypeNode::sequence);
    describe<range_element_t<T>>(out);
  } else if constexpr (kind == Kind::tuple) {
    constexpr std::size_t n = std::tuple_size_v<T>;
    static_assert(n <= schema::kMaxCompositeFields, "terse: too many tuple elements");
    put_node(out, TypeNode::tuple);
    put_varint(out, n);
    describe_elements<T>(out, std::make_index_sequence<n>{});
  } else if constexpr (kind == Kind::aggregate) {
    constexpr std::size_t n = boost::pfr::tuple_size_v<T>;
    static_assert(n <= schema::kMaxCompositeFields, "terse: too many fields");
    put_node(out, TypeNode::aggregate);
    put_bytes(out, type_name<T>());
    put_varint(out, n);
    describe_aggregate_fields<T>(out, std::make_index_sequence<n>{});
  } else {
    require_loggable<T>();
  }
}

// ---- values (run on every call) --------------------------------------------

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
constexpr std::size_t fixed_size_of();  // 0: the size depends on the value

// The sum of the parts' fixed sizes, or 0 when any part's size depends on its value.
constexpr std::size_t fixed_sum(std::initializer_list<std::size_t> sizes) {
  std::size_t total = 0;
  for (std::size_t size : sizes) {
    if (size == 0) return 0;
    total += size;
  }
  return total;
}

template <typename Tuple, std::size_t... I>
constexpr std::size_t fixed_size_of_elements(std::index_sequence<I...>) {
  return fixed_sum({fixed_size_of<std::remove_cvref_t<std::tuple_element_t<I, Tuple>>>()...});
}

template <typename T, std::size_t... I>
constexpr std::size_t fixed_size_of_fields(std::index_sequence<I...>) {
  return fixed_sum({fixed_size_of<std::remove_cvref_t<boost::pfr::tuple_element_t<I, T>>>()...});
}

// Fixed-size values with no bytes (an empty tuple, a monostate) count as
// variable: 0 would read as "depends on the value" anyway, and they are rare.
template <typename T>
constexpr std::size_t fixed_size_of() {
  constexpr Kind kind = kind_of<T>();
  if constexpr (kind == Kind::scalar) {
    constexpr auto tag = static_cast<std::uint8_t>(natural_tag<T>());
    return tag == static_cast<std::uint8_t>(TypeTag::string) ? 0 : static_cast<std::size_t>(schema::type_tag_size(tag));
  } else if constexpr (kind == Kind::enumeration) {
    return sizeof(std::underlying_type_t<T>);
  } else if constexpr (kind == Kind::duration) {
    return static_cast<std::size_t>(schema::type_tag_size(rep_tag<typename T::rep>()));
  } else if constexpr (kind == Kind::time_point) {
    return static_cast<std::size_t>(schema::type_tag_size(rep_tag<typename T::duration::rep>()));
  } else if constexpr (kind == Kind::thread_id) {
    return 8;
  } else if constexpr (kind == Kind::tuple) {
    return fixed_size_of_elements<T>(std::make_index_sequence<std::tuple_size_v<T>>{});
  } else if constexpr (kind == Kind::aggregate) {
    return fixed_size_of_fields<T>(std::make_index_sequence<boost::pfr::tuple_size_v<T>>{});
  } else {
    return 0;
  }
}

// A contiguous range of numbers stored exactly as they lie in memory.
template <typename R>
constexpr bool is_plain_number_array() {
  if constexpr (!std::ranges::contiguous_range<const R&>) {
    return false;
  } else {
    using E = range_element_t<R>;
    if constexpr (std::is_arithmetic_v<E> && !std::is_same_v<E, bool>) {
      return static_cast<std::size_t>(schema::type_tag_size(static_cast<std::uint8_t>(natural_tag<E>()))) ==
             sizeof(E);
    } else {
      return false;
    }
  }
}

template <typename R>
std::size_t element_count(const R& range) noexcept {
  if constexpr (requires { std::size(range); }) {
    return static_cast<std::size_t>(std::size(range));
  } else {
    return static_cast<std::size_t>(std::distance(std::begin(range), std::end(range)));
  }
}

inline std::size_t count_header_size(std::size_t count, const Limits& limits) noexcept {
  return count > limits.max_elements ? 12 : 4;
}

template <typename T>
std::size_t value_size(const T& value, const Limits& limits) noexcept;

template <typename R>
std::size_t range_size(const R& range, const Limits& limits) noexcept {
  std::size_t count = element_count(range);
  std::size_t stored = count > limits.max_elements ? limits.max_elements : count;
  std::size_t size = count_header_size(count, limits);
  using E = range_element_t<R>;
  if constexpr (MapLike<R>) {
    constexpr std::size_t key = fixed_size_of<std::remove_cvref_t<typename R::key_type>>();
    constexpr std::size_t mapped = fixed_size_of<std::remove_cvref_t<typename R::mapped_type>>();
    if constexpr (key != 0 && mapped != 0) {
      return size + stored * (key + mapped);
    } else {
      auto it = std::begin(range);
      for (std::size_t i = 0; i < stored; ++i, ++it) size += value_size(it->first, limits) + value_size(it->second, limits);
      return size;
    }
  } else {
    constexpr std::size_t each = fixed_size_of<E>();
    if constexpr (each != 0) {
      return size + stored * each;
    } else {
      auto it = std::begin(range);
      for (std::size_t i = 0; i < stored; ++i, ++it) size += value_size(static_cast<const E&>(*it), limits);
      return size;
    }
  }
}

template <typename T>
std::size_t value_size(const T& value, const Limits& limits) noexcept {
  constexpr Kind kind = kind_of<T>();
  if constexpr (constexpr std::size_t fixed = fixed_size_of<T>(); fixed != 0) {
    (void)value;
    (void)limits;
    return fixed;
  } else if constexpr (kind == Kind::scalar) {  // strings; a null one has length 0
    std::size_t length = string_length(value);
    return 4 + (length > limits.max_string ? limits.max_string : length);
  } else if constexpr (kind == Kind::secret) {
    switch (limits.private_mode) {
      case schema::PrivateMode::hashed: return 9;
      case schema::PrivateMode::clear: return 1 + value_size(value.value, limits);
      default: return 1;
    }
  } else if constexpr (kind == Kind::user) {
    return value_size(codec<T>::fields(value), limits);
  } else if constexpr (kind == Kind::preformatted) {
    return 4 + format_eagerly_now(value, limits);
  } else if constexpr (kind == Kind::optional) {
    return 1 + (value.has_value() ? value_size(*value, limits) : 0);
  } else if constexpr (kind == Kind::variant) {
    if (value.valueless_by_exception()) return 1;
    return 1 + std::visit([&](const auto& alternative) { return value_size(alternative, limits); }, value);
  } else if constexpr (kind == Kind::monostate) {
    return 0;
  } else if constexpr (kind == Kind::error_code) {
    return 4 + value_size(value.category().name(), limits);
  } else if constexpr (kind == Kind::path) {
    return value_size(value.native(), limits);
  } else if constexpr (kind == Kind::field_list) {
    return std::apply([&](auto... member) { return (std::size_t{0} + ... + value_size(value.*member, limits)); },
                      fields<T>::members);
  } else if constexpr (kind == Kind::map || kind == Kind::set || kind == Kind::sequence) {
    return range_size(value, limits);
  } else if constexpr (kind == Kind::tuple) {
    return std::apply([&](const auto&... element) { return (std::size_t{0} + ... + value_size(element, limits)); },
                      value);
  } else if constexpr (kind == Kind::aggregate) {
    std::size_t size = 0;
    boost::pfr::for_each_field(value, [&](const auto& field) { size += value_size(field, limits); });
    return size;
  } else {
    require_loggable<T>();
    return 0;
  }
}

template <typename Word>
inline char* put_raw(char* out, Word word) noexcept {
  std::memcpy(out, &word, sizeof word);
  return out + sizeof word;
}

template <typename T>
char* write_value(char* out, const T& value, const Limits& limits) noexcept;

template <typename R>
char* write_range(char* out, const R& range, const Limits& limits) noexcept {
  std::size_t count = element_count(range);
  bool truncated = count > limits.max_elements;
  std::size_t stored = truncated ? limits.max_elements : count;
  out = put_raw(out, static_cast<std::uint32_t>(stored) | (truncated ? schema::kCountTruncatedBit : 0u));
  if (truncated) out = put_raw(out, static_cast<std::uint64_t>(count));
  if constexpr (is_plain_number_array<R>()) {
    std::size_t bytes = stored * sizeof(range_element_t<R>);
    if (bytes != 0) std::memcpy(out, std::data(range), bytes);
    return out + bytes;
  } else {
    auto it = std::begin(range);
    for (std::size_t i = 0; i < stored; ++i, ++it) {
      if constexpr (MapLike<R>) {
        out = write_value(out, it->first, limits);
        out = write_value(out, it->second, limits);
      } else {
        out = write_value(out, static_cast<const range_element_t<R>&>(*it), limits);
      }
    }
    return out;
  }
}

template <typename T>
char* write_value(char* out, const T& value, const Limits& limits) noexcept {
  constexpr Kind kind = kind_of<T>();
  if constexpr (kind == Kind::scalar) {
    constexpr auto tag = static_cast<std::uint8_t>(natural_tag<T>());
    if constexpr (tag == static_cast<std::uint8_t>(TypeTag::string)) {
      // A null `const char*` has length 0, and encode_arg marks it null.
      std::size_t length = string_length(value);
      bool truncated = length > limits.max_string;
      return encode_arg<tag>(out, value, static_cast<std::uint32_t>(truncated ? limits.max_string : length), truncated);
    } else {
      return encode_arg<tag>(out, value, 0, false);
    }
  } else if constexpr (kind == Kind::secret) {
    *out++ = static_cast<char>(limits.private_mode);
    if (limits.private_mode == schema::PrivateMode::clear) return write_value(out, value.value, limits);
    if (limits.private_mode != schema::PrivateMode::hashed) return out;
    // The hash covers the value's encoding, the same for equal values.
    std::string& scratch = private_scratch();
    Limits whole = limits;
    whole.private_mode = schema::PrivateMode::clear;
    scratch.resize(value_size(value.value, whole));
    char* end = write_value(scratch.data(), value.value, whole);
    return put_raw(out, private_hash(scratch.data(), static_cast<std::size_t>(end - scratch.data())));
  } else if constexpr (kind == Kind::user) {
    return write_value(out, codec<T>::fields(value), limits);
  } else if constexpr (kind == Kind::preformatted) {
    EagerTexts& eager = eager_texts();
    std::uint32_t length;
    std::memcpy(&length, eager.text.data() + eager.read, 4);
    std::memcpy(out, eager.text.data() + eager.read, 4 + length);
    eager.read += 4 + length;
    return out + 4 + length;
  } else if constexpr (kind == Kind::enumeration) {
    return put_raw(out, static_cast<std::underlying_type_t<T>>(value));
  } else if constexpr (kind == Kind::optional) {
    *out++ = value.has_value() ? 1 : 0;
    return value.has_value() ? write_value(out, *value, limits) : out;
  } else if constexpr (kind == Kind::variant) {
    if (value.valueless_by_exception()) {
      *out++ = static_cast<char>(schema::kVariantValueless);
      return out;
    }
    *out++ = static_cast<char>(value.index());
    return std::visit([&](const auto& alternative) { return write_value(out, alternative, limits); }, value);
  } else if constexpr (kind == Kind::monostate) {
    return out;
  } else if constexpr (kind == Kind::duration) {
    return write_value(out, value.count(), limits);
  } else if constexpr (kind == Kind::time_point) {
    return write_value(out, value.time_since_epoch().count(), limits);
  } else if constexpr (kind == Kind::error_code) {
    out = put_raw(out, static_cast<std::int32_t>(value.value()));
    return write_value(out, value.category().name(), limits);
  } else if constexpr (kind == Kind::path) {
    return write_value(out, value.native(), limits);
  } else if constexpr (kind == Kind::thread_id) {
    std::uint64_t native = 0;
    std::memcpy(&native, &value, sizeof value < 8 ? sizeof value : 8);
    return put_raw(out, native);
  } else if constexpr (kind == Kind::field_list) {
    std::apply([&](auto... member) { ((out = write_value(out, value.*member, limits)), ...); }, fields<T>::members);
    return out;
  } else if constexpr (kind == Kind::map || kind == Kind::set || kind == Kind::sequence) {
    return write_range(out, value, limits);
  } else if constexpr (kind == Kind::tuple) {
    std::apply([&](const auto&... element) { ((out = write_value(out, element, limits)), ...); }, value);
    return out;
  } else if constexpr (kind == Kind::aggregate) {
    boost::pfr::for_each_field(value, [&](const auto& field) { out = write_value(out, field, limits); });
    return out;
  } else {
    require_loggable<T>();
    return out;
  }
}

}  // namespace terse::detail

// TERSE_FIELDS(Type, a, b, c), at global scope: Type logs as
// {a: 1, b: 2.5, c: "x"} (and as a JSON object with those keys). Works for
// any class whose listed members are accessible, aggregate or not, and may
// list only some of them.
#define TERSE_DETAIL_PARENS ()
#define TERSE_DETAIL_EXPAND(...) TERSE_DETAIL_EXPAND4(TERSE_DETAIL_EXPAND4(TERSE_DETAIL_EXPAND4(__VA_ARGS__)))
#define TERSE_DETAIL_EXPAND4(...) TERSE_DETAIL_EXPAND3(TERSE_DETAIL_EXPAND3(TERSE_DETAIL_EXPAND3(__VA_ARGS__)))
#define TERSE_DETAIL_EXPAND3(...) TERSE_DETAIL_EXPAND2(TERSE_DETAIL_EXPAND2(TERSE_DETAIL_EXPAND2(__VA_ARGS__)))
#define TERSE_DETAIL_EXPAND2(...) TERSE_DETAIL_EXPAND1(TERSE_DETAIL_EXPAND1(TERSE_DETAIL_EXPAND1(__VA_ARGS__)))
#define TERSE_DETAIL_EXPAND1(...) __VA_ARGS__
#define TERSE_DETAIL_FOR_EACH(macro, type, ...) \
  __VA_OPT__(TERSE_DETAIL_EXPAND(TERSE_DETAIL_FOR_EACH_STEP(macro, type, __VA_ARGS__)))
#define TERSE_DETAIL_FOR_EACH_STEP(macro, type, first, ...) \
  macro(type, first) __VA_OPT__(TERSE_DETAIL_FOR_EACH_AGAIN TERSE_DETAIL_PARENS(macro, type, __VA_ARGS__))
#define TERSE_DETAIL_FOR_EACH_AGAIN() TERSE_DETAIL_FOR_EACH_STEP
#define TERSE_DETAIL_FIELD_NAME(type, member) std::string_view(#member),
#define TERSE_DETAIL_FIELD_POINTER(type, member) &type::member,

#define TERSE_FIELDS(type, ...)                                                                                   \
  template <>                                                                                                   \
  struct terse::fields<type> {                                                                                  \
    static constexpr std::string_view names[] = {                                                               \
        TERSE_DETAIL_FOR_EACH(TERSE_DETAIL_FIELD_NAME, type, __VA_ARGS__)};                                     \
    static constexpr auto members =                                                                             \
        ::terse::detail::member_list(TERSE_DETAIL_FOR_EACH(TERSE_DETAIL_FIELD_POINTER, type, __VA_ARGS__) nullptr); \
  }
