// The writer (the "terse-write" thread): takes the collector's batches in
// order, compresses them into frames, appends them to the current file,
// rolls to the next file, syncs on its policy, and rides out write errors
// (disk full, I/O errors) without tearing a frame or losing a record
// silently.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <terse/terse.hpp>

#include "emergency.hpp"
#include "file_set.hpp"
#include "frames.hpp"
#include "interning.hpp"
#include "pipeline.hpp"
#include "platform.hpp"
#include "view.hpp"

namespace terse::detail {

class Writer {
 public:
  // `config` and `view` outlive the writer; its on_error is set. Without a
  // directory no file is written, and each batch only goes to the view.
  Writer(const Config& config, const Calibration& calibration, BatchQueue& queue, Requests& requests,
         Counters& counters, View* view);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Before the threads start: throws Error when the first file cannot be
  // created or written.
  void open_first_file();

  // The thread's body: returns after writing the collector's last batch.
  void run();

  // The file being written, for the crash path: -1 before the first, and
  // when its descriptor no longer names it (closed by the application, its
  // number maybe reused for a file of the application's own).
  int crash_fd() const noexcept;
  // How the crash path seals what it writes into that file (FORMAT.md
  // §11.3): the file's sealer, or null when it is not sealed.
  CrashSeal crash_seal() noexcept;

 private:
  void absorb(const Batch& batch);
  // Writes into the room in front of the batch's rows (Batch::rows_room).
  bool write_batch(Batch& batch);
  std::size_t held_frame_target(const Batch& batch, const RecordColumns& records) const;
  // A batch's rows as they go into its frame: in the batch, or interned.
  struct RowsToWrite {
    char* rows;
    std::size_t room;  // writable bytes before them
  };
  void append_batch_records(const Batch& batch, const RecordColumns& records, RowsToWrite place, int level, bool& hold);
  bool write_held();
  // The held records (held_) as one frame into out_.
  void append_held(schema::FrameType type, int level);
  RowsToWrite intern_strings(Batch& batch, int level, RecordColumns& records);
  bool append_to_file(std::string_view bytes);
  bool write_all(std::string_view bytes);
  bool write_failed(Batch& batch);
  bool flush_waiting() const;
  static std::uint64_t log_records_in(const Batch& batch, std::uint64_t& drops);
  void count_lost(const Batch& batch);
  void write_recovered();
  bool sync_due() const;
  void adapt_level(std::size_t bytes_behind, const Batch& batch);
  int level() const;
  void sync_file();
  bool open_file(bool throw_on_error);
  bool write_file_start();
  void end_file();
  void end_file_for_signal(const Batch& batch);
  bool descriptor_is_ours() const;
  void check_file();
  void give_up_file(bool descriptor_lost);
  void report_replaced_file();
  void append_notice(const std::string& text, std::uint64_t stamp);
  void append_writer_record(std::uint32_t site_id, std::uint64_t stamp, std::string_view args);
  void append_dropped_record(std::uint64_t count, std::uint64_t first_ticks, std::uint64_t last_ticks);

  const Config& config_;
  BatchQueue& queue_;
  Requests& requests_;
  Counters& counters_;
  View* view_;
  const bool files_enabled_;
  FrameEncoder frames_;
  FileSet files_;
  Calibration calibration_written_;

  int fd_ = -1;
  std::atomic<int> current_fd_{-1};
  // Config::encrypt_to, read at start; empty when files are not sealed.
  std::optional<seal::PublicKey> recipient_;
  std::optional<seal::SecretKey> signer_;  // Config::sign_with, read at start
  // The sealers of the last two files, for the crash path: one is written
  // only while the other is the one published.
  std::array<seal::FileSealer, 2> crash_sealers_;
  std::atomic<int> crash_sealer_{-1};
  std::atomic<std::uint64_t> crash_counter_{0};
  // What fd_ named when it was opened: a descriptor that names another
  // file, or nothing, was closed behind the writer's back (a daemon's
  // closefrom()), and its number may be the application's now. The atomics
  // are for the crash path.
  FileIdentity file_identity_;
  std::atomic<std::uint64_t> file_device_{0};
  std::atomic<std::uint64_t> file_inode_{0};
  // When the path was last checked to still name fd_'s file (the directory
  // or the file removed, the file renamed).
  std::chrono::steady_clock::time_point path_checked_{};
  // The log records written to the current file, and their first and last
  // ticks: what a removed file took with it.
  std::uint64_t file_records_ = 0;
  std::uint64_t file_first_ticks_ = 0;
  std::uint64_t file_last_ticks_ = 0;
  // The file was given up in the middle (give_up_file()): the next one
  // continues its interned texts, which records held back refer to, and
  // says what became of it.
  bool continues_lost_file_ = false;
  std::string lost_path_;
  std::string lost_reason_;
  std::uint64_t lost_with_file_ = 0;  // their ticks: file_first_ticks_, file_last_ticks_ (no file had records since)
  std::string path_;
  std::uint32_t file_sequence_ = 0;
  std::uint64_t file_bytes_ = 0;
  bool file_started_ = false;       // the current file's opening frames are written
  bool failing_ = false;            // the last write failed
  bool replay_dictionary_ = false;  // batches were lost since the dictionary was last whole
  int last_errno_ = 0;
  std::uint64_t lost_records_ = 0;
  std::uint64_t lost_first_ticks_ = 0;
  std::uint64_t lost_last_ticks_ = 0;
  std::uint64_t unsynced_bytes_ = 0;
  std::chrono::steady_clock::time_point unsynced_since_{};
  std::string dictionary_;  // every entry written so far, replayed into each new file
  // The pushes of the contexts open (FORMAT.md §7.3) as a records payload,
  // repeated after the dictionary at the start of each new file.
  std::string open_contexts_;
  TextInterner interner_;  // per file
  std::string interned_records_;
  std::string interned_entries_;
  std::string out_;
  // Records of full batches that interning shrank, held back to go out in
  // one frame with the batches after them (see holds_back()), and since when.
  RecordsJoin held_;
  std::chrono::steady_clock::time_point held_since_{};
  std::uint64_t held_records_ = 0;
  // Config::fastest_compression_level: the level records are compressed at
  // now, and how many batches in a row found the writer caught up.
  int level_;
  int batches_caught_up_ = 0;
  // What each level cost per byte on these records, as measured when it was
  // last in use, and the batch count then: zstd's faster levels are faster
  // on most text, but on rows of delta-coded counters they take longer than
  // level 1 and write four to six times the bytes.
  struct LevelCost {
    double ns_per_byte = 0;
    std::uint64_t measured_at = 0;  // batches_adapted_ then; 0: never
  };
  static constexpr int kLowestLevel = -7;  // Config::compression_level's range
  static constexpr int kHighestLevel = 22;
  static constexpr std::uint64_t kCostsKeptBatches = 256;  // after which a level's cost no longer counts
  std::array<LevelCost, kHighestLevel - kLowestLevel + 1> level_costs_{};
  std::uint64_t batches_adapted_ = 0;
  LevelCost* level_cost(int level);  // null outside the range
  bool measured_recently(const LevelCost* cost) const;
  bool faster_than(int level, int than);
  std::size_t records_to_compress_ = 0;  // the last batch's records as interning left them
};

}  // namespace terse::detail
