// The CRC-32C checksum of FORMAT.md §1, shared by writer and reader. Apart
// from wire.hpp because only the file side needs it: the logging API stays
// free of boost/crc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <boost/crc.hpp>

#if defined(__aarch64__) && defined(__linux__)
#include <arm_acle.h>
#include <sys/auxv.h>
#define TERSE_CRC32C_ARMV8 1
#else
#define TERSE_CRC32C_ARMV8 0
#endif

namespace terse::wire {

// CRC-32C (Castagnoli), reflected, initial and final XOR 0xFFFFFFFF.
inline std::uint32_t crc32c_portable(const void* data, std::size_t size) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(data, size);
  return crc.checksum();
}

#if defined(__x86_64__)
// SSE 4.2 computes this very CRC in hardware, eight bytes a cycle or so,
// against about one byte a cycle for the table.
__attribute__((target("sse4.2"))) inline std::uint32_t crc32c_sse42(const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t crc = 0xFFFFFFFFu;
  for (; size >= 8; p += 8, size -= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    crc = __builtin_ia32_crc32di(crc, word);
  }
  auto crc32 = static_cast<std::uint32_t>(crc);
  for (; size > 0; ++p, --size) crc32 = __builtin_ia32_crc32qi(crc32, *p);
  return crc32 ^ 0xFFFFFFFFu;
}
#endif

#if TERSE_CRC32C_ARMV8
// ARMv8's CRC32 extension (optional in v8.0, required from v8.1) has the
// Castagnoli polynomial too. The target attribute lets this one function
// use it in a build for the baseline ISA, which every other function keeps.
__attribute__((target("+crc"))) inline std::uint32_t crc32c_armv8(const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t crc = 0xFFFFFFFFu;
  for (; size >= 8; p += 8, size -= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    crc = __crc32cd(crc, word);
  }
  for (; size > 0; ++p, --size) crc = __crc32cb(crc, *p);
  return crc ^ 0xFFFFFFFFu;
}
#endif

// The path crc32c() takes on this machine: the CPU's CRC-32C instruction
// where it has one, else nullptr (the portable table).
using Crc32cFunction = std::uint32_t (*)(const void*, std::size_t);
inline Crc32cFunction crc32c_hardware() noexcept {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("sse4.2")) return crc32c_sse42;
#elif TERSE_CRC32C_ARMV8
  // Linux says in the hardware capabilities whether the CPU has it (the
  // instruction would trap where it does not).
  if (getauxval(AT_HWCAP) & HWCAP_CRC32) return crc32c_armv8;
#endif
  return nullptr;
}

inline std::uint32_t crc32c(const void* data, std::size_t size) {
  static const Crc32cFunction hardware = crc32c_hardware();
  if (hardware != nullptr) return hardware(data, size);
  return crc32c_portable(data, size);
}

}  // namespace terse::wire
