// signals.hpp on Windows, where what ends a process is not a signal: a crash is an exception
// nobody handled (an access violation, a stack overflow, an illegal instruction), abort()
// raises SIGABRT in the C library, and what stops a console program from outside (Ctrl-C,
// Ctrl-Break, closing its window, logoff, shutdown) is a console control event.
//
// As on POSIX, the handlers only ask the IO threads to write everything, wait a bounded time,
// then pass on: to the filter or handler that was there before, and in the end to what
// Windows would have done anyway, so exit codes and crash reports stay as they were.
#include <windows.h>

#include <atomic>
#include <exception>

#include <terse/detail/test_hooks.hpp>

#include "signals.hpp"

namespace terse::detail {
namespace {

bool g_crash_installed = false;
LPTOP_LEVEL_EXCEPTION_FILTER g_previous_filter = nullptr;
void (*g_previous_abort)(int) = SIG_DFL;
std::terminate_handler g_previous_terminate = nullptr;

// Runs on the crashing thread, on what is left of its stack (Windows keeps a guard page's
// worth for a stack overflow's handler); flush_for_crash() only stores and sleeps.
LONG WINAPI on_unhandled_exception(EXCEPTION_POINTERS* exception) {
  flush_for_crash();
  return g_previous_filter != nullptr ? g_previous_filter(exception) : EXCEPTION_CONTINUE_SEARCH;
}

void on_abort(int signal_number) {
  flush_for_crash();
  signal(signal_number, g_previous_abort);
  raise(signal_number);
}

[[noreturn]] void on_terminate() {
  flush_for_crash();
  if (g_previous_terminate != nullptr) g_previous_terminate();
  std::abort();
}

bool g_termination_installed = false;

// Called on a thread Windows starts for the event. FALSE passes the event on, in the end to
// the default handler, which ends the process with the exit code it always gives.
BOOL WINAPI on_console_event(DWORD event) {
  switch (event) {
    case CTRL_C_EVENT:
    case CTRL_BREAK_EVENT:
    case CTRL_CLOSE_EVENT:
    case CTRL_LOGOFF_EVENT:
    case CTRL_SHUTDOWN_EVENT:
      flush_for_termination();
      break;
    default:
      break;
  }
  return FALSE;
}

}  // namespace

void install_crash_handlers() noexcept {
  if (g_crash_installed) return;
  g_previous_filter = SetUnhandledExceptionFilter(on_unhandled_exception);
  g_previous_abort = signal(SIGABRT, on_abort);
  g_previous_terminate = std::set_terminate(on_terminate);
  g_crash_installed = true;
}

void uninstall_crash_handlers() noexcept {
  if (!g_crash_installed) return;
  // A filter or handler installed after ours stays: it may chain to ours, which then finds no
  // logger and passes on.
  LPTOP_LEVEL_EXCEPTION_FILTER current = SetUnhandledExceptionFilter(g_previous_filter);
  if (current != on_unhandled_exception) SetUnhandledExceptionFilter(current);
  void (*current_abort)(int) = signal(SIGABRT, g_previous_abort);
  if (current_abort != on_abort) signal(SIGABRT, current_abort);
  if (std::get_terminate() == on_terminate) std::set_terminate(g_previous_terminate);
  g_crash_installed = false;
}

// A handler the application adds later runs before ours and may keep the process alive by
// returning TRUE; ours then never runs, which is that application's choice, as a handler of
// its own is on POSIX.
void install_termination_handlers() noexcept {
  if (g_termination_installed) return;
  g_termination_installed = SetConsoleCtrlHandler(on_console_event, TRUE) != 0;
}

void uninstall_termination_handlers() noexcept {
  if (!g_termination_installed) return;
  SetConsoleCtrlHandler(on_console_event, FALSE);
  g_termination_installed = false;
}

// No signal masks: terse's threads take no console events (Windows starts a thread of its
// own for each) and no exception but their own.
AsyncSignalsBlocked::AsyncSignalsBlocked() noexcept = default;
AsyncSignalsBlocked::~AsyncSignalsBlocked() = default;

// The tests that stall the IO threads with a signal do not run on Windows.
void deliver_to_terse_threads_for_tests(int) noexcept {}

}  // namespace terse::detail
