#include "source.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <terse/portable_libc.hpp>

#include "log_files.hpp"

namespace terse::input {

Source::Source(std::string label, const decoder::Reporter& reporter, const decoder::Filter& filter, bool follow)
    : label_(std::move(label)), reporter_(reporter), filter_(filter), follow_(follow) {}

Source::~Source() { close_current(); }

std::unique_ptr<Source> Source::standard_input(const decoder::Reporter& reporter, const decoder::Filter& filter) {
  auto source = std::make_unique<Source>("<stdin>", reporter, filter, false);
  source->stdin_ = true;
  source->pending_.push_back("-");
  return source;
}

void Source::watch(std::string dir, std::string prefix) {
  dir_ = std::move(dir);
  prefix_ = std::move(prefix);
}

void Source::identify(WriterCache& cache, std::optional<std::string> writer) {
  writers_ = &cache;
  writer_ = std::move(writer);
  writer_hash_ = writer_hash(writer_.value_or(""));
}

// Whether `path` is of this sequence's writer; a file too new to tell is
// not yet, and is looked at again in the next round.
bool Source::is_mine(const std::string& path) {
  if (!writers_) return true;
  auto writer = writers_->of(path);
  if (!writer) return false;
  if (!writer_) identify(*writers_, writer);
  return *writer == *writer_;
}

void Source::add(const std::string& file) {
  if (!seen_.insert(file).second) return;
  pending_.push_back(file);
  auto name = parse_name(fs::path(file).filename().string());
  if (name && (!floor_ || std::make_tuple(name->date, name->sequence) < *floor_))
    floor_ = std::make_tuple(name->date, name->sequence);
}

void Source::sort_pending() {
  std::sort(pending_.begin(), pending_.end(), [](auto& a, auto& b) { return log_file_less(a, b); });
}

bool Source::next(decoder::Record& record) {
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

Result<> Source::resume_after(const std::string& file, std::uint64_t frame_offset, std::uint32_t frame_index,
                              std::uint64_t ticks, std::string& note) {
  Resume at{file, frame_offset, frame_index, ticks};
  if (parse_name(file)) return resume_in_named_file(file, at, note);
  // A file the runtime did not name is a sequence of its own.
  for (const auto& path : pending_)
    if (fs::path(path).filename() == file) {
      resume_.emplace(std::move(at));
      return {};
    }
  return Failure{"the cursor is for " + file + ", which is not among the files given"};
}

Result<> Source::resume_in_named_file(const std::string& file, const Resume& at, std::string& note) {
  auto wanted = parse_name(file);
  std::string dir = dir_;
  std::string prefix = prefix_;
  if (dir.empty() || prefix.empty()) {
    std::string any = !pending_.empty() ? pending_.front() : seen_.empty() ? std::string() : *seen_.begin();
    auto name = parse_name(fs::path(any).filename().string());
    if (!name) return Failure{"the files given are not named as terse names them (NAME-YYYYMMDD-NNN.tlog)"};
    dir = fs::path(any).parent_path().string();
    if (dir.empty()) dir = ".";
    prefix = name->prefix;
  }
  if (!wanted || wanted->prefix != prefix)
    return Failure{"the cursor is for " + file + ", which is not of the log '" + prefix + "' in " + dir};
  auto key = std::make_tuple(wanted->date, wanted->sequence);
  std::error_code ec;
  std::vector<fs::path> later;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    auto name = parse_name(entry.path().filename().string());
    if (name && name->prefix == prefix && std::make_tuple(name->date, name->sequence) >= key)
      later.push_back(entry.path());
  }
  std::sort(later.begin(), later.end(), log_file_less);
  bool another_writers = false;
  pending_.clear();
  for (const auto& f : later) {
    if (!is_mine(f.string())) {
      another_writers = another_writers || f.filename() == file;
      continue;
    }
    seen_.insert(f.string());
    pending_.push_back(f.string());
  }
  floor_ = key;
  if (!pending_.empty() && fs::path(pending_.front()).filename() == file) {
    resume_.emplace(at);
  } else if (another_writers) {
    // A cursor from before writers were told apart read every writer's
    // files in sequence order: this one's files before `file` were read.
  } else {
    note = file + " is gone (removed by retention?): " +
           (pending_.empty() ? std::string(follow_ ? "waiting for the files after it" : "no file after it to resume at")
                             : "resuming at the oldest later file, " + fs::path(pending_.front()).filename().string()) +
           "; records between the cursor and that file are lost";
  }
  return {};
}

bool Source::open_next() {
  if (pending_.empty() && follow_) rescan();
  if (pending_.empty()) return false;
  std::string path = pending_.front();
  pending_.erase(pending_.begin());
  if (stdin_) {
    fd_ = STDIN_FILENO;
  } else {
    fd_ = open_path(path.c_str(), O_RDONLY);
    if (fd_ < 0) {
      if (!follow_ || errno != ENOENT) {
        report_open_failure(path);
        return open_next();
      }
      // tail -F: a file not there yet may appear later; one that went
      // away while newer ones exist was removed by retention.
      if (pending_.empty()) rescan();
      if (pending_.empty()) {
        pending_.push_back(path);
        return false;
      }
      return open_next();
    }
  }
  return open_file(path);
}

void Source::report_open_failure(const std::string& path) {
  ++open_failures_;
  if (reporter_)
    reporter_(decoder::Problem{path, 0,
                               std::string("cannot open: ") + std::strerror(errno) +
                                   (errno == ENOENT ? " (check the path; a directory works too)" : ""),
                               false});
}

void Source::drain(const FileDecoder& decode) {
  while (!pending_.empty()) {
    std::string path = pending_.front();
    pending_.erase(pending_.begin());
    int fd = stdin_ ? STDIN_FILENO : open_path(path.c_str(), O_RDONLY);
    if (fd < 0) {
      report_open_failure(path);
      continue;
    }
    current_name_ = fs::path(path).filename().string();
    decoder::Summary summary;
    bool go_on = decode(fd, stdin_ ? "<stdin>" : path, summary);
    count(summary);
    if (!stdin_) ::close(fd);
    if (!go_on) return;
  }
}

// Starts decoding the file just opened as fd_.
bool Source::open_file(const std::string& path) {
  decoder_ = std::make_unique<decoder::StreamDecoder>(stdin_ ? "<stdin>" : path, reporter_);
  decoder_->set_filter(filter_);
  if (keys_) decoder_->set_keys(*keys_);
  if (signers_) decoder_->set_signers(*signers_);
  live_ = follow_ && !stdin_;
  decoder_->set_live(live_);
  decoder_->start_fd(fd_);
  current_name_ = fs::path(path).filename().string();
  if (writers_ && !writer_) is_mine(path);
  if (resume_ && resume_->file == current_name_) {
    decoder_->resume_after(resume_->frame_offset, resume_->frame_index, resume_->ticks);
    resume_.reset();
  }
  if (auto name = parse_name(fs::path(path).filename().string())) last_ = std::make_tuple(name->date, name->sequence);
  return true;
}

void Source::close_current() {
  if (decoder_) count(decoder_->summary());
  decoder_.reset();
  if (fd_ >= 0 && !stdin_) ::close(fd_);
  fd_ = -1;
}

void Source::count(const decoder::Summary& summary) { totals_.add(summary); }

void Source::rescan() {
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
  for (const auto& f : found)
    if (is_mine(f.string())) add(f.string());
}

}  // namespace terse::input
