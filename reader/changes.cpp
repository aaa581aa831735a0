#include <terse/reader.hpp>

#include <unistd.h>
#if defined(__linux__) && !defined(TERSE_POSIX_ONLY)
#include <poll.h>
#include <sys/inotify.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <thread>

namespace terse::reader {

#if defined(__linux__) && !defined(TERSE_POSIX_ONLY)
// What may mean new records: data written to a file of the directory, a file
// created, renamed into it or closed after writing.
constexpr std::uint32_t kEvents = IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE;
#endif

ChangeWaiter::ChangeWaiter() {
#if defined(__linux__) && !defined(TERSE_POSIX_ONLY)
  fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
#endif
}

ChangeWaiter::~ChangeWaiter() {
  if (fd_ >= 0) ::close(fd_);
}

void ChangeWaiter::watch_directory(const std::string& dir) {
  if (fd_ < 0 || watched_.count(dir) || std::find(missing_.begin(), missing_.end(), dir) != missing_.end()) return;
  add(dir);
}

void ChangeWaiter::add(const std::string& dir) {
#if defined(__linux__) && !defined(TERSE_POSIX_ONLY)
  if (::inotify_add_watch(fd_, dir.c_str(), kEvents) >= 0) {
    watched_.insert(dir);
    return;
  }
  if (errno == ENOENT) {
    missing_.push_back(dir);
  } else if (errno == ENOSPC || errno == ENOMEM) {
    give_up();  // out of watches: polling is slower, never wrong
  }
  // Anything else (no permission, not a directory): that directory is polled.
#else
  (void)dir;
#endif
}

void ChangeWaiter::give_up() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  watched_.clear();
  missing_.clear();
}

bool ChangeWaiter::wait(std::chrono::milliseconds timeout) {
  if (fd_ >= 0 && !missing_.empty()) {
    std::vector<std::string> missing = std::move(missing_);
    missing_.clear();
    for (const auto& dir : missing) add(dir);
  }
  if (!watching()) {
    std::this_thread::sleep_for(timeout);
    return false;
  }
#if defined(__linux__) && !defined(TERSE_POSIX_ONLY)
  pollfd p{fd_, POLLIN, 0};
  int n = ::poll(&p, 1, static_cast<int>(std::max<std::chrono::milliseconds::rep>(timeout.count(), 0)));
  if (n <= 0) return false;
  // The events only say "look again"; what changed the next round finds.
  char events[4096];
  while (::read(fd_, events, sizeof events) > 0) {
  }
  return true;
#else
  return false;  // never watching
#endif
}

}  // namespace terse::reader
