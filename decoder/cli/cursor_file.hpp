// `terse ship --cursor-file`: where shipping stands, kept so that a crash at
// any moment leaves either the old place or the new one, and saved on a
// thread of its own.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace terse::cli {

// Saved by write, fsync, rename and an fsync of the directory, so that after a
// crash it holds either the old cursor or the new one, never a torn one. A
// lock beside it keeps two shippers from sharing it.
class CursorFile {
 public:
  explicit CursorFile(std::string path) : path_(std::move(path)), temp_(path_ + ".tmp") {
    std::string dir = std::filesystem::path(path_).parent_path().string();
    dir_ = dir.empty() ? "." : dir;
  }
  ~CursorFile() {
    if (lock_fd_ >= 0) ::close(lock_fd_);
  }
  CursorFile(const CursorFile&) = delete;
  CursorFile& operator=(const CursorFile&) = delete;

  // The saved cursor ("" when there is none yet), or an error.
  std::string open(std::string& cursor) {
    lock_fd_ = ::open((path_ + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ < 0) return "cannot create " + path_ + ".lock: " + std::strerror(errno);
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0)
      return "another terse ship is using " + path_ + " (its lock " + path_ + ".lock is held)";
    int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno != ENOENT) return "cannot read " + path_ + ": " + std::strerror(errno);
    } else {
      char buffer[4096];
      ssize_t n;
      while ((n = ::read(fd, buffer, sizeof buffer)) > 0) cursor.append(buffer, static_cast<std::size_t>(n));
      int read_errno = errno;
      ::close(fd);
      if (n < 0) return "cannot read " + path_ + ": " + std::strerror(read_errno);
      while (!cursor.empty() && std::isspace(static_cast<unsigned char>(cursor.back()))) cursor.pop_back();
      while (!cursor.empty() && std::isspace(static_cast<unsigned char>(cursor.front()))) cursor.erase(0, 1);
    }
    // Find out now, not after the first acknowledgement, that it cannot be saved.
    std::string error = write_temp("");
    ::unlink(temp_.c_str());
    return error;
  }

  std::string save(const std::string& cursor) {
    std::string error = write_temp(cursor + "\n");
    if (!error.empty()) return error;
    if (::rename(temp_.c_str(), path_.c_str()) != 0) return "cannot rename " + temp_ + ": " + std::strerror(errno);
    int dir_fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
      ::fsync(dir_fd);
      ::close(dir_fd);
    }
    return {};
  }

 private:
  std::string write_temp(const std::string& text) {
    int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return "cannot write " + temp_ + ": " + std::strerror(errno);
    const char* p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        std::string error = "cannot write " + temp_ + ": " + std::strerror(errno);
        ::close(fd);
        return error;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) {
      std::string error = "cannot fsync " + temp_ + ": " + std::strerror(errno);
      ::close(fd);
      return error;
    }
    ::close(fd);
    return {};
  }

  std::string path_, temp_, dir_;
  int lock_fd_ = -1;
};

// Saves on a thread of its own, so that a save's fsyncs (milliseconds on a
// busy disk) never stall reading and producing, and saves can follow the
// acknowledgements closely: while one is being written, newer cursors
// replace each other and only the latest is written next.
class CursorSaver {
 public:
  explicit CursorSaver(CursorFile& file) : file_(file), thread_([this] { run(); }) {}
  ~CursorSaver() { finish(); }
  CursorSaver(const CursorSaver&) = delete;
  CursorSaver& operator=(const CursorSaver&) = delete;

  void post(std::string cursor) {
    std::lock_guard<std::mutex> lock(mutex_);
    next_ = std::move(cursor);
    wake_.notify_one();
  }

  // Writes what was posted last, then stops the thread.
  void finish() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
      wake_.notify_one();
    }
    thread_.join();
  }

  // A failure to save since the last call, or "" (and "saved again" once it mends).
  std::string news() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(news_, std::string());
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return next_ || stopping_; });
      if (!next_) return;
      std::string cursor = std::move(*next_);
      next_.reset();
      lock.unlock();
      std::string error = file_.save(cursor);
      lock.lock();
      if (!error.empty()) {
        // A stale cursor means more records sent twice after a restart,
        // never fewer sent: shipping goes on, and the next place is tried.
        if (!failing_) news_ = error + " (will retry)";
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

  CursorFile& file_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<std::string> next_;
  std::string news_;
  bool failing_ = false;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the rest is ready
};

}  // namespace terse::cli
