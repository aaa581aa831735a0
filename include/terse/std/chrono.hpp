// std::chrono durations and time points as logging arguments (FORMAT.md §8.1
// duration and time_point), rendered as fmt/chrono.h renders them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <fmt/chrono.h>

#include <terse/terse.hpp>

namespace terse::detail {

template <typename Rep>
constexpr std::uint8_t rep_tag() {
  static_assert(std::is_arithmetic_v<Rep> && !std::is_same_v<Rep, bool>,
                "terse: a duration's count must be an integer or floating-point type");
  return static_cast<std::uint8_t>(natural_tag<Rep>());
}

template <typename Rep, typename Period>
void describe_count(std::string& out) {
  put_byte(out, rep_tag<Rep>());
  put_varint(out, static_cast<std::uint64_t>(Period::num));
  put_varint(out, static_cast<std::uint64_t>(Period::den));
}

template <typename Rep, typename Period>
struct Encoding<std::chrono::duration<Rep, Period>> {
  using checked_as = std::chrono::duration<Rep, Period>;
  static void describe(std::string& out) {
    put_node(out, schema::TypeNode::duration);
    describe_count<Rep, Period>(out);
  }
  static constexpr std::size_t fixed_size() { return static_cast<std::size_t>(schema::type_tag_size(rep_tag<Rep>())); }
  static char* write(char* out, const checked_as& value, const Limits& limits) noexcept {
    return write_value(out, value.count(), limits);
  }
};

template <typename Clock, typename Duration>
struct Encoding<std::chrono::time_point<Clock, Duration>> {
  using Rep = typename Duration::rep;
  // fmt formats a system_clock time point as a date; any other as its duration.
  using checked_as = std::conditional_t<std::is_same_v<Clock, std::chrono::system_clock>,
                                        std::chrono::time_point<Clock, Duration>, Duration>;
  static void describe(std::string& out) {
    schema::Clock clock = std::is_same_v<Clock, std::chrono::system_clock>   ? schema::Clock::system
                          : std::is_same_v<Clock, std::chrono::steady_clock> ? schema::Clock::steady
                                                                             : schema::Clock::other;
    put_node(out, schema::TypeNode::time_point);
    put_byte(out, static_cast<std::uint8_t>(clock));
    describe_count<Rep, typename Duration::period>(out);
  }
  static constexpr std::size_t fixed_size() { return static_cast<std::size_t>(schema::type_tag_size(rep_tag<Rep>())); }
  static char* write(char* out, const std::chrono::time_point<Clock, Duration>& value, const Limits& limits) noexcept {
    return write_value(out, value.time_since_epoch().count(), limits);
  }
};

}  // namespace terse::detail
