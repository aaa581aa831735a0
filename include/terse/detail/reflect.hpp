#pragma once

// Names the compiler knows and the language does not expose: enumerator
// names and type names, read at compile time from the signature of a
// function template instantiated for them (__PRETTY_FUNCTION__, whose
// layout GCC and Clang share closely enough).

#include <array>
#include <cstddef>
#include <limits>
#include <string_view>
#include <type_traits>
#include <utility>

#include <terse/enum_range.hpp>

namespace terse::detail {

template <typename T>
constexpr std::string_view signature_of_type() {
  return __PRETTY_FUNCTION__;
}

template <typename E, E V>
constexpr std::string_view signature_of_value() {
  return __PRETTY_FUNCTION__;
}

// The text after "KEY = " in a signature, up to the end of that template
// argument (GCC ends it with ';' or ']', Clang with ',' or ']').
constexpr std::string_view template_argument(std::string_view signature, std::string_view key) {
  std::size_t at = signature.rfind(key);
  if (at == std::string_view::npos) return {};
  std::string_view rest = signature.substr(at + key.size());
  int depth = 0;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    char c = rest[i];
    if (c == '<' || c == '(') {
      ++depth;
    } else if (c == '>' || c == ')') {
      --depth;
    } else if (depth == 0 && (c == ';' || c == ']' || c == ',')) {
      return rest.substr(0, i);
    }
  }
  return rest;
}

template <typename T>
constexpr std::string_view type_name() {
  return template_argument(signature_of_type<T>(), "T = ");
}

constexpr bool is_identifier_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

// "ns::Color::red" for a named value, "(ns::Color)5" or a number otherwise.
template <typename E, E V>
constexpr std::string_view enumerator_name() {
  std::string_view value = template_argument(signature_of_value<E, V>(), "V = ");
  if (value.empty() || !is_identifier_start(value[0])) return {};
  std::size_t colon = value.rfind("::");
  return colon == std::string_view::npos ? value : value.substr(colon + 2);
}

struct Enumerator {
  long long value;
  std::string_view name;
};

template <typename E>
struct EnumScan {
  using Underlying = std::underlying_type_t<E>;
  static constexpr long long type_lowest = static_cast<long long>(std::numeric_limits<Underlying>::min());
  static constexpr long long type_highest = std::is_unsigned_v<Underlying> && sizeof(Underlying) == 8
                                                ? std::numeric_limits<long long>::max()
                                                : static_cast<long long>(std::numeric_limits<Underlying>::max());
  static constexpr long long lowest = enum_range<E>::min > type_lowest ? enum_range<E>::min : type_lowest;
  static constexpr long long highest = enum_range<E>::max < type_highest ? enum_range<E>::max : type_highest;
  static_assert(highest >= lowest && highest - lowest < 4096,
                "terse: terse::enum_range<E> may span at most 4096 values");
  static constexpr std::size_t span = static_cast<std::size_t>(highest - lowest + 1);

  template <std::size_t... I>
  static constexpr std::array<std::string_view, span> all_names(std::index_sequence<I...>) {
    return {enumerator_name<E, static_cast<E>(lowest + static_cast<long long>(I))>()...};
  }
  static constexpr std::array<std::string_view, span> names = all_names(std::make_index_sequence<span>{});

  static constexpr std::size_t count() {
    std::size_t n = 0;
    for (auto name : names) n += !name.empty();
    return n;
  }

  static constexpr std::array<Enumerator, count()> enumerators() {
    std::array<Enumerator, count()> result{};
    std::size_t n = 0;
    for (std::size_t i = 0; i < span; ++i)
      if (!names[i].empty()) result[n++] = {lowest + static_cast<long long>(i), names[i]};
    return result;
  }
};

// Every named value of E in [enum_range<E>::min, enum_range<E>::max].
template <typename E>
inline constexpr auto enumerators_of = EnumScan<E>::enumerators();

}  // namespace terse::detail
