// Programs a test starts: the CLI, the live writer, `terse ship`. One
// starter, and one handle for a program that runs while the test goes on.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace terse::test {

// The emulator a cross build's tests run under (CMAKE_CROSSCOMPILING_EMULATOR),
// or "" when they run natively. A container may have no binfmt_misc entry for
// the target, so a test's own exec of a program built here would fail; the
// starters below put the emulator in front of such a program themselves.
const char* program_emulator();

// Starts a program (args[0] is its path) with stdin from `stdin_path`,
// stdout on `stdout_fd` (kept when negative), `close_fd` closed in the child,
// stderr into `stderr_path` when given, and SIGPIPE at its default action as
// under a shell. Returns the pid, or -1 when it cannot start.
pid_t spawn_process(const std::vector<std::string>& args, int stdout_fd = -1, int close_fd = -1,
                    const std::string& stderr_path = {}, const std::string& stdin_path = "/dev/null");

// Runs a program, started as spawn_process does, to its end: its status as
// waitpid() gives it. A test fails at once when it cannot start.
int run_process(const std::vector<std::string>& args, int stdout_fd = -1, const std::string& stderr_path = {},
                const std::string& stdin_path = "/dev/null");

// The exit code in a waitpid() status, or 128 + the signal that ended it.
int exit_code(int wait_status);

// A program running beside the test. A test fails at once when it cannot
// start; one still running when the object goes is killed (SIGKILL).
class Process {
 public:
  enum class Output {
    inherit,  // stdout is the test's own
    pipe,     // stdout goes into a pipe that read_until() reads into `out`
  };
  explicit Process(const std::vector<std::string>& argv, Output output = Output::inherit, std::string stderr_path = {});
  // stderr into a file, for stderr_text().
  Process(const std::vector<std::string>& argv, std::string stderr_path)
      : Process(argv, Output::inherit, std::move(stderr_path)) {}
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // Output::pipe: reads until `done(output so far)` holds or the time is
  // up; true when it held.
  template <typename Done>
  bool read_until(Done done, std::chrono::milliseconds limit) {
    auto until = std::chrono::steady_clock::now() + limit;
    while (!done(out)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !read_some(left)) return done(out);
    }
    return true;
  }
  // Closes the test's end of the pipe, as a pager that quits does.
  void close_output();

  void signal(int sig) const;
  // The exit code (128 + signal when killed), or -1 when it did not end in
  // time (then it is killed).
  int wait(std::chrono::milliseconds limit);
  // Stops it with SIGTERM and waits for it to end.
  void stop();
  // Not ended yet; left unreaped for wait().
  bool running() const;
  // Peak resident memory so far, from /proc (0 once it has ended).
  long peak_rss_kib() const;
  std::string stderr_text() const;
  pid_t pid() const { return pid_; }

  std::string out;  // Output::pipe: what read_until() has read

 private:
  bool read_some(std::chrono::milliseconds limit);
  void kill_and_reap();

  pid_t pid_ = -1;
  int fd_ = -1;
  std::string stderr_path_;
};

}  // namespace terse::test
