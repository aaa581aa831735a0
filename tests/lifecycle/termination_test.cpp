// SIGTERM, SIGINT and SIGHUP at their default action (`docker stop`,
// `systemctl stop`, Ctrl-C, a closed terminal): every record logged before
// the signal is in the file, and the process still dies of that signal. A
// handler of the application's own, or SIG_IGN, is left as it is.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace terse::test;
using namespace std::chrono_literals;

namespace {

// What the child had logged for certain, as it published it.
std::uint64_t logged_through(const std::string& seq_path) {
  std::uint64_t value = 0;
  int fd = ::open(seq_path.c_str(), O_RDONLY);
  if (fd >= 0) {
    if (::pread(fd, &value, sizeof value, 0) != static_cast<ssize_t>(sizeof value)) value = 0;
    ::close(fd);
  }
  return value;
}

int wait_for_end(pid_t pid) {
  int status = 0;
  for (auto until = std::chrono::steady_clock::now() + 20s; std::chrono::steady_clock::now() < until;) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(5ms);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  FAIL("the child did not end within 20 s of the signal");
  return status;
}

struct Outcome {
  int status = 0;
  std::uint64_t logged = 0;  // records 0 .. logged-1 had been logged when it ended
};

// Runs the child until it has logged a good many records, then sends it `signal_number`.
Outcome signal_the_writer(const TempDir& dir, int signal_number, const std::string& mode,
                          const std::string& stderr_path = {}) {
  std::string seq_path = dir.path() + "/logged";
  write_file(seq_path, std::string(sizeof(std::uint64_t), '\0'));
  pid_t pid = spawn_process({TERSE_TERMINATED_CHILD, dir.path() + "/logs", seq_path, mode}, -1, -1, stderr_path);
  REQUIRE(pid > 0);
  std::uint64_t enough = mode == "paced" ? scaled(20'000, 5'000) : scaled(100'000, 20'000);
  for (auto until = std::chrono::steady_clock::now() + 10s;
       logged_through(seq_path) < enough && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(2ms);
  }
  REQUIRE(logged_through(seq_path) > 0);
  ::kill(pid, signal_number);
  Outcome outcome;
  outcome.status = wait_for_end(pid);
  outcome.logged = logged_through(seq_path);
  return outcome;
}

// The records are 0, 1, 2 ... without a gap, at least up to `logged`.
void check_nothing_lost(const std::string& directory, std::uint64_t logged) {
  Decoded decoded = decode_dir(directory);
  for (const auto& s : decoded.summaries) CHECK(s.damaged == 0);
  std::uint64_t next = 0;
  for (const auto& line : decoded.lines) {
    unsigned long long seq = 0;
    if (std::sscanf(line.message.c_str(), "record %llu of the writer", &seq) != 1) continue;
    if (seq != next) FAIL_CHECK("record " << seq << " follows record " << next - 1);
    next = seq + 1;
  }
  INFO("logged up to record " << logged - 1 << ", the file ends at record " << next - 1);
  CHECK(next >= logged);
}

class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnvironment() { ::unsetenv(name_); }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  const char* name_;
};

}  // namespace

TEST_CASE("SIGTERM, SIGINT and SIGHUP at their default write every record, then end the process as before") {
  for (int signal_number : {SIGTERM, SIGINT, SIGHUP}) {
    INFO("signal " << signal_number);
    TempDir dir;
    Outcome outcome = signal_the_writer(dir, signal_number, "default");
    REQUIRE(WIFSIGNALED(outcome.status));
    CHECK(WTERMSIG(outcome.status) == signal_number);
    check_nothing_lost(dir.path() + "/logs", outcome.logged);
  }
}

TEST_CASE("docker stop without files: every record logged before SIGTERM is on the JSON console") {
  TempDir dir;
  std::string console_path = dir.path() + "/stderr";
  Outcome outcome;
  {
    // The container set-up: no files, JSON lines on stderr.
    ScopedEnvironment no_files("TERSE_DIR", "");
    ScopedEnvironment json("TERSE_CONSOLE", "json");
    outcome = signal_the_writer(dir, SIGTERM, "paced", console_path);
  }
  REQUIRE(WIFSIGNALED(outcome.status));
  CHECK(WTERMSIG(outcome.status) == SIGTERM);
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/logs"));
  std::uint64_t next = 0;
  for (const auto& line : split_lines(read_file(console_path))) {
    unsigned long long seq = 0;
    if (std::sscanf(
            line.c_str(),
            R"({"time":"%*[^"]","level":"info","thread":%*u,"file":"%*[^"]","line":%*u,"message":"record %llu of the writer")",
            &seq) != 1) {
      FAIL_CHECK("not a record of the child: " << line);
      continue;
    }
    if (seq != next) FAIL_CHECK("record " << seq << " follows record " << next - 1);
    next = seq + 1;
  }
  INFO("logged up to record " << outcome.logged - 1 << ", the console ends at record " << next - 1);
  CHECK(next >= outcome.logged);
}

TEST_CASE("SIGTERM while stop() writes the last records waits for them") {
  TempDir dir;
  std::string seq_path = dir.path() + "/logged";
  write_file(seq_path, std::string(sizeof(std::uint64_t), '\0'));
  pid_t pid = spawn_process({TERSE_TERMINATED_CHILD, dir.path() + "/logs", seq_path, "during-stop"});
  REQUIRE(pid > 0);
  int status = wait_for_end(pid);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  CHECK(logged_through(seq_path) == 200'000);
  check_nothing_lost(dir.path() + "/logs", 200'000);
}

TEST_CASE("an application's own SIGTERM handler is left in place and runs") {
  TempDir dir;
  Outcome outcome = signal_the_writer(dir, SIGTERM, "own-handler");
  REQUIRE(WIFEXITED(outcome.status));
  CHECK(WEXITSTATUS(outcome.status) == 42);
  check_nothing_lost(dir.path() + "/logs", outcome.logged);
  Decoded decoded = decode_dir(dir.path() + "/logs");
  REQUIRE(!decoded.lines.empty());
  CHECK(decoded.lines.back().message == "asked to stop");
}

namespace {

struct sigaction disposition(int signal_number) {
  struct sigaction current {};
  sigaction(signal_number, nullptr, &current);
  return current;
}

bool is_default(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) == 0 && action.sa_handler == SIG_DFL;
}

}  // namespace

TEST_CASE("start() takes over a termination signal only from its default action, and stop() gives it back") {
  TempDir dir;
  struct sigaction saved = disposition(SIGHUP);

  ::signal(SIGHUP, SIG_DFL);
  terse::start(test_config(dir.path()));
  CHECK((disposition(SIGHUP).sa_flags & SA_SIGINFO) != 0);
  terse::stop();
  CHECK(is_default(disposition(SIGHUP)));

  ::signal(SIGHUP, SIG_IGN);
  terse::start(test_config(dir.path()));
  CHECK(disposition(SIGHUP).sa_handler == SIG_IGN);
  terse::stop();
  CHECK(disposition(SIGHUP).sa_handler == SIG_IGN);

  ::signal(SIGHUP, SIG_DFL);
  auto config = test_config(dir.path());
  config.termination_signals = false;
  terse::start(config);
  CHECK(is_default(disposition(SIGHUP)));
  terse::stop();

  // A handler the application installs while terse runs stays after stop().
  terse::start(test_config(dir.path()));
  auto own = [](int) {};
  ::signal(SIGHUP, own);
  terse::stop();
  CHECK(disposition(SIGHUP).sa_handler == +own);

  sigaction(SIGHUP, &saved, nullptr);
}
