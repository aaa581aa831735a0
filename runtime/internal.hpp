// Shared between the runtime's translation units; never included by users.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include <terse/terse.hpp>

namespace terse::detail {

// Settings the logging threads read on their slow paths.
struct BufferSettings {
  std::atomic<std::size_t> buffer_bytes{std::size_t{1} << 20};
  std::atomic<bool> drop_when_full{false};
  std::atomic<bool> running{false};
};
BufferSettings& buffer_settings() noexcept;

// Every live thread buffer. The IO thread copies the list when the
// generation moves, and frees buffers whose thread has exited once drained.
struct BufferRegistry {
  std::mutex mutex;
  std::vector<ThreadBuffer*> buffers;
  std::atomic<std::uint64_t> generation{0};
};
BufferRegistry& buffer_registry() noexcept;
void destroy_thread_buffer(ThreadBuffer* buffer) noexcept;

// Wakes the IO thread early (a producer is waiting for room).
void wake_io_thread() noexcept;

std::int64_t realtime_ns() noexcept;

}  // namespace terse::detail
