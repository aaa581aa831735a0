// std::error_code, std::filesystem::path and std::thread::id as logging
// arguments (FORMAT.md §8.1 error_code, path and thread_id). A path is
// recognised by its shape, so this header does not include <filesystem>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>

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

// Calls put(byte) with each byte of the UTF-8 of wide text (UTF-16 where
// wchar_t has 16 bits, as on Windows; UTF-32 elsewhere) while it returns
// true. What is no character (an unpaired surrogate) is U+FFFD.
template <typename Put>
void for_each_utf8_byte(std::wstring_view text, Put put) noexcept {
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto code = static_cast<std::uint32_t>(text[i]);
    if constexpr (sizeof(wchar_t) == 2) {
      if (code >= 0xD800 && code < 0xDC00 && i + 1 < text.size() && text[i + 1] >= 0xDC00 && text[i + 1] < 0xE000) {
        code = 0x10000 + ((code - 0xD800) << 10) + (static_cast<std::uint32_t>(text[i + 1]) - 0xDC00);
        ++i;
      }
    }
    if ((code >= 0xD800 && code < 0xE000) || code > 0x10FFFF) code = 0xFFFD;
    unsigned char bytes[4];
    int count;
    if (code < 0x80) {
      bytes[0] = static_cast<unsigned char>(code);
      count = 1;
    } else if (code < 0x800) {
      bytes[0] = static_cast<unsigned char>(0xC0 | (code >> 6));
      bytes[1] = static_cast<unsigned char>(0x80 | (code & 0x3F));
      count = 2;
    } else if (code < 0x10000) {
      bytes[0] = static_cast<unsigned char>(0xE0 | (code >> 12));
      bytes[1] = static_cast<unsigned char>(0x80 | ((code >> 6) & 0x3F));
      bytes[2] = static_cast<unsigned char>(0x80 | (code & 0x3F));
      count = 3;
    } else {
      bytes[0] = static_cast<unsigned char>(0xF0 | (code >> 18));
      bytes[1] = static_cast<unsigned char>(0x80 | ((code >> 12) & 0x3F));
      bytes[2] = static_cast<unsigned char>(0x80 | ((code >> 6) & 0x3F));
      bytes[3] = static_cast<unsigned char>(0x80 | (code & 0x3F));
      count = 4;
    }
    for (int b = 0; b < count; ++b) {
      if (!put(static_cast<char>(bytes[b]))) return;
    }
  }
}

// fmt/std.h formats paths and thread ids with a string's spec; checking
// against a stand-in spares every logging file that header's cost. A path
// is stored as a string, in UTF-8 where the OS keeps it wide (Windows), as
// fmt prints it there.
template <typename T>
struct Encoding<T, kind::path> : Unsized {
  using checked_as = RenderedAsText;
  static constexpr bool kWide =
      std::is_same_v<std::remove_cvref_t<decltype(std::declval<const T&>().native()[0])>, wchar_t>;
  static void describe(std::string& out) { put_node(out, schema::TypeNode::path); }
  static std::size_t size(const T& value, const Limits& limits) noexcept {
    if constexpr (kWide) {
      std::size_t length = utf8_length(value);
      return 4 + (length > limits.max_string ? limits.max_string : length);
    } else {
      return value_size(value.native(), limits);
    }
  }
  static char* write(char* out, const T& value, const Limits& limits) noexcept {
    if constexpr (kWide) {
      std::size_t length = utf8_length(value);
      // Cut as a string in a structured value is (FORMAT.md §8.1).
      bool cut = length > limits.max_string;
      std::uint32_t header = cut ? limits.max_string | schema::kStringTruncatedBit : static_cast<std::uint32_t>(length);
      std::memcpy(out, &header, 4);
      char* text = out + 4;
      std::size_t left = cut ? limits.max_string : length;
      for_each_utf8_byte(std::wstring_view(value.native()), [&](char byte) {
        if (left == 0) return false;
        *text++ = byte;
        --left;
        return true;
      });
      return text;
    } else {
      return write_value(out, value.native(), limits);
    }
  }

 private:
  static std::size_t utf8_length(const T& value) noexcept {
    std::size_t length = 0;
    for_each_utf8_byte(std::wstring_view(value.native()), [&](char) { return ++length, true; });
    return length;
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
