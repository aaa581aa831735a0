#include "writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include <zstd.h>

#include <terse/dictionary.hpp>
#include <terse/wire.hpp>

#include "levels.hpp"
#include "pipeline.hpp"
#include "registry.hpp"

namespace terse::detail {
namespace {

FileSet::Rules file_rules(const Config& config) {
  return {config.directory,       config.name,     config.roll_bytes, config.roll_daily, config.max_files,
          config.max_total_bytes, config.file_mode};
}

// Held-back records go out by then at the latest, however few came after
// them: as soon as the collector's short delay (collector.cpp), so that a
// reader following the file sees them about as early as it would anyway.
constexpr auto kHoldLimit = std::chrono::milliseconds(10);

// A frame's first sight of each long text costs zstd most of its work:
// it finds no match and stores the bytes as literals. Texts that vary a
// little (a counter, an id) repeat within a frame only if the frame is
// large, so full batches of mostly such records go out joined in frames of
// this size: with 64 distinct 4 KiB texts, a 4 MiB frame compresses 3 times
// as fast as a 1 MiB one, and 4 times as small. Joining re-reads every
// record, which batches of short records would pay for without the gain.
constexpr std::size_t kLongTextFrameBytes = 4 * kBatchTargetBytes;
constexpr std::size_t kLongTextRecordBytes = 256;  // on average, for a batch to count as one of long texts

bool of_long_texts(const Batch& batch) { return batch.columns().size() >= kLongTextRecordBytes * batch.record_count; }

}  // namespace

Writer::Writer(const Config& config, const Calibration& calibration, BatchQueue& queue, Requests& requests,
               Counters& counters, View* view)
    : config_(config),
      queue_(queue),
      requests_(requests),
      counters_(counters),
      view_(view),
      files_enabled_(!config.directory.empty()),
      files_(file_rules(config)),
      calibration_written_(calibration),
      level_(config.compression_level) {
  if (files_enabled_ && !config.encrypt_to.empty()) {
    auto key = seal::read_public_key(config.encrypt_to);
    if (!key) throw Error("terse: Config::encrypt_to: " + key.why());
    recipient_ = std::move(*key);
    if (!config.sign_with.empty()) {
      auto signer = seal::read_secret_key(config.sign_with, seal::Passphrase::refuse);
      if (!signer) throw Error("terse: Config::sign_with: " + signer.why());
      signer_ = std::move(*signer);
    }
    frames_.seal_to(&*recipient_, signer_ ? &*signer_ : nullptr);
  }
}

Writer::~Writer() {
  if (fd_ >= 0) {
    end_file();
    ::close(fd_);
  }
}

void Writer::open_first_file() {
  if (!files_enabled_) return;
  if (!open_file(true))
    throw Error("terse: cannot write the first file in '" + config_.directory + "': " + std::strerror(last_errno_));
}

void Writer::run() {
  if (files_enabled_) {
    frames_.prepare(kBatchPreparedBytes);
    prefault(out_, ZSTD_compressBound(kBatchPreparedBytes) + 4096);
  }
  for (;;) {
    auto sync_deadline = unsynced_since_ + config_.fsync_interval;
    bool sync_pending = unsynced_bytes_ > 0 && config_.fsync_interval.count() > 0;
    const std::chrono::steady_clock::time_point* deadline = sync_pending ? &sync_deadline : nullptr;
    auto held_deadline = held_since_ + kHoldLimit;
    if (!held_.empty() && (deadline == nullptr || held_deadline < *deadline)) deadline = &held_deadline;
    BatchQueue::Work work = queue_.wait_for_work(deadline);
    if (work.batch != nullptr) {
      if (level_ != config_.compression_level && work.batch->record_count > 0)
        counters_.batches_compressed_faster.fetch_add(1, std::memory_order_relaxed);
      records_to_compress_ = work.batch->columns().size();
      absorb(*work.batch);
      // Before the file: a disk that fails or fills up does not hold up the console.
      if (view_) view_->offer(*work.batch);
      bool written = write_batch(*work.batch) || write_failed(*work.batch);
      if (written && failing_) write_recovered();
      // From the next file on (FORMAT.md §7.3); written or lost, the batch is behind us.
      if (work.batch->contexts_changed) open_contexts_ = work.batch->contexts;
      adapt_level(work.bytes_behind, *work.batch);
    }
    // A write error leaves them held; the next batch or deadline tries again.
    if (!held_.empty() && (work.durable_wanted || std::chrono::steady_clock::now() >= held_since_ + kHoldLimit) &&
        !write_held())
      held_since_ = std::chrono::steady_clock::now();
    if (work.durable_wanted || sync_due()) sync_file();
    bool last = work.batch != nullptr && work.batch->last;
    if (last) sync_file();
    if (work.batch != nullptr && !last && held_.empty()) end_file_for_signal(*work.batch);
    queue_.finish(work, last);
    if (last) return;
  }
}

// Takes in what a batch adds to the process-wide state, once per batch
// however often writing it is tried.
void Writer::absorb(const Batch& batch) {
  dictionary_.append(batch.dictionary);
  if (batch.calibration_changed) calibration_written_ = batch.calibration;
}

// False when the batch did not reach the file (the file is left as it was).
bool Writer::write_batch(Batch& batch) {
  check_file();
  // Whoever waits for this batch waits for what came before it too.
  bool urgent = batch.flush_sequence != 0 || batch.last || requests_.crashing.load(std::memory_order_relaxed);
  // Without a file (one given up in the middle), the held records go into
  // the next with this batch.
  if (!held_.empty() && fd_ >= 0 &&
      (files_.roll_due(file_bytes_, realtime_ns()) || (urgent && batch.record_count == 0)) && !write_held())
    return false;
  if (batch.record_count == 0 && batch.dictionary.empty() && !batch.calibration_changed) return true;
  if (!files_enabled_) {
    counters_.records_written.fetch_add(batch.record_count, std::memory_order_relaxed);
    counters_.bytes_in.fetch_add(batch.columns().size() + batch.dictionary.size(), std::memory_order_relaxed);
    return true;
  }
  bool fresh = false;
  if (fd_ < 0 || files_.roll_due(file_bytes_, realtime_ns())) {
    if (!open_file(false)) return false;
    fresh = true;  // the new file's opening frames already hold the dictionary
  } else if (!file_started_) {
    if (!(file_started_ = write_file_start())) return false;
    fresh = true;
  }
  out_.clear();
  int level = this->level();
  // After a failed write the dictionary entries of lost batches are missing
  // from the file: repeat all of them (readers take the latest).
  bool whole_dictionary = replay_dictionary_ && !fresh;
  if ((batch.calibration_changed || whole_dictionary) && !fresh) frames_.append_calibration(out_, calibration_written_);
  if (whole_dictionary) {
    frames_.append_dictionary(out_, dictionary_, level);
    // The lost batches may have opened contexts too.
    if (!open_contexts_.empty()) frames_.append_records(out_, schema::FrameType::records, open_contexts_, level);
  } else if (!batch.dictionary.empty() && !fresh) {
    frames_.append_dictionary(out_, batch.dictionary, level);
  }
  RecordColumns records = batch.columns();
  RowsToWrite place = intern_strings(batch, level, records);
  records_to_compress_ = records.size();
  bool hold = false;
  bool was_holding = !held_.empty();
  if (batch.record_count > 0) append_batch_records(batch, records, place, level, hold);
  if (!append_to_file(out_)) {
    interner_.discard();
    held_.give_back();
    return false;
  }
  interner_.confirm();
  if (batch.record_count > 0) {
    if (file_records_ == 0) file_first_ticks_ = batch.first_ticks;
    file_records_ += batch.record_count;
    file_last_ticks_ = batch.last_ticks;
  }
  if (hold) {
    if (!was_holding) held_since_ = std::chrono::steady_clock::now();
    held_.keep();
    held_records_ += batch.record_count;
  } else {
    held_.clear();
    held_records_ = 0;
    // Frames of long texts are over: the memory they took goes back, as
    // a batch grown while the writer was behind gives its own back.
    if (batch.record_count > 0 && !of_long_texts(batch)) {
      if (frames_.release_memory(kBatchPreparedBytes)) {
        held_.release_memory();
        std::string().swap(out_);
        prefault(out_, ZSTD_compressBound(kBatchPreparedBytes) + 4096);
        return_freed_memory();
      }
    }
  }
  replay_dictionary_ = false;
  counters_.records_written.fetch_add(batch.record_count, std::memory_order_relaxed);
  counters_.bytes_in.fetch_add(batch.columns().size() + batch.dictionary.size(), std::memory_order_relaxed);
  return true;
}

// A full batch (the collector cut it at kBatchTargetBytes, so more follow
// at once) that interning shrank to a fraction of that would make a frame
// mostly of zstd's start-up cost: its records wait for the next batches and
// go out in one frame with them (held_), until that frame's payload reaches
// the target, a batch comes that someone waits for, or kHoldLimit passes.
// Full batches of long texts are held the same way up to
// kLongTextFrameBytes. Returns the frame's target size, or
// 0 when the batch is not held.
std::size_t Writer::held_frame_target(const Batch& batch, const RecordColumns& records) const {
  bool holdable = !batch.flight && !batch.last && batch.flush_sequence == 0 &&
                  !requests_.crashing.load(std::memory_order_relaxed) && config_.compression_level != 0 && batch.full();
  if (!holdable) return 0;
  if (of_long_texts(batch) && records.size() >= kBatchTargetBytes / 2) return kLongTextFrameBytes;
  return records.size() < kBatchTargetBytes / 2 ? kBatchTargetBytes : 0;
}

// The batch's records frame into out_, joined with the records held back;
// `hold` says whether they all wait in held_ instead. held_ takes them for
// good only once out_ reached the file.
void Writer::append_batch_records(const Batch& batch, const RecordColumns& records, RowsToWrite place, int level,
                                  bool& hold) {
  auto type = batch.flight ? schema::FrameType::flight : schema::FrameType::records;
  auto append_own_frame = [&] {
    frames_.append_columns(out_, type, records.base, records.ticks, place.rows, records.rows.size(), place.room, level);
  };
  std::size_t target = held_frame_target(batch, records);
  if (held_.empty()) {
    hold = target > 0 && held_.add(records);
    if (!hold) append_own_frame();
    return;
  }
  std::size_t limit = std::max(target, kBatchTargetBytes);
  bool fits = held_.size() + records.size() <= limit + limit / 2;
  if (!batch.flight && fits && held_.add(records)) {
    hold = held_.size() < target;
    if (!hold) append_held(type, level);
    return;
  }
  // Held records come first, in a frame of their own.
  append_held(schema::FrameType::records, level);
  append_own_frame();
}

void Writer::append_held(schema::FrameType type, int level) {
  frames_.append_columns(out_, type, held_.base(), held_.ticks(), held_.rows(), held_.rows_size(), held_.room(), level);
}

// The held records alone, in their frame: a deadline passed, or the file ends.
bool Writer::write_held() {
  check_file();
  if (fd_ < 0 && !open_file(false)) return false;
  out_.clear();
  append_held(schema::FrameType::records, level());
  if (!append_to_file(out_)) return false;
  held_.clear();
  held_records_ = 0;
  return true;
}

// The batch's records with long repeated strings replaced by text entries,
// whose dictionary frames go into out_ ahead of them.
Writer::RowsToWrite Writer::intern_strings(Batch& batch, int level, RecordColumns& records) {
  RowsToWrite in_batch{batch.rows_room() + kRowsHeadRoom, kRowsHeadRoom};
  if (batch.record_count == 0 || !batch.has_long_args) return in_batch;
  interned_entries_.clear();
  if (!interner_.rewrite(records.rows, interned_records_, interned_entries_)) return in_batch;
  if (!interned_entries_.empty()) frames_.append_dictionary(out_, interned_entries_, level);
  records.rows = interned_records_;
  return {interned_records_.data(), 0};
}

// Disk full, file too large, I/O error: reported once. The block policy
// holds the batch and retries while the collector still has batches to
// fill, then counts it as lost, so that a log disk never stops the
// service's threads; with Config::wait_for_disk it holds the batch until
// writes work (callers block as buffers fill). The drop policy counts the
// batch as lost at once. Stopping gives up holding.
bool Writer::write_failed(Batch& batch) {
  // The descriptor was closed between the check and the write: the next
  // file takes the batch at once, whatever the policy.
  if (fd_ >= 0 && !descriptor_is_ours() && write_batch(batch)) return true;
  bool hold = config_.overflow == Overflow::block;
  bool hold_whatever_it_takes = hold && config_.wait_for_disk;
  if (!failing_) {
    failing_ = true;
    config_.on_error("writing " + (path_.empty() ? config_.directory : path_) +
                     " failed: " + std::strerror(last_errno_) +
                     (hold_whatever_it_takes ? "; records are held until writes succeed again"
                      : hold ? "; records are held while there is room and then dropped and counted, until writes "
                               "succeed again"
                             : "; records are dropped and counted until writes succeed again"));
  }
  replay_dictionary_ = true;
  // Short steps while other batches may still come: the batch is retried
  // soon after the disk has room again, and dropped soon after the
  // collector has taken the last batch there is. While a flush waits (for
  // this batch or one behind it), a batch is held a second at most:
  // flush() must not hang on the disk either.
  constexpr auto kStep = std::chrono::milliseconds(10);
  constexpr auto kFlushHold = std::chrono::seconds(1);
  const auto held_since = std::chrono::steady_clock::now();
  auto pause = kStep;
  auto retry_at = held_since + pause;
  while (hold && !requests_.stop.load(std::memory_order_acquire)) {
    if (!hold_whatever_it_takes && (queue_.holds_every_batch() ||
                                    (flush_waiting() && std::chrono::steady_clock::now() >= held_since + kFlushHold)))
      break;
    std::this_thread::sleep_for(hold_whatever_it_takes ? pause : kStep);
    if (std::chrono::steady_clock::now() < retry_at && !hold_whatever_it_takes) continue;
    if (write_batch(batch)) return true;
    pause = std::min<std::chrono::milliseconds>(pause * 2, std::chrono::milliseconds(500));
    retry_at = std::chrono::steady_clock::now() + pause;
  }
  if (batch.record_count > 0) count_lost(batch);
  return false;
}

void Writer::count_lost(const Batch& batch) {
  std::uint64_t first = batch.first_ticks;
  lost_first_ticks_ = lost_records_ == 0 ? first : std::min(lost_first_ticks_, first);
  lost_last_ticks_ = std::max(lost_last_ticks_, batch.last_ticks);
  std::uint64_t earlier_drops = 0;
  std::uint64_t lost = log_records_in(batch, earlier_drops);
  // Drops a lost control record reported are counted in stats already.
  lost_records_ += lost + earlier_drops;
  counters_.dropped_released.fetch_add(lost, std::memory_order_relaxed);
}

// The log records of a batch; `drops` gets what its "dropped" control
// records reported, since those reports are lost with it.
std::uint64_t Writer::log_records_in(const Batch& batch, std::uint64_t& drops) {
  std::uint64_t count = 0;
  ColumnsReader r(batch.columns());
  BatchRecord record;
  while (!r.empty() && r.next(record)) {
    std::uint64_t dropped = 0;
    std::string_view args = record.args;
    if (record.site_id == schema::kControlSiteId && args.size() >= 9 &&
        args[0] == static_cast<char>(schema::ControlKind::dropped)) {
      std::memcpy(&dropped, args.data() + 1, 8);
      drops += dropped;
    } else {
      ++count;
    }
  }
  return count;
}

// One record the writer writes itself, into out_ in a records frame of its
// own (FORMAT.md §7); thread index 0 stands for the writer.
void Writer::append_writer_record(std::uint32_t site_id, std::uint64_t stamp, std::string_view args) {
  std::string payload;
  wire::put_le<std::uint64_t>(payload, stamp);
  wire::put_varint(payload, site_id);
  wire::put_varint(payload, 0);
  wire::put_varint(payload, 0);
  wire::put_bytes(payload, args);
  frames_.append_records(out_, schema::FrameType::records, payload, 0);
}

// A "dropped" control record: the lost records came from any thread.
void Writer::append_dropped_record(std::uint64_t count, std::uint64_t first_ticks, std::uint64_t last_ticks) {
  std::string args;
  args.push_back(static_cast<char>(schema::ControlKind::dropped));
  wire::put_le<std::uint64_t>(args, count);
  wire::put_le<std::uint64_t>(args, first_ticks);
  wire::put_le<std::uint64_t>(args, last_ticks);
  append_writer_record(schema::kControlSiteId, last_ticks, args);
}

// Writes work again: say so, and put the loss into the log itself.
void Writer::write_recovered() {
  failing_ = false;
  std::string note = "writing " + path_ + " works again";
  if (lost_records_ > 0) {
    out_.clear();
    append_dropped_record(lost_records_, lost_first_ticks_, lost_last_ticks_);
    if (append_to_file(out_)) {
      note += "; " + std::to_string(lost_records_) + " records logged in the meantime are lost, as the log now says";
      lost_records_ = 0;
    }
  }
  config_.on_error(note);
}

bool Writer::flush_waiting() const {
  return requests_.flush.load(std::memory_order_acquire) > queue_.flushed_through();
}

// A record of terse's own warn site (levels.hpp, log_notice), with its
// site's entry ahead of it: the collector describes a site only once a
// record of it passes through, which this one never does.
void Writer::append_notice(const std::string& text, std::uint64_t stamp) {
  std::uint32_t id = notice_site_id(Level::warn);
  const SiteInfo* site = id != 0 ? site_info(id) : nullptr;
  if (site == nullptr) return;
  std::string entry;
  schema::append_entry(entry, site->entry());
  dictionary_.append(entry);  // and into every later file
  frames_.append_dictionary(out_, entry, 0);
  std::string args;
  std::size_t length = std::min<std::size_t>(text.size(), schema::kStringLengthMask);
  wire::put_le<std::uint32_t>(args, static_cast<std::uint32_t>(length));  // FORMAT.md §8: a string
  args.append(text, 0, length);
  append_writer_record(id, stamp, args);
}

}  // namespace terse::detail
