#include "console_output.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include <terse/portable_libc.hpp>

#include "runtime/placement.hpp"
#include "runtime/platform.hpp"

namespace terse::sinks {
namespace {

using Clock = std::chrono::steady_clock;

// One write() call blocked this long means nobody is reading: flush() stops
// waiting for the console then.
constexpr auto kStalledAfter = std::chrono::milliseconds(250);
// What finish() gives a console that has stopped taking bytes.
constexpr auto kFinishGrace = std::chrono::seconds(1);
// A write() call at most this long, so that progress shows between calls.
constexpr std::size_t kMostPerWrite = std::size_t{1} << 20;

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

}  // namespace

struct ConsoleOutput::Shared {
  explicit Shared(int descriptor) : fd(descriptor) {}

  const int fd;
  std::mutex mutex;
  std::condition_variable wake;      // the thread: text queued, or finishing
  std::condition_variable progress;  // wait_written() and finish()
  std::string queued;                // guarded by mutex
  std::uint64_t queued_ticket = 0;   // guarded: the ticket of the latest text queued
  bool finishing = false;            // guarded: write what is queued, then end
  bool abandoned = false;            // guarded: end without writing more
  bool done = false;                 // guarded: the thread has ended
  std::atomic<std::size_t> backlog{0};
  std::atomic<std::uint64_t> written_ticket{0};
  std::atomic<std::int64_t> writing_since_ns{0};  // a write() call under way since then; 0: none
  std::atomic<std::uint64_t> writes{0};
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<bool> closed{false};
  std::atomic<int> failure{0};  // the errno that closed it

  void run();
  bool write_out(std::string_view text);
  bool stalled() const {
    std::int64_t since = writing_since_ns.load(std::memory_order_relaxed);
    return since != 0 && steady_ns() - since > std::chrono::nanoseconds(kStalledAfter).count();
  }
};

// False once the console is closed for good.
bool ConsoleOutput::Shared::write_out(std::string_view text) {
  while (!text.empty()) {
    writing_since_ns.store(steady_ns(), std::memory_order_relaxed);
    ssize_t n = write_some(fd, text.data(), std::min(text.size(), kMostPerWrite));
    writing_since_ns.store(0, std::memory_order_relaxed);
    writes.fetch_add(1, std::memory_order_relaxed);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        // Someone made the descriptor non-blocking: wait for room rather than spin.
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      failure.store(errno, std::memory_order_relaxed);
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
    bytes.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_relaxed);
    backlog.fetch_sub(static_cast<std::size_t>(n), std::memory_order_relaxed);
    progress.notify_all();
  }
  return true;
}

void ConsoleOutput::Shared::run() {
  // A reader that left (`app 2>&1 | head`) must end the console, not the
  // process: with SIGPIPE blocked here, write() says EPIPE instead.
  detail::block_broken_pipe_signal();
  std::string writing;
  for (;;) {
    std::uint64_t ticket;
    {
      std::unique_lock lock(mutex);
      wake.wait(lock, [&] { return !queued.empty() || finishing || abandoned; });
      if (abandoned || (queued.empty() && finishing)) break;
      writing.swap(queued);
      queued.clear();
      ticket = queued_ticket;
    }
    bool failed = !closed.load(std::memory_order_relaxed) && !write_out(writing);
    if (failed) detail::take_broken_pipe_signal();
    writing.clear();
    {
      std::lock_guard lock(mutex);
      if (failed) {
        closed.store(true, std::memory_order_relaxed);
        queued.clear();
        backlog.store(0, std::memory_order_relaxed);
      }
      written_ticket.store(ticket, std::memory_order_release);
    }
    progress.notify_all();
  }
  std::lock_guard lock(mutex);
  done = true;
  progress.notify_all();
}

ConsoleOutput::ConsoleOutput(int fd) : shared_(std::make_shared<Shared>(fd)) {}

ConsoleOutput::~ConsoleOutput() {
  if (thread_.joinable()) finish();
}

bool ConsoleOutput::running() const noexcept { return thread_.joinable(); }

void ConsoleOutput::start() {
  thread_ = std::thread([shared = shared_] { shared->run(); });
  detail::place_thread(thread_, "terse-console");
}

std::uint64_t ConsoleOutput::push(std::string& text) {
  Shared& s = *shared_;
  std::uint64_t ticket;
  {
    std::lock_guard lock(s.mutex);
    // No text, no ticket of its own: it is out once what came before is.
    if (!text.empty() && !s.closed.load(std::memory_order_relaxed)) {
      ++s.queued_ticket;
      s.backlog.fetch_add(text.size(), std::memory_order_relaxed);
      if (s.queued.empty()) {
        s.queued.swap(text);
      } else {
        s.queued += text;
      }
    }
    ticket = s.queued_ticket;
  }
  text.clear();
  s.wake.notify_one();
  return ticket;
}

std::size_t ConsoleOutput::backlog() const noexcept { return shared_->backlog.load(std::memory_order_relaxed); }

bool ConsoleOutput::closed() const noexcept { return shared_->closed.load(std::memory_order_relaxed); }

int ConsoleOutput::failure() const noexcept { return shared_->failure.load(std::memory_order_relaxed); }

bool ConsoleOutput::written(std::uint64_t ticket) const noexcept {
  return shared_->written_ticket.load(std::memory_order_acquire) >= ticket;
}

void ConsoleOutput::wait_written(std::uint64_t ticket) {
  Shared& s = *shared_;
  std::unique_lock lock(s.mutex);
  while (s.written_ticket.load(std::memory_order_relaxed) < ticket && !s.closed.load() && !s.stalled() && !s.done)
    s.progress.wait_for(lock, std::chrono::milliseconds(50));
}

std::uint64_t ConsoleOutput::writes() const noexcept { return shared_->writes.load(std::memory_order_relaxed); }

std::uint64_t ConsoleOutput::bytes_written() const noexcept { return shared_->bytes.load(std::memory_order_relaxed); }

void ConsoleOutput::finish() {
  if (!thread_.joinable()) return;
  Shared& s = *shared_;
  {
    std::unique_lock lock(s.mutex);
    s.finishing = true;
    s.wake.notify_one();
    std::uint64_t seen = s.bytes.load();
    auto quiet_since = Clock::now();
    while (!s.done) {
      s.progress.wait_for(lock, std::chrono::milliseconds(50));
      std::uint64_t now_bytes = s.bytes.load();
      if (now_bytes != seen) {
        seen = now_bytes;
        quiet_since = Clock::now();
      } else if (Clock::now() - quiet_since > kFinishGrace) {
        s.abandoned = true;
        s.wake.notify_one();
        break;
      }
    }
    if (!s.done) {
      // Blocked in write() on a console nobody reads: that call ends when
      // the reader reads or leaves, and the thread with it.
      lock.unlock();
      thread_.detach();
      return;
    }
  }
  thread_.join();
}

}  // namespace terse::sinks
