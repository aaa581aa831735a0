// The process's life around the logger (logger.cpp): exit and fork
// handlers, a forked child's start, stop() under the lifecycle's lock.
#pragma once

namespace terse::detail {

// The exit and fork handlers (logger.cpp): by start(), and by a thread's
// first call before it, whose record is printed at exit if start() never runs.
void register_process_hooks() noexcept;

// A child of fork() whose parent logged with Config::log_after_fork: its
// first call starts a logger with the parent's Config (logger.cpp), from
// settle_gate, where every site's first call goes in the child.
bool child_start_pending() noexcept;
void start_in_forked_child() noexcept;
// terse::stop() with the lifecycle's lock held (logger.cpp).
void stop_under_lock();

}  // namespace terse::detail
