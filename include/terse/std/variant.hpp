// std::variant and std::monostate as logging arguments (FORMAT.md §8.1
// variant and monostate), rendered as fmt 10 renders them.
#pragma once

#include <cstddef>
#include <utility>
#include <variant>

#include <terse/terse.hpp>

namespace terse::detail {

template <typename... A>
struct Encoding<std::variant<A...>> : Unsized {
  using Variant = std::variant<A...>;
  static_assert(sizeof...(A) < schema::kVariantValueless, "terse: a variant has too many alternatives");
  using checked_as = RenderedWithoutSpec;
  static void describe(std::string& out) {
    put_node(out, schema::TypeNode::variant);
    put_varint(out, sizeof...(A));
    (detail::describe<A>(out), ...);
  }
  static std::size_t size(const Variant& value, const Limits& limits) noexcept {
    if (value.valueless_by_exception()) return 1;
    return 1 + std::visit([&](const auto& alternative) { return value_size(alternative, limits); }, value);
  }
  static char* write(char* out, const Variant& value, const Limits& limits) noexcept {
    if (value.valueless_by_exception()) {
      *out++ = static_cast<char>(schema::kVariantValueless);
      return out;
    }
    *out++ = static_cast<char>(value.index());
    return std::visit([&](const auto& alternative) { return write_value(out, alternative, limits); }, value);
  }
};

template <>
struct Encoding<std::monostate> : Unsized {
  using checked_as = RenderedWithoutSpec;
  static void describe(std::string& out) { put_node(out, schema::TypeNode::monostate); }
  static std::size_t size(const std::monostate&, const Limits&) noexcept { return 0; }
  static char* write(char* out, const std::monostate&, const Limits&) noexcept { return out; }
};

}  // namespace terse::detail
