// The writer's file: opening it with its start (every file decodes on its
// own), writing and syncing bytes, and noticing that the file is no longer
// the writer's (its descriptor closed under it, its path removed or
// renamed), in which case the writer moves to a new one and says so.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <terse/portable_libc.hpp>

#include "writer.hpp"

namespace terse::detail {
namespace {

// How often the writer looks whether its file's path still names the file
// (the directory removed by an operator or a cleanup job, the file renamed).
constexpr auto kPathCheckInterval = std::chrono::seconds(1);

}  // namespace

bool Writer::sync_due() const {
  if (unsynced_bytes_ == 0) return false;
  if (config_.fsync_bytes > 0 && unsynced_bytes_ >= config_.fsync_bytes) return true;
  return config_.fsync_interval.count() > 0 &&
         std::chrono::steady_clock::now() - unsynced_since_ >= config_.fsync_interval;
}

void Writer::sync_file() {
  if (fd_ < 0 || unsynced_bytes_ == 0 || !descriptor_is_ours()) return;
  if (!sync_data(fd_)) {
    counters_.write_errors.fetch_add(1, std::memory_order_relaxed);
    config_.on_error("fdatasync of " + path_ + " failed: " + std::strerror(errno));
  }
  counters_.syncs.fetch_add(1, std::memory_order_relaxed);
  unsynced_bytes_ = 0;
}

// A write that fails part-way is cut back, so the file never holds a torn
// frame in front of good ones.
bool Writer::append_to_file(std::string_view bytes) {
  std::uint64_t start = file_bytes_;
  if (write_all(bytes)) {
    frames_.keep_numbers();
    return true;
  }
  frames_.discard_numbers();
  if (file_bytes_ != start && ::ftruncate(fd_, static_cast<off_t>(start)) == 0) {
    counters_.bytes_out.fetch_sub(file_bytes_ - start, std::memory_order_relaxed);
    unsynced_bytes_ -= std::min(unsynced_bytes_, file_bytes_ - start);
    file_bytes_ = start;
  }
  return false;
}

bool Writer::write_all(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = write_some(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      last_errno_ = errno;
      counters_.write_errors.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
    file_bytes_ += static_cast<std::uint64_t>(n);
    counters_.bytes_out.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_relaxed);
    if (unsynced_bytes_ == 0) unsynced_since_ = std::chrono::steady_clock::now();
    unsynced_bytes_ += static_cast<std::uint64_t>(n);
  }
  return true;
}

bool Writer::open_file(bool throw_on_error) {
  FileSet::Opened opened = files_.create_next(realtime_ns());
  if (opened.fd < 0 && opened.error == ENOENT) {
    // The directory is gone (removed while the program ran): made again,
    // as start() makes it.
    std::error_code ignored;
    std::filesystem::create_directories(config_.directory, ignored);
    opened = files_.create_next(realtime_ns());
  }
  if (opened.fd < 0) {
    if (throw_on_error) throw Error("terse: " + opened.message);
    if (opened.error != 0) {
      last_errno_ = opened.error;  // reported by write_failed()
    } else {
      config_.on_error(opened.message);
    }
    return false;
  }
  if (fd_ >= 0) {
    end_file();
    sync_file();  // a rolled file is complete: make it durable before letting go
    ::close(fd_);
  }
  fd_ = opened.fd;
  file_identity_ = {};
  descriptor_identity(fd_, file_identity_);
  file_device_.store(file_identity_.device, std::memory_order_relaxed);
  file_inode_.store(file_identity_.inode, std::memory_order_relaxed);
  current_fd_.store(fd_, std::memory_order_release);
  path_checked_ = std::chrono::steady_clock::now();
  path_ = std::move(opened.path);
  file_sequence_ = opened.sequence;
  file_bytes_ = 0;
  file_records_ = held_records_;  // records held back go into this file
  if (!continues_lost_file_) interner_.new_file();
  counters_.files_opened.fetch_add(1, std::memory_order_relaxed);
  file_started_ = write_file_start();
  if (file_started_ && continues_lost_file_) report_replaced_file();
  std::size_t removed = files_.apply_retention(path_, config_.on_error);
  counters_.files_removed.fetch_add(removed, std::memory_order_relaxed);
  return file_started_;
}

// Preamble, info, calibration, the whole dictionary so far and the pushes of
// the contexts open: every file decodes on its own.
bool Writer::write_file_start() {
  out_.clear();
  frames_.append_file_start(out_, file_sequence_, calibration_written_);
  if (frames_.sealer().ready()) {
    int slot = crash_sealer_.load(std::memory_order_relaxed) == 0 ? 1 : 0;
    crash_sealers_[static_cast<std::size_t>(slot)] = frames_.sealer();
    crash_sealer_.store(slot, std::memory_order_release);
  }
  frames_.append_dictionary(out_, dictionary_, config_.compression_level);
  if (continues_lost_file_) {
    std::string texts;
    interner_.append_known_entries(texts);
    if (!texts.empty()) frames_.append_dictionary(out_, texts, config_.compression_level);
  }
  if (!open_contexts_.empty())
    frames_.append_records(out_, schema::FrameType::records, open_contexts_, config_.compression_level);
  return append_to_file(out_);
}

// A sealed file the writer closes gets its end frame (FORMAT.md §11.4), so
// that a reader can tell it from one cut short. One that is no longer the
// writer's is left alone.
void Writer::end_file() {
  if (!file_started_ || !frames_.sealer().ready() || !descriptor_is_ours()) return;
  std::string end;
  frames_.append_end(end);
  if (!append_to_file(end)) frames_.forget_ended_file();
}

// A process about to die of a signal leaves its sealed file closed, as
// stop() would have: the end frame goes in before the signal's flush counts
// as done, and what is logged after it goes into a new file.
void Writer::end_file_for_signal(const Batch& batch) {
  std::uint64_t asked = requests_.end_file.load(std::memory_order_acquire);
  if (asked == 0 || batch.flush_sequence < asked || fd_ < 0 || !frames_.sealer().ready()) return;
  requests_.end_file.store(0, std::memory_order_relaxed);
  if (!file_started_ || !descriptor_is_ours()) return;
  end_file();
  sync_file();
  ::close(fd_);
  fd_ = -1;
  current_fd_.store(-1, std::memory_order_release);
  file_started_ = false;
}

CrashSeal Writer::crash_seal() noexcept {
  int slot = crash_sealer_.load(std::memory_order_acquire);
  if (slot < 0) return {};
  return {&crash_sealers_[static_cast<std::size_t>(slot)], &crash_counter_};
}

int Writer::crash_fd() const noexcept {
  int fd = current_fd_.load(std::memory_order_acquire);
  FileIdentity now;
  if (fd < 0 || !descriptor_identity(fd, now)) return -1;
  FileIdentity opened{file_device_.load(std::memory_order_relaxed), file_inode_.load(std::memory_order_relaxed)};
  return now.same_file(opened) ? fd : -1;
}

bool Writer::descriptor_is_ours() const {
  FileIdentity now;
  return descriptor_identity(fd_, now) && now.same_file(file_identity_);
}

// Before each write: a daemon that closes every descriptor after start-up
// (closefrom(3)) and then opens a file of its own gets this file's number,
// and every frame after would go into the application's file. About once a
// second: whether the path still names the file, which an operator's
// rm -rf of the directory or a rename leaves the writer writing into a file
// nobody will read.
void Writer::check_file() {
  if (fd_ < 0) return;
  if (!descriptor_is_ours()) return give_up_file(true);
  auto now = std::chrono::steady_clock::now();
  if (now - path_checked_ < kPathCheckInterval) return;
  path_checked_ = now;
  FileIdentity named;
  if (path_identity(path_.c_str(), named) && named.same_file(file_identity_)) return;
  give_up_file(false);
}

// The next file is opened as for a roll, but continues this one's interned
// texts (records held back refer to them) and starts with a report.
// A descriptor that is no longer the writer's is never closed: its number
// may be the application's now.
void Writer::give_up_file(bool descriptor_lost) {
  FileIdentity now;
  bool removed = !descriptor_lost && descriptor_identity(fd_, now) && now.links == 0;
  lost_path_ = path_;
  lost_with_file_ = 0;
  if (descriptor_lost) {
    lost_reason_ = "its descriptor " + std::to_string(fd_) +
                   " was closed by the application (terse neither writes to nor closes that number now)";
  } else if (removed) {
    lost_reason_ = "it was removed";
    lost_with_file_ = file_records_ - std::min(file_records_, held_records_);
  } else {
    lost_reason_ = "its name now belongs to another file or none (renamed or moved; what it holds is still there)";
  }
  if (!descriptor_lost) {
    sync_file();
    ::close(fd_);
  }
  fd_ = -1;
  current_fd_.store(-1, std::memory_order_release);
  unsynced_bytes_ = 0;
  file_started_ = false;
  continues_lost_file_ = true;
}

// On the error callback, and into the new file: a "dropped" record for the
// records that went with a removed file (the decoder reports them as it
// reports any drop), and a record from terse that says what happened.
// Written here, not logged: the file may be lost while the last batch is
// written at stop, after which a record logged would never reach a file.
// Stamped with the old file's last record, ahead of the records that follow.
void Writer::report_replaced_file() {
  std::string message =
      "log file " + lost_path_ + " was given up, as " + lost_reason_ + "; writing goes on in " + path_;
  std::uint64_t stamp = file_last_ticks_ != 0 ? file_last_ticks_ : ticks();
  out_.clear();
  if (lost_with_file_ > 0) {
    message += "; the " + std::to_string(lost_with_file_) + " records written to it are gone with it";
    append_dropped_record(lost_with_file_, file_first_ticks_, file_last_ticks_);
  }
  append_notice(message, stamp);
  append_to_file(out_);
  continues_lost_file_ = false;
  lost_with_file_ = 0;
  config_.on_error(message);
}

}  // namespace terse::detail
