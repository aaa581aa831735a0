// Enumerator names are found at compile time by scanning a range of values.
#pragma once

namespace terse {

// The values scanned for enumerator names. Widen it for an enum whose
// named values lie outside (at most 4096 values, to keep compiles quick):
//   template <> struct terse::enum_range<Status> {
//     static constexpr long long min = 0, max = 1000;
//   };
template <typename E>
struct enum_range {
  static constexpr long long min = -128;
  static constexpr long long max = 255;
};

}  // namespace terse
