// The record filters of `terse cat` and `terse ship`: what the options mean,
// turned into a terse::reader::Filter (decided per call site and thread,
// before any argument is read) and a message regex (decided on the
// formatted message).
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include <terse/decoder.hpp>
#include <terse/schema.hpp>

#include <terse/reader.hpp>

namespace CLI {
class App;
}

namespace terse::cli {

// A usage error: the command prints it and exits with the usage code.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::optional<std::uint8_t> parse_level(const std::string& text);

struct LevelRange {
  std::uint8_t low = 0;
  std::uint8_t high = schema::kLevelCount - 1;
  bool contains(std::uint8_t level) const { return level >= low && level <= high; }
};

// "warn" (that level and above), "debug..warn", "..info", "error..".
LevelRange parse_level_range(const std::string& text);

std::int64_t now_ns();

// What --since and --until accept, as journalctl does: absolute times
// ("2026-11-29 14:00", "2026-11-29 14:00:05.25", "2026-11-29", "14:00",
// RFC 3339 "2026-11-29T14:00:05Z" or with an offset), read as local time
// unless they carry a zone (or --utc is given); relative ones ("-10m",
// "10m ago", "1h ago", "30s", "+5m"); and "now", "today", "yesterday",
// "tomorrow". Throws UsageError naming `option`.
std::int64_t parse_time(const std::string& option, const std::string& input, bool utc, std::int64_t now);

// What selects and redacts records, as given on the command line.
struct FilterOptions {
  std::string level;
  std::string since, until;
  std::vector<std::string> threads;
  std::vector<std::string> sites;
  std::string grep;
  std::vector<std::string> contexts;  // KEY=VALUE
  bool utc = false;
  std::string mask_path;
};

// `ship` follows without end, so it takes no --until.
enum class UntilOption { offered, not_offered };

// The one definition of the filter options, for every command that selects records.
void add_filter_options(CLI::App& command, FilterOptions& o, UntilOption until);

struct Filters {
  reader::Filter reader_filter;
  std::optional<std::regex> grep;
};

// Throws UsageError for an option that does not parse.
Filters make_filters(const FilterOptions& o, std::int64_t now);

}  // namespace terse::cli
