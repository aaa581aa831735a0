#pragma once

#include <atomic>
#include <cstdint>

namespace terse::detail {

// One per call site, a constant-initialised static created by the logging
// macro. Everything but `id` is fixed at compile time; `id` is assigned on
// the first call and read with a single load afterwards.
struct Site {
  const char* format;
  const char* file;
  std::uint32_t line;
  std::uint8_t level;
  std::uint8_t arg_count;
  const std::uint8_t* arg_tags;
  std::atomic<std::uint32_t> id{0};
};

// Gives the site its id (lock-free; concurrent first calls agree on one id).
std::uint32_t register_site(Site& site) noexcept;

// The registry as the IO thread sees it: nullptr for ids not yet published.
const Site* site_by_id(std::uint32_t id) noexcept;

}  // namespace terse::detail
