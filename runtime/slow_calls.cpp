// What a logging call does when its inline path cannot go on: wait for
// room or count a drop (reserve_slow), cut strings to fit the ring
// (fit_strings), count a call that interrupted its own thread's, and write
// the control records of contexts.
#include <algorithm>
#include <cstring>
#include <string_view>

#include "buffers.hpp"
#include "fallback.hpp"

namespace terse::detail {

namespace {

void count_drop(ThreadBuffer& buffer) noexcept {
  // Single writer: a plain load and store keep the counter exact without a
  // locked instruction.
  buffer.dropped.store(buffer.dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  buffer.last_drop_ticks.store(ticks(), std::memory_order_relaxed);
}

// Set while the thread is in reserve_slow(), whose window is closed while
// it waits for room or counts a drop: a call from a signal handler that
// lands there must neither wait nor count with it.
constinit thread_local bool tls_in_reserve_slow = false;

}  // namespace

void drop_nested_call(ThreadBuffer& buffer) noexcept {
  buffer.dropped_nested.fetch_add(1, std::memory_order_relaxed);
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
  if (tls_in_reserve_slow) {  // this call interrupted the thread's own, whose window is closed
    buffer.end_call();
    drop_nested_call(buffer);
    return nullptr;
  }
  FlagForScope in_reserve_slow(tls_in_reserve_slow);
  // The caller's try_reserve() has just read the consumer position: under
  // the drop policy, looking again at once would only make a dropped call
  // cost more, and a burst's dropped calls take the cores the IO threads need.
  if (settings.drop_when_full.load(std::memory_order_relaxed)) {
    buffer.end_call();
    count_drop(buffer);
    return nullptr;
  }
  // A waiting thread takes its timestamp only once it has room, so its
  // window stays closed meanwhile: the IO thread writes other threads'
  // later records rather than hold them for as long as this one waits.
  buffer.end_call();
  for (unsigned attempt = 0;; ++attempt) {
    if (!settings.running.load(std::memory_order_acquire)) {
      // No IO thread to wait for (before start(), or stop() under way): the
      // record is counted, and the log says so once one runs.
      count_drop(buffer);
      return nullptr;
    }
    (void)buffer.begin_call();  // its window is closed: a call it interrupted would have closed its own
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
    (void)buffer.begin_call();
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
  if (!buffer->begin_call()) {
    drop_nested_call(*buffer);
    return;
  }
  char* out = buffer->try_reserve(stride);
  if (out == nullptr) out = reserve_slow(*buffer, stride);
  if (out == nullptr) return;
  RingRecordHeader header{schema::kControlSiteId, static_cast<std::uint32_t>(args.size()), ticks()};
  std::memcpy(out, &header, sizeof header);
  std::memcpy(out + kRingHeaderSize, args.data(), args.size());
  buffer->commit(header.ticks, buffer->write_pos);
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
