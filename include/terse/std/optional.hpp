// std::optional as a logging argument (FORMAT.md §8.1 optional), rendered
// as fmt 10 renders it: optional(value) or none.
#pragma once

#include <cstddef>
#include <optional>
#include <type_traits>

#include <terse/terse.hpp>

namespace terse::detail {

template <typename V>
struct Encoding<std::optional<V>> : Unsized {
  using checked_as = RenderedWithoutSpec;
  static void describe(std::string& out) {
    put_node(out, schema::TypeNode::optional);
    detail::describe<std::remove_cv_t<V>>(out);
  }
  static std::size_t size(const std::optional<V>& value, const Limits& limits) noexcept {
    return 1 + (value.has_value() ? value_size(*value, limits) : 0);
  }
  static char* write(char* out, const std::optional<V>& value, const Limits& limits) noexcept {
    *out++ = value.has_value() ? 1 : 0;
    return value.has_value() ? write_value(out, *value, limits) : out;
  }
};

}  // namespace terse::detail
