// platform.hpp on Linux (glibc): the one runtime file with Linux headers.
#include "platform.hpp"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>

// AddressSanitizer checks bounds only in memory it allocated itself.
#if defined(__SANITIZE_ADDRESS__)
#define TERSE_MALLOC_ONLY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TERSE_MALLOC_ONLY 1
#endif
#endif

namespace terse::detail {

std::uint64_t thread_id() noexcept { return static_cast<std::uint64_t>(::gettid()); }

void name_thread(std::thread& thread, const char* name) noexcept {
  // Linux takes 15 bytes and a NUL, and refuses (ERANGE) rather than cut.
  char cut[16];
  std::strncpy(cut, name, sizeof cut - 1);
  cut[sizeof cut - 1] = '\0';
  pthread_setname_np(thread.native_handle(), cut);
}

int cpu_number_limit() noexcept { return CPU_SETSIZE; }

std::vector<bool> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  std::vector<bool> allowed(CPU_SETSIZE);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) allowed[static_cast<std::size_t>(cpu)] = CPU_ISSET(cpu, &set);
  return allowed;
}

void pin_thread(std::thread& thread, const std::vector<int>& cpus) noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus)
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
  pthread_setaffinity_np(thread.native_handle(), sizeof set, &set);
}

void prefer_short_sleeps() noexcept {
  // 1 us rather than the default 50 us.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
}

// The futex word is the atomic itself: std::atomic<std::uint32_t> is a
// plain, lock-free 32-bit integer on every Linux target.
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
              std::atomic<std::uint32_t>::is_always_lock_free);

void wait_for_change(std::atomic<std::uint32_t>& word, std::uint32_t expected, long timeout_ns) noexcept {
  timespec timeout{0, timeout_ns};
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, &timeout, nullptr, 0);
}

void wake_all(std::atomic<std::uint32_t>& word) noexcept {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

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

void prepare_pages(char*, std::size_t) noexcept {}  // set to zero already, every page touched

bool discard(char*, std::size_t) noexcept { return false; }

char* map_huge(std::size_t) noexcept { return nullptr; }

std::size_t huge_ring_bytes(std::size_t bytes) noexcept { return bytes; }

#else

namespace {

void touch_pages(const char* memory, std::size_t bytes) noexcept {
  auto page_mask = static_cast<std::uintptr_t>(page_bytes()) - 1;
  auto end = reinterpret_cast<std::uintptr_t>(memory) + bytes;
  // A read is enough once the page is mapped for writing; it reads only
  // bytes of the range, which the caller owns.
  for (auto at = reinterpret_cast<std::uintptr_t>(memory); at < end; at = (at | page_mask) + 1)
    (void)*reinterpret_cast<const volatile char*>(at);
}

}  // namespace

char* map_populated(std::size_t bytes) noexcept {
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (memory == MAP_FAILED) return nullptr;
  touch_pages(static_cast<const char*>(memory), bytes);
  return static_cast<char*>(memory);
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
  // The kernel wants a page-aligned start. Widening to whole pages stays in
  // the mapping (it ends on a page boundary) and changes no byte.
  auto page = static_cast<std::uintptr_t>(page_bytes());
  auto from = reinterpret_cast<std::uintptr_t>(memory) & ~(page - 1);
  auto to = reinterpret_cast<std::uintptr_t>(memory) + bytes;
  ::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
}

void prepare_pages(char* memory, std::size_t bytes) noexcept {
  populate(memory, bytes);
  touch_pages(memory, bytes);
}

bool discard(char* memory, std::size_t bytes) noexcept {
  // Narrowed to whole pages: the kernel would zero all of a partial one,
  // bytes that are not the caller's (a ring smaller than a 16 or 64 KiB
  // page shares it with its signal stack).
  auto page = static_cast<std::uintptr_t>(page_bytes());
  auto from = (reinterpret_cast<std::uintptr_t>(memory) + page - 1) & ~(page - 1);
  auto to = (reinterpret_cast<std::uintptr_t>(memory) + bytes) & ~(page - 1);
  if (to <= from) return false;
  return ::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED) == 0;
}

namespace {

constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

// "never" in the kernel's setting: MADV_HUGEPAGE would get 4 KiB pages,
// and a ring moved there would only take more memory.
bool huge_pages_offered() noexcept {
  static const bool offered = [] {
    std::FILE* file = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
    if (file == nullptr) return false;
    char setting[128] = {};
    std::size_t read = std::fread(setting, 1, sizeof setting - 1, file);
    std::fclose(file);
    return read > 0 && std::strstr(setting, "[never]") == nullptr;
  }();
  return offered;
}

}  // namespace

std::size_t huge_ring_bytes(std::size_t bytes) noexcept {
  return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

char* map_huge(std::size_t bytes) noexcept {
  if (!huge_pages_offered()) return nullptr;
  std::size_t span = huge_ring_bytes(bytes);
  // Mapped one huge page larger, then trimmed to an aligned start: the
  // kernel backs only aligned 2 MiB extents with a huge page.
  void* mapped = ::mmap(nullptr, span + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return nullptr;
  auto start = reinterpret_cast<std::uintptr_t>(mapped);
  auto aligned = (start + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  if (aligned > start) ::munmap(mapped, aligned - start);
  ::munmap(reinterpret_cast<void*>(aligned + span), start + kHugePageBytes - aligned);
  auto* memory = reinterpret_cast<char*>(aligned);
  if (::madvise(memory, span, MADV_HUGEPAGE) != 0) {
    ::munmap(memory, span);
    return nullptr;
  }
  prepare_pages(memory, bytes);
  return memory;
}

#endif

void return_freed_memory() noexcept {
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

#if !defined(TERSE_MALLOC_ONLY)

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

bool sync_data(int fd) noexcept { return ::fdatasync(fd) == 0; }

std::string program_name() {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return {};
  std::string_view whole(path, static_cast<std::size_t>(n));
  return std::string(whole.substr(whole.rfind('/') + 1));
}

bool code_stays_loaded(const void* address) noexcept {
  // terse's own object: its IO thread runs in it, so it outlives every record.
  Dl_info own{};
  Dl_info code{};
  if (dladdr(reinterpret_cast<const void*>(&code_stays_loaded), &own) != 0 && dladdr(address, &code) != 0 &&
      own.dli_fbase == code.dli_fbase)
    return true;
  // The program itself, which dl_iterate_phdr reports first.
  struct Search {
    std::uintptr_t address;
    bool found;
  } search{reinterpret_cast<std::uintptr_t>(address), false};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = info->dlpi_phdr[i];
          std::uintptr_t start = info->dlpi_addr + segment.p_vaddr;
          if (segment.p_type == PT_LOAD && s->address >= start && s->address - start < segment.p_memsz) s->found = true;
        }
        return 1;  // the program only
      },
      &search);
  return search.found;
}

}  // namespace terse::detail
