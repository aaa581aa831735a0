// Reading terse logs from C++: the records of .tlog files, directories of
// them or a stream, in time order, as values a program can compute with.
//
// Link terse::reader (find_package(terse CONFIG REQUIRED COMPONENTS reader)).
// This header includes only the standard library: the decoder behind it
// (fmt, zstd and the file format's internals) stays inside the library
// (Reader is a pointer to its state), and what crosses this interface is
// plain values (numbers, strings, vectors), so a program needs none of those
// headers and no internal layout leaks into it.
//
//   terse::reader::Options options;
//   options.filter.min_level = terse::reader::Level::warn;
//   options.on_problem = [](const terse::reader::Problem& p) { std::cerr << p.source << ": " << p.what << '\n'; };
//   terse::reader::Reader reader({"logs/"}, options);  // throws OpenError when a path cannot be opened
//   terse::reader::Record record;
//   while (reader.next(record)) std::cout << record.message() << '\n';
//
// `terse cat` is built on this header: message() is byte for byte its
// message, json() its `-o json` line, a Formatter prints its lines, and the
// filters are the ones behind its --level, --since, --until, --site,
// --thread and --context.
#pragma once

#include <chrono>
#include <climits>
#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace terse::reader {

// The levels of terse::Level, by the same values as in the file.
enum class Level : std::uint8_t { trace = 0, debug = 1, info = 2, warn = 3, error = 4, critical = 5 };

// "trace" ... "critical"; "?" for a value no level has.
const char* level_name(Level level);

// Damage or trouble found while reading, with where it was found. Damaged
// data is never thrown: the reader reports it here, skips what it cannot
// read and goes on with the next frame or file.
struct Problem {
  std::string source;        // the file, or the name given to a stream
  std::uint64_t offset = 0;  // in that file
  std::string what;
  // The data ends inside a frame: where a live or crashed writer stopped.
  // Everything before it was read; it is not damage.
  bool torn_tail = false;
  // A cursor given to resume_after() does not fit the file it names (was
  // the file replaced?); that input gives nothing more.
  bool bad_resume = false;
  // A sealed file read with its key was changed after its writer wrote it
  // (README: sealed logs), not left so by a crash.
  bool tampering = false;
};
using ProblemHandler = std::function<void(const Problem&)>;

// A path that cannot be opened (missing, unreadable, a directory that
// cannot be listed): the only trouble that throws, since nothing can be read.
class OpenError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One argument of a record, or one piece of a structured argument.
struct Value {
  enum class Kind : std::uint8_t {
    null,              // an empty optional, a valueless variant, a null string
    signed_integer,    // i
    unsigned_integer,  // u
    floating,          // f
    boolean,           // b
    character,         // c
    string,            // text
    pointer,           // u holds the address
    list,              // children in order: containers, tuples, pairs (structured arguments)
    object,            // children with their names: aggregates, maps keyed by strings, user types
  };
  Kind kind = Kind::null;
  // The member's name inside an object, the argument's name at the top
  // when the call site named it ({name} fields); empty otherwise.
  std::string name;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double f = 0;
  bool b = false;
  char c = 0;
  // Kind::string: the text. Every other kind: an argument as `{}` prints it
  // (fmt's formatting; a structured one as a whole, e.g. "[1, 2, 3]"), a
  // piece inside a structured argument as its JSON.
  std::string text;
  // A string the writer cut at its length limit: `text` is the kept bytes
  // and the mark "... N bytes total" as `terse cat` prints it;
  // original_size is the length before the cut (0 when the file does not say).
  bool truncated = false;
  std::uint64_t original_size = 0;
  // A null `const char*` (text is "(null)", as fmt prints it); kind is null.
  bool null_string = false;
  // Members of a structured value. Inside structured values, scalars keep
  // the type they were logged with (an int is signed_integer whatever its
  // sign, a char a character, a pointer a pointer), and enums, durations,
  // time points and user types are as in `terse cat -o json` (strings and
  // objects); use the as_* helpers for numbers.
  std::vector<Value> children;

  bool is_number() const {
    return kind == Kind::signed_integer || kind == Kind::unsigned_integer || kind == Kind::floating;
  }
  std::int64_t as_int64() const;  // a number converted as static_cast would; 0 otherwise
  std::uint64_t as_uint64() const;
  double as_double() const;
  // The child called `member_name`, or null.
  const Value* find(std::string_view member_name) const;
};

// A thread of the writer as the file names it.
struct Thread {
  std::uint32_t index = 0;   // the writer's own numbering, from 0
  std::uint64_t os_tid = 0;  // 0 when the platform gave none
  std::string name;          // empty when the thread was not named
};

// A field terse::Context attached to a record.
struct ContextField {
  std::string key;
  std::string text;  // the value as fmt prints it
  std::string json;  // the value as JSON
};

// log: a record of a call site. dropped: the writer's note that a thread's
// buffer was full and records were lost. suppressed: how many calls a
// rate-limited site suppressed after its last record (written at stop).
enum class RecordKind : std::uint8_t { log, dropped, suppressed };

// Where a record sits: its file (the name only), its frame, its index in
// the frame. Two records of one reading never have the same position.
struct Position {
  std::string file;
  std::uint64_t frame_offset = 0;
  std::uint32_t frame_index = 0;
};

namespace detail {
struct RecordData;
struct Access;
}  // namespace detail

// One record, as a view: it holds no data of its own and stays valid until
// the Reader that gave it reads the next record (copy what you keep). The
// accessors that build strings or values (message, args, json) do that work
// when called, so records a program only counts cost nothing more.
class Record {
 public:
  RecordKind kind() const;
  // A drop report's level is warn, as `terse cat` prints it.
  Level level() const;
  std::int64_t time_ns() const;  // nanoseconds since the Unix epoch
  std::uint64_t ticks() const;   // the writer's raw clock, as stored
  Thread thread() const;
  // The call site; empty for a drop report.
  std::string_view file() const;
  std::uint32_t line() const;
  std::string_view format() const;
  // A number for the call site, for tables keyed by site without comparing
  // strings: the records of a site in one file share it, and no other site
  // of any file this process reads has it. The same site in another file
  // has another number. 0 for a drop report.
  std::uint64_t site_id() const;
  // What fmt::format(format, args...) printed in the writer, byte for byte;
  // a drop report's text for one. A record the decoder cannot format
  // safely is rendered as its raw format and arguments behind a marker.
  std::string message() const;
  // The same appended to `out`; false when the record could not be
  // formatted and what was appended is the raw form behind the marker.
  bool message(std::string& out) const;
  std::vector<Value> args() const;
  // One name per argument ("" for a positional one), or none when every
  // argument is positional.
  std::vector<std::string> arg_names() const;
  // The context fields that show (an inner one hides an outer of its key).
  std::vector<ContextField> context() const;
  // Recorded by the flight recorder and written when a trigger came.
  bool flight() const;
  // kind log: calls of a rate-limited site suppressed before this record;
  // kind suppressed: those after its last one.
  std::uint64_t suppressed() const;
  // kind dropped: how many records were lost, and the span of their times.
  std::uint64_t dropped_count() const;
  std::int64_t dropped_first_ns() const;
  std::int64_t dropped_last_ns() const;
  // The line `terse cat -o json` prints for the record, without the newline.
  std::string json() const;
  Position position() const;

  // False for a default-made Record, before next() filled it.
  explicit operator bool() const { return data_ != nullptr; }

 private:
  friend struct detail::Access;
  const detail::RecordData* data_ = nullptr;
};

// `terse cat`'s line pattern: "{time} {level} [{thread}] {file}:{line} {message}".
const char* default_pattern();

// How a Formatter prints records: the text lines and JSON lines of
// `terse cat`, for a program that shows records as it does.
struct FormatOptions {
  // A text line: {time} {level} {thread} {file} {line} {message} {context},
  // each with an fmt spec if wanted ({level:<8}); context fields the pattern
  // does not place follow the message (" {request_id=42}").
  std::string pattern = default_pattern();
  // One JSON object per record instead, as Record::json() writes it.
  bool json = false;
  // Times (in lines, in JSON, and time points inside messages) in UTC
  // rather than local time.
  bool utc = false;
  // The digits of {time}'s fraction of a second, 0 to 9; JSON always has 9.
  int time_digits = 9;
  // {level} in ANSI colours, for a terminal.
  bool color = false;
  // Rewrites the message and every string argument (the strings inside
  // structured ones too) before they are printed: redaction. It must be
  // safe to call from several threads when the Formatter is shared.
  std::function<void(std::string& text)> rewrite;
  // JSON: a log record's "args" is null rather than its arguments, for a
  // destination that has no room for them.
  bool json_args = true;
};

// Prints records. Cheap to copy; a const Formatter may be used from
// several threads at once.
class Formatter {
 public:
  // Throws std::invalid_argument saying what is wrong with the pattern.
  explicit Formatter(FormatOptions options = {});

  // The record's line, ending in '\n', appended to `out`.
  void append(const Record& record, std::string& out) const;
  // The same with the message already made by message() (a program that
  // looks at the message first, to match it, makes it only once).
  void append(const Record& record, std::string_view message, std::string& out) const;
  // The record's message, rewritten, appended to `out`; false when the
  // record could not be formatted (see Record::message).
  bool message(const Record& record, std::string& out) const;

  const FormatOptions& options() const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

// What a call site is, for Filter::site.
struct SiteInfo {
  Level level = Level::info;
  std::string_view file;
  std::uint32_t line = 0;
  std::string_view format;
};

// Which records reach next(). Everything here is decided per call site and
// thread once, when the file introduces them, so the records of a site that
// is not wanted are passed over before their arguments are read.
struct Filter {
  Level min_level = Level::trace;  // inclusive
  Level max_level = Level::critical;
  std::int64_t since_ns = INT64_MIN;  // inclusive, nanoseconds since the Unix epoch
  std::int64_t until_ns = INT64_MAX;  // inclusive
  // Any of these (empty: every site): text the format string contains, a
  // source file ("conn.cpp", "net/conn.cpp") or file:line ("conn.cpp:120").
  std::vector<std::string> sites;
  // Any of these (empty: every thread): an OS thread id or a thread name.
  std::vector<std::string> threads;
  // Only records logged inside each of these contexts: (key, value as text).
  std::vector<std::pair<std::string, std::string>> context;
  // Asked once per call site besides the above; empty: every site.
  std::function<bool(const SiteInfo&)> site;
};
// Drop reports pass a filter when it admits warn and has no sites, context
// or site predicate: they belong to no call site and no context.

struct Options {
  Filter filter;
  // Problems in the data (see Problem). Without one, they are only counted.
  ProblemHandler on_problem;
  // Keep reading after the end: next() returning false then means "nothing
  // more yet", and poll() or wait() look again (new records, rolled files,
  // writers that start later), as `terse cat -f` does. For paths only; a
  // path that does not exist yet is then waited for, not an OpenError.
  bool follow = false;
  // A path that cannot be opened is a Problem and the rest is read, instead
  // of an OpenError (what `terse cat` does with several paths).
  bool report_open_failures = false;
  // Times in json() in UTC rather than local time.
  bool utc = false;
  // Keep where each input stands, for cursor(); costs a little per record.
  bool cursors = false;
  // Private key files (OpenSSH ed25519, as `ssh-keygen -t ed25519` or
  // `terse keygen` writes them) that open sealed files. A key file that
  // cannot be read throws OpenError. A sealed file without its key is a
  // Problem, and its records are not given.
  std::vector<std::string> keys;
  // Public key files of writers (Config::sign_with's keys): a sealed file
  // whose seal none of them signed is a tampering Problem. Empty: any.
  std::vector<std::string> signers;
};

// What the inputs held, so far.
struct Summary {
  std::uint64_t records = 0;  // given by next() (or rendered by decode_parallel)
  // Of the files read to their end so far (as `terse verify` counts them):
  // their frames, every record in them whether the filter took it or not,
  // and whether one ended in a torn tail.
  std::uint64_t frames = 0;
  std::uint64_t stored_records = 0;
  std::uint64_t stored_bytes = 0;  // their frames' payloads as stored (compressed)
  std::uint64_t raw_bytes = 0;     // the same decompressed
  bool torn_tail = false;
  // How the writers stored terse::secret() values ("omit", "hash" or
  // "clear"), in the order first seen; empty for files of writers before 1.1.
  std::vector<std::string> private_values;
  std::uint64_t damaged = 0;  // problems reported (files that would not open too), torn tails not counted
  // Directories that could not be listed (with options.report_open_failures).
  std::uint64_t unreadable_inputs = 0;
  // Sealed files: problems that show tampering (counted in `damaged` too),
  // frames that no key given opened (their contents unchecked), and the
  // fingerprints ("SHA256:…", as ssh-keygen -l prints them) of the keys the
  // files were sealed to.
  std::uint64_t tampered = 0;
  std::uint64_t sealed_unopened = 0;
  std::vector<std::string> sealed_to;
  std::vector<std::string> signed_by;  // writers' keys whose signatures held
  // Each sealed file opened and read to its end, in reading order: its id,
  // the id of the file its writer closed just before it (empty: none), in
  // hex, and whether it ends with its end frame. A file whose successor
  // names it but that has no end frame was cut short; a name that no file
  // has is a file gone (`terse verify` checks both).
  struct SealedFile {
    std::string id;
    std::string previous;
    bool ended = false;
  };
  std::vector<SealedFile> sealed_files;
};

// Renders one record on a decoding thread; see Reader::decode_parallel.
using Renderer = std::function<void(const Record& record, std::string& out)>;
using RendererFactory = std::function<Renderer()>;
// Takes rendered text in record order; false stops the reading.
using ChunkWriter = std::function<bool(std::string_view text)>;

// What resume_after() made of a cursor.
struct ResumeResult {
  bool ok = true;
  bool malformed = false;  // the text is not a cursor at all
  std::string error;       // why it cannot apply (ok is false)
  // What was lost on the way, e.g. a file retention removed since.
  std::vector<std::string> notes;
};

// Reads records in time order from files, directories or a stream. A
// directory means every .tlog file in it; the files of one writer are read
// one after another, and those of several writers (several directories,
// processes sharing a log name) are merged by time, as `terse cat` merges them.
class Reader {
 public:
  // Files, directories, or "-" for standard input. Throws OpenError when a
  // path cannot be opened (unless options.report_open_failures).
  explicit Reader(const std::vector<std::string>& paths, Options options = {});
  // A stream of log bytes (a file, or files one after another, as on a
  // pipe), read to its end when the Reader is made; `name` names it in problems.
  static Reader from_stream(std::istream& in, std::string name = "<stream>", Options options = {});
  // The same from memory: the bytes are copied.
  static Reader from_memory(std::string_view bytes, std::string name = "<memory>", Options options = {});
  // The same from a file descriptor, read as records are asked for; it is
  // not closed and must outlive the Reader.
  static Reader from_fd(int fd, std::string name = "<fd>", Options options = {});

  Reader(Reader&&) noexcept;
  Reader& operator=(Reader&&) noexcept;
  ~Reader();

  // The next record that passes the filter into `record`; false at the end
  // (following: nothing more for now).
  bool next(Record& record);

  // Following: where to look for changes, how long until the next look is
  // due, and the look itself (call next() again after it). wait() sleeps
  // until it is due, then polls; a program with its own event loop calls
  // poll() when one of the directories changes or the interval has passed.
  std::vector<std::string> watched_directories() const;
  std::chrono::milliseconds poll_interval() const;
  void poll();
  void wait();

  // With options.cursors: an opaque text naming where every input stands
  // after the last record next() gave (what `terse cat --show-cursor`
  // prints; empty while no input has a place yet). Store it; a later
  // Reader over the same logs continues right
  // after that record with resume_after(). Call resume_after() before the
  // first next().
  std::string cursor() const;
  ResumeResult resume_after(const std::string& cursor);

  // Not following, no cursors, and the inputs are one writer's files: reads
  // them to the end on `workers` threads, each rendering records with a
  // Renderer of its own, and hands the text to `write` in record order.
  // False, having read nothing, when the inputs need next() instead.
  bool decode_parallel(unsigned workers, const RendererFactory& make_renderer, const ChunkWriter& write);

  Summary summary() const;

  struct Impl;

 private:
  explicit Reader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The CPUs this process may run on: a fitting number of workers for decode_parallel.
unsigned available_cpus();

// Paths as a list of files, each directory replaced by its .tlog files
// oldest first, for a program that reads each file on its own (as `terse
// verify` and `terse stats` do). A directory that cannot be listed is said
// on stderr and clears `ok`.
std::vector<std::string> expand_paths(const std::vector<std::string>& paths, bool& ok);

// Following: the wait between two rounds of reading (Reader::poll), which
// ends as soon as something that may hold new records changes. Watches
// directories (inotify on Linux): a followed file that grows, a file created
// in or renamed into one (a roll, a new writer) ends the wait at once, so a
// record is read within a few milliseconds of its write rather than at the
// next poll. Where inotify is missing or runs out of watches the wait is a
// plain sleep of the timeout, and following works by polling.
class ChangeWaiter {
 public:
  ChangeWaiter();
  ~ChangeWaiter();
  ChangeWaiter(const ChangeWaiter&) = delete;
  ChangeWaiter& operator=(const ChangeWaiter&) = delete;

  // From now on; a directory that does not exist yet is tried again at each
  // wait (until it exists only the timeout ends the wait for it).
  void watch_directory(const std::string& dir);
  // True when a change ended it, false after `timeout`.
  bool wait(std::chrono::milliseconds timeout);
  // Whether changes end waits (false: every wait is a sleep).
  bool watching() const { return fd_ >= 0 && !watched_.empty(); }

 private:
  void add(const std::string& dir);
  void give_up();

  int fd_ = -1;
  std::set<std::string> watched_;
  std::vector<std::string> missing_;
};

}  // namespace terse::reader
