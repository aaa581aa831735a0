#include "collector.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <system_error>
#include <thread>

#include <terse/dictionary.hpp>
#include <terse/timing.hpp>

#include "buffers.hpp"
#include "interning.hpp"
#include "levels.hpp"
#include "pipeline.hpp"
#include "platform.hpp"
#include "registry.hpp"

namespace terse::detail {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kDropRecordArgs = 1 + 8 + 8 + 8;
// A batch this small goes out after this long: a reader following the file
// sees a record once its batch is written, and a small batch compresses
// little better for waiting. A busy thread fills far more in that time,
// so its batches stay large (and compress well) even when it is preempted.
constexpr auto kSmallBatchDelay = 10ms;
constexpr std::size_t kSmallBatchBytes = 4096;

}  // namespace

Collector::Collector(std::chrono::microseconds ordering_window, std::chrono::milliseconds release_idle_after,
                     const FlightSettings& flight, ClockCalibration& clock, BatchQueue& queue, Requests& requests,
                     Counters& counters, std::function<void(const std::string&)> on_error)
    : clock_(clock),
      queue_(queue),
      requests_(requests),
      counters_(counters),
      on_error_(std::move(on_error)),
      window_ticks_(clock.ticks_in(ordering_window)),
      window_pause_(std::min<std::chrono::steady_clock::duration>(ordering_window, 1ms)),
      release_idle_after_(fences_other_threads() ? release_idle_after : std::chrono::milliseconds(0)),
      huge_rings_(fences_other_threads()),
      flight_on_(flight.on),
      flight_trigger_(static_cast<std::uint8_t>(flight.trigger)),
      flight_(flight.bytes_per_thread) {}

// Moves the cursor onto its next record; false when it has none left.
bool Collector::load(Cursor& cursor) {
  while (cursor.position < cursor.end) {
    std::uint64_t offset = cursor.position & cursor.mask;
    std::uint32_t site_id;
    std::memcpy(&site_id, cursor.ring + offset, sizeof site_id);
    if (site_id == kRingWrapMarker) {
      cursor.position += cursor.mask + 1 - offset;
      continue;
    }
    std::memcpy(&cursor.header, cursor.ring + offset, sizeof cursor.header);
    cursor.args = cursor.ring + offset + kRingHeaderSize;
    // What every call leaves: a size that fits the ring and the records its
    // thread committed, and a site id that was handed out (or the control
    // id). One compare each, the rest out of line: this runs per record.
    if (__builtin_expect(!size_fits(cursor) || (cursor.header.site_id & ~kRingFlightBit) >= site_ids_issued_, 0))
      return readable(cursor) || (give_up_damaged(cursor, "a header no call writes"), false);
    return true;
  }
  return false;
}

// Anything but what a call leaves means two writes met in one reservation
// (a log call in a signal handler that interrupted another on the same
// thread) or a stray write of the program's: neither the record's size nor
// its site can be trusted. A site registered since the bound was last read
// is the one case that is fine.
bool Collector::readable(const Cursor& cursor) {
  if (!size_fits(cursor)) return false;
  site_ids_issued_ = site_id_bound();
  return (cursor.header.site_id & ~kRingFlightBit) < site_ids_issued_;
}

// The thread's records up to what it had committed are given up: with one
// header unreadable, none after it can be found. Its ring goes on from
// there. Reported on on_error and as a record from terse.
void Collector::give_up_damaged(Cursor& cursor, const char* what) {
  const ThreadBuffer& b = *cursor.buffer;
  std::uint64_t lost = cursor.end - cursor.position;
  std::string message = "the buffer of thread " + std::to_string(b.os_tid) + " held " + what + " (site id " +
                        std::to_string(cursor.header.site_id) + ", " + std::to_string(cursor.header.args_size) +
                        " bytes of arguments): its " + std::to_string(lost) +
                        " bytes of records from there on are given up (a log call in a signal handler that "
                        "interrupted another on the same thread, or a stray write into the buffer)";
  cursor.position = cursor.end;
  publish(cursor);  // or the next pass finds the same header again
  counters_.damaged_ring_bytes.fetch_add(lost, std::memory_order_relaxed);
  if (on_error_) on_error_(message);
  log_notice(Level::error, message);
}

// Hands the ring space behind the cursor back to its thread.
void Collector::publish(const Cursor& c) {
  c.buffer->consumed.store(c.position, std::memory_order_release);
  room_freed(*c.buffer, c.position);
}

void Collector::publish_consumed() {
  for (const Cursor& c : cursors_) publish(c);
}

void Collector::refresh_buffers() {
  auto& registry = buffer_registry();
  // Relaxed, as its bumps: it only says when to take the mutex, which
  // orders the list and the buffers in it.
  std::uint64_t generation = registry.generation.load(std::memory_order_relaxed);
  if (generation == buffers_generation_) return;
  std::lock_guard lock(registry.mutex);
  buffers_ = registry.buffers;
  buffers_generation_ = registry.generation.load(std::memory_order_relaxed);
}

// FORMAT.md §7: the "dropped" control record. Stamped no earlier than the
// batch's last record so the stream stays in time order; the interval the
// drops happened in is in the record itself.
void Collector::report_drops(Batch& batch, ThreadBuffer& b, std::uint64_t now) {
  std::uint64_t dropped = b.all_dropped();
  if (dropped != b.drops_reported) {
    char args[kDropRecordArgs];
    std::uint64_t count = dropped - b.drops_reported;
    std::uint64_t last = b.last_drop_ticks.load(std::memory_order_relaxed);
    args[0] = static_cast<char>(schema::ControlKind::dropped);
    std::memcpy(args + 1, &count, 8);
    std::memcpy(args + 9, &b.drops_checked_ticks, 8);
    std::memcpy(args + 17, &last, 8);
    describe_thread(batch, b);
    append_record(batch, {schema::kControlSiteId, kDropRecordArgs, std::max(last, batch.last_ticks)}, b.index, args);
    b.drops_reported = dropped;
  }
  b.drops_checked_ticks = now;
}

Collector::~Collector() {
  if (huge_order_) settle_huge_order(true);
}

// False for an id handed out but never published: the loser of a race to
// register a site gives its id up, and no call writes it.
bool Collector::describe_site(Batch& batch, std::uint32_t id) {
  if (id == schema::kControlSiteId) return true;
  if (id >= sites_written_.size()) sites_written_.resize(std::max<std::size_t>(id + 1, sites_written_.size() * 2));
  if (sites_written_[id]) return true;
  const SiteInfo* site = site_info(id);
  // Published by a racing first call: visible within microseconds.
  auto give_up = std::chrono::steady_clock::now() + 100ms;
  while (site == nullptr && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
    site = site_info(id);
  }
  if (site == nullptr) return false;
  schema::append_entry(batch.dictionary, site->entry());
  sites_written_[id] = true;
  return true;
}

// FORMAT.md §7 kinds 3 and 4: a suppressed-calls report and a context push
// name a site, which the file must describe before them.
void Collector::describe_reported_site(Batch& batch, std::string_view args) {
  wire::ByteReader r(args);
  std::uint8_t kind = 0;
  std::uint64_t id = 0;
  if (!r.le(kind)) return;
  // A context push names its context's site after its serial (§7.3).
  std::uint64_t serial = 0;
  if (kind == static_cast<std::uint8_t>(schema::ControlKind::context_push) && !r.varint(serial)) return;
  bool names_site = kind == static_cast<std::uint8_t>(schema::ControlKind::suppressed) ||
                    kind == static_cast<std::uint8_t>(schema::ControlKind::context_push);
  if (names_site && r.varint(id) && id != 0 && id <= UINT32_MAX && site_info(static_cast<std::uint32_t>(id)) != nullptr)
    describe_site(batch, static_cast<std::uint32_t>(id));
}

void Collector::describe_thread(Batch& batch, const ThreadBuffer& b) {
  if (b.index >= threads_written_.size())
    threads_written_.resize(std::max<std::size_t>(b.index + 1, threads_written_.size() * 2));
  if (threads_written_[b.index]) return;
  schema::append_entry(
      batch.dictionary,
      schema::ThreadEntry{b.index, b.os_tid, std::string_view(b.name, ::strnlen(b.name, sizeof b.name))});
  threads_written_[b.index] = true;
}

// FORMAT.md §7.1. Each site's previous values live in one flat array; a
// site's slots count as zero until it first appears in the batch.
Collector::DeltaSlots* Collector::first_record_of_site(Batch& batch, std::uint32_t id) {
  if (!describe_site(batch, id)) return nullptr;
  if (id >= delta_slots_.size()) delta_slots_.resize(std::max<std::size_t>(id + 1, delta_slots_.size() * 2));
  std::unique_ptr<DeltaSlots>& slots = delta_slots_[id];
  if (!slots) {
    const SiteInfo* site = site_info(id);
    slots = std::make_unique<DeltaSlots>(site->arg_tags.data(), site->arg_tags.size());
    slots->limited = site->limited;
    if (site->encode_deltas != nullptr && code_stays_loaded(reinterpret_cast<const void*>(site->encode_deltas)))
      slots->encode = site->encode_deltas;
  }
  return slots.get();
}

inline void Collector::delta_code(const Batch& batch, DeltaSlots& slots, char* out, const char* args,
                                  std::size_t size) {
  if (slots.batch != batch.sequence) {
    std::fill(slots.previous.begin(), slots.previous.end(), 0);
    slots.batch = batch.sequence;
  }
  auto* to = reinterpret_cast<unsigned char*>(out);
  const auto* from = reinterpret_cast<const unsigned char*>(args);
  if (slots.limited) {
    // The suppressed count in front of the arguments is not one of them.
    std::size_t count_size = suppressed_count_size(std::string_view(args, size));
    std::memcpy(to, from, count_size);
    to += count_size;
    from += count_size;
    size -= count_size;
  }
  // Bytes that do not match the site's tags cannot happen; should they,
  // the record goes as it is rather than with unwritten bytes in it.
  bool coded = slots.encode != nullptr ? slots.encode(to, from, size, slots.previous.data())
                                       : slots.plan.apply<wire::Delta::encode>(to, from, size, slots.previous.data());
  if (!coded) std::memcpy(to, from, size);
}

// The caller has described the record's thread (once per pass is enough).
void Collector::append_record(Batch& batch, const RingRecordHeader& header, std::uint32_t thread_index,
                              const char* args) {
  DeltaSlots* coder = nullptr;
  if (header.site_id != schema::kControlSiteId) {
    coder = header.site_id < delta_slots_.size() ? delta_slots_[header.site_id].get() : nullptr;
    if (coder == nullptr && (coder = first_record_of_site(batch, header.site_id)) == nullptr) {
      if (on_error_)
        on_error_("a record of site id " + std::to_string(header.site_id) + ", which no call site has, was left out");
      return;
    }
  }
  char* out = batch.rows.tail(3 * 10 + header.args_size);
  if (batch.record_count == 0) {
    batch.first_ticks = header.ticks;
    batch.last_ticks = header.ticks;
  }
  char* delta = batch.ticks.tail(10);
  batch.ticks.commit(
      wire::write_varint(delta, wire::zigzag(static_cast<std::int64_t>(header.ticks - batch.last_ticks))));
  out = wire::write_varint(out, header.site_id);
  out = wire::write_varint(out, thread_index);
  out = wire::write_varint(out, header.args_size);
  if (header.args_size >= TextInterner::kMinLength) batch.has_long_args = true;
  if (coder == nullptr) {
    describe_reported_site(batch, std::string_view(args, header.args_size));
    std::memcpy(out, args, header.args_size);
  } else {
    delta_code(batch, *coder, out, args, header.args_size);
  }
  batch.rows.commit(out + header.args_size);
  batch.last_ticks = header.ticks;
  ++batch.record_count;
}

void Collector::take(Batch*& batch, const Cursor& c) {
  std::string_view args(c.args, c.header.args_size);
  if (c.header.site_id & kRingFlightBit) {
    std::uint64_t given_way = flight_.keep(c.buffer->index, c.header.site_id & ~kRingFlightBit, c.header.ticks, args);
    counters_.flight_recorded.fetch_add(1, std::memory_order_relaxed);
    if (given_way > 0) counters_.flight_overwritten.fetch_add(given_way, std::memory_order_relaxed);
    return;
  }
  if (c.header.site_id == schema::kControlSiteId) {
    track_context(c.buffer->index, c.header.ticks, args);
  } else if (!flight_.empty() && triggers_flight(c.header.site_id)) {
    write_flight(batch);
  }
  append_record(*batch, c.header, c.buffer->index, c.args);
}

// FORMAT.md §7.3: the flight recorder's records need the contexts open
// on their thread too.
void Collector::track_context(std::uint32_t thread_index, std::uint64_t ticks, std::string_view args) {
  bool push = false;
  std::uint64_t serial = 0;
  if (!contexts_.track(thread_index, ticks, args, push, serial) || !flight_on_) return;
  std::uint64_t given_way = flight_.keep_context(thread_index, push, serial, ticks, args);
  if (given_way > 0) counters_.flight_overwritten.fetch_add(given_way, std::memory_order_relaxed);
}

bool Collector::triggers_flight(std::uint32_t site_id) const {
  if (site_id == schema::kControlSiteId) return false;
  const SiteInfo* site = site_info(site_id);
  return site != nullptr && site->level >= flight_trigger_;
}

// FORMAT.md §7.2: the records go in flight frames of their own, after the
// records before the trigger and before the trigger itself, so that a
// reader that does not know them skips them whole.
void Collector::write_flight(Batch*& batch) {
  publish_consumed();
  if (batch->record_count > 0) submit(batch);
  batch->flight = true;
  std::uint64_t written = 0;
  for (const FlightRecorder::Entry& e : flight_.in_time_order()) {
    append_record(*batch, {e.site_id, static_cast<std::uint32_t>(e.args.size()), e.ticks}, e.thread_index,
                  e.args.data());
    if (e.site_id != schema::kControlSiteId) ++written;  // not the context pushes and pops among them
    if (batch->full()) {
      submit(batch);
      batch->flight = true;
    }
  }
  counters_.flight_written.fetch_add(written, std::memory_order_relaxed);
  flight_.clear();
  if (batch->record_count > 0) submit(batch);
  batch->flight = false;
}

// Drains every buffer up to what it had committed when the pass began, in
// time order, stopping at `cutoff`; `listed_at` is the clock as it was before
// the list of buffers was read. Returns the number of records taken.
std::size_t Collector::drain(std::uint64_t cutoff, std::uint64_t listed_at, Batch*& batch) {
  // A thread between its timestamp and its commit holds the cutoff back to
  // its previous timestamp. The marker is read before the commit position:
  // a call that clears it has published its record first.
  for (ThreadBuffer* b : buffers_) cutoff = std::min(cutoff, b->in_call_since.load(std::memory_order_acquire));
  cursors_.clear();
  for (ThreadBuffer* b : buffers_) {
    Cursor c{b,
             b->consumed.load(std::memory_order_relaxed),
             b->committed.load(std::memory_order_acquire),
             {},
             nullptr,
             b->data,
             b->capacity - 1};
    if (c.end - c.position > b->highest_fill.load(std::memory_order_relaxed))
      b->highest_fill.store(c.end - c.position, std::memory_order_relaxed);
    if (load(c)) {
      describe_thread(*batch, *b);
      cursors_.push_back(c);
    }
  }
  // A drain to the end (flush, stop) has no cutoff below `listed_at`, so a
  // thread that registered since the list was read holds its newer records
  // back itself. Relaxed, as the markers: the registration (before that
  // thread's first timestamp) is seen long before another thread's later
  // record, read above, has been committed and drained.
  if (cutoff > listed_at && buffer_registry().generation.load(std::memory_order_relaxed) != buffers_generation_)
    cutoff = listed_at;
  auto later = [](const Cursor& a, const Cursor& b) { return a.header.ticks > b.header.ticks; };
  std::make_heap(cursors_.begin(), cursors_.end(), later);
  std::size_t taken = 0;
  while (!cursors_.empty()) {
    std::pop_heap(cursors_.begin(), cursors_.end(), later);
    Cursor& c = cursors_.back();
    if (c.header.ticks > cutoff) {
      publish(c);
      cursors_.pop_back();
      continue;  // this thread's later records wait for the next pass
    }
    // Threads log in runs: take this thread's records up to the next
    // thread's first one without touching the heap in between.
    std::uint64_t limit = cursors_.size() > 1 ? std::min(cutoff, cursors_.front().header.ticks) : cutoff;
    bool more;
    do {
      take(batch, c);
      ++taken;
      c.position += ring_stride(c.header.args_size);
      if (batch->full()) {
        publish_consumed();
        submit(batch);
      }
      more = load(c);
    } while (more && c.header.ticks <= limit);
    if (more) {
      std::push_heap(cursors_.begin(), cursors_.end(), later);
    } else {
      publish(c);
      cursors_.pop_back();
    }
  }
  return taken;
}

// A flush writes every record logged before it. A call in flight when the
// flush began finishes within nanoseconds unless its thread was preempted;
// it is waited for (briefly) so it does not land after later records of
// other threads.
void Collector::wait_for_calls_in_flight() {
  auto give_up = std::chrono::steady_clock::now() + 10ms;
  // A thread's first call, its buffer being made, counts as one.
  while (earliest_starting_call() != kNotInCall && std::chrono::steady_clock::now() < give_up)
    std::this_thread::yield();
  for (ThreadBuffer* b : buffers_) {
    std::uint64_t marker = b->in_call_since.load(std::memory_order_acquire);
    if (marker == kNotInCall) continue;
    std::uint64_t committed = b->committed.load(std::memory_order_acquire);
    while (b->in_call_since.load(std::memory_order_acquire) == marker &&
           b->committed.load(std::memory_order_acquire) == committed && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::yield();
    }
  }
}

bool Collector::anything_pending() const {
  for (const ThreadBuffer* b : buffers_) {
    if (b->committed.load(std::memory_order_acquire) != b->consumed.load(std::memory_order_relaxed)) return true;
  }
  return false;
}

void Collector::submit(Batch*& batch) {
  if (contexts_.changed()) {
    // The writer puts them at the start of every file from this batch on.
    contexts_.snapshot(batch->contexts);
    batch->contexts_changed = true;
  }
  queue_.submit(batch);
  batch = queue_.take();
  batch_opened_ = {};
}

// Small batches compress badly, so a batch fills until it is big or has
// waited long enough for a reader following the file; while the writer is
// behind, longer (a fresh batch then buys nothing), unless a flush waits.
void Collector::submit_if_due(Batch*& batch, std::chrono::steady_clock::time_point now) {
  // Its records may be as old as the previous pass: the IO thread may have
  // slept since, and they wait for that sleep and kSmallBatchDelay at most.
  if (batch->record_count > 0 && batch_opened_ == std::chrono::steady_clock::time_point{})
    batch_opened_ = previous_pass_ == std::chrono::steady_clock::time_point{} ? now : previous_pass_;
  bool waited_enough = batch->record_count > 0 && now >= batch_due(*batch);
  if (batch->flush_sequence != 0 || (waited_enough && queue_.free_batch_ready())) submit(batch);
}

std::chrono::steady_clock::time_point Collector::batch_due(const Batch& batch) const {
  return batch_opened_ + (batch.rows_size() < kSmallBatchBytes ? kSmallBatchDelay : schema::kMaxBatchDelay);
}

// How long an idle pass sleeps. Each look into a ring takes the cache lines
// its thread writes next (the position it publishes, the end of its last
// record) away from that thread's core, and its next call waits to get them
// back: with bursts of 20 calls a few milliseconds apart, a look every
// millisecond cost a fifth of each call at the median. So the IO thread
// sleeps as long as the rings' rates since its last sleep allow: until the
// fastest could be an eighth fuller, at least 1 ms and at most 10 ms, which
// keeps a small batch's way to the file within kSmallBatchDelay of it. A
// ring that fills faster than that wakes it at a quarter (look_for_room).
std::chrono::steady_clock::duration Collector::idle_sleep(std::chrono::steady_clock::time_point now) {
  constexpr std::chrono::steady_clock::duration kShortest = 1ms, kLongest = 10ms;
  auto since_last = now - last_sleep_;
  last_sleep_ = now;
  std::chrono::steady_clock::duration sleep = kLongest;
  for (ThreadBuffer* b : buffers_) {
    std::uint64_t consumed = b->consumed.load(std::memory_order_relaxed);
    std::uint64_t filled = consumed - b->consumed_at_sleep;  // positions only grow
    b->consumed_at_sleep = consumed;
    if (filled == 0) continue;
    // since_last * (capacity / 8) / filled, without overflow for any duration up to years.
    auto eighth_in = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double, std::chrono::steady_clock::period>(static_cast<double>(since_last.count()) *
                                                                         static_cast<double>(b->capacity / 8) /
                                                                         static_cast<double>(filled)));
    sleep = std::min(sleep, eighth_in);
  }
  // A ring that filled fast lately may fill fast again at any moment (a
  // service between two bursts of work): for 100 ms the IO thread looks
  // every millisecond, rather than count on its producer's wake.
  if (sleep < kLongest)
    fast_until_ = now + 100ms;
  else if (now < fast_until_)
    sleep = kShortest;
  return std::max(sleep, kShortest);
}

// Producers whose rings fill up cut the sleep short (nudge_io_thread),
// so the long sleep of an idle process costs no records in a burst.
bool Collector::sleep_while_idle(std::chrono::steady_clock::duration sleep) {
  auto& wakeup = io_wakeup();
  std::unique_lock lock(wakeup.mutex);
  // Relaxed: a producer that misses the flag looks again an eighth of a ring
  // later (look_for_room), and one that clears it wakes this thread through
  // the mutex (wake_io_thread); nothing here is a store-load race to order.
  wakeup.asleep.store(true, std::memory_order_relaxed);
  wakeup.cv.wait_for(lock, sleep, [&] {
    return requests_.stop.load(std::memory_order_acquire) ||
           requests_.flush.load(std::memory_order_acquire) > flush_handled_ ||
           !wakeup.asleep.load(std::memory_order_acquire);
  });
  return !wakeup.asleep.exchange(false, std::memory_order_acq_rel);
}

void Collector::run() {
  // The ordering window's pauses are microseconds; the default slack of a
  // sleep (50 us on Linux) would make each several times longer.
  prefer_short_sleeps();
  queue_.prepare();
  Batch* batch = queue_.take();
  bool nudged = false;
  for (;;) {
    auto pass_began = std::chrono::steady_clock::now();
    std::uint64_t flush_target = requests_.flush.load(std::memory_order_acquire);
    bool stopping = requests_.stop.load(std::memory_order_acquire);
    bool drain_all = stopping || flush_target > flush_handled_;
    // Read before the list of buffers, as the first calls under way are: a
    // thread missing from the list stamps its first record later than this,
    // or holds a starting slot read here, so the cutoff keeps the listed
    // threads' newer records for a later pass, which lists that thread too.
    // Read after the list, a preemption in between let them out first
    // (milliseconds of them), and the new thread's record after.
    std::uint64_t now = ticks();
    std::uint64_t starting = earliest_starting_call();
    refresh_buffers();
    if (!batch->calibration_changed && clock_.refresh(batch->calibration)) batch->calibration_changed = true;
    if (drain_all) {
      wait_for_calls_in_flight();
      // First calls that began before the flush are listed now.
      starting = earliest_starting_call();
      refresh_buffers();
    }
    std::uint64_t cutoff = std::min(drain_all ? kNotInCall : now - window_ticks_, starting);
    std::size_t taken = drain(cutoff, now, batch);
    // A crash writes what the flight recorder holds: the records that lead up to it.
    if (drain_all && !flight_.empty() && requests_.crashing.load(std::memory_order_relaxed)) write_flight(batch);
    for (ThreadBuffer* b : buffers_) report_drops(*batch, *b, now);
    release_abandoned(*batch);
    release_idle_rings(std::chrono::steady_clock::now());
    for (ThreadBuffer* b : buffers_) prepare_ahead(*b);
    move_busy_rings();
    if (drain_all) {
      batch->flush_sequence = flush_target;
      flush_handled_ = flush_target;
      if (stopping && !anything_pending()) {
        batch->last = true;
        queue_.submit(batch);
        return;
      }
    }
    auto now_steady = std::chrono::steady_clock::now();
    submit_if_due(batch, now_steady);
    previous_pass_ = pass_began;
    if (taken > 0) {
      nudged = false;
      if (!drain_all) std::this_thread::yield();
      continue;
    }
    if (nudged) {
      // Woken for records still inside the ordering window (a small ring):
      // wait the window out unannounced, or the producer wakes it again at once.
      nudged = false;
      std::this_thread::sleep_for(window_pause_);
      continue;
    }
    auto now_idle = std::chrono::steady_clock::now();
    auto sleep = idle_sleep(now_idle);
    // A batch that waits to go out goes when it is due, not a whole sleep
    // later: a reader following the file sees a quiet service's records
    // within kSmallBatchDelay of their collection.
    if (batch->record_count > 0)
      sleep = std::clamp<std::chrono::steady_clock::duration>(batch_due(*batch) - now_idle, 1ms, sleep);
    nudged = sleep_while_idle(sleep);
  }
}

}  // namespace terse::detail
