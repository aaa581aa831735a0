// Out-of-line parts of structured arguments (terse/detail/structured.hpp):
// per-thread scratch space and the keyed hash of private values.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <terse/terse.hpp>

#include "private_values.hpp"

namespace terse::detail {
namespace {

// SipHash-2-4 (Aumasson and Bernstein, 2012), written from the paper: a
// keyed pseudo-random function, so a value's hash reveals nothing of it to
// whoever lacks the key, while equal values still hash alike.
inline std::uint64_t rotate(std::uint64_t x, int bits) { return (x << bits) | (x >> (64 - bits)); }

struct SipState {
  std::uint64_t v0, v1, v2, v3;
  void round() {
    v0 += v1;
    v1 = rotate(v1, 13);
    v1 ^= v0;
    v0 = rotate(v0, 32);
    v2 += v3;
    v3 = rotate(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotate(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotate(v1, 17);
    v1 ^= v2;
    v2 = rotate(v2, 32);
  }
  void absorb(std::uint64_t m) {
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};

std::uint64_t siphash24(std::uint64_t k0, std::uint64_t k1, const unsigned char* data, std::size_t size) {
  SipState s{k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
             k1 ^ 0x7465646279746573ull};
  std::size_t whole = size - size % 8;
  for (std::size_t i = 0; i < whole; i += 8) {
    std::uint64_t m;
    std::memcpy(&m, data + i, 8);
    s.absorb(m);
  }
  std::uint64_t last = static_cast<std::uint64_t>(size & 0xFF) << 56;
  for (std::size_t i = 0; i < size % 8; ++i) last |= static_cast<std::uint64_t>(data[whole + i]) << (8 * i);
  s.absorb(last);
  s.v2 ^= 0xFF;
  for (int i = 0; i < 4; ++i) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

std::atomic<std::uint64_t> g_key0{0};
std::atomic<std::uint64_t> g_key1{0};
std::atomic<bool> g_has_key{false};

}  // namespace

std::uint64_t siphash24_for_tests(std::uint64_t k0, std::uint64_t k1, const void* data, std::size_t size) noexcept {
  return siphash24(k0, k1, static_cast<const unsigned char*>(data), size);
}

void set_private_key(std::string_view key) noexcept {
  // Any length of key: two fixed-key hashes of it make the 128-bit key.
  const auto* bytes = reinterpret_cast<const unsigned char*>(key.data());
  g_key0.store(siphash24(0x7465727365ull, 1, bytes, key.size()), std::memory_order_relaxed);
  g_key1.store(siphash24(0x7465727365ull, 2, bytes, key.size()), std::memory_order_relaxed);
  g_has_key.store(!key.empty(), std::memory_order_release);
}

bool has_private_key() noexcept { return g_has_key.load(std::memory_order_acquire); }

std::uint64_t private_hash(const void* data, std::size_t size) noexcept {
  return siphash24(g_key0.load(std::memory_order_relaxed), g_key1.load(std::memory_order_relaxed),
                   static_cast<const unsigned char*>(data), size);
}

std::string& private_scratch() noexcept {
  thread_local std::string scratch;
  return scratch;
}

EagerTexts& eager_texts() noexcept {
  thread_local EagerTexts texts;
  return texts;
}

}  // namespace terse::detail

namespace terse {

void set_private_values(PrivateValues mode) noexcept {
  using schema::PrivateMode;
  PrivateMode stored = mode == PrivateValues::clear                               ? PrivateMode::clear
                       : mode == PrivateValues::hash && detail::has_private_key() ? PrivateMode::hashed
                                                                                  : PrivateMode::omitted;
  detail::g_hot.private_mode.store(static_cast<std::uint8_t>(stored), std::memory_order_relaxed);
}

}  // namespace terse
