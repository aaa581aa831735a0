#include "cli_helpers.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include <catch2/catch.hpp>


namespace terse::test {
namespace {

pid_t spawn(const std::vector<std::string>& args, int stdout_fd, int close_fd) {
  pid_t pid = spawn_process(args, stdout_fd, close_fd);
  REQUIRE(pid > 0);
  return pid;
}

int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) REQUIRE(errno == EINTR);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int run_writer(const std::vector<std::string>& args) {
  std::vector<std::string> argv{TERSE_LIVE_WRITER_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return reap(spawn(argv, -1, -1));
}

std::vector<std::string> cli(std::vector<std::string> args) {
  args.insert(args.begin(), TERSE_CLI_PATH);
  return args;
}

Child::Child(const std::vector<std::string>& argv) {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  pid_ = spawn(argv, fds[1], fds[0]);
  ::close(fds[1]);
  fd_ = fds[0];
}

Child::~Child() {
  if (pid_ > 0) stop();
  if (fd_ >= 0) ::close(fd_);
}

bool Child::read_some(std::chrono::milliseconds limit) {
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

void Child::close_output() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

int Child::wait(std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop();
  return -1;
}

void Child::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  reap(pid_);
  pid_ = -1;
}


}  // namespace terse::test
