// The levels file (Config::levels_file): read every kFilePollInterval, and
// applied once it parses, on a thread of its own.
#include "levels_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include <terse/portable_libc.hpp>
#include <terse/result.hpp>

#include "level_selectors.hpp"
#include "levels.hpp"
#include "placement.hpp"
#include "signals.hpp"

namespace terse::detail {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kMostFileBytes = 64 * 1024;
constexpr auto kFilePollInterval = 250ms;
// `echo ... > file` truncates before it writes: a change is applied once two
// reads this far apart agree, so a half-written file is never applied.
constexpr auto kFileSettleTime = 20ms;

// The content, absent when there is no such file; a failure says why it
// could not be read otherwise.
Result<std::optional<std::string>> read_small_file(const std::string& path) {
  int fd = open_path(path.c_str(), O_RDONLY);
  if (fd < 0) {
    if (errno != ENOENT) return Failure{std::strerror(errno)};
    return std::optional<std::string>();
  }
  std::string content;
  std::string problem;
  char chunk[4096];
  for (;;) {
    ssize_t got = read_some(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      problem = std::strerror(errno);
      break;
    }
    if (got == 0) break;
    content.append(chunk, static_cast<std::size_t>(got));
    if (content.size() > kMostFileBytes) {
      problem = "it is larger than 64 KiB";
      break;
    }
  }
  ::close(fd);
  if (!problem.empty()) return Failure{std::move(problem)};
  return std::optional<std::string>(std::move(content));
}

}  // namespace

LevelsFileWatcher::LevelsFileWatcher(std::string path, std::function<void(const std::string&)> on_error)
    : path_(std::move(path)), on_error_(std::move(on_error)) {}

LevelsFileWatcher::~LevelsFileWatcher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LevelsFileWatcher::check() {
  Result<std::optional<std::string>> read = read_small_file(path_);
  std::optional<std::string> content = read ? std::move(*read) : std::nullopt;
  const std::string& problem = read.why();
  if (!first_check_ && content == last_ && problem == last_problem_) return;
  if (!first_check_ && content) {
    std::this_thread::sleep_for(kFileSettleTime);
    Result<std::optional<std::string>> again = read_small_file(path_);
    if (!again || *again != content) return;  // still being written: the next look
  }
  bool first = std::exchange(first_check_, false);
  last_ = content;
  if (!problem.empty()) {
    if (problem != last_problem_) {
      std::string message =
          "levels file '" + path_ + "' cannot be read: " + problem + "; the levels in force stay: " + terse::levels();
      on_error_(message);
      log_notice(Level::error, message);
    }
    last_problem_ = problem;
    return;
  }
  last_problem_.clear();
  if (!content) {
    if (!first)
      log_notice(Level::info, "levels file '" + path_ + "' is gone; the levels in force stay: " + terse::levels());
    return;
  }
  Result<LevelSpec> spec = parse_levels(*content);
  if (!spec) {
    std::string message = "levels file '" + path_ + "' does not parse: " + spec.why() +
                          "; the levels in force stay: " + terse::levels() + " (accepted: " + kLevelsSyntax + ")";
    on_error_(message);
    log_notice(Level::error, message);
    return;
  }
  log_notice(Level::info, "levels from '" + path_ + "': " + levels_replace(*spec));
}

void LevelsFileWatcher::start() {
  {
    AsyncSignalsBlocked blocked;  // inherited by the thread
    thread_ = std::thread([this] { run(); });
  }
  place_thread(thread_, "terse-levels");
}

void LevelsFileWatcher::run() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, kFilePollInterval, [this] { return stopping_; })) {
    lock.unlock();
    check();
    lock.lock();
  }
}

}  // namespace terse::detail
