// Config::release_idle_after: the IO thread gives the memory of an idle
// thread's buffer back to the system while the thread lives on. The buffer
// must then take its pages again as its thread logs, and a call that begins
// while the memory is being given back must lose nothing.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <latch>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <terse/detail/test_hooks.hpp>

#include "test_support.hpp"

using namespace terse::test;
using namespace std::chrono_literals;

namespace {

// ThreadSanitizer keeps what it knew of the pages, so the memory given back
// does not show in the process's resident size.
#if defined(__SANITIZE_THREAD__)
constexpr bool kResidentSizeShowsRelease = false;
#elif defined(__has_feature)
constexpr bool kResidentSizeShowsRelease = !__has_feature(thread_sanitizer);
#else
constexpr bool kResidentSizeShowsRelease = true;
#endif

// Nor does it under qemu-user (7.2, Debian 12's), which takes madvise() for
// a hint and ignores it: the pages stay, though the release protocol ran.
[[maybe_unused]] bool resident_size_shows_release() { return kResidentSizeShowsRelease && *program_emulator() == '\0'; }

[[maybe_unused]] std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::string payload(std::uint64_t n) { return std::string(100 + n % 50, static_cast<char>('a' + n % 26)); }

std::string message(std::size_t thread, std::uint64_t n) {
  return fmt::format("thread {} record {} {}", thread, n, payload(n));
}

void log_records(std::size_t thread, std::uint64_t from, std::uint64_t to) {
  for (std::uint64_t n = from; n < to; ++n) TERSE_INFO("thread {} record {} {}", thread, n, payload(n));
}

// Each thread's records, whole and in order, as fmt::format prints them.
void require_every_record(const Decoded& decoded, const std::vector<std::uint64_t>& per_thread) {
  INFO(decoded.problems.size() << " problems");
  REQUIRE(decoded.intact());
  std::map<std::size_t, std::vector<std::string>> by_thread;
  for (const Line& line : decoded.lines) {
    REQUIRE(!line.dropped);
    std::size_t thread = std::stoul(line.message.substr(std::string("thread ").size()));
    by_thread[thread].push_back(line.message);
  }
  REQUIRE(by_thread.size() == per_thread.size());
  for (std::size_t t = 0; t < per_thread.size(); ++t) {
    INFO("thread " << t);
    const auto& got = by_thread[t];
    REQUIRE(got.size() == per_thread[t]);
    for (std::uint64_t n = 0; n < per_thread[t]; ++n) REQUIRE(got[n] == message(t, n));
  }
}

[[maybe_unused]] std::uint64_t released_so_far() { return terse::stats().idle_buffers_released; }

[[maybe_unused]] std::uint64_t times_released(std::uint64_t os_tid) {
  for (const auto& thread : terse::stats().threads)
    if (thread.os_tid == os_tid) return thread.times_released;
  return 0;
}

// A value whose copy into the record takes long: its codec runs inside the
// call, once to measure the record and once to write it.
struct SlowToCopy {
  std::uint64_t value;
};
thread_local unsigned slow_fields_calls = 0;

}  // namespace

template <>
struct terse::codec<SlowToCopy> {
  static constexpr std::string_view format = "{}";
  static auto fields(const SlowToCopy& slow) {
    if (++slow_fields_calls % 2 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // writing
    return std::tuple(slow.value);
  }
};

TEST_CASE("an idle thread's buffer memory goes back to the system, and the thread logs on as before", "[concurrency]") {
  constexpr std::size_t kThreads = 4;
  constexpr std::size_t kRingBytes = std::size_t{4} << 20;
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = kRingBytes;
  config.release_idle_after = 200ms;
  terse::start(config);
  // Each thread passes its whole ring more than once, so all of it is mapped.
  const std::uint64_t first_part = 2 * kRingBytes / 160;
  const std::uint64_t second_part = first_part + 1000;
  std::atomic<std::size_t> threads_idle{0};
  std::atomic<bool> log_again{false};
  std::vector<std::uint64_t> os_ids(kThreads);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      os_ids[t] = static_cast<std::uint64_t>(::gettid());
      log_records(t, 0, first_part);
      threads_idle.fetch_add(1);
      while (!log_again.load()) std::this_thread::sleep_for(1ms);
      log_records(t, first_part, second_part);
    });
  }
  while (threads_idle.load() < kThreads) std::this_thread::sleep_for(1ms);
  terse::flush();
  const std::uint64_t resident_while_full = resident_bytes();
  // On a loaded machine a thread that finished first may be quiet long
  // enough before the rest are done: its ring was given back already.
  const std::uint64_t full_rings = kThreads - released_so_far();
  auto give_up = std::chrono::steady_clock::now() + 20s;
  while (released_so_far() < kThreads && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(10ms);
  const terse::Stats stats = terse::stats();
  const std::uint64_t resident_after = resident_bytes();
  CHECK(stats.idle_buffers_released == kThreads);
  for (const auto& thread : stats.threads) {
    if (std::find(os_ids.begin(), os_ids.end(), thread.os_tid) != os_ids.end()) CHECK(thread.times_released == 1);
  }
  // At least three quarters of the rings' memory is gone from the process
  // (the rest of the process may have grown meanwhile: the decoder's
  // buffers, a sanitizer's own). Rings moved to huge pages count too: a
  // moved ring that kept its huge pages took 2 MiB back at once.
  INFO("resident " << resident_while_full << " then " << resident_after << ", " << full_rings << " rings full");
  if (resident_size_shows_release() && full_rings > 0) {
    CHECK(resident_while_full > resident_after);
    CHECK(resident_while_full - std::min(resident_while_full, resident_after) >= full_rings * kRingBytes * 3 / 4);
  }

  log_again.store(true);
  for (auto& thread : threads) thread.join();
  terse::stop();
  require_every_record(decode_dir(dir.path()), std::vector<std::uint64_t>(kThreads, second_part));
}

TEST_CASE("calls that begin while their buffer's memory is given back lose nothing", "[concurrency]") {
  // Threads log bursts and pause for about as long as they take to count as
  // idle, so that some bursts begin while the IO thread gives their memory
  // back, some just before and some just after; every third pause lasts
  // until the thread's memory has been given back.
  constexpr std::size_t kThreads = 4;
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 256 * 1024;
  config.release_idle_after = 1ms;
  terse::start(config);
  const std::uint64_t per_thread = scaled(60'000, 6'000);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 random(static_cast<unsigned>(t) + 1);
      std::uniform_int_distribution<std::uint64_t> burst(150, 1500);  // past the ring's faulted part
      std::uniform_int_distribution<int> pause_us(0, 3000);
      const auto os_tid = static_cast<std::uint64_t>(::gettid());
      for (std::uint64_t n = 0, bursts = 0; n < per_thread; ++bursts) {
        std::uint64_t to = std::min(per_thread, n + burst(random));
        log_records(t, n, to);
        n = to;
        if (bursts % 3 == 0) {
          const std::uint64_t before = times_released(os_tid);
          auto give_up = std::chrono::steady_clock::now() + 2s;
          while (times_released(os_tid) == before && std::chrono::steady_clock::now() < give_up)
            std::this_thread::sleep_for(std::chrono::microseconds(pause_us(random) / 10));
        } else {
          std::this_thread::sleep_for(std::chrono::microseconds(pause_us(random)));
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const std::uint64_t released = released_so_far();
  terse::stop();
  CHECK(released > 0);
  require_every_record(decode_dir(dir.path()), std::vector<std::uint64_t>(kThreads, per_thread));
}

TEST_CASE("a call that stays long in the middle of its record keeps its buffer's memory", "[concurrency]") {
  // Its thread commits nothing for longer than it takes to count as idle,
  // while it writes into its ring: that memory must stay.
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 256 * 1024;
  config.release_idle_after = 1ms;
  terse::start(config);
  constexpr std::uint64_t kRounds = 5;
  std::vector<std::string> expected;
  std::thread([&] {
    for (std::uint64_t round = 0; round < kRounds; ++round) {
      log_records(0, round * 300, round * 300 + 300);  // past the ring's faulted part
      TERSE_INFO("slow {}", SlowToCopy{round});
    }
  }).join();
  terse::stop();
  const Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  std::size_t at = 0;
  for (std::uint64_t round = 0; round < kRounds; ++round) {
    for (std::uint64_t n = round * 300; n < round * 300 + 300; ++n, ++at) {
      REQUIRE(at < decoded.lines.size());
      REQUIRE(decoded.lines[at].message == message(0, n));
    }
    REQUIRE(at < decoded.lines.size());
    REQUIRE(decoded.lines[at++].message == fmt::format("slow {}", round));
  }
  CHECK(at == decoded.lines.size());
}

// Where each call fences itself for the give-back (the POSIX platform), a ring made while
// nothing was to be given back does not fence, and is never given back: not after a restart
// that gives idle memory back either. Where the OS fences the threads, it is.
TEST_CASE("a ring made while release_idle_after was 0 is given back after a restart only where the OS fences threads",
          "[concurrency]") {
  constexpr std::size_t kRingBytes = std::size_t{1} << 20;
  const std::uint64_t part = 2 * kRingBytes / 160;
  TempDir first_dir("first-run"), second_dir("second-run");
  auto config = test_config(first_dir.path());
  config.thread_buffer_bytes = kRingBytes;
  config.release_idle_after = 0ms;
  terse::start(config);
  std::atomic<int> step{0};
  std::atomic<std::uint64_t> old_tid{0}, new_tid{0};
  auto wait_for_step = [&step](int wanted) {
    while (step.load() < wanted) std::this_thread::sleep_for(1ms);
  };
  std::thread made_without([&] {
    old_tid = os_thread_id();
    log_records(0, 0, part);
    step = 1;
    wait_for_step(2);
    log_records(0, part, 2 * part);  // the second run's records, into the ring it made
    step = 3;
    wait_for_step(5);
  });
  wait_for_step(1);
  terse::stop();
  config.directory = second_dir.path();
  config.release_idle_after = 50ms;
  terse::start(config);
  step = 2;
  wait_for_step(3);
  std::thread made_with([&] {
    new_tid = os_thread_id();
    log_records(1, 0, part);
    step = 4;
    wait_for_step(5);
  });
  wait_for_step(4);
  auto give_up = std::chrono::steady_clock::now() + 20s;
  while (times_released(new_tid) == 0 && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(10ms);
  // The old ring has been as quiet as the new one for longer: a give-back would have come.
  std::this_thread::sleep_for(300ms);
  const std::uint64_t old_released = times_released(old_tid);
  CHECK(times_released(new_tid) == 1);
  CHECK(old_released == (terse::detail::kCallsFenceThemselves ? 0 : 1));
  step = 5;
  made_without.join();
  made_with.join();
  terse::stop();
  CHECK(decode_dir(second_dir.path()).lines.size() == 2 * part);
}

#if defined(TERSE_POSIX_ONLY)

// The POSIX platform has no huge pages: busy buffers stay where they are and lose nothing.
TEST_CASE("on the POSIX platform busy buffers stay off huge pages and lose nothing", "[concurrency]") {
  constexpr std::size_t kThreads = 3;
  constexpr std::size_t kRingBytes = std::size_t{1} << 20;
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = kRingBytes;
  terse::start(config);
  const std::uint64_t per_thread = 3 * kRingBytes / 160;
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < kThreads; ++t) threads.emplace_back([t] { log_records(t, 0, per_thread); });
  for (auto& thread : threads) thread.join();
  terse::flush();
  const terse::Stats stats = terse::stats();
  terse::stop();
  CHECK(stats.rings_on_huge_pages == 0);
  require_every_record(decode_dir(dir.path()), std::vector<std::uint64_t>(kThreads, per_thread));
}

#else

namespace {

// Whether busy rings move to huge pages here: the kernel offers them (its
// setting is not "never"); the move itself needs membarrier, as the
// give-back does.
bool huge_pages_offered() {
  std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(setting, text);
  return !text.empty() && text.find("[never]") == std::string::npos;
}

// Threads log in bursts with pauses in between, so that the IO thread
// finds their rings drained now and then, and each fills half of its ring
// early on; records of every size cross the move. Returns the next number.
std::uint64_t log_bursts(std::size_t thread, std::uint64_t from, std::uint64_t to) {
  std::mt19937 random(static_cast<unsigned>(thread + from) + 7);
  std::uniform_int_distribution<std::uint64_t> burst(1, 400);
  std::uniform_int_distribution<int> pause_us(0, 300);
  for (std::uint64_t n = from; n < to;) {
    std::uint64_t until = std::min(to, n + burst(random));
    log_records(thread, n, until);
    n = until;
    std::this_thread::sleep_for(std::chrono::microseconds(pause_us(random)));
  }
  return to;
}

// How long the IO thread takes to find a ring drained depends on how fast
// everything runs (a sanitizer slows the producers and the IO thread
// differently): the threads log on until the moves are seen, then log past
// them, so that records before, across and after each move are checked.
std::uint64_t log_until_moved(std::size_t thread, std::uint64_t moves_expected, std::uint64_t records) {
  std::uint64_t n = log_bursts(thread, 0, records);
  const auto give_up = std::chrono::steady_clock::now() + 20s;
  while (terse::stats().rings_on_huge_pages < moves_expected && std::chrono::steady_clock::now() < give_up) {
    n = log_bursts(thread, n, n + 400);
    std::this_thread::sleep_for(1ms);  // a pause the IO thread cannot miss
  }
  return log_bursts(thread, n, n + records / 4);
}

}  // namespace

TEST_CASE("a busy thread's buffer moves to huge pages between two of its calls and loses nothing", "[concurrency]") {
  constexpr std::size_t kThreads = 3;
  constexpr std::size_t kRingBytes = 256 * 1024;
  const bool moves = huge_pages_offered();
  for (bool huge_pages : {true, false}) {
    INFO("Config::huge_pages " << huge_pages << ", offered " << moves);
    TempDir dir;
    auto config = test_config(dir.path());
    config.thread_buffer_bytes = kRingBytes;
    config.huge_pages = huge_pages;
    config.release_idle_after = 0ms;
    terse::start(config);
    const std::uint64_t moves_expected = huge_pages && moves ? kThreads : 0;
    // Some 160 bytes a record: each ring is passed several times.
    const std::uint64_t per_thread = 6 * kRingBytes / 160;
    std::vector<std::uint64_t> logged(kThreads);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] { logged[t] = log_until_moved(t, moves_expected, per_thread); });
    for (auto& thread : threads) thread.join();
    const std::uint64_t moved = terse::stats().rings_on_huge_pages;
    terse::stop();
    CHECK(moved == moves_expected);
    require_every_record(decode_dir(dir.path()), logged);
  }
}

// Where the kernel compacts memory before it hands out a huge page, making
// a busy ring's new memory took the IO thread 8-42 ms, during which no ring
// was drained: two threads at 8 M records/s each then lost up to a quarter
// of their records under Overflow::drop. The memory is made aside now, and
// a ring that fills in milliseconds loses nothing while it is.
TEST_CASE("a busy ring's huge pages taking long to make hold no ring up", "[concurrency]") {
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 64 * 1024;
  config.overflow = terse::Overflow::drop;
  terse::detail::slow_huge_ring_making_for_tests(400ms);
  terse::start(config);
  std::uint64_t logged = 0;
  std::thread([&] {
    // 10 records of some 150 bytes a millisecond: the ring fills in some
    // 45 ms, far less than the 400 ms the memory takes, and more than a
    // loaded two-core machine leaves the IO thread off its CPU (at 50 a
    // millisecond, filling in 9 ms, a machine running two test suites at
    // once lost 8).
    const auto until = std::chrono::steady_clock::now() + 1200ms;
    while (std::chrono::steady_clock::now() < until) {
      log_records(0, logged, logged + 10);
      logged += 10;
      std::this_thread::sleep_for(1ms);
    }
  }).join();
  const terse::Stats stats = terse::stats();
  terse::stop();
  terse::detail::slow_huge_ring_making_for_tests(0ms);
  CHECK(stats.records_dropped == 0);
  require_every_record(decode_dir(dir.path()), {logged});
}

TEST_CASE("a moved buffer given back when idle takes its memory again and logs on", "[concurrency]") {
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 256 * 1024;
  config.release_idle_after = 20ms;
  terse::start(config);
  constexpr std::uint64_t kRecords = 6 * 256 * 1024 / 160;
  std::uint64_t total = 0;
  std::thread([&] {
    const std::uint64_t logged = log_until_moved(0, huge_pages_offered() ? 1 : 0, kRecords);
    const auto os_tid = static_cast<std::uint64_t>(::gettid());
    auto give_up = std::chrono::steady_clock::now() + 10s;
    while (times_released(os_tid) == 0 && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(5ms);
    CHECK(times_released(os_tid) == 1);
    log_records(0, logged, logged + 3000);
    total = logged + 3000;
  }).join();
  const std::uint64_t moved = terse::stats().rings_on_huge_pages;
  terse::stop();
  // Given back, the ring left its huge pages; busy again, it may move again.
  CHECK(moved >= (huge_pages_offered() ? 1 : 0));
  require_every_record(decode_dir(dir.path()), {total});
}

TEST_CASE("only a few busy threads' buffers take huge pages, however many threads log", "[concurrency]") {
  if (!huge_pages_offered()) return;
  // A buffer on huge pages takes 2 MiB: with hundreds of busy threads each
  // with its own, a program took 626 MiB at its peak instead of 225.
  const std::size_t most_huge_rings = std::max(8u, 2 * std::thread::hardware_concurrency());
  const std::size_t threads_logging = most_huge_rings + 4;
  constexpr std::size_t kRingBytes = 64 * 1024;
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = kRingBytes;
  config.release_idle_after = 0ms;
  terse::start(config);
  const std::uint64_t per_thread = 6 * kRingBytes / 160;
  std::vector<std::uint64_t> logged(threads_logging);
  std::vector<std::thread> threads;
  // Each thread logs on until as many rings as may have moved, then on past
  // that: every thread's ring is found drained again and again. They all
  // stay until the last is done: the buffer of a thread that ended no
  // longer counts, and another thread's may move then.
  std::latch all_done(static_cast<std::ptrdiff_t>(threads_logging));
  std::latch counted(1);
  for (std::size_t t = 0; t < threads_logging; ++t)
    threads.emplace_back([&, t] {
      logged[t] = log_until_moved(t, most_huge_rings, per_thread);
      all_done.count_down();
      counted.wait();
    });
  all_done.wait();
  const std::uint64_t moved = terse::stats().rings_on_huge_pages;
  counted.count_down();
  for (auto& thread : threads) thread.join();
  terse::stop();
  CHECK(moved == most_huge_rings);
  require_every_record(decode_dir(dir.path()), logged);
}

#endif
