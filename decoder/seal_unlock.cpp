#include "seal_unlock.hpp"

#ifndef _WIN32
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <terse/portable_libc.hpp>

extern char** environ;
#endif

namespace terse::seal {

#ifdef _WIN32

Result<std::string> unlock_with_ssh_keygen(std::string_view, const std::string& what) {
  return Failure{what +
                 ": the private key is protected by a passphrase, which terse on Windows cannot ask for; "
                 "give it a copy without one (ssh-keygen -p -N \"\" -f COPY)"};
}

#else

namespace {

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    auto n = write_some(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string read_all(int fd) {
  std::string text;
  char chunk[4096];
  for (;;) {
    auto n = read_some(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
  }
  wipe(chunk, sizeof chunk);
  return text;
}

// A descriptor that the child's standard descriptors cannot overwrite: in a process that
// closed its standard input, say, a new descriptor can be 0, which ssh-keygen's /dev/null
// would then replace.
int above_standard(int fd) {
  if (fd < 0 || fd > 2) return fd;
  int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  int error = errno;
  ::close(fd);
  errno = error;
  return moved;
}

// Where ssh-keygen rewrites the copy: a file only this user can read, named
// by `path`, gone (and wiped) when the copy goes.
class PrivateCopy {
 public:
  PrivateCopy() {
#ifdef __linux__
    // In memory: the unlocked key never reaches a disk.
    fd_ = above_standard(::memfd_create("terse-key", MFD_CLOEXEC));
    if (fd_ >= 0) {
      path_ = "/dev/fd/" + std::to_string(fd_);
      inherited_ = true;
      return;
    }
#endif
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/terse-key-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) return;
    folder_ = pattern;
    path_ = folder_ + "/key";
    fd_ = above_standard(open_path(path_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600));
  }
  ~PrivateCopy() {
    if (fd_ >= 0) {
      // ssh-keygen truncates and rewrites the file it was given, so this is the unlocked key.
      struct stat st {};
      if (::fstat(fd_, &st) == 0 && st.st_size > 0 && ::lseek(fd_, 0, SEEK_SET) == 0)
        (void)write_all(fd_, std::string(static_cast<std::size_t>(st.st_size), '\0'));
      (void)::ftruncate(fd_, 0);
      ::close(fd_);
    }
    if (!folder_.empty()) {
      ::unlink(path_.c_str());
      ::rmdir(folder_.c_str());
    }
  }
  PrivateCopy(const PrivateCopy&) = delete;
  PrivateCopy& operator=(const PrivateCopy&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // ssh-keygen opens `path` itself: for /dev/fd/N, N must stay open in it.
  bool inherited() const { return inherited_; }

 private:
  int fd_ = -1;
  std::string path_;
  std::string folder_;
  bool inherited_ = false;
};

// ssh-keygen's last words on stderr, with the copy's name replaced by the key file's.
std::string last_line(std::string text, const std::string& copy_path, const std::string& what) {
  for (auto at = text.find(copy_path); at != std::string::npos; at = text.find(copy_path, at + what.size()))
    text.replace(at, copy_path.size(), what);
  std::string line;
  std::size_t begin = 0;
  while (begin < text.size()) {
    auto end = text.find_first_of("\r\n", begin);
    if (end == std::string::npos) end = text.size();
    if (end > begin) line = text.substr(begin, end - begin);
    begin = end + 1;
  }
  return line;
}

}  // namespace

Result<std::string> unlock_with_ssh_keygen(std::string_view locked_text, const std::string& what) {
  const std::string locked = what + ": the private key is protected by a passphrase";
  PrivateCopy copy;
  if (!copy.ok() || !write_all(copy.fd(), locked_text) || ::fchmod(copy.fd(), 0600) != 0)
    return Failure{locked +
                   ", and terse could not make a private copy for ssh-keygen to unlock: " + std::strerror(errno)};

  int err_pipe[2] = {-1, -1};
#ifdef __linux__
  int piped = ::pipe2(err_pipe, O_CLOEXEC);
#else
  int piped = ::pipe(err_pipe);
  for (int fd : err_pipe) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
#endif
  if (piped == 0)
    for (int& fd : err_pipe) fd = above_standard(fd);
  if (piped != 0 || err_pipe[0] < 0 || err_pipe[1] < 0) {
    for (int fd : err_pipe)
      if (fd >= 0) ::close(fd);
    return Failure{locked + "; cannot run ssh-keygen: " + std::strerror(errno)};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // No standard input: a prompt goes to the terminal, or SSH_ASKPASS answers it, and the
  // caller's input (`terse cat -` reads a log there) stays the caller's. "Key has comment"
  // and the like are not the caller's output either.
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  // Same descriptor: its close-on-exec is cleared (POSIX.1-2024; glibc 2.29, macOS, musl).
  if (copy.inherited()) posix_spawn_file_actions_adddup2(&actions, copy.fd(), copy.fd());
  std::vector<std::string> args{"ssh-keygen", "-p", "-N", "", "-f", copy.path()};
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  int spawned = ::posix_spawnp(&pid, "ssh-keygen", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(err_pipe[1]);
  if (spawned != 0) {
    ::close(err_pipe[0]);
    return Failure{locked +
                   "; terse unlocks such keys with ssh-keygen (Debian: openssh-client), which could not run: " +
                   std::strerror(spawned)};
  }
  std::string said = read_all(err_pipe[0]);
  ::close(err_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string why = last_line(said, copy.path(), what);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) why = "ssh-keygen (Debian: openssh-client) was not found";
    if (why.empty()) why = "it failed";
    return Failure{locked + ", and ssh-keygen did not unlock it: " + why};
  }
  if (::lseek(copy.fd(), 0, SEEK_SET) != 0) return Failure{locked + "; cannot read the unlocked copy back"};
  return read_all(copy.fd());
}

#endif

}  // namespace terse::seal
