// Records no running logger writes: those kept from before start() in a
// program that ends without calling it, and calls after stop()
// (Config::stderr_after_stop). They are printed on stderr, as `terse cat`
// prints them, by the thread that logged them while it logs.
#pragma once

#include <terse/terse.hpp>

#include "clock.hpp"

namespace terse::detail {

// stop(), once the IO threads are gone: from now on each call at `level`
// and above is printed by its thread before it returns (the buffers go to
// sync mode), and those below are counted. Records already waiting in the
// buffers are printed or counted now.
void print_after_stop(Level level, const Calibration& calibration) noexcept;
// start(): buffers go back to the sync mode set_async() chose.
void end_print_after_stop() noexcept;
bool printing_after_stop() noexcept;
// Whether each call waits for its record: set_async(false), or printing
// after stop(). Every buffer carries a copy, which this refreshes.
bool calls_are_synchronous() noexcept;
void refresh_buffers_synchronous() noexcept;
// A call in sync mode while printing_after_stop(): prints (or counts) the
// calling thread's own records; false when not printing.
bool print_own_records() noexcept;
// At the end of a program that never called start(): prints what was kept
// before it at warn and above, under a line that says why, then goes on as
// after stop() at warn, for the static destructors still to run.
void print_unstarted_at_exit() noexcept;
void add_print_counts(Stats& stats) noexcept;

}  // namespace terse::detail
