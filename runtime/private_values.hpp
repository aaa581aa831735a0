// Private values (private_values.cpp): the key of PrivateValues::hash, and
// the keyed hash behind it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace terse::detail {

void set_private_key(std::string_view key) noexcept;
bool has_private_key() noexcept;
std::uint64_t siphash24_for_tests(std::uint64_t k0, std::uint64_t k1, const void* data, std::size_t size) noexcept;

}  // namespace terse::detail
