// What the runtime asks of the operating system, under OS-neutral names.
// Each OS implements all of it in one file, runtime/platform_<os>.cpp (CMake
// picks it by CMAKE_SYSTEM_NAME); no other runtime or sink file includes an
// OS-specific header. Plain POSIX (open/read/write, sigaction, nanosleep,
// pthread_sigmask) is still used directly elsewhere.
//
// Nothing here is on the logging fast path (the inline part of a call:
// try_reserve(), commit(), ticks()); the callers are first calls of a
// thread, full rings and the IO threads. So every function is out of line.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace terse::detail {

// ---- Threads

// The calling thread's id as the OS's tools show it (ps -L, top -H, gdb):
// the `thread` in ThreadStats and the file's thread table. Never 0.
// Async-signal-safe: the crash and termination handlers use it.
std::uint64_t thread_id() noexcept;
// The calling thread's name, cut to fit `size` (NUL included), "" when it
// has none.
void thread_name(char* out, std::size_t size) noexcept;
// Names one of terse's threads; best effort (the OS may cut it: 15 bytes
// on Linux).
void name_thread(std::thread& thread, const char* name) noexcept;
// CPU time `thread` has used, in nanoseconds; 0 where the OS cannot say.
std::int64_t thread_cpu_ns(std::thread& thread) noexcept;
// The same for the calling thread.
std::int64_t own_thread_cpu_ns() noexcept;
// CPU numbers are below this (what Config::cpus may hold).
int cpu_number_limit() noexcept;
// allowed[c]: this process may run on CPU c; empty where the OS cannot say.
std::vector<bool> allowed_cpus();
// Pins `thread` to `cpus` (each below cpu_number_limit()); best effort.
void pin_thread(std::thread& thread, const std::vector<int>& cpus) noexcept;
// For the calling thread: sleeps of microseconds take about that long (no
// timer slack), as the collector's ordering window needs.
void prefer_short_sleeps() noexcept;

// ---- Waiting (futex-like, on one 32-bit word)

// Sleeps while `word` still holds `expected`, at most `timeout_ns`; may
// return early or spuriously, so callers look again. The comparison and
// the sleep are one step against wake_all(): a wake after the word changed
// is never missed.
void wait_for_change(std::atomic<std::uint32_t>& word, std::uint32_t expected, long timeout_ns) noexcept;
// Wakes every thread in wait_for_change() on `word`. Costs a system call:
// callers skip it when they know nobody waits.
void wake_all(std::atomic<std::uint32_t>& word) noexcept;

// ---- Memory

// The OS's page size, asked once: what populate() and discard() round to.
std::size_t page_bytes() noexcept;
// `bytes` of zeroed memory whose pages are present and touched before the
// first write, so that the IO threads' first batches do not stop on page
// faults; nullptr when there is none. Asking the kernel for the pages in one
// call costs a fraction of faulting them one by one, which on some virtual
// machines costs over 10 us each. On such machines the first access to a
// page the kernel mapped costs microseconds more, which is why the pages are
// touched too (prepare_pages).
char* map_populated(std::size_t bytes) noexcept;
void unmap_populated(char* memory, std::size_t bytes) noexcept;
// `bytes` of zeroed memory whose pages are mapped as they are
// first touched: a thread's ring, which most threads fill only a little of.
char* map_lazy(std::size_t bytes) noexcept;
// Maps the pages that [memory, memory + bytes) of map_lazy's memory touches
// in one call, keeping their contents, rather than a page fault per page;
// nothing where the kernel cannot (Linux before 5.14): the pages then fault
// in as they are written.
void populate(char* memory, std::size_t bytes) noexcept;
// populate(), then an access to each page, so that the first writes there
// cost what any other does: on some virtual machines (nested ones, where the
// host builds its page tables as the guest first uses a mapping) the first
// access to each page the kernel mapped stops the thread for microseconds,
// with no page fault the guest sees. Whoever calls this pays that instead.
void prepare_pages(char* memory, std::size_t bytes) noexcept;
// Hands the whole pages inside [memory, memory + bytes) of map_lazy's memory
// back to the system (never a byte outside it); they read as zeros, and
// fault in again, when next touched. False where it cannot (the memory then
// stays as it is).
bool discard(char* memory, std::size_t bytes) noexcept;
// A busy thread's ring on transparent huge pages: `bytes` rounded up to
// whole huge pages (huge_ring_bytes), aligned to one, its first `bytes`
// present and touched; nullptr where the system gives none (not Linux,
// transparent huge pages off). Each 4 KiB page a ring crosses otherwise
// costs its thread a TLB miss, and on virtual machines a page walk of some
// hundreds of nanoseconds: once every 73 records of 56 bytes, the p99 of a
// call. Free it with unmap_populated(memory, huge_ring_bytes(bytes)).
char* map_huge(std::size_t bytes) noexcept;
std::size_t huge_ring_bytes(std::size_t bytes) noexcept;
// Hands memory the process freed back to the system where the allocator
// keeps it (glibc keeps a freed block of a few MiB in its arena once it has
// seen blocks that size come and go). For the rare moment a buffer that
// grew for a burst shrinks again; a no-op where there is nothing to do.
void return_freed_memory() noexcept;

// The other half of a compiler-only barrier in another thread of the
// process: once this returns, every other thread has passed a full memory
// fence (Linux membarrier, private expedited). A thread that pairs a store
// and a later load this way pays nothing for the fence; the caller of this
// pays a few microseconds. fences_other_threads() says whether the system
// offers it (it registers the process on its first call); without it,
// fence_other_threads() must not be relied on.
bool fences_other_threads() noexcept;
void fence_other_threads() noexcept;

// ---- Code

// The program's file name, as ps shows it (no directory); empty where the
// OS does not say.
std::string program_name();

// Whether the code at `address` stays mapped until the process ends: it is
// the program's own or terse's, not a library that dlclose() may unload.
// False when unsure. Not cheap (it walks the loaded objects).
bool code_stays_loaded(const void* address) noexcept;

// ---- Signals and fork

// Makes [memory, memory + bytes) the calling thread's alternate signal
// stack, so that a stack overflow still runs the crash handler; false (and
// nothing changed) when the thread already has one or the OS refuses.
bool use_signal_stack(char* memory, std::size_t bytes) noexcept;
// Takes the stack use_signal_stack() gave back off the calling thread,
// before its memory is freed.
void leave_signal_stack() noexcept;
// A write to a pipe whose reader left fails with EPIPE on the calling
// thread instead of raising SIGPIPE, which would end the process (the
// console thread: `app 2>&1 | head`). After such a failure,
// take_broken_pipe_signal() takes back the signal the write left pending,
// so that it never reaches the application.
void block_broken_pipe_signal() noexcept;
void take_broken_pipe_signal() noexcept;
// Calls `done(arg)` when the calling thread ends (not for the main thread,
// which ends with the process): on POSIX after its thread_local destructors,
// on Windows before them. False when it cannot. Once per call.
bool run_at_thread_end(void (*done)(void*) noexcept, void* arg) noexcept;
// Runs `before` in the thread that forks, then `in_parent` or `in_child`
// once the fork returned there; registered once for the process.
void at_fork(void (*before)(), void (*in_parent)(), void (*in_child)()) noexcept;

// ---- Files

// `fd` moved to `lowest` or above (its old number closed) where the process
// may have that many descriptors open; `fd` itself where it cannot.
int descriptor_at_or_above(int fd, int lowest) noexcept;
// Whether `fd` is an open descriptor.
bool descriptor_open(int fd) noexcept;
// The machine's name, as its tools show it; empty where the OS does not say.
std::string host_name();

// Writes the file's data (not necessarily its times) to the device; false
// with errno set when it failed.
bool sync_data(int fd) noexcept;

// Which file a descriptor or a path names: the same device and inode are the
// same file. `links` counts the file's names, 0 once it is removed.
struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t links = 0;
  bool same_file(const FileIdentity& other) const noexcept { return device == other.device && inode == other.inode; }
};
// False, with errno set, when `fd` is not open. Async-signal-safe: the crash
// path asks it before writing.
bool descriptor_identity(int fd, FileIdentity& out) noexcept;
// False, with errno set, when nothing is at `path`.
bool path_identity(const char* path, FileIdentity& out) noexcept;

}  // namespace terse::detail
