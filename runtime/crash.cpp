// Crash flush: on a fatal signal or std::terminate, every record already
// logged is written before the process dies as it would have died anyway.
//
// The handler itself only stores to atomics and sleeps: it asks the IO
// threads, which are alive and hold no lock of the crashing thread's, to
// write everything out, waits a bounded time, then restores the previous
// handler and raises the signal again so core dumps, exit status and any
// chained handler stay as they were.
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <exception>

#include "signals.hpp"

namespace terse::detail {
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
constexpr int kSignalCount = sizeof kFatalSignals / sizeof kFatalSignals[0];

struct sigaction g_previous[kSignalCount];
bool g_installed = false;
std::terminate_handler g_previous_terminate = nullptr;

void on_fatal_signal(int signal_number, siginfo_t*, void*) {
  flush_for_crash();
  for (int i = 0; i < kSignalCount; ++i) {
    if (kFatalSignals[i] == signal_number) sigaction(signal_number, &g_previous[i], nullptr);
  }
  // Blocked while this handler runs: delivered, with the previous
  // disposition, as soon as it returns.
  raise(signal_number);
}

[[noreturn]] void on_terminate() {
  flush_for_crash();
  if (g_previous_terminate != nullptr) g_previous_terminate();
  std::abort();
}

}  // namespace

void install_crash_handlers() noexcept {
  if (g_installed) return;
  struct sigaction action {};
  action.sa_sigaction = on_fatal_signal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < kSignalCount; ++i) sigaction(kFatalSignals[i], &action, &g_previous[i]);
  g_previous_terminate = std::set_terminate(on_terminate);
  g_installed = true;
}

void uninstall_crash_handlers() noexcept {
  if (!g_installed) return;
  for (int i = 0; i < kSignalCount; ++i) {
    struct sigaction current {};
    sigaction(kFatalSignals[i], nullptr, &current);
    // A handler installed after ours stays: it may chain to ours, which
    // then finds no logger and passes on.
    if ((current.sa_flags & SA_SIGINFO) != 0 && current.sa_sigaction == on_fatal_signal)
      sigaction(kFatalSignals[i], &g_previous[i], nullptr);
  }
  if (std::get_terminate() == on_terminate) std::set_terminate(g_previous_terminate);
  g_installed = false;
}

}  // namespace terse::detail
