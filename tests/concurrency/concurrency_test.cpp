// Many threads logging at once through small buffers: nothing is lost or
// duplicated under the block policy, each thread's records keep their order,
// the merged stream is in time order, and under the drop policy every
// attempt is either written or counted as dropped.
//
// TERSE_TEST_SCALE (default 1.0) scales the record counts; CI sets it to 0.1
// under ThreadSanitizer, which runs about ten times slower.
#include <catch2/catch.hpp>

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <terse/detail/test_hooks.hpp>

#include "test_support.hpp"

using namespace terse::test;
namespace dec = terse::decoder;

namespace {

// What the decoded stream says, checked record by record as it streams past
// so that a million records need no million Line objects.
struct Tally {
  explicit Tally(std::size_t threads)
      : next(threads, 0), written(threads, 0), thread_last_ticks(threads, 0), thread_last_unix_ns(threads, 0) {}

  std::vector<std::uint64_t> next;     // per logical thread: the sequence number expected next
  std::vector<std::uint64_t> written;  // per logical thread: records decoded
  std::vector<std::uint64_t> thread_last_ticks;
  std::vector<std::int64_t> thread_last_unix_ns;
  std::uint64_t thread_time_reversals = 0;  // within one thread's records
  std::map<std::uint64_t, std::uint64_t> dropped_by_tid;
  std::map<std::uint64_t, std::uint64_t> tid_of_logical;  // logical thread -> OS thread id
  std::uint64_t records = 0;
  std::uint64_t dropped = 0;
  std::uint64_t drop_records = 0;
  std::uint64_t gaps = 0;          // sequence numbers skipped (allowed only when dropping)
  std::uint64_t out_of_order = 0;  // a sequence number at or below one already seen
  std::uint64_t bad_records = 0;   // unexpected site or argument shape
  std::uint64_t tid_mismatches = 0;
  std::uint64_t time_reversals = 0;  // across the merged stream
  std::uint64_t last_ticks = 0;
  std::uint64_t last_tid = 0;
  std::int64_t largest_reversal_ns = 0;
  std::int64_t last_unix_ns = 0;
  std::string first_problem;
  std::vector<dec::Problem> problems;
  std::vector<dec::Summary> summaries;

  void note(const std::string& what) {
    if (first_problem.empty()) first_problem = what;
  }

  void add(const dec::Record& r) {
    if (r.ticks < last_ticks || r.unix_ns < last_unix_ns) {
      ++time_reversals;
      largest_reversal_ns = std::max(largest_reversal_ns, last_unix_ns - r.unix_ns);
      note("time went back " + std::to_string(last_unix_ns - r.unix_ns) + " ns at record " +
           std::to_string(records + drop_records) + ", from thread " + std::to_string(last_tid) + " to thread " +
           std::to_string(r.thread->os_tid));
    }
    last_tid = r.thread->os_tid;
    last_ticks = r.ticks;
    last_unix_ns = r.unix_ns;
    if (r.kind == dec::RecordKind::dropped) {
      ++drop_records;
      dropped += r.dropped_count;
      dropped_by_tid[r.thread->os_tid] += r.dropped_count;
      return;
    }
    ++records;
    if (r.args.size() < 2) {
      ++bad_records;
      note("record with " + std::to_string(r.args.size()) + " arguments");
      return;
    }
    const std::uint64_t logical = r.args[0].u;
    const std::uint64_t sequence = r.args[1].u;
    if (logical >= next.size()) {
      ++bad_records;
      note("unknown logical thread " + std::to_string(logical));
      return;
    }
    auto [it, inserted] = tid_of_logical.emplace(logical, r.thread->os_tid);
    if (!inserted && it->second != r.thread->os_tid) ++tid_mismatches;
    if (sequence < next[logical]) {
      ++out_of_order;
      note("thread " + std::to_string(logical) + ": sequence " + std::to_string(sequence) + " after " +
           std::to_string(next[logical] - 1));
      return;
    }
    ++written[logical];
    if (r.ticks < thread_last_ticks[logical] || r.unix_ns < thread_last_unix_ns[logical]) {
      ++thread_time_reversals;
      note("thread " + std::to_string(logical) + ": time went back at sequence " + std::to_string(sequence));
    }
    thread_last_ticks[logical] = r.ticks;
    thread_last_unix_ns[logical] = r.unix_ns;
    gaps += sequence - next[logical];
    next[logical] = sequence + 1;
  }

  void decode(const std::string& directory) {
    for (const auto& file : log_files(directory)) {
      summaries.push_back(dec::decode_file(
          file, [&](const dec::Record& r) { add(r); }, [&](const dec::Problem& p) { problems.push_back(p); }));
    }
  }

  bool intact() const {
    for (const auto& s : summaries)
      if (!s.intact()) return false;
    return problems.empty();
  }
};

void log_sequence(std::uint32_t logical, std::uint64_t count) {
  for (std::uint64_t i = 0; i < count; ++i) TERSE_INFO("thread {} record {}", logical, i);
}

// `per_thread[t]`: the records logical thread t logged.
void require_everything_once_in_order(const Tally& tally, const std::vector<std::uint64_t>& per_thread) {
  INFO("first problem: " << tally.first_problem);
  CHECK(tally.intact());
  CHECK(tally.bad_records == 0);
  CHECK(tally.out_of_order == 0);
  CHECK(tally.gaps == 0);
  CHECK(tally.dropped == 0);
  CHECK(tally.tid_mismatches == 0);
  CHECK(tally.thread_time_reversals == 0);
  CHECK(tally.records == std::accumulate(per_thread.begin(), per_thread.end(), std::uint64_t{0}));
  for (std::size_t t = 0; t < per_thread.size(); ++t) {
    INFO("logical thread " << t);
    CHECK(tally.next[t] == per_thread[t]);
  }
}

void require_everything_once_in_order(const Tally& tally, std::size_t threads, std::uint64_t per_thread) {
  require_everything_once_in_order(tally, std::vector<std::uint64_t>(threads, per_thread));
}

}  // namespace

TEST_CASE("threads logging at once through small blocking buffers lose nothing and stay in order", "[concurrency]") {
  constexpr std::size_t kThreads = 6;
  const std::uint64_t per_thread = scaled(200'000);
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 64 * 1024;  // small, so writers fill it and block
  terse::start(config);
  {
    std::vector<std::thread> threads;
    std::atomic<bool> go{false};
    for (std::uint32_t t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        log_sequence(t, per_thread);
      });
    }
    go.store(true, std::memory_order_release);
    for (auto& thread : threads) thread.join();
  }
  terse::stop();

  Tally tally(kThreads);
  tally.decode(dir.path());
  require_everything_once_in_order(tally, kThreads, per_thread);
  CHECK(tally.tid_of_logical.size() == kThreads);
}

TEST_CASE("records of threads that exited before flush and stop are all written", "[concurrency]") {
  constexpr std::size_t kThreads = 4;
  const std::uint64_t per_thread = scaled(50'000);
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 64 * 1024;
  terse::start(config);
  {
    std::vector<std::thread> threads;
    for (std::uint32_t t = 0; t < kThreads; ++t) threads.emplace_back(log_sequence, t, per_thread);
    for (auto& thread : threads) thread.join();
  }
  // Every writer is gone; what they left in their buffers must still come out.
  terse::flush();
  {
    Tally tally(kThreads);
    tally.decode(dir.path());
    INFO("decoded after flush, before stop");
    require_everything_once_in_order(tally, kThreads, per_thread);
  }
  terse::stop();
  Tally tally(kThreads);
  tally.decode(dir.path());
  INFO("decoded after stop");
  require_everything_once_in_order(tally, kThreads, per_thread);
}

TEST_CASE("many short-lived threads each get all their records written", "[concurrency]") {
  constexpr std::size_t kThreads = 200;
  constexpr std::uint64_t kPerThread = 100;
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 64 * 1024;
  terse::start(config);
  // Waves of threads, so threads are created while earlier ones exit and
  // the IO thread releases their buffers.
  constexpr std::size_t kWave = 25;
  for (std::size_t first = 0; first < kThreads; first += kWave) {
    std::vector<std::thread> wave;
    for (std::size_t t = first; t < first + kWave; ++t)
      wave.emplace_back(log_sequence, static_cast<std::uint32_t>(t), kPerThread);
    for (auto& thread : wave) thread.join();
  }
  terse::stop();

  Tally tally(kThreads);
  tally.decode(dir.path());
  require_everything_once_in_order(tally, kThreads, kPerThread);
}

namespace {

// Floods tiny buffers under the drop policy from several threads and checks
// that written + reported-dropped == attempted, in total and per thread.
// With `log_after_flood`, each thread waits for the IO thread to drain its
// buffer (flush) and logs one more record, which gives the runtime the
// chance to write the thread's pending drop count.
void check_drop_accounting(bool log_after_flood) {
  constexpr std::size_t kThreads = 4;
  const std::uint64_t flood = scaled(100'000);
  const std::uint64_t per_thread = flood + (log_after_flood ? 1 : 0);
  TempDir dir;
  auto config = test_config(dir.path());
  config.overflow = terse::Overflow::drop;
  config.thread_buffer_bytes = 4096;  // the smallest allowed: a few records fill it
  terse::start(config);
  const std::string padding(200, 'p');  // larger records fill the buffer sooner
  std::vector<std::uint64_t> tids(kThreads);
  {
    std::vector<std::thread> threads;
    for (std::uint32_t t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        tids[t] = static_cast<std::uint64_t>(::gettid());
        for (std::uint64_t i = 0; i < flood; ++i) TERSE_INFO("thread {} record {} {}", t, i, padding);
        if (log_after_flood) {
          terse::flush();
          TERSE_INFO("thread {} record {} {}", t, flood, padding);
        }
      });
    }
    for (auto& thread : threads) thread.join();
  }
  terse::stop();

  Tally tally(kThreads);
  tally.decode(dir.path());
  INFO("first problem: " << tally.first_problem);
  INFO("written " << tally.records << ", dropped " << tally.dropped << " in " << tally.drop_records
                  << " drop records, attempted " << kThreads * per_thread);
  CHECK(tally.intact());
  CHECK(tally.bad_records == 0);
  CHECK(tally.out_of_order == 0);
  CHECK(tally.thread_time_reversals == 0);
  CHECK(tally.dropped > 0);
  CHECK(tally.records + tally.dropped == kThreads * per_thread);
  // Drops are reported by the thread that dropped.
  for (std::uint32_t t = 0; t < kThreads; ++t) {
    INFO("logical thread " << t);
    const auto found = tally.dropped_by_tid.find(tids[t]);
    const std::uint64_t dropped = found == tally.dropped_by_tid.end() ? 0 : found->second;
    CHECK(tally.written[t] + dropped == per_thread);
    if (log_after_flood) CHECK(tally.next[t] == per_thread);  // the last record made it
  }
}

}  // namespace

TEST_CASE("under the drop policy every attempt is written or counted, once the thread logs again", "[concurrency]") {
  check_drop_accounting(true);
}

// The IO thread reports drops itself, so a thread that stops logging (or
// exits) right after dropping still has its drops counted.
TEST_CASE("under the drop policy every attempt is written or counted, even when the thread exits right after",
          "[concurrency]") {
  check_drop_accounting(false);
}

// More threads than cores make preemptions between a call's timestamp and
// its commit common, and large buffers keep the threads running instead of
// blocking: the IO thread must wait for such calls, not only for a window.
TEST_CASE("records of all threads come out in time order", "[concurrency]") {
  constexpr std::size_t kThreads = 8;
  const std::uint64_t per_thread = scaled(200'000);
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 16 << 20;
  terse::start(config);
  {
    std::vector<std::thread> threads;
    for (std::uint32_t t = 0; t < kThreads; ++t) threads.emplace_back(log_sequence, t, per_thread);
    for (auto& thread : threads) thread.join();
  }
  terse::stop();
  Tally tally(kThreads);
  tally.decode(dir.path());
  require_everything_once_in_order(tally, kThreads, per_thread);
  INFO("first problem: " << tally.first_problem);
  INFO("largest step back " << tally.largest_reversal_ns << " ns");
  CHECK(tally.time_reversals == 0);
}

namespace {

// Holds the IO thread where a signal finds it, as a loaded machine preempts
// it at any instruction, until the test lets it go on.
std::atomic<std::uint32_t> g_holds_begun{0};
std::atomic<std::uint32_t> g_holds_ended{0};
std::atomic<bool> g_io_released{false};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "used in a signal handler");

// It lets go by itself after 50 ms: held inside a lock the test's own
// thread then needs (the allocator's, say), it would otherwise never be let go.
extern "C" void hold_io_thread(int) {
  g_holds_begun.fetch_add(1);
  for (int naps = 0; naps < 5000 && !g_io_released.load(); ++naps) {
    timespec nap{0, 10'000};
    ::nanosleep(&nap, nullptr);
  }
  g_holds_ended.fetch_add(1);
}

void spin_for(std::chrono::microseconds span) {
  auto until = std::chrono::steady_clock::now() + span;
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace

// A thread's first call registers its ring while the IO thread is somewhere
// in a pass, and the IO thread can be preempted anywhere, for milliseconds.
// Each trial holds it at a random point while a new thread logs its first
// record and a thread already known logs a later one: the new thread's
// record must still come out first, in the passes of a flush too (which
// have no ordering window).
TEST_CASE("a new thread's first record keeps time order wherever the IO thread is held up", "[concurrency]") {
  const bool flushing = GENERATE(false, true);
  INFO((flushing ? "with" : "without") << " flushes");
  const std::uint64_t trials = scaled(1000, 100);
  constexpr std::uint32_t kSteady = 0, kKnown = 1, kFirstNewcomer = 2;
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 64 * 1024;
  terse::detail::deliver_to_terse_threads_for_tests(SIGUSR2);  // hold_io_thread
  terse::start(config);
  const std::vector<int> io_threads = threads_named("terse-io");
  REQUIRE(io_threads.size() == 1);
  const int io_thread = io_threads.front();
  struct sigaction hold {};
  hold.sa_handler = hold_io_thread;
  hold.sa_flags = SA_RESTART;
  sigemptyset(&hold.sa_mask);
  struct sigaction previous {};
  REQUIRE(::sigaction(SIGUSR2, &hold, &previous) == 0);
  std::atomic<bool> done{false};
  std::uint64_t steady_written = 0;
  // Keeps the IO thread in short passes, one after another, so that the
  // signals find it in one rather than asleep or deep in a long drain.
  std::thread steady([&] {
    std::uint64_t i = 0;
    while (!done.load(std::memory_order_relaxed)) {
      TERSE_INFO("thread {} record {}", kSteady, i++);
      spin_for(std::chrono::microseconds(1));
    }
    steady_written = i;
  });
  std::thread flusher([&] {
    while (flushing && !done.load(std::memory_order_relaxed)) terse::flush();
  });
  TERSE_INFO("thread {} record {}", kKnown, 0);  // known, so that its calls take no lock the IO thread may hold
  std::mt19937 random(20261203);
  std::uniform_int_distribution<int> pause_us(0, 40);
  for (std::uint64_t trial = 0; trial < trials; ++trial) {
    spin_for(std::chrono::microseconds(pause_us(random)));
    g_io_released.store(false);
    const std::uint32_t holds = g_holds_begun.load();
    REQUIRE(::tgkill(::getpid(), io_thread, SIGUSR2) == 0);
    while (g_holds_begun.load() == holds) std::this_thread::yield();
    std::atomic<bool> logged{false};
    std::thread newcomer([&] {
      log_sequence(static_cast<std::uint32_t>(kFirstNewcomer + trial), 1);
      logged.store(true);
    });
    // Held in the registry's lock, say, the IO thread keeps the newcomer
    // from registering: that trial lets it go on without the rest.
    auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(5);
    while (!logged.load() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    TERSE_INFO("thread {} record {}", kKnown, trial + 1);
    // The known thread's record is then past the window when the IO thread goes on.
    spin_for(config.ordering_window * 2);
    g_io_released.store(true);
    while (g_holds_ended.load() != holds + 1) std::this_thread::yield();  // out of the handler before the next signal
    newcomer.join();
  }
  done.store(true, std::memory_order_relaxed);
  steady.join();
  flusher.join();
  ::sigaction(SIGUSR2, &previous, nullptr);
  terse::stop();
  Tally tally(kFirstNewcomer + trials);
  tally.decode(dir.path());
  std::vector<std::uint64_t> logged_per_thread(kFirstNewcomer + trials, 1);
  logged_per_thread[kSteady] = steady_written;
  logged_per_thread[kKnown] = trials + 1;
  require_everything_once_in_order(tally, logged_per_thread);
  INFO("first problem: " << tally.first_problem);
  INFO("largest step back " << tally.largest_reversal_ns << " ns");
  CHECK(tally.time_reversals == 0);
}

// The writer recalibrates its clock about once a second; converted wall
// times must not step back within a thread when it does.
TEST_CASE("wall-clock times stay monotonic per thread across recalibrations", "[concurrency]") {
  constexpr std::size_t kThreads = 2;
  constexpr std::uint64_t kPerThread = 1'200;
  TempDir dir;
  terse::start(test_config(dir.path()));
  {
    std::vector<std::thread> threads;
    for (std::uint32_t t = 0; t < kThreads; ++t) {
      threads.emplace_back([t] {
        for (std::uint64_t i = 0; i < kPerThread; ++i) {
          TERSE_INFO("thread {} record {}", t, i);
          std::this_thread::sleep_for(std::chrono::milliseconds(2));  // spans several calibration periods
        }
      });
    }
    for (auto& thread : threads) thread.join();
  }
  terse::stop();
  Tally tally(kThreads);
  tally.decode(dir.path());
  require_everything_once_in_order(tally, kThreads, kPerThread);
}

TEST_CASE("a new thread given an exited thread's buffer writes as itself, after a busy and a quiet one",
          "[concurrency]") {
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 64 * 1024;
  terse::start(config);
  std::vector<std::uint64_t> os_ids;
  std::vector<std::string> expected;
  // Quiet threads leave their buffers for the next ones, a busy one (past
  // the ring's first pages) has its buffer freed; either way each thread's
  // records must carry that thread and nothing of the one before it.
  const std::uint64_t per_thread[] = {3, 2000, 1, 5, 2000, 4};
  for (std::size_t t = 0; t < std::size(per_thread); ++t) {
    std::thread([&, t] {
      os_ids.push_back(static_cast<std::uint64_t>(::gettid()));
      for (std::uint64_t n = 0; n < per_thread[t]; ++n) TERSE_INFO("thread {} record {}", t, n);
    }).join();
    for (std::uint64_t n = 0; n < per_thread[t]; ++n)
      expected.push_back("thread " + std::to_string(t) + " record " + std::to_string(n));
    terse::flush();  // the IO thread has released the exited thread's buffer by the next pass
  }
  terse::stop();
  const Decoded decoded = decode_dir(dir.path());
  require_messages(decoded, expected);
  std::size_t at = 0;
  for (std::size_t t = 0; t < std::size(per_thread); ++t)
    for (std::uint64_t n = 0; n < per_thread[t]; ++n, ++at) REQUIRE(decoded.lines[at].thread == os_ids[t]);
}

namespace {

// How many times the kernel thread `tid` of this process went to sleep.
std::uint64_t times_asleep(int tid) {
  std::ifstream status("/proc/self/task/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stoull(line.substr(line.find(':') + 1));
  return 0;
}

}  // namespace

// Each look of the IO thread into a ring takes the cache lines its thread
// writes next away from that thread's core, and the thread's next call
// waits to get them back. A service logging a burst every few milliseconds
// must not be looked at every millisecond for it; its records still all
// reach the file.
TEST_CASE("the IO thread looks into rings that fill slowly every few milliseconds, not every one", "[concurrency]") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  TERSE_INFO("burst {} call {}", 0, 0);  // the thread's ring, made before the count begins
  terse::flush();
  const std::vector<int> io_threads = threads_named("terse-io");
  REQUIRE(io_threads.size() == 1);
  std::vector<std::string> expected{"burst 0 call 0"};
  constexpr auto kLasting = std::chrono::milliseconds(600);
  const std::uint64_t asleep_before = times_asleep(io_threads.front());
  const auto begin = std::chrono::steady_clock::now();
  for (int burst = 1; std::chrono::steady_clock::now() - begin < kLasting; ++burst) {
    for (int call = 0; call < 20; ++call) {
      TERSE_INFO("burst {} call {}", burst, call);
      expected.push_back(fmt::format("burst {} call {}", burst, call));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  const auto lasted = std::chrono::steady_clock::now() - begin;
  const std::uint64_t sleeps = times_asleep(io_threads.front()) - asleep_before;
  terse::stop();
  // Looking every millisecond, it slept some 600 times; sleeping up to 10 ms
  // while the ring fills this slowly, some 60. Under an emulator the count
  // also holds the waits of the emulator's own locks.
  const auto lasted_ms = std::chrono::duration_cast<std::chrono::milliseconds>(lasted).count();
  const std::uint64_t at_most_one_in = *program_emulator() == '\0' ? 4 : 2;
  INFO(sleeps << " sleeps in " << lasted_ms << " ms");
  CHECK(sleeps * at_most_one_in < static_cast<std::uint64_t>(lasted_ms));
  require_messages(decode_dir(dir.path()), expected);
}
