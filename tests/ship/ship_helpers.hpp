// What the `terse ship` tests share: the command lines of the shipper and
// the writer (each run as a Process, its stderr into a file), and comparisons
// of what the topic holds with what `terse cat -o json` prints for them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "kafka_harness.hpp"
#include "process.hpp"

namespace terse::test {

// `terse ship` with the options every test gives, then `extra`, then `paths`.
std::vector<std::string> ship_args(const std::string& bootstraps, const std::string& topic,
                                   const std::string& cursor_file, const std::vector<std::string>& extra,
                                   const std::vector<std::string>& paths);

// The tests' live writer (tests/cli/live_writer.cpp) with `args`.
std::vector<std::string> writer_args(const std::vector<std::string>& args);

// The lines `terse cat -o json` prints for `paths` (a failure fails the test).
std::vector<std::string> cat_json(const std::vector<std::string>& args);

// Lines by 64-bit hash, sorted: sets of a million lines compare in memory.
std::vector<std::uint64_t> sorted_hashes(const std::vector<std::string>& lines);
std::vector<std::uint64_t> sorted_hashes(const TopicReader& reader);

// How the topic's messages compare with the lines expected.
struct Tally {
  std::size_t missing = 0;     // expected lines never read
  std::size_t duplicates = 0;  // messages read more than once (the extra copies)
  std::size_t unexpected = 0;  // messages that are no expected line
};
Tally compare(const std::vector<std::uint64_t>& expected, const std::vector<std::uint64_t>& read);

// Stops a following ship with SIGTERM (it must drain and exit 0) and then the
// reader (its offsets must have no hole); `arrived` says whether the reader
// saw all it waited for. How the topic compares with `expected`.
Tally stop_and_compare(Process& ship, TopicReader& reader, const std::vector<std::string>& expected, bool arrived);

// The "cursor" value of a JSON line printed with --show-cursor.
std::string cursor_of(const std::string& json_line);
// What a cursor file holds once every record of `logs` was shipped: the
// cursor `terse cat --show-cursor` prints with the last record.
std::string final_cursor_file(const std::string& logs);

// The value of `key=` in the last stats line of a ship's stderr, or -1.
double last_stat(const std::string& stderr_text, const std::string& key);

}  // namespace terse::test
