#include "output.hpp"

#ifndef _WIN32
#include <poll.h>
#endif
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <terse/portable_libc.hpp>

namespace terse::cli {
namespace {

// What a write says when the reader of a pipe left: EPIPE, or on Windows, whose C library
// says so for a pipe being closed, EINVAL.
bool reader_left(int error) {
#ifdef _WIN32
  if (error == EINVAL) return true;
#endif
  return error == EPIPE;
}

}  // namespace

bool Output::flush() {
  if (!write_all(buffer_)) return false;
  buffer_.clear();
  return true;
}

bool Output::write(std::string_view text) {
  if (!buffer_.empty() && !flush()) return false;
  return write_all(text);
}

bool Output::write_all(std::string_view text) {
  if (state_ != State::open) return false;
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = write_some(STDOUT_FILENO, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (reader_left(errno)) {
        state_ = State::reader_left;
      } else {
        std::fprintf(stderr, "terse: writing output failed: %s\n", std::strerror(errno));
        state_ = State::failed;
      }
      return false;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

bool Output::reader_gone() {
#ifdef _WIN32
  return false;  // Windows cannot tell before a write, which then fails as a broken pipe
#else
  pollfd p{STDOUT_FILENO, 0, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
#endif
}

ProblemReporter::ProblemReporter(std::string program, TornTails torn_tails)
    : program_(std::move(program)), torn_tail_policy_(torn_tails) {}

void ProblemReporter::report(const reader::Problem& problem) {
  if (quiet_after_bad_resume_ && bad_resume_) return;
  if (problem.torn_tail) {
    ++torn_tails_;
    if (torn_tail_policy_ == TornTails::count_silently) return;
  } else {
    ++problems_;
  }
  if (problem.bad_resume) bad_resume_ = true;
  if (before_each_ && !before_each_()) return;
  std::fprintf(stderr, "%s: %s: offset %llu: %s\n", program_.c_str(), problem.source.c_str(),
               static_cast<unsigned long long>(problem.offset), problem.what.c_str());
}

}  // namespace terse::cli
