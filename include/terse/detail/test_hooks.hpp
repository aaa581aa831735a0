// Hooks for terse's own tests, defined in the runtime. Not for programs.
#pragma once

#include <chrono>

namespace terse::detail {

// For tests that stall one of terse's threads with a signal sent to it:
// terse's threads block every asynchronous signal but leave this one
// deliverable, from the next start() on.
void deliver_to_terse_threads_for_tests(int signal_number) noexcept;
// For tests: making a busy ring's huge-page memory takes `delay` longer, as
// it does where the kernel compacts memory first.
void slow_huge_ring_making_for_tests(std::chrono::milliseconds delay) noexcept;

}  // namespace terse::detail
