// The collector (the "terse-io" thread): drains the thread buffers in time
// order, describes each site and thread the first time a file needs it,
// delta-codes arguments (FORMAT.md §7.1) and fills batches for the writer.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <terse/delta.hpp>
#include <terse/terse.hpp>
#include <terse/wire.hpp>

#include "buffers.hpp"
#include "clock.hpp"
#include "flight.hpp"
#include "open_contexts.hpp"
#include "pipeline.hpp"

namespace terse::detail {

// Config::flight_level and what goes with it.
struct FlightSettings {
  bool on = false;
  Level trigger = Level::error;
  std::size_t bytes_per_thread = kMinFlightBytes;
};

class Collector {
 public:
  // `clock` is the collector's alone once it runs.
  Collector(std::chrono::microseconds ordering_window, std::chrono::milliseconds release_idle_after,
            const FlightSettings& flight, ClockCalibration& clock, BatchQueue& queue, Requests& requests,
            Counters& counters, std::function<void(const std::string&)> on_error);
  ~Collector();
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  // The thread's body: returns once stop was requested and every buffer is
  // drained, after submitting the last batch.
  void run();

 private:
  // The ring's address and size are copied here once per pass: they share
  // a cache line with what its thread writes at every call, and reading
  // them there for each record moved that line between the two cores at
  // every record (most of the collector's time in the throughput run).
  // Only this thread changes them, between passes (give_back_rings, the
  // move to huge pages).
  struct Cursor {
    ThreadBuffer* buffer;
    std::uint64_t position;
    std::uint64_t end;
    RingRecordHeader header;
    const char* args;
    const char* ring;
    std::uint64_t mask;  // capacity - 1
  };
  struct DeltaSlots {
    DeltaSlots(const std::uint8_t* tags, std::size_t count) : plan(tags, count), previous(count) {}
    wire::DeltaPlan plan;
    std::vector<std::uint64_t> previous;
    std::uint64_t batch = 0;
    bool limited = false;  // a suppressed count precedes the arguments
    // The site's unrolled coder when its code stays loaded, else null: the plan.
    wire::DeltaEncoder encode = nullptr;
  };

  bool load(Cursor& cursor);
  // The record's size fits the ring and the records its thread committed.
  static bool size_fits(const Cursor& cursor) {
    return cursor.header.args_size <= (cursor.mask >> 1) &&
           ring_stride(cursor.header.args_size) <= cursor.end - cursor.position;
  }
  [[gnu::noinline]] bool readable(const Cursor& cursor);
  [[gnu::noinline, gnu::cold]] void give_up_damaged(Cursor& cursor, const char* what);
  static void publish(const Cursor& c);
  void publish_consumed();

  void refresh_buffers();
  void report_drops(Batch& batch, ThreadBuffer& b, std::uint64_t now);
  void release_abandoned(Batch& batch);
  // Config::release_idle_after: the pages of drained rings whose threads
  // have logged nothing for that long go back to the system.
  void release_idle_rings(std::chrono::steady_clock::time_point now);
  // Config::huge_pages: rings of busy threads move to huge pages.
  void move_busy_rings();
  bool describe_site(Batch& batch, std::uint32_t id);
  void describe_reported_site(Batch& batch, std::string_view args);
  void describe_thread(Batch& batch, const ThreadBuffer& b);
  // A site's coder, made on its first record, which describes the site in
  // the batch's dictionary; nullptr for an id no call site has.
  DeltaSlots* first_record_of_site(Batch& batch, std::uint32_t id);
  // Copies a record's arguments to `out`, delta-coded (FORMAT.md §7.1).
  static void delta_code(const Batch& batch, DeltaSlots& slots, char* out, const char* args, std::size_t size);
  void append_record(Batch& batch, const RingRecordHeader& header, std::uint32_t thread_index, const char* args);
  // A record from a ring: into the batch, or the flight recorder.
  void take(Batch*& batch, const Cursor& c);
  bool triggers_flight(std::uint32_t site_id) const;
  void track_context(std::uint32_t thread_index, std::uint64_t ticks, std::string_view args);
  // What the flight recorder holds, as flight batches after the current one.
  void write_flight(Batch*& batch);
  std::size_t drain(std::uint64_t cutoff, std::uint64_t listed_at, Batch*& batch);
  void wait_for_calls_in_flight();
  bool anything_pending() const;
  void submit(Batch*& batch);
  void submit_if_due(Batch*& batch, std::chrono::steady_clock::time_point now);
  // When the batch being filled goes out: small ones sooner, for a reader
  // following the file.
  std::chrono::steady_clock::time_point batch_due(const Batch& batch) const;
  std::chrono::steady_clock::duration idle_sleep(std::chrono::steady_clock::time_point now);
  // True when a producer woke it: its ring is filling.
  bool sleep_while_idle(std::chrono::steady_clock::duration sleep);

  ClockCalibration& clock_;
  BatchQueue& queue_;
  Requests& requests_;
  Counters& counters_;
  std::function<void(const std::string&)> on_error_;
  // One past the highest site id handed out, as last read: a record's id
  // at or past it cannot come from a call.
  std::uint32_t site_ids_issued_ = 1;
  std::uint64_t window_ticks_;
  std::chrono::steady_clock::duration window_pause_;        // the window, at most 1 ms
  std::chrono::steady_clock::duration release_idle_after_;  // zero: never
  std::chrono::steady_clock::time_point next_idle_check_{};
  std::vector<QuietRing> quiet_rings_;
  bool huge_rings_;  // the move needs the fence a give-back does
  std::vector<QuietRing> busy_rings_;
  // The huge-page memory being made for one busy ring, on a thread of its
  // own: the kernel may compact memory first, for tens of milliseconds,
  // during which the rings would fill. `buffer` is only compared, never
  // read: the buffer may be gone when the memory is ready.
  struct HugeRingOrder {
    const ThreadBuffer* buffer = nullptr;
    std::uint64_t capacity = 0;
    std::future<char*> memory;
    std::thread maker;
  };
  std::optional<HugeRingOrder> huge_order_;
  void order_huge_ring(const ThreadBuffer& buffer);
  // Hands the ordered memory to its ring, if that ring still wants it, or
  // gives it back; with `wait`, also when it is not ready yet.
  void settle_huge_order(bool wait);

  std::vector<ThreadBuffer*> buffers_;
  std::uint64_t buffers_generation_ = 0;
  std::vector<Cursor> cursors_;
  std::vector<std::uint8_t> sites_written_;
  std::vector<std::uint8_t> threads_written_;
  std::uint64_t flush_handled_ = 0;
  // By site id: the site's coder, made once the site is described (so a
  // coder says the site is described too): one look per record.
  std::vector<std::unique_ptr<DeltaSlots>> delta_slots_;
  std::chrono::steady_clock::time_point batch_opened_{};
  std::chrono::steady_clock::time_point previous_pass_{};
  std::chrono::steady_clock::time_point last_sleep_{};
  std::chrono::steady_clock::time_point fast_until_{};
  bool flight_on_;
  std::uint8_t flight_trigger_;
  FlightRecorder flight_;
  OpenContexts contexts_;
};

}  // namespace terse::detail
