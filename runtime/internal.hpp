// Shared between the runtime's translation units; never included by users.
#pragma once

#include <signal.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <terse/terse.hpp>
#include <terse/wire.hpp>

#include "clock.hpp"
#include "platform.hpp"

namespace terse::detail {

// Settings the logging threads read on their slow paths.
struct BufferSettings {
  std::atomic<std::size_t> buffer_bytes{std::size_t{1} << 20};
  std::atomic<bool> drop_when_full{false};
  std::atomic<bool> running{false};
  std::atomic<bool> crash_handler{false};  // logging threads get a signal stack
  std::atomic<bool> huge_pages{true};      // Config::huge_pages
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

// Gives a working buffer its capacity and touches its pages now, on an IO
// thread as it starts, rather than in the middle of the first busy batches.
inline void prefault(std::string& buffer, std::size_t bytes) {
  buffer.resize(bytes);
  buffer.clear();
}

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

// A rate-limited site's record starts with its suppressed count (FORMAT.md
// §7), which is not an argument: the bytes of that varint, or all of `args`
// when it does not end within them.
inline std::size_t suppressed_count_size(std::string_view args) {
  std::size_t size = 0;
  while (size < args.size() && (static_cast<unsigned char>(args[size]) & 0x80) != 0) ++size;
  return size < args.size() ? size + 1 : size;
}

// Private values (runtime/structured.cpp): the key of PrivateValues::hash.
void set_private_key(std::string_view key) noexcept;
bool has_private_key() noexcept;
std::uint64_t siphash24_for_tests(std::uint64_t k0, std::uint64_t k1, const void* data, std::size_t size) noexcept;

// The calling thread has run its thread_local destructors (it is ending;
// the main thread, in exit's handlers and the static destructors).
bool thread_locals_gone() noexcept;

// The exit and fork handlers (logger.cpp): by start(), and by a thread's
// first call before it, whose record is printed at exit if start() never runs.
void register_process_hooks() noexcept;

// A child of fork() whose parent logged with Config::log_after_fork: its
// first call starts a logger with the parent's Config (logger.cpp), from
// settle_gate, where every site's first call goes in the child.
bool child_start_pending() noexcept;
void start_in_forked_child() noexcept;
// terse::stop() with the lifecycle's lock held (logger.cpp).
void stop_under_lock();

// Crash flush (runtime/crash.cpp). flush_for_crash() is async-signal-safe:
// it asks the IO threads to write everything and waits a bounded time.
void install_crash_handlers() noexcept;
void uninstall_crash_handlers() noexcept;
void flush_for_crash() noexcept;

// Sleeps in 1 ms steps while `keep_waiting()` holds, `limit_ms` at most.
// Async-signal-safe (nanosleep only), for the signal handlers and for
// stop(), which waits for them. False when the limit ran out first.
template <typename Predicate>
bool wait_while(Predicate keep_waiting, int limit_ms) noexcept {
  for (int waited_ms = 0; waited_ms < limit_ms; ++waited_ms) {
    if (!keep_waiting()) return true;
    timespec pause{0, 1'000'000};
    nanosleep(&pause, nullptr);
  }
  return !keep_waiting();
}

// Termination flush (runtime/termination.cpp): SIGTERM, SIGINT and SIGHUP,
// where start() finds them at their default action. flush_for_termination()
// is async-signal-safe: it has the IO threads write everything (compressed,
// as always) and waits a bounded time, also for a stop() under way.
void install_termination_handlers() noexcept;
void uninstall_termination_handlers() noexcept;
void flush_for_termination() noexcept;
// terse's threads start with every asynchronous signal blocked (the
// termination signals included), so that a signal meant for the process
// runs its handler (the application's or terse's) on one of the
// application's threads, never on terse's in the middle of a write; a
// handler that logs would log from them too. Synchronous signals (a fault,
// abort()) stay deliverable, for the crash handler. Blocks them on the
// calling thread, for the threads it creates; `previous` to restore.
void block_async_signals(sigset_t* previous) noexcept;

}  // namespace terse::detail
