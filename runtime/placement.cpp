#include "placement.hpp"

#include <mutex>

#include "platform.hpp"

namespace terse::detail {
namespace {

std::mutex g_cpus_mutex;
std::vector<int> g_cpus;

}  // namespace

Result<> check_cpus(const std::vector<int>& cpus) {
  int limit = cpu_number_limit();
  std::vector<bool> allowed = allowed_cpus();
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= limit)
      return Failure{"terse: Config::cpus holds " + std::to_string(cpu) + ", which is no CPU number (0 to " +
                     std::to_string(limit - 1) + ")"};
    // A CPU outside the process's affinity would make every pin fail, and
    // the threads run where the scheduler puts them after all.
    auto index = static_cast<std::size_t>(cpu);
    if (!allowed.empty() && (index >= allowed.size() || !allowed[index]))
      return Failure{"terse: Config::cpus holds CPU " + std::to_string(cpu) + ", which this process may not run on"};
  }
  return {};
}

void set_thread_cpus(const std::vector<int>& cpus) {
  std::lock_guard lock(g_cpus_mutex);
  g_cpus = cpus;
}

void place_thread(std::thread& thread, const char* name) noexcept {
  name_thread(thread, name);
  std::lock_guard lock(g_cpus_mutex);
  if (!g_cpus.empty()) pin_thread(thread, g_cpus);
}

}  // namespace terse::detail
