#include "pipeline.hpp"

#include <algorithm>
#include <cstring>

#include <terse/terse.hpp>

#include "internal.hpp"

namespace terse::detail {
namespace {

Wakeup* g_wakeup = new Wakeup;

}  // namespace

void ByteBuffer::grow(std::size_t needed) {
  std::size_t capacity = std::max(needed, capacity_ * 2 + 4096);
  auto fresh = std::make_unique<char[]>(capacity);
  if (size_ != 0) std::memcpy(fresh.get(), data_.get(), size_);
  data_ = std::move(fresh);
  capacity_ = capacity;
}

void Batch::clear() {
  dictionary.clear();
  records.clear();
  last_ticks = 0;
  record_count = 0;
  calibration_changed = false;
  flush_sequence = 0;
  last = false;
  has_long_args = false;
}

void Counters::add_to(Stats& s) const {
  s.records_written = records_written.load(std::memory_order_relaxed);
  s.bytes_in = bytes_in.load(std::memory_order_relaxed);
  s.bytes_out = bytes_out.load(std::memory_order_relaxed);
  s.files_opened = files_opened.load(std::memory_order_relaxed);
  s.files_removed = files_removed.load(std::memory_order_relaxed);
  s.write_errors = write_errors.load(std::memory_order_relaxed);
  s.syncs = syncs.load(std::memory_order_relaxed);
  s.records_dropped = dropped_released.load(std::memory_order_relaxed);
}

BatchQueue::BatchQueue() {
  for (auto& batch : batches_) free_.push_back(&batch);
}

Batch* BatchQueue::take() {
  std::unique_lock lock(mutex_);
  batch_returned_.wait(lock, [&] { return !free_.empty(); });
  Batch* batch = free_.back();
  free_.pop_back();
  batch->clear();
  batch->sequence = ++batches_taken_;
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
  }
  work.sync_target = sync_requested_;
  work.durable_wanted = work.sync_target > sync_completed_;
  return work;
}

void BatchQueue::finish(const Work& work, bool last) {
  {
    std::lock_guard lock(mutex_);
    if (work.batch != nullptr) {
      if (work.batch->flush_sequence > flush_completed_) flush_completed_ = work.batch->flush_sequence;
      flushed_through_.store(flush_completed_, std::memory_order_release);
      free_.push_back(work.batch);
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
