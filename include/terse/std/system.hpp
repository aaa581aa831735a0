// std::error_code, std::filesystem::path and std::thread::id as logging
// arguments (FORMAT.md §8.1 error_code, path and thread_id). A path is
// recognised by its shape, so this header does not include <filesystem>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <system_error>
#include <thread>

#include <terse/terse.hpp>

namespace terse::detail {

template <>
struct Encoding<std::error_code> : Unsized {
  using checked_as = RenderedWithoutSpec;
  static void describe(std::string& out) { put_node(out, schema::TypeNode::error_code); }
  static std::size_t size(const std::error_code& value, const Limits& limits) noexcept {
    return 4 + value_size(value.category().name(), limits);
  }
  static char* write(char* out, const std::error_code& value, const Limits& limits) noexcept {
    out = put_raw(out, static_cast<std::int32_t>(value.value()));
    return write_value(out, value.category().name(), limits);
  }
};

// fmt/std.h formats paths and thread ids with a string's spec; checking
// against a stand-in spares every logging file that header's cost.
template <typename T>
struct Encoding<T, kind::path> : Unsized {
  using checked_as = RenderedAsText;
  static void describe(std::string& out) { put_node(out, schema::TypeNode::path); }
  static std::size_t size(const T& value, const Limits& limits) noexcept { return value_size(value.native(), limits); }
  static char* write(char* out, const T& value, const Limits& limits) noexcept {
    return write_value(out, value.native(), limits);
  }
};

template <>
struct Encoding<std::thread::id> {
  using checked_as = RenderedAsText;
  static void describe(std::string& out) { put_node(out, schema::TypeNode::thread_id); }
  static constexpr std::size_t fixed_size() { return 8; }
  static char* write(char* out, const std::thread::id& value, const Limits&) noexcept {
    std::uint64_t native = 0;
    std::memcpy(&native, &value, sizeof value < 8 ? sizeof value : 8);
    return put_raw(out, native);
  }
};

}  // namespace terse::detail
