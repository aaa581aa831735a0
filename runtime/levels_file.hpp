// The levels file (Config::levels_file), watched while the logger runs.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace terse::detail {

// Reads Config::levels_file at start and, on a thread of its own, whenever
// its content changes.
class LevelsFileWatcher {
 public:
  LevelsFileWatcher(std::string path, std::function<void(const std::string&)> on_error);
  ~LevelsFileWatcher();
  LevelsFileWatcher(const LevelsFileWatcher&) = delete;
  LevelsFileWatcher& operator=(const LevelsFileWatcher&) = delete;

  // Reads the file now; at start this comes before the first call is logged.
  void check();
  void start();

 private:
  void run();

  std::string path_;
  std::function<void(const std::string&)> on_error_;
  std::optional<std::string> last_;  // the content last seen, absent while the file is
  std::string last_problem_;         // why it could not be read, last time
  bool first_check_ = true;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace terse::detail
