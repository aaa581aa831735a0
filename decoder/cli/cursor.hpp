// Cursors for pipelines (`--show-cursor`, `--after-cursor`): where a record
// sits, as a string a shipper stores and hands back after a restart.
//
// A cursor names the file by its name only (NAME-YYYYMMDD-NNN.tlog, §2.1 of
// FORMAT.md), not its directory, so logs moved or mounted elsewhere still
// resume; then the offset of the record's frame, its index in the frame,
// and its ticks, which tell a cursor for a replaced file from a good one.
// Callers must treat it as opaque: "1" (the cursor version), then the
// fields in lowercase hex, separated by "-", the name hex-encoded too so the
// cursor needs no quoting in JSON, shells or URLs.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "inputs.hpp"

namespace terse::cli {

struct Cursor {
  std::string file;  // the file's name, without a directory
  std::uint64_t frame_offset = 0;
  std::uint32_t frame_index = 0;
  std::uint64_t ticks = 0;
};

inline std::string encode_cursor(const Cursor& c) {
  static const char* digits = "0123456789abcdef";
  std::string out = "1-";
  for (unsigned char ch : c.file) {
    out += digits[ch >> 4];
    out += digits[ch & 15];
  }
  char numbers[64];
  std::snprintf(numbers, sizeof numbers, "-%llx-%x-%llx", static_cast<unsigned long long>(c.frame_offset),
                static_cast<unsigned>(c.frame_index), static_cast<unsigned long long>(c.ticks));
  return out + numbers;
}

// Nothing for a string that is not a cursor this version wrote.
inline std::optional<Cursor> decode_cursor(const std::string& text) {
  auto hex = [](char ch) -> int {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    return -1;
  };
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    std::size_t dash = text.find('-', start);
    parts.push_back(text.substr(start, dash - start));
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  if (parts.size() != 5 || parts[0] != "1") return std::nullopt;
  auto number = [&](const std::string& field, std::uint64_t limit, std::uint64_t& out) {
    if (field.empty() || field.size() > 16) return false;
    out = 0;
    for (char ch : field) {
      if (hex(ch) < 0) return false;
      out = out * 16 + static_cast<std::uint64_t>(hex(ch));
    }
    return out <= limit;
  };
  Cursor c;
  const std::string& name = parts[1];
  if (name.empty() || name.size() % 2 != 0 || name.size() > 512) return std::nullopt;
  for (std::size_t i = 0; i < name.size(); i += 2) {
    if (hex(name[i]) < 0 || hex(name[i + 1]) < 0) return std::nullopt;
    c.file += static_cast<char>(hex(name[i]) * 16 + hex(name[i + 1]));
  }
  // Only a name the runtime could have chosen: never a path.
  if (c.file.find('/') != std::string::npos || c.file.find('\0') != std::string::npos || !parse_name(c.file))
    return std::nullopt;
  std::uint64_t index = 0;
  if (!number(parts[2], UINT64_MAX, c.frame_offset) || !number(parts[3], UINT32_MAX, index) ||
      !number(parts[4], UINT64_MAX, c.ticks))
    return std::nullopt;
  c.frame_index = static_cast<std::uint32_t>(index);
  return c;
}

}  // namespace terse::cli
