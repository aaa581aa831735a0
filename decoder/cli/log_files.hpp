// The files a log is made of: how the runtime names them, their order, and
// the paths given on the command line turned into files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace terse::cli {

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

// Paths as a list of files, each directory replaced by its .tlog files
// oldest first (for commands that read each file on its own). A directory
// that cannot be listed is said on stderr and clears `ok`.
std::vector<std::string> expand_paths(const std::vector<std::string>& paths, bool& ok);

std::uint32_t fnv1a32(std::string_view bytes);

// The same directory however it was written: "logs", "./logs/", "/srv/logs".
std::string absolute_dir(const fs::path& dir);

std::int64_t wall_clock_ns();

}  // namespace terse::cli
