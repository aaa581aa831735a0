// `terse ship --cursor-file`: where shipping stands, kept so that a crash at
// any moment leaves either the old place or the new one, and saved on a
// thread of its own.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <terse/result.hpp>

namespace terse::cli {

// Saved by write, fsync, rename and an fsync of the directory, so that after a
// crash it holds either the old cursor or the new one, never a torn one. A
// lock beside it keeps two shippers from sharing it.
class CursorFile {
 public:
  explicit CursorFile(std::string path);
  ~CursorFile();
  CursorFile(const CursorFile&) = delete;
  CursorFile& operator=(const CursorFile&) = delete;

  // The saved cursor ("" when there is none yet), or why it cannot be used.
  Result<std::string> open();

  Result<> save(const std::string& cursor);

 private:
  Result<std::string> read_saved();
  Result<> write_temp(const std::string& text);

  std::string path_, temp_, dir_;
  int lock_fd_ = -1;
};

// Saves on a thread of its own, so that a save's fsyncs (milliseconds on a
// busy disk) never stall reading and producing, and saves can follow the
// acknowledgements closely: while one is being written, newer cursors
// replace each other and only the latest is written next.
class CursorSaver {
 public:
  explicit CursorSaver(CursorFile& file);
  ~CursorSaver();
  CursorSaver(const CursorSaver&) = delete;
  CursorSaver& operator=(const CursorSaver&) = delete;

  void post(std::string cursor);

  // Writes what was posted last, then stops the thread.
  void finish();

  // A failure to save since the last call, or "" (and "saved again" once it mends).
  std::string news();

 private:
  void run();

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
