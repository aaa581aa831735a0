// A program at the edges of terse's life, in the shapes users ran into: it
// logs before start() (and may never call it), after stop(), and from a
// static destructor that runs after the exit handlers.
#include <terse/terse.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// Destroyed after terse's exit handler ran (it is constructed first, and
// the handler is registered at the first logging call or start()).
struct LogsWhenDestroyed {
  const char* what = nullptr;
  ~LogsWhenDestroyed() {
    if (what != nullptr) TERSE_WARN("static destructor says {}", what);
  }
};
LogsWhenDestroyed g_last_words;

terse::Config config_for(const char* directory) {
  terse::Config config;
  config.directory = directory;
  config.name = "edge";
  config.level = terse::Level::trace;
  config.read_environment = false;
  return config;
}

void log_early_from_threads(int per_thread) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([t, per_thread] {
      for (int i = 0; i < per_thread; ++i) {
        TERSE_DEBUG("early debug {} {}", t, i);  // below what is kept before start()
        TERSE_INFO("early thread {} record {}", t, i);
      }
      TERSE_WARN("early thread {} is done", t);
    });
  }
  for (auto& thread : threads) thread.join();  // exited threads: their buffers hold the records
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  std::string mode = argv[1];
  const char* directory = argv[2];
  if (mode == "never-started") {
    // A service that fails on its configuration before it gets to start().
    g_last_words.what = "goodbye";
    log_early_from_threads(100);
    TERSE_ERROR("config file {} could not be parsed: {}", "/etc/app.conf", "line 3: unexpected '}'");
    std::exit(1);
  }
  if (mode == "started-later" || mode == "discarded-before-start") {
    if (mode == "discarded-before-start") terse::keep_before_start(terse::Level::off);
    log_early_from_threads(1000);
    TERSE_ERROR("config file {} parsed with {} warnings", "/etc/app.conf", 2);
    terse::start(config_for(directory));
    for (int i = 0; i < 100; ++i) TERSE_INFO("after start {}", i);
    terse::stop();
    return 0;
  }
  if (mode == "overflow-before-start") {
    // Far more than a thread's buffer holds.
    std::string padding(100, 'x');
    int count = std::atoi(argv[3]);
    for (int i = 0; i < count; ++i) TERSE_INFO("early {} {}", i, padding);
    terse::start(config_for(directory));
    TERSE_INFO("started");
    terse::stop();
    return 0;
  }
  if (mode == "after-stop") {
    g_last_words.what = "farewell";
    terse::start(config_for(directory));
    TERSE_INFO("running {}", 1);
    terse::stop();
    TERSE_WARN("after stop {}", 2);
    TERSE_INFO("quiet after stop {}", 3);
    std::thread([] { TERSE_ERROR("after stop from a new thread {}", 4); }).join();
    terse::Stats stats = terse::stats();
    std::printf("printed %llu not written %llu\n", static_cast<unsigned long long>(stats.stderr_records),
                static_cast<unsigned long long>(stats.records_not_written));
    return 0;  // then the static destructor logs once more
  }
  if (mode == "stopped-at-exit") {
    // stop() runs at exit, before the static destructor logs.
    g_last_words.what = "after exit";
    terse::start(config_for(directory));
    TERSE_INFO("running {}", 1);
    return 0;
  }
  return 2;
}
