// The reader library's inside, for the `terse` commands built on it: how
// its filters reach the decoder, and the decoder record under a
// terse::reader::Record, which the commands' line patterns, JSON and
// redaction render. Not installed.
#pragma once

#include <string>

#include <terse/decoder.hpp>
#include <terse/reader.hpp>

namespace terse::input {

// --site TEXT matches a call site whose format string contains TEXT, or
// whose source file is TEXT (a path suffix: "net/conn.cpp", "conn.cpp"), or
// whose file:line is TEXT.
bool site_matches(const decoder::Site& site, const std::string& text);

// --thread ID: the OS thread id, or the thread's name.
bool thread_matches(const decoder::Thread& thread, const std::string& text);

}  // namespace terse::input

namespace terse::reader::detail {

// A Filter as the decoder applies it, per call site and thread.
decoder::Filter decoder_filter(const Filter& filter);

// A log record's argument as Record::args() gives it.
Value argument_value(const decoder::Site& site, const decoder::Arg& argument);

struct RecordData {
  const decoder::Record* record = nullptr;
  const std::string* file = nullptr;  // the name of the file it came from
  bool utc = false;
};

struct Access {
  static Record view(const RecordData& data) {
    Record record;
    record.data_ = &data;
    return record;
  }
  static const RecordData& data(const Record& record) { return *record.data_; }
};

// The decoder's record under a Record that next() or a Renderer was given.
inline const decoder::Record& raw(const Record& record) { return *Access::data(record).record; }

}  // namespace terse::reader::detail
