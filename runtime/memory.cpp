#include "memory.hpp"

#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

// AddressSanitizer checks bounds only in memory it allocated itself.
#if defined(__SANITIZE_ADDRESS__)
#define TERSE_MALLOC_ONLY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TERSE_MALLOC_ONLY 1
#endif
#endif
#if !defined(__linux__) && !defined(TERSE_MALLOC_ONLY)
#define TERSE_MALLOC_ONLY 1
#endif

namespace terse::detail {

#if defined(TERSE_MALLOC_ONLY)

char* map_populated(std::size_t bytes) noexcept {
  constexpr std::size_t kAlign = 64;
  auto* memory = static_cast<char*>(std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign));
  if (memory != nullptr) std::memset(memory, 0, bytes);
  return memory;
}

void unmap_populated(char* memory, std::size_t) noexcept { std::free(memory); }

char* map_lazy(std::size_t bytes) noexcept { return map_populated(bytes); }

void populate(char*, std::size_t) noexcept {}

bool discard(char*, std::size_t) noexcept { return false; }

#else

char* map_populated(std::size_t bytes) noexcept {
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  return memory == MAP_FAILED ? nullptr : static_cast<char*>(memory);
}

void unmap_populated(char* memory, std::size_t bytes) noexcept {
  if (memory != nullptr) ::munmap(memory, bytes);
}

char* map_lazy(std::size_t bytes) noexcept {
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return memory == MAP_FAILED ? nullptr : static_cast<char*>(memory);
}

void populate(char* memory, std::size_t bytes) noexcept {
#if !defined(MADV_POPULATE_WRITE)
  constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14; older C headers lack it
#endif
  // Page-aligned: the ring is, and its thread asks in page multiples.
  ::madvise(memory, bytes, MADV_POPULATE_WRITE);
}

bool discard(char* memory, std::size_t bytes) noexcept { return ::madvise(memory, bytes, MADV_DONTNEED) == 0; }

#endif

#if defined(__linux__) && !defined(TERSE_MALLOC_ONLY)

bool fences_other_threads() noexcept {
  static const bool registered = ::syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  return registered;
}

void fence_other_threads() noexcept { ::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0); }

#else

// Only ring memory from map_lazy() is ever given back, so without it (and
// under AddressSanitizer) nothing needs the fence.
bool fences_other_threads() noexcept { return false; }

void fence_other_threads() noexcept {}

#endif

}  // namespace terse::detail
