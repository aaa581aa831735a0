// Logs numbered records as fast as it can until a signal ends it. After each
// call returns, the number is published in a shared file, so the test knows
// which records were logged when the signal came.
// Usage: terminated_child DIRECTORY SEQ_FILE default|own-handler|during-stop|paced
// during-stop: logs a fixed number of records and signals itself while
// terse::stop() writes them. paced: logs at most 100 records a millisecond,
// a rate a console keeps up with (TERSE_DIR and TERSE_CONSOLE apply).
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <thread>

#include <terse/terse.hpp>

namespace {

volatile sig_atomic_t g_asked_to_stop = 0;

void on_sigterm(int) { g_asked_to_stop = 1; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  // Whatever the test runner left: the case under test is the default action.
  sigset_t signals;
  sigemptyset(&signals);
  for (int signal_number : {SIGTERM, SIGINT, SIGHUP}) {
    ::signal(signal_number, SIG_DFL);
    sigaddset(&signals, signal_number);
  }
  sigprocmask(SIG_UNBLOCK, &signals, nullptr);
  bool own_handler = std::strcmp(argv[3], "own-handler") == 0;
  if (own_handler) {
    struct sigaction action {};
    action.sa_handler = on_sigterm;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
  }
  int fd = ::open(argv[2], O_RDWR);
  if (fd < 0 || ::ftruncate(fd, sizeof(std::uint64_t)) != 0) return 3;
  void* shared = ::mmap(nullptr, sizeof(std::uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (shared == MAP_FAILED) return 4;
  // The parent reads the word from the file. A lock-free std::atomic<std::uint64_t> has the
  // word's layout and works across processes (libc++ 14 has no std::atomic_ref).
  auto& logged_through = *new (shared) std::atomic<std::uint64_t>(0);

  terse::Config config;
  config.directory = argv[1];
  config.name = "term";
  terse::start(config);
  if (std::strcmp(argv[3], "during-stop") == 0) {
    for (std::uint64_t seq = 0; seq < 200'000; ++seq) {
      TERSE_INFO("record {} of {}", seq, "the writer");
      logged_through.store(seq + 1, std::memory_order_release);
    }
    std::thread signaller([] {
      ::usleep(1000);
      ::kill(::getpid(), SIGTERM);
    });
    terse::stop();
    signaller.join();
    for (;;) ::pause();  // SIGTERM, at its default action again, ends it here at the latest
  }
  bool paced = std::strcmp(argv[3], "paced") == 0;
  for (std::uint64_t seq = 0; !g_asked_to_stop; ++seq) {
    TERSE_INFO("record {} of {}", seq, "the writer");
    logged_through.store(seq + 1, std::memory_order_release);  // 0: nothing logged yet
    if (paced && seq % 100 == 99) ::usleep(1000);
  }
  TERSE_INFO("asked to stop");
  terse::stop();
  return 42;
}
