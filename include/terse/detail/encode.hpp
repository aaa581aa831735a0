#pragma once

// Compile-time side of argument encoding: which types can be logged, the
// type tag each one gets, and how its bytes are laid out (FORMAT.md §8).

#include <array>
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include <terse/schema.hpp>

namespace terse::detail {

using schema::TypeTag;

template <typename>
inline constexpr bool unsupported_type = false;

template <typename T>
inline constexpr bool is_char_pointer = std::is_same_v<T, const char*> || std::is_same_v<T, char*>;

template <typename T>
inline constexpr bool is_char_array = std::is_array_v<T>&& std::is_same_v<std::remove_extent_t<T>, char>;

template <typename T>
inline constexpr bool is_string_like =
    is_char_pointer<T> || is_char_array<T> || std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view>;

template <typename T>
inline constexpr bool is_void_pointer =
    std::is_same_v<T, void*> || std::is_same_v<T, const void*> || std::is_same_v<T, std::nullptr_t>;

// The tag a decayed argument type is stored under. fmt formats all integers
// of one signedness alike, so the narrowest width that holds the value is
// kept: the decoder widens it back exactly as fmt would.
template <typename T>
constexpr TypeTag natural_tag() {
  if constexpr (std::is_same_v<T, bool>) {
    return TypeTag::boolean;
  } else if constexpr (std::is_same_v<T, char>) {
    return TypeTag::character;
  } else if constexpr (std::is_same_v<T, wchar_t> || std::is_same_v<T, char8_t> || std::is_same_v<T, char16_t> ||
                       std::is_same_v<T, char32_t>) {
    static_assert(unsupported_type<T>, "terse: wide and Unicode character types cannot be logged");
    return TypeTag::character;
  } else if constexpr (std::is_integral_v<T> && sizeof(T) <= 8) {
    constexpr bool s = std::is_signed_v<T>;
    if constexpr (sizeof(T) == 1) return s ? TypeTag::i8 : TypeTag::u8;
    if constexpr (sizeof(T) == 2) return s ? TypeTag::i16 : TypeTag::u16;
    if constexpr (sizeof(T) == 4) return s ? TypeTag::i32 : TypeTag::u32;
    if constexpr (sizeof(T) == 8) return s ? TypeTag::i64 : TypeTag::u64;
  } else if constexpr (std::is_same_v<T, float>) {
    return TypeTag::f32;
  } else if constexpr (std::is_same_v<T, double>) {
    return TypeTag::f64;
  } else if constexpr (std::is_same_v<T, long double>) {
    if constexpr (LDBL_MANT_DIG == 64) return TypeTag::f80;
    if constexpr (LDBL_MANT_DIG == 113) return TypeTag::f128;
    if constexpr (LDBL_MANT_DIG == 53) return TypeTag::f64;
  } else if constexpr (is_string_like<T>) {
    return TypeTag::string;
  } else if constexpr (is_void_pointer<T>) {
    return TypeTag::pointer;
  } else {
    static_assert(unsupported_type<T>, "terse: this argument type cannot be logged (yet)");
    return TypeTag::string;
  }
}

// How a format string uses each argument, found at compile time: fmt
// prints a `const char*` under `{:p}` as its address, so such an argument
// is stored as a pointer instead of as text.
struct ArgumentUse {
  bool used = false;
  bool as_pointer = false;  // some field presents it with `p`
  bool as_value = false;    // some field presents it otherwise
};

constexpr void scan_argument_uses(std::string_view format, ArgumentUse* uses, std::size_t count) {
  std::size_t next_auto = 0;
  std::size_t i = 0;
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  auto is_name_char = [&](char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  auto parse_id = [&](std::size_t& id) {
    if (i < format.size() && !is_digit(format[i]) && is_name_char(format[i])) {
      // A named argument: which one it is shows only at run time, so it
      // takes no automatic index and marks nothing used here.
      while (i < format.size() && is_name_char(format[i])) ++i;
      id = SIZE_MAX;
    } else if (i < format.size() && is_digit(format[i])) {
      id = 0;
      while (i < format.size() && is_digit(format[i])) id = id * 10 + static_cast<std::size_t>(format[i++] - '0');
    } else {
      id = next_auto++;
    }
  };
  while (i < format.size()) {
    if (format[i] != '{') {
      ++i;
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '{') {
      i += 2;
      continue;
    }
    ++i;
    std::size_t id = 0;
    parse_id(id);
    while (i < format.size() && format[i] != ':' && format[i] != '}') ++i;
    char last = 0;
    if (i < format.size() && format[i] == ':') {
      ++i;
      while (i < format.size() && format[i] != '}') {
        if (format[i] == '{') {  // a dynamic width or precision
          ++i;
          std::size_t nested = 0;
          parse_id(nested);
          if (nested < count) uses[nested].used = true;
          while (i < format.size() && format[i] != '}') ++i;
          last = 0;
        } else {
          last = format[i];
        }
        ++i;
      }
    }
    if (id < count) {
      uses[id].used = true;
      (last == 'p' ? uses[id].as_pointer : uses[id].as_value) = true;
    }
    ++i;
  }
}

template <typename T>
inline std::size_t string_length(const T& value) noexcept {
  if constexpr (is_char_pointer<T>) {
    return value ? std::strlen(value) : 0;
  } else if constexpr (is_char_array<T>) {
    // A NUL in the last element (every string literal) makes strlen safe,
    // and strlen of a literal folds to a constant at compile time.
    if (value[std::extent_v<T> - 1] == '\0') return __builtin_strlen(value);
    return ::strnlen(value, std::extent_v<T>);
  } else {
    return value.size();
  }
}

template <typename T>
inline const char* string_data(const T& value) noexcept {
  if constexpr (is_char_pointer<T> || is_char_array<T>) {
    return value;
  } else {
    return value.data();
  }
}

// A string's bytes into the record, inline for up to 32 of them: most
// logged strings are that short, and a call through the PLT to the C
// library's memcpy costs a call made after a pause (cold caches, cold
// branch predictors) a few hundred cycles more than these moves. Reads and
// writes only the n bytes; the pairs of moves overlap in the middle.
inline void copy_text(char* out, const char* text, std::size_t n) noexcept {
  // g++ warns of the 8-byte moves of a branch that n rules out for a
  // shorter char array: it is told nothing of the array, at no cost.
  __asm__("" : "+r"(text));
  if (n <= 16) {
    if (n >= 8) {
      __builtin_memcpy(out, text, 8);
      __builtin_memcpy(out + n - 8, text + n - 8, 8);
    } else if (n >= 4) {
      __builtin_memcpy(out, text, 4);
      __builtin_memcpy(out + n - 4, text + n - 4, 4);
    } else if (n != 0) {
      out[0] = text[0];
      out[n / 2] = text[n / 2];
      out[n - 1] = text[n - 1];
    }
  } else if (n <= 32) {
    __builtin_memcpy(out, text, 16);
    __builtin_memcpy(out + n - 16, text + n - 16, 16);
  } else {
    std::memcpy(out, text, n);
  }
}

// Bytes of one encoded argument given its tag; `text_length` is the length
// a string will be stored with.
template <std::uint8_t Tag, typename T>
inline std::size_t encoded_size(const T& value, std::uint32_t& text_length) noexcept {
  if constexpr (Tag == static_cast<std::uint8_t>(TypeTag::string)) {
    std::size_t n = string_length(value);
    text_length = static_cast<std::uint32_t>(n > schema::kStringLengthMask ? schema::kStringLengthMask : n);
    return 4 + text_length;
  } else {
    (void)value;
    (void)text_length;
    return static_cast<std::size_t>(schema::type_tag_size(Tag));
  }
}

template <std::uint8_t Tag, typename T>
inline char* encode_arg(char* out, const T& value, std::uint32_t text_length, bool truncated) noexcept {
  if constexpr (Tag == static_cast<std::uint8_t>(TypeTag::string)) {
    std::uint32_t header = text_length;
    if (__builtin_expect(truncated, 0)) {
      // FORMAT.md §8 (1.3): a cut string says how long it was.
      const std::uint32_t cut = schema::kStringCut;
      const std::uint64_t original = string_length(value);
      std::memcpy(out, &cut, 4);
      std::memcpy(out + 4, &original, 8);
      out += schema::kStringCutPrefix;
      header |= schema::kStringTruncatedBit;
    }
    if constexpr (is_char_pointer<T>) {
      if (value == nullptr) header = schema::kStringNull;
    }
    std::memcpy(out, &header, 4);
    // The null test costs nothing for strings that cannot be null and lets
    // g++ see that a null `const char*` (length 0) is never read.
    const char* text = string_data(value);
    if (text != nullptr) copy_text(out + 4, text, text_length);
    return out + 4 + text_length;
  } else if constexpr (Tag == static_cast<std::uint8_t>(TypeTag::pointer)) {
    std::uint64_t address = 0;
    if constexpr (!std::is_same_v<T, std::nullptr_t>)
      address = reinterpret_cast<std::uintptr_t>(static_cast<const void*>(value));
    std::memcpy(out, &address, 8);
    return out + 8;
  } else {
    constexpr int size = schema::type_tag_size(Tag);
    static_assert(size > 0 && static_cast<std::size_t>(size) <= sizeof(T));
    std::memcpy(out, &value, static_cast<std::size_t>(size));
    return out + size;
  }
}

}  // namespace terse::detail
