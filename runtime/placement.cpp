#include "placement.hpp"

#include <sched.h>

#include <mutex>

namespace terse::detail {
namespace {

std::mutex g_cpus_mutex;
std::vector<int> g_cpus;

}  // namespace

std::string check_cpus(const std::vector<int>& cpus) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  bool known = sched_getaffinity(0, sizeof allowed, &allowed) == 0;
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE)
      return "terse: Config::cpus holds " + std::to_string(cpu) + ", which is no CPU number (0 to " +
             std::to_string(CPU_SETSIZE - 1) + ")";
    // A CPU outside the process's affinity would make every pin fail, and
    // the threads run where the scheduler puts them after all.
    if (known && !CPU_ISSET(cpu, &allowed))
      return "terse: Config::cpus holds CPU " + std::to_string(cpu) + ", which this process may not run on";
  }
  return {};
}

void set_thread_cpus(const std::vector<int>& cpus) {
  std::lock_guard lock(g_cpus_mutex);
  g_cpus = cpus;
}

void place_thread(pthread_t thread, const char* name) noexcept {
  pthread_setname_np(thread, name);
  cpu_set_t set;
  CPU_ZERO(&set);
  {
    std::lock_guard lock(g_cpus_mutex);
    if (g_cpus.empty()) return;
    for (int cpu : g_cpus) CPU_SET(cpu, &set);
  }
  pthread_setaffinity_np(thread, sizeof set, &set);
}

}  // namespace terse::detail
