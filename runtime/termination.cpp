// Termination flush: SIGTERM, SIGINT and SIGHUP at their default action end
// the process at once, and the records the IO threads had not written yet
// (the last tens of milliseconds, often the ones that say why it stopped)
// are gone. Where the application left them at the default, terse catches
// them, has the IO threads write everything, then dies of the same signal,
// so the exit status is what it would have been.
//
// Unlike a crash nothing is broken: the IO threads are healthy, so records
// are written as always (compressed). The handler only stores to atomics
// and sleeps, and every wait in it is bounded.
#include <signal.h>

#include <atomic>
#include <initializer_list>

#include <terse/detail/test_hooks.hpp>

#include "signals.hpp"

namespace terse::detail {
namespace {

constexpr int kTerminationSignals[] = {SIGTERM, SIGINT, SIGHUP};
constexpr int kSignalCount = sizeof kTerminationSignals / sizeof kTerminationSignals[0];
// Longer than any flush_for_termination() takes, so a second signal waits
// for the first one's flush but never hangs.
constexpr int kSecondSignalWaitMs = 10'000;

bool g_ours[kSignalCount];  // installed by start(); only these are ours to remove
bool g_installed = false;

enum : int { kIdle, kFlushing, kFlushed };
std::atomic<int> g_flush_state{kIdle};
std::atomic<int> g_first_signal{0};  // the process dies of this one, however many follow

void die_of(int signal_number) {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signal_number, &action, nullptr);
  // Blocked while this handler runs: delivered, at its default action, as
  // soon as it returns.
  raise(signal_number);
}

void on_termination_signal(int signal_number, siginfo_t*, void*) {
  int idle = kIdle;
  if (g_flush_state.compare_exchange_strong(idle, kFlushing)) {
    g_first_signal.store(signal_number);
    flush_for_termination();
    g_flush_state.store(kFlushed);
  } else {
    // A second signal (say Ctrl-C pressed again, or a supervisor signalling
    // twice) must not cut the first one's flush short.
    wait_while([] { return g_flush_state.load() == kFlushing; }, kSecondSignalWaitMs);
    if (int first = g_first_signal.load()) signal_number = first;
  }
  die_of(signal_number);
}

bool is_default(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) == 0 && action.sa_handler == SIG_DFL;
}

}  // namespace

namespace {
std::atomic<int> g_deliverable_for_tests{0};
}  // namespace

AsyncSignalsBlocked::AsyncSignalsBlocked() noexcept {
  sigset_t signals;
  sigfillset(&signals);
  // Raised by the faulting thread itself (abort() too), and handled there
  // by the crash handler: blocked, the kernel would kill the process instead.
  for (int synchronous : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS, SIGABRT}) sigdelset(&signals, synchronous);
  if (int signal_number = g_deliverable_for_tests.load(std::memory_order_relaxed)) sigdelset(&signals, signal_number);
  pthread_sigmask(SIG_BLOCK, &signals, &previous_);
}

AsyncSignalsBlocked::~AsyncSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

void deliver_to_terse_threads_for_tests(int signal_number) noexcept {
  g_deliverable_for_tests.store(signal_number, std::memory_order_relaxed);
}

void install_termination_handlers() noexcept {
  if (g_installed) return;
  struct sigaction action {};
  action.sa_sigaction = on_termination_signal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int signal_number : kTerminationSignals) sigaddset(&action.sa_mask, signal_number);
  for (int i = 0; i < kSignalCount; ++i) {
    g_ours[i] = false;
    struct sigaction current {};
    // SIG_IGN or a handler of the application's own: its choice stands.
    if (sigaction(kTerminationSignals[i], nullptr, &current) != 0 || !is_default(current)) continue;
    struct sigaction replaced {};
    sigaction(kTerminationSignals[i], &action, &replaced);
    g_ours[i] = true;
    if (!is_default(replaced)) {  // another thread installed one in between
      sigaction(kTerminationSignals[i], &replaced, nullptr);
      g_ours[i] = false;
    }
  }
  g_installed = true;
}

void uninstall_termination_handlers() noexcept {
  if (!g_installed) return;
  for (int i = 0; i < kSignalCount; ++i) {
    if (!g_ours[i]) continue;
    g_ours[i] = false;
    struct sigaction current {};
    sigaction(kTerminationSignals[i], nullptr, &current);
    // A handler the application installed after start() stays.
    if ((current.sa_flags & SA_SIGINFO) == 0 || current.sa_sigaction != on_termination_signal) continue;
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    sigaction(kTerminationSignals[i], &action, nullptr);
  }
  g_installed = false;
}

}  // namespace terse::detail
