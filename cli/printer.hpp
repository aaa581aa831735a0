// What `terse cat` and `terse ship` make of one record: a text line or a JSON
// object, after redaction and the message filter.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include <terse/reader.hpp>

#include "mask.hpp"

namespace terse::cli {

// What one record prints as, after redaction and the message filter.
class Printer {
 public:
  // `grep` and `mask` must outlive the printer; the formatter's rewrite is
  // replaced by the mask.
  Printer(reader::FormatOptions options, const std::optional<std::regex>& grep, const Masker* mask);
  // One for each decoding thread: the message it keeps is its own.
  Printer(const Printer& other) : formatter_(other.formatter_), grep_(other.grep_) {}
  Printer& operator=(const Printer&) = delete;

  // Appends the record to `out`; false (nothing appended) when the message filter drops it.
  bool print(const reader::Record& record, std::string& out);

 private:
  reader::Formatter formatter_;
  const std::optional<std::regex>& grep_;
  std::string message_;
};

// --show-cursor: the "cursor" key (terse::reader::Reader::cursor()) goes
// last into an object the printer wrote (ending in "}", or "}\n" as printed
// lines do).
void add_cursor_key(std::string& object, std::string_view cursor);

// The first line --schema-header prints: what the records' keys hold, so a
// pipeline can check that it reads the records it was written for. The
// version after "terse.record/" changes when a key changes meaning or goes
// away; new keys may appear without a new version.
std::string json_schema_header(bool with_cursor);

}  // namespace terse::cli
