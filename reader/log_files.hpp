// The files a log is made of: how the runtime names them, their order, and
// the paths given on the command line turned into files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace terse::input {

namespace fs = std::filesystem;

struct LogFileName {
  std::string prefix;
  std::string date;
  unsigned long sequence = 0;
};

// NAME-YYYYMMDD-NNN.tlog, as the runtime names its files. The one place the
// CLI reads that grammar.
std::optional<LogFileName> parse_name(const std::string& file);

// Oldest first: by date, then sequence number compared as a number.
bool log_file_less(const fs::path& a, const fs::path& b);

// The key that makes files one sequence: their directory and NAME prefix.
// A file whose name the runtime did not choose is a sequence of its own.
std::string sequence_key(const fs::path& file);

// The log a file belongs to, as cursors name it: its NAME, or the whole file
// name for a file the runtime did not name (a sequence of its own).
std::string log_of(const std::string& file_name);

// Who wrote a file, from its info frame (FORMAT.md §4: host, pid, program
// and run id): files of one NAME that several processes wrote at the same
// time are one sequence per writer. Nothing when the file is too short to
// tell yet (just created); "" when it cannot tell (no info frame, damage).
std::optional<std::string> writer_of(const std::string& path);

// A writer as cursors keep it: 0 for "".
std::uint64_t writer_hash(const std::string& writer);

// writer_of, asked once per file: a file's writer never changes, and
// following looks at the same files every round.
class WriterCache {
 public:
  std::optional<std::string> of(const std::string& path);

 private:
  std::map<std::string, std::string> known_;
};

std::uint32_t fnv1a32(std::string_view bytes);

// The same directory however it was written: "logs", "./logs/", "/srv/logs".
std::string absolute_dir(const fs::path& dir);

std::int64_t wall_clock_ns();

}  // namespace terse::input
