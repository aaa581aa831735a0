// The reader side of the .tlog format (schema/FORMAT.md) as a library:
// frames, dictionary, argument decoding and formatting. It shares nothing
// with the runtime but schema/.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <terse/result.hpp>
#include <terse/seal.hpp>

namespace terse::decoder {

// Damage or trouble found while reading, with where it was found. Library
// code never prints: it hands every problem to the caller's reporter.
struct Problem {
  std::string source;
  std::uint64_t offset = 0;
  std::string what;
  // The input ends inside a frame: the writer stopped mid-write (a crash, or
  // a live file). Everything before it was read; it is not damage.
  bool torn_tail = false;
  // A position given to StreamDecoder::resume_after is not in this stream
  // (or holds a different record); the stream ends without a record.
  bool bad_resume = false;
  // In a sealed file opened with its key (FORMAT.md §11): the file was
  // changed after its writer wrote it (a byte, a frame removed, repeated or
  // moved, frames in the clear, the end cut off), not left so by a crash.
  bool tampering = false;
};
using Reporter = std::function<void(const Problem&)>;

// Largest width or precision (static or dynamic) the decoder lets fmt apply;
// a file that asks for more gets the record reported instead of formatted.
inline constexpr int kMaxWidthOrPrecision = 1 << 16;

// What check_format learned about a site's format string.
struct FormatCheck {
  bool ok = false;
  std::string error;
  std::vector<std::uint16_t> dynamic_args;  // arguments used as a width or a precision
  // Every replacement field is a bare `{}` and the text has no `{{` or `}}`:
  // render_message then writes the arguments itself, as fmt would, without
  // parsing the format string again for every record (most call sites).
  bool plain = false;
};
// `names` are the site's argument names (FORMAT.md §6), empty for a
// positional argument; `{name}` fields may refer to the non-empty ones. An
// argument tagged structured takes whatever spec its formatter parses, with
// every number in it bounded like a width.
FormatCheck check_format(std::string_view format, std::span<const std::uint8_t> tags,
                         std::span<const std::string> names = {});

// ---- structured values (FORMAT.md §8.1) -------------------------------------

// A piece of SiteTypes::text.
struct TextRef {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
};

// One node of a type expression. `code` is a scalar tag of §8 (0x01-0x10)
// or a schema::TypeNode; what else is set depends on it. Kept small: a
// hostile site may hold thousands.
struct TypeExpr {
  std::uint8_t code = 0;
  std::uint8_t rep = 0;    // duration, time point: the count's tag; enum: the underlying tag
  std::uint8_t clock = 0;  // time point: a schema::Clock
  // Composite nodes: their children are SiteTypes::children[first, first +
  // count). An enum: its enumerators are SiteTypes::enumerators[first,
  // first + count), sorted by value.
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  // Duration, time point: its period in SiteTypes::periods; user type: its
  // entry in SiteTypes::users; bitset: its number of bits.
  std::uint32_t extra = 0;
  TextRef name;  // aggregate, enum, user type: the C++ type name
};

struct Period {
  std::uint64_t num = 1;  // reduced, as std::ratio keeps them
  std::uint64_t den = 1;
};

struct UserType {
  TextRef format;
  FormatCheck check;  // of `format`, its fields standing for the arguments
};

struct Enumerator {
  std::int64_t value = 0;
  TextRef name;
};

// Every type expression of one site in flat vectors: a hostile dictionary
// entry costs a few allocations, not one per node.
struct SiteTypes {
  std::vector<TypeExpr> nodes;
  std::vector<std::uint32_t> children;  // node indexes
  std::vector<TextRef> field_names;     // parallel to `children`; an aggregate's member names
  std::vector<Enumerator> enumerators;  // one per value: the first name listed for it
  std::vector<Period> periods;
  std::vector<UserType> users;
  std::string text;
  std::vector<std::uint32_t> roots;  // the expression of each structured argument, in argument order

  std::string_view view(TextRef ref) const { return std::string_view(text).substr(ref.offset, ref.size); }
  const TypeExpr& child(const TypeExpr& parent, std::uint32_t k) const { return nodes[children[parent.first + k]]; }
};

struct Site {
  std::uint32_t id = 0;
  // Unique in the process, new each time a file defines the entry: what
  // terse::reader::Record::site_id() gives.
  std::uint64_t serial = 0;
  std::uint8_t level = 0;
  std::uint32_t line = 0;
  std::string file;
  std::string format;
  std::vector<std::uint8_t> tags;
  SiteTypes types;  // FORMAT.md §8.1; empty without structured arguments
  // FORMAT.md §6: one per argument ("" for a positional one), or none when
  // every argument is positional.
  std::vector<std::string> arg_names;
  // FORMAT.md §6 flags (1.4): a rate-limited site, whose records say how
  // many calls it suppressed before each.
  bool limited = false;
  // FORMAT.md §6 flags (1.5): not a call site but the layout of a
  // terse::Context's key and value, which context pushes name (§7.3).
  bool context = false;
  FormatCheck check;
  // False when the entry's type expressions or names are malformed: the
  // site was reported and its records are skipped (FORMAT.md §6, §8.1).
  bool usable = true;
  // What the stream's Filter said about this site, asked once when its
  // dictionary entry was read; records of an unselected site are skipped
  // before their arguments are parsed.
  bool selected = true;
};

struct Thread {
  std::uint32_t index = 0;
  std::uint64_t os_tid = 0;
  std::string name;
  bool selected = true;  // as for Site::selected

  // The id lines and JSON show, and --thread matches: the OS's thread id,
  // or where the platform gave none the writer's own index.
  std::uint64_t shown_id() const { return os_tid != 0 ? os_tid : index; }
};

struct Arg {
  std::uint8_t tag = 0;
  // Tag structured: `text` holds the value's bytes (checked against its
  // expression), `type` is the expression's root in the site's types.nodes.
  std::uint32_t type = 0;
  union {
    std::int64_t i;
    std::uint64_t u;
    float f32;
    double f64;
    bool b;
    char c;
  };
  // Beside the union, not in it: a union holding a long double is passed and
  // returned by a rule GCC changed in 4.4, and GCC notes (-Wpsabi) every
  // function that returns an Arg. The size is the same either way: the long
  // double's 16-byte alignment pads the struct already.
  long double f80 = 0;
  // Strings, structured values. A cut string (FORMAT.md §8, 1.3) holds the
  // kept bytes followed by the mark "... N bytes total".
  std::string_view text;
  bool truncated = false;
  std::uint64_t original_size = 0;  // a cut string's length before the cut; 0 when the file does not say
  bool null_string = false;
  Arg() : u(0) {}
};

// A field that terse::Context attached to the records of a thread (FORMAT.md
// §7.3, 1.5).
struct ContextField {
  std::string key;
  std::string text;          // the value as fmt prints it
  std::string json;          // the value as JSON
  std::uint64_t serial = 0;  // its push's, which its pop names
};

// log: a record of `site`; dropped: a thread's drop report; suppressed: how
// many calls `site` (rate-limited) suppressed after its last record, written
// when the logger stopped (FORMAT.md §7 kind 3).
enum class RecordKind { log, dropped, suppressed };

struct Record {
  RecordKind kind = RecordKind::log;
  std::uint64_t ticks = 0;
  std::int64_t unix_ns = 0;
  const Site* site = nullptr;      // kind == log or suppressed
  const Thread* thread = nullptr;  // never null
  std::span<const Arg> args;
  // kind == log: the calls of a rate-limited site suppressed since its
  // previous record; kind == suppressed: those after its last one.
  std::uint64_t suppressed = 0;
  // From a flight frame (FORMAT.md §7.2, 1.5): recorded by the flight
  // recorder and written when a trigger or a crash came, not in the normal stream.
  bool flight = false;
  // kind == log: the contexts open on its thread when it was logged,
  // outermost first; an inner one hides an outer one of the same key
  // (context_shows() says which show).
  std::span<const ContextField> context;
  std::uint64_t dropped_count = 0;  // kind == dropped
  std::int64_t dropped_first_ns = 0;
  std::int64_t dropped_last_ns = 0;
  // Where the record sits in its stream: the offset of its frame's header
  // and its index among the frame's records (filtered ones included).
  std::uint64_t frame_offset = 0;
  std::uint32_t frame_index = 0;
  std::uint64_t file_offset = 0;  // of the preamble of the file it came from
};

// Decides which records reach the caller without parsing their arguments:
// the site and thread predicates run once per dictionary entry and their
// answers are kept, so a rejected record costs a few varint reads.
struct Filter {
  std::function<bool(const Site&)> site;      // empty: every site
  std::function<bool(const Thread&)> thread;  // empty: every thread
  std::int64_t since_ns = INT64_MIN;          // inclusive
  std::int64_t until_ns = INT64_MAX;          // inclusive
  bool dropped = true;                        // pass drop reports (time and thread still apply)
  // Only records with each of these context fields (key, value as text).
  std::vector<std::pair<std::string, std::string>> context;
};

// Whether context[i] shows: no later field of the same key hides it.
bool context_shows(std::span<const ContextField> context, std::size_t i);
// The value of `key` in the context, or null.
const ContextField* context_find(std::span<const ContextField> context, std::string_view key);

struct Summary {
  std::uint64_t frames = 0;
  std::uint64_t records = 0;
  std::uint64_t damaged = 0;       // problems reported, a torn tail not counted
  std::uint64_t skipped = 0;       // records a Filter turned away
  std::uint64_t stored_bytes = 0;  // frame payloads as stored (compressed)
  std::uint64_t raw_bytes = 0;     // the same payloads decompressed
  bool torn_tail = false;
  // How the writer stored terse::secret() values when it opened each file
  // (FORMAT.md §4 info key 8: "omit", "hash" or "clear"), in the order first
  // seen; empty for files of writers before 1.1.
  std::vector<std::string> private_values;
  // Sealed files (FORMAT.md §11): problems that show tampering (counted in
  // `damaged` too); the frames no key given could open, whose contents were
  // not checked; and the fingerprints of the keys the files were sealed to.
  std::uint64_t tampered = 0;
  std::uint64_t sealed_unopened = 0;
  std::vector<std::string> sealed_to;
  // The fingerprints of the writer keys whose signatures held, in the order first seen.
  std::vector<std::string> signed_by;
  // Each sealed file opened, read to its end: its id, the id of the file its
  // writer closed before it (FORMAT.md §4 key 10; empty: none), both in hex,
  // and whether it ends with its end frame. Files of one run form a chain,
  // which `terse verify` follows to find a file cut short or gone.
  struct SealedFile {
    std::string id;
    std::string previous;
    bool ended = false;
  };
  std::vector<SealedFile> sealed_files;
  bool intact() const { return damaged == 0 && !torn_tail; }
  // Adds another stream's summary to this one (a reader of several files):
  // counts add up, lists keep each entry once, in the order first seen.
  void add(const Summary& other);
};

using RecordSink = std::function<void(const Record&)>;

// Decodes one input stream (a file, or several files concatenated on a
// pipe) from a file descriptor to its end. Damaged frames are reported and
// skipped; a torn tail ends the stream.
//
// Two ways to use it: push (decode_fd/decode_bytes call a sink for every
// record) or pull (start_fd/start_bytes, then next() until it says false),
// which lets a caller interleave several streams by time or wait for a
// live file to grow.
class StreamDecoder {
 public:
  StreamDecoder(std::string source, Reporter reporter);
  ~StreamDecoder();
  StreamDecoder(const StreamDecoder&) = delete;
  StreamDecoder& operator=(const StreamDecoder&) = delete;

  // Applies to records read from now on; sites and threads already in the
  // dictionary are asked again.
  void set_filter(Filter filter);
  // The private keys that open sealed files (FORMAT.md §11; see
  // <terse/seal.hpp> for reading them). A sealed file without its key is
  // reported once and its sealed frames are passed over.
  void set_keys(std::vector<seal::SecretKey> keys);
  // Writers' public keys (Config::sign_with's): a sealed file whose seal
  // none of them signed is reported as tampering. Empty: any or none.
  void set_signers(std::vector<seal::PublicKeyBytes> signers);

  Summary decode_fd(int fd, const RecordSink& sink);
  // The same over bytes in memory (tests, fuzzing).
  Summary decode_bytes(std::string_view bytes, const RecordSink& sink);

  // Pull interface. The fd is not owned and must outlive the reading.
  void start_fd(int fd);
  void start_bytes(std::string_view bytes);
  // The next record that passes the filter; false at the end of the data.
  // The record (its args and strings) stays valid until the next call.
  bool next(Record& record);
  // Live mode (following a file a writer still appends to): the end of the
  // data means "nothing more yet", so an unfinished frame is neither
  // reported nor consumed and next() may return true again once the file
  // has grown. Turn it off to read what is left as a finished file.
  void set_live(bool live);
  const Summary& summary() const;
  // Bytes of the stream consumed so far (complete frames and preambles).
  std::uint64_t position() const;

  // Pull interface fed in process, by a writer's own console or callback
  // (no file, no frames, no checksums): start_feed(), then the payloads in
  // the order a file would hold them. After feed_records(), next() returns
  // that payload's records, then false until the next one is fed. A
  // record's frame_offset numbers the payload it came from.
  void start_feed();
  void feed_calibration(std::uint64_t ticks, std::int64_t unix_ns, double ticks_per_second);  // FORMAT.md §5
  void feed_dictionary(std::string_view entries);                                             // §6 entries
  void feed_records(std::string_view payload, bool flight = false);  // a §7 payload; of a flight frame (§7.2)
  // The open contexts (§7.3) are those a records payload of pushes holds
  // (a writer's file-start repeat), for a feed that skipped records.
  void replace_contexts(std::string_view pushes);

  // Pull interface, after start_*: continue after the record at
  // (frame_offset, frame_index) of Record, which must carry `ticks`.
  // Records frames before it are passed over undecompressed (dictionary and
  // calibration frames are still read: the records after need them), and
  // its own frame's records up to and including it are walked for the
  // argument deltas but never returned. A position that names no such
  // record is reported as a Problem with bad_resume, and the stream ends.
  void resume_after(std::uint64_t frame_offset, std::uint32_t frame_index, std::uint64_t ticks);

  struct State;  // the decoding state of one stream, internal to the library

 private:
  std::unique_ptr<State> state_;
};

// Convenience: decodes a file path; problems go to the reporter.
Summary decode_file(const std::string& path, const RecordSink& sink, const Reporter& reporter);

// ---- parallel decoding -------------------------------------------------------

// The CPUs this process may run on (its CPU affinity where the OS has one), at least 1: how many
// workers a ParallelDecoder is worth.
unsigned available_cpus();

// Renders one record into the output of its frame, on a worker thread. Each
// worker has its own, made by a RendererFactory on the calling thread, so it
// may keep scratch buffers without locks.
using RecordRenderer = std::function<void(const Record& record, std::string& out)>;
using RendererFactory = std::function<RecordRenderer()>;
// Takes the output of the frames in stream order, on the calling thread;
// false stops the decoding (the output's reader went away).
using ChunkWriter = std::function<bool(std::string_view text)>;

// Decodes a stream as StreamDecoder::decode_fd does, on several threads,
// for the commands that print or check every record: rendering is most of
// the work, and records frames are independent once the state that carries
// across frames is known. One thread reads the frames in order, checks and
// decompresses them and keeps that state (dictionary, calibration, frame
// numbers, the contexts open); `workers` threads each decode and render a
// records frame into its output; the calling thread hands the outputs to
// `write` in stream order and the problems to the reporter where
// StreamDecoder would report them. Output and problems are byte for byte
// those of rendering, in order, every record decode_fd gives. A few frames
// are in flight at a time, never the whole stream.
class ParallelDecoder {
 public:
  ParallelDecoder(std::string source, Reporter reporter, unsigned workers);
  ~ParallelDecoder();
  ParallelDecoder(const ParallelDecoder&) = delete;
  ParallelDecoder& operator=(const ParallelDecoder&) = delete;

  void set_filter(Filter filter);
  void set_keys(std::vector<seal::SecretKey> keys);             // as StreamDecoder's
  void set_signers(std::vector<seal::PublicKeyBytes> signers);  // as StreamDecoder's

  // The fd is not owned. The summary is decode_fd's; after `write` said
  // stop, it covers what was read until then.
  Summary decode_fd(int fd, const RendererFactory& make_renderer, const ChunkWriter& write);
  Summary decode_bytes(std::string_view bytes, const RendererFactory& make_renderer, const ChunkWriter& write);

 private:
  struct Run;
  std::string source_;
  Reporter reporter_;
  Filter filter_;
  std::vector<seal::SecretKey> keys_;
  std::vector<seal::PublicKeyBytes> signers_;
  unsigned workers_;
};

// ---- rendering -------------------------------------------------------------

// Appends the message exactly as fmt::format(site format, args...) would
// print it; a record the decoder cannot format safely is rendered as the
// raw format and arguments behind a marker, and the failure says why.
struct TimeStyle;
Result<> render_message(const Record& record, std::string& out, const TimeStyle* style = nullptr);

// Appends `text` as a JSON string literal; invalid UTF-8 becomes U+FFFD.
void append_json_string(std::string& out, std::string_view text);

// How times (and, on a terminal, levels) look in text output.
struct TimeStyle {
  bool utc = false;
  int digits = 9;      // of the fraction of a second in append_time: 0 to 9
  bool color = false;  // LinePattern wraps {level} in ANSI colours
};
// "2026-11-29 14:03:07.123456789" (local time unless utc; `digits` long).
void append_time(std::string& out, std::int64_t unix_ns, const TimeStyle& style);
// RFC 3339 with nanoseconds and the zone offset.
void append_time_rfc3339(std::string& out, std::int64_t unix_ns, const TimeStyle& style);

const char* level_name(std::uint8_t level);
// The ANSI escape that starts a level's colour, or nullptr for none (info).
const char* level_color(std::uint8_t level);

namespace detail {
class TextOut;  // the rendering files' text writer
}  // namespace detail

// A `--format` pattern with {time} {level} {thread} {file} {line} {message};
// fmt specs such as {level:<8} apply.
class LinePattern {
 public:
  // Throws std::invalid_argument with a readable message for a bad pattern.
  explicit LinePattern(std::string pattern);
  void append(std::string& out, const Record& record, const TimeStyle& style) const;
  // The same with the message already rendered (by a caller that had to
  // look at it first, e.g. to match a regex).
  void append(std::string& out, const Record& record, const TimeStyle& style, std::string_view message) const;

 private:
  enum class Field : std::uint8_t { literal, time, level, thread, file, line, message, context };
  struct Piece {
    Field field;
    std::string text;  // the literal, or "{:SPEC}" for a field with a spec
  };

  void append_line(std::string& out, const Record& record, const TimeStyle& style,
                   const std::string_view* message) const;
  void append_message(detail::TextOut& line, const Piece& piece, const Record& record, const TimeStyle& style,
                      const std::string_view* message) const;

  std::vector<Piece> pieces_;
  // Without a {context} field the fields follow the message: " {request_id=42}".
  bool has_context_field_ = false;
};

inline constexpr const char* kDefaultPattern = "{time} {level} [{thread}] {file}:{line} {message}";
// What {level} is followed by for a record of the flight recorder, so that
// nobody takes it for the normal stream: "debug (flight)".
inline constexpr const char* kFlightMarker = " (flight)";

// The context fields that show, as `terse cat` prints them: "request_id=42 user=ann".
void append_context_text(std::string& out, std::span<const ContextField> context);
// ,"context":{...} when the record has context fields; nothing otherwise.
void append_json_context(std::string& out, std::span<const ContextField> context);

// One JSON object: time, level, thread, file, line, message, args. "args"
// is an array, or an object keyed by argument name (by position for an
// unnamed one) when the site names any; structured values are JSON
// structure (the mapping is documented in decoder/structured.cpp).
void append_json_record(std::string& out, const Record& record, const TimeStyle& style);
// Changes text on its way out (redaction, for one).
using TextRewrite = std::function<void(std::string& text)>;
// The same with the message already rendered (and rewritten) by the caller;
// string arguments, and the strings inside structured ones, go through
// `rewrite` first when it is set.
void append_json_record(std::string& out, const Record& record, const TimeStyle& style, std::string_view message,
                        const TextRewrite& rewrite);

}  // namespace terse::decoder
