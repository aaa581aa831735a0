// A process that dies of a fatal signal or std::terminate still has every
// record it logged in its file, and dies the way it would have anyway.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/syscall.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <terse/detail/test_hooks.hpp>
#include <terse/seal.hpp>

#include "test_support.hpp"

using namespace terse::test;

namespace {

constexpr int kThreads = 2;
constexpr int kPerThread = 5000;

// Logs from several threads, then dies by `crash` without flush or stop.
int crash_child(const std::string& directory, const std::function<void()>& crash, bool handler = true,
                const std::function<void()>& before_start = {}, const std::string& encrypt_to = {}) {
  pid_t pid = ::fork();
  if (pid == 0) {
    // The test runner's own fatal-signal handlers are not the subject here.
    for (int signal_number : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM}) ::signal(signal_number, SIG_DFL);
    std::set_terminate(nullptr);
    if (before_start) before_start();
    terse::detail::deliver_to_terse_threads_for_tests(SIGUSR1);  // stall_io_threads()
    terse::Config config = test_config(directory);
    config.crash_handler = handler;
    config.encrypt_to = encrypt_to;
    terse::start(config);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t] {
        for (int i = 0; i < kPerThread; ++i) TERSE_INFO("thread {} record {}", t, i);
      });
    }
    for (auto& thread : threads) thread.join();
    TERSE_CRITICAL("about to crash {}", 1);
    crash();
    std::_Exit(99);  // not reached
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

void check_all_records(const std::string& directory) {
  Decoded decoded = decode_dir(directory);
  REQUIRE(decoded.lines.size() == kThreads * kPerThread + 1);
  CHECK(decoded.lines.back().message == "about to crash 1");
}

int g_zero = 0;

}  // namespace

TEST_CASE("a segmentation fault writes every record, then dies of SIGSEGV") {
  TempDir dir;
  int status = crash_child(dir.path(), [] {
    volatile int* null = nullptr;
    *null = 1;
  });
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGSEGV);
  check_all_records(dir.path());
}

TEST_CASE("abort() writes every record, then dies of SIGABRT") {
  TempDir dir;
  int status = crash_child(dir.path(), [] { std::abort(); });
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
  check_all_records(dir.path());
}

TEST_CASE("std::terminate writes every record, then aborts") {
  TempDir dir;
  int status = crash_child(dir.path(), [] { std::terminate(); });
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
  check_all_records(dir.path());
}

TEST_CASE("SIGBUS, SIGILL and SIGFPE write every record, then die of their signal") {
  for (int signal_number : {SIGBUS, SIGILL, SIGFPE}) {
    INFO("signal " << signal_number);
    TempDir dir;
    int status = crash_child(dir.path(), [signal_number] {
      if (signal_number == SIGFPE) {
        volatile int zero = g_zero;
        std::printf("%d\n", 1 / zero);  // a real division fault on x86
      }
      ::raise(signal_number);
    });
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == signal_number);
    check_all_records(dir.path());
  }
}

TEST_CASE("a handler installed before start() still runs after the crash flush") {
  TempDir dir;
  int status = crash_child(
      dir.path(), [] { ::raise(SIGSEGV); }, true,
      [] {
        struct sigaction action {};
        action.sa_handler = [](int) { std::_Exit(42); };
        sigemptyset(&action.sa_mask);
        sigaction(SIGSEGV, &action, nullptr);
      });
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 42);
  check_all_records(dir.path());
}

TEST_CASE("with crash_handler off, start() leaves the signal handlers alone") {
  TempDir dir;
  struct sigaction before {};
  sigaction(SIGSEGV, nullptr, &before);
  auto config = test_config(dir.path());
  config.crash_handler = false;
  terse::start(config);
  struct sigaction during {};
  sigaction(SIGSEGV, nullptr, &during);
  terse::stop();
  CHECK(during.sa_handler == before.sa_handler);
  CHECK((during.sa_flags & SA_SIGINFO) == (before.sa_flags & SA_SIGINFO));

  config.crash_handler = true;
  terse::start(config);
  sigaction(SIGSEGV, nullptr, &during);
  terse::stop();
  struct sigaction after {};
  sigaction(SIGSEGV, nullptr, &after);
  CHECK((during.sa_flags & SA_SIGINFO) != 0);    // installed while running
  CHECK(after.sa_handler == before.sa_handler);  // and put back by stop()
}

TEST_CASE("SIGKILL keeps everything flush() confirmed, and the file stays readable") {
  TempDir dir;
  int status = crash_child(dir.path(), [] {
    terse::flush();  // everything so far is confirmed
    for (int i = 0; i < 100000; ++i) TERSE_INFO("unconfirmed {}", i);
    ::kill(::getpid(), SIGKILL);
  });
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  Decoded decoded = decode_dir(dir.path());
  // Damage-free up to where the writer stopped; a torn tail is just the end.
  for (const auto& s : decoded.summaries) CHECK(s.damaged == 0);
  REQUIRE(decoded.lines.size() >= kThreads * kPerThread + 1);
  CHECK(decoded.lines[kThreads * kPerThread].message == "about to crash 1");
}

namespace {

// Parks the calling thread for good: how a stuck IO thread looks.
void park(int) {
  for (;;) ::pause();
}

// Stops the logger's IO threads dead, as a deadlock or a crash in them would.
void stall_io_threads() {
  struct sigaction action {};
  action.sa_handler = park;
  sigemptyset(&action.sa_mask);
  sigaction(SIGUSR1, &action, nullptr);
  for (const char* name : {"terse-io", "terse-write"}) {
    for (int id : threads_named(name)) ::syscall(SYS_tgkill, ::getpid(), id, SIGUSR1);
  }
  ::usleep(50'000);  // let them enter the handler
}

}  // namespace

TEST_CASE("when the IO threads cannot help, the crash handler writes the records itself") {
  TempDir dir;
  int status = crash_child(dir.path(), [] {
    terse::flush();
    stall_io_threads();
    for (int i = 0; i < 500; ++i) TERSE_ERROR("after the IO threads stopped {} {:.1f}", i, i * 0.5);
    ::raise(SIGSEGV);
  });
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGSEGV);
  Decoded decoded = decode_dir(dir.path());
  for (const auto& s : decoded.summaries) CHECK(s.damaged == 0);
  REQUIRE(decoded.lines.size() == kThreads * kPerThread + 1 + 500);
  for (int i = 0; i < 500; ++i) {
    const auto& line = decoded.lines[kThreads * kPerThread + 1 + static_cast<std::size_t>(i)];
    CHECK(line.message == fmt::format("after the IO threads stopped {} {:.1f}", i, i * 0.5));
  }
}

namespace {

// Deep enough to overflow any thread stack; the volatile frame keeps the
// compiler from turning the recursion into a loop.
int overflow_stack(int depth) {
  volatile char frame[1024];
  frame[0] = static_cast<char>(depth);
  // Never true (the stack runs out long before depth wraps); it tells the
  // compiler the recursion ends, which it would otherwise warn about.
  if (depth < 0) return 0;
  return overflow_stack(depth + 1) + frame[0];
}

}  // namespace

TEST_CASE("a thread that overflows its stack still gets the log written") {
  TempDir dir;
  int status = crash_child(dir.path(), [] {
    std::thread([] {
      TERSE_WARN("recursing from a logging thread {}", 1);  // its first call sets up its signal stack
      std::printf("%d\n", overflow_stack(0));
    }).join();
  });
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGSEGV);
  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.lines.size() == kThreads * kPerThread + 2);
  CHECK(decoded.lines.back().message == "recursing from a logging thread 1");
}

#ifdef TERSE_TEST_SEALED

TEST_CASE("a sealed file: a crash closes it with its end frame, and every record opens with the key") {
  TempDir keys, dir;
  auto [public_key, secret] = sealing_keys(keys);
  for (int signal_number : {SIGSEGV, SIGTERM}) {
    INFO("signal " << signal_number);
    TempDir logs;
    int status = crash_child(
        logs.path(), [signal_number] { ::raise(signal_number); }, true, {}, public_key);
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == signal_number);
    std::string bytes;
    Decoded decoded = decode_sealed_dir(logs.path(), secret, bytes);
    for (const auto& p : decoded.problems) FAIL_CHECK(p.what);
    for (const auto& s : decoded.summaries) CHECK(s.intact());
    REQUIRE(decoded.lines.size() == kThreads * kPerThread + 1);
    CHECK(decoded.lines.back().message == "about to crash 1");
    CHECK(bytes.find("about to crash") == std::string::npos);
  }
}

TEST_CASE("a sealed file: when the IO threads cannot help, the crash handler seals what it writes") {
  TempDir keys, dir;
  auto [public_key, secret] = sealing_keys(keys);
  int status = crash_child(
      dir.path(),
      [] {
        terse::flush();
        stall_io_threads();
        for (int i = 0; i < 500; ++i) TERSE_ERROR("after the IO threads stopped {} {:.1f}", i, i * 0.5);
        ::raise(SIGSEGV);
      },
      true, {}, public_key);
  REQUIRE(WIFSIGNALED(status));
  std::string bytes;
  Decoded decoded = decode_sealed_dir(dir.path(), secret, bytes);
  for (const auto& s : decoded.summaries) {
    CHECK(s.damaged == 0);
    CHECK(s.tampered == 0);
  }
  REQUIRE(decoded.lines.size() == kThreads * kPerThread + 1 + 500);
  CHECK(decoded.lines.back().message == "after the IO threads stopped 499 249.5");
  // The crash path's frames are stored uncompressed: in the clear, the text would be there.
  CHECK(bytes.find("after the IO threads stopped") == std::string::npos);
}

#endif
