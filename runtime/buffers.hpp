// The per-thread rings as the runtime's threads share them (buffers.cpp):
// the registry of buffers, the settings their slow paths read, and what the
// IO thread does to them (drain, wake, prepare pages, give pages back).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string_view>
#include <vector>

#include <terse/terse.hpp>

#include "platform.hpp"

namespace terse::detail {

// Settings the logging threads read on their slow paths.
struct BufferSettings {
  std::atomic<std::size_t> buffer_bytes{std::size_t{1} << 20};
  std::atomic<bool> drop_when_full{false};
  std::atomic<bool> running{false};
  std::atomic<bool> crash_handler{false};  // logging threads get a signal stack
  std::atomic<bool> huge_pages{true};      // Config::huge_pages
  // Config::release_idle_after is not zero. Where calls fence themselves
  // (detail::kCallsFenceThemselves), rings made while it is zero stay mapped.
  std::atomic<bool> release_idle{true};
};
BufferSettings& buffer_settings() noexcept;

// Every live thread buffer. The IO thread copies the list when the
// generation moves, and frees buffers whose thread has exited once drained.
struct BufferRegistry {
  std::mutex mutex;
  std::vector<ThreadBuffer*> buffers;
  std::atomic<std::uint64_t> generation{0};
  std::vector<ThreadBuffer*> spares;  // of exited threads, for new ones (buffers.cpp)
  // Threads in their first call while their buffer is made, each with a
  // lower bound of its record's stamp (kNotInCall: free). The IO thread
  // holds later records back to the earliest, as it does for a listed
  // buffer's in_call_since; a thread that finds none free stamps its record
  // once its buffer is listed.
  static constexpr std::size_t kStartingSlots = 16;
  std::atomic<std::uint64_t> starting[kStartingSlots];
  BufferRegistry() {
    for (auto& slot : starting) slot.store(kNotInCall, std::memory_order_relaxed);
  }
};
BufferRegistry& buffer_registry() noexcept;
// Frees the buffer of an exited thread, or keeps it for a new thread.
void destroy_thread_buffer(ThreadBuffer* buffer) noexcept;
// A ring's first step of ready pages, when it is new and after it was given
// back (buffers.cpp); a ring that wrote no more than this holds no more.
inline constexpr std::uint64_t kFaultedRingBytes = std::uint64_t{16} << 10;
// Rings of live threads that logged nothing for a while, each with the
// commit position the IO thread saw when it found them drained.
struct QuietRing {
  ThreadBuffer* buffer;
  std::uint64_t committed;
};
// On the IO thread: gives the pages of each ring back to the system unless
// its thread has begun a call meanwhile (that ring is left as it is: its
// thread is not idle).
// Returns how many it gave back. Only where fences_other_threads().
std::size_t give_back_rings(const std::vector<QuietRing>& rings) noexcept;
// On the IO thread: moves each drained ring to its huge_ring, in the same
// way, unless its thread has begun a call meanwhile. Returns how many moved.
std::size_t move_rings_to_huge_pages(const std::vector<QuietRing>& rings) noexcept;
// On the IO thread, each pass: prepares the next pages of a ring whose
// thread has filled half of those ready, so that the thread does not stop
// on them in its calls (buffers.cpp).
void prepare_ahead(ThreadBuffer& buffer) noexcept;
// A buffer with all of its ring mapped now, for terse::preallocate(): the
// thread then takes no page fault in its calls either. Its window is open,
// as create_thread_buffer()'s.
ThreadBuffer* create_thread_buffer_mapped();
// The earliest stamp a thread in its first call may give its record;
// kNotInCall when none is. Read before the list of buffers (refresh), so
// that a thread missing from the list is here.
std::uint64_t earliest_starting_call() noexcept;

// In a spin-wait: tells the core the loop is waiting, which yields the
// pipeline to a sibling hardware thread and saves power.
inline void spin_hint() noexcept {
#if TERSE_CLOCK_TSC
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// Sets a thread_local flag for the life of the object: how a call notices
// that it landed inside a call of its own thread (from a signal handler) in
// a part where the ring's window does not say so.
class FlagForScope {
 public:
  explicit FlagForScope(bool& flag) noexcept : flag_(flag) { flag_ = true; }
  ~FlagForScope() { flag_ = false; }
  FlagForScope(const FlagForScope&) = delete;
  FlagForScope& operator=(const FlagForScope&) = delete;

 private:
  bool& flag_;
};

// Calls visit(header, args) for each record of `b`'s ring in the
// positions [from, to): whole records, already committed.
template <typename Visit>
void for_each_ring_record(const ThreadBuffer& b, std::uint64_t from, std::uint64_t to, Visit&& visit) {
  while (from < to) {
    std::uint64_t offset = from & (b.capacity - 1);
    RingRecordHeader header;
    std::memcpy(&header, b.data + offset, 4);
    if (header.site_id == kRingWrapMarker) {
      from += b.capacity - offset;
      continue;
    }
    std::memcpy(&header, b.data + offset, sizeof header);
    visit(header, static_cast<const char*>(b.data + offset + kRingHeaderSize));
    from += ring_stride(header.args_size);
  }
}

// A control record (FORMAT.md §7) from the calling thread's buffer, whole
// or not at all (a full buffer under Overflow::drop counts it as a drop).
void write_control(std::string_view args) noexcept;

// Wakes the IO thread early: for a request (flush, stop), always.
void wake_io_thread() noexcept;
// For a ring filling up: only when the IO thread sleeps, and then only the
// first caller, so that threads logging at once make one syscall between them.
void nudge_io_thread() noexcept;

// The IO thread calls this after it moved `consumed` on to `consumed`.
inline void room_freed(ThreadBuffer& buffer, std::uint64_t consumed) noexcept {
  // Pairs with the fence in reserve_slow: either the producer sees the new
  // consumer position, or this sees that it waits. Acquire: with the flag,
  // the position it waits for (reserve_slow).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (buffer.waiting_for_room.load(std::memory_order_acquire) &&
      consumed >= buffer.wake_at_consumed.load(std::memory_order_relaxed)) {
    buffer.room_epoch.fetch_add(1, std::memory_order_relaxed);  // a token: see reserve_slow
    wake_all(buffer.room_epoch);
  }
}

// The calling thread has run its thread_local destructors (it is ending;
// the main thread, in exit's handlers and the static destructors).
bool thread_locals_gone() noexcept;

}  // namespace terse::detail
