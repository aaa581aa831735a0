// Writes golden-v1.tlog, the file that pins format version 1 (schema/FORMAT.md).
// It is run by hand, once per format version, never by ctest: the committed
// .tlog is the reference, and regenerating it changes what the tests pin.
//
//   terse_make_golden OUT_DIR        -> OUT_DIR/golden-YYYYMMDD-001.tlog
//
// Then rename the file to golden-v1.tlog and regenerate golden-v1.txt with
//   TZ=UTC terse cat --utc --format "{level} {thread} {line} {message}" golden-v1.tlog
// The program prints fmt::format of every record's arguments to stdout, so
// that text can be compared with what the decoder prints. Build it with the
// project's CMake, which stores __FILE__ relative to the source tree, so the
// file carries no path of the build machine.
#include <pthread.h>

#include <cfloat>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include <terse/terse.hpp>

namespace {

// Logs through terse and prints what fmt::format says the message must be.
#define GOLDEN(LEVEL, ...)                                 \
  do {                                                     \
    TERSE_##LEVEL(__VA_ARGS__);                            \
    std::printf("%s\n", fmt::format(__VA_ARGS__).c_str()); \
  } while (false)

// Every type tag of FORMAT.md §8, with the format specs that show whether the
// value survived with its exact type (a float printed as a float, an i8 widened
// as fmt widens it, a long double beyond the range of double).
void log_every_type() {
  GOLDEN(TRACE, "i8 {} {:+d} {:#x} {:>5}", std::int8_t{-128}, std::int8_t{127}, std::int8_t{-1}, std::int8_t{7});
  GOLDEN(DEBUG, "i16 {} {:b} {:08d}", std::int16_t{-32768}, std::int16_t{5}, std::int16_t{-123});
  GOLDEN(INFO, "i32 {} {:X} {:<6}|", std::numeric_limits<std::int32_t>::min(), std::int32_t{0x7FFFFFFF}, 42);
  GOLDEN(INFO, "i64 {} {:o} {:+}", std::numeric_limits<std::int64_t>::min(), std::int64_t{8}, std::int64_t{1} << 40);
  GOLDEN(INFO, "u8 {} {:#04x} {:c}", std::uint8_t{255}, std::uint8_t{10}, std::uint8_t{65});
  GOLDEN(INFO, "u16 {} {:#b}", std::uint16_t{65535}, std::uint16_t{6});
  GOLDEN(INFO, "u32 {} {:#X}", std::numeric_limits<std::uint32_t>::max(), std::uint32_t{0xDEADBEEF});
  GOLDEN(INFO, "u64 {} {:#o}", std::numeric_limits<std::uint64_t>::max(), std::uint64_t{64});
  GOLDEN(WARN, "bool {} {} {:d} [{:>6}]", true, false, true, false);
  GOLDEN(WARN, "char {} {:d} {:x} {:?} [{:^5}]", 'x', 'A', 'z', '\t', 'c');
  GOLDEN(ERROR, "float {} {:.3f} {:e} {:g} {:a}", 0.1f, 3.14159f, 1e-10f, 1e20f, 1.5f);
  GOLDEN(ERROR, "float specials {} {} {} {}", -0.0f, std::numeric_limits<float>::infinity(),
         -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN());
  GOLDEN(CRITICAL, "double {} {:.10f} {:E} {:G} {:+.2e} {:A}", 0.1, 2.0 / 3.0, 6.02214076e23, 1e-300, -1234.5, 1.0);
  GOLDEN(CRITICAL, "long double {} {:.18f} {:e}", 1.0L / 3.0L, 2.0L / 3.0L, std::numeric_limits<long double>::max());
}

void log_text_and_pointers() {
  const char* c_string = "c-string";
  char array[16] = "char-array";
  std::string owned = "std::string";
  std::string_view view = std::string_view("string_view and more").substr(0, 11);
  const char* null_string = nullptr;
  GOLDEN(INFO, "strings [{}] [{}] [{}] [{}] [{}] [{}]", c_string, array, "literal", owned, view, "");
  GOLDEN(INFO, "string specs [{:*^12}] [{:.3}] [{:>8}] [{:?}]", "mid", "truncated", "right", "tab\there");
  GOLDEN(INFO, "utf-8 [{:*^8}] [{:<6}] [{}]", "日本", "héllo", "ünïcødé ✓");
  // fmt refuses a null const char* (it throws); terse stores it as a null
  // string and prints "(null)", so this record is not checked against fmt.
  TERSE_INFO("null string [{}]", null_string);
  std::printf("null string [(null)]\n");
  GOLDEN(INFO, "pointers {} {} {:>20} {:p}", reinterpret_cast<const void*>(std::uintptr_t{0x1234}), nullptr,
         reinterpret_cast<void*>(std::uintptr_t{0xDEADBEEF}), static_cast<const void*>(nullptr));
  // {:p} on a string literal logs the address, not the text (FORMAT.md §8).
  GOLDEN(INFO, "literal address {:p}", "where am I");
}

void log_format_features() {
  GOLDEN(INFO, "dynamic [{:{}}] [{:.{}f}] [{:>{}.{}}]", 42, 6, 3.14159, 2, "abcdef", 8, 3);
  GOLDEN(INFO, "positional {1} {0} [{1:>{2}}]", "first", "second", 9);
  GOLDEN(INFO, "escapes {{}} {{{}}} }}{{", 5);
  GOLDEN(INFO, "no arguments at all");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  terse::Config config;
  config.directory = argv[1];
  config.name = "golden";
  config.level = terse::Level::trace;
  // A small ring and the drop policy let the burst below lose records, so the
  // file holds a "dropped" control record (FORMAT.md §7) and a truncated string.
  config.thread_buffer_bytes = 4096;
  config.overflow = terse::Overflow::drop;
  terse::start(config);

  // Batch 1: the main thread alone, one dictionary frame and one records frame.
  log_every_type();
  terse::flush();
  log_text_and_pointers();
  log_format_features();
  terse::flush();

  // Batch 2: a second thread, taking turns with the main thread so that the
  // time order across threads is fixed.
  std::mutex mutex;
  std::condition_variable turn_changed;
  int turn = 0;
  std::thread worker([&] {
    pthread_setname_np(pthread_self(), "golden-worker");
    for (int round = 0; round < 3; ++round) {
      std::unique_lock lock(mutex);
      turn_changed.wait(lock, [&] { return turn == 2 * round; });
      GOLDEN(INFO, "ping {} from the worker, {:.2f}", round, static_cast<float>(round) * 1.25f);
      ++turn;
      turn_changed.notify_all();
    }
    GOLDEN(ERROR, "worker types {} {} {} {}", std::uint16_t{7}, std::int64_t{-7}, 'w', 2.5);
  });
  for (int round = 0; round < 3; ++round) {
    std::unique_lock lock(mutex);
    turn_changed.wait(lock, [&] { return turn == 2 * round + 1; });
    GOLDEN(INFO, "pong {} from the main thread", round);
    ++turn;
    turn_changed.notify_all();
  }
  worker.join();
  terse::flush();

  // The writer re-samples the clock once a second: a calibration frame
  // between records frames.
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  GOLDEN(INFO, "after a pause of {} ms", 1200);
  terse::flush();

  // A record larger than half the ring has its string cut (the truncated bit).
  std::string long_text(3000, 'L');
  GOLDEN(WARN, "long string, first ten [{:.10}]", long_text);
  terse::flush();

  // A burst larger than the ring: most of it is dropped; the next call after
  // the ring drains writes the "dropped" control record first.
  std::string filler(400, 'f');
  for (int i = 0; i < 60; ++i) TERSE_DEBUG("burst {}{:.0}", i, filler);
  std::printf("(burst: the records kept and the drop count vary)\n");
  terse::flush();
  GOLDEN(INFO, "after the burst");

  terse::stop();
  return 0;
}
