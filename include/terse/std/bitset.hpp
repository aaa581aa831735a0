// std::bitset as a logging argument (FORMAT.md §8.1 bitset). fmt 9 cannot
// format it; terse renders it as fmt 11 does: the text to_string() gives,
// most significant bit first, with a string's fill, align and width.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstring>

#include <fmt/core.h>

#include <terse/terse.hpp>

namespace terse::detail {

// The stand-in a bitset's format spec is checked against: fill, align and
// width (a number or a {} argument), nothing else.
struct RenderedAsBits {};

template <std::size_t N>
struct Encoding<std::bitset<N>> {
  static_assert(N <= schema::kMaxBitsetBits, "terse: a std::bitset may have at most 2^16 bits");
  static constexpr std::size_t bytes = (N + 7) / 8;
  using checked_as = RenderedAsBits;
  static void describe(std::string& out) {
    put_node(out, schema::TypeNode::bitset);
    put_varint(out, N);
  }
  static constexpr std::size_t fixed_size() { return bytes; }
  static std::size_t size(const std::bitset<N>&, const Limits&) noexcept { return bytes; }
  // Bit i is bit (i % 8) of byte (i / 8).
  static char* write(char* out, const std::bitset<N>& value, const Limits&) noexcept {
    std::memset(out, 0, bytes);
    for (std::size_t i = 0; i < N; ++i)
      if (value[i]) out[i / 8] = static_cast<char>(out[i / 8] | (1 << (i % 8)));
    return out + bytes;
  }
};

}  // namespace terse::detail

template <>
struct fmt::formatter<terse::detail::RenderedAsBits> {
  constexpr auto parse(format_parse_context& ctx) {
    auto it = ctx.begin();
    auto end = ctx.end();
    auto is_align = [](char c) { return c == '<' || c == '>' || c == '^'; };
    if (it != end && *it != '}' && it + 1 != end && is_align(it[1]) && *it != '{') {
      it += 2;
    } else if (it != end && is_align(*it)) {
      ++it;
    }
    if (it != end && *it == '{') {
      ++it;
      if (it != end && *it >= '0' && *it <= '9') {
        int id = 0;
        while (it != end && *it >= '0' && *it <= '9') id = id * 10 + (*it++ - '0');
        ctx.check_arg_id(id);
      } else {
        ctx.next_arg_id();
      }
      if (it == end || *it != '}') ctx.on_error("a bitset's width argument is {} or {N}");
      ++it;
    } else if (it != end && *it >= '1' && *it <= '9') {
      while (it != end && *it >= '0' && *it <= '9') ++it;
    }
    if (it != end && *it != '}') ctx.on_error("a bitset takes only fill, align and width");
    return it;
  }
  auto format(const terse::detail::RenderedAsBits&, format_context& ctx) const { return ctx.out(); }
};
