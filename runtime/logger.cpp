// start/flush/stop: the Logger wires the collector and the writer to the
// callers' requests and runs each on a thread of its own; the process-wide
// lifecycle (validation, exit, fork) lives here too.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <zstd.h>

#include <terse/crc.hpp>
#include <terse/seal.hpp>

#include "buffers.hpp"
#include "clock.hpp"
#include "collector.hpp"
#include "emergency.hpp"
#include "environment.hpp"
#include "fallback.hpp"
#include "levels.hpp"
#include "levels_file.hpp"
#include "lifecycle.hpp"
#include "pipeline.hpp"
#include "placement.hpp"
#include "private_values.hpp"
#include "signals.hpp"
#include "view.hpp"
#include "writer.hpp"

namespace terse {
namespace detail {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kEmergencyBytes = 1 << 20;

// Several IO threads report (the writer, the console's): one at a time, so
// that an application's on_error needs no lock of its own.
Config with_error_reporter(Config config) {
  if (!config.on_error) {
    config.on_error = [](const std::string& message) { std::fprintf(stderr, "terse: %s\n", message.c_str()); };
  }
  config.on_error = [report = std::move(config.on_error),
                     one_at_a_time = std::make_shared<std::mutex>()](const std::string& message) {
    std::lock_guard lock(*one_at_a_time);
    report(message);
  };
  return config;
}

// Set while stop() drains the IO threads, cleared by the writer once the
// last batch is written: a termination signal then waits for that instead
// of cutting the drain short.
std::atomic<bool> g_stop_draining{false};
// Signal handlers using the Logger right now: stop() does not destroy it
// under them.
std::atomic<int> g_signal_flushes{0};

FlightSettings flight_settings(const Config& config) {
  return {config.flight_level != Level::off, config.flight_trigger,
          config.flight_level != Level::off ? config.flight_bytes : kMinFlightBytes};
}

}  // namespace

class Logger {
 public:
  explicit Logger(const Config& config)
      : config_(with_error_reporter(config)),
        view_(View::create(config_, clock_.current())),
        collector_(config_.ordering_window, config_.release_idle_after, flight_settings(config_), clock_, queue_,
                   requests_, counters_, config_.on_error),
        writer_(config_, clock_.current(), queue_, requests_, counters_, view_.get()) {
    if (config_.crash_handler || config_.termination_signals) {
      emergency_.resize(kEmergencyBytes);
      (void)wire::crc32c("", 0);  // its one-time setup must not first run inside a signal handler
    }
    writer_.open_first_file();
  }

  void run() {
    {
      AsyncSignalsBlocked blocked;  // inherited by the threads
      collector_thread_ = std::thread([this] {
        collector_tid_.store(thread_id(), std::memory_order_relaxed);
        collector_.run();
      });
      writer_thread_ = std::thread([this] {
        writer_tid_.store(thread_id(), std::memory_order_relaxed);
        writer_.run();
        g_stop_draining.store(false, std::memory_order_release);
      });
      if (view_) view_->start();
    }
    // Named from here, so the names are there when start() returns.
    place_thread(collector_thread_, "terse-io");
    place_thread(writer_thread_, "terse-write");
  }

  void flush() {
    std::uint64_t sequence = requests_.flush.fetch_add(1, std::memory_order_acq_rel) + 1;
    wake_io_thread();
    queue_.wait_for_flush(sequence);
    if (view_) view_->wait_for_flush(sequence);
  }

  void flush_durable() {
    flush();
    queue_.wait_for_sync();
  }

  // Async-signal-safe: atomics and nanosleep only. The collector notices the
  // request within its idle wait (10 ms at most). A crash waits a second at
  // most; a termination, where the IO threads are healthy and compress as
  // always, waits as long as they make progress, up to five.
  void flush_from_signal(bool crash) noexcept {
    std::uint64_t self = thread_id();
    bool io_thread_crashed =
        self == collector_tid_.load(std::memory_order_relaxed) || self == writer_tid_.load(std::memory_order_relaxed);
    if (!io_thread_crashed) {
      if (crash) requests_.crashing.store(true, std::memory_order_relaxed);
      // Asked before the flush, so that the writer cannot meet the flush first.
      requests_.end_file.store(requests_.flush.load(std::memory_order_acquire) + 1, std::memory_order_release);
      std::uint64_t sequence = requests_.flush.fetch_add(1, std::memory_order_acq_rel) + 1;
      if (wait_from_signal(sequence, crash ? 1000 : 5000)) {
        // The console and the callback too, while they make progress: in a
        // container without files they are all there is.
        if (view_) wait_for_view_from_signal(sequence, crash ? 1000 : 5000);
        return;
      }
    }
    // Nobody answered (an IO thread crashed, or is stuck, say on a heap lock
    // the crashing thread held): write what the buffers hold from here.
    write_buffers_for_crash(writer_.crash_fd(), emergency_.data(), emergency_.size(), writer_.crash_seal());
  }

  // True once flush `sequence` is written; false after a second without
  // progress or `limit_ms` in all.
  bool wait_from_signal(std::uint64_t sequence, int limit_ms) noexcept {
    std::uint64_t written = counters_.records_written.load(std::memory_order_relaxed);
    int quiet_ms = 0;  // wait_while asks once a millisecond
    wait_while(
        [&] {
          if (queue_.flushed_through() >= sequence) return false;
          std::uint64_t now_written = counters_.records_written.load(std::memory_order_relaxed);
          if (now_written != written) written = now_written, quiet_ms = 0;
          return quiet_ms++ < 1000;
        },
        limit_ms);
    return queue_.flushed_through() >= sequence;
  }

  // As wait_from_signal(), for the view; true once it has shown `sequence`.
  bool wait_for_view_from_signal(std::uint64_t sequence, int limit_ms) noexcept {
    std::uint64_t seen = view_->progress();
    int quiet_ms = 0;
    return wait_while(
        [&] {
          if (view_->shown_through(sequence)) return false;
          std::uint64_t now_seen = view_->progress();
          if (now_seen != seen) seen = now_seen, quiet_ms = 0;
          return quiet_ms++ < 500;
        },
        limit_ms);
  }

  Stats stats() {
    Stats s;
    counters_.add_to(s);
    if (view_) view_->add_to(s);
    for (std::thread* t : {&collector_thread_, &writer_thread_}) {
      s.io_busy += std::chrono::nanoseconds(thread_cpu_ns(*t));
    }
    auto& registry = buffer_registry();
    std::lock_guard lock(registry.mutex);
    for (const ThreadBuffer* b : registry.buffers) {
      ThreadStats t;
      t.os_tid = b->os_tid;
      t.name = std::string(b->name, ::strnlen(b->name, sizeof b->name));
      t.buffer_bytes = b->capacity;
      t.highest_fill = b->highest_fill.load(std::memory_order_relaxed);
      t.dropped = b->all_dropped() - b->dropped_before_start;
      t.times_released = b->given_back.load(std::memory_order_relaxed);
      s.records_dropped += t.dropped;
      s.threads.push_back(std::move(t));
    }
    return s;
  }

  void stop() {
    requests_.stop.store(true, std::memory_order_release);
    wake_io_thread();
    collector_thread_.join();
    writer_thread_.join();
    if (view_) view_->finish();
  }

  double ticks_per_second() const { return clock_.current().ticks_per_second; }
  // Once stopped: the IO thread's clock is no longer moving.
  const Calibration& calibration() const { return clock_.current(); }
  Level stderr_after_stop() const { return config_.stderr_after_stop; }

  // The application's on_error, one report at a time with terse's others.
  const std::function<void(const std::string&)>& on_error() const { return config_.on_error; }

 private:
  Config config_;
  ClockCalibration clock_;
  BatchQueue queue_;
  Requests requests_;
  Counters counters_;
  std::unique_ptr<View> view_;  // null: no console and no callback
  Collector collector_;
  Writer writer_;
  std::thread collector_thread_;
  std::thread writer_thread_;
  std::atomic<std::uint64_t> collector_tid_{0};
  std::atomic<std::uint64_t> writer_tid_{0};
  std::vector<char> emergency_;  // pre-allocated: the crash path allocates nothing
};

namespace {

std::mutex g_lifecycle;
std::unique_ptr<Logger> g_logger;
std::unique_ptr<LevelsFileWatcher> g_levels_watcher;
std::atomic<Logger*> g_crash_target{nullptr};  // the running logger, for the signal handler

bool valid_level(Level level) { return static_cast<int>(level) <= static_cast<int>(Level::off); }

void validate(const Config& config) {
  if (static_cast<int>(config.console) > static_cast<int>(Console::automatic))
    throw Error("terse: Config::console is not a valid mode");
  if (!valid_level(config.console_level)) throw Error("terse: Config::console_level is not a valid level");
  if (!valid_level(config.callback_level)) throw Error("terse: Config::callback_level is not a valid level");
  if (!valid_level(config.stderr_after_stop)) throw Error("terse: Config::stderr_after_stop is not a valid level");
  if (!valid_level(config.flight_level)) throw Error("terse: Config::flight_level is not a valid level");
  if (!valid_level(config.flight_trigger)) throw Error("terse: Config::flight_trigger is not a valid level");
  if (config.flight_level != Level::off &&
      (config.flight_bytes < kMinFlightBytes || config.flight_bytes > kMaxFlightBytes))
    throw Error("terse: Config::flight_bytes must be 1 KiB to 64 MiB, not " + std::to_string(config.flight_bytes));
  bool no_files = config.directory.empty();
  if (no_files && config.console == Console::off && !config.on_record)
    throw Error(
        "terse: no directory, no console and no on_record: records would go nowhere; set Config::directory "
        "(or TERSE_DIR), Config::console (or TERSE_CONSOLE) or Config::on_record");
  if (config.name.empty()) throw Error("terse: Config::name is empty");
  if (config.name.find('/') != std::string::npos || config.name == "." || config.name == "..")
    throw Error("terse: Config::name '" + config.name + "' must be a plain file name prefix, without '/'");
  std::size_t b = config.thread_buffer_bytes;
  // A record may take half a ring and must fit one frame (FORMAT.md §3).
  if (b < kMinRingCapacity || b > schema::kMaxFrameRawSize || (b & (b - 1)) != 0)
    throw Error("terse: Config::thread_buffer_bytes must be a power of two from 4 KiB to 64 MiB, not " +
                std::to_string(b));
  if (config.roll_bytes < 4096)
    throw Error("terse: Config::roll_bytes must be at least 4096, not " + std::to_string(config.roll_bytes));
  if (config.compression_level < -7 || config.compression_level > ZSTD_maxCLevel())
    throw Error("terse: Config::compression_level must be -7 to " + std::to_string(ZSTD_maxCLevel()) + ", not " +
                std::to_string(config.compression_level));
  if (config.fastest_compression_level < -7 || config.fastest_compression_level > ZSTD_maxCLevel() ||
      config.fastest_compression_level == 0)
    throw Error("terse: Config::fastest_compression_level must be -7 to -1 or 1 to " +
                std::to_string(ZSTD_maxCLevel()) + ", not " + std::to_string(config.fastest_compression_level));
  if (static_cast<int>(config.level) > static_cast<int>(Level::off))
    throw Error("terse: Config::level is not a valid level");
  if (config.file_mode > 07777) throw Error("terse: Config::file_mode is not a permission mode");
  if (config.fsync_interval.count() < 0) throw Error("terse: Config::fsync_interval is negative");
  if (config.release_idle_after.count() < 0) throw Error("terse: Config::release_idle_after is negative");
  if (config.ordering_window < std::chrono::microseconds(0) || config.ordering_window > std::chrono::seconds(10))
    throw Error("terse: Config::ordering_window must be between 0 and 10 s");
  if (config.max_container_elements < 1 || config.max_container_elements > schema::kCountMask)
    throw Error("terse: Config::max_container_elements must be 1 to 2^31-1, not " +
                std::to_string(config.max_container_elements));
  if (static_cast<int>(config.private_values) > static_cast<int>(PrivateValues::clear))
    throw Error("terse: Config::private_values is not a valid mode");
  if (config.private_values == PrivateValues::hash && config.private_key.empty())
    throw Error("terse: Config::private_values = hash needs a Config::private_key");
  if (Result<> usable = check_cpus(config.cpus); !usable) throw Error(usable.why());
  if (no_files) return;
  if (!config.encrypt_to.empty()) {
    if (auto key = seal::read_public_key(config.encrypt_to); !key)
      throw Error("terse: Config::encrypt_to (or TERSE_ENCRYPT_TO): " + key.why());
  }
  if (!config.sign_with.empty()) {
    if (config.encrypt_to.empty())
      throw Error("terse: Config::sign_with (or TERSE_SIGN_WITH) signs sealed files; set Config::encrypt_to too");
    if (auto key = seal::read_secret_key(config.sign_with, seal::Passphrase::refuse); !key)
      throw Error("terse: Config::sign_with (or TERSE_SIGN_WITH): " + key.why());
  }
  std::error_code ec;
  fs::create_directories(config.directory, ec);
  if (ec) throw Error("terse: cannot create directory '" + config.directory + "': " + ec.message());
  if (!fs::is_directory(config.directory, ec)) throw Error("terse: '" + config.directory + "' is not a directory");
  if (::access(config.directory.c_str(), W_OK | X_OK) != 0)
    throw Error("terse: directory '" + config.directory + "' is not writable: " + std::strerror(errno));
}

// The Config of the last start(), null before any: what a forked child's
// logger starts with, by its first call (log_after_fork), and whether it is
// still to start.
std::unique_ptr<Config> g_started_with;  // under g_lifecycle
std::atomic<bool> g_child_start_pending{false};
bool g_started_by_fork = false;  // the running logger is such a child's: start() replaces it

// At exit, whether or not the program started terse: what is running is
// stopped, what was kept before a start() that never came is printed.
void finish_at_exit() {
  bool started;
  {
    std::lock_guard lock(g_lifecycle);
    started = g_started_with != nullptr;
  }
  if (started) {
    terse::stop();
  } else {
    print_unstarted_at_exit();
  }
}

// fork(): the child gets no IO threads, so it must not wait for them. With
// Config::log_after_fork its first call starts a logger of its own (see
// start_in_forked_child); otherwise its calls are discarded until it calls
// start(). The locks are held across fork() so the child never inherits
// one held by a thread it does not have.
void before_fork() {
  g_lifecycle.lock();
  buffer_registry().mutex.lock();
  levels_before_fork();
}

void after_fork_in_parent() {
  levels_after_fork_in_parent();
  buffer_registry().mutex.unlock();
  g_lifecycle.unlock();
}

void after_fork_in_child() {
  bool log_on = g_logger && g_started_with && g_started_with->log_after_fork;
  g_child_start_pending.store(log_on, std::memory_order_relaxed);
  levels_after_fork_in_child(log_on);
  (void)g_levels_watcher.release();  // its thread is the parent's
  buffer_settings().running.store(false, std::memory_order_relaxed);
  g_hot.running.store(false, std::memory_order_relaxed);
  g_crash_target.store(nullptr, std::memory_order_relaxed);
  (void)g_logger.release();  // its threads are the parent's: never join or destroy it here
  renew_io_wakeup_after_fork();
  auto& registry = buffer_registry();
  // Taken by the parent's threads in their first calls, which the child has not.
  for (auto& slot : registry.starting) slot.store(kNotInCall, std::memory_order_relaxed);
  for (ThreadBuffer* b : registry.buffers) {
    // Records waiting in the copied buffers are the parent's to write.
    b->consumed.store(b->committed.load(std::memory_order_relaxed), std::memory_order_relaxed);
    b->giving_back.store(false, std::memory_order_relaxed);  // the parent's IO thread was at it
    b->preparing.store(false, std::memory_order_relaxed);    // the same
    if (b != tls_buffer) b->abandoned.store(true, std::memory_order_relaxed);
  }
  if (ThreadBuffer* own = tls_buffer) {
    own->os_tid = thread_id();  // the child's thread is a thread of its own
  }
  registry.mutex.unlock();
  g_lifecycle.unlock();
}

}  // namespace

bool child_start_pending() noexcept { return g_child_start_pending.load(std::memory_order_relaxed); }

void start_in_forked_child() noexcept {
  Config config;
  {
    std::lock_guard lock(g_lifecycle);
    if (!g_child_start_pending.load(std::memory_order_relaxed)) return;  // another thread's call did
    g_child_start_pending.store(false, std::memory_order_relaxed);
    try {
      config = *g_started_with;
    } catch (...) {
      levels_stop(false);
      return;
    }
  }
  try {
    terse::start(config);
    std::lock_guard lock(g_lifecycle);
    g_started_by_fork = true;
  } catch (const std::exception& e) {
    // The child's calls are discarded, as they were before log_after_fork.
    std::fprintf(stderr, "terse: the child forked as pid %d cannot log into files of its own: %s\n",
                 static_cast<int>(::getpid()), e.what());
    levels_stop(false);
  }
}

void register_process_hooks() noexcept {
  static bool registered =
      (std::atexit(finish_at_exit), at_fork(before_fork, after_fork_in_parent, after_fork_in_child), true);
  (void)registered;
}

void flush_for_crash() noexcept {
  static std::atomic<bool> flushed{false};  // a crash flushes once, however it unwinds
  if (flushed.exchange(true)) return;
  if (Logger* logger = g_crash_target.load(std::memory_order_acquire)) logger->flush_from_signal(true);
}

void flush_for_termination() noexcept {
  g_signal_flushes.fetch_add(1);
  Logger* logger = g_crash_target.load();
  if (logger != nullptr && !g_stop_draining.load()) {
    logger->flush_from_signal(false);
  } else {
    // stop() is writing everything already (perhaps on this very thread,
    // which the IO threads do not need for it).
    wait_while([] { return g_stop_draining.load(); }, 5000);
  }
  g_signal_flushes.fetch_sub(1);
}

}  // namespace detail

void start(const Config& requested) {
  using namespace detail;
  std::lock_guard lock(g_lifecycle);
  // A forked child that calls start() after its first calls started the
  // parent's Config for it gets what it asks for.
  if (g_logger && g_started_by_fork) stop_under_lock();
  if (g_logger) throw Error("terse: start() called while already running; call stop() first");
  g_child_start_pending.store(false, std::memory_order_relaxed);  // a child that starts terse itself
  LevelSpec environment_levels;
  const Config config = apply_environment(requested, environment_levels);
  validate(config);
  set_thread_cpus(config.cpus);
  set_private_key(config.private_key);
  end_print_after_stop();
  g_hot.max_container_elements.store(config.max_container_elements, std::memory_order_relaxed);
  set_private_values(config.private_values);
  auto logger = std::make_unique<Logger>(config);
  // Read before the collector runs: the clock is its alone from then on.
  g_ticks_per_ns.store(logger->ticks_per_second() / 1e9, std::memory_order_relaxed);
  auto& settings = buffer_settings();
  settings.buffer_bytes.store(config.thread_buffer_bytes, std::memory_order_relaxed);
  settings.drop_when_full.store(config.overflow == Overflow::drop, std::memory_order_relaxed);
  settings.crash_handler.store(config.crash_handler, std::memory_order_relaxed);
  settings.huge_pages.store(config.huge_pages, std::memory_order_relaxed);
  settings.release_idle.store(config.release_idle_after.count() != 0, std::memory_order_relaxed);
  {
    auto& registry = buffer_registry();
    std::lock_guard buffers_lock(registry.mutex);
    for (ThreadBuffer* b : registry.buffers) b->dropped_before_start = b->all_dropped();
  }
  settings.running.store(true, std::memory_order_release);
  g_hot.running.store(true, std::memory_order_relaxed);
  logger->run();
  g_logger = std::move(logger);
  g_started_with = std::make_unique<Config>(requested);
  if (config.crash_handler || config.termination_signals)
    g_crash_target.store(g_logger.get(), std::memory_order_release);
  if (config.crash_handler) install_crash_handlers();
  if (config.termination_signals) install_termination_handlers();
  register_process_hooks();
  // Last, so that no call is logged before everything is in place.
  levels_start(config.level, environment_levels, config.flight_level);
  if (!config.levels_file.empty()) {
    g_levels_watcher = std::make_unique<LevelsFileWatcher>(config.levels_file, g_logger->on_error());
    g_levels_watcher->check();
    g_levels_watcher->start();
  }
}

void flush() {
  using namespace detail;
  std::lock_guard lock(g_lifecycle);
  if (g_logger) g_logger->flush();
}

void flush(Durable) {
  using namespace detail;
  std::lock_guard lock(g_lifecycle);
  if (g_logger) g_logger->flush_durable();
}

Stats stats() {
  using namespace detail;
  std::lock_guard lock(g_lifecycle);
  Stats s = g_logger ? g_logger->stats() : Stats{};
  add_print_counts(s);
  return s;
}

void stop() {
  using namespace detail;
  std::lock_guard lock(g_lifecycle);
  stop_under_lock();
}

namespace detail {
void stop_under_lock() {
  if (!g_logger) return;
  g_started_by_fork = false;
  g_levels_watcher.reset();
  report_suppressed();
  Level after_stop = g_logger->stderr_after_stop();
  levels_stop(after_stop != Level::off);
  g_hot.running.store(false, std::memory_order_relaxed);  // contexts open now stay open in the files
  g_stop_draining.store(true);  // before the target goes: a termination signal always finds one or the other
  g_crash_target.store(nullptr);
  uninstall_crash_handlers();
  g_logger->stop();
  g_stop_draining.store(false, std::memory_order_release);
  // Kept through the drain, so SIGTERM during stop() waits for it instead of
  // losing what it was writing.
  uninstall_termination_handlers();
  wait_while([] { return g_signal_flushes.load() > 0; }, 10'000);
  buffer_settings().running.store(false, std::memory_order_release);
  Calibration calibration = g_logger->calibration();
  g_logger.reset();
  if (after_stop != Level::off) print_after_stop(after_stop, calibration);
}
}  // namespace detail

void preallocate() noexcept {
  using namespace detail;
  if (tls_buffer == nullptr && buffer_settings().running.load(std::memory_order_acquire)) {
    if (ThreadBuffer* buffer = create_thread_buffer_mapped()) buffer->end_call();  // no record follows
  }
}

void set_async(bool asynchronous) noexcept {
  detail::g_hot.synchronous.store(!asynchronous, std::memory_order_relaxed);
  detail::refresh_buffers_synchronous();
}

namespace detail {
void wait_until_written() noexcept {
  if (print_own_records()) return;
  try {
    terse::flush();
  } catch (...) {
    // flush() only throws when a mutex cannot be locked; the record is in
    // the buffer regardless and will be written.
  }
}
}  // namespace detail

}  // namespace terse
