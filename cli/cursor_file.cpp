#include "cursor_file.hpp"

#include <fcntl.h>
#include <unistd.h>
#ifdef _WIN32
#include <io.h>
#include <windows.h>
#else
#include <sys/file.h>
#endif

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>
#include <utility>

#include <terse/portable_libc.hpp>

namespace terse::cli {
namespace {

// Whether this process now holds the only lock on the file open at `fd`; false at once when
// another holds it. The lock goes with the descriptor.
bool lock_alone(int fd) {
#ifdef _WIN32
  OVERLAPPED whole_file{};
  return LockFileEx(reinterpret_cast<HANDLE>(_get_osfhandle(fd)), LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY,
                    0, MAXDWORD, MAXDWORD, &whole_file) != 0;
#else
  return ::flock(fd, LOCK_EX | LOCK_NB) == 0;
#endif
}

// Writes the file's data to the device; false, with errno set, when that failed.
bool sync_file(int fd) {
#ifdef _WIN32
  return _commit(fd) == 0;
#else
  return ::fsync(fd) == 0;
#endif
}

}  // namespace

CursorFile::CursorFile(std::string path) : path_(std::move(path)), temp_(path_ + ".tmp") {
  std::string dir = std::filesystem::path(path_).parent_path().string();
  dir_ = dir.empty() ? "." : dir;
}

CursorFile::~CursorFile() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

Result<std::string> CursorFile::open() {
  lock_fd_ = open_path((path_ + ".lock").c_str(), O_RDWR | O_CREAT, 0644);
  if (lock_fd_ < 0) return Failure{"cannot create " + path_ + ".lock: " + std::strerror(errno)};
  if (!lock_alone(lock_fd_))
    return Failure{"another terse ship is using " + path_ + " (its lock " + path_ + ".lock is held)"};
  Result<std::string> cursor = read_saved();
  if (!cursor) return cursor;
  // Find out now, not after the first acknowledgement, that it cannot be saved.
  Result<> writable = write_temp("");
  ::unlink(temp_.c_str());
  if (!writable) return Failure{writable.why()};
  return cursor;
}

// The cursor as saved, without surrounding white space; none when the file is absent.
Result<std::string> CursorFile::read_saved() {
  std::string cursor;
  int fd = open_path(path_.c_str(), O_RDONLY);
  if (fd < 0) {
    if (errno != ENOENT) return Failure{"cannot read " + path_ + ": " + std::strerror(errno)};
    return cursor;
  }
  char buffer[4096];
  ssize_t n;
  while ((n = read_some(fd, buffer, sizeof buffer)) > 0) cursor.append(buffer, static_cast<std::size_t>(n));
  int read_errno = errno;
  ::close(fd);
  if (n < 0) return Failure{"cannot read " + path_ + ": " + std::strerror(read_errno)};
  while (!cursor.empty() && std::isspace(static_cast<unsigned char>(cursor.back()))) cursor.pop_back();
  while (!cursor.empty() && std::isspace(static_cast<unsigned char>(cursor.front()))) cursor.erase(0, 1);
  return cursor;
}

Result<> CursorFile::save(const std::string& cursor) {
  if (Result<> written = write_temp(cursor + "\n"); !written) return written;
  // std::filesystem::rename replaces the old file on Windows too, where rename() refuses.
  std::error_code error;
  std::filesystem::rename(temp_, path_, error);
#ifdef _WIN32
  // Windows refuses to replace a file while anyone has it open, as a reader of the cursor
  // does for a moment: a few tries before it counts as a failed save.
  for (int tries = 0; error == std::errc::permission_denied && tries < 50; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::filesystem::rename(temp_, path_, error);
  }
#endif
  if (error) return Failure{"cannot rename " + temp_ + ": " + error.message()};
#ifndef _WIN32
  // The rename itself reaches the device with the directory's data (Windows cannot open a
  // directory to sync it).
  int dir_fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
#endif
  return {};
}

Result<> CursorFile::write_temp(const std::string& text) {
  int fd = open_path(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return Failure{"cannot write " + temp_ + ": " + std::strerror(errno)};
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = write_some(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::string error = "cannot write " + temp_ + ": " + std::strerror(errno);
      ::close(fd);
      return Failure{std::move(error)};
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (!sync_file(fd)) {
    std::string error = "cannot fsync " + temp_ + ": " + std::strerror(errno);
    ::close(fd);
    return Failure{std::move(error)};
  }
  ::close(fd);
  return {};
}

CursorSaver::CursorSaver(CursorFile& file) : file_(file), thread_([this] { run(); }) {}

CursorSaver::~CursorSaver() { finish(); }

void CursorSaver::post(std::string cursor) {
  std::lock_guard<std::mutex> lock(mutex_);
  next_ = std::move(cursor);
  wake_.notify_one();
}

void CursorSaver::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    wake_.notify_one();
  }
  thread_.join();
}

std::string CursorSaver::news() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(news_, std::string());
}

void CursorSaver::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return next_ || stopping_; });
    if (!next_) return;
    std::string cursor = std::move(*next_);
    next_.reset();
    lock.unlock();
    Result<> saved = file_.save(cursor);
    lock.lock();
    if (!saved) {
      // A stale cursor means more records sent twice after a restart,
      // never fewer sent: shipping goes on, and the next place is tried.
      if (!failing_) news_ = saved.why() + " (will retry)";
      failing_ = true;
      if (stopping_) return;  // exiting: that was the last try
      if (!next_) next_ = std::move(cursor);
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      lock.lock();
    } else if (failing_) {
      news_ = "saved again";
      failing_ = false;
    }
  }
}

}  // namespace terse::cli
