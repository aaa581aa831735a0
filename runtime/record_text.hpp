// What the runtime asks of sinks/ for records no logger writes
// (fallback.cpp): they are printed on stderr as `terse cat` prints them.
#pragma once

#include <memory>
#include <string>

#include <terse/terse.hpp>

#include "clock.hpp"

namespace terse::detail {

// Renders ring records as `terse cat`'s default lines. Defined in sinks/,
// as it renders with the decoder library.
class RecordText {
 public:
  explicit RecordText(const Calibration& calibration);
  ~RecordText();
  RecordText(const RecordText&) = delete;
  RecordText& operator=(const RecordText&) = delete;

  // Appends the lines a record of `thread`'s ring makes (none for most
  // control records) to `out`.
  void append(const ThreadBuffer& thread, const RingRecordHeader& header, const char* args, std::string& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace terse::detail
