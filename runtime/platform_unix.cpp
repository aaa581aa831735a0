// The part of platform.hpp that every Unix answers alike (POSIX calls,
// pthreads): built with platform_linux.cpp and with platform_posix.cpp.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <new>

#include "platform.hpp"

namespace terse::detail {

void thread_name(char* out, std::size_t size) noexcept {
  if (size == 0) return;
  if (pthread_getname_np(pthread_self(), out, size) != 0) out[0] = '\0';
}

namespace {
std::int64_t clock_ns(clockid_t clock) noexcept {
  timespec used{};
  if (clock_gettime(clock, &used) != 0) return 0;
  return std::int64_t{used.tv_sec} * 1'000'000'000 + used.tv_nsec;
}
}  // namespace

std::int64_t thread_cpu_ns(std::thread& thread) noexcept {
#if defined(__APPLE__)
  (void)thread;
  return 0;  // no POSIX clock of another thread
#else
  clockid_t clock;
  return pthread_getcpuclockid(thread.native_handle(), &clock) == 0 ? clock_ns(clock) : 0;
#endif
}

std::int64_t own_thread_cpu_ns() noexcept { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

std::size_t page_bytes() noexcept {
  static const std::size_t bytes = [] {
    long got = sysconf(_SC_PAGESIZE);
    return got > 0 ? static_cast<std::size_t>(got) : std::size_t{4096};
  }();
  return bytes;
}

bool use_signal_stack(char* memory, std::size_t bytes) noexcept {
  stack_t current{};
  if (sigaltstack(nullptr, &current) != 0 || (current.ss_flags & SS_DISABLE) == 0) return false;
  stack_t stack{};
  stack.ss_sp = memory;
  stack.ss_size = bytes;
  return sigaltstack(&stack, nullptr) == 0;
}

void leave_signal_stack() noexcept {
  stack_t off{};
  off.ss_flags = SS_DISABLE;
  sigaltstack(&off, nullptr);
}

void block_broken_pipe_signal() noexcept {
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
}

void take_broken_pipe_signal() noexcept {
  // sigwait() returns at once for a pending signal, and only then is it
  // called: the signal is blocked here, so it stays pending until taken.
  sigset_t pending;
  sigemptyset(&pending);
  if (sigpending(&pending) != 0 || sigismember(&pending, SIGPIPE) != 1) return;
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  int taken = 0;
  sigwait(&pipe_signal, &taken);
}

void at_fork(void (*before)(), void (*in_parent)(), void (*in_child)()) noexcept {
  pthread_atfork(before, in_parent, in_child);
}

namespace {
FileIdentity identity_from(const struct stat& status) noexcept {
  return {static_cast<std::uint64_t>(status.st_dev), static_cast<std::uint64_t>(status.st_ino),
          static_cast<std::uint64_t>(status.st_nlink)};
}
}  // namespace

bool descriptor_identity(int fd, FileIdentity& out) noexcept {
  struct stat status;
  if (::fstat(fd, &status) != 0) return false;
  out = identity_from(status);
  return true;
}

bool path_identity(const char* path, FileIdentity& out) noexcept {
  struct stat status;
  if (::stat(path, &status) != 0) return false;
  out = identity_from(status);
  return true;
}

int descriptor_at_or_above(int fd, int lowest) noexcept {
  int high = ::fcntl(fd, F_DUPFD_CLOEXEC, lowest);
  if (high < 0) return fd;  // the limit is lower: it stays where it is
  ::close(fd);
  return high;
}

bool descriptor_open(int fd) noexcept { return ::fcntl(fd, F_GETFD) >= 0; }

std::string host_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

// A pthread key's destructor runs once the thread's own thread_local
// destructors ran (and again for a key set by one of them). One key for
// all pending calls, which wait in a list: a key per call would run out.
namespace {
struct AtThreadEnd {
  void (*done)(void*) noexcept;
  void* arg;
  AtThreadEnd* next;
};
pthread_key_t thread_end_key() noexcept {
  static pthread_key_t key = [] {
    pthread_key_t k;
    auto run = [](void* list) {
      for (auto* item = static_cast<AtThreadEnd*>(list); item != nullptr;) {
        AtThreadEnd* next = item->next;
        item->done(item->arg);
        delete item;
        item = next;
      }
    };
    return pthread_key_create(&k, run) == 0 ? k : static_cast<pthread_key_t>(-1);
  }();
  return key;
}
}  // namespace

bool run_at_thread_end(void (*done)(void*) noexcept, void* arg) noexcept {
  pthread_key_t key = thread_end_key();
  if (key == static_cast<pthread_key_t>(-1)) return false;
  auto* item = new (std::nothrow) AtThreadEnd{done, arg, static_cast<AtThreadEnd*>(pthread_getspecific(key))};
  if (item == nullptr) return false;
  if (pthread_setspecific(key, item) != 0) {
    delete item;
    return false;
  }
  return true;
}

}  // namespace terse::detail
