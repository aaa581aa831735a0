#include "fallback.hpp"

#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <terse/schema.hpp>

#include "buffers.hpp"
#include "emergency.hpp"
#include "record_text.hpp"
#include "registry.hpp"

namespace terse::detail {
namespace {

constexpr auto kWarn = static_cast<std::uint8_t>(Level::warn);

struct PrintState {
  std::mutex mutex;  // one printer at a time: a thread's ring has one reader
  std::atomic<bool> active{false};
  std::uint8_t level = kWarn;
  std::optional<RecordText> text;
  std::string out;
  std::atomic<std::uint64_t> printed{0};
  std::atomic<std::uint64_t> not_printed{0};
};
// Never destroyed: static destructors that log come after any other.
PrintState& print_state() noexcept {
  static auto* state = new PrintState;
  return *state;
}

// The level a ring record was logged at; control records (contexts,
// suppressed counts) carry none.
std::optional<std::uint8_t> record_level(const RingRecordHeader& header) noexcept {
  if (header.site_id == schema::kControlSiteId) return std::nullopt;
  const SiteInfo* site = site_info(header.site_id & ~kRingFlightBit);
  return site != nullptr ? site->level : std::uint8_t{0};
}

// Under the mutex, with `s.text` set: renders or counts one record.
void print_record(PrintState& s, const ThreadBuffer& b, const RingRecordHeader& header, const char* args) {
  std::optional<std::uint8_t> level = record_level(header);
  // Kept for a flight recorder that no longer runs: never printed.
  if (level && ((header.site_id & kRingFlightBit) != 0 || *level < s.level)) {
    s.not_printed.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  s.text->append(b, header, args, s.out);
  if (level) s.printed.fetch_add(1, std::memory_order_relaxed);
}

// Under the mutex: everything `b`'s ring holds, in its order.
void print_ring(PrintState& s, ThreadBuffer& b) noexcept {
  std::uint64_t from = b.consumed.load(std::memory_order_relaxed);
  std::uint64_t to = b.committed.load(std::memory_order_acquire);
  if (from == to) return;
  try {
    for_each_ring_record(b, from, to,
                         [&](const RingRecordHeader& header, const char* args) { print_record(s, b, header, args); });
  } catch (...) {
    // Out of memory while rendering: what was rendered is still printed.
  }
  b.consumed.store(to, std::memory_order_release);
  write_all(STDERR_FILENO, s.out);
  s.out.clear();
}

// Runs `print` on the calling thread, or on a thread of its own where the
// caller's thread_local objects are gone: rendering uses some of its own.
template <typename Print>
void on_a_live_thread(Print print) noexcept {
  if (!thread_locals_gone()) {
    print();
    return;
  }
  try {
    std::thread(print).join();
  } catch (...) {
    // No thread to be had at exit: nothing is printed.
  }
}

// A copy of the list: a thread that starts logging meanwhile takes the
// registry's mutex, which the printer must not hold while it renders.
std::vector<ThreadBuffer*> listed_buffers() {
  auto& registry = buffer_registry();
  std::lock_guard lock(registry.mutex);
  return registry.buffers;
}

void print_unstarted(PrintState& s) noexcept {
  try {
    ClockCalibration clock;
    s.text.emplace(clock.current());
    s.level = kWarn;
    struct Kept {
      std::uint64_t ticks;
      ThreadBuffer* buffer;
      RingRecordHeader header;
      const char* args;
    };
    std::vector<Kept> kept;
    std::uint64_t below = 0;
    std::uint64_t shown = 0;
    std::uint64_t dropped = 0;
    std::vector<ThreadBuffer*> buffers = listed_buffers();
    std::vector<std::uint64_t> ends;
    for (ThreadBuffer* b : buffers) {
      std::uint64_t end = b->committed.load(std::memory_order_acquire);
      ends.push_back(end);
      dropped += b->all_dropped();
      for_each_ring_record(*b, b->consumed.load(std::memory_order_relaxed), end,
                           [&](const RingRecordHeader& header, const char* args) {
                             std::optional<std::uint8_t> level = record_level(header);
                             if (level && *level < kWarn) {
                               ++below;
                               return;
                             }
                             kept.push_back({header.ticks, b, header, args});
                             if (level) ++shown;  // control records carry contexts, not lines
                           });
    }
    // Threads' records in time order; a thread's own stay in its order.
    std::stable_sort(kept.begin(), kept.end(), [](const Kept& a, const Kept& b) { return a.ticks < b.ticks; });
    if (shown > 0 || dropped > 0) {
      s.out = "terse: the program ended before terse::start() was called, so nothing was written to a log file; its " +
              std::to_string(shown) + " records at warn and above follow";
      if (below > 0) s.out += " (" + std::to_string(below) + " below warn are not shown)";
      if (dropped > 0) s.out += "; " + std::to_string(dropped) + " more did not fit their thread's buffer";
      s.out += '\n';
      for (const Kept& k : kept) print_record(s, *k.buffer, k.header, k.args);
      s.not_printed.fetch_add(below, std::memory_order_relaxed);
      write_all(STDERR_FILENO, s.out);
      s.out.clear();
    }
    for (std::size_t i = 0; i < buffers.size(); ++i) buffers[i]->consumed.store(ends[i], std::memory_order_release);
  } catch (...) {
    // Out of memory at exit: nothing more can be said.
  }
}

}  // namespace

void print_after_stop(Level level, const Calibration& calibration) noexcept {
  PrintState& s = print_state();
  std::lock_guard lock(s.mutex);
  try {
    s.text.emplace(calibration);
    s.level = static_cast<std::uint8_t>(level);
    // Before the buffers are switched: a thread that makes its buffer
    // meanwhile reads it under the registry's mutex (make_thread_buffer).
    s.active.store(true, std::memory_order_relaxed);
    refresh_buffers_synchronous();
    for (ThreadBuffer* b : listed_buffers()) print_ring(s, *b);
  } catch (...) {
    // Out of memory: calls go on into the buffers, and are lost at exit.
  }
}

void end_print_after_stop() noexcept {
  PrintState& s = print_state();
  std::lock_guard lock(s.mutex);
  if (!s.active.load(std::memory_order_relaxed)) return;
  s.active.store(false, std::memory_order_relaxed);
  s.text.reset();
  refresh_buffers_synchronous();
}

bool printing_after_stop() noexcept { return print_state().active.load(std::memory_order_relaxed); }

bool calls_are_synchronous() noexcept {
  return g_hot.synchronous.load(std::memory_order_relaxed) || printing_after_stop();
}

void refresh_buffers_synchronous() noexcept {
  auto& registry = buffer_registry();
  // Under the mutex a new buffer reads the setting (make_thread_buffer):
  // one made before this reads it is on the list.
  std::lock_guard lock(registry.mutex);
  bool synchronous = calls_are_synchronous();
  for (ThreadBuffer* b : registry.buffers) b->synchronous.store(synchronous, std::memory_order_relaxed);
}

bool print_own_records() noexcept {
  PrintState& s = print_state();
  if (!s.active.load(std::memory_order_relaxed) || tls_buffer == nullptr) return false;
  // A call from a signal handler that interrupted this thread's printing:
  // its record waits in the ring for the thread's next call.
  static constinit thread_local bool printing = false;
  if (printing) return true;
  FlagForScope printing_now(printing);
  std::lock_guard lock(s.mutex);
  if (!s.active.load(std::memory_order_relaxed)) return false;
  ThreadBuffer& own = *tls_buffer;
  on_a_live_thread([&] { print_ring(s, own); });
  return true;
}

void print_unstarted_at_exit() noexcept {
  PrintState& s = print_state();
  std::lock_guard lock(s.mutex);
  if (s.active.load(std::memory_order_relaxed)) return;
  on_a_live_thread([&s] { print_unstarted(s); });
  s.active.store(true, std::memory_order_relaxed);
  refresh_buffers_synchronous();
}

void add_print_counts(Stats& stats) noexcept {
  PrintState& s = print_state();
  stats.stderr_records = s.printed.load(std::memory_order_relaxed);
  stats.records_not_written = s.not_printed.load(std::memory_order_relaxed);
}

}  // namespace terse::detail
