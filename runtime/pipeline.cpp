#include "pipeline.hpp"

#include <algorithm>
#include <cstring>
#include <new>

#include <terse/terse.hpp>
#include <terse/wire.hpp>

#include "buffers.hpp"

namespace terse::detail {
namespace {

Wakeup* g_wakeup = new Wakeup;

}  // namespace

ByteBuffer::~ByteBuffer() { unmap_populated(data_, capacity_); }

void ByteBuffer::grow(std::size_t needed) {
  constexpr std::size_t kPage = 4096;
  std::size_t capacity = (std::max(needed, capacity_ * 2) + kPage - 1) / kPage * kPage;
  char* fresh = map_populated(capacity);
  if (fresh == nullptr) throw std::bad_alloc();
  if (size_ != 0) std::memcpy(fresh, data_, size_);
  unmap_populated(data_, capacity_);
  data_ = fresh;
  capacity_ = capacity;
}

void ByteBuffer::reset_capacity(std::size_t bytes) {
  unmap_populated(data_, capacity_);
  data_ = nullptr;
  size_ = capacity_ = 0;
  grow(bytes);
}

void join_columns(const RecordColumns& columns, ByteBuffer& out) {
  char* at = out.tail(8 + columns.rows.size() + columns.ticks.size());
  std::memcpy(at, &columns.base, 8);  // little-endian, as wire.hpp requires
  at += 8;
  ColumnsReader reader(columns);
  BatchRecord record;
  while (!reader.empty() && reader.next(record)) {
    at = wire::write_varint(at, record.site_id);
    at = wire::write_varint(at, record.thread);
    at = wire::write_varint(at, record.tick_delta);
    at = wire::write_varint(at, record.args.size());
    std::memcpy(at, record.args.data(), record.args.size());
    at += record.args.size();
  }
  out.commit(at);
}

void Batch::reset_capacity(std::size_t rows_bytes) {
  rows.reset_capacity(kRowsHeadRoom + rows_bytes);
  ticks.reset_capacity(kBatchMostTicksBytes);
  clear();
}

void Batch::clear() {
  dictionary.clear();
  // Grown while the writer was behind: the memory goes back once written.
  if (rows.capacity() > 2 * (kRowsHeadRoom + kBatchPreparedBytes))
    rows.reset_capacity(kRowsHeadRoom + kBatchPreparedBytes);
  if (ticks.capacity() > 2 * kBatchMostTicksBytes) ticks.reset_capacity(kBatchMostTicksBytes);
  rows.clear();
  rows.commit(rows.tail(kRowsHeadRoom) + kRowsHeadRoom);
  ticks.clear();
  first_ticks = 0;
  last_ticks = 0;
  record_count = 0;
  calibration_changed = false;
  flush_sequence = 0;
  last = false;
  has_long_args = false;
  flight = false;
  contexts_changed = false;
  contexts.clear();
}

void Counters::add_to(Stats& s) const {
  s.records_written = records_written.load(std::memory_order_relaxed);
  s.bytes_in = bytes_in.load(std::memory_order_relaxed);
  s.bytes_out = bytes_out.load(std::memory_order_relaxed);
  s.files_opened = files_opened.load(std::memory_order_relaxed);
  s.files_removed = files_removed.load(std::memory_order_relaxed);
  s.write_errors = write_errors.load(std::memory_order_relaxed);
  s.syncs = syncs.load(std::memory_order_relaxed);
  s.batches_compressed_faster = batches_compressed_faster.load(std::memory_order_relaxed);
  s.records_dropped = dropped_released.load(std::memory_order_relaxed);
  s.flight_recorded = flight_recorded.load(std::memory_order_relaxed);
  s.flight_written = flight_written.load(std::memory_order_relaxed);
  s.flight_overwritten = flight_overwritten.load(std::memory_order_relaxed);
  s.idle_buffers_released = idle_buffers_released.load(std::memory_order_relaxed);
  s.rings_on_huge_pages = rings_on_huge_pages.load(std::memory_order_relaxed);
  s.buffer_bytes_given_up = damaged_ring_bytes.load(std::memory_order_relaxed);
}

BatchQueue::BatchQueue() {
  for (std::size_t i = 0; i < kKeptBatches; ++i) {
    owned_.push_back(std::make_unique<Batch>());
    free_.push_back(owned_.back().get());
  }
  free_count_.store(free_.size(), std::memory_order_relaxed);
}

void BatchQueue::prepare() {
  std::lock_guard lock(mutex_);
  for (Batch* batch : free_) {
    if (batch->rows.capacity() < kRowsHeadRoom + kBatchPreparedBytes) batch->reset_capacity(kBatchPreparedBytes);
  }
}

namespace {

// nullptr when there is no memory for one: then the collector waits for the
// writer as it would once it holds kMostBatches.
std::unique_ptr<Batch> make_extra_batch() noexcept {
  try {
    auto batch = std::make_unique<Batch>();
    batch->reset_capacity(kBatchPreparedBytes);
    return batch;
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

}  // namespace

Batch* BatchQueue::take() {
  std::unique_lock lock(mutex_);
  if (free_.empty()) extra_needed_at_ = std::chrono::steady_clock::now();
  if (free_.empty() && owned_.size() < kMostBatches) {
    lock.unlock();  // mapped without holding up the writer
    std::unique_ptr<Batch> extra = make_extra_batch();
    lock.lock();
    if (extra) {
      ++extra_batches_made_;
      free_.push_back(extra.get());
      owned_.push_back(std::move(extra));
    }
  }
  batch_returned_.wait(lock, [&] { return !free_.empty(); });
  Batch* batch = free_.back();
  free_.pop_back();
  free_count_.store(free_.size(), std::memory_order_relaxed);
  batch->sequence = ++batches_taken_;
  lock.unlock();
  batch->clear();
  return batch;
}

void BatchQueue::submit(Batch* batch) {
  {
    std::lock_guard lock(mutex_);
    full_.push_back(batch);
  }
  batch_ready_.notify_one();
}

BatchQueue::Work BatchQueue::wait_for_work(const std::chrono::steady_clock::time_point* deadline) {
  std::unique_lock lock(mutex_);
  auto ready = [&] { return !full_.empty() || sync_requested_ > sync_completed_; };
  if (deadline != nullptr) {
    batch_ready_.wait_until(lock, *deadline, ready);
  } else {
    batch_ready_.wait(lock, ready);
  }
  Work work;
  if (!full_.empty()) {
    work.batch = full_.front();
    full_.pop_front();
    for (const Batch* waiting : full_) work.bytes_behind += waiting->columns().size();
  }
  work.sync_target = sync_requested_;
  work.durable_wanted = work.sync_target > sync_completed_;
  return work;
}

std::size_t BatchQueue::batches_held() {
  std::lock_guard lock(mutex_);
  return owned_.size();
}

std::uint64_t BatchQueue::extra_batches_made() {
  std::lock_guard lock(mutex_);
  return extra_batches_made_;
}

bool BatchQueue::holds_every_batch() {
  std::lock_guard lock(mutex_);
  return free_.empty() && owned_.size() >= kMostBatches;
}

void BatchQueue::finish(const Work& work, bool last) {
  std::unique_ptr<Batch> retired;
  {
    std::lock_guard lock(mutex_);
    if (work.batch != nullptr) {
      if (work.batch->flush_sequence > flush_completed_) flush_completed_ = work.batch->flush_sequence;
      flushed_through_.store(flush_completed_, std::memory_order_release);
      // Two free ones waiting, and none lacking for a while: the writer has
      // caught up, and an extra batch goes.
      if (owned_.size() > kKeptBatches && free_.size() >= 2 &&
          std::chrono::steady_clock::now() - extra_needed_at_ >= kExtraBatchesKeptFor) {
        auto it = std::find_if(owned_.begin(), owned_.end(), [&](const auto& b) { return b.get() == work.batch; });
        retired = std::move(*it);
        owned_.erase(it);
      } else {
        free_.push_back(work.batch);
        free_count_.store(free_.size(), std::memory_order_relaxed);
      }
    }
    if (work.durable_wanted) sync_completed_ = work.sync_target;
    if (last) writer_done_ = true;
  }
  batch_returned_.notify_one();
  flushed_.notify_all();
}

void BatchQueue::wait_for_flush(std::uint64_t sequence) {
  std::unique_lock lock(mutex_);
  flushed_.wait(lock, [&] { return flush_completed_ >= sequence || writer_done_; });
}

void BatchQueue::wait_for_sync() {
  std::unique_lock lock(mutex_);
  std::uint64_t sequence = ++sync_requested_;
  batch_ready_.notify_one();
  flushed_.wait(lock, [&] { return sync_completed_ >= sequence || writer_done_; });
}

Wakeup& io_wakeup() noexcept { return *g_wakeup; }

void renew_io_wakeup_after_fork() noexcept { g_wakeup = new Wakeup; }

void wake_io_thread() noexcept {
  auto& wakeup = io_wakeup();
  { std::lock_guard lock(wakeup.mutex); }  // orders the wake after a waiter's predicate check
  wakeup.cv.notify_all();
}

void nudge_io_thread() noexcept {
  auto& wakeup = io_wakeup();
  // The plain load first keeps the flag's cache line shared while the IO thread is awake.
  if (wakeup.asleep.load(std::memory_order_relaxed) && wakeup.asleep.exchange(false, std::memory_order_acq_rel))
    wake_io_thread();
}

}  // namespace terse::detail
