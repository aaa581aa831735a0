// Where a record sits, as cursors and the inputs that resume from them keep it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace terse::input {

// The file by name only (logs moved or mounted elsewhere still resume), the
// offset of its frame, its index in the frame, and its ticks, which tell a
// replaced file from the one the position was taken in.
struct Position {
  std::string file;
  std::uint64_t frame_offset = 0;
  std::uint32_t frame_index = 0;
  std::uint64_t ticks = 0;
};

// One input's place in a merged cursor. Logs of one NAME in two directories
// are told apart by their directory, kept as a hash of its absolute path so
// that a cursor stays short whatever the paths; cursors of version 1 have
// none. Processes writing one NAME in one directory are told apart by their
// writer (writer_hash); cursors before version 3 have none.
struct InputPosition {
  std::optional<std::uint32_t> dir_hash;
  Position at;
  std::optional<std::uint64_t> writer;
};

}  // namespace terse::input
