// Memory the IO path writes into at speed: thread rings and batches.
#pragma once

#include <cstddef>
#include <string>

namespace terse::detail {

// `bytes` of zeroed memory whose pages are present before the first write,
// so that neither a thread's first pass through its ring nor the IO
// threads' first batches stop on page faults; nullptr when there is none.
// Asking the kernel for the pages in one call costs a fraction of touching
// them one by one (a fault per 4 KiB page), which on some virtual machines
// costs over 10 us each.
char* map_populated(std::size_t bytes) noexcept;
void unmap_populated(char* memory, std::size_t bytes) noexcept;
// `bytes` of zeroed memory whose pages are mapped as they are first
// touched: a thread's ring, which most threads fill only a little of.
char* map_lazy(std::size_t bytes) noexcept;
// Maps the pages of [memory, memory + bytes) of map_lazy's memory in one
// call, without writing to them, rather than a page fault per page;
// nothing where the kernel cannot (before Linux 5.14): the pages then fault
// in as they are written.
void populate(char* memory, std::size_t bytes) noexcept;

// Hands the pages of [memory, memory + bytes) of map_lazy's memory back to
// the system; they read as zeros, and fault in again, when next touched.
// False where it cannot (the memory then stays as it is).
bool discard(char* memory, std::size_t bytes) noexcept;

// The other half of a compiler-only barrier in another thread of the
// process: once this returns, every other thread has passed a full memory
// fence (Linux membarrier, private expedited). A thread that pairs a store
// and a later load this way pays nothing for the fence; the caller of this
// pays a few microseconds. fences_other_threads() says whether the system
// offers it (it registers the process on its first call); without it,
// fence_other_threads() must not be relied on.
bool fences_other_threads() noexcept;
void fence_other_threads() noexcept;

// Gives a working buffer its capacity and touches its pages now, on an IO
// thread as it starts, rather than in the middle of the first busy batches.
inline void prefault(std::string& buffer, std::size_t bytes) {
  buffer.resize(bytes);
  buffer.clear();
}

}  // namespace terse::detail
