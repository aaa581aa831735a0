// The loggers terse is measured against, each behind the same small
// interface as terse itself so every harness drives them alike:
// start(dir), log_short(args), log_text(text), flush(), stop(), io_threads().
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/async.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <terse/seal.hpp>
#include <terse/terse.hpp>

#include "harness.hpp"

namespace bench {

class TerseLogger {
 public:
  const char* name() const { return "terse"; }
  void start(const std::string& dir) { terse::start(config_for(dir)); }
  static void log_short(const ShortArgs& a) noexcept {
    TERSE_INFO("request {} took {} us status {} path {}", a.request, a.took_us, a.status, a.path);
  }
  static void log_text(std::string_view text) noexcept { TERSE_INFO("payload {}", text); }
  static void flush() { terse::flush(); }
  static void stop() { terse::stop(); }
  // What every terse variant here starts from.
  static terse::Config config_for(const std::string& dir) {
    terse::Config config;
    config.directory = dir;
    config.name = "bench";
    return config;
  }
  // The threads terse started, found by the names the runtime gives them.
  // Each names itself once running, which may be just after start()
  // returns, so this waits (briefly) for both.
  std::vector<std::uint64_t> io_threads() const {
    std::vector<std::uint64_t> ids;
    for (int attempt = 0; attempt < 1000; ++attempt) {
      ids.clear();
      for (auto tid : thread_ids()) {
        auto name = thread_name(tid);
        if (name == "terse-io" || name == "terse-write") ids.push_back(tid);
      }
      if (ids.size() >= 2) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return ids;
  }
};

// terse with its compression level fixed (Config::fastest_compression_level
// at compression_level): what the adaptive level gains where the writer is
// behind.
class TerseFixedLevelLogger : public TerseLogger {
 public:
  const char* name() const { return "terse fixed level"; }
  void start(const std::string& dir) {
    terse::Config config = config_for(dir);
    config.fastest_compression_level = config.compression_level;
    terse::start(config);
  }
};

// terse sealing every file to a key (Config::encrypt_to): what sealing
// costs the IO threads and the file. The key is TERSE_BENCH_SEAL_KEY's
// public key file when set (bench/sealed.sh reads the files back with its
// private half), else a throwaway one.
class TerseSealedLogger : public TerseLogger {
 public:
  const char* name() const { return "terse sealed"; }
  void start(const std::string& dir) {
    terse::Config config = config_for(dir);
    if (const char* key = std::getenv("TERSE_BENCH_SEAL_KEY")) {
      config.encrypt_to = key;
    } else {
      auto pair = terse::seal::new_key_pair("bench");
      if (!pair) throw std::runtime_error(pair.why());
      config.encrypt_to = keys_.path() + "/key.pub";
      std::FILE* out = std::fopen(config.encrypt_to.c_str(), "w");
      if (out == nullptr) throw std::runtime_error("cannot write " + config.encrypt_to);
      std::fputs(pair->public_line.c_str(), out);
      std::fclose(out);
    }
    terse::start(config);
  }

 private:
  TempDir keys_{"bench-seal-key"};
};

// terse with its own threads pinned (Config::cpus) to the first CPU the
// process may use, as low-latency users run it; the harnesses put a single
// producer on the last one.
class TersePinnedLogger : public TerseLogger {
 public:
  const char* name() const { return "terse pinned"; }
  void start(const std::string& dir) {
    terse::Config config = config_for(dir);
    config.cpus = {allowed_cpus().front()};
    terse::start(config);
  }
};

// terse with its console on, as a developer runs it: text lines of every
// record, written to /dev/null so that what is measured is terse's side of
// it (rendering on its own threads), not a terminal.
class TerseConsoleLogger : public TerseLogger {
 public:
  const char* name() const { return "terse+console"; }
  void start(const std::string& dir) {
    null_fd_ = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    terse::Config config = config_for(dir);
    config.console = terse::Console::text;
    config.console_fd = null_fd_;
    terse::start(config);
  }
  void stop() {
    terse::stop();
    ::close(null_fd_);
  }

 private:
  int null_fd_ = -1;
};

// spdlog's async logger as users get it: default queue (8192 messages),
// blocking when full, one worker, the default pattern, a basic file sink.
class SpdlogAsync {
 public:
  const char* name() const { return "spdlog-async"; }
  void start(const std::string& dir) {
    workers_.clear();
    auto on_start = [this] {
      pthread_setname_np(pthread_self(), "spdlog-worker");
      std::lock_guard lock(mutex_);
      workers_.push_back(gettid_u64());
    };
    pool_ = std::make_shared<spdlog::details::thread_pool>(8192, 1, on_start);
    auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(dir + "/spdlog.log", true);
    flag_ = std::make_shared<FlushFlag>();
    // Off for records, so it costs the worker nothing per message; flush()
    // still reaches it, after the file sink, in queue order.
    flag_->set_level(spdlog::level::off);
    logger_ = std::make_shared<spdlog::async_logger>("bench", spdlog::sinks_init_list{file, flag_}, pool_,
                                                     spdlog::async_overflow_policy::block);
    logger_->set_level(spdlog::level::info);
    // The worker records its id as it starts; wait so io_threads() is complete.
    for (;;) {
      {
        std::lock_guard lock(mutex_);
        if (!workers_.empty()) break;
      }
      std::this_thread::yield();
    }
  }
  void log_short(const ShortArgs& a) {
    logger_->info("request {} took {} us status {} path {}", a.request, a.took_us, a.status, a.path);
  }
  void log_text(std::string_view text) { logger_->info("payload {}", text); }
  spdlog::async_logger& raw() { return *logger_; }
  // spdlog's own flush() only enqueues a request; this waits until the
  // worker has carried it out, i.e. until every earlier record is written.
  void flush() {
    std::uint64_t target = flag_->flushes.load(std::memory_order_acquire) + 1;
    logger_->flush();
    while (flag_->flushes.load(std::memory_order_acquire) < target) std::this_thread::yield();
  }
  void stop() {
    logger_.reset();
    flag_.reset();
    pool_.reset();  // joins the worker after it drains the queue
  }
  std::vector<std::uint64_t> io_threads() {
    std::lock_guard lock(mutex_);
    return workers_;
  }

 private:
  struct FlushFlag final : spdlog::sinks::base_sink<spdlog::details::null_mutex> {
    std::atomic<std::uint64_t> flushes{0};
    void sink_it_(const spdlog::details::log_msg&) override {}
    void flush_() override { flushes.fetch_add(1, std::memory_order_release); }
  };
  std::shared_ptr<spdlog::details::thread_pool> pool_;
  std::shared_ptr<FlushFlag> flag_;
  std::shared_ptr<spdlog::async_logger> logger_;
  std::mutex mutex_;
  std::vector<std::uint64_t> workers_;
};

// stdio on the caller's thread: formatting and the buffer copy happen in the
// call, and every buffer-full costs the caller a write(2).
class Fprintf {
 public:
  explicit Fprintf(std::size_t buffer_bytes) : buffer_bytes_(buffer_bytes) {}
  const char* name() const { return buffer_bytes_ == 0 ? "fprintf" : "fprintf-40k"; }
  void start(const std::string& dir) {
    file_ = std::fopen((dir + "/fprintf.log").c_str(), "w");
    if (file_ == nullptr) {
      std::perror("terse-bench: fopen");
      std::exit(2);
    }
    if (buffer_bytes_ != 0) {
      buffer_.resize(buffer_bytes_);
      std::setvbuf(file_, buffer_.data(), _IOFBF, buffer_.size());
    }
  }
  void log_short(const ShortArgs& a) {
    std::fprintf(file_, "request %d took %g us status %d path %s\n", a.request, a.took_us, a.status, a.path);
  }
  void log_text(std::string_view text) {
    std::fprintf(file_, "payload %.*s\n", static_cast<int>(text.size()), text.data());
  }
  void flush() { std::fflush(file_); }
  void stop() {
    std::fclose(file_);
    file_ = nullptr;
  }
  std::vector<std::uint64_t> io_threads() const { return {}; }

 private:
  std::size_t buffer_bytes_;
  std::vector<char> buffer_;
  std::FILE* file_ = nullptr;
};

// The floor for any logger that formats at the call site: fmt into memory,
// nothing written anywhere. One buffer per thread, reused.
class FmtToMemory {
 public:
  const char* name() const { return "fmt::format_to"; }
  void start(const std::string&) {}
  void log_short(const ShortArgs& a) {
    auto& buffer = tls_buffer();
    buffer.clear();
    fmt::format_to(std::back_inserter(buffer), "request {} took {} us status {} path {}", a.request, a.took_us,
                   a.status, a.path);
    compiler_barrier();
  }
  void log_text(std::string_view text) {
    auto& buffer = tls_buffer();
    buffer.clear();
    fmt::format_to(std::back_inserter(buffer), "payload {}", text);
    compiler_barrier();
  }
  void flush() {}
  void stop() {}
  std::vector<std::uint64_t> io_threads() const { return {}; }

 private:
  static fmt::memory_buffer& tls_buffer() {
    thread_local fmt::memory_buffer buffer;
    return buffer;
  }
};

}  // namespace bench
