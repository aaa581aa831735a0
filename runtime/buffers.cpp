#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <thread>

#include "internal.hpp"

namespace terse::detail {
namespace {

std::atomic<std::uint32_t> g_next_thread_index{1};

// Marks the thread's buffer abandoned when the thread exits; the IO thread
// drains what is left and frees it.
struct BufferReleaser {
  ~BufferReleaser() {
    exiting = true;
    if (ThreadBuffer* buffer = tls_buffer) {
      tls_buffer = nullptr;
      buffer->abandoned.store(true, std::memory_order_release);
      wake_io_thread();
    }
  }
  bool exiting = false;
};
thread_local BufferReleaser tls_releaser;

void pause_briefly(unsigned attempt) noexcept {
  if (attempt < 64) {
#if TERSE_CLOCK_TSC
    _mm_pause();
#endif
  } else if (attempt < 256) {
    std::this_thread::yield();
  } else {
    timespec pause{0, 50'000};
    nanosleep(&pause, nullptr);
  }
}

}  // namespace

BufferSettings& buffer_settings() noexcept {
  static BufferSettings settings;
  return settings;
}

BufferRegistry& buffer_registry() noexcept {
  static BufferRegistry* registry = new BufferRegistry;  // outlives every thread, never destroyed
  return *registry;
}

ThreadBuffer* create_thread_buffer() {
  if (tls_releaser.exiting) return nullptr;
  std::size_t capacity = buffer_settings().buffer_bytes.load(std::memory_order_relaxed);
  auto* buffer = new (std::nothrow) ThreadBuffer;
  if (buffer == nullptr) return nullptr;
  buffer->data = static_cast<char*>(std::aligned_alloc(64, capacity));
  if (buffer->data == nullptr) {
    delete buffer;
    return nullptr;
  }
  // Touch every page now so the first pass through the ring takes no page faults.
  std::memset(buffer->data, 0, capacity);
  buffer->capacity = capacity;
  buffer->index = g_next_thread_index.fetch_add(1, std::memory_order_relaxed);
  buffer->os_tid = static_cast<std::uint64_t>(::syscall(SYS_gettid));
  pthread_getname_np(pthread_self(), buffer->name, sizeof buffer->name);
  {
    auto& registry = buffer_registry();
    std::lock_guard lock(registry.mutex);
    registry.buffers.push_back(buffer);
    registry.generation.fetch_add(1, std::memory_order_release);
  }
  tls_buffer = buffer;
  return buffer;
}

void destroy_thread_buffer(ThreadBuffer* buffer) noexcept {
  std::free(buffer->data);
  delete buffer;
}

static void count_drop(ThreadBuffer& buffer) noexcept {
  // Single writer: a plain load and store keep the counter exact without a
  // locked instruction.
  buffer.dropped.store(buffer.dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  buffer.last_drop_ticks.store(ticks(), std::memory_order_relaxed);
}

char* reserve_slow(ThreadBuffer& buffer, std::size_t size) noexcept {
  auto& settings = buffer_settings();
  for (unsigned attempt = 0;; ++attempt) {
    if (!settings.running.load(std::memory_order_acquire)) return nullptr;
    if (char* out = buffer.try_reserve(size)) return out;
    if (settings.drop_when_full.load(std::memory_order_relaxed)) {
      count_drop(buffer);
      return nullptr;
    }
    if (attempt == 0) wake_io_thread();
    pause_briefly(attempt);
  }
}

std::size_t fit_strings(std::size_t fixed_size, std::size_t limit, std::uint32_t* text_lengths, bool* truncated,
                        const bool* is_string, std::size_t count) noexcept {
  std::size_t budget = limit > fixed_size ? limit - fixed_size : 0;
  std::size_t total = fixed_size;
  for (std::size_t i = 0; i < count; ++i) {
    if (!is_string[i]) continue;
    if (text_lengths[i] > budget) {
      text_lengths[i] = static_cast<std::uint32_t>(budget);
      truncated[i] = true;
    }
    budget -= text_lengths[i];
    total += text_lengths[i];
  }
  return total;
}

std::int64_t realtime_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace terse::detail
