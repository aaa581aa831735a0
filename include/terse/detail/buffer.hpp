#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace terse::detail {

// Layout of one record inside a thread's ring (never on disk): a 16-byte
// header, then the argument bytes exactly as FORMAT.md §8 stores them,
// padded so every record starts 8-byte aligned.
struct RingRecordHeader {
  std::uint32_t site_id;
  std::uint32_t args_size;
  std::uint64_t ticks;
};
inline constexpr std::size_t kRingHeaderSize = sizeof(RingRecordHeader);
// A site id no real site gets: "skip to the start of the ring".
inline constexpr std::uint32_t kRingWrapMarker = 0xFFFFFFFFu;
// Set in a record's site_id when the flight recorder keeps it instead of the
// file (Config::flight_level); site ids stay far below it.
inline constexpr std::uint32_t kRingFlightBit = 0x80000000u;

constexpr std::size_t ring_stride(std::size_t args_size) noexcept {
  return (kRingHeaderSize + args_size + 7) & ~std::size_t{7};
}

inline constexpr std::uint64_t kNotInCall = ~std::uint64_t{0};

// Whether each call puts a full fence between opening its window and its room check. The IO
// thread discards an idle ring's pages only once every thread has passed such a fence
// (give_back_rings): Linux's membarrier and Windows' FlushProcessWriteBuffers put it on the
// other threads at the IO thread's request, and the calls pay nothing. The POSIX platform
// (macOS, the BSDs, and -DTERSE_PLATFORM=posix, which sets TERSE_POSIX_ONLY for the programs
// that link it too) has no such call: there each call fences itself.
#if defined(TERSE_POSIX_ONLY) || !(defined(__linux__) || defined(_WIN32))
inline constexpr bool kCallsFenceThemselves = true;
#else
inline constexpr bool kCallsFenceThemselves = false;
#endif

// A single-producer single-consumer byte ring owned by one logging thread
// and drained by the IO thread. The producer touches only its own cache
// lines until the ring looks full; then it re-reads the consumer position.
struct ThreadBuffer {
  // Producer side.
  alignas(64) std::atomic<std::uint64_t> committed{0};
  // While a call is open, a lower bound of its record's timestamp (the
  // thread's previous one); kNotInCall otherwise. The IO thread writes
  // nothing later than this bound until the record is committed, so a
  // thread preempted mid-call cannot break time order.
  std::atomic<std::uint64_t> in_call_since{kNotInCall};
  std::uint64_t last_ticks = 0;
  std::uint64_t write_pos = 0;
  // set_async(false): each call waits until its record is in the file.
  // Here rather than beside the other settings, on the line a call reads
  // anyway: a call after a pause pays for every line it touches.
  std::atomic<bool> synchronous{false};
  // How far the producer writes before it looks at the consumer again: the
  // end of the room it last saw, or sooner, where the ring passes a quarter
  // full and a sleeping IO thread should be told (set by look_for_room()).
  // The IO thread sets it to 0 to send the next call to look_for_room()
  // before it gives the ring's pages back (give_back_rings()).
  std::atomic<std::uint64_t> look_again_at{0};
  char* data = nullptr;
  std::uint64_t capacity = 0;  // power of two
  // Records the drop policy discarded, written by this thread alone and
  // reported into the log by the IO thread.
  std::atomic<std::uint64_t> dropped{0};
  std::atomic<std::uint64_t> last_drop_ticks{0};
  // Calls that interrupted a call of the same thread (a signal handler's)
  // and were dropped: counted apart, with an atomic add, as the call they
  // interrupted may be in the middle of counting `dropped`.
  std::atomic<std::uint64_t> dropped_nested{0};
  std::uint64_t all_dropped() const noexcept {
    return dropped.load(std::memory_order_relaxed) + dropped_nested.load(std::memory_order_relaxed);
  }

  // Consumer side.
  alignas(64) std::atomic<std::uint64_t> consumed{0};
  std::uint64_t drops_reported = 0;
  std::uint64_t drops_checked_ticks = 0;  // drops not yet reported happened after this
  std::atomic<std::uint64_t> highest_fill{0};
  // `dropped` when the running logger started: a thread's buffer outlives
  // stop() and start(), terse::stats() counts from start().
  std::uint64_t dropped_before_start = 0;
  // How long the thread has been quiet, as the IO thread saw it: the commit
  // position and when it last changed, in steady-clock nanoseconds.
  std::uint64_t quiet_committed = 0;
  std::int64_t quiet_since_ns = 0;
  std::uint64_t given_back_at = 0;  // the commit position at the last give-back
  // A ring whose thread filled half of it moves to huge pages, at a moment
  // it is drained (move_rings_to_huge_pages): huge_ring is the new memory,
  // made ready ahead of that moment; first_mapping the memory it had, which
  // keeps the thread's signal stack and is freed with the buffer.
  char* huge_ring = nullptr;
  char* first_mapping = nullptr;
  bool huge_refused = false;  // the system gave none: not asked again
  // `consumed` when the IO thread last went to sleep: how fast the ring
  // fills decides how long it sleeps next (Collector::idle_sleep).
  std::uint64_t consumed_at_sleep = 0;

  // Shared, rarely written.
  alignas(64) std::atomic<bool> abandoned{false};
  // A producer that found the ring full sleeps on room_epoch; the IO thread
  // bumps it and wakes the producer when it frees space.
  std::atomic<bool> waiting_for_room{false};
  std::atomic<std::uint32_t> room_epoch{0};
  // The consumer position the waiting producer is woken at (see reserve_slow).
  std::atomic<std::uint64_t> wake_at_consumed{0};
  // Set while the IO thread gives the ring's pages back; `given_back`
  // counts the times it did. A call that finds it set waits for it to clear.
  std::atomic<bool> giving_back{false};
  std::atomic<std::uint32_t> given_back{0};
  // The positions [ready_from, ready_until) have their pages mapped and
  // touched, so that writing there costs no fault (kAllReady once the whole
  // ring has). The IO thread prepares the next pages ahead of the thread
  // (prepare_ahead), in steps that double, so that a ring takes memory as its
  // thread fills it; a thread that outruns it prepares them itself
  // (look_for_room). Whoever holds `preparing` extends the run; ready_until
  // is read by the producer without it (acquire: the pages are ready).
  // ready_from is written by the IO thread alone, while the producer is kept
  // out of its ring (give_back_rings), or before the ring is registered.
  static constexpr std::uint64_t kAllReady = ~std::uint64_t{0};
  std::atomic<std::uint64_t> ready_until{0};
  std::uint64_t ready_from = 0;
  std::atomic<bool> preparing{false};
  // All of the ring stays mapped, quiet or not: terse::preallocate()'s, and
  // where calls fence themselves (kCallsFenceThemselves) one made while
  // Config::release_idle_after was 0, whose calls then need no fence. Set
  // before the ring is listed, never changed.
  bool keep_mapped = false;
  std::uint32_t index = 0;  // small number that names the thread in files
  std::uint64_t os_tid = 0;
  char name[32] = {};

  // Room for `size` contiguous bytes (size already a multiple of 8), or
  // nullptr when the ring is full. Nothing is visible until commit(). Only
  // between begin_call() and commit() (or end_call()).
  char* try_reserve(std::size_t size) noexcept {
    // A compiler barrier is enough here: the IO thread's membarrier() puts
    // a full fence on this thread wherever it runs (change_drained_rings),
    // or begin_call() made one (kCallsFenceThemselves) where the ring may
    // be given back.
    // Before the position is read: a signal handler's call on this thread
    // then finds the window open before the ring is touched (begin_call).
    std::atomic_signal_fence(std::memory_order_seq_cst);
    std::uint64_t pos = write_pos;
    std::uint64_t offset = pos & (capacity - 1);
    // Both rare cases out of line, so that a call's path through here has
    // no taken branch: a call made after a pause pays for each of those.
    if (__builtin_expect(pos + size > look_again_at.load(std::memory_order_relaxed) || size > capacity - offset, 0))
      return try_reserve_rare(size);
    write_pos = pos + size;
    return data + offset;
  }
  // try_reserve() where the record wraps to the ring's start or the ring
  // may be full.
  char* try_reserve_rare(std::size_t size) noexcept;

  // Out of line, as the fast path rarely gets here: re-reads the consumer
  // position, wakes a sleeping IO thread once the ring fills up, maps the
  // ring's next pages when the IO thread has not prepared them yet, and says
  // whether the ring has room up to `end`.
  bool look_for_room(std::uint64_t end) noexcept;
  // The ring's pages are ready up to `end` at least; returns ready_until.
  std::uint64_t make_ready(std::uint64_t end) noexcept;

  // Opens a call's window, before its room check: the IO thread gives the
  // ring's pages back only while no window is open, and writes nothing later
  // than the thread's previous timestamp, which bounds the one the call
  // takes once it has room. commit() or end_call() closes the window; a
  // call that waits for room closes it while it waits (reserve_slow), so
  // that the other threads' records go on meanwhile.
  //
  // Opening is relaxed: the give-back orders it by its membarrier (see
  // try_reserve) or, where the OS has none, by the fence here, and the
  // collector's cutoff trails its clock by the ordering window, far longer than a store takes to be seen; the marker
  // is for a thread preempted mid-call. end_call() is relaxed too: its call
  // wrote nothing to the ring (no room), so there is nothing to publish.
  //
  // False, with nothing changed, when a call of this thread is open
  // already: this one interrupted it (from a signal handler) and must not
  // touch the ring, whose reservation the open call holds. try_reserve()'s
  // signal fence keeps the compiler from moving the ring's reads and writes
  // above the open window, where a handler would not see it.
  [[nodiscard]] bool begin_call() noexcept {
    if (__builtin_expect(in_call_since.load(std::memory_order_relaxed) != kNotInCall, 0)) return false;
    in_call_since.store(last_ticks, std::memory_order_relaxed);
    if constexpr (kCallsFenceThemselves) {
      if (!keep_mapped) std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    return true;
  }
  void end_call() noexcept { in_call_since.store(kNotInCall, std::memory_order_relaxed); }

  // Release both: the record's bytes before its position, and the position
  // before the cleared marker, which the collector reads first (drain).
  // `end` is write_pos as the reservation left it, which a caller keeps in
  // a register: read here, after the record's bytes (char stores, which may
  // alias it), it is loaded again, a store-forwarding wait in every call.
  void commit(std::uint64_t ticks, std::uint64_t end) noexcept {
    last_ticks = ticks;
    committed.store(end, std::memory_order_release);
    in_call_since.store(kNotInCall, std::memory_order_release);
  }
};

constinit inline thread_local ThreadBuffer* tls_buffer = nullptr;

// Slow paths, out of line so that each call site stays small.
//
// A thread's first call: its record is stamped as the call begins (the
// buffer's last_ticks), not once the buffer is made, which takes tens to
// hundreds of microseconds. The buffer comes back with the call's window
// open at that stamp, so that the IO thread held back later records of
// other threads all along: the caller goes on as after begin_call(), and
// closes it with commit() or end_call().
ThreadBuffer* create_thread_buffer();
// A call that interrupted a call of its own thread (begin_call() said no):
// counted as dropped, never written, never waiting. Async-signal-safe.
void drop_nested_call(ThreadBuffer& buffer) noexcept;
// Called when try_reserve failed: waits (block policy) or counts a drop
// (drop policy, returns nullptr with the call's window closed).
char* reserve_slow(ThreadBuffer& buffer, std::size_t size) noexcept;
// The largest record a ring accepts: half of it, so that a record that
// must wrap still fits once the ring has drained.
inline std::size_t max_record_size(const ThreadBuffer& buffer) noexcept { return buffer.capacity / 2; }
// Rings are never smaller than this (Config validation), so records up to
// half of it need no size check at all.
inline constexpr std::size_t kMinRingCapacity = 4096;

}  // namespace terse::detail
