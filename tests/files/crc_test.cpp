// CRC-32C (FORMAT.md §1) on both paths. crc32c() takes the CPU's path (SSE 4.2
// on x86, the CRC32 extension on 64-bit Arm) on every machine that has it, so
// without this test the portable path, which other machines use for every
// checksum, would go untested where CI runs.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <terse/crc.hpp>

namespace wire = terse::wire;

namespace {

// One bit at a time, straight from the definition: reflected polynomial
// 0x82F63B78, initial value and final XOR 0xFFFFFFFF.
std::uint32_t crc32c_bitwise(const unsigned char* data, std::size_t size) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? 0x82F63B78u : 0u);
  }
  return crc ^ 0xFFFFFFFFu;
}

std::string hardware_name() {
#if defined(__x86_64__)
  return wire::crc32c_hardware() != nullptr ? "sse4.2" : "none";
#elif TERSE_CRC32C_ARMV8
  return wire::crc32c_hardware() != nullptr ? "armv8 crc" : "none";
#else
  return "none";
#endif
}

// Every path this build has on this machine, each with the CRC it computes.
std::vector<std::pair<std::string, std::uint32_t>> all_paths(const void* data, std::size_t size) {
  std::vector<std::pair<std::string, std::uint32_t>> out;
  out.emplace_back("portable", wire::crc32c_portable(data, size));
  if (auto hardware = wire::crc32c_hardware()) out.emplace_back(hardware_name(), hardware(data, size));
  out.emplace_back("crc32c", wire::crc32c(data, size));
  return out;
}

void check_all_paths(const void* data, std::size_t size, std::uint32_t expected) {
  for (const auto& [path, crc] : all_paths(data, size)) {
    INFO(path << " over " << size << " bytes");
    CHECK(crc == expected);
  }
}

}  // namespace

TEST_CASE("the CPU's CRC-32C path is the one crc32c() takes where the CPU has one") {
  INFO("CRC-32C instructions on this machine: " << hardware_name());
  const std::string check = "123456789";
  if (auto hardware = wire::crc32c_hardware()) {
    // The path must not merely exist: crc32c() must use it.
    CHECK(hardware(check.data(), check.size()) == wire::crc32c(check.data(), check.size()));
  }
#if defined(__x86_64__)
  CHECK((wire::crc32c_hardware() != nullptr) == static_cast<bool>(__builtin_cpu_supports("sse4.2")));
#elif TERSE_CRC32C_ARMV8
  CHECK((wire::crc32c_hardware() != nullptr) == ((getauxval(AT_HWCAP) & HWCAP_CRC32) != 0));
#else
  CHECK(wire::crc32c_hardware() == nullptr);
#endif
}

TEST_CASE("every CRC-32C path gives the check values of the spec and of iSCSI") {
  INFO("CRC-32C instructions on this machine: " << hardware_name());
  const std::string check = "123456789";
  check_all_paths(check.data(), check.size(), 0xE3069283u);
  check_all_paths("", 0, 0u);

  // The 32-byte vectors of RFC 3720 (iSCSI), appendix B.4.
  std::vector<unsigned char> bytes(32, 0x00);
  check_all_paths(bytes.data(), bytes.size(), 0x8A9136AAu);
  bytes.assign(32, 0xFF);
  check_all_paths(bytes.data(), bytes.size(), 0x62A8AB43u);
  for (unsigned i = 0; i < 32; ++i) bytes[i] = static_cast<unsigned char>(i);
  check_all_paths(bytes.data(), bytes.size(), 0x46DD794Eu);
  for (unsigned i = 0; i < 32; ++i) bytes[i] = static_cast<unsigned char>(31 - i);
  check_all_paths(bytes.data(), bytes.size(), 0x113FDB5Cu);
}

TEST_CASE("every CRC-32C path agrees with the bitwise definition at every length and alignment") {
  INFO("CRC-32C instructions on this machine: " << hardware_name());
  std::mt19937 random(20240601);
  std::vector<unsigned char> buffer(4096 + 16);
  for (auto& b : buffer) b = static_cast<unsigned char>(random());
  // Every length up to 300 takes each path through all its head and tail
  // cases (the 8-byte loop and the bytes after it) many times over.
  std::vector<std::size_t> sizes;
  for (std::size_t size = 0; size <= 300; ++size) sizes.push_back(size);
  for (std::size_t size : {511, 512, 513, 1000, 1023, 1024, 1025, 4095, 4096}) sizes.push_back(size);
  for (std::size_t offset = 0; offset < 16; ++offset) {
    for (std::size_t size : sizes) {
      const unsigned char* data = buffer.data() + offset;
      INFO("offset " << offset);
      check_all_paths(data, size, crc32c_bitwise(data, size));
    }
  }
}

TEST_CASE("the hardware and portable CRC-32C paths agree on random buffers") {
  auto hardware = wire::crc32c_hardware();
  if (hardware == nullptr) {
    WARN("no CRC-32C instructions on this CPU: only the portable path was checked");
    return;
  }
  INFO("CRC-32C instructions on this machine: " << hardware_name());
  std::mt19937_64 random(7);
  std::vector<unsigned char> buffer(300 + 16);
  std::size_t differ = 0;
  std::string first;
  for (int round = 0; round < 20; ++round) {
    for (auto& b : buffer) b = static_cast<unsigned char>(random());
    for (std::size_t offset = 0; offset < 16; ++offset) {
      for (std::size_t size = 0; size <= 300; ++size) {
        const unsigned char* data = buffer.data() + offset;
        if (hardware(data, size) == wire::crc32c_portable(data, size)) continue;
        if (differ++ == 0)
          first = "round " + std::to_string(round) + ", offset " + std::to_string(offset) + ", " +
                  std::to_string(size) + " bytes";
      }
    }
  }
  INFO("the first that differs: " << first);
  CHECK(differ == 0);
}
