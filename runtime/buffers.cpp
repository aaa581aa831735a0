#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#include "internal.hpp"

#if TERSE_CLOCK_TSC
#include <immintrin.h>
#endif

namespace terse::detail {
namespace {

std::atomic<std::uint32_t> g_next_thread_index{1};

// In a spin-wait: tells the core the loop is waiting, which yields the
// pipeline to a sibling hardware thread and saves power.
inline void spin_hint() noexcept {
#if TERSE_CLOCK_TSC
  _mm_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// The ring's first bytes are left to page faults, one per page as the
// thread first writes there: a fault takes only the mapping's own lock,
// where mapping ahead (madvise) takes the process's, which threads being
// created and ending hold; a thread logging less than this never maps ahead.
constexpr std::uint64_t kFaultedBytes = kFaultedRingBytes;
// Each ring's mapping ends in the alternate signal stack of its thread.
constexpr std::size_t kSignalStackBytes = 64 * 1024;
// Buffers of exited threads that never logged past kFaultedBytes, kept for
// the next new threads: a pool that replaces its threads then costs no
// mapping and unmapping per thread (both wait for the process's mapping
// lock, which creating and ending threads hold), and at most this many
// times a few pages.
constexpr std::size_t kSpareBuffers = 64;

// Marks the thread's buffer abandoned when the thread exits; the IO thread
// drains what is left and frees it.
struct BufferReleaser {
  ~BufferReleaser() {
    exiting = true;
    // The stack lives in the buffer, which the IO thread may free as soon
    // as it is abandoned: off it first.
    if (has_signal_stack) leave_signal_stack();
    if (ThreadBuffer* buffer = tls_buffer) {
      tls_buffer = nullptr;
      buffer->abandoned.store(true, std::memory_order_release);
      nudge_io_thread();
    }
  }
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

void unmap_buffer(ThreadBuffer* buffer) noexcept {
  unmap_populated(buffer->data, buffer->capacity + kSignalStackBytes);
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

}  // namespace

BufferSettings& buffer_settings() noexcept {
  static BufferSettings settings;
  return settings;
}

BufferRegistry& buffer_registry() noexcept {
  static BufferRegistry* registry = new BufferRegistry;  // outlives every thread, never destroyed
  return *registry;
}

namespace {

// A new thread's buffer: a spare one when there is one (see kSpareBuffers),
// else a new mapping whose pages are taken as the ring is first written.
ThreadBuffer* make_thread_buffer(bool map_whole) {
  if (tls_releaser.exiting) return nullptr;
  std::size_t capacity = buffer_settings().buffer_bytes.load(std::memory_order_relaxed);
  auto& registry = buffer_registry();
  ThreadBuffer* buffer;
  {
    std::lock_guard lock(registry.mutex);
    buffer = take_spare(registry.spares, capacity);
  }
  if (buffer == nullptr) {
    buffer = new (std::nothrow) ThreadBuffer;
    if (buffer == nullptr) return nullptr;
    buffer->data = map_lazy(capacity + kSignalStackBytes);
    if (buffer->data == nullptr) {
      delete buffer;
      return nullptr;
    }
    buffer->capacity = capacity;
  }
  // A spare one never went past this either (destroy_thread_buffer).
  buffer->mapped_until = capacity <= kFaultedBytes ? ThreadBuffer::kAllMapped : kFaultedBytes;
  if (map_whole) {
    if (buffer->mapped_until != ThreadBuffer::kAllMapped)
      populate(buffer->data + kFaultedBytes, static_cast<std::size_t>(capacity - kFaultedBytes));
    buffer->mapped_until = ThreadBuffer::kAllMapped;
    buffer->keep_mapped = true;
  }
  buffer->index = g_next_thread_index.fetch_add(1, std::memory_order_relaxed);
  buffer->os_tid = thread_id();
  thread_name(buffer->name, sizeof buffer->name);
  {
    std::lock_guard lock(registry.mutex);
    registry.buffers.push_back(buffer);
    registry.generation.fetch_add(1, std::memory_order_relaxed);  // read under this mutex (refresh_buffers)
  }
  tls_buffer = buffer;
  if (buffer_settings().crash_handler.load(std::memory_order_relaxed)) give_signal_stack(*buffer);
  return buffer;
}

}  // namespace

ThreadBuffer* create_thread_buffer() { return make_thread_buffer(false); }

ThreadBuffer* create_thread_buffer_mapped() { return make_thread_buffer(true); }

void destroy_thread_buffer(ThreadBuffer* buffer) noexcept {
  // A ring that grew past its faulted part holds memory worth giving back.
  if (buffer->mapped_until - buffer->mapped_from <= kFaultedBytes) {
    auto& registry = buffer_registry();
    std::lock_guard lock(registry.mutex);
    if (registry.spares.size() < kSpareBuffers) {
      registry.spares.push_back(buffer);
      return;
    }
  }
  unmap_buffer(buffer);
}

// An idle IO thread sleeps up to 10 ms, longer than a busy thread takes to
// fill its ring: past a quarter full, the thread wakes it rather than drop
// or wait later; the other three quarters are what the IO thread may take
// to get a core. The wake costs a syscall only when the IO thread sleeps;
// the producer looks again after another eighth of the ring, in case the
// IO thread went to sleep meanwhile without reaching these records.
//
// A ring's pages are mapped as its thread first reaches them: the first
// kFaultedBytes page by page, then in steps that double, each mapped in one
// call. A thread that logs a few records holds a few pages and its first
// call costs a few microseconds; a busy thread takes a handful of such calls
// on its first pass rather than a page fault every 4 KiB of it. A ring
// given back while its thread was quiet starts over from where it is.
bool ThreadBuffer::look_for_room(std::uint64_t end) noexcept {
  // While the IO thread discards the pages this call would write to (it
  // takes microseconds).
  for (unsigned spins = 0; giving_back.load(std::memory_order_acquire); ++spins) {
    if (spins < 64) {
      spin_hint();
    } else {
      std::this_thread::yield();
    }
  }
  // Relaxed: giving_back's acquire above pairs with the release that ends
  // a give-back, which the bump of given_back precedes.
  if (std::uint32_t times = given_back.load(std::memory_order_relaxed); times != given_back_seen) {
    given_back_seen = times;
    // populate() and discard() round to pages themselves; this only starts
    // the mapped range where the page of the next write does.
    mapped_from = write_pos & ~(std::uint64_t{page_bytes()} - 1);
    mapped_until = capacity <= kFaultedBytes ? kAllMapped : mapped_from + kFaultedBytes;
  }
  cached_read = consumed.load(std::memory_order_acquire);
  std::uint64_t fill = end - cached_read;
  std::uint64_t look_again;
  if (fill > capacity / 4) {
    nudge_io_thread();
    look_again = std::min(cached_read + capacity, end + capacity / 8);
  } else {
    look_again = cached_read + capacity / 4;
  }
  if (mapped_until != kAllMapped) {
    if (end > mapped_until) {
      std::uint64_t page = page_bytes();
      std::uint64_t want = std::max((end + page - 1) & ~(page - 1), mapped_from + 2 * (mapped_until - mapped_from));
      std::uint64_t to = std::min(want, mapped_from + capacity);
      map_positions(mapped_until, to);
      mapped_until = to == mapped_from + capacity ? kAllMapped : to;
    }
    if (mapped_until != kAllMapped) look_again = std::min(look_again, mapped_until);
  }
  look_again_at.store(look_again, std::memory_order_relaxed);
  return fill <= capacity;
}

// The pages of the ring positions [from, to), to - from at most a whole ring.
void ThreadBuffer::map_positions(std::uint64_t from, std::uint64_t to) noexcept {
  std::uint64_t offset = from & (capacity - 1);
  std::uint64_t bytes = to - from;
  std::uint64_t first = std::min(bytes, capacity - offset);
  populate(data + offset, static_cast<std::size_t>(first));
  if (bytes > first) populate(data, static_cast<std::size_t>(bytes - first));
}

// The producer touches its ring only inside a call's window, which opens
// (a plain store) before the call reads look_again_at. The IO thread sets
// look_again_at to 0 and giving_back, then fences every thread: a call
// whose window opened before the fence shows in in_call_since (or in a
// committed position that moved, or in a look_again_at it stored), and one
// that opens later sees look_again_at 0, goes to look_for_room() and waits
// there until the pages are gone. So the IO thread discards no byte a call
// is writing, and a ring it found drained holds nothing to lose.
std::size_t give_back_rings(const std::vector<QuietRing>& rings) noexcept {
  if (rings.empty()) return 0;
  for (const QuietRing& ring : rings) {
    ring.buffer->giving_back.store(true, std::memory_order_relaxed);
    ring.buffer->look_again_at.store(0, std::memory_order_relaxed);
  }
  fence_other_threads();
  std::size_t given = 0;
  for (const QuietRing& ring : rings) {
    ThreadBuffer& b = *ring.buffer;
    bool untouched = b.in_call_since.load(std::memory_order_acquire) == kNotInCall &&
                     b.committed.load(std::memory_order_acquire) == ring.committed &&
                     b.look_again_at.load(std::memory_order_relaxed) == 0;
    if (untouched && discard(b.data, static_cast<std::size_t>(b.capacity))) {
      b.given_back.fetch_add(1, std::memory_order_relaxed);
      b.given_back_at = ring.committed;
      ++given;
    }
    b.giving_back.store(false, std::memory_order_release);
  }
  return given;
}

static void count_drop(ThreadBuffer& buffer) noexcept {
  // Single writer: a plain load and store keep the counter exact without a
  // locked instruction.
  buffer.dropped.store(buffer.dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  buffer.last_drop_ticks.store(ticks(), std::memory_order_relaxed);
}

// Waiting for room spins for a moment (the IO thread is usually draining
// already), then sleeps until the IO thread says it freed space: spinning or
// yielding longer would take the CPU from the very threads that free it.
// A sleeping thread is woken once its ring is down to an eighth full, not
// as soon as one record fits: woken for every record, a thread logging
// large records flat out would wait in nearly every call; this way it waits
// once per seven eighths of a ring.
char* reserve_slow(ThreadBuffer& buffer, std::size_t size) noexcept {
  constexpr unsigned kSpins = 128;
  constexpr long kSleepLimitNs = 1'000'000;  // re-checks stop() at least this often
  auto& settings = buffer_settings();
  // The caller's try_reserve() has just read the consumer position: under
  // the drop policy, looking again at once would only make a dropped call
  // cost more, and a burst's dropped calls take the cores the IO threads need.
  if (settings.drop_when_full.load(std::memory_order_relaxed)) {
    buffer.end_call();
    if (settings.running.load(std::memory_order_acquire)) count_drop(buffer);
    return nullptr;
  }
  // A waiting thread takes its timestamp only once it has room, so its
  // window stays closed meanwhile: the IO thread writes other threads'
  // later records rather than hold them for as long as this one waits.
  buffer.end_call();
  for (unsigned attempt = 0;; ++attempt) {
    if (!settings.running.load(std::memory_order_acquire)) return nullptr;
    buffer.begin_call();
    if (char* out = buffer.try_reserve(size)) return out;
    buffer.end_call();
    if (attempt == 0) nudge_io_thread();
    if (attempt < kSpins) {
      spin_hint();
      continue;
    }
    // Relaxed, as room_freed's bump: the epoch only ends the sleep (a bump
    // after this load makes the wait return at once); the room itself is
    // read from `consumed`, which carries its own acquire.
    std::uint32_t epoch = buffer.room_epoch.load(std::memory_order_relaxed);
    // Nothing of this thread's is uncommitted here, so the IO thread can
    // drain the ring down to this (and past the room the record needs).
    auto at_least_zero = [](std::uint64_t a, std::uint64_t b) { return a > b ? a - b : 0; };
    std::uint64_t needed_at = at_least_zero(buffer.write_pos + 2 * size, buffer.capacity);  // room even if it wraps
    std::uint64_t eighth_full_at = at_least_zero(buffer.write_pos, buffer.capacity / 8);
    buffer.wake_at_consumed.store(std::max(needed_at, eighth_full_at), std::memory_order_relaxed);
    // Release: an IO thread that sees this flag (acquire, room_freed) sees
    // this wait's wake_at_consumed, not the last wait's; the fence after it
    // comes too late to order the two stores. The fence is the Dekker half
    // of room_freed's: this thread sees the IO thread's new consumer
    // position, or the IO thread sees that it waits.
    buffer.waiting_for_room.store(true, std::memory_order_release);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    buffer.begin_call();
    char* out = buffer.try_reserve(size);
    if (out == nullptr) {
      buffer.end_call();
      wait_for_change(buffer.room_epoch, epoch, kSleepLimitNs);
    }
    buffer.waiting_for_room.store(false, std::memory_order_relaxed);
    if (out != nullptr) return out;
  }
}

std::size_t fit_strings(std::size_t fixed_size, std::size_t limit, std::uint32_t* text_lengths, bool* truncated,
                        const bool* is_string, std::size_t count) noexcept {
  // Every string may need room to say how long it was (FORMAT.md §8, a cut
  // string), so that room is set aside before any text gets its share.
  std::size_t strings = 0;
  for (std::size_t i = 0; i < count; ++i) strings += is_string[i] ? 1 : 0;
  std::size_t reserve = strings * schema::kStringCutPrefix;
  std::size_t budget = limit > fixed_size + reserve ? limit - fixed_size - reserve : 0;
  std::size_t total = fixed_size;
  for (std::size_t i = 0; i < count; ++i) {
    if (!is_string[i]) continue;
    if (text_lengths[i] > budget) {
      text_lengths[i] = static_cast<std::uint32_t>(budget);
      truncated[i] = true;
      total += schema::kStringCutPrefix;
    }
    budget -= text_lengths[i];
    total += text_lengths[i];
  }
  return total;
}

// A control record (FORMAT.md §7) from the calling thread's buffer.
void write_control(std::string_view args) noexcept {
  ThreadBuffer* buffer = tls_buffer;
  if (buffer == nullptr) buffer = create_thread_buffer();
  if (buffer == nullptr) return;
  std::size_t stride = ring_stride(args.size());
  buffer->begin_call();
  char* out = buffer->try_reserve(stride);
  if (out == nullptr) out = reserve_slow(*buffer, stride);
  if (out == nullptr) return;
  buffer->begin_record();
  RingRecordHeader header{schema::kControlSiteId, static_cast<std::uint32_t>(args.size()), ticks()};
  std::memcpy(out, &header, sizeof header);
  std::memcpy(out + kRingHeaderSize, args.data(), args.size());
  buffer->commit(header.ticks);
}

constinit thread_local std::uint64_t tls_context_serial = 0;

void pop_context(std::uint64_t serial) noexcept {
  if (!g_hot.running.load(std::memory_order_relaxed)) return;
  char args[1 + 10];
  args[0] = static_cast<char>(schema::ControlKind::context_pop);
  char* end = wire::write_varint(args + 1, serial);
  write_control(std::string_view(args, static_cast<std::size_t>(end - args)));
}

}  // namespace terse::detail
