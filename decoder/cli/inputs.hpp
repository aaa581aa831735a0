// What `terse cat` reads: paths turned into sequences of rolled files, each
// read one file after another, all of them merged into one stream by time,
// optionally following files that are still being written.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <terse/decoder.hpp>

namespace terse::cli {

namespace fs = std::filesystem;

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

// Every input merged into one stream in time order, holding one record per
// sequence (memory does not grow with the files). While following, a
// sequence with nothing new is passed over until the next round.
class Merger {
 public:
  Merger(const decoder::Reporter& reporter, const decoder::Filter& filter, bool follow)
      : reporter_(reporter), filter_(filter), follow_(follow) {}

  // Files and directories as given on the command line; false when one of
  // them cannot be read at all.
  bool add_paths(const std::vector<std::string>& paths) {
    bool ok = true;
    for (const auto& path : paths) {
      std::error_code ec;
      if (path == "-") {
        slots_.emplace_back().source = Source::standard_input(reporter_, filter_);
        continue;
      }
      if (fs::is_directory(path, ec)) {
        if (follow_) dirs_.push_back(path);
        if (!scan_dir(path)) ok = false;
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

  // Following: picks up sequences that appeared in watched directories and
  // gives every waiting sequence another chance.
  void new_round() {
    for (const auto& dir : dirs_) scan_dir(dir);
    for (auto& slot : slots_) slot.waiting = false;
  }

  bool next(decoder::Record& record) {
    // One sequence (the common case) needs no holding back.
    if (slots_.size() == 1) {
      Slot& only = slots_.front();
      if (only.done || only.waiting) return false;
      if (only.source->next(record)) return true;
      (follow_ ? only.waiting : only.done) = true;
      return false;
    }
    Slot* best = nullptr;
    for (auto& slot : slots_) {
      if (!slot.has_head && !slot.done && !slot.waiting) {
        slot.has_head = slot.source->next(slot.head);
        if (!slot.has_head) (follow_ ? slot.waiting : slot.done) = true;
      }
      if (slot.has_head && (!best || slot.head.unix_ns < best->head.unix_ns)) best = &slot;
    }
    if (!best) return false;
    record = best->head;
    best->has_head = false;
    return true;
  }

  std::size_t sequences() const { return slots_.size(); }
  // Cursors need one sequence: the source it is, or null.
  Source* single_source() {
    return slots_.size() == 1 && !slots_.front().source->is_stdin() ? slots_.front().source.get() : nullptr;
  }

  std::uint64_t damaged() const {
    std::uint64_t total = 0;
    for (const auto& slot : slots_) total += slot.source->damaged();
    return total;
  }

 private:
  struct Slot {
    std::unique_ptr<Source> source;
    decoder::Record head;
    bool has_head = false;
    bool waiting = false;
    bool done = false;
  };

  Source& source_for(const fs::path& file) {
    std::string key = sequence_key(file);
    auto it = by_key_.find(key);
    if (it != by_key_.end()) return *slots_[it->second].source;
    by_key_[key] = slots_.size();
    slots_.emplace_back().source = std::make_unique<Source>(file.string(), reporter_, filter_, follow_);
    return *slots_.back().source;
  }

  bool scan_dir(const std::string& dir) {
    std::error_code ec;
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == ".tlog") found.push_back(entry.path());
    if (ec) {
      if (follow_ && ec == std::errc::no_such_file_or_directory) return true;  // may appear later
      if (reporter_)
        reporter_(decoder::Problem{dir, 0, "cannot list the directory: " + ec.message(), false});
      return false;
    }
    std::sort(found.begin(), found.end(), log_file_less);
    for (const auto& f : found) {
      std::string key = sequence_key(f);
      bool is_new = !by_key_.count(key);
      Source& source = source_for(f);
      if (is_new) {
        if (follow_) {
          if (auto name = parse_name(f.filename().string())) source.watch(dir, name->prefix);
        }
        source.add(f.string());
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
  std::vector<Slot> slots_;
  std::map<std::string, std::size_t> by_key_;
  std::vector<std::string> dirs_;
};

}  // namespace terse::cli
