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

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include <terse/detail/buffer.hpp>
#include <terse/detail/clock.hpp>
#include <terse/detail/limit.hpp>
#include <terse/detail/signature.hpp>
#include <terse/detail/site.hpp>
#include <terse/schema.hpp>

namespace terse {

enum class Level : std::uint8_t {
#define TERSE_X(name, value) name = value,
  TERSE_SCHEMA_LEVELS(TERSE_X)
#undef TERSE_X
      off = schema::kLevelCount,
};

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
  // Needs Linux's membarrier (4.14); elsewhere buffers keep their memory.
  std::chrono::milliseconds release_idle_after{1000};
  // A thread that has filled half of its buffer gets it on transparent huge
  // pages (Linux, unless the system turned them off): a call that crosses
  // into the next 4 KiB page otherwise misses the TLB, which costs hundreds
  // of nanoseconds on virtual machines, in one call out of every 70 or so.
  // Such a buffer takes whole huge pages, 2 MiB for the default 1 MiB, so
  // only the first max(8, twice the CPUs) threads to fill half of theirs
  // get them. Needs Linux's membarrier, as release_idle_after does.
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
  // puts them. Each must be a CPU this process may run on.
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
  [[nodiscard]] Context(std::string_view key, const T& value) noexcept;
  ~Context();
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

namespace detail {

// What a logged call reads besides its site, on one cache line.
struct alignas(64) HotSettings {
  std::atomic<bool> running{false};      // between start() and stop(): a context is worth writing
  std::atomic<bool> synchronous{false};  // what set_async() set last; each buffer has a copy
  std::atomic<std::uint8_t> private_mode{static_cast<std::uint8_t>(schema::PrivateMode::omitted)};
  std::atomic<std::uint32_t> max_container_elements{1024};
};
inline HotSettings g_hot;

// For tests that stall one of terse's threads with a signal sent to it:
// terse's threads block every asynchronous signal but leave this one
// deliverable, from the next start() on. Not for programs.
void deliver_to_terse_threads_for_tests(int signal_number) noexcept;
// For tests: making a busy ring's huge-page memory takes `delay` longer, as
// it does where the kernel compacts memory first. Not for programs.
void slow_huge_ring_making_for_tests(std::chrono::milliseconds delay) noexcept;

// Sync mode: wait until the record just logged is in the file.
void wait_until_written() noexcept;

// Shortens strings so that a record fits the thread's ring (FORMAT.md §8:
// the stored length then carries the truncated bit). Rare, so out of line.
std::size_t fit_strings(std::size_t fixed_size, std::size_t limit, std::uint32_t* text_lengths, bool* truncated,
                        const bool* is_string, std::size_t count) noexcept;

template <std::uint8_t Tag, typename T>
inline std::size_t argument_size(const T& value, std::uint32_t& text_length, std::size_t& value_size_out,
                                 const Limits& limits) noexcept {
  if constexpr (Tag == static_cast<std::uint8_t>(TypeTag::structured)) {
    value_size_out = value_size(value, limits);
    return 4 + value_size_out;
  } else {
    (void)value_size_out;
    (void)limits;
    return encoded_size<Tag>(value, text_length);
  }
}

template <std::uint8_t Tag, typename T>
inline char* write_argument(char* out, const T& value, std::uint32_t text_length, bool truncated,
                            std::size_t value_size_in, const Limits& limits) noexcept {
  if constexpr (Tag == static_cast<std::uint8_t>(TypeTag::structured)) {
    out = put_raw(out, static_cast<std::uint32_t>(value_size_in));
    return write_value(out, value, limits);
  } else {
    (void)value_size_in;
    (void)limits;
    return encode_arg<Tag>(out, value, text_length, truncated);
  }
}

inline Limits current_limits() noexcept {
  return Limits{g_hot.max_container_elements.load(std::memory_order_relaxed), schema::kStringLengthMask,
                static_cast<schema::PrivateMode>(g_hot.private_mode.load(std::memory_order_relaxed))};
}

// The longest prefix log_impl writes: a context push's kind, serial and site.
inline constexpr std::size_t kMaxRecordPrefix = 1 + 10 + 5;

// Every record a call writes fits a ring of the smallest size (with the
// prefix of the longest), checked at compile time: the fixed part of the
// arguments, and the strings, whose length log_impl() checks against this.
inline constexpr std::size_t kFitsAnyRing = kMinRingCapacity / 2 - kRingHeaderSize;

// The record's header and bytes into its room, then published.
template <auto Tags, bool Prefixed, typename... Args, std::size_t... I>
inline void write_record(ThreadBuffer& buffer, char* out, const RingRecordHeader& header, std::uint64_t record_end,
                         std::string_view prefix, const std::uint32_t* text_lengths, const bool* truncated,
                         [[maybe_unused]] const std::size_t* value_sizes, [[maybe_unused]] const Limits& limits,
                         std::index_sequence<I...>, const Args&... args) noexcept {
  std::memcpy(out, &header, sizeof header);
  [[maybe_unused]] char* cursor = out + kRingHeaderSize;
  if constexpr (Prefixed) {
    std::memcpy(cursor, prefix.data(), prefix.size());
    cursor += prefix.size();
  }
  ((cursor =
        write_argument<Tags[I]>(cursor, unnamed_value(args), text_lengths[I], truncated[I], value_sizes[I], limits)),
   ...);
  buffer.commit(header.ticks, record_end);
}

// Writes one record, whole or not at all, in every case log_impl() leaves
// to it: a thread's first call, structured arguments, strings longer than
// kFitsAnyRing. Out of line, so that what each call site inlines stays
// small, and with it the caller's own function: a compiler inlines a small
// function into its callers, and a large one not.
// Numbers and pointers reach log_any() by value: an argument passed by
// reference must be stored to memory first, in every call, for the rare one
// that takes this path.
template <typename T>
using PassedAs = std::conditional_t<std::is_scalar_v<T>, T, const T&>;

template <auto Tags, bool Prefixed, typename... Args, std::size_t... I>
[[gnu::noinline]] bool log_any(std::uint32_t id, std::string_view prefix, std::index_sequence<I...>,
                               PassedAs<Args>... args) noexcept {
  ThreadBuffer* buffer = tls_buffer;
  bool first_call = false;
  if (__builtin_expect(buffer == nullptr, 0)) {
    buffer = create_thread_buffer();
    if (buffer == nullptr) return false;
    first_call = true;
  } else if (buffer->in_call_since.load(std::memory_order_relaxed) != kNotInCall) {
    // Before the arguments are measured, which for structured ones writes
    // to the thread's own memory that the interrupted call is using.
    drop_nested_call(*buffer);
    return false;
  }
  constexpr std::size_t count = sizeof...(Args);
  [[maybe_unused]] constexpr auto string_tag = static_cast<std::uint8_t>(TypeTag::string);
  [[maybe_unused]] constexpr auto structured_tag = static_cast<std::uint8_t>(TypeTag::structured);
  constexpr bool has_strings = (false || ... || (Tags[I] == string_tag));
  constexpr bool has_structured = (false || ... || (Tags[I] == structured_tag));
  std::uint32_t text_lengths[count + 1] = {};
  bool truncated[count + 1] = {};
  [[maybe_unused]] std::size_t value_sizes[count + 1] = {};
  [[maybe_unused]] Limits limits{};
  [[maybe_unused]] EagerTexts* eager = nullptr;
  [[maybe_unused]] std::size_t eager_base = 0;
  if constexpr (has_structured) {
    limits = current_limits();
    eager = &eager_texts();
    eager_base = eager->text.size();
  }
  [[maybe_unused]] const std::size_t prefix_size = Prefixed ? prefix.size() : 0;
  auto measure = [&] {
    return (prefix_size + ... + argument_size<Tags[I]>(unnamed_value(args), text_lengths[I], value_sizes[I], limits));
  };
  std::size_t args_size = measure();
  if constexpr (has_strings || has_structured) {
    std::size_t limit = max_record_size(*buffer) - kRingHeaderSize;
    if (__builtin_expect(args_size > kFitsAnyRing && args_size > limit, 0)) {
      if constexpr (has_structured) {
        // Keep the record, with fewer elements and shorter strings, each cut marked.
        limits.max_string = std::min<std::uint32_t>(limits.max_string, static_cast<std::uint32_t>(limit / 2));
        while (args_size > limit && (limits.max_elements > 0 || limits.max_string > 0)) {
          limits.max_elements /= 2;
          limits.max_string /= 2;
          eager->text.resize(eager_base);
          args_size = measure();
        }
      }
      if constexpr (has_strings) {
        if (args_size > limit) {
          constexpr bool is_string[count + 1] = {(Tags[I] == string_tag)...};
          std::size_t texts = (std::size_t{0} + ... + (Tags[I] == string_tag ? text_lengths[I] : 0));
          args_size = fit_strings(args_size - texts, limit, text_lengths, truncated, is_string, count);
        }
      }
      if (args_size > limit) {
        if constexpr (has_structured) eager->text.resize(eager_base);
        if (first_call) buffer->end_call();  // its window is open; another call's is not this one's to close
        return false;                        // only a type whose fixed part alone overflows the buffer
      }
    }
  }
  std::size_t stride = ring_stride(args_size);
  // A first call's window is open since its buffer was made. Another's
  // opens here: a call that interrupted this one since the check above has
  // closed its own window again.
  if (!first_call) (void)buffer->begin_call();
  // Read as soon as the window is open, not once the record has room: the
  // counter's read takes some 25 cycles, which then overlap the rest of the
  // call instead of adding to it. A call that waited for room reads it again.
  std::uint64_t stamp = __builtin_expect(first_call, 0) ? buffer->last_ticks : ticks();
  char* out = buffer->try_reserve(stride);
  if (__builtin_expect(out == nullptr, 0)) {
    out = reserve_slow(*buffer, stride);
    if (out == nullptr) {
      if constexpr (has_structured) eager->text.resize(eager_base);
      return false;
    }
    if (!first_call) stamp = ticks();
  }
  if constexpr (has_structured) eager->read = eager_base;
  write_record<Tags, Prefixed>(*buffer, out, RingRecordHeader{id, static_cast<std::uint32_t>(args_size), stamp},
                               buffer->write_pos, prefix, text_lengths, truncated, value_sizes, limits,
                               std::index_sequence<I...>{}, args...);
  if constexpr (has_structured) eager->text.resize(eager_base);
  if (__builtin_expect(buffer->synchronous.load(std::memory_order_relaxed), 0)) wait_until_written();
  return true;
}

// Writes one record, whole or not at all; false when it was not written (not
// running, or the buffer full under Overflow::drop). With Prefixed, the
// record's bytes start with `prefix`: a rate-limited site's suppressed count,
// a context push's kind, serial and site (FORMAT.md §7, §7.3). What a call
// site inlines: the common case, with a thread's buffer and a record that
// fits any ring; log_any() takes the rest.
template <auto Tags, bool Prefixed = false, typename... Args, std::size_t... I>
inline bool log_impl(std::uint32_t id, std::string_view prefix, std::index_sequence<I...> arguments,
                     const Args&... args) noexcept {
  constexpr std::size_t count = sizeof...(Args);
  [[maybe_unused]] constexpr auto string_tag = static_cast<std::uint8_t>(TypeTag::string);
  [[maybe_unused]] constexpr auto structured_tag = static_cast<std::uint8_t>(TypeTag::structured);
  constexpr std::size_t fixed_size =
      (std::size_t{0} + ... +
       (Tags[I] == string_tag || Tags[I] == structured_tag ? 4
                                                           : static_cast<std::size_t>(schema::type_tag_size(Tags[I]))));
  // With room for a prefix.
  static_assert(fixed_size + kMaxRecordPrefix + kRingHeaderSize <= kMinRingCapacity / 2,
                "terse: too many arguments in one call");
  if constexpr ((false || ... || (Tags[I] == structured_tag))) {
    return log_any<Tags, Prefixed, Args...>(id, prefix, arguments, args...);
  } else {
    ThreadBuffer* buffer = tls_buffer;
    std::uint32_t text_lengths[count + 1] = {};
    constexpr bool truncated[count + 1] = {};
    constexpr std::size_t value_sizes[count + 1] = {};
    [[maybe_unused]] const std::size_t prefix_size = Prefixed ? prefix.size() : 0;
    std::size_t args_size = (prefix_size + ... + encoded_size<Tags[I]>(unnamed_value(args), text_lengths[I]));
    if (__builtin_expect(buffer == nullptr || args_size > kFitsAnyRing, 0))
      return log_any<Tags, Prefixed, Args...>(id, prefix, arguments, args...);
    std::size_t stride = ring_stride(args_size);
    if (__builtin_expect(!buffer->begin_call(), 0)) {
      drop_nested_call(*buffer);
      return false;
    }
    // Read as soon as the window is open, not once the record has room: the
    // counter's read takes some 25 cycles, which then overlap the rest of
    // the call instead of adding to it. A call that waited for room reads it
    // again.
    std::uint64_t stamp = ticks();
    char* out = buffer->try_reserve(stride);
    if (__builtin_expect(out == nullptr, 0)) {
      out = reserve_slow(*buffer, stride);
      if (out == nullptr) return false;
      stamp = ticks();
    }
    write_record<Tags, Prefixed>(*buffer, out, RingRecordHeader{id, static_cast<std::uint32_t>(args_size), stamp},
                                 buffer->write_pos, prefix, text_lengths, truncated, value_sizes, Limits{}, arguments,
                                 args...);
    if (__builtin_expect(buffer->synchronous.load(std::memory_order_relaxed), 0)) wait_until_written();
    return true;
  }
}

// Never defined: stripped calls name it only to have their format checked.
template <typename... Args>
void check_only(fmt::format_string<checked_as_t<Args>...>, const Args&...) noexcept;

// The format_string parameter is where fmt checks the format against the
// argument types at compile time; its value is not needed at run time.
// Types fmt 9 cannot format are checked against stand-ins (structured.hpp).
template <typename... Args>
inline std::uint32_t site_id(Site& site, const Args&... args) noexcept {
  // Acquire (free on x86): the record's commit then carries the site's
  // registry copy, registered maybe by another thread, to the IO thread.
  std::uint32_t id = site.id.load(std::memory_order_acquire);
  if (__builtin_expect(id == 0, 0)) {
    if constexpr ((false || ... || is_named_argument<Args>)) {
      const char* names[] = {argument_name(args)...};
      id = register_site(site, names);
    } else {
      id = register_site(site);
    }
  }
  return id;
}

template <auto Tags, std::uint8_t Level, typename... Args>
inline void log(Site& site, fmt::format_string<checked_as_t<Args>...>, const Args&... args) noexcept {
  if (std::uint32_t id = site_id(site, args...))
    log_impl<Tags>(ring_site_id(site, Level, id), {}, std::index_sequence_for<Args...>{}, args...);
}

// A rate-limited site's record, with the count of calls suppressed since the
// last one; a record that is not written hands its count to the next.
template <auto Tags, std::uint8_t Level, typename... Args>
inline void log_limited(Site& site, std::uint64_t suppressed, fmt::format_string<checked_as_t<Args>...>,
                        const Args&... args) noexcept {
  std::uint32_t id = site_id(site, args...);
  char count[10];
  std::string_view prefix(count, static_cast<std::size_t>(wire::write_varint(count, suppressed) - count));
  if (id == 0 ||
      !log_impl<Tags, true>(ring_site_id(site, Level, id), prefix, std::index_sequence_for<Args...>{}, args...))
    site.limit->suppressed.fetch_add(suppressed, std::memory_order_relaxed);
}

// The site of every context whose value has type T (FORMAT.md §7.3): its
// key and its value as arguments of "{}={}". Hidden, so that each shared
// object has its own, as it has its own call sites: a symbol a library
// would be the first to define as unique (an inline variable of default
// visibility) keeps it from ever unloading, hence also the literal format
// below and the serial defined in the runtime.
template <typename T>
struct [[gnu::visibility("hidden")]] ContextSite {
  using Signature = decltype(signature_of(std::string_view{}, std::declval<const T&>()));
  static constexpr auto tags = Signature::tags(schema::kContextFormat);
  static_assert(schema::kContextFormat == "{}={}");
  static constinit inline Site site{"{}={}",
                                    schema::kOwnFileName,
                                    0,
                                    static_cast<std::uint8_t>(Level::info),
                                    static_cast<std::uint8_t>(Signature::size),
                                    tags.data(),
                                    &wire::encode_deltas<tags>,
                                    Signature::describer(),
                                    nullptr,
                                    true};
};

// Numbers the calling thread's contexts, so that a pop names its push
// whatever order the contexts end in (defined in the runtime, see above).
extern constinit thread_local std::uint64_t tls_context_serial;

// FORMAT.md §7.3: a context_push control record; returns its serial, or 0
// when it was not written.
template <typename T>
std::uint64_t push_context(std::string_view key, const T& value) noexcept {
  if (!g_hot.running.load(std::memory_order_relaxed)) return 0;
  Site& site = ContextSite<T>::site;
  std::uint32_t id = site.id.load(std::memory_order_acquire);
  if (__builtin_expect(id == 0, 0)) id = register_site(site);
  if (id == 0) return 0;
  std::uint64_t serial = ++tls_context_serial;
  char bytes[kMaxRecordPrefix];
  char* end = bytes;
  *end++ = static_cast<char>(schema::ControlKind::context_push);
  end = wire::write_varint(end, serial);
  end = wire::write_varint(end, id);
  std::string_view prefix(bytes, static_cast<std::size_t>(end - bytes));
  if (!log_impl<ContextSite<T>::tags, true>(schema::kControlSiteId, prefix, std::index_sequence<0, 1>{}, key, value))
    return 0;
  return serial;
}

// FORMAT.md §7.3: the context_pop of `serial`, from the calling thread.
void pop_context(std::uint64_t serial) noexcept;

}  // namespace detail
}  // namespace terse

namespace terse {

template <typename T>
Context::Context(std::string_view key, const T& value) noexcept {
  // What a logging call checks: that fmt formats the value as terse stores it.
  (void)fmt::format_string<std::string_view, detail::checked_as_t<T>>(schema::kContextFormat);
  serial_ = detail::push_context(key, value);
}

inline Context::~Context() {
  if (serial_ != 0) detail::pop_context(serial_);
}

}  // namespace terse

// Calls below TERSE_MIN_LEVEL (0 = trace … 5 = critical, 6 = all off) are
// removed at compile time: neither their strings nor their code reach the
// binary.
#ifndef TERSE_MIN_LEVEL
#define TERSE_MIN_LEVEL 0
#endif

// What fmt's own compile-time check does not cover.
#define TERSE_DETAIL_CHECK_SIGNATURE(signature, format_literal)                                \
  static_assert(signature::uses_every_argument(format_literal),                                \
                "terse: the format string does not use every argument (too many arguments?)"); \
  static_assert(signature::strings_presented_one_way(format_literal),                          \
                "terse: a string argument is printed both as text and with {:p}; pass it twice")

// What every logging macro starts with: the signature checked against the
// format, the argument tags, and the call site (`limit`: a rate-limited
// site's LimitState, else nullptr). The site is a constant-initialised
// static, so declaring it costs nothing at run time.
#define TERSE_DETAIL_SITE(level_value, limit, format_literal, ...)                       \
  using terse_signature_ = decltype(::terse::detail::signature_of(__VA_ARGS__));         \
  TERSE_DETAIL_CHECK_SIGNATURE(terse_signature_, format_literal);                        \
  static constexpr auto terse_tags_ = terse_signature_::tags(format_literal);            \
  static constinit ::terse::detail::Site terse_site_ {                                   \
    format_literal, __FILE__, __LINE__, static_cast<std::uint8_t>(level_value),          \
        static_cast<std::uint8_t>(terse_signature_::size), terse_tags_.data(),           \
        &::terse::wire::encode_deltas<terse_tags_>, terse_signature_::describer(), limit \
  }

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

#define TERSE_DETAIL_LOG_LIMITED(limiter_type, limit, level_value, format_literal, ...)      \
  do {                                                                                       \
    static constinit limiter_type terse_limiter_{};                                          \
    TERSE_DETAIL_SITE(level_value, &terse_limiter_, format_literal, __VA_ARGS__);            \
    std::uint64_t terse_suppressed_;                                                         \
    if (::terse::detail::gate_allows(terse_site_, static_cast<std::uint8_t>(level_value)) && \
        terse_limiter_.pass(limit, terse_suppressed_))                                       \
      ::terse::detail::log_limited<terse_tags_, static_cast<std::uint8_t>(level_value)>(     \
          terse_site_, terse_suppressed_, format_literal __VA_OPT__(, ) __VA_ARGS__);        \
  } while (false)

// A call removed by TERSE_MIN_LEVEL is still checked in full, so lowering
// the floor later never reveals a broken call; a discarded statement emits
// no code and no string.
#define TERSE_DETAIL_STRIPPED(format_literal, ...)                                          \
  do {                                                                                      \
    if constexpr (false) {                                                                  \
      using terse_signature_ = decltype(::terse::detail::signature_of(__VA_ARGS__));        \
      TERSE_DETAIL_CHECK_SIGNATURE(terse_signature_, format_literal);                       \
      [[maybe_unused]] constexpr auto terse_tags_ = terse_signature_::tags(format_literal); \
      ::terse::detail::check_only(format_literal __VA_OPT__(, ) __VA_ARGS__);               \
    }                                                                                       \
  } while (false)

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
