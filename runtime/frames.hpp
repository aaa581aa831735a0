// Frames as the writer appends them (FORMAT.md §2 to §5): a payload,
// compressed when that pays, behind its header; dictionaries split at entry
// boundaries; and the opening frames of every file.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <terse/delta.hpp>
#include <terse/schema.hpp>
#include <terse/seal.hpp>

#include "clock.hpp"
#include "pipeline.hpp"

typedef struct ZSTD_CCtx_s ZSTD_CCtx;

namespace terse::detail {

class FrameEncoder {
 public:
  FrameEncoder();  // throws Error when zstd cannot give it a context
  ~FrameEncoder();
  FrameEncoder(const FrameEncoder&) = delete;
  FrameEncoder& operator=(const FrameEncoder&) = delete;

  // `level` 0 stores the payload as it is; so does any level when
  // compressing would not make it smaller.
  void append_frame(std::string& out, schema::FrameType type, std::string_view payload, int level);
  // A records payload as the batches hold it (FORMAT.md §7: each row with its
  // tick delta) written as a columnar frame (§7.4) of the records or flight
  // kind: zstd finds the rows' repeats once the irregular ticks are out of
  // them. `rows` that do not parse are written as they are, in a frame of
  // `type`.
  void append_records(std::string& out, schema::FrameType type, std::string_view rows, int level);
  // Records already in columns (RecordColumns) as the same frame. The rows
  // lie in memory with `room` bytes writable before them, where the frame's
  // head goes when it fits (kRowsHeadRoom holds any batch's): the rows are
  // then compressed where they are, not copied.
  void append_columns(std::string& out, schema::FrameType type, std::uint64_t base, std::string_view ticks, char* rows,
                      std::size_t rows_size, std::size_t room, int level);
  // Dictionary entries, in as many frames as keep each far below the
  // reader's frame limit.
  void append_dictionary(std::string& out, std::string_view entries, int level);
  void append_calibration(std::string& out, const Calibration& calibration);
  // Preamble, info and calibration: what a file opens with before its
  // dictionary. `sequence` is the file's number for info key 5. With a
  // recipient, the file is sealed (FORMAT.md §11): a new file key, the seal
  // frame, and every frame after it sealed; throws Error when libsodium
  // cannot make the key.
  void append_file_start(std::string& out, std::uint32_t sequence, const Calibration& calibration);
  // The end frame of a sealed file (FORMAT.md §11.4), which says that the
  // writer closed it; nothing for a file that is not sealed.
  void append_end(std::string& out);
  // Files sealed to this key from the next file on; null: not sealed.
  // With a signer, each file's seal frame is signed.
  void seal_to(const seal::PublicKey* recipient, const seal::SecretKey* signer = nullptr) {
    recipient_ = recipient;
    signer_ = signer;
  }
  // The end frame appended last did not reach its file: the next file must
  // not say that file was closed.
  void forget_ended_file() { ended_file_.reset(); }
  // The current file's sealer, for the crash path; not ready() when the
  // file is not sealed.
  const seal::FileSealer& sealer() const { return sealer_; }

  // Frames are numbered within their file from its info frame on (FORMAT.md
  // §3.1); frames that did not reach the file give their numbers back.
  void keep_numbers() { kept_number_ = next_number_; }
  // Sizes and touches its buffers for payloads of `bytes`, so that the first
  // batches are not written slower than later ones.
  void prepare(std::size_t bytes);
  void discard_numbers() { next_number_ = kept_number_; }
  // Buffers grown past twice what payloads of `bytes` need shrink back to
  // that; false when none had.
  bool release_memory(std::size_t bytes);

  // The CPU time zstd took over frames big enough to time, and the bytes it
  // took in, since the last call: what the writer's level costs on the
  // records it has now.
  struct CompressionCost {
    std::int64_t cpu_ns = 0;
    std::uint64_t bytes = 0;
  };
  CompressionCost take_compression_cost() { return std::exchange(cost_, {}); }

 private:
  std::string_view numbered(schema::FrameType type, std::string_view payload);
  void append_stored(std::string& out, schema::FrameType type, std::string_view payload, int level);
  void use_level(int level);

  ZSTD_CCtx* cctx_;
  int cctx_level_ = 0;  // what cctx_ is set for; 0: nothing yet
  std::string scratch_;
  // FORMAT.md §4 key 9: tells this run's files from those of another process
  // writing the same NAME at the same time, or of an earlier run with this pid.
  std::uint64_t run_id_;
  std::string numbered_;
  std::string ticks_;           // the tick column being built
  std::string columnar_;        // the columnar payload being built, at some offset
  double ticks_share_ = 0.125;  // the room for ticks per byte of rows, after the last frame
  std::uint64_t next_number_ = 0;
  std::uint64_t kept_number_ = 0;
  CompressionCost cost_;
  const seal::PublicKey* recipient_ = nullptr;
  const seal::SecretKey* signer_ = nullptr;
  seal::FileSealer sealer_;  // the file's; not ready() when it is not sealed
  // FORMAT.md §11.3: the nonce of each sealed frame of the file. Unlike the
  // frame numbers it never goes back: a frame that did not reach the file
  // may still have reached the disk in part.
  std::uint64_t seal_counter_ = 0;
  // The id of the sealed file whose end frame was appended last, for the
  // next file's info (FORMAT.md §4 key 10).
  std::optional<std::array<unsigned char, seal::kFileIdBytes>> ended_file_;
};

// The records of consecutive batches (in columns) joined into one FORMAT.md
// §7.4 frame's columns, as if the collector had put them all into one batch: the writer interns a
// batch of repeated 4 KiB strings down to a few KiB, and one frame per such
// batch would pay zstd's cost of starting over hundreds of times per MiB.
// Each batch's tick deltas and argument deltas (§7.1) start again at its
// own frame's base; joined, the first tick of a batch and the first record
// of each site in it are coded against what came before. A batch is taken
// in two steps, so that one whose frames did not reach the file is given back.
// The rows are kept behind room for the frame's head, as a batch's are, so
// that FrameEncoder::append_columns compresses them where they are: joined
// frames of 4 KiB texts are 4 MiB, and copying them into columns once more
// cost the writer a copy of every byte it compresses.
class RecordsJoin {
 public:
  // A started frame's rows hold at least the room for its head.
  bool empty() const { return rows_.empty(); }
  // What the records take as a FORMAT.md §7 payload, as RecordColumns::size().
  std::size_t size() const { return empty() ? 0 : 8 + rows_size() + ticks_.size(); }
  std::uint64_t base() const { return base_; }
  std::string_view ticks() const { return ticks_; }
  char* rows() { return rows_.data() + room_; }
  std::size_t rows_size() const { return rows_.size() - room_; }
  // Writable bytes before rows().
  std::size_t room() const { return room_; }
  // Appends `records`; false (nothing taken) when a record cannot be
  // re-coded, which the collector's own bytes never are.
  bool add(const RecordColumns& records);
  // The last add() is kept, or given back.
  void keep();
  void give_back();
  void clear();
  // The columns' memory, once empty (clear()), goes back.
  void release_memory() {
    std::string().swap(rows_);
    std::string().swap(ticks_);
  }

 private:
  struct SiteChain {
    explicit SiteChain(const std::vector<std::uint8_t>& tags) : plan(tags.data(), tags.size()) {}
    wire::DeltaPlan plan;
    std::vector<std::uint64_t> last;     // the joined frame's last values; empty before its first record
    std::vector<std::uint64_t> pending;  // the same after the payload being added
    std::uint64_t added = 0;             // the add() that last met the site
  };
  SiteChain* chain(std::uint32_t site_id);

  std::uint64_t base_ = 0;  // the first record's ticks
  std::string rows_;        // room_ bytes, then each row's site, thread and arguments
  std::string ticks_;       // each row's tick delta
  std::size_t room_ = 0;
  // The ticks column of the last frame written: the next frame's head is
  // about as large, and rows that leave too little room are moved once.
  std::size_t last_ticks_size_ = 0;
  std::size_t kept_rows_ = 0;
  std::size_t kept_ticks_ = 0;
  std::uint64_t last_ticks_ = 0;
  std::uint64_t pending_ticks_ = 0;
  std::uint64_t adds_ = 0;
  std::unordered_map<std::uint32_t, SiteChain> chains_;
  std::vector<std::uint32_t> met_;  // sites the payload being added holds
  std::vector<std::uint64_t> before_;
};

}  // namespace terse::detail
