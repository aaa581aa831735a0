// Following: the wait between two rounds of reading, which ends as soon as
// something that may hold new records changes.
#pragma once

#include <chrono>
#include <set>
#include <string>
#include <vector>

namespace terse::input {

// Watches directories (inotify on Linux): a followed file that grows, a file
// created in or renamed into one (a roll, a new writer, rewritten --mask
// rules) ends the wait at once, so a record reaches the output within a few
// milliseconds of its write rather than at the next poll. Where inotify is
// missing or runs out of watches the wait is a plain sleep of the timeout,
// and following works by polling as before.
class ChangeWaiter {
 public:
  ChangeWaiter();
  ~ChangeWaiter();
  ChangeWaiter(const ChangeWaiter&) = delete;
  ChangeWaiter& operator=(const ChangeWaiter&) = delete;

  // From now on; a directory that does not exist yet is tried again at each
  // wait (until it exists only the timeout ends the wait for it).
  void watch_directory(const std::string& dir);
  // True when a change ended it, false after `timeout`.
  bool wait(std::chrono::milliseconds timeout);
  // Whether changes end waits (false: every wait is a sleep).
  bool watching() const { return fd_ >= 0 && !watched_.empty(); }

 private:
  void add(const std::string& dir);
  void give_up();

  int fd_ = -1;
  std::set<std::string> watched_;
  std::vector<std::string> missing_;
};

}  // namespace terse::input
