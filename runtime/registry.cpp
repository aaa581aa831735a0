#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <terse/detail/site.hpp>
#include <terse/wire.hpp>

namespace terse::detail {
namespace {

// Two levels so that the table grows without ever moving: a published
// pointer stays valid for the life of the process.
constexpr std::uint32_t kChunkBits = 12;
constexpr std::uint32_t kChunkSize = 1u << kChunkBits;
constexpr std::uint32_t kChunkCount = 1024;

std::atomic<std::atomic<const Site*>*> g_chunks[kChunkCount];
std::atomic<std::uint32_t> g_next_id{1};  // 0 is the control-record id

std::atomic<const Site*>* chunk_for(std::uint32_t id, bool create) noexcept {
  auto& slot = g_chunks[id >> kChunkBits];
  std::atomic<const Site*>* chunk = slot.load(std::memory_order_acquire);
  if (chunk != nullptr || !create) return chunk;
  auto* fresh = new (std::nothrow) std::atomic<const Site*>[kChunkSize]();
  if (fresh == nullptr) return nullptr;
  if (slot.compare_exchange_strong(chunk, fresh, std::memory_order_acq_rel)) return fresh;
  delete[] fresh;
  return chunk;
}

// FORMAT.md §6: arg_types, then arg_names when the site has any.
bool build_extension(Site& site, const char* const* names) noexcept {
  if (site.describe_types == nullptr || site.extension.load(std::memory_order_acquire) != nullptr) return true;
  try {
    auto extension = std::make_unique<std::string>();
    site.describe_types(*extension);
    if (names != nullptr) {
      wire::put_varint(*extension, site.arg_count);
      for (std::uint8_t i = 0; i < site.arg_count; ++i) wire::put_bytes(*extension, std::string_view(names[i]));
    }
    const std::string* expected = nullptr;
    if (site.extension.compare_exchange_strong(expected, extension.get(), std::memory_order_acq_rel))
      extension.release();  // lives as long as the site: for the rest of the process
    return true;
  } catch (...) {
    return false;  // out of memory: the call is lost, the next one tries again
  }
}

}  // namespace

std::uint32_t register_site(Site& site, const char* const* names) noexcept {
  std::uint32_t current = site.id.load(std::memory_order_acquire);
  if (current != 0) return current;
  if (!build_extension(site, names)) return 0;
  std::uint32_t id = g_next_id.fetch_add(1, std::memory_order_relaxed);
  if (id >= kChunkSize * kChunkCount) return 0;
  auto* chunk = chunk_for(id, true);
  if (chunk == nullptr) return 0;
  // Published before the id, so whoever sees the id finds the site.
  chunk[id & (kChunkSize - 1)].store(&site, std::memory_order_release);
  if (site.id.compare_exchange_strong(current, id, std::memory_order_acq_rel)) return id;
  // Another thread registered this site first; the id taken here stays unused.
  return current;
}

const Site* site_by_id(std::uint32_t id) noexcept {
  if (id >= kChunkSize * kChunkCount) return nullptr;
  auto* chunk = chunk_for(id, false);
  return chunk ? chunk[id & (kChunkSize - 1)].load(std::memory_order_acquire) : nullptr;
}

}  // namespace terse::detail
