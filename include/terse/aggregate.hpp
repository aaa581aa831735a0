// Aggregates as logging arguments, reflected with Boost.PFR (FORMAT.md §8.1
// aggregate): `struct Point { int x; int y; };` logs as {1, 2}. Field names
// come with TERSE_FIELDS, which this header also brings.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <boost/pfr/core.hpp>
#include <boost/pfr/tuple_size.hpp>

#include <terse/fields.hpp>
#include <terse/terse.hpp>

namespace terse::detail {

template <typename T, std::size_t... I>
void describe_aggregate_fields(std::string& out, std::index_sequence<I...>) {
  ((put_bytes(out, std::string_view{}), describe<std::remove_cvref_t<boost::pfr::tuple_element_t<I, T>>>(out)), ...);
}

template <typename T, std::size_t... I>
constexpr std::size_t fixed_size_of_fields(std::index_sequence<I...>) {
  return fixed_sum({fixed_size_of<std::remove_cvref_t<boost::pfr::tuple_element_t<I, T>>>()...});
}

template <typename T>
struct Encoding<T, kind::aggregate> {
  static constexpr std::size_t count = boost::pfr::tuple_size_v<T>;
  static_assert(count <= schema::kMaxCompositeFields, "terse: too many fields");
  using checked_as = RenderedWithoutSpec;
  static void describe(std::string& out) {
    put_node(out, schema::TypeNode::aggregate);
    put_bytes(out, type_name<T>());
    put_varint(out, count);
    describe_aggregate_fields<T>(out, std::make_index_sequence<count>{});
  }
  static constexpr std::size_t fixed_size() { return fixed_size_of_fields<T>(std::make_index_sequence<count>{}); }
  static std::size_t size(const T& value, const Limits& limits) noexcept {
    std::size_t size = 0;
    boost::pfr::for_each_field(value, [&](const auto& field) { size += value_size(field, limits); });
    return size;
  }
  static char* write(char* out, const T& value, const Limits& limits) noexcept {
    boost::pfr::for_each_field(value, [&](const auto& field) { out = write_value(out, field, limits); });
    return out;
  }
};

}  // namespace terse::detail
