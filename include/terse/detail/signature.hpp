#pragma once

// What a call site's argument types mean for its dictionary entry: the tag
// of each argument, the type expressions of its structured arguments and
// whether it has named ones (FORMAT.md §6, §8, §8.1).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <terse/detail/encode.hpp>
#include <terse/detail/structured.hpp>

namespace terse::detail {

template <typename T>
constexpr TypeTag argument_tag(const ArgumentUse& use) {
  using Value = unnamed_t<T>;
  if constexpr (is_structured<Value>) {
    return TypeTag::structured;
  } else if constexpr (is_char_pointer<Value> || is_char_array<Value>) {
    return use.as_pointer ? TypeTag::pointer : TypeTag::string;
  } else {
    return natural_tag<Value>();
  }
}

template <typename... Args>
struct Signature {
  static constexpr std::size_t size = sizeof...(Args);
  static constexpr bool has_structured = (false || ... || is_structured<unnamed_t<Args>>);
  static constexpr bool has_names = (false || ... || is_named_argument<Args>);

  static constexpr std::array<ArgumentUse, sizeof...(Args)> uses(std::string_view format) {
    std::array<ArgumentUse, sizeof...(Args)> result{};
    scan_argument_uses(format, result.data(), result.size());
    return result;
  }

  static constexpr std::array<std::uint8_t, sizeof...(Args)> tags(std::string_view format) {
    std::array<std::uint8_t, sizeof...(Args)> result{};
    if constexpr (sizeof...(Args) > 0) {
      auto uses = Signature::uses(format);
      std::size_t i = 0;
      ((result[i] = static_cast<std::uint8_t>(argument_tag<Args>(uses[i])), ++i), ...);
    }
    return result;
  }

  // fmt ignores arguments its format never names; terse treats them as
  // the mistake they almost always are. A named argument may be referred
  // to by a name known only at run time, so it counts as used.
  static constexpr bool uses_every_argument(std::string_view format) {
    constexpr std::array<bool, sizeof...(Args)> named{is_named_argument<Args>...};
    auto found = uses(format);
    for (std::size_t i = 0; i < sizeof...(Args); ++i)
      if (!found[i].used && !named[i]) return false;
    return true;
  }

  // A string is stored either as text or as its address, not both.
  static constexpr bool strings_presented_one_way(std::string_view format) {
    constexpr std::array<bool, sizeof...(Args)> is_text{
        (is_char_pointer<unnamed_t<Args>> || is_char_array<unnamed_t<Args>>)...};
    auto found = uses(format);
    for (std::size_t i = 0; i < sizeof...(Args); ++i)
      if (is_text[i] && found[i].as_pointer && found[i].as_value) return false;
    return true;
  }

  // FORMAT.md §6 `arg_types`: the count, then one expression per
  // structured argument, in order.
  static void describe_types(std::string& out) {
    put_varint(out, (std::size_t{0} + ... + (is_structured<unnamed_t<Args>> ? 1 : 0)));
    auto one = [&]<typename Value>(std::type_identity<Value>) {
      if constexpr (is_structured<Value>) describe<Value>(out);
    };
    (one(std::type_identity<unnamed_t<Args>>{}), ...);
  }

  static constexpr void (*describer())(std::string&) {
    if constexpr (has_structured || has_names) {
      return &Signature::describe_types;
    } else {
      return nullptr;
    }
  }
};

// Never called: the macro takes the argument types from its return type
// without evaluating the arguments.
template <typename... Args>
Signature<std::remove_cvref_t<Args>...> signature_of(const Args&...);

// The name a named argument was given, "" for a positional one.
template <typename T>
const char* argument_name(const T& argument) noexcept {
  if constexpr (is_named_argument<T>) {
    return argument.name;
  } else {
    (void)argument;
    return "";
  }
}

}  // namespace terse::detail
