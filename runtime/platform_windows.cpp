// platform.hpp on Windows (8 and later), built with MinGW-w64, whose std::thread runs on its
// POSIX threads library (winpthreads): a thread's Win32 handle comes from pthread_gethandle().
// What it gives up against platform_linux.cpp: no huge pages, pages mapped as they are first
// written, no signal stacks (a stack overflow still reaches the crash handler, which Windows
// runs on the faulting thread's guard page), no fork.
#include "platform.hpp"
#include "whole_pages.hpp"

// windows.h before the headers that need its types.
#include <windows.h>

#include <io.h>
#include <pthread.h>
#include <synchapi.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>

namespace terse::detail {
namespace {

HANDLE handle_of(std::thread& thread) noexcept { return pthread_gethandle(thread.native_handle()); }

// SetThreadDescription and GetThreadDescription came with Windows 10 1607: looked up, so that
// the library still runs (with unnamed threads) on older systems.
template <typename Function>
Function kernel_function(const char* name) noexcept {
  HMODULE kernel = GetModuleHandleW(L"kernel32.dll");
  return kernel == nullptr ? nullptr
                           : reinterpret_cast<Function>(reinterpret_cast<void*>(GetProcAddress(kernel, name)));
}
using SetDescription = HRESULT(WINAPI*)(HANDLE, PCWSTR);
using GetDescription = HRESULT(WINAPI*)(HANDLE, PWSTR*);

std::int64_t cpu_ns_of(HANDLE thread) noexcept {
  FILETIME created, exited, kernel, user;
  if (!GetThreadTimes(thread, &created, &exited, &kernel, &user)) return 0;
  auto ticks = [](const FILETIME& time) {
    return (static_cast<std::int64_t>(time.dwHighDateTime) << 32) | time.dwLowDateTime;
  };
  return (ticks(kernel) + ticks(user)) * 100;  // FILETIME counts 100 ns
}

}  // namespace

// ---- Threads

std::uint64_t thread_id() noexcept { return GetCurrentThreadId(); }

void thread_name(char* out, std::size_t size) noexcept {
  if (size == 0) return;
  out[0] = '\0';
  auto get = kernel_function<GetDescription>("GetThreadDescription");
  PWSTR wide = nullptr;
  if (get == nullptr || FAILED(get(GetCurrentThread(), &wide)) || wide == nullptr) return;
  int written = WideCharToMultiByte(CP_UTF8, 0, wide, -1, out, static_cast<int>(size), nullptr, nullptr);
  if (written == 0) out[0] = '\0';  // too long for `size`: unnamed rather than cut mid-character
  out[size - 1] = '\0';
  LocalFree(wide);
}

void name_thread(std::thread& thread, const char* name) noexcept {
  auto set = kernel_function<SetDescription>("SetThreadDescription");
  if (set == nullptr) return;
  wchar_t wide[64];
  if (MultiByteToWideChar(CP_UTF8, 0, name, -1, wide, 64) == 0) return;
  set(handle_of(thread), wide);
}

std::int64_t thread_cpu_ns(std::thread& thread) noexcept { return cpu_ns_of(handle_of(thread)); }

std::int64_t own_thread_cpu_ns() noexcept { return cpu_ns_of(GetCurrentThread()); }

// One processor group's worth: an affinity mask has a bit per CPU of the group.
int cpu_number_limit() noexcept { return 64; }

std::vector<bool> allowed_cpus() {
  DWORD_PTR process_mask = 0;
  DWORD_PTR system_mask = 0;
  if (!GetProcessAffinityMask(GetCurrentProcess(), &process_mask, &system_mask)) return {};
  std::vector<bool> allowed(64);
  for (int cpu = 0; cpu < 64; ++cpu) allowed[cpu] = ((process_mask >> cpu) & 1) != 0;
  return allowed;
}

void pin_thread(std::thread& thread, const std::vector<int>& cpus) noexcept {
  DWORD_PTR mask = 0;
  for (int cpu : cpus) {
    if (cpu >= 0 && cpu < 64) mask |= DWORD_PTR{1} << cpu;
  }
  if (mask != 0) SetThreadAffinityMask(handle_of(thread), mask);
}

// Windows' timer resolution is process-wide (timeBeginPeriod): not terse's to change.
void prefer_short_sleeps() noexcept {}

// ---- Waiting

void wait_for_change(std::atomic<std::uint32_t>& word, std::uint32_t expected, long timeout_ns) noexcept {
  // Milliseconds, rounded up: a wait never ends before its time unless woken.
  DWORD timeout_ms = timeout_ns <= 0 ? 0 : static_cast<DWORD>((timeout_ns + 999'999) / 1'000'000);
  WaitOnAddress(reinterpret_cast<volatile void*>(&word), &expected, sizeof expected, timeout_ms);
}

void wake_all(std::atomic<std::uint32_t>& word) noexcept { WakeByAddressAll(reinterpret_cast<void*>(&word)); }

// ---- Memory

std::size_t page_bytes() noexcept {
  static const std::size_t bytes = [] {
    SYSTEM_INFO info;
    GetSystemInfo(&info);
    return static_cast<std::size_t>(info.dwPageSize);
  }();
  return bytes;
}

namespace {

// Committed memory reads as zeros; its pages are mapped as they are first touched.
char* map_committed(std::size_t bytes) noexcept {
  return static_cast<char*>(VirtualAlloc(nullptr, bytes, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE));
}

}  // namespace

char* map_populated(std::size_t bytes) noexcept {
  char* memory = map_committed(bytes);
  if (memory != nullptr) write_each_page(memory, bytes);
  return memory;
}

void unmap_populated(char* memory, std::size_t) noexcept {
  if (memory != nullptr) VirtualFree(memory, 0, MEM_RELEASE);
}

char* map_lazy(std::size_t bytes) noexcept { return map_committed(bytes); }

void populate(char*, std::size_t) noexcept {}

void prepare_pages(char* memory, std::size_t bytes) noexcept { write_each_page(memory, bytes); }

bool discard(char* memory, std::size_t bytes) noexcept {
  // Whole pages only. Decommitted and committed again, they read as zeros (DiscardVirtualMemory
  // and MEM_RESET leave their contents undefined instead).
  WholePages pages = whole_pages_inside(memory, bytes);
  if (pages.bytes == 0) return false;
  if (!VirtualFree(pages.start, pages.bytes, MEM_DECOMMIT)) return false;
  return VirtualAlloc(pages.start, pages.bytes, MEM_COMMIT, PAGE_READWRITE) != nullptr;
}

char* map_huge(std::size_t) noexcept { return nullptr; }

std::size_t huge_ring_bytes(std::size_t bytes) noexcept { return bytes; }

void return_freed_memory() noexcept {}

// FlushProcessWriteBuffers is Windows' membarrier: every processor running a thread of the
// process passes a full barrier before it returns (it interrupts them).
bool fences_other_threads() noexcept { return true; }

void fence_other_threads() noexcept { FlushProcessWriteBuffers(); }

// ---- Code

std::string program_name() {
  char path[MAX_PATH];
  DWORD length = GetModuleFileNameA(nullptr, path, sizeof path);
  if (length == 0 || length >= sizeof path) return {};
  std::string name(path, length);
  std::size_t slash = name.find_last_of("\\/");
  if (slash != std::string::npos) name.erase(0, slash + 1);
  return name;
}

bool code_stays_loaded(const void* address) noexcept {
  // The program's own module or terse's: a DLL that FreeLibrary() may unload is neither.
  auto module_of = [](const void* code) -> HMODULE {
    HMODULE module = nullptr;
    GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                       static_cast<LPCSTR>(code), &module);
    return module;
  };
  HMODULE module = module_of(address);
  return module != nullptr && (module == GetModuleHandleA(nullptr) ||
                               module == module_of(reinterpret_cast<const void*>(&code_stays_loaded)));
}

// ---- Signals and threads' ends

// A stack overflow raises its exception on the thread's guard page, where Windows has room
// left to run the handler: nothing to set up.
bool use_signal_stack(char*, std::size_t) noexcept { return false; }

void leave_signal_stack() noexcept {}

// Windows has no SIGPIPE: a write to a pipe whose reader left fails with EPIPE (or EINVAL).
void block_broken_pipe_signal() noexcept {}

void take_broken_pipe_signal() noexcept {}

namespace {

struct AtThreadEnd {
  void (*done)(void*) noexcept;
  void* arg;
  AtThreadEnd* next;
};

// Fiber-local storage's callback runs as each thread ends, after its thread_local
// destructors, and needs no thread-local storage of its own.
void WINAPI run_thread_end_calls(void* first) {
  for (auto* item = static_cast<AtThreadEnd*>(first); item != nullptr;) {
    AtThreadEnd* next = item->next;
    item->done(item->arg);
    delete item;
    item = next;
  }
}

DWORD thread_end_slot() noexcept {
  static const DWORD slot = FlsAlloc(run_thread_end_calls);
  return slot;
}

}  // namespace

bool run_at_thread_end(void (*done)(void*) noexcept, void* arg) noexcept {
  DWORD slot = thread_end_slot();
  if (slot == FLS_OUT_OF_INDEXES) return false;
  auto* item = new (std::nothrow) AtThreadEnd{done, arg, static_cast<AtThreadEnd*>(FlsGetValue(slot))};
  if (item == nullptr) return false;
  if (!FlsSetValue(slot, item)) {
    delete item;
    return false;
  }
  return true;
}

// No fork on Windows.
void at_fork(void (*)(), void (*)(), void (*)()) noexcept {}

// ---- Files

bool sync_data(int fd) noexcept { return _commit(fd) == 0; }

// Windows' C library hands out the lowest free number too, but a daemon there does not close
// every descriptor after start-up: the number stays.
int descriptor_at_or_above(int fd, int) noexcept { return fd; }

bool descriptor_open(int fd) noexcept { return _get_osfhandle(fd) != -1; }

std::string host_name() {
  char host[256];
  DWORD size = sizeof host;
  if (!GetComputerNameExA(ComputerNameDnsHostname, host, &size)) return {};
  return std::string(host, size);
}

namespace {

bool identity_of(HANDLE file, FileIdentity& out) noexcept {
  BY_HANDLE_FILE_INFORMATION info;
  if (!GetFileInformationByHandle(file, &info)) return false;
  out.device = info.dwVolumeSerialNumber;
  out.inode = (static_cast<std::uint64_t>(info.nFileIndexHigh) << 32) | info.nFileIndexLow;
  out.links = info.nNumberOfLinks;
  return true;
}

}  // namespace

bool descriptor_identity(int fd, FileIdentity& out) noexcept {
  auto file = reinterpret_cast<HANDLE>(_get_osfhandle(fd));
  if (file == INVALID_HANDLE_VALUE) {
    errno = EBADF;
    return false;
  }
  // A console or a pipe has no file index: it is still open, and the same as itself.
  if (GetFileType(file) != FILE_TYPE_DISK) {
    out = FileIdentity{0, reinterpret_cast<std::uintptr_t>(file), 1};
    return true;
  }
  if (identity_of(file, out)) return true;
  errno = EIO;
  return false;
}

bool path_identity(const char* path, FileIdentity& out) noexcept {
  // Opened for nothing but its attributes, sharing everything, so that the writer's own
  // file, open for appending, can be asked about (directories too).
  HANDLE file = CreateFileA(path, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                            FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (file == INVALID_HANDLE_VALUE) {
    errno = ENOENT;
    return false;
  }
  bool known = identity_of(file, out);
  CloseHandle(file);
  if (!known) errno = EIO;
  return known;
}

}  // namespace terse::detail
