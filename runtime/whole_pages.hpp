// What the platform files that map pages themselves (platform_posix.cpp,
// platform_windows.cpp) do alike to them; Linux asks the kernel instead.
#pragma once

#include <cstddef>
#include <cstdint>

#include "platform.hpp"

namespace terse::detail {

// A write to each page maps it for writing now, as the producer's first
// write would; the byte keeps its value, and nobody else writes there yet.
inline void write_each_page(char* memory, std::size_t bytes) noexcept {
  auto page_mask = static_cast<std::uintptr_t>(page_bytes()) - 1;
  auto end = reinterpret_cast<std::uintptr_t>(memory) + bytes;
  for (auto at = reinterpret_cast<std::uintptr_t>(memory); at < end; at = (at | page_mask) + 1) {
    auto* byte = reinterpret_cast<volatile char*>(at);
    *byte = *byte;
  }
}

// The whole pages inside [memory, memory + bytes), never a byte outside it;
// `bytes` 0 when there are none.
struct WholePages {
  void* start = nullptr;
  std::size_t bytes = 0;
};
inline WholePages whole_pages_inside(char* memory, std::size_t bytes) noexcept {
  auto page = static_cast<std::uintptr_t>(page_bytes());
  auto from = (reinterpret_cast<std::uintptr_t>(memory) + page - 1) & ~(page - 1);
  auto to = (reinterpret_cast<std::uintptr_t>(memory) + bytes) & ~(page - 1);
  if (to <= from) return {};
  return {reinterpret_cast<void*>(from), static_cast<std::size_t>(to - from)};
}

}  // namespace terse::detail
