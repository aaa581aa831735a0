#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <elf.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

extern char** environ;

namespace terse::test {
namespace {

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) REQUIRE(errno == EINTR);
  return status;
}

// A program built for this machine: the emulator runs it as it runs the
// test, where the kernel alone could not. Host programs (a shell) run as
// they are.
[[maybe_unused]] bool built_like_this_test(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  unsigned char header[EI_NIDENT + 4] = {};
  if (!file.read(reinterpret_cast<char*>(header), sizeof header)) return false;
  if (std::memcmp(header, ELFMAG, SELFMAG) != 0) return false;
  std::uint16_t machine;
  std::memcpy(&machine, header + EI_NIDENT + 2, sizeof machine);  // e_machine, after e_type
#if defined(__aarch64__)
  return machine == EM_AARCH64;
#elif defined(__x86_64__)
  return machine == EM_X86_64;
#else
  return false;
#endif
}

}  // namespace

const char* program_emulator() {
#if defined(TERSE_TEST_EMULATOR)
  return TERSE_TEST_EMULATOR;
#else
  return "";
#endif
}

int exit_code(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

pid_t spawn_process(const std::vector<std::string>& args, int stdout_fd, int close_fd, const std::string& stderr_path,
                    const std::string& stdin_path) {
  std::vector<std::string> storage = args;
  if (*program_emulator() != '\0' && !storage.empty() && built_like_this_test(storage[0]))
    storage.insert(storage.begin(), program_emulator());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, stdin_path.c_str(), O_RDONLY, 0);
  if (stdout_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
    posix_spawn_file_actions_addclose(&actions, stdout_fd);
  }
  if (close_fd >= 0) posix_spawn_file_actions_addclose(&actions, close_fd);
  if (!stderr_path.empty())
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? pid : -1;
}

int run_process(const std::vector<std::string>& args, int stdout_fd, const std::string& stderr_path,
                const std::string& stdin_path) {
  pid_t pid = spawn_process(args, stdout_fd, -1, stderr_path, stdin_path);
  REQUIRE(pid > 0);
  return wait_for(pid);
}

Process::Process(const std::vector<std::string>& argv, Output output, std::string stderr_path)
    : stderr_path_(std::move(stderr_path)) {
  if (output == Output::inherit) {
    pid_ = spawn_process(argv, -1, -1, stderr_path_);
  } else {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    pid_ = spawn_process(argv, fds[1], fds[0], stderr_path_);
    ::close(fds[1]);
    fd_ = fds[0];
  }
  REQUIRE(pid_ > 0);
}

Process::~Process() {
  if (pid_ > 0) kill_and_reap();
  if (fd_ >= 0) ::close(fd_);
}

void Process::kill_and_reap() {
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

bool Process::read_some(std::chrono::milliseconds limit) {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN, 0};
  int n = ::poll(&p, 1, static_cast<int>(limit.count()));
  if (n <= 0) return n == 0 || errno == EINTR;
  char buffer[65536];
  ssize_t got = ::read(fd_, buffer, sizeof buffer);
  if (got <= 0) return false;  // the child closed its output
  out.append(buffer, static_cast<std::size_t>(got));
  return true;
}

void Process::close_output() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Process::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

int Process::wait(std::chrono::milliseconds limit) {
  if (pid_ <= 0) return -1;
  auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return exit_code(status);
    }
    if (std::chrono::steady_clock::now() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill_and_reap();
  return -1;
}

void Process::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  wait_for(pid_);
  pid_ = -1;
}

// waitid, not waitpid: only waitid takes WNOWAIT (waitpid fails with EINVAL),
// which leaves the process unreaped for wait().
bool Process::running() const {
  if (pid_ <= 0) return false;
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
}

long Process::peak_rss_kib() const {
  if (pid_ <= 0) return 0;
  std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  return 0;
}

}  // namespace terse::test
