// The registry's copies of the call sites, as the IO side reads them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <terse/delta.hpp>
#include <terse/dictionary.hpp>

namespace terse::detail {

// What the IO side needs of a site, copied when the site registers. A Site is
// a static of the binary that logs: after a library is unloaded its sites are
// gone, but records of them may still wait in the buffers, so nothing behind
// the logging threads ever reads a Site. Allocated once, never freed.
struct SiteInfo {
  std::uint32_t id = 0;
  std::uint8_t level = 0;
  std::uint32_t line = 0;
  std::string file;
  std::string format;
  std::vector<std::uint8_t> arg_tags;
  std::string extension;  // FORMAT.md §6 arg_types, arg_names and flags; empty when the site has none
  bool limited = false;   // its records start with a suppressed count (FORMAT.md §6 flags)
  // The site's own coder, code of the site's object: call it only once
  // code_stays_loaded() said so.
  wire::DeltaEncoder encode_deltas = nullptr;

  schema::SiteEntry entry() const {
    return {id, level, line, file, format, arg_tags.data(), arg_tags.size(), extension};
  }
};

// nullptr for an id not yet published (or one never used).
const SiteInfo* site_info(std::uint32_t id) noexcept;

// One past the highest id handed out so far.
std::uint32_t site_id_bound() noexcept;

// Every registered site, in id order, those of unloaded libraries included.
template <typename Visit>
void for_each_site(Visit&& visit) {
  std::uint32_t bound = site_id_bound();
  for (std::uint32_t id = 1; id < bound; ++id)
    if (const SiteInfo* info = site_info(id)) visit(*info);
}

}  // namespace terse::detail
