#include "file_set.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <tuple>

#include <terse/file_name.hpp>
#include <terse/portable_libc.hpp>

#include "platform.hpp"

namespace terse::detail {

namespace fs = std::filesystem;

namespace {

// An exclusive create gives up after this many names in use.
constexpr int kCreateAttempts = 1000;

// A log file's descriptor is moved up to this number or above where the
// process may have that many open: a daemon that closes every descriptor
// after start-up and opens its own files then gets low numbers, never the
// log's (the writer checks each write's descriptor besides; this keeps
// the moment between that check and the write from meeting such a file).
constexpr int kFirstLogDescriptor = 256;

int moved_up(int fd) { return descriptor_at_or_above(fd, kFirstLogDescriptor); }

}  // namespace

std::string FileSet::local_date(std::int64_t unix_ns) {
  time_t seconds = static_cast<time_t>(unix_ns / 1'000'000'000);
  tm parts{};
  local_calendar(seconds, parts);
  char text[40];
  std::snprintf(text, sizeof text, "%04d%02d%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday);
  return text;
}

std::vector<FileSet::LogFile> FileSet::files() const {
  std::vector<LogFile> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(rules_.directory, ec)) {
    std::string file = entry.path().filename().string();
    auto name = schema::parse_file_name(file);
    if (!name || name->prefix != rules_.name) continue;
    std::error_code size_error;
    std::uint64_t bytes = entry.file_size(size_error);
    files.push_back({entry.path(), std::string(name->date), name->sequence, size_error ? 0 : bytes});
  }
  std::sort(files.begin(), files.end(), [](const LogFile& a, const LogFile& b) {
    return std::tie(a.date, a.sequence) < std::tie(b.date, b.sequence);
  });
  return files;
}

std::uint32_t FileSet::next_sequence(const std::string& date) const {
  std::uint32_t highest = 0;
  for (const LogFile& f : files())
    if (f.date == date) highest = std::max(highest, f.sequence);
  return highest + 1;
}

bool FileSet::roll_due(std::uint64_t file_bytes, std::int64_t now_ns) const {
  return file_bytes >= rules_.roll_bytes || (rules_.roll_daily && local_date(now_ns) != date_);
}

FileSet::Opened FileSet::create_next(std::int64_t now_ns) {
  std::string date = local_date(now_ns);
  if (date != date_) {
    date_ = date;
    sequence_ = next_sequence(date);
  }
  Opened opened;
  for (int attempt = 0; attempt < kCreateAttempts && sequence_ <= schema::kMaxSequence; ++attempt, ++sequence_) {
    std::string path = (fs::path(rules_.directory) / schema::format_file_name(rules_.name, date, sequence_)).string();
    int fd = open_path(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND, static_cast<mode_t>(rules_.file_mode));
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) {
      opened.error = errno;
      opened.message = "cannot create " + path + ": " + std::strerror(errno);
      return opened;
    }
    opened.fd = moved_up(fd);
    opened.path = std::move(path);
    opened.sequence = sequence_++;
    return opened;
  }
  opened.message = "no free file name in " + rules_.directory;
  return opened;
}

// The oldest files go first, never the one being written, and files left
// by earlier runs count as much as this run's.
std::size_t FileSet::apply_retention(const std::string& current,
                                     const std::function<void(const std::string&)>& on_error) const {
  if (rules_.max_files == 0 && rules_.max_total_bytes == 0) return 0;
  std::vector<LogFile> files = this->files();
  std::uint64_t total = 0;
  for (const LogFile& f : files) total += f.bytes;
  std::size_t count = files.size();
  std::size_t removed = 0;
  for (const LogFile& f : files) {
    bool too_many = rules_.max_files != 0 && count > rules_.max_files;
    bool too_big = rules_.max_total_bytes != 0 && total > rules_.max_total_bytes;
    if (!too_many && !too_big) break;
    if (f.path == fs::path(current)) continue;
    std::error_code ec;
    if (fs::remove(f.path, ec)) {
      --count;
      total -= f.bytes;
      ++removed;
    } else if (ec) {
      on_error("retention cannot remove " + f.path.string() + ": " + ec.message());
    }
  }
  return removed;
}

}  // namespace terse::detail
