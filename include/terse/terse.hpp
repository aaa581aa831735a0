// terse: compile-time registered binary logging.
//
//   terse::Config cfg;
//   cfg.directory = "logs";
//   terse::start(cfg);
//   TERSE_INFO("user {} logged in from {} in {:.3f} ms", user_id, ip, ms);
//   terse::stop();
//
// Nothing is formatted at the call site: each call copies its raw arguments
// into the calling thread's buffer and the `terse` CLI formats them later,
// byte for byte as fmt::format would.
//
// This header logs numbers, strings, pointers, enums, terse::secret values
// and types with a terse::codec. Standard containers, chrono types and the
// other standard types come with <terse/std.hpp> (or one of <terse/std/*.hpp>),
// aggregates with <terse/aggregate.hpp>: a file that logs none of them does
// not compile their support.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include <terse/detail/call.hpp>
#include <terse/schema.hpp>

namespace terse {

// The levels a call logs at, lowest first, with the values the file stores
// (FORMAT.md §6); `off` logs nothing.
enum class Level : std::uint8_t { trace, debug, info, warn, error, critical, off };
static_assert(static_cast<int>(Level::critical) == static_cast<int>(schema::LevelValue::critical) &&
              static_cast<int>(Level::off) == schema::kLevelCount);

// What becomes of a value logged as terse::secret(value).
enum class PrivateValues : std::uint8_t {
  omit,   // nothing of it is stored; the decoder prints <private>
  hash,   // a keyed hash (Config::private_key) is stored: <private:3f9a1c>
  clear,  // the value itself is stored (for debugging only)
};

// What a logging call does when its thread's buffer is full.
enum class Overflow : std::uint8_t {
  block,  // wait for the IO thread: nothing is lost
  drop,   // return at once; the loss is counted and written into the log
};

namespace detail {
struct RecordAccess;
}

// Whether, and how, records show on a terminal or a container's log stream
// besides the file (Config::console).
enum class Console : std::uint8_t {
  off,        // files only
  text,       // `terse cat`'s lines
  color,      // the same with levels coloured (not when NO_COLOR is set)
  json,       // `terse cat -o json`'s objects, one per line
  automatic,  // color on a terminal, text otherwise
};

// One record as Config::on_record receives it, on terse's own thread. The
// views are valid during the call only.
struct Record {
  Level level = Level::info;
  std::int64_t time_ns = 0;  // since the Unix epoch
  std::uint64_t thread = 0;  // the OS thread id
  std::string_view thread_name;
  std::string_view file;  // "terse" for a drop report
  std::uint32_t line = 0;
  std::string_view format;    // the call site's format string; empty for a drop report
  std::string_view message;   // as `terse cat` prints it
  std::uint64_t dropped = 0;  // a drop report: how many records its thread lost
  // A rate-limited site's record: the calls it suppressed since its previous
  // record (in the report stop() writes for a site, message "N calls
  // suppressed after the site's last record": those after its last).
  std::uint64_t suppressed = 0;
  // Kept by the flight recorder and written when a trigger (or a crash) came.
  bool flight = false;
  // The terse::Context fields open on its thread, as `terse cat` shows
  // them: "request_id=42 user=ann" (json() has them as an object).
  std::string_view context;
  // The object `terse cat -o json` prints for it (no newline), made on the
  // first call; empty when the callback was not made by terse.
  std::string_view json() const { return json_ ? json_(json_context_) : std::string_view(); }

 private:
  friend struct detail::RecordAccess;
  std::string_view (*json_)(const void*) = nullptr;
  const void* json_context_ = nullptr;
};

struct Config {
  // Created if missing. Empty: no files at all, only the console and the
  // callback (the container case).
  std::string directory = "logs";
  std::string name = "app";   // files are DIRECTORY/NAME-YYYYMMDD-NNN.tlog
  Level level = Level::info;  // runtime minimum level
  Overflow overflow = Overflow::block;
  // While writes fail (the disk full, an I/O error) under Overflow::block:
  // false, records wait in the batches the writer may hold (up to some
  // 11 MiB) and those past them are dropped and counted, so that no caller
  // waits on the disk; the log says how many, and when, once writes work
  // again. true: every record waits until writes work again, and callers
  // block as their buffers fill. Under Overflow::drop records are dropped
  // and counted from the first failed write.
  bool wait_for_disk = false;
  // Per logging thread, a power of two. A thread keeps its buffer for life,
  // so this applies to threads that log for the first time after start().
  // Its memory is taken as the thread fills it: a thread that logs a few
  // records holds a few pages, a busy one all of it.
  std::size_t thread_buffer_bytes = std::size_t{1} << 20;
  // A thread that has logged nothing for this long gives its buffer's
  // memory back to the system (all but the buffer's bookkeeping), once its
  // records are written; the buffer takes its pages again as the thread
  // logs again, as a new one does. Zero: a buffer keeps what it took until
  // its thread exits. Threads that called preallocate() keep theirs.
  // Needs a way to fence the other threads: Linux's membarrier (4.14) or
  // Windows' FlushProcessWriteBuffers; on the POSIX platform (macOS, the
  // BSDs) each call fences itself for it, unless this is 0 when the
  // thread's buffer is made. On Linux before 4.14 buffers keep their memory.
  std::chrono::milliseconds release_idle_after{1000};
  // A thread that has filled half of its buffer gets it on transparent huge
  // pages (Linux, unless the system turned them off): a call that crosses
  // into the next 4 KiB page otherwise misses the TLB, which costs hundreds
  // of nanoseconds on virtual machines, in one call out of every 70 or so.
  // Such a buffer takes whole huge pages, 2 MiB for the default 1 MiB, so
  // only the first max(8, twice the CPUs) threads to fill half of theirs
  // get them. Linux only, with its membarrier.
  bool huge_pages = true;
  std::uint64_t roll_bytes = std::uint64_t{256} << 20;  // start a new file past this size
  bool roll_daily = true;                               // and at local midnight
  // Retention, checked at start and at every roll over all of this name's
  // files in the directory (earlier runs' too), oldest first, never the
  // file being written; 0 means no limit.
  std::size_t max_files = 0;
  std::uint64_t max_total_bytes = 0;
  int compression_level = 1;  // zstd level, -7 (fastest) to 22; 0 writes frames uncompressed
  // While the writer falls behind on compressing (more than two full
  // batches, 2 MiB of records, wait for it, and interning left most of a
  // batch to compress: long strings that do not repeat), it compresses at
  // faster levels, one step per batch, down to this one (zstd's negative
  // levels: faster for more bytes); once it has caught up it steps back to
  // compression_level. A level it timed no faster (by a tenth) than the one
  // above it on the records of the last 256 batches is left at once and not
  // taken again meanwhile: on some records zstd's faster levels are slower.
  // Equal to compression_level: the level never changes.
  int fastest_compression_level = -5;
  // How long the IO thread holds records back so that records of different
  // threads come out in time order: it covers timestamp skew between cores
  // and the moment a store takes to become visible, both well under a
  // microsecond on current machines. (A thread preempted in the middle of a
  // call is waited for, whatever this says.) A thread whose ring fills in
  // less than this waits for it, so a long window slows threads that log
  // large records.
  std::chrono::microseconds ordering_window{20};
  // Durability: the IO thread calls fdatasync once data has waited this long
  // unsynced, or once this many bytes are unsynced; zero turns either off.
  // A rolled file is synced before it is closed.
  std::chrono::milliseconds fsync_interval{1000};
  std::uint64_t fsync_bytes = std::uint64_t{32} << 20;
  unsigned file_mode = 0640;  // permissions of new files (before the umask)
  // On SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT and std::terminate, write
  // every record already logged before the process dies (then the previous
  // handler runs, or the signal's default action).
  bool crash_handler = true;
  // Where SIGTERM, SIGINT or SIGHUP is at its default action when start()
  // runs, write every record already logged, then die of that signal
  // (`docker stop` and `systemctl stop` send SIGTERM). A handler of the
  // application's own, or SIG_IGN, is left alone.
  bool termination_signals = true;
  // Containers with more elements store only this many, marked as cut
  // (1 to 2^31-1).
  std::uint32_t max_container_elements = 1024;
  PrivateValues private_values = PrivateValues::omit;
  // The key of PrivateValues::hash; required for it. Values hash alike
  // across runs and processes that share the key.
  std::string private_key;
  // Sealed files: the path of an Ed25519 public key (`ssh-keygen -t
  // ed25519`'s .pub file, or `terse keygen`'s) that every file is encrypted
  // and authenticated to. The writer keeps nothing that can read a file
  // back; `terse cat --key PRIVATE_KEY` does. Empty: files are not sealed.
  // The console and on_record still see every record.
  std::string encrypt_to;
  // With encrypt_to: the path of an Ed25519 private key (OpenSSH, without a
  // passphrase: start() asks nobody for one) that signs each file's seal, so that a reader can check
  // which writer made a file (terse verify --signer). It cannot read the
  // files. Empty: not signed. Also TERSE_SIGN_WITH.
  std::string sign_with;
  // Runtime failures (a write error, a file that cannot be opened, a
  // callback that throws) are reported here, on terse's threads, one call
  // at a time; by default they go to stderr.
  std::function<void(const std::string&)> on_error;

  // The console: records at or above console_level also go to console_fd,
  // rendered on terse's threads as `terse cat` renders them, in the order of
  // the file. It never holds up a caller or the file: when the descriptor
  // is slower than the records come, the console skips records and then
  // says how many ("N records not shown on the console").
  Console console = Console::off;
  Level console_level = Level::info;
  int console_fd = 2;  // not closed by terse
  // A `terse cat --format` pattern for text and color; empty: `terse
  // cat`'s default line. The json mode prints `terse cat -o json`'s objects.
  std::string console_format;
  // Called for each record at or above callback_level, on terse's thread
  // (never the caller's), in order. A callback that throws is counted in
  // stats() and reported once through on_error; one slower than the records
  // misses some (counted and reported), but the file misses nothing.
  std::function<void(const Record&)> on_record;
  Level callback_level = Level::warn;
  // A file in TERSE_LEVEL's syntax (newlines may separate the items, '#'
  // starts a comment) that terse reads at start() and again whenever it
  // changes (it looks four times a second), so an operator changes levels
  // without a restart: `echo 'info,net/=debug' > /run/app/terse.levels`. A
  // file that does not parse is reported (on_error, and a record in the log)
  // and the levels in force stay; a missing file sets nothing until it
  // appears. Empty: none.
  std::string levels_file;
  // The flight recorder: records from flight_level up to below the level a
  // call site logs at are not written but kept in memory, the last
  // flight_bytes of them per thread (older ones give way). A record at or
  // above flight_trigger that is written first writes out what every
  // thread's recorder holds, in time order, marked as such (`terse cat`:
  // "debug (flight)", JSON "flight": true); so does a crash. Nothing of it
  // is written otherwise. off: no recorder.
  Level flight_level = Level::off;
  Level flight_trigger = Level::error;
  std::size_t flight_bytes = std::size_t{64} << 10;  // 1 KiB to 64 MiB
  // The CPUs terse's own threads run on (terse-io, terse-write and, when
  // they run, terse-view, terse-console and terse-levels): keep them off the
  // CPUs of the threads whose latency counts. Empty: wherever the scheduler
  // puts them. Each must be a CPU this process may run on. Pinning needs
  // Linux; elsewhere the numbers are checked and the OS places the threads.
  std::vector<int> cpus;
  // Calls at this level and above after stop() (also from static
  // destructors, once stop() has run at exit) are printed on stderr as
  // `terse cat` prints them, by the calling thread before the call returns;
  // those below it that the levels in force at stop() let through are
  // counted in stats(). off: such calls are discarded.
  Level stderr_after_stop = Level::warn;
  // A child of fork() goes on logging with this Config, into files of its
  // own in the same directory and name (a writer of its own: its pid and
  // run id; `terse cat DIR` merges them by time), started by its first
  // logging call, so that a child that only execs costs nothing. Records
  // the parent logged before fork() are the parent's to write. false: the
  // child's calls are discarded until it calls start() itself.
  bool log_after_fork = true;
  // start() applies TERSE_LEVEL, TERSE_LEVELS_FILE, TERSE_CONSOLE,
  // TERSE_CONSOLE_FD and TERSE_DIR over this Config; false ignores them.
  bool read_environment = true;
};

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Applies the environment (unless config.read_environment is false), then
// validates the config, creates the directory, opens the first file and
// starts the IO thread. Throws terse::Error on a bad config, a bad
// environment variable or an unwritable directory. Records logged before
// start() are written by it, with their own times (keep_before_start()).
//
// The environment overrides the Config; the levels file, when it is read,
// overrides both, and set_level() or a change of the file overrides what
// was in force (the latest change wins):
//   TERSE_LEVEL    the levels: "info", or "info,net/=debug,db/query.cpp:120=trace"
//                  (trace, debug, info, warn, error, critical or off)
//   TERSE_LEVELS_FILE  the levels file; set but empty: none
//   TERSE_CONSOLE  off, text, color, json or auto
//   TERSE_CONSOLE_FD  stdout, stderr or a descriptor's number
//   TERSE_DIR      the directory; set but empty: no files
//   TERSE_ENCRYPT_TO  Config::encrypt_to; set but empty: files not sealed
//   TERSE_SIGN_WITH   Config::sign_with
void start(const Config& config);
// Calls made before start(): records at `level` and above wait in their
// thread's buffer (those that do not fit are counted and the log says how
// many) until start() writes them, whatever levels it sets. A program that
// ends without calling start() prints those at warn and above on stderr at
// exit, as `terse cat` prints them, under a line that says why. off:
// calls before start() are discarded. Default: info.
void keep_before_start(Level level) noexcept;
// Returns once every record logged before the call is written to the file,
// passed to on_record and shown on the console (unless the console is
// stalled: then it does not wait for it).
void flush();
// The same, and returns only once the file's data is on stable storage.
struct Durable {
  explicit Durable() = default;
};
inline constexpr Durable durable{};
void flush(Durable);

struct ThreadStats {
  std::uint64_t os_tid = 0;
  std::string name;
  std::size_t buffer_bytes = 0;
  std::size_t highest_fill = 0;  // the most bytes ever waiting in its buffer
  std::uint64_t dropped = 0;
  std::uint64_t times_released = 0;  // its buffer's memory given back while it was idle
};

// Gives the calling thread its buffer now rather than in its first logging
// call, which otherwise pays for it (a few microseconds) and stamps its
// record that much later, and has all of it (Config::thread_buffer_bytes)
// mapped now rather than page by page as the thread first fills it. For
// threads that must not stall even once, such as a trading or audio thread,
// at their start; such a thread keeps all of it while it is idle too
// (Config::release_idle_after). Does nothing before start() or when the
// thread already has one.
void preallocate() noexcept;

// What the logger has done since start(); counters are exact once flush()
// has returned.
struct Stats {
  // Into files, control records included; without files (an empty
  // directory), handed to the console and callback.
  std::uint64_t records_written = 0;
  std::uint64_t records_dropped = 0;  // by the drop policy
  std::uint64_t bytes_in = 0;         // frame payloads before compression
  std::uint64_t bytes_out = 0;        // bytes written to files
  std::uint64_t files_opened = 0;
  std::uint64_t files_removed = 0;  // by retention
  std::uint64_t write_errors = 0;
  std::uint64_t syncs = 0;  // fdatasync calls
  // Batches (about 1 MiB of records each) compressed at a faster level than
  // Config::compression_level because the writer was behind.
  std::uint64_t batches_compressed_faster = 0;
  std::chrono::nanoseconds io_busy{0};  // CPU time of the IO threads
  // Console and callback (Config::console, Config::on_record).
  std::uint64_t console_records = 0;      // lines handed to the console
  std::uint64_t console_not_shown = 0;    // skipped: the console could not keep up, or was closed
  std::uint64_t console_writes = 0;       // write calls, one per batch of lines at most
  std::uint64_t callback_records = 0;     // passed to on_record
  std::uint64_t callback_missed = 0;      // not passed: it could not keep up
  std::uint64_t callback_errors = 0;      // calls that threw
  std::chrono::nanoseconds view_busy{0};  // CPU time of the console and callback threads
  // The flight recorder (Config::flight_level).
  std::uint64_t flight_recorded = 0;     // records kept in memory instead of the file
  std::uint64_t flight_written = 0;      // of those, written by a trigger or a crash
  std::uint64_t flight_overwritten = 0;  // given way to later ones before any trigger
  // Buffers of idle threads whose memory was given back (Config::release_idle_after).
  std::uint64_t idle_buffers_released = 0;
  // Rings of busy threads moved to huge pages (Config::huge_pages).
  std::uint64_t rings_on_huge_pages = 0;
  // Bytes of records given up because a thread's buffer held a record no
  // call writes (a log call in a signal handler that interrupted another on
  // the same thread, a stray write): reported on on_error and in the log.
  std::uint64_t buffer_bytes_given_up = 0;
  std::vector<ThreadStats> threads;  // threads with a buffer, live or not yet drained
  // Calls with no logger to write them (after stop(); at the end of a
  // program that never called start()): printed on stderr, and those below
  // Config::stderr_after_stop (warn at such an end), only counted here.
  // Counted over the process's life.
  std::uint64_t stderr_records = 0;
  std::uint64_t records_not_written = 0;
};
// All zero but stderr_records and records_not_written when the logger is
// not running.
Stats stats();
// Drains everything, closes the file and stops the IO thread. Runs at exit
// when the program does not call it; calls made afterwards go to stderr
// (Config::stderr_after_stop) or are discarded.
void stop();

// Levels, per module, at run time. A selector is a path prefix ("net/"), a
// file ("db/query.cpp") or one call site ("db/query.cpp:120"), matched on
// whole path components at the start of a site's file or after any '/' in
// it (so "net/" also covers "src/net/conn.cpp"). A call site logs at the
// level of the selector that matches it best: a call site over its file, a
// file over a prefix, then the longest; without one, at the default level. A change
// applies at once to every call site, those that have not run yet too, and
// is safe while threads log. Before start() and after stop() these do
// nothing: start() sets the levels from the Config and the environment.
//
// The default level.
void set_level(Level level) noexcept;
// One selector's level, added or replaced. Throws terse::Error on a bad
// selector (empty, or a line number that is not one).
void set_level(std::string_view selector, Level level);
// Everything at once, in TERSE_LEVEL's syntax: "info,net/=debug,db/query.cpp:120=trace"
// sets the default and the selectors, replacing all that was set before (an
// absent default keeps the one in force). Throws terse::Error, changing
// nothing, when the text does not parse.
void set_levels(std::string_view levels);
// What is set, in the same syntax: the default first, then each selector.
std::string levels();

// A field of every record the calling thread logs while the object lives:
//
//   terse::Context ctx("request_id", id);
//   TERSE_INFO("charged {} cents", cents);  // `terse cat`: "... charged 120 cents {request_id=42}"
//
// Any type a logging call takes works as the value; contexts nest, and an
// inner one with the same key hides the outer one while it lives. Creating and
// ending one writes a small record each (FORMAT.md §7.3), from which `terse
// cat` attaches the fields to the thread's records, so a logging call
// copies nothing more for them. A context lives on the thread that created
// it; it is not written before start() or after stop().
class Context {
 public:
  template <typename T>
  [[nodiscard]] Context(std::string_view key, const T& value) noexcept : serial_(detail::push_context(key, value)) {
    // What a logging call checks: that fmt formats the value as terse stores it.
    (void)fmt::format_string<std::string_view, detail::checked_as_t<T>>(schema::kContextFormat);
  }
  ~Context() {
    if (serial_ != 0) detail::pop_context(serial_);
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

 private:
  std::uint64_t serial_ = 0;  // 0: not written, nothing to end
};

// Process-wide: how terse::secret() values are stored from now on (for
// example `clear` while debugging). Each stored value says which way it was
// stored; hashing needs Config::private_key.
void set_private_values(PrivateValues mode) noexcept;

// set_async(false) makes every logging call return only once its record is
// in the file (slow: for chasing records that seem to go missing);
// set_async(true) goes back to normal. Safe to switch while threads log.
void set_async(bool asynchronous) noexcept;
// The default level.
Level level() noexcept;

}  // namespace terse

// Calls below TERSE_MIN_LEVEL (0 = trace … 5 = critical, 6 = all off) are
// removed at compile time: neither their strings nor their code reach the
// binary.
#ifndef TERSE_MIN_LEVEL
#define TERSE_MIN_LEVEL 0
#endif

#if TERSE_MIN_LEVEL <= 0
#define TERSE_TRACE(...) TERSE_LOG(::terse::Level::trace, __VA_ARGS__)
#else
#define TERSE_TRACE(...) TERSE_DETAIL_STRIPPED(__VA_ARGS__)
#endif
#if TERSE_MIN_LEVEL <= 1
#define TERSE_DEBUG(...) TERSE_LOG(::terse::Level::debug, __VA_ARGS__)
#else
#define TERSE_DEBUG(...) TERSE_DETAIL_STRIPPED(__VA_ARGS__)
#endif
#if TERSE_MIN_LEVEL <= 2
#define TERSE_INFO(...) TERSE_LOG(::terse::Level::info, __VA_ARGS__)
#else
#define TERSE_INFO(...) TERSE_DETAIL_STRIPPED(__VA_ARGS__)
#endif
#if TERSE_MIN_LEVEL <= 3
#define TERSE_WARN(...) TERSE_LOG(::terse::Level::warn, __VA_ARGS__)
#else
#define TERSE_WARN(...) TERSE_DETAIL_STRIPPED(__VA_ARGS__)
#endif
#if TERSE_MIN_LEVEL <= 4
#define TERSE_ERROR(...) TERSE_LOG(::terse::Level::error, __VA_ARGS__)
#else
#define TERSE_ERROR(...) TERSE_DETAIL_STRIPPED(__VA_ARGS__)
#endif
#if TERSE_MIN_LEVEL <= 5
#define TERSE_CRITICAL(...) TERSE_LOG(::terse::Level::critical, __VA_ARGS__)
#else
#define TERSE_CRITICAL(...) TERSE_DETAIL_STRIPPED(__VA_ARGS__)
#endif

// The site's gate is checked first, so a disabled call evaluates no argument.
#define TERSE_LOG(level_value, format_literal, ...)                                        \
  do {                                                                                     \
    TERSE_DETAIL_SITE(level_value, nullptr, format_literal, __VA_ARGS__);                  \
    if (::terse::detail::gate_allows(terse_site_, static_cast<std::uint8_t>(level_value))) \
      ::terse::detail::log<terse_tags_, static_cast<std::uint8_t>(level_value)>(           \
          terse_site_, format_literal __VA_OPT__(, ) __VA_ARGS__);                         \
  } while (false)

// Rate limits, per call site, for every level:
//   TERSE_LOG_EVERY(level, interval, format, args...)  at most one record per interval
//   TERSE_LOG_EVERY_N(level, n, format, args...)       the 1st, (n+1)th, (2n+1)th... call
//   TERSE_LOG_FIRST_N(level, n, format, args...)       the first n calls
// A suppressed call evaluates no argument and costs a disabled one plus an
// increment. The site's next record says how many calls it suppressed since
// its last (`terse cat`: " [412 suppressed]"; JSON "suppressed": 412);
// stop() writes the count left after a site's last record.
#define TERSE_LOG_EVERY(level_value, interval, ...) \
  TERSE_DETAIL_LOG_LIMITED(::terse::detail::Every, interval, level_value, __VA_ARGS__)
#define TERSE_LOG_EVERY_N(level_value, n, ...) \
  TERSE_DETAIL_LOG_LIMITED(::terse::detail::EveryN, static_cast<std::uint64_t>(n), level_value, __VA_ARGS__)
#define TERSE_LOG_FIRST_N(level_value, n, ...) \
  TERSE_DETAIL_LOG_LIMITED(::terse::detail::FirstN, static_cast<std::uint64_t>(n), level_value, __VA_ARGS__)
