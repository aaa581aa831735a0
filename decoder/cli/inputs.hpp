// What `terse cat` reads: paths turned into sequences of rolled files, each
// read one file after another, all of them merged into one stream by time,
// optionally following files that are still being written, and where each
// sequence stands (for cursors).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <terse/decoder.hpp>

namespace terse::cli {

namespace fs = std::filesystem;

// While following several inputs, how long one that shows nothing new holds
// back the records of the others. A writer's IO thread puts a record into
// its file at most 50 ms after it was logged (kMaxBatchDelay in
// runtime/logger.cpp); the rest is room for a busy machine. terse.1 and the
// README give this number.
inline constexpr std::int64_t kFollowGraceNs = 200'000'000;

// Where a record sits, as a cursor keeps it: the file by name only (logs
// moved or mounted elsewhere still resume), the offset of its frame, its
// index in the frame, and its ticks, which tell a replaced file from the
// one the position was taken in.
struct Position {
  std::string file;
  std::uint64_t frame_offset = 0;
  std::uint32_t frame_index = 0;
  std::uint64_t ticks = 0;
};

// One input's place in a merged cursor. Logs of one NAME in two directories
// are told apart by their directory, kept as a hash of its absolute path so
// that a cursor stays short whatever the paths; cursors of version 1 have
// none.
struct InputPosition {
  std::optional<std::uint32_t> dir_hash;
  Position at;
};

inline std::uint32_t fnv1a32(std::string_view bytes) {
  std::uint32_t hash = 2166136261u;
  for (unsigned char c : bytes) hash = (hash ^ c) * 16777619u;
  return hash;
}

// The same directory however it was written: "logs", "./logs/", "/srv/logs".
inline std::string absolute_dir(const fs::path& dir) {
  std::error_code ec;
  fs::path full = fs::absolute(dir.empty() ? fs::path(".") : dir, ec).lexically_normal();
  if (!full.has_filename() && full.has_parent_path() && full != full.root_path()) full = full.parent_path();
  return full.string();
}

inline std::int64_t wall_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct LogFileName {
  std::string prefix;
  std::string date;
  unsigned long sequence = 0;
};

// NAME-YYYYMMDD-NNN.tlog, as the runtime names its files.
inline std::optional<LogFileName> parse_name(const std::string& file) {
  static const std::regex pattern(R"((.*)-(\d{8})-(\d+)\.tlog)");
  std::smatch m;
  if (!std::regex_match(file, m, pattern)) return std::nullopt;
  return LogFileName{m[1], m[2], std::stoul(m[3].str().substr(0, 9))};
}

// Oldest first: by date, then sequence number compared as a number.
inline bool log_file_less(const fs::path& a, const fs::path& b) {
  auto na = parse_name(a.filename().string());
  auto nb = parse_name(b.filename().string());
  if (na && nb) return std::tie(na->prefix, na->date, na->sequence) < std::tie(nb->prefix, nb->date, nb->sequence);
  return a.filename() < b.filename();
}

// The key that makes files one sequence: their directory and NAME prefix.
// A file whose name the runtime did not choose is a sequence of its own.
inline std::string sequence_key(const fs::path& file) {
  std::string dir = file.parent_path().lexically_normal().string();
  if (dir.empty()) dir = ".";
  auto name = parse_name(file.filename().string());
  return dir + '\0' + (name ? name->prefix : '\0' + file.filename().string());
}

// Paths as a list of files, each directory replaced by its .tlog files
// oldest first (for commands that read each file on its own).
inline std::vector<std::string> expand_paths(const std::vector<std::string>& paths, bool& ok) {
  std::vector<std::string> files;
  for (const auto& path : paths) {
    std::error_code ec;
    if (path == "-" || !fs::is_directory(path, ec)) {
      files.push_back(path);
      continue;
    }
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(path, ec))
      if (entry.path().extension() == ".tlog") found.push_back(entry.path());
    if (ec) {
      std::fprintf(stderr, "terse: %s: %s\n", path.c_str(), ec.message().c_str());
      ok = false;
    }
    std::sort(found.begin(), found.end(), log_file_less);
    for (const auto& f : found) files.push_back(f.string());
  }
  return files;
}

// One sequence of files (or standard input) read in order. When following,
// the last file is read live: its end means "nothing more yet" until a
// newer file of the same sequence appears, and then its rest is read as a
// finished file before moving on (tail -F across rolls).
class Source {
 public:
  Source(std::string label, const decoder::Reporter& reporter, const decoder::Filter& filter, bool follow)
      : label_(std::move(label)), reporter_(reporter), filter_(filter), follow_(follow) {}
  ~Source() { close_current(); }
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  static std::unique_ptr<Source> standard_input(const decoder::Reporter& reporter, const decoder::Filter& filter) {
    auto source = std::make_unique<Source>("<stdin>", reporter, filter, false);
    source->stdin_ = true;
    source->pending_.push_back("-");
    return source;
  }

  // Following: look for newer files of this sequence in `dir`.
  void watch(std::string dir, std::string prefix) {
    dir_ = std::move(dir);
    prefix_ = std::move(prefix);
  }
  void add(const std::string& file) {
    if (!seen_.insert(file).second) return;
    pending_.push_back(file);
    auto name = parse_name(fs::path(file).filename().string());
    if (name && (!floor_ || std::make_tuple(name->date, name->sequence) < *floor_))
      floor_ = std::make_tuple(name->date, name->sequence);
  }
  void sort_pending() { std::sort(pending_.begin(), pending_.end(), [](auto& a, auto& b) { return log_file_less(a, b); }); }

  // The next record, or false: at the end (not following) or for now.
  bool next(decoder::Record& record) {
    for (;;) {
      if (!decoder_ && !open_next()) return false;
      if (decoder_->next(record)) return true;
      if (follow_ && live_) {
        if (pending_.empty()) rescan();
        if (pending_.empty()) return false;  // wait for the writer
        // A newer file exists, so the writer has finished this one.
        live_ = false;
        decoder_->set_live(false);
        continue;
      }
      close_current();
    }
  }

  std::uint64_t damaged() const { return damaged_; }
  const std::string& label() const { return label_; }
  bool is_stdin() const { return stdin_; }
  // The name (no directory) of the file the last record came from.
  const std::string& current_name() const { return current_name_; }

  // --after-cursor: start after the record at (frame_offset, frame_index)
  // of the file called `file` in this sequence's directory. When that file
  // is gone (retention removed it), start at the oldest later file and say
  // so in `note`. An empty string, or why the cursor cannot apply.
  std::string resume_after(const std::string& file, std::uint64_t frame_offset, std::uint32_t frame_index,
                           std::uint64_t ticks, std::string& note) {
    auto wanted = parse_name(file);
    if (!wanted) {
      // A file the runtime did not name is a sequence of its own.
      for (const auto& path : pending_)
        if (fs::path(path).filename() == file) {
          resume_.emplace(Resume{file, frame_offset, frame_index, ticks});
          return {};
        }
      return "the cursor is for " + file + ", which is not among the files given";
    }
    std::string dir = dir_;
    std::string prefix = prefix_;
    if (dir.empty() || prefix.empty()) {
      std::string any = !pending_.empty() ? pending_.front() : seen_.empty() ? std::string() : *seen_.begin();
      auto name = parse_name(fs::path(any).filename().string());
      if (!name) return "the files given are not named as terse names them (NAME-YYYYMMDD-NNN.tlog)";
      dir = fs::path(any).parent_path().string();
      if (dir.empty()) dir = ".";
      prefix = name->prefix;
    }
    if (!wanted || wanted->prefix != prefix)
      return "the cursor is for " + file + ", which is not of the log '" + prefix + "' in " + dir;
    auto key = std::make_tuple(wanted->date, wanted->sequence);
    std::error_code ec;
    std::vector<fs::path> later;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      auto name = parse_name(entry.path().filename().string());
      if (name && name->prefix == prefix && std::make_tuple(name->date, name->sequence) >= key)
        later.push_back(entry.path());
    }
    std::sort(later.begin(), later.end(), log_file_less);
    pending_.clear();
    for (const auto& f : later) {
      seen_.insert(f.string());
      pending_.push_back(f.string());
    }
    floor_ = key;
    if (!later.empty() && later.front().filename() == file) {
      resume_.emplace(Resume{file, frame_offset, frame_index, ticks});
    } else {
      note = file + " is gone (removed by retention?): " +
             (later.empty() ? std::string(follow_ ? "waiting for the files after it"
                                                  : "no file after it to resume at")
                            : "resuming at the oldest later file, " + later.front().filename().string()) +
             "; records between the cursor and that file are lost";
    }
    return {};
  }

 private:
  bool open_next() {
    if (pending_.empty() && follow_) rescan();
    if (pending_.empty()) return false;
    std::string path = pending_.front();
    pending_.erase(pending_.begin());
    if (stdin_) {
      fd_ = STDIN_FILENO;
    } else {
      fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd_ < 0) {
        if (follow_ && errno == ENOENT) {
          // tail -F: a file not there yet may appear later; one that went
          // away while newer ones exist was removed by retention.
          if (pending_.empty()) rescan();
          if (pending_.empty()) {
            pending_.push_back(path);
            return false;
          }
          return open_next();
        }
        ++damaged_;
        if (reporter_)
          reporter_(decoder::Problem{path, 0, std::string("cannot open: ") + std::strerror(errno) +
                                                  (errno == ENOENT ? " (check the path; a directory works too)" : ""),
                                     false});
        return open_next();
      }
    }
    decoder_ = std::make_unique<decoder::StreamDecoder>(stdin_ ? "<stdin>" : path, reporter_);
    decoder_->set_filter(filter_);
    live_ = follow_ && !stdin_;
    decoder_->set_live(live_);
    decoder_->start_fd(fd_);
    current_name_ = fs::path(path).filename().string();
    if (resume_ && resume_->file == current_name_) {
      decoder_->resume_after(resume_->frame_offset, resume_->frame_index, resume_->ticks);
      resume_.reset();
    }
    if (auto name = parse_name(fs::path(path).filename().string())) last_ = std::make_tuple(name->date, name->sequence);
    return true;
  }

  void close_current() {
    if (decoder_) damaged_ += decoder_->summary().damaged;
    decoder_.reset();
    if (fd_ >= 0 && !stdin_) ::close(fd_);
    fd_ = -1;
  }

  void rescan() {
    if (dir_.empty()) return;
    std::error_code ec;
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(dir_, ec)) {
      auto name = parse_name(entry.path().filename().string());
      if (!name || name->prefix != prefix_) continue;
      auto key = std::make_tuple(name->date, name->sequence);
      // Only files after the ones asked for: older ones were not.
      if ((last_ && key <= *last_) || (floor_ && key < *floor_)) continue;
      if (seen_.count(entry.path().string())) continue;
      found.push_back(entry.path());
    }
    std::sort(found.begin(), found.end(), log_file_less);
    for (const auto& f : found) add(f.string());
  }

  struct Resume {
    std::string file;
    std::uint64_t frame_offset;
    std::uint32_t frame_index;
    std::uint64_t ticks;
  };

  std::string label_;
  std::string current_name_;
  std::optional<Resume> resume_;
  const decoder::Reporter& reporter_;
  const decoder::Filter& filter_;
  bool follow_ = false;
  bool stdin_ = false;
  bool live_ = false;
  std::string dir_, prefix_;
  std::vector<std::string> pending_;
  std::set<std::string> seen_;
  std::optional<std::tuple<std::string, unsigned long>> last_;   // the newest file opened
  std::optional<std::tuple<std::string, unsigned long>> floor_;  // the oldest file asked for
  int fd_ = -1;
  std::unique_ptr<decoder::StreamDecoder> decoder_;
  std::uint64_t damaged_ = 0;
};

// The log a file belongs to, as cursors name it: its NAME, or the whole file
// name for a file the runtime did not name (a sequence of its own).
inline std::string log_of(const std::string& file_name) {
  auto name = parse_name(file_name);
  return name ? name->prefix : file_name;
}

// Every input merged into one stream in time order, holding one record per
// sequence (memory does not grow with the files).
//
// Following, the inputs are read in rounds (main sleeps between them) and
// an input with nothing new is passed over until the next round. A record
// is taken only when no other input can still show an earlier one: each
// other input has a record at least as late waiting, or has given one, or
// had nothing new in a round that started kFollowGraceNs or more after the
// record's time (its writer would have put anything older into the file by
// then). A directory given with no log in it yet is such an input too, so a
// writer that starts late is waited for like one that is slow. A record
// stamped more than the grace period after this machine's clock comes from
// a clock that runs ahead, against which no order holds: it waits only for
// the others to have been quiet for the grace period, not for the clock.
class Merger {
 public:
  Merger(const decoder::Reporter& reporter, const decoder::Filter& filter, bool follow)
      : reporter_(reporter), filter_(filter), follow_(follow) {}

  // Files and directories as given on the command line; false when one of
  // them cannot be read at all.
  bool add_paths(const std::vector<std::string>& paths) {
    round_ns_ = wall_clock_ns();
    bool ok = true;
    for (const auto& path : paths) {
      std::error_code ec;
      if (path == "-") {
        slots_.emplace_back().source = Source::standard_input(reporter_, filter_);
        continue;
      }
      if (fs::is_directory(path, ec)) {
        dirs_.push_back(WatchedDir{path, absolute_dir(path)});
        if (!scan_dir(dirs_.back())) ok = false;
        continue;
      }
      fs::path file(path);
      Source& source = source_for(file);
      source.add(path);
      if (follow_) {
        std::string dir = file.parent_path().string();
        if (auto name = parse_name(file.filename().string())) source.watch(dir.empty() ? "." : dir, name->prefix);
      }
    }
    for (auto& slot : slots_) slot.source->sort_pending();
    return ok;
  }

  // Following: picks up sequences that appeared in the directories given and
  // gives every waiting sequence another chance.
  void new_round() {
    round_ns_ = wall_clock_ns();  // before looking: what is found was there by then
    for (auto& dir : dirs_) scan_dir(dir);
    for (auto& slot : slots_) slot.waiting = false;
  }

  // How long main may sleep before the next round: a record held back for
  // the grace period is due when a round starts after it.
  std::chrono::milliseconds next_round_in() const {
    constexpr std::int64_t kPollNs = 100'000'000, kShortestNs = 5'000'000;
    std::int64_t wait = kPollNs;
    if (held_ns_) wait = std::clamp(*held_ns_ + kFollowGraceNs + 1'000'000 - wall_clock_ns(), kShortestNs, kPollNs);
    return std::chrono::milliseconds(wait / 1'000'000);
  }

  bool next(decoder::Record& record) {
    // One sequence (the common case) needs no holding back.
    if (slots_.size() == 1 && !awaiting_first_log()) {
      Slot& only = slots_.front();
      if (only.done || only.waiting) return false;
      if (only.source->next(record)) {
        took(only, record, only.source->current_name());
        return true;
      }
      found_nothing(only);
      return false;
    }
    Slot* best = nullptr;
    for (auto& slot : slots_) {
      if (!slot.has_head && !slot.done && !slot.waiting) {
        slot.has_head = slot.source->next(slot.head);
        if (slot.has_head) {
          if (keep_positions_) slot.head_file = slot.source->current_name();
        } else {
          found_nothing(slot);
        }
      }
      if (slot.has_head && (!best || slot.head.unix_ns < best->head.unix_ns)) best = &slot;
    }
    held_ns_.reset();
    if (!best) return false;
    if (follow_ && !may_take(*best)) {
      held_ns_ = best->head.unix_ns;
      return false;
    }
    record = best->head;
    best->has_head = false;
    took(*best, record, best->head_file);
    return true;
  }

  bool reads_stdin() const {
    return std::any_of(slots_.begin(), slots_.end(), [](const Slot& slot) { return slot.source->is_stdin(); });
  }

  // ---- cursors ----------------------------------------------------------------

  // Call before the first next(): remember where each input's last record was.
  void keep_positions() { keep_positions_ = true; }

  // Where every input stands after the last record next() gave, in one
  // order whatever order the inputs were found in, so that two runs at the
  // same place write the same cursor. Inputs that gave nothing yet have no
  // entry (a run resumed from the cursor reads them from their start),
  // except those the cursor this run started from had.
  void positions(std::vector<InputPosition>& out) const {
    order_.clear();
    for (const auto& slot : slots_)
      if (slot.position) order_.push_back(Entry{slot.dir_hash, &slot.log, &*slot.position});
    for (const auto& carried : carried_)
      order_.push_back(Entry{carried.has_dir ? std::optional(carried.dir_hash) : std::nullopt, &carried.log, &carried.at});
    std::sort(order_.begin(), order_.end(), [](const Entry& a, const Entry& b) {
      return std::tie(a.dir_hash, *a.log) < std::tie(b.dir_hash, *b.log);
    });
    out.resize(order_.size());
    for (std::size_t i = 0; i < order_.size(); ++i) {
      out[i].dir_hash = order_[i].dir_hash;
      out[i].at = *order_[i].at;
    }
  }

  // --after-cursor: each input continues after its own position. An entry
  // goes to the input of its log in its directory, else to the only input of
  // its log (the logs were moved). An entry whose log has no file here yet
  // (retention removed them all, or a followed directory is still empty) is
  // kept for when it appears and carried on into the cursors printed. An
  // empty string, or what is wrong; `notes` says what was lost.
  std::string resume_after(const std::vector<InputPosition>& entries, std::vector<std::string>& notes) {
    // Entries taken in their own directory first, so that a moved log of a
    // NAME another input shares still finds the one input left for it.
    std::vector<std::optional<std::size_t>> slot_of(entries.size());
    std::vector<bool> claimed(slots_.size(), false);
    std::vector<std::string> logs(entries.size());
    for (std::size_t e = 0; e < entries.size(); ++e) {
      logs[e] = log_of(entries[e].at.file);
      for (std::size_t i = 0; i < slots_.size() && entries[e].dir_hash && !slot_of[e]; ++i) {
        if (claimed[i] || slots_[i].source->is_stdin() || slots_[i].log != logs[e]) continue;
        if (*entries[e].dir_hash != slots_[i].dir_hash) continue;
        slot_of[e] = i;
        claimed[i] = true;
      }
    }
    for (std::size_t e = 0; e < entries.size(); ++e) {
      if (slot_of[e]) continue;
      std::vector<std::size_t> same_log;
      for (std::size_t i = 0; i < slots_.size(); ++i)
        if (!claimed[i] && !slots_[i].source->is_stdin() && slots_[i].log == logs[e]) same_log.push_back(i);
      if (same_log.size() > 1)
        return "the cursor's place in " + entries[e].at.file + " fits " + std::to_string(same_log.size()) +
               " inputs of the log '" + logs[e] + "', none of them in the directory the cursor was taken in; " +
               "give the directories as they were";
      if (same_log.size() == 1) {
        slot_of[e] = same_log.front();
        claimed[same_log.front()] = true;
      }
    }
    for (std::size_t e = 0; e < entries.size(); ++e) {
      const InputPosition& entry = entries[e];
      if (slot_of[e]) {
        std::string note;
        std::string error = resume_slot(slots_[*slot_of[e]], entry.at, note);
        if (!error.empty()) return error;
        if (!note.empty()) notes.push_back(note);
        continue;
      }
      bool from_a_dir_given = entry.dir_hash && std::any_of(dirs_.begin(), dirs_.end(), [&](const WatchedDir& dir) {
                                return fnv1a32(dir.absolute) == *entry.dir_hash;
                              });
      if (!from_a_dir_given && !slots_.empty()) return "the cursor is for " + entry.at.file + ", " + not_here(logs[e]);
      notes.push_back(entry.at.file + " is gone, and so are the files after it: " +
                      (follow_ ? "waiting for new ones" : "nothing to resume at"));
      carried_.push_back(Carried{entry.dir_hash.value_or(0), logs[e], entry.at, entry.dir_hash.has_value()});
    }
    return {};
  }

  std::uint64_t damaged() const {
    std::uint64_t total = 0;
    for (const auto& slot : slots_) total += slot.source->damaged();
    return total;
  }

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
  };

  struct Entry {
    std::optional<std::uint32_t> dir_hash;
    const std::string* log;
    const Position* at;
  };

  bool awaiting_first_log() const {
    return follow_ && std::any_of(dirs_.begin(), dirs_.end(), [](const WatchedDir& dir) { return !dir.has_log; });
  }

  void found_nothing(Slot& slot) {
    if (!follow_ || slot.source->is_stdin()) {
      slot.done = true;
      return;
    }
    slot.waiting = true;
    slot.checked_ns = round_ns_;
    if (slot.quiet_since_ns == kNever) slot.quiet_since_ns = round_ns_;
  }

  void took(Slot& slot, const decoder::Record& record, const std::string& file) {
    slot.latest_ns = std::max(slot.latest_ns, record.unix_ns);
    slot.quiet_since_ns = kNever;
    if (keep_positions_) {
      if (!slot.position) slot.position.emplace();
      slot.position->file = file;
      slot.position->frame_offset = record.frame_offset;
      slot.position->frame_index = record.frame_index;
      slot.position->ticks = record.ticks;
    }
  }

  // Whether an input that had nothing new at `checked_ns` (quiet since
  // `quiet_since_ns`) can still show a record older than `time_ns`.
  static bool past(std::int64_t checked_ns, std::int64_t quiet_since_ns, std::int64_t time_ns) {
    if (checked_ns == kNever) return false;
    if (checked_ns - kFollowGraceNs >= time_ns) return true;
    return time_ns - checked_ns > kFollowGraceNs && checked_ns - quiet_since_ns >= kFollowGraceNs;
  }

  bool may_take(const Slot& from) const {
    std::int64_t time_ns = from.head.unix_ns;
    for (const auto& slot : slots_) {
      if (&slot == &from || slot.done || slot.has_head || slot.latest_ns >= time_ns) continue;
      if (!past(slot.checked_ns, slot.quiet_since_ns, time_ns)) return false;
    }
    for (const auto& dir : dirs_)
      if (!dir.has_log && !past(dir.checked_ns, dir.quiet_since_ns, time_ns)) return false;
    return true;
  }

  std::string resume_slot(Slot& slot, const Position& at, std::string& note) {
    std::string error = slot.source->resume_after(at.file, at.frame_offset, at.frame_index, at.ticks, note);
    if (error.empty()) slot.position = at;
    return error;
  }

  // Why a cursor's log is not among the inputs, naming those that are.
  std::string not_here(const std::string& log) const {
    std::string logs;
    for (const auto& slot : slots_) {
      if (slot.source->is_stdin()) continue;
      logs += logs.empty() ? "'" : ", '";
      std::string dir = fs::path(slot.source->label()).parent_path().string();
      logs += slot.log + "' in " + (dir.empty() ? "." : dir);
    }
    return "which is not of the log '" + log + "' nor of any input given (here: " + logs + ")";
  }

  Source& source_for(const fs::path& file) {
    std::string key = sequence_key(file);
    auto it = by_key_.find(key);
    if (it != by_key_.end()) return *slots_[it->second].source;
    by_key_[key] = slots_.size();
    Slot& slot = slots_.emplace_back();
    slot.source = std::make_unique<Source>(file.string(), reporter_, filter_, follow_);
    slot.log = log_of(file.filename().string());
    slot.dir_hash = fnv1a32(absolute_dir(file.parent_path()));
    return *slot.source;
  }

  // A log that appeared while following takes up the cursor's entry kept
  // for it; what the entry's file held was reported as lost already.
  void take_up_carried(Slot& slot) {
    for (auto it = carried_.begin(); it != carried_.end(); ++it) {
      if (it->log != slot.log || (it->has_dir && it->dir_hash != slot.dir_hash)) continue;
      std::string note;
      if (resume_slot(slot, it->at, note).empty()) carried_.erase(it);
      return;
    }
  }

  bool scan_dir(WatchedDir& dir) {
    std::error_code ec;
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(dir.path, ec))
      if (entry.path().extension() == ".tlog") found.push_back(entry.path());
    if (ec && !(follow_ && ec == std::errc::no_such_file_or_directory)) {  // following: it may appear later
      if (reporter_)
        reporter_(decoder::Problem{dir.path, 0, "cannot list the directory: " + ec.message(), false});
      return false;
    }
    if (found.empty() && !dir.has_log) {
      dir.checked_ns = round_ns_;
      if (dir.quiet_since_ns == kNever) dir.quiet_since_ns = round_ns_;
    }
    if (!found.empty()) dir.has_log = true;
    std::sort(found.begin(), found.end(), log_file_less);
    for (const auto& f : found) {
      std::string key = sequence_key(f);
      bool is_new = !by_key_.count(key);
      Source& source = source_for(f);
      if (is_new) {
        if (follow_) {
          if (auto name = parse_name(f.filename().string())) source.watch(dir.path, name->prefix);
        }
        source.add(f.string());
        if (!carried_.empty()) take_up_carried(slots_[by_key_[key]]);
      } else if (!follow_) {
        source.add(f.string());
      }
      // Following, a known sequence finds its own newer files.
    }
    return true;
  }

  const decoder::Reporter& reporter_;
  const decoder::Filter& filter_;
  bool follow_;
  bool keep_positions_ = false;
  std::vector<Slot> slots_;
  std::map<std::string, std::size_t> by_key_;
  std::vector<WatchedDir> dirs_;
  std::vector<Carried> carried_;
  std::int64_t round_ns_ = 0;
  std::optional<std::int64_t> held_ns_;  // the time of the record held back, if one is
  mutable std::vector<Entry> order_;
};

}  // namespace terse::cli
