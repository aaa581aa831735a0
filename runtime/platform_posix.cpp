// platform.hpp on any POSIX system: what macOS and the BSDs have in common
// with Linux, and nothing else. CMake takes it with -DTERSE_PLATFORM=posix,
// which is how Linux proves that the rest of the tree needs no more. What
// it gives up against platform_linux.cpp: no futex (waits park on a
// condition variable), no membarrier (each call fences itself, so that idle
// buffers can give their memory back), no huge pages, no pages mapped ahead in one call, no CPU pinning.
#include "platform.hpp"
#include "whole_pages.hpp"

#include <terse/detail/buffer.hpp>

#include <dlfcn.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__FreeBSD__)
#include <pthread_np.h>
#endif

namespace terse::detail {

// Each OS numbers its threads its own way, and the number its tools show
// (ps, top, a debugger) is what a reader of the log looks for.
std::uint64_t thread_id() noexcept {
#if defined(__APPLE__)
  std::uint64_t id = 0;
  pthread_threadid_np(nullptr, &id);
  return id;
#elif defined(__FreeBSD__)
  return static_cast<std::uint64_t>(pthread_getthreadid_np());
#elif defined(__linux__)
  return static_cast<std::uint64_t>(::gettid());
#else
  // No OS number to show: one of our own, never 0, stable for the thread.
  static std::atomic<std::uint64_t> last{0};
  thread_local const std::uint64_t id = last.fetch_add(1, std::memory_order_relaxed) + 1;
  return id;
#endif
}

void name_thread(std::thread& thread, const char* name) noexcept {
  // 15 bytes and a NUL fit every system's limit (Linux's is the smallest).
  char cut[16];
  std::strncpy(cut, name, sizeof cut - 1);
  cut[sizeof cut - 1] = '\0';
#if defined(__APPLE__)
  // macOS names only the calling thread: terse's threads stay unnamed there.
  (void)thread;
  (void)cut;
#elif defined(__NetBSD__)
  pthread_setname_np(thread.native_handle(), "%s", cut);
#else
  pthread_setname_np(thread.native_handle(), cut);
#endif
}

// POSIX has no CPU affinity: Config::cpus may name any CPU the system has,
// and pinning is left to the OS.
int cpu_number_limit() noexcept {
  long cpus = sysconf(_SC_NPROCESSORS_CONF);
  return cpus > 0 ? static_cast<int>(cpus) : 1;
}

std::vector<bool> allowed_cpus() { return {}; }

void pin_thread(std::thread&, const std::vector<int>&) noexcept {}

void prefer_short_sleeps() noexcept {}

// Waiters park on one of a fixed set of condition variables, picked by the
// word's address. wake_all() takes the same mutex that wait_for_change()
// holds while it compares the word, so a wake after the word changed is
// never missed; words that share a slot only wake each other spuriously.
namespace {
struct ParkingSlot {
  std::mutex mutex;
  std::condition_variable changed;
};
ParkingSlot& slot_of(const void* word) noexcept {
  static std::array<ParkingSlot, 64> slots;
  auto address = reinterpret_cast<std::uintptr_t>(word);
  return slots[(address >> 4) % slots.size()];
}
}  // namespace

void wait_for_change(std::atomic<std::uint32_t>& word, std::uint32_t expected, long timeout_ns) noexcept {
  ParkingSlot& slot = slot_of(&word);
  std::unique_lock lock(slot.mutex);
  if (word.load(std::memory_order_acquire) != expected) return;
  slot.changed.wait_for(lock, std::chrono::nanoseconds(timeout_ns));
}

void wake_all(std::atomic<std::uint32_t>& word) noexcept {
  ParkingSlot& slot = slot_of(&word);
  { std::lock_guard lock(slot.mutex); }
  slot.changed.notify_all();
}

namespace {

char* map_anonymous(std::size_t bytes) noexcept {
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANON, -1, 0);
  return memory == MAP_FAILED ? nullptr : static_cast<char*>(memory);
}

}  // namespace

char* map_populated(std::size_t bytes) noexcept {
  char* memory = map_anonymous(bytes);
  if (memory != nullptr) write_each_page(memory, bytes);
  return memory;
}

void unmap_populated(char* memory, std::size_t bytes) noexcept {
  if (memory != nullptr) ::munmap(memory, bytes);
}

char* map_lazy(std::size_t bytes) noexcept { return map_anonymous(bytes); }

void populate(char*, std::size_t) noexcept {}

void prepare_pages(char* memory, std::size_t bytes) noexcept { write_each_page(memory, bytes); }

bool discard(char* memory, std::size_t bytes) noexcept {
  // Whole pages only, as on Linux. A fresh mapping over them is the POSIX
  // way to have them read as zeros: macOS's MADV_DONTNEED and MADV_FREE
  // keep the old bytes until the system needs the memory.
  WholePages pages = whole_pages_inside(memory, bytes);
  if (pages.bytes == 0) return false;
  return ::mmap(pages.start, pages.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANON | MAP_FIXED, -1, 0) !=
         MAP_FAILED;
}

char* map_huge(std::size_t) noexcept { return nullptr; }

std::size_t huge_ring_bytes(std::size_t bytes) noexcept { return bytes; }

void return_freed_memory() noexcept {}

// No system call fences the other threads: each call fences itself once its
// window is open, and this is the IO thread's half of that handshake.
static_assert(detail::kCallsFenceThemselves, "the calls of a program on this platform must fence themselves");

bool fences_other_threads() noexcept { return true; }

void fence_other_threads() noexcept { std::atomic_thread_fence(std::memory_order_seq_cst); }

std::string program_name() {
#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__)
  const char* name = getprogname();
  return name != nullptr ? name : "";
#else
  return {};
#endif
}

bool code_stays_loaded(const void* address) noexcept {
  // terse's own object only: telling the program from a library that
  // dlclose() may unload needs the loader's list, which each OS walks its
  // own way. Unsure is false.
  Dl_info own{};
  Dl_info code{};
  return dladdr(reinterpret_cast<const void*>(&code_stays_loaded), &own) != 0 && dladdr(address, &code) != 0 &&
         own.dli_fbase == code.dli_fbase;
}

bool sync_data(int fd) noexcept { return ::fsync(fd) == 0; }

}  // namespace terse::detail
