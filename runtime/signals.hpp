// Signals (crash.cpp, termination.cpp; signals_windows.cpp on Windows,
// where a crash is an unhandled exception and a termination a console
// event): the crash and termination handlers' flushes, and the signal mask
// of terse's threads.
#pragma once

#include <signal.h>
#include <time.h>

namespace terse::detail {

// Crash flush (runtime/crash.cpp). flush_for_crash() is async-signal-safe:
// it asks the IO threads to write everything and waits a bounded time.
void install_crash_handlers() noexcept;
void uninstall_crash_handlers() noexcept;
void flush_for_crash() noexcept;

// Sleeps in 1 ms steps while `keep_waiting()` holds, `limit_ms` at most.
// Async-signal-safe (nanosleep only), for the signal handlers and for
// stop(), which waits for them. False when the limit ran out first.
template <typename Predicate>
bool wait_while(Predicate keep_waiting, int limit_ms) noexcept {
  for (int waited_ms = 0; waited_ms < limit_ms; ++waited_ms) {
    if (!keep_waiting()) return true;
    timespec pause{0, 1'000'000};
    nanosleep(&pause, nullptr);
  }
  return !keep_waiting();
}

// Termination flush (runtime/termination.cpp): SIGTERM, SIGINT and SIGHUP,
// where start() finds them at their default action. flush_for_termination()
// is async-signal-safe: it has the IO threads write everything (compressed,
// as always) and waits a bounded time, also for a stop() under way.
void install_termination_handlers() noexcept;
void uninstall_termination_handlers() noexcept;
void flush_for_termination() noexcept;
// terse's threads start with every asynchronous signal blocked (the
// termination signals included), so that a signal meant for the process
// runs its handler (the application's or terse's) on one of the
// application's threads, never on terse's in the middle of a write; a
// handler that logs would log from them too. Synchronous signals (a fault,
// abort()) stay deliverable, for the crash handler. While one of these
// lives, the calling thread has them blocked, so that the threads it
// creates start so; its end restores the thread's mask. (Windows has no
// signal masks: there it does nothing.)
class AsyncSignalsBlocked {
 public:
  AsyncSignalsBlocked() noexcept;
  ~AsyncSignalsBlocked();
  AsyncSignalsBlocked(const AsyncSignalsBlocked&) = delete;
  AsyncSignalsBlocked& operator=(const AsyncSignalsBlocked&) = delete;

 private:
#ifndef _WIN32
  sigset_t previous_;
#endif
};

}  // namespace terse::detail
