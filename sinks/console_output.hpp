// The console's writer thread ("terse-console"): takes the rendered text of
// a batch and writes everything queued in one write() call, so that a
// terminal or pipe that is slow, stalled or closed holds up nobody but
// itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

namespace terse::sinks {

class ConsoleOutput {
 public:
  explicit ConsoleOutput(int fd);
  ~ConsoleOutput();
  ConsoleOutput(const ConsoleOutput&) = delete;
  ConsoleOutput& operator=(const ConsoleOutput&) = delete;

  void start();
  bool running() const noexcept;
  // Queues `text` (taking its bytes, leaving it empty) and returns its
  // ticket: written(ticket) once it is out.
  std::uint64_t push(std::string& text);
  // Bytes queued or being written.
  std::size_t backlog() const noexcept;
  // Writing failed for good (the reader of a pipe left: EPIPE).
  bool closed() const noexcept;
  int failure() const noexcept;                       // the errno that closed it
  bool written(std::uint64_t ticket) const noexcept;  // async-signal-safe
  // Until `ticket` is written, the console is closed, or one write() has
  // been blocked long enough to call the console stalled.
  void wait_written(std::uint64_t ticket);
  std::uint64_t writes() const noexcept;
  std::uint64_t bytes_written() const noexcept;  // async-signal-safe
  // Writes what is queued while that makes progress (a second without any
  // ends it), then ends the thread; a thread still blocked in write() is
  // left to finish that call on its own.
  void finish();
  std::thread& thread() { return thread_; }

 private:
  struct Shared;  // the thread holds it too, as it may outlive this object
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace terse::sinks
