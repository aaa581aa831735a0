// The crash path's writer: when the IO threads cannot answer a crash flush
// (one of them crashed, or is stuck on a lock the dying thread held), the
// dying thread writes what the buffers hold itself. Async-signal-safe: no
// lock, no allocation, plain write(2) from memory set aside at start.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <terse/seal.hpp>

namespace terse::detail {

// Writes all of `bytes` to `fd`, or as much as it takes before a write
// fails. Async-signal-safe (write(2) only).
void write_all(int fd, std::string_view bytes) noexcept;

// Appends every record still in the thread buffers to `fd`, using `memory`
// (`size` bytes) to gather frames. Each record goes into a records frame of
// its own, so its site's deltas start from zero and the raw argument bytes
// are already their encoding (FORMAT.md §7.1); stored, not compressed.
// Dictionary and thread entries are repeated (readers take the latest).
// Records the stuck IO thread also writes may then appear twice; none is
// lost.
// With a sealer, each frame is sealed with the next of `counter`'s numbers
// (FORMAT.md §11.3): nothing reaches a sealed file in the clear.
struct CrashSeal {
  const seal::FileSealer* sealer = nullptr;
  std::atomic<std::uint64_t>* counter = nullptr;
};
void write_buffers_for_crash(int fd, char* memory, std::size_t size, CrashSeal seal = {}) noexcept;

}  // namespace terse::detail
