// The keyed hash behind PrivateValues::hash: SipHash-2-4, checked against
// the reference vectors of its paper (key 00 01 .. 0f, messages 00 01 ..
// of each length), so a hash in a log means the same in every build.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "private_values.hpp"

TEST_CASE("the private-values hash is SipHash-2-4 as its paper gives it", "[private]") {
  const std::uint64_t k0 = 0x0706050403020100ull;
  const std::uint64_t k1 = 0x0f0e0d0c0b0a0908ull;
  std::vector<unsigned char> message;
  for (unsigned char b = 0; b < 64; ++b) message.push_back(b);
  // Lengths 0, 1, 7, 8 and 15: empty, a partial word, a whole word, and both.
  CHECK(terse::detail::siphash24_for_tests(k0, k1, message.data(), 0) == 0x726fdb47dd0e0e31ull);
  CHECK(terse::detail::siphash24_for_tests(k0, k1, message.data(), 1) == 0x74f839c593dc67fdull);
  CHECK(terse::detail::siphash24_for_tests(k0, k1, message.data(), 7) == 0xab0200f58b01d137ull);
  CHECK(terse::detail::siphash24_for_tests(k0, k1, message.data(), 8) == 0x93f5f5799a932462ull);
  CHECK(terse::detail::siphash24_for_tests(k0, k1, message.data(), 15) == 0xa129ca6149be45e5ull);
}
