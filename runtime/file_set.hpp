// The files of one log (FORMAT.md §2.1): their names, when to start the
// next one, sequence numbers that continue across restarts, and retention.
// No threads and no IO beyond the directory: the writer asks, it answers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace terse::detail {

class FileSet {
 public:
  struct Rules {
    std::string directory;
    std::string name;
    std::uint64_t roll_bytes = 0;
    bool roll_daily = true;
    std::size_t max_files = 0;          // 0: no limit
    std::uint64_t max_total_bytes = 0;  // 0: no limit
    unsigned file_mode = 0640;
  };

  struct LogFile {
    std::filesystem::path path;
    std::string date;
    std::uint32_t sequence = 0;
    std::uint64_t bytes = 0;
  };

  struct Opened {
    int fd = -1;  // -1: nothing opened, see `error` / `message`
    std::string path;
    std::uint32_t sequence = 0;
    int error = 0;        // errno of a failed create
    std::string message;  // why nothing was opened
  };

  explicit FileSet(Rules rules) : rules_(std::move(rules)) {}

  // YYYYMMDD of the local date at `unix_ns`.
  static std::string local_date(std::int64_t unix_ns);

  // This log's files in the directory, oldest first; others' are left out.
  std::vector<LogFile> files() const;
  // The first sequence number free for `date`: one past the highest there.
  std::uint32_t next_sequence(const std::string& date) const;
  // Whether the file being written, of `file_bytes`, is to be followed by a
  // new one at wall time `now_ns`.
  bool roll_due(std::uint64_t file_bytes, std::int64_t now_ns) const;
  // Creates the next file for the date of `now_ns`, exclusively: a name
  // that exists is never reused.
  Opened create_next(std::int64_t now_ns);
  // Removes the oldest files, never `current`, until the limits hold.
  // Returns how many went; a file that cannot be removed goes to `on_error`.
  std::size_t apply_retention(const std::string& current,
                              const std::function<void(const std::string&)>& on_error) const;

  const std::string& date() const { return date_; }

 private:
  Rules rules_;
  std::string date_;            // of the last file created
  std::uint32_t sequence_ = 1;  // the next one to try
};

}  // namespace terse::detail
