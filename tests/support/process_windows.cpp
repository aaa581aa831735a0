// process.hpp on Windows: CreateProcess, with the child's standard handles given as inheritable
// handles. A pid_t is the process id; the handle that waits for it is kept beside it. The
// programs a test starts are Windows programs like the test itself, so under Wine they need no
// emulator in front: Wine runs them as it runs the test.
#include "process.hpp"

#include <windows.h>

#include <fcntl.h>
#include <io.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include <catch2/catch.hpp>

namespace terse::test {
namespace {

std::mutex g_mutex;
std::map<pid_t, HANDLE> g_processes;  // the handle of each process started and not yet waited for

HANDLE handle_of(pid_t pid) {
  std::lock_guard lock(g_mutex);
  auto found = g_processes.find(pid);
  return found == g_processes.end() ? nullptr : found->second;
}

void forget(pid_t pid) {
  std::lock_guard lock(g_mutex);
  auto found = g_processes.find(pid);
  if (found == g_processes.end()) return;
  CloseHandle(found->second);
  g_processes.erase(found);
}

// One argument as the C runtime's parser reads it back: quoted, with the backslashes before
// a quote (and before the closing one) doubled.
void append_quoted(std::string& line, const std::string& arg) {
  if (!arg.empty() && arg.find_first_of(" \t\n\v\"") == std::string::npos) {
    line += arg;
    return;
  }
  line += '"';
  std::size_t backslashes = 0;
  for (char c : arg) {
    if (c == '\\') {
      ++backslashes;
      continue;
    }
    line.append(c == '"' ? backslashes * 2 + 1 : backslashes, '\\');
    backslashes = 0;
    line += c;
  }
  line.append(backslashes * 2, '\\');
  line += '"';
}

HANDLE inheritable(HANDLE handle) {
  HANDLE copy = nullptr;
  DuplicateHandle(GetCurrentProcess(), handle, GetCurrentProcess(), &copy, 0, TRUE, DUPLICATE_SAME_ACCESS);
  return copy;
}

HANDLE open_inheritable(const std::string& path, bool for_writing) {
  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  return CreateFileA(path == "/dev/null" ? "NUL" : path.c_str(), for_writing ? GENERIC_WRITE : GENERIC_READ,
                     FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, &inherit,
                     for_writing ? CREATE_ALWAYS : OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
}

int wait_for(pid_t pid, DWORD limit_ms) {
  HANDLE process = handle_of(pid);
  if (process == nullptr || WaitForSingleObject(process, limit_ms) != WAIT_OBJECT_0) return -1;
  DWORD code = 0;
  GetExitCodeProcess(process, &code);
  forget(pid);
  return static_cast<int>(code);
}

}  // namespace

const char* program_emulator() { return ""; }

int exit_code(int wait_status) { return wait_status; }

pid_t spawn_process(const std::vector<std::string>& args, int stdout_fd, int close_fd, const std::string& stderr_path,
                    const std::string& stdin_path) {
  (void)close_fd;  // nothing is inherited but the three handles given below
  std::string line;
  for (const auto& arg : args) {
    if (!line.empty()) line += ' ';
    append_quoted(line, arg);
  }
  STARTUPINFOA startup{};
  startup.cb = sizeof startup;
  startup.dwFlags = STARTF_USESTDHANDLES;
  startup.hStdInput = open_inheritable(stdin_path, false);
  startup.hStdOutput = inheritable(stdout_fd >= 0 ? reinterpret_cast<HANDLE>(_get_osfhandle(stdout_fd))
                                                  : GetStdHandle(STD_OUTPUT_HANDLE));
  startup.hStdError =
      stderr_path.empty() ? inheritable(GetStdHandle(STD_ERROR_HANDLE)) : open_inheritable(stderr_path, true);
  PROCESS_INFORMATION started{};
  // Under Wine a start now and then fails while other tests start programs too (seen once in
  // CI, cli_filters_test): a few tries before the test fails, each failure said on stderr.
  bool ok = false;
  for (int tries = 0; !ok && tries < 3; ++tries) {
    if (tries > 0) {
      std::fprintf(stderr, "CreateProcess of %s failed (error %lu); trying again\n", args[0].c_str(), GetLastError());
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ok = CreateProcessA(nullptr, line.data(), nullptr, nullptr, TRUE, 0, nullptr, nullptr, &startup, &started);
  }
  if (!ok) std::fprintf(stderr, "CreateProcess of %s failed (error %lu)\n", args[0].c_str(), GetLastError());
  for (HANDLE handle : {startup.hStdInput, startup.hStdOutput, startup.hStdError}) {
    if (handle != nullptr && handle != INVALID_HANDLE_VALUE) CloseHandle(handle);
  }
  if (!ok) return -1;
  CloseHandle(started.hThread);
  auto pid = static_cast<pid_t>(started.dwProcessId);
  std::lock_guard lock(g_mutex);
  g_processes[pid] = started.hProcess;
  return pid;
}

int run_process(const std::vector<std::string>& args, int stdout_fd, const std::string& stderr_path,
                const std::string& stdin_path) {
  pid_t pid = spawn_process(args, stdout_fd, -1, stderr_path, stdin_path);
  REQUIRE(pid > 0);
  return wait_for(pid, INFINITE);
}

Process::Process(const std::vector<std::string>& argv, Output output, std::string stderr_path)
    : stderr_path_(std::move(stderr_path)) {
  if (output == Output::inherit) {
    pid_ = spawn_process(argv, -1, -1, stderr_path_);
  } else {
    int fds[2];
    REQUIRE(_pipe(fds, 1 << 16, _O_BINARY | _O_NOINHERIT) == 0);
    pid_ = spawn_process(argv, fds[1], fds[0], stderr_path_);
    _close(fds[1]);
    fd_ = fds[0];
  }
  REQUIRE(pid_ > 0);
}

Process::~Process() {
  if (pid_ > 0) kill_and_reap();
  if (fd_ >= 0) _close(fd_);
}

void Process::kill_and_reap() {
  if (HANDLE process = handle_of(pid_)) {
    TerminateProcess(process, 128 + 9);
    WaitForSingleObject(process, INFINITE);
  }
  forget(pid_);
  pid_ = -1;
}

bool Process::read_some(std::chrono::milliseconds limit) {
  if (fd_ < 0) return false;
  // A pipe cannot be waited on with a time limit: look what is there until something is.
  auto pipe = reinterpret_cast<HANDLE>(_get_osfhandle(fd_));
  auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    DWORD available = 0;
    if (!PeekNamedPipe(pipe, nullptr, 0, nullptr, &available, nullptr)) return false;  // the child closed it
    if (available > 0) break;
    if (std::chrono::steady_clock::now() >= until) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  char buffer[65536];
  int got = _read(fd_, buffer, sizeof buffer);
  if (got <= 0) return false;
  out.append(buffer, static_cast<std::size_t>(got));
  return true;
}

void Process::close_output() {
  if (fd_ >= 0) _close(fd_);
  fd_ = -1;
}

// Windows has no signals to send: whatever the signal, the process ends at once, as SIGKILL
// would end it.
void Process::signal(int sig) const {
  if (HANDLE process = handle_of(pid_)) TerminateProcess(process, static_cast<UINT>(128 + sig));
}

int Process::wait(std::chrono::milliseconds limit) {
  if (pid_ <= 0) return -1;
  int code = wait_for(pid_, static_cast<DWORD>(limit.count()));
  if (code >= 0) {
    pid_ = -1;
    return code;
  }
  kill_and_reap();
  return -1;
}

void Process::stop() {
  if (pid_ <= 0) return;
  signal(15);
  wait_for(pid_, INFINITE);
  pid_ = -1;
}

bool Process::running() const {
  HANDLE process = handle_of(pid_);
  return process != nullptr && WaitForSingleObject(process, 0) == WAIT_TIMEOUT;
}

long Process::peak_rss_kib() const { return 0; }

}  // namespace terse::test
