#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace terse::detail {

// One per call site, a constant-initialised static created by the logging
// macro. Everything but `id` and `extension` is fixed at compile time; `id`
// is assigned on the first call and read with a single load afterwards.
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
  // The bytes appended to the site's dictionary entry (arg_types and
  // arg_names), built once when the site registers, before its id is
  // published; null for a site without them.
  std::atomic<const std::string*> extension{nullptr};
};

// Gives the site its id (lock-free; concurrent first calls agree on one id).
// `names` holds the argument names of a site with named arguments (its first
// call's), or is null. Returns 0 when the site cannot be registered.
std::uint32_t register_site(Site& site, const char* const* names = nullptr) noexcept;

// The registry as the IO thread sees it: nullptr for ids not yet published.
const Site* site_by_id(std::uint32_t id) noexcept;

}  // namespace terse::detail
