#include "registry.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <terse/detail/site.hpp>
#include <terse/wire.hpp>

namespace terse::detail {
namespace {

// Two levels so that the table grows without ever moving: a published
// pointer stays valid for the life of the process.
constexpr std::uint32_t kChunkBits = 12;
constexpr std::uint32_t kChunkSize = 1u << kChunkBits;
constexpr std::uint32_t kChunkCount = 1024;

std::atomic<std::atomic<const SiteInfo*>*> g_chunks[kChunkCount];
std::atomic<std::uint32_t> g_next_id{1};  // 0 is the control-record id

std::atomic<const SiteInfo*>* chunk_for(std::uint32_t id, bool create) noexcept {
  auto& slot = g_chunks[id >> kChunkBits];
  // Acquire, and acq_rel below: the chunk's zeroed slots are read through
  // the pointer, by the thread that lost the race too.
  std::atomic<const SiteInfo*>* chunk = slot.load(std::memory_order_acquire);
  if (chunk != nullptr || !create) return chunk;
  auto* fresh = new (std::nothrow) std::atomic<const SiteInfo*>[kChunkSize]();
  if (fresh == nullptr) return nullptr;
  if (slot.compare_exchange_strong(chunk, fresh, std::memory_order_acq_rel)) return fresh;
  delete[] fresh;
  return chunk;
}

// FORMAT.md §6: arg_types, then arg_names when the site has any, then the
// flags of a rate-limited or a context site (the fields before them written as empty
// where the site has none).
void build_extension(const Site& site, const char* const* names, std::string& extension) {
  bool limited = site.limit != nullptr;
  std::uint64_t flags = (limited ? schema::kSiteFlagLimited : 0) | (site.context ? schema::kSiteFlagContext : 0);
  if (site.describe_types == nullptr && flags == 0) return;
  if (site.describe_types != nullptr) {
    site.describe_types(extension);
  } else {
    wire::put_varint(extension, 0);
  }
  if (names != nullptr) {
    wire::put_varint(extension, site.arg_count);
    for (std::uint8_t i = 0; i < site.arg_count; ++i) wire::put_bytes(extension, std::string_view(names[i]));
  } else if (flags != 0) {
    wire::put_varint(extension, 0);
  }
  if (flags != 0) wire::put_varint(extension, flags);
}

// nullptr when out of memory: the call is lost, the next one tries again.
std::unique_ptr<SiteInfo> copy_site(const Site& site, const char* const* names) noexcept {
  try {
    auto info = std::make_unique<SiteInfo>();
    info->level = site.level;
    info->line = site.line;
    info->file = site.file;
    info->format = site.format;
    info->arg_tags.assign(site.arg_tags, site.arg_tags + site.arg_count);
    info->limited = site.limit != nullptr;
    info->encode_deltas = site.encode_deltas;
    build_extension(site, names, info->extension);
    return info;
  } catch (...) {
    return nullptr;
  }
}

// Copies that lost a registration race stay reachable here, so that a leak
// checker does not report memory kept on purpose.
void keep_retired(const SiteInfo* copy) noexcept {
  static std::mutex mutex;
  static auto* retired = new std::vector<const SiteInfo*>;  // never destroyed, like the copies
  std::lock_guard lock(mutex);
  try {
    retired->push_back(copy);
  } catch (...) {
    // Out of memory: the copy is merely unreachable, which is harmless.
  }
}

}  // namespace

std::uint32_t register_site(Site& site, const char* const* names) noexcept {
  std::uint32_t current = site.id.load(std::memory_order_acquire);
  if (current != 0) return current;
  std::unique_ptr<SiteInfo> info = copy_site(site, names);
  if (info == nullptr) return 0;
  std::uint32_t id = g_next_id.fetch_add(1, std::memory_order_relaxed);
  if (id >= kChunkSize * kChunkCount) return 0;
  auto* chunk = chunk_for(id, true);
  if (chunk == nullptr) return 0;
  info->id = id;
  // Lives for the rest of the process, after the site's library too.
  const SiteInfo* copy = info.release();
  // Published before the id, so whoever sees the id finds the copy: the
  // CAS releases the slot to the call sites' acquire of site.id, and their
  // commits carry it on to the IO thread's acquire of the slot. A failed
  // CAS acquires the winner's id, for the same chain.
  std::atomic<const SiteInfo*>& slot = chunk[id & (kChunkSize - 1)];
  slot.store(copy, std::memory_order_release);
  if (site.id.compare_exchange_strong(current, id, std::memory_order_acq_rel)) return id;
  // Another thread registered this site first; the id taken here stays
  // unused. Its copy leaves the walk but is not freed: a walk may be reading
  // it. Relaxed: a null publishes nothing, and a walk that still sees the
  // copy reads a valid one.
  slot.store(nullptr, std::memory_order_relaxed);
  keep_retired(copy);
  return current;
}

const SiteInfo* site_info(std::uint32_t id) noexcept {
  if (id >= kChunkSize * kChunkCount) return nullptr;
  auto* chunk = chunk_for(id, false);
  return chunk ? chunk[id & (kChunkSize - 1)].load(std::memory_order_acquire) : nullptr;
}

std::uint32_t site_id_bound() noexcept {
  // Relaxed: ids are taken with a relaxed fetch_add, so there is nothing to
  // acquire here; each slot below the bound is read with its own acquire.
  std::uint32_t bound = g_next_id.load(std::memory_order_relaxed);
  return bound < kChunkSize * kChunkCount ? bound : kChunkSize * kChunkCount;
}

}  // namespace terse::detail
