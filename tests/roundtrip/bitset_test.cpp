// std::bitset (FORMAT.md §8.1, type node 0x51) through the public API and
// the real decoder. fmt 9 cannot format a bitset, so the expectation is
// what fmt 11 prints: to_string()'s text, padded like a string.
#include <bitset>
#include <string>

#include <fmt/format.h>
#include <terse/std/bitset.hpp>

#include "roundtrip.hpp"

using namespace terse::test;

namespace {

template <std::size_t N>
std::string as_text(const std::bitset<N>& bits) {
  return bits.to_string();
}

}  // namespace

// Logs one call and records the text expected of it: the bitset as its
// string under the same format.
#define TERSE_EXPECT_BITS(rt, pattern, bits)                      \
  do {                                                            \
    TERSE_INFO(pattern, bits);                                    \
    (rt).expected.push_back(fmt::format(pattern, as_text(bits))); \
  } while (false)

TEST_CASE("a bitset prints its bits, the highest first, as to_string() gives them") {
  RoundTrip rt;
  TERSE_EXPECT_BITS(rt, "{}", std::bitset<10>(0x2F5));
  TERSE_EXPECT_BITS(rt, "{}", std::bitset<8>(0x81));
  TERSE_EXPECT_BITS(rt, "{}", std::bitset<1>(1));
  TERSE_EXPECT_BITS(rt, "[{}]", std::bitset<0>());
  std::bitset<200> wide;
  wide.set(0).set(77).set(199);
  TERSE_EXPECT_BITS(rt, "{}", wide);
  rt.check();
}

TEST_CASE("a bitset takes a string's fill, align and width") {
  RoundTrip rt;
  std::bitset<4> bits(0b0110);
  TERSE_EXPECT_BITS(rt, "{:>8}", bits);
  TERSE_EXPECT_BITS(rt, "{:*^9}", bits);
  TERSE_EXPECT_BITS(rt, "{:<6}|", bits);
  TERSE_EXPECT_BITS(rt, "{:2}", bits);
  TERSE_INFO("{:>{}}", bits, 7);
  rt.expected.push_back(fmt::format("{:>{}}", bits.to_string(), 7));
  rt.check();
}

TEST_CASE("a bitset as a named argument") {
  RoundTrip rt;
  std::bitset<3> bits(5);
  TERSE_INFO("mask {m}", fmt::arg("m", bits));
  rt.expected.push_back("mask 101");
  rt.check();
}
