// What the commands write: records to stdout through one buffer, and the
// problems the decoder finds to stderr, each prefixed with the program.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <terse/reader.hpp>

namespace terse::cli {

// Records go out through one buffer and large writes. A failed write is not
// fatal here: the output says so and the command decides how to end.
class Output {
 public:
  enum class State { open, reader_left, failed };

  std::string& buffer() { return buffer_; }
  // False once writing failed; a reader that left (EPIPE) is not an error
  // and is said nowhere, any other failure is said on stderr.
  bool flush();
  bool maybe_flush() { return buffer_.size() < (1 << 16) || flush(); }
  // What is buffered, then `text` as it is: a decoded frame's output is
  // megabytes, not worth copying into the buffer first.
  bool write(std::string_view text);
  State state() const { return state_; }

  // While following, nothing may be written for a long time; a pipe whose
  // reader left must still end the command.
  static bool reader_gone();

 private:
  bool write_all(std::string_view text);

  std::string buffer_;
  State state_ = State::open;
};

// How torn tails (where a live or crashed writer stopped) are treated: a
// reader of records takes one as the end of the data, `verify` reports it.
enum class TornTails { report, count_silently };

// The one problem reporter: each problem on stderr as
// "PROGRAM: SOURCE: offset N: WHAT", counted. Bound to itself: keep it in place.
class ProblemReporter {
 public:
  ProblemReporter(std::string program, TornTails torn_tails);
  ProblemReporter(const ProblemReporter&) = delete;
  ProblemReporter& operator=(const ProblemReporter&) = delete;

  // Run before each problem is printed (to flush stdout first, so that the
  // two stay in order on a terminal); false: the problem is not printed.
  void before_each(std::function<bool()> hook) { before_each_ = std::move(hook); }
  // After a cursor that fits no file the command stops: say nothing more.
  void go_quiet_after_bad_resume() { quiet_after_bad_resume_ = true; }

  // For a terse::reader::Reader; it must not outlive the reporter.
  reader::ProblemHandler handler() {
    return [this](const reader::Problem& p) { report(p); };
  }
  std::uint64_t problems() const { return problems_; }
  std::uint64_t torn_tails() const { return torn_tails_; }
  bool bad_resume() const { return bad_resume_; }

 private:
  void report(const reader::Problem& problem);

  std::string program_;
  TornTails torn_tail_policy_;
  std::function<bool()> before_each_;
  bool quiet_after_bad_resume_ = false;
  std::uint64_t problems_ = 0;
  std::uint64_t torn_tails_ = 0;
  bool bad_resume_ = false;
};

}  // namespace terse::cli
