// Where terse's own threads run (Config::cpus): users who count nanoseconds
// keep them off the CPUs of their hot threads.
#pragma once

#include <string>
#include <thread>
#include <vector>

#include <terse/result.hpp>

namespace terse::detail {

// Fails, saying what is wrong for start()'s error, unless `cpus` is a set
// this process may run on.
Result<> check_cpus(const std::vector<int>& cpus);
// The CPUs every terse thread started from now on is pinned to; empty: none.
void set_thread_cpus(const std::vector<int>& cpus);
// Names one of terse's threads (so `top -H` and the stats tell them apart)
// and pins it to the CPUs set, if any.
void place_thread(std::thread& thread, const char* name) noexcept;

}  // namespace terse::detail
