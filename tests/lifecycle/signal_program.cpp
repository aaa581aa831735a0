// A program whose SIGALRM handler logs, every 50 µs, while its main thread
// logs flat out, and whose new threads are signalled in their first call:
// log calls that interrupt log calls of the same thread.
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <terse/terse.hpp>

namespace {

std::atomic<std::uint64_t> g_signals{0};

void on_alarm(int) {
  std::uint64_t n = g_signals.fetch_add(1, std::memory_order_relaxed) + 1;
  TERSE_INFO("signal {}", n);
}

void set_timer(long interval_us) {
  itimerval timer{};
  timer.it_interval.tv_usec = interval_us;
  timer.it_value.tv_usec = interval_us;
  setitimer(ITIMER_REAL, &timer, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  terse::Config config;
  config.directory = argv[1];
  config.name = "signals";
  config.read_environment = false;
  const long records = std::atol(argv[2]);
  const int new_threads = std::atoi(argv[3]);
  terse::start(config);
  struct sigaction action {};
  action.sa_handler = on_alarm;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGALRM, &action, nullptr);
  // The handler's call site runs once where it may allocate, as the README
  // asks of sites that log from a signal handler.
  raise(SIGALRM);
  set_timer(50);
  for (long i = 0; i < records; ++i) TERSE_INFO("main {}", i);
  set_timer(0);
  // New threads, signalled until their first call has returned: some
  // signals land while the thread makes its buffer.
  for (int t = 0; t < new_threads; ++t) {
    std::atomic<bool> done{false};
    std::atomic<bool> released{false};
    std::thread thread([&done, &released, t] {
      TERSE_INFO("new thread {}", t);
      done.store(true);
      while (!released.load()) {
      }
      // What is still pending is never handled: a handler that ran after
      // the thread's thread_local destructors would find no buffer to log to.
      sigset_t alarm;
      sigemptyset(&alarm);
      sigaddset(&alarm, SIGALRM);
      pthread_sigmask(SIG_BLOCK, &alarm, nullptr);
    });
    while (!done.load()) pthread_kill(thread.native_handle(), SIGALRM);
    released.store(true);
    thread.join();
  }
  terse::flush();
  std::printf("%llu\n", static_cast<unsigned long long>(g_signals.load()));
  terse::stop();
  return 0;
}
