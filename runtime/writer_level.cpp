// The writer's zstd level: faster levels while it falls behind, back to
// Config::compression_level once it keeps pace, and only levels it timed
// faster on the records at hand.
#include <algorithm>

#include "writer.hpp"

namespace terse::detail {

// A step is a zstd level a good deal faster than the one before (zstd's
// levels 2 to 0 differ little in speed, so 1 is the first step down from
// above it), one step per batch: a burst that the next batch or two clear
// keeps the configured level. Back up one step every few batches caught up,
// so that the level settles where the writer keeps pace. A batch that
// interning shrank to under half left zstd little to do: the writer is
// behind for other reasons, and a faster level would only cost bytes (with
// 4 KiB texts that repeat, it cost a third of the records per second too).
//
// A step down is taken only where it saves time on the records at hand: the
// writer times zstd at each level it uses, and a level measured no faster
// than the one above it (in the last kCostsKeptBatches batches; the records
// may change) is left at once, or not taken again.
void Writer::adapt_level(std::size_t bytes_behind, const Batch& batch) {
  constexpr std::size_t kBehindBytes = 2 * kBatchTargetBytes;
  constexpr int kCaughtUpBatches = 4;
  const int slowest = config_.compression_level;
  const int fastest = std::min(config_.fastest_compression_level, slowest);
  if (slowest == 0 || !files_enabled_) return;  // nothing is compressed: nothing to trade
  ++batches_adapted_;
  FrameEncoder::CompressionCost cost = frames_.take_compression_cost();
  if (LevelCost* now = level_cost(level_); now != nullptr && cost.bytes >= kBatchTargetBytes / 2) {
    double measured = static_cast<double>(cost.cpu_ns) / static_cast<double>(cost.bytes);
    now->ns_per_byte = measured_recently(now) ? (now->ns_per_byte + measured) / 2 : measured;
    now->measured_at = batches_adapted_;
  }
  int up = level_ >= 1 ? slowest : level_ + 2 >= 0 ? 1 : level_ + 2;
  up = std::min(up, slowest);
  if (level_ != slowest && !faster_than(level_, up)) {  // this step down bought nothing: back up
    batches_caught_up_ = 0;
    level_ = up;
    return;
  }
  if (bytes_behind > kBehindBytes) {
    batches_caught_up_ = 0;
    if (records_to_compress_ * 2 < batch.columns().size()) return;
    int next = std::max(level_ > 1 ? 1 : level_ == 1 ? -1 : level_ - 2, fastest);
    if (faster_than(next, level_)) level_ = next;
    return;
  }
  if (bytes_behind > 0 || level_ == slowest || ++batches_caught_up_ < kCaughtUpBatches) return;
  batches_caught_up_ = 0;
  level_ = up;
}

Writer::LevelCost* Writer::level_cost(int level) {
  if (level < kLowestLevel || level > kHighestLevel) return nullptr;
  return &level_costs_[static_cast<std::size_t>(level - kLowestLevel)];
}

bool Writer::measured_recently(const LevelCost* cost) const {
  return cost != nullptr && cost->measured_at != 0 && batches_adapted_ - cost->measured_at <= kCostsKeptBatches;
}

// Unknown counts as faster: a level is tried before it is judged. Faster
// means by a tenth at least, beyond what one batch's timing varies.
bool Writer::faster_than(int level, int than) {
  const LevelCost* a = level_cost(level);
  const LevelCost* b = level_cost(than);
  if (!measured_recently(a) || !measured_recently(b)) return true;
  return a->ns_per_byte < b->ns_per_byte * 0.9;
}

// The level for records frames: none while crashing, which depends on as
// little as it can.
int Writer::level() const { return requests_.crashing.load(std::memory_order_relaxed) ? 0 : level_; }

}  // namespace terse::detail
