// Containers, ranges, pairs and tuples as logging arguments (FORMAT.md §8.1
// sequence, set, map and tuple): std::vector, std::array, std::span,
// std::list, std::deque, the sets and maps (unordered ones too), std::pair,
// std::tuple, C arrays, and any type with begin() and end() or a
// std::tuple_size. Rendered as fmt/ranges.h renders them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <ranges>
#include <set>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/ranges.h>

#include <terse/terse.hpp>

namespace terse::detail {

template <typename R>
using range_iterator_t = decltype(std::begin(std::declval<const R&>()));

template <typename I>
concept HasValueType = requires {
  typename std::iter_value_t<I>;
};

// An iterator that returns a proxy by value, standing for the value it converts to: libc++'s
// std::vector<bool> gives a bit reference where libstdc++ gives a bool.
template <typename I>
concept ProxyIterator = HasValueType<I> && !std::is_reference_v<std::iter_reference_t<I>> &&
                        !std::is_same_v<std::iter_reference_t<I>, std::iter_value_t<I>> &&
                        std::is_convertible_v<std::iter_reference_t<I>, std::iter_value_t<I>>;

template <typename R>
struct range_element {
  using type = std::remove_cvref_t<std::iter_reference_t<range_iterator_t<R>>>;
};
template <typename R>
requires ProxyIterator<range_iterator_t<R>>
struct range_element<R> {
  using type = std::iter_value_t<range_iterator_t<R>>;
};

template <typename R>
using range_element_t = typename range_element<R>::type;

// A contiguous range of numbers stored exactly as they lie in memory.
template <typename R>
constexpr bool is_plain_number_array() {
  if constexpr (!std::ranges::contiguous_range<const R&>) {
    return false;
  } else {
    using E = range_element_t<R>;
    if constexpr (std::is_arithmetic_v<E> && !std::is_same_v<E, bool>) {
      return static_cast<std::size_t>(schema::type_tag_size(static_cast<std::uint8_t>(natural_tag<E>()))) == sizeof(E);
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
      for (std::size_t i = 0; i < stored; ++i, ++it)
        size += value_size(it->first, limits) + value_size(it->second, limits);
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

// What sequences, sets and maps share: a count, then the elements.
template <typename R>
struct RangeEncoding : Unsized {
  static std::size_t size(const R& range, const Limits& limits) noexcept { return range_size(range, limits); }
  static char* write(char* out, const R& range, const Limits& limits) noexcept {
    return write_range(out, range, limits);
  }
};

template <typename T>
struct Encoding<T, kind::sequence> : RangeEncoding<T> {
  using checked_as = std::vector<checked_as_t<range_element_t<T>>>;
  static void describe(std::string& out) {
    put_node(out, schema::TypeNode::sequence);
    detail::describe<range_element_t<T>>(out);
  }
};

template <typename T>
struct Encoding<T, kind::set> : RangeEncoding<T> {
  using checked_as = std::set<checked_as_t<range_element_t<T>>>;
  static void describe(std::string& out) {
    put_node(out, schema::TypeNode::set);
    detail::describe<range_element_t<T>>(out);
  }
};

template <typename T>
struct Encoding<T, kind::map> : RangeEncoding<T> {
  using Key = std::remove_cvref_t<typename T::key_type>;
  using Mapped = std::remove_cvref_t<typename T::mapped_type>;
  using checked_as = std::map<checked_as_t<Key>, checked_as_t<Mapped>>;
  static void describe(std::string& out) {
    put_node(out, schema::TypeNode::map);
    detail::describe<Key>(out);
    detail::describe<Mapped>(out);
  }
};

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

template <typename Tuple, std::size_t... I>
constexpr std::size_t fixed_size_of_elements(std::index_sequence<I...>) {
  return fixed_sum({fixed_size_of<std::remove_cvref_t<std::tuple_element_t<I, Tuple>>>()...});
}

template <typename T>
struct Encoding<T, kind::tuple> {
  static constexpr std::size_t count = std::tuple_size_v<T>;
  static_assert(count <= schema::kMaxCompositeFields, "terse: too many tuple elements");
  using checked_as = typename checked_as_tuple<T>::type;
  static void describe(std::string& out) {
    put_node(out, schema::TypeNode::tuple);
    put_varint(out, count);
    describe_elements<T>(out, std::make_index_sequence<count>{});
  }
  static constexpr std::size_t fixed_size() { return fixed_size_of_elements<T>(std::make_index_sequence<count>{}); }
  static std::size_t size(const T& value, const Limits& limits) noexcept { return tuple_size_of(value, limits); }
  static char* write(char* out, const T& value, const Limits& limits) noexcept {
    return write_tuple(out, value, limits);
  }
};

}  // namespace terse::detail
