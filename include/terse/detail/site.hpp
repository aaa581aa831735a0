#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace terse::detail {

// One per call site, a constant-initialised static created by the logging
// macro. Everything but `id` is fixed at compile time; `id` is assigned on
// the first call and read with a single load afterwards. The runtime copies
// the rest when the site registers and never reads the site again, so a
// library that logs may be unloaded (dlclose) with its records unwritten.
struct Site {
  const char* format;
  const char* file;
  std::uint32_t line;
  std::uint8_t level;
  std::uint8_t arg_count;
  const std::uint8_t* arg_tags;
  // Writes the type expressions of the site's structured arguments
  // (FORMAT.md §6 arg_types); null when it has neither structured nor
  // named arguments.
  void (*describe_types)(std::string&) = nullptr;
  std::atomic<std::uint32_t> id{0};
};

// Gives the site its id (lock-free; concurrent first calls agree on one id).
// `names` holds the argument names of a site with named arguments (its first
// call's), or is null. Returns 0 when the site cannot be registered.
std::uint32_t register_site(Site& site, const char* const* names = nullptr) noexcept;

}  // namespace terse::detail
