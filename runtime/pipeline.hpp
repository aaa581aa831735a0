// What the collector hands the writer, and what both share with the
// Logger that starts them: batches (filled by one while the other writes
// the previous), the flush and sync bookkeeping, the requests the callers
// make and the counters stats() reads.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <terse/wire.hpp>

#include "clock.hpp"

namespace terse {
struct Stats;
}

namespace terse::detail {

// A rate-limited site's record starts with its suppressed count (FORMAT.md
// §7), which is not an argument: the bytes of that varint, or all of `args`
// when it does not end within them.
inline std::size_t suppressed_count_size(std::string_view args) {
  std::size_t size = 0;
  while (size < args.size() && (static_cast<unsigned char>(args[size]) & 0x80) != 0) ++size;
  return size < args.size() ? size + 1 : size;
}

// Gives a working buffer its capacity and touches its pages now, on an IO
// thread as it starts, rather than in the middle of the first busy batches.
inline void prefault(std::string& buffer, std::size_t bytes) {
  buffer.resize(bytes);
  buffer.clear();
}

// A batch's records payload: grows without zero-filling, so the collector
// writes records in place, into pages mapped in advance (map_populated(), platform.hpp).
class ByteBuffer {
 public:
  ByteBuffer() = default;
  ~ByteBuffer();
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;

  // Room for `n` more bytes at the end; commit() says how many were used.
  char* tail(std::size_t n) {
    if (capacity_ - size_ < n) grow(size_ + n);
    return data_ + size_;
  }
  void commit(const char* end) { size_ = static_cast<std::size_t>(end - data_); }
  char* data() { return data_; }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  void clear() { size_ = 0; }
  // Holds `bytes` from now on, in new memory whether it grows or shrinks.
  void reset_capacity(std::size_t bytes);
  operator std::string_view() const { return {data_, size_}; }

 private:
  void grow(std::size_t needed);

  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

// A batch goes to the writer once its records reach this.
inline constexpr std::size_t kBatchTargetBytes = std::size_t{1} << 20;
// With room for the record that takes a batch past its target, mapped up front.
inline constexpr std::size_t kBatchPreparedBytes = kBatchTargetBytes + (std::size_t{64} << 10);
// A batch goes to the writer once its records' time deltas reach this
// (rows of a few bytes logged far apart), so that they always fit the room
// its rows leave for them.
inline constexpr std::size_t kBatchMostTicksBytes = std::size_t{64} << 10;
// What a records frame's payload holds before its rows (FORMAT.md §7.4):
// base, the ticks column's length, the frame number's row and delta, and
// the ticks column.
inline constexpr std::size_t kRowsHeadRoom = kBatchMostTicksBytes + 64;

// One record of a batch (FORMAT.md §7) as the collector wrote it; the
// writer walks them to count losses and to intern strings, the view to
// count what it shows.
struct BatchRecord {
  std::uint64_t site_id = 0;
  std::uint64_t thread = 0;
  std::uint64_t tick_delta = 0;  // zigzag-encoded, as stored
  std::string_view args;
};
// A row without its time delta: site id, thread index, length-prefixed arguments.
inline bool next_batch_row(wire::ByteReader& r, BatchRecord& record) {
  return r.varint(record.site_id) && r.varint(record.thread) && r.length_prefixed(record.args, std::string_view::npos);
}

// Records as the collector leaves them and the file stores them: in the
// columns of FORMAT.md §7.4, the rows without their time deltas and the
// deltas apart, so that the writer moves neither.
struct RecordColumns {
  std::uint64_t base = 0;  // the first record's ticks
  std::string_view rows;
  std::string_view ticks;  // a zigzag varint per row
  // What the records take as a FORMAT.md §7 payload, near enough.
  std::size_t size() const { return 8 + rows.size() + ticks.size(); }
};

class ColumnsReader {
 public:
  explicit ColumnsReader(const RecordColumns& columns) : rows_(columns.rows), ticks_(columns.ticks) {}
  bool empty() const { return rows_.empty(); }
  bool next(BatchRecord& record) { return next_batch_row(rows_, record) && ticks_.varint(record.tick_delta); }

 private:
  wire::ByteReader rows_;
  wire::ByteReader ticks_;
};

// The records as one FORMAT.md §7 payload (base, then each row with its
// delta), for readers of that form.
void join_columns(const RecordColumns& columns, ByteBuffer& out);

// One unit of work handed from the collector to the writer.
struct Batch {
  Batch() { clear(); }
  std::string dictionary;  // FORMAT.md §6 entries new in this batch
  // The records (FORMAT.md §7) in columns (RecordColumns): `rows` holds
  // kRowsHeadRoom bytes of room, where the writer puts the frame's head in
  // front of the rows rather than copy them, then the rows; `ticks` the
  // deltas, `first_ticks` the base.
  ByteBuffer rows;
  ByteBuffer ticks;
  std::uint64_t first_ticks = 0;
  std::uint64_t last_ticks = 0;
  std::size_t record_count = 0;
  std::uint64_t sequence = 0;  // numbers batches, so per-frame state can tell a new one
  bool calibration_changed = false;
  Calibration calibration;
  std::uint64_t flush_sequence = 0;  // non-zero: completes that flush once written
  bool last = false;                 // the collector has stopped
  bool has_long_args = false;        // some record may hold a string worth interning
  bool flight = false;               // the flight recorder's records: a flight frame (FORMAT.md §7.2)
  // The pushes of the contexts open after this batch, as a records payload
  // (FORMAT.md §7.3), when they changed in it: what each new file repeats.
  bool contexts_changed = false;
  std::string contexts;

  RecordColumns columns() const {
    std::string_view all = rows;
    return {first_ticks, all.substr(kRowsHeadRoom), ticks};
  }
  // The room in front of the rows, for the writer's frame head.
  char* rows_room() { return rows.data(); }
  std::size_t rows_size() const { return rows.size() - kRowsHeadRoom; }
  bool full() const { return rows_size() >= kBatchTargetBytes || ticks.size() >= kBatchMostTicksBytes - 10; }
  // Maps the rows' and the ticks' memory anew, `rows_bytes` for rows.
  void reset_capacity(std::size_t rows_bytes);
  void clear();
};

// What callers ask of the IO threads; read without a lock, and from a
// signal handler.
struct Requests {
  std::atomic<std::uint64_t> flush{0};  // flushes asked for so far
  std::atomic<bool> stop{false};
  // A crash flush is under way: frames are stored, not compressed, to
  // depend on as little as possible.
  std::atomic<bool> crashing{false};
  // A signal's flush (a crash or a termination, the process about to die):
  // the first flush of at least this number closes a sealed file with its
  // end frame (FORMAT.md §11.4) before it counts as done; 0: none asked.
  std::atomic<std::uint64_t> end_file{0};
};

// Counters for stats(), written by the IO threads.
struct Counters {
  std::atomic<std::uint64_t> records_written{0};
  std::atomic<std::uint64_t> bytes_in{0};
  std::atomic<std::uint64_t> bytes_out{0};
  std::atomic<std::uint64_t> files_opened{0};
  std::atomic<std::uint64_t> files_removed{0};
  std::atomic<std::uint64_t> write_errors{0};
  std::atomic<std::uint64_t> syncs{0};
  std::atomic<std::uint64_t> batches_compressed_faster{0};
  std::atomic<std::uint64_t> dropped_released{0};  // drops of threads whose buffers are gone
  std::atomic<std::uint64_t> flight_recorded{0};
  std::atomic<std::uint64_t> flight_written{0};
  std::atomic<std::uint64_t> flight_overwritten{0};
  std::atomic<std::uint64_t> idle_buffers_released{0};
  std::atomic<std::uint64_t> rings_on_huge_pages{0};
  std::atomic<std::uint64_t> damaged_ring_bytes{0};

  void add_to(Stats& stats) const;
};

// The batches and their two queues: free ones for the collector to fill,
// full ones for the writer, in order. Also where flush() and
// flush(durable) wait for the writer.
class BatchQueue {
 public:
  BatchQueue();

  // Collector side.
  // Maps every free batch's records up front: the first batches then cost
  // what later ones do.
  void prepare();
  // A free batch, cleared and numbered; waits only when the writer holds
  // kMostBatches.
  Batch* take();
  void submit(Batch* batch);
  // A batch waits free: take() returns it without mapping another. No lock.
  bool free_batch_ready() const { return free_count_.load(std::memory_order_relaxed) > 0; }

  // Writer side.
  struct Work {
    Batch* batch = nullptr;         // the next full batch, if any
    std::uint64_t sync_target = 0;  // durable flushes asked for so far
    bool durable_wanted = false;    // some of them are not done yet
    std::size_t bytes_behind = 0;   // the records of the full batches still waiting after it
  };
  // Waits for a full batch or a durable flush; with a deadline, no longer
  // than that (an interval sync is due then).
  Work wait_for_work(const std::chrono::steady_clock::time_point* deadline);
  // The work is written (and synced when it wanted that): completes its
  // flush and returns its batch.
  void finish(const Work& work, bool last);
  // The writer holds every batch there may be: the collector waits for the
  // next, and the rings fill up behind it.
  bool holds_every_batch();
  // How many batches exist, and how many were made past the first ones
  // since the queue was: what a writer's lag costs in memory and in
  // mapping time.
  std::size_t batches_held();
  std::uint64_t extra_batches_made();

  // Callers.
  void wait_for_flush(std::uint64_t sequence);
  void wait_for_sync();
  // The flushes completed so far; safe in a signal handler.
  std::uint64_t flushed_through() const { return flushed_through_.load(std::memory_order_acquire); }

 private:
  // Kept between bursts: one filling, one writing, one waiting. While the
  // writer is behind (a slow disk, an fsync, a burst past what it
  // compresses) the collector takes more, up to kMostBatches, rather than
  // wait while the rings fill up and their threads block or drop; the
  // extra ones are freed once the writer has caught up.
  static constexpr std::size_t kKeptBatches = 3;
  static constexpr std::size_t kMostBatches = 11;
  // Mapping a batch holds the collector up for a millisecond or more (its
  // pages are touched up front), while a ring filling at 8 M records/s has
  // room for two: a writer that falls behind now and then keeps its extra
  // batches until it has not needed one for this long.
  static constexpr std::chrono::seconds kExtraBatchesKeptFor{1};
  std::chrono::steady_clock::time_point extra_needed_at_{};
  std::uint64_t extra_batches_made_ = 0;

  std::vector<std::unique_ptr<Batch>> owned_;
  std::mutex mutex_;
  std::condition_variable flushed_;
  std::condition_variable batch_ready_;
  std::condition_variable batch_returned_;
  std::vector<Batch*> free_;
  std::atomic<std::size_t> free_count_{0};  // free_.size(), for free_batch_ready()
  std::deque<Batch*> full_;
  std::uint64_t batches_taken_ = 0;
  std::uint64_t flush_completed_ = 0;
  std::atomic<std::uint64_t> flushed_through_{0};  // flush_completed_, readable from a signal handler
  std::uint64_t sync_requested_ = 0;
  std::uint64_t sync_completed_ = 0;
  bool writer_done_ = false;
};

// How the collector sleeps when idle and what wakes it early. Lives apart
// from the Logger and is never destroyed, so that a thread waking the IO
// thread while stop() runs never touches freed memory.
struct Wakeup {
  std::mutex mutex;
  std::condition_variable cv;
  // Set by the IO thread before it sleeps; a producer whose ring fills
  // clears it and wakes the IO thread, which waits until it is cleared.
  std::atomic<bool> asleep{false};
};
Wakeup& io_wakeup() noexcept;
// After fork(): the parent's IO thread may have held the old one's mutex.
void renew_io_wakeup_after_fork() noexcept;

}  // namespace terse::detail
