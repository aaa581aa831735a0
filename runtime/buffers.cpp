#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <type_traits>

#include "buffers.hpp"
#include "fallback.hpp"
#include "lifecycle.hpp"

namespace terse::detail {
namespace {

std::atomic<std::uint32_t> g_next_thread_index{1};

// A new ring, and a ring given back, starts with this much ready; the IO
// thread prepares more ahead of its thread as it fills it.
constexpr std::uint64_t kFirstReadyBytes = kFaultedRingBytes;
// The IO thread prepares a ring's pages in runs of this much, each published
// as soon as it is ready, so that a thread that caught up with it waits for
// one run at most (tens of microseconds).
constexpr std::uint64_t kPrepareRunBytes = std::uint64_t{64} << 10;
// Each ring's mapping ends in the alternate signal stack of its thread.
constexpr std::size_t kSignalStackBytes = 64 * 1024;
// Buffers of exited threads that never logged past kFirstReadyBytes, kept for
// the next new threads: a pool that replaces its threads then costs no
// mapping and unmapping per thread (both wait for the process's mapping
// lock, which creating and ending threads hold), and at most this many
// times a few pages.
constexpr std::size_t kSpareBuffers = 64;

// The thread is done with its buffer: the IO thread drains what is left
// and frees it.
void abandon(ThreadBuffer* buffer) noexcept {
  if (tls_buffer == buffer) tls_buffer = nullptr;
  buffer->abandoned.store(true, std::memory_order_release);
  nudge_io_thread();
}

// Abandons the thread's buffer when the thread exits.
struct BufferReleaser {
#if defined(__MINGW32__)
  // MinGW-w64 may free a thread_local's storage before its destructor runs
  // (GCC bug 80816): there the buffer is abandoned by run_at_thread_end()
  // instead, which runs before the thread_local destructors on Windows.
#else
  ~BufferReleaser() {
    exiting = true;
    // The stack lives in the buffer, which the IO thread may free as soon
    // as it is abandoned: off it first.
    if (has_signal_stack) leave_signal_stack();
    if (ThreadBuffer* buffer = tls_buffer) abandon(buffer);
  }
#endif
  bool exiting = false;
  bool has_signal_stack = false;  // installed by us, in the thread's buffer
};
thread_local BufferReleaser tls_releaser;

// A thread that overflows its stack gets SIGSEGV with no stack left to run
// the crash handler on; an alternate signal stack lets it still write the
// log. Threads that already have one keep theirs.
void give_signal_stack(ThreadBuffer& buffer) noexcept {
  if (use_signal_stack(buffer.data + buffer.capacity, kSignalStackBytes)) tls_releaser.has_signal_stack = true;
}

// The buffer of a thread that has ended: one it made past its thread_local
// destructors, or any where the releaser has no destructor (MinGW-w64).
void abandon_at_thread_end(void* buffer) noexcept { abandon(static_cast<ThreadBuffer*>(buffer)); }

void unmap_buffer(ThreadBuffer* buffer) noexcept {
  if (buffer->first_mapping != nullptr) {
    unmap_populated(buffer->data, huge_ring_bytes(buffer->capacity));
    unmap_populated(buffer->first_mapping, buffer->capacity + kSignalStackBytes);
  } else {
    unmap_populated(buffer->data, buffer->capacity + kSignalStackBytes);
  }
  if (buffer->huge_ring != nullptr) unmap_populated(buffer->huge_ring, huge_ring_bytes(buffer->capacity));
  delete buffer;
}

// A spare buffer of `capacity`, reset to a new one's state; null for none.
ThreadBuffer* take_spare(std::vector<ThreadBuffer*>& spares, std::size_t capacity) noexcept {
  while (!spares.empty()) {
    ThreadBuffer* spare = spares.back();
    spares.pop_back();
    if (spare->capacity != capacity) {  // thread_buffer_bytes changed at a restart
      unmap_buffer(spare);
      continue;
    }
    char* data = spare->data;
    spare->~ThreadBuffer();
    auto* fresh = new (spare) ThreadBuffer;
    fresh->data = data;
    fresh->capacity = capacity;
    return fresh;
  }
  return nullptr;
}

// Calls `each(memory, bytes)` on the ring memory of the positions [from,
// to), to - from at most a whole ring.
template <typename Each>
void for_positions(ThreadBuffer& b, std::uint64_t from, std::uint64_t to, Each each) noexcept {
  std::uint64_t offset = from & (b.capacity - 1);
  std::uint64_t bytes = to - from;
  std::uint64_t first = std::min(bytes, b.capacity - offset);
  each(b.data + offset, static_cast<std::size_t>(first));
  if (bytes > first) each(b.data, static_cast<std::size_t>(bytes - first));
}

// The end of the step that makes the ring ready past `end`: the ready run
// doubles, by kFirstReadyBytes at least, up to the whole ring.
std::uint64_t next_ready_step(const ThreadBuffer& b, std::uint64_t ready, std::uint64_t end) noexcept {
  std::uint64_t page = page_bytes();
  std::uint64_t want =
      std::max({(end + page - 1) & ~(page - 1), b.ready_from + 2 * (ready - b.ready_from), ready + kFirstReadyBytes});
  return std::min(want, b.ready_from + b.capacity);
}

void publish_ready(ThreadBuffer& b, std::uint64_t until) noexcept {
  b.ready_until.store(until == b.ready_from + b.capacity ? ThreadBuffer::kAllReady : until, std::memory_order_release);
}

// The first step of a ring whose run starts at ready_from (new, or given
// back), prepared by whoever owns the ring's bookkeeping at the time.
void prepare_first_step(ThreadBuffer& b) noexcept {
  std::uint64_t to = std::min(b.ready_from + kFirstReadyBytes, b.ready_from + b.capacity);
  for_positions(b, b.ready_from, to, prepare_pages);
  publish_ready(b, to);
}

void wait_a_moment(unsigned spins) noexcept {
  if (spins < 64) {
    spin_hint();
  } else {
    std::this_thread::yield();
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

std::uint64_t earliest_starting_call() noexcept {
  std::uint64_t earliest = kNotInCall;
  for (auto& slot : buffer_registry().starting) earliest = std::min(earliest, slot.load(std::memory_order_acquire));
  return earliest;
}

namespace {

// A slot of BufferRegistry::starting, held for the life of the object.
class StartingSlot {
 public:
  // The bound is read before it is published, and the caller's stamp after:
  // an IO thread that read the slot before it was taken read its clock
  // before the stamp, as for in_call_since.
  explicit StartingSlot(BufferRegistry& registry) noexcept {
    std::uint64_t bound = ticks();
    for (auto& slot : registry.starting) {
      std::uint64_t free = kNotInCall;
      if (slot.compare_exchange_strong(free, bound, std::memory_order_relaxed)) {
        slot_ = &slot;
        return;
      }
    }
  }
  ~StartingSlot() {
    // Release: the buffer, listed with its window open, holds from here.
    if (slot_ != nullptr) slot_->store(kNotInCall, std::memory_order_release);
  }
  StartingSlot(const StartingSlot&) = delete;
  StartingSlot& operator=(const StartingSlot&) = delete;
  bool held() const noexcept { return slot_ != nullptr; }

 private:
  std::atomic<std::uint64_t>* slot_ = nullptr;
};

// Set while the thread makes its buffer: a call from a signal handler that
// lands there would make a second one, or wait for the registry's lock its
// own thread holds. It is counted instead, into the buffer once made.
constinit thread_local bool tls_making_buffer = false;
constinit thread_local std::atomic<std::uint64_t> tls_dropped_while_making{0};

// A spare buffer when there is one (see kSpareBuffers), else a new mapping
// whose pages are taken as the ring is first written; null when memory ran
// out.
ThreadBuffer* spare_or_new_buffer(BufferRegistry& registry, std::size_t capacity) {
  {
    std::lock_guard lock(registry.mutex);
    if (ThreadBuffer* spare = take_spare(registry.spares, capacity)) return spare;
  }
  auto* buffer = new (std::nothrow) ThreadBuffer;
  if (buffer == nullptr) return nullptr;
  buffer->data = map_lazy(capacity + kSignalStackBytes);
  if (buffer->data == nullptr) {
    delete buffer;
    return nullptr;
  }
  buffer->capacity = capacity;
  return buffer;
}

// A new thread's buffer, listed for the IO thread, with the call's window
// open at its stamp.
ThreadBuffer* make_thread_buffer(bool map_whole) {
  // A thread past terse's thread_local destructor logs from another
  // thread_local's destructor (one made before its first call, so destroyed
  // after it) or, on the main thread, from a static destructor. Its buffer
  // is abandoned when the thread ends (run_at_thread_end, after every
  // thread_local destructor), or drained by the stop() at exit on the main
  // thread. While calls are printed after stop(), the buffer is never freed:
  // no IO thread is left to free it, and the thread is about to end.
  if (tls_making_buffer) {
    tls_dropped_while_making.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  FlagForScope making(tls_making_buffer);
  auto& registry = buffer_registry();
  // The call's stamp comes before anything a thread does once: its first
  // thread_local with a destructor (tls_releaser) has the C library
  // allocate, and a thread's first allocation makes its malloc arena, some
  // 7 µs here and milliseconds under an emulator.
  StartingSlot starting(registry);
  std::uint64_t stamp = ticks();
  bool late = tls_releaser.exiting && !printing_after_stop();
  if (!buffer_settings().running.load(std::memory_order_relaxed)) register_process_hooks();
  std::size_t capacity = buffer_settings().buffer_bytes.load(std::memory_order_relaxed);
  ThreadBuffer* buffer = spare_or_new_buffer(registry, capacity);
  if (buffer == nullptr) return nullptr;
  // Not yet registered: the IO thread does not see it. A spare one has its
  // first step ready still (destroy_thread_buffer), and preparing it again
  // costs only the look.
  buffer->ready_from = 0;
  if (map_whole) {
    for_positions(*buffer, 0, capacity, prepare_pages);
    publish_ready(*buffer, capacity);
    buffer->keep_mapped = true;
  } else {
    prepare_first_step(*buffer);
  }
  if (kCallsFenceThemselves && !buffer_settings().release_idle.load(std::memory_order_relaxed))
    buffer->keep_mapped = true;  // its calls need no fence
  buffer->index = g_next_thread_index.fetch_add(1, std::memory_order_relaxed);
  buffer->os_tid = thread_id();
  thread_name(buffer->name, sizeof buffer->name);
  // The call's window, open at its stamp from the moment the IO thread can
  // list the buffer. Without a slot, at zero until the stamp is taken: the
  // IO thread that lists it holds everything for that moment.
  buffer->last_ticks = stamp;
  buffer->drops_checked_ticks = stamp;  // drops a log reports happened after this
  buffer->in_call_since.store(starting.held() ? stamp : 0, std::memory_order_relaxed);
  {
    std::lock_guard lock(registry.mutex);
    registry.buffers.push_back(buffer);
    buffer->synchronous.store(calls_are_synchronous(), std::memory_order_relaxed);
    registry.generation.fetch_add(1, std::memory_order_relaxed);  // read under this mutex (refresh_buffers)
  }
  if (!starting.held()) {
    // An IO thread that listed the buffer before the stamp read its clock earlier.
    buffer->last_ticks = ticks();
    buffer->in_call_since.store(buffer->last_ticks, std::memory_order_relaxed);
  }
  buffer->dropped_nested.fetch_add(tls_dropped_while_making.exchange(0, std::memory_order_relaxed),
                                   std::memory_order_relaxed);
  tls_buffer = buffer;
  if (late || std::is_trivially_destructible_v<BufferReleaser>) {
    // The thread's end abandons it: its releaser ran already, or it has none
    // (MinGW-w64). Where the thread cannot say when it ends, the buffer is
    // left to the stop() at exit; on Linux it always can.
    (void)run_at_thread_end(abandon_at_thread_end, buffer);
  } else if (buffer_settings().crash_handler.load(std::memory_order_relaxed)) {
    // The releaser takes it back; a buffer made past it while printing
    // after stop() is never freed, and keeps it.
    give_signal_stack(*buffer);
  }
  return buffer;
}

}  // namespace

ThreadBuffer* create_thread_buffer() { return make_thread_buffer(false); }

bool thread_locals_gone() noexcept { return tls_releaser.exiting; }

ThreadBuffer* create_thread_buffer_mapped() { return make_thread_buffer(true); }

void destroy_thread_buffer(ThreadBuffer* buffer) noexcept {
  // A ring that grew past its first step holds memory worth giving back.
  std::uint64_t ready = buffer->ready_until.load(std::memory_order_relaxed);
  if (buffer->ready_from == 0 && ready != ThreadBuffer::kAllReady && ready <= kFirstReadyBytes &&
      buffer->first_mapping == nullptr && buffer->huge_ring == nullptr) {
    auto& registry = buffer_registry();
    std::lock_guard lock(registry.mutex);
    if (registry.spares.size() < kSpareBuffers) {
      registry.spares.push_back(buffer);
      return;
    }
  }
  unmap_buffer(buffer);
}

char* ThreadBuffer::try_reserve_rare(std::size_t size) noexcept {
  std::uint64_t pos = write_pos;
  std::uint64_t offset = pos & (capacity - 1);
  std::uint64_t to_end = capacity - offset;
  std::uint64_t needed = size <= to_end ? size : to_end + size;
  std::atomic_signal_fence(std::memory_order_seq_cst);  // as in try_reserve()
  if (pos + needed > look_again_at.load(std::memory_order_relaxed) && !look_for_room(pos + needed)) return nullptr;
  if (size > to_end) {
    std::uint32_t marker = kRingWrapMarker;
    std::memcpy(data + offset, &marker, sizeof marker);
    pos += to_end;
    offset = 0;
  }
  write_pos = pos + size;
  return data + offset;
}

// An idle IO thread sleeps up to 10 ms, longer than a busy thread takes to
// fill its ring: past a quarter full, the thread wakes it rather than drop
// or wait later; the other three quarters are what the IO thread may take
// to get a core. The wake costs a syscall only when the IO thread sleeps;
// the producer looks again after another eighth of the ring, in case the
// IO thread went to sleep meanwhile without reaching these records.
bool ThreadBuffer::look_for_room(std::uint64_t end) noexcept {
  // While the IO thread discards the pages this call would write to (it
  // takes microseconds).
  for (unsigned spins = 0; giving_back.load(std::memory_order_acquire); ++spins) wait_a_moment(spins);
  std::uint64_t read_at = consumed.load(std::memory_order_acquire);
  std::uint64_t fill = end - read_at;
  std::uint64_t look_again;
  if (fill > capacity / 4) {
    nudge_io_thread();
    look_again = std::min(read_at + capacity, end + capacity / 8);
  } else {
    look_again = read_at + capacity / 4;
  }
  std::uint64_t ready = ready_until.load(std::memory_order_acquire);
  if (ready != kAllReady && end > ready) ready = make_ready(end);
  if (ready != kAllReady) look_again = std::min(look_again, ready);
  look_again_at.store(look_again, std::memory_order_relaxed);
  return fill <= capacity;
}

// The thread got ahead of the IO thread's preparing (a fast thread's first
// pass): it maps the next step itself, in one call, and leaves the pages to
// be touched by its writes, a page at a time, rather than stop for all of
// them at once.
std::uint64_t ThreadBuffer::make_ready(std::uint64_t end) noexcept {
  // The IO thread may be at it: it publishes each run of pages as it goes.
  for (unsigned spins = 0; preparing.exchange(true, std::memory_order_acquire); ++spins) wait_a_moment(spins);
  std::uint64_t ready = ready_until.load(std::memory_order_relaxed);
  if (ready != kAllReady && end > ready) {
    std::uint64_t to = next_ready_step(*this, ready, end);
    for_positions(*this, ready, to, populate);
    publish_ready(*this, to);
    ready = ready_until.load(std::memory_order_relaxed);
  }
  preparing.store(false, std::memory_order_release);
  return ready;
}

// On some virtual machines the first access to each page after the kernel
// mapped it stops the thread for microseconds, with no page fault the guest
// sees (about 4 us on the machines CI runs on); a ring's first pass then
// stalls its thread once per page, in the middle of its calls. The IO
// thread therefore takes that cost ahead of the thread: once the thread has
// filled half of the run that is ready, the IO thread prepares the next
// step. Its pages lie past ready_until, which the thread does not write
// before it sees the new bound.
void prepare_ahead(ThreadBuffer& b) noexcept {
  if (b.abandoned.load(std::memory_order_relaxed)) return;
  std::uint64_t committed = b.committed.load(std::memory_order_acquire);
  // Not below `committed`: the thread made its pages ready before it wrote there.
  std::uint64_t ready = b.ready_until.load(std::memory_order_acquire);
  if (ready == ThreadBuffer::kAllReady || ready - committed > (ready - b.ready_from) / 2) return;
  if (b.preparing.exchange(true, std::memory_order_acquire)) return;  // the thread is at it: next pass
  ready = b.ready_until.load(std::memory_order_relaxed);
  if (ready != ThreadBuffer::kAllReady) {
    std::uint64_t to = next_ready_step(b, ready, committed);
    while (ready < to) {
      std::uint64_t run_end = std::min(to, ready + kPrepareRunBytes);
      for_positions(b, ready, run_end, prepare_pages);
      publish_ready(b, run_end);
      ready = run_end;
    }
  }
  b.preparing.store(false, std::memory_order_release);
}

namespace {

// The producer touches its ring only inside a call's window, which opens
// (a plain store) before the call reads look_again_at. The IO thread sets
// look_again_at to 0 and giving_back, then fences every thread: a call
// whose window opened before the fence shows in in_call_since (or in a
// committed position that moved, or in a look_again_at it stored), and one
// that opens later sees look_again_at 0, goes to look_for_room() and waits
// there until `change` is done, after which it reads the ring's state
// afresh (its `data` too). So `change` finds each ring it is given drained
// and untouched, with no byte of it being written.
template <typename Change>
std::size_t change_drained_rings(const std::vector<QuietRing>& rings, Change change) noexcept {
  if (rings.empty()) return 0;
  for (const QuietRing& ring : rings) {
    ring.buffer->giving_back.store(true, std::memory_order_relaxed);
    ring.buffer->look_again_at.store(0, std::memory_order_relaxed);
  }
  fence_other_threads();
  std::size_t changed = 0;
  for (const QuietRing& ring : rings) {
    ThreadBuffer& b = *ring.buffer;
    // Where the calls' own fence is the only one, a ring kept mapped has none.
    bool untouched = (!kCallsFenceThemselves || !b.keep_mapped) &&
                     b.in_call_since.load(std::memory_order_acquire) == kNotInCall &&
                     b.committed.load(std::memory_order_acquire) == ring.committed &&
                     b.look_again_at.load(std::memory_order_relaxed) == 0;
    if (untouched && change(b, ring.committed)) ++changed;
    b.giving_back.store(false, std::memory_order_release);
  }
  return changed;
}

}  // namespace

std::size_t give_back_rings(const std::vector<QuietRing>& rings) noexcept {
  return change_drained_rings(rings, [](ThreadBuffer& b, std::uint64_t committed) {
    // A quiet thread needs no huge pages: a moved ring goes back to its
    // first mapping (discarded at the move, so it holds no memory), and one
    // made ready for a move is let go. Kept, the huge ring's first fault
    // after the give-back would take 2 MiB again, for a thread that may log
    // a line a minute; a thread that gets busy again moves again.
    if (b.huge_ring != nullptr) {
      unmap_populated(b.huge_ring, huge_ring_bytes(b.capacity));
      b.huge_ring = nullptr;
    }
    if (b.first_mapping != nullptr) {
      unmap_populated(b.data, huge_ring_bytes(b.capacity));
      b.data = b.first_mapping;
      b.first_mapping = nullptr;
    } else if (!discard(b.data, b.capacity)) {
      return false;
    }
    b.given_back.fetch_add(1, std::memory_order_relaxed);
    b.given_back_at = committed;
    // The thread writes next at the committed position (it is drained and
    // between calls), and takes the pages back from there; a first step
    // is ready for it, as for a new thread.
    b.ready_from = committed & ~(std::uint64_t{page_bytes()} - 1);
    prepare_first_step(b);
    return true;
  });
}

std::size_t move_rings_to_huge_pages(const std::vector<QuietRing>& rings) noexcept {
  return change_drained_rings(rings, [](ThreadBuffer& b, std::uint64_t) {
    // Drained: nothing in the old ring is still to be read, and positions
    // map to the same offsets in the new one.
    b.first_mapping = b.data;
    b.data = b.huge_ring;
    b.huge_ring = nullptr;
    b.ready_until.store(ThreadBuffer::kAllReady, std::memory_order_release);
    discard(b.first_mapping, static_cast<std::size_t>(b.capacity));
    return true;
  });
}

}  // namespace terse::detail
