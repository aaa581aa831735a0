// Every input of `terse cat` and `terse ship` merged into one stream in time
// order, following live files, and where each input stands (for cursors).
#pragma once

#include <chrono>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <terse/decoder.hpp>
#include <terse/result.hpp>
#include <terse/timing.hpp>

#include "log_files.hpp"
#include "position.hpp"
#include "source.hpp"

namespace terse::input {

// While following several inputs, how long one that shows nothing new holds
// back the records of the others: schema::kFollowGrace, derived from how
// long the writer may hold a record back (schema/terse/timing.hpp). terse.1
// and the README give this number.
inline constexpr std::int64_t kFollowGraceNs = std::chrono::nanoseconds(schema::kFollowGrace).count();

// Holds one record per sequence (memory does not grow with the files): one
// writer's files of one NAME in one directory, so that processes writing one
// NAME at the same time are merged by time like directories are.
//
// Following, the inputs are read in rounds (the command sleeps between them)
// and an input with nothing new is passed over until the next round. A
// record is taken only when no other input can still show an earlier one:
// each other input has a record at least as late waiting, or has given one,
// or had nothing new in a round that started kFollowGraceNs or more after
// the record's time (its writer would have put anything older into the file
// by then). A directory given with no log in it yet is such an input too, so
// a writer that starts late is waited for like one that is slow. A record
// stamped more than the grace period after this machine's clock comes from
// a clock that runs ahead, against which no order holds: it waits only for
// the others to have been quiet for the grace period, not for the clock.
class Merger {
 public:
  Merger(const decoder::Reporter& reporter, const decoder::Filter& filter, bool follow);

  // Files and directories as given on the command line; false when one of
  // them cannot be read at all.
  bool add_paths(const std::vector<std::string>& paths);
  // The keys that open sealed files, for every input added after.
  void set_keys(std::vector<seal::SecretKey> keys, std::vector<seal::PublicKeyBytes> signers) {
    keys_ = std::move(keys);
    signers_ = std::move(signers);
  }

  // Following: picks up sequences that appeared in the directories given and
  // gives every waiting sequence another chance.
  void new_round();

  // How long the command may sleep before the next round: a record held back
  // for the grace period is due when a round starts after it.
  std::chrono::milliseconds next_round_in() const;

  // Following: the directories whose changes may bring new records (the
  // directories given, and those of the files given), for a ChangeWaiter.
  std::vector<std::string> directories() const;

  bool next(decoder::Record& record);
  // The name (no directory) of the file the last record next() gave came from.
  const std::string& last_file() const { return last_file_; }

  bool reads_stdin() const;

  // Not following, and every input is one sequence: that sequence, which
  // needs no merging (so it may be decoded by a ParallelDecoder); else null.
  Source* only_sequence();

  // ---- cursors ----------------------------------------------------------------

  // Call before the first next(): remember where each input's last record was.
  void keep_positions() { keep_positions_ = true; }

  // Where every input stands after the last record next() gave, in one
  // order whatever order the inputs were found in, so that two runs at the
  // same place write the same cursor. Inputs that gave nothing yet have no
  // entry (a run resumed from the cursor reads them from their start),
  // except those the cursor this run started from had.
  void positions(std::vector<InputPosition>& out) const;

  // --after-cursor: each input continues after its own position. An entry
  // goes to the input of its log and writer in its directory, else to the
  // only directory with inputs of them (the logs were moved). An entry with
  // no writer (cursors before version 3) goes to every writer of its log
  // there: what that cursor read was every file up to its place. An entry whose log has no file here yet
  // (retention removed them all, or a followed directory is still empty) is
  // kept for when it appears and carried on into the cursors printed. An
  // empty string, or what is wrong; `notes` says what was lost.
  Result<> resume_after(const std::vector<InputPosition>& entries, std::vector<std::string>& notes);

  std::uint64_t damaged() const;
  // Every input's Source::totals added up.
  decoder::Summary totals() const;

 private:
  static constexpr std::int64_t kNever = INT64_MIN;

  struct Slot {
    std::unique_ptr<Source> source;
    std::string log;             // NAME (see log_of)
    std::uint32_t dir_hash = 0;  // of its directory's absolute path
    decoder::Record head;
    std::string head_file;  // the name of the file `head` came from
    bool has_head = false;
    bool waiting = false;
    bool done = false;
    std::int64_t latest_ns = kNever;       // the time of the last record taken from it
    std::int64_t checked_ns = kNever;      // the start of the last round it had nothing new in
    std::int64_t quiet_since_ns = kNever;  // the start of the first of those rounds in a row
    std::optional<Position> position;      // of the last record taken (or the cursor's, until one is)
  };

  // A directory given on the command line: until it holds a log, it holds
  // back the others' records as a quiet input does.
  struct WatchedDir {
    std::string path;
    std::string absolute;
    bool has_log = false;
    std::int64_t checked_ns = kNever;
    std::int64_t quiet_since_ns = kNever;
  };

  // A cursor's entry for a log with no file here (yet).
  struct Carried {
    std::uint32_t dir_hash = 0;
    std::string log;
    Position at;
    bool has_dir = false;
    std::optional<std::uint64_t> writer;
  };

  struct Entry {
    std::optional<std::uint32_t> dir_hash;
    const std::string* log;
    std::uint64_t writer;
    const Position* at;
  };

  bool next_of_one(decoder::Record& record);
  bool awaiting_first_log() const;
  void found_nothing(Slot& slot);
  void took(Slot& slot, const decoder::Record& record, const std::string& file);
  static bool past(std::int64_t checked_ns, std::int64_t quiet_since_ns, std::int64_t time_ns);
  bool may_take(const Slot& from) const;
  Result<std::vector<std::vector<std::size_t>>> match_entries(const std::vector<InputPosition>& entries,
                                                              const std::vector<std::string>& logs);
  bool fits(const Slot& slot, const InputPosition& entry, const std::string& log) const;
  Result<> resume_slot(Slot& slot, const Position& at, std::string& note);
  std::string not_here(const std::string& log) const;
  static std::string slot_key(const fs::path& file, const std::optional<std::string>& writer);
  Source& source_for(const fs::path& file, const std::optional<std::string>& writer);
  void take_up_carried(Slot& slot);
  bool scan_dir(WatchedDir& dir);

  const decoder::Reporter& reporter_;
  const decoder::Filter& filter_;
  std::vector<seal::SecretKey> keys_;
  std::vector<seal::PublicKeyBytes> signers_;
  bool follow_;
  bool keep_positions_ = false;
  std::vector<Slot> slots_;
  std::map<std::string, std::size_t> by_key_;
  std::vector<WatchedDir> dirs_;
  std::vector<Carried> carried_;
  WriterCache writers_;
  std::int64_t round_ns_ = 0;
  std::optional<std::int64_t> held_ns_;  // the time of the record held back, if one is
  mutable std::vector<Entry> order_;
  std::string last_file_;
};

}  // namespace terse::input
