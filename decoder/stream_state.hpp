// The decoding state of one stream (StreamDecoder::State), shared by the
// sequential decoder (decoder.cpp) and the parallel one (parallel.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <zstd.h>

#include <terse/decoder.hpp>
#include <terse/delta.hpp>
#include <terse/seal.hpp>
#include <terse/wire.hpp>

#include "frame_reader.hpp"
#include "tick_clock.hpp"

namespace terse::decoder {

// Bounds on what one file may declare, so hostile input cannot make the
// decoder allocate without limit.
inline constexpr std::size_t kMaxSitesPerStream = 1 << 20;
inline constexpr std::size_t kMaxThreadsPerStream = 1 << 20;
inline constexpr std::size_t kMaxTextField = 1 << 20;
inline constexpr std::size_t kMaxArgs = 255;
// FORMAT.md §6 kind 3: what one file's text entries may hold in all, and
// how many there may be (each costs a map node, however short).
inline constexpr std::size_t kMaxTextBytesPerFile = std::size_t{64} << 20;
inline constexpr std::size_t kMaxTextsPerFile = 1 << 20;

// Site and thread ids are small dense numbers in practice; below this bound
// they are found by index instead of by hashing on every record.
inline constexpr std::size_t kDirectIndex = 1 << 16;

using detail::Frame;
using detail::FrameReader;

// A sealed file's id (FORMAT.md §11.1) as the Summary gives it.
inline std::string to_hex(const void* bytes, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto* p = static_cast<const unsigned char*>(bytes);
  std::string hex;
  for (std::size_t i = 0; i < size; ++i) {
    hex += kDigits[p[i] >> 4];
    hex += kDigits[p[i] & 15];
  }
  return hex;
}

namespace detail {

// A records or flight frame that the reading thread of a ParallelDecoder
// hands to a worker: its payload, decompressed, and what of the stream's
// state carries into it from the frames before.
struct HandedFrame {
  std::uint64_t offset = 0;       // of the frame header
  std::uint64_t file_offset = 0;  // of the preamble of its file
  bool flight = false;
  bool columnar = false;  // FORMAT.md §7.4: the payload starts with a tick column
  std::string payload;
  // FORMAT.md §7.3: the contexts open where the frame starts, of the normal
  // stream and of the run of flight frames; both empty when the file
  // describes no context site.
  std::unordered_map<std::uint32_t, std::vector<ContextField>> contexts;
  std::unordered_map<std::uint32_t, std::vector<ContextField>> flight_contexts;
};

// Where the reading thread's State passes on, in stream order, the frames
// that change the state of every worker, and the records frames to decode.
class FrameHandoff {
 public:
  virtual void file_start() = 0;
  virtual void dictionary(std::string_view payload) = 0;   // a dictionary frame's payload, read (§6)
  virtual void calibration(std::string_view payload) = 0;  // a calibration frame's payload, read (§5)
  virtual void records(HandedFrame&& frame) = 0;

 protected:
  ~FrameHandoff() = default;
};

}  // namespace detail

struct StreamDecoder::State {
  // The one way a State is made, for a StreamDecoder and for each thread of
  // a ParallelDecoder: `source` names the stream in problems.
  State(std::string source_name, Reporter problem_reporter, Filter initial_filter = {})
      : source(std::move(source_name)), reporter(std::move(problem_reporter)), filter(std::move(initial_filter)) {}
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  // Reading starts again, from `fd` or else from `bytes` (neither: frames
  // are pushed, or, for a worker of parallel decoding, handed on).
  void read_from(int fd, std::string_view bytes) {
    summary = Summary{};
    in_records = false;
    reader = std::make_unique<FrameReader>(fd, bytes, source, reporter, summary);
  }

  std::string source;
  Reporter reporter;
  Filter filter;
  std::unordered_map<std::uint32_t, Site> sites;
  std::unordered_map<std::uint32_t, Thread> threads;
  std::vector<Site*> site_by_id;
  std::vector<Thread*> thread_by_index;
  std::unordered_set<std::uint32_t> unknown_sites_reported;
  // FORMAT.md §6 kind 3: the current file's text entries, by id. Strings of
  // records point into them, so an entry is never changed in place while a
  // record may still refer to it: only dictionary frames change them.
  std::unordered_map<std::uint32_t, std::string> texts;
  std::size_t text_bytes = 0;
  detail::TickClock clock;
  bool reported_missing_calibration = false;
  std::vector<Arg> arg_values;
  std::vector<std::string> marked_texts;  // cut strings with their mark, by argument
  std::string raw;                        // decompressed payload
  // FORMAT.md §11: the keys that open sealed files, and the current file's
  // seal: whether it has one, the file key when a key given opened it, and
  // whether its end frame came. `opened` holds a sealed frame's message.
  std::vector<seal::SecretKey> keys;
  std::vector<seal::PublicKeyBytes> signers;
  bool file_sealed = false;
  std::optional<seal::FileOpener> opener;
  bool file_ended = false;
  bool info_opened = false;         // the sealed file's info frame came
  Summary::SealedFile sealed_file;  // the current file's, once opened
  bool frames_in_file = false;      // a frame came after the preamble
  std::string opened;
  bool open_sealed(Frame& frame);
  void seal_frame(const Frame& frame);
  void check_signature(const Frame& frame, const seal::SealFrame& seal);
  void finish_file();
  void tampering(std::uint64_t offset, std::string what) {
    if (!quiet) reader->report_tampering(offset, std::move(what));
  }
  // Made at the first compressed payload: a worker of parallel decoding,
  // handed payloads already decompressed, never makes one.
  struct FreeDecompressor {
    void operator()(ZSTD_DCtx* dctx) const { ZSTD_freeDCtx(dctx); }
  };
  std::unique_ptr<ZSTD_DCtx, FreeDecompressor> decompressor;

  // The pull side: the frame reader and the records frame being walked.
  Summary summary;
  std::unique_ptr<FrameReader> reader;
  bool live = false;
  bool in_records = false;
  wire::ByteReader cursor{nullptr, 0};
  std::uint64_t cursor_ticks = 0;
  std::uint64_t cursor_frame = 0;
  bool cursor_flight = false;  // the frame is a flight frame (FORMAT.md §7.2)
  // FORMAT.md §7.4: the frame's ticks come from a column ahead of its rows.
  bool cursor_columnar = false;
  wire::ByteReader tick_cursor{nullptr, 0};
  // What a records payload holds: the frame type's two questions.
  struct Layout {
    bool flight = false;
    bool columnar = false;
  };
  std::uint32_t cursor_index = 0;
  std::uint64_t cursor_file_offset = 0;  // of the preamble of the frame's file

  // FORMAT.md §7.3: the contexts open on each thread (by index), of the
  // normal stream and of the current run of flight frames, which carries
  // its own.
  std::unordered_map<std::uint32_t, std::vector<ContextField>> contexts;
  std::unordered_map<std::uint32_t, std::vector<ContextField>> flight_contexts;
  bool last_records_flight = false;  // the records frame read last was a flight frame
  bool has_context_sites = false;    // the file describes one: frames before a resume point matter
  // Bounds against a hostile file: open contexts per thread, bytes per value.
  static constexpr std::size_t kMostContexts = 256;
  static constexpr std::size_t kMostContextBytes = 4096;

  std::vector<ContextField>& contexts_of(std::uint32_t thread, bool flight) {
    return (flight ? flight_contexts : contexts)[thread];
  }
  // A context push or pop, applied; false for any other control record.
  bool apply_context(std::uint32_t thread, std::string_view args, bool flight);
  // The pushes and pops of a records payload that is otherwise not read (before a resume point).
  void scan_contexts(std::string_view payload, Layout layout);
  bool context_matches(std::span<const ContextField> open) const;
  void begin_run(bool flight) {
    if (flight && !last_records_flight) flight_contexts.clear();
    last_records_flight = flight;
  }

  // resume_after(): where to continue, and whether that record was met yet.
  bool resuming = false;
  bool resume_failed = false;
  std::uint64_t resume_frame = 0;
  std::uint32_t resume_index = 0;
  std::uint64_t resume_ticks = 0;

  void fail_resume(std::uint64_t offset, std::string what) {
    resuming = false;
    resume_failed = true;
    in_records = false;
    if (reporter) reporter(Problem{source, offset, std::move(what), false, true});
  }

  // FORMAT.md §7.1: each site's previous argument values in the current
  // records frame.
  struct DeltaState {
    explicit DeltaState(const std::vector<std::uint8_t>& tags)
        : plan(tags.data(), tags.size()), previous(tags.size()) {}
    wire::DeltaPlan plan;
    std::vector<std::uint64_t> previous;
    std::uint64_t frame = 0;  // records_frames when `previous` was last valid
    bool broken = false;      // a record did not match: the rest of the frame is unusable
  };
  std::unordered_map<std::uint32_t, DeltaState> deltas;
  // The same states by site id below kDirectIndex: found without hashing on
  // every record (the map's nodes do not move).
  std::vector<DeltaState*> delta_by_id;
  std::uint64_t records_frames = 0;

  DeltaState& delta_state(const Site& site) {
    if (site.id < delta_by_id.size() && delta_by_id[site.id]) return *delta_by_id[site.id];
    DeltaState& d = deltas.try_emplace(site.id, site.tags).first->second;
    if (site.id < kDirectIndex) {
      if (delta_by_id.size() <= site.id) delta_by_id.resize(site.id + 1, nullptr);
      delta_by_id[site.id] = &d;
    }
    return d;
  }
  void forget_deltas(std::uint32_t id) {
    deltas.erase(id);
    if (id < delta_by_id.size()) delta_by_id[id] = nullptr;
  }

  // Recovers a record's argument values in place; false when the record
  // does not fit its site (reported once per site and frame).
  bool undo_deltas(const Site& site, std::string_view args) {
    DeltaState& d = delta_state(site);
    if (d.frame != records_frames) {
      std::fill(d.previous.begin(), d.previous.end(), 0);
      d.frame = records_frames;
      d.broken = false;
    }
    if (d.broken) return false;
    // `args` lies in `raw`, which this decoder owns (see next()).
    auto* bytes = reinterpret_cast<unsigned char*>(const_cast<char*>(args.data()));
    if (d.plan.valid() && d.plan.apply<wire::Delta::decode>(bytes, args.size(), d.previous.data())) return true;
    d.broken = true;
    damage(cursor_frame, "a record of call site " + std::to_string(site.id) +
                             " does not match the site's argument types; its later records in this frame are skipped");
    return false;
  }

  // FORMAT.md §3.1: the numbers of the current file's frames. The info
  // frame is 0; numbers skipped so far wait in `frame_gaps` (first number ->
  // last number and the offset of the frame that skipped them).
  std::uint64_t frame_high = 0;
  std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> frame_gaps;
  // Numbers a reader cannot see: frames lost to damage (reported as such)
  // and frames of types newer than this reader, since the last number.
  std::uint64_t losses_at_number = 0;
  std::uint64_t lost_payloads = 0;
  std::uint64_t unknown_frames = 0;

  bool frame_number_fits(const Frame& frame, std::uint64_t number);
  void report_missing_frames();

  void reset_file() {
    finish_file();
    report_missing_frames();
    if (reader) reader->set_sealed(false);
    file_sealed = false;
    opener.reset();
    file_ended = false;
    info_opened = false;
    sealed_file = {};
    frames_in_file = false;
    frame_high = 0;
    unknown_frames = 0;
    deltas.clear();
    delta_by_id.clear();
    sites.clear();
    threads.clear();
    site_by_id.clear();
    thread_by_index.clear();
    unknown_sites_reported.clear();
    texts.clear();
    text_bytes = 0;
    contexts.clear();  // a file repeats the contexts open where it starts
    flight_contexts.clear();
    last_records_flight = false;
    has_context_sites = false;
    clock.reset();
    reported_missing_calibration = false;
    in_records = false;
  }

  bool wants(const Site& site) const { return !filter.site || filter.site(site); }
  bool wants(const Thread& thread) const { return !filter.thread || filter.thread(thread); }

  Site* find_site(std::uint64_t id) {
    if (id < site_by_id.size()) return site_by_id[id];
    if (id < kDirectIndex) return nullptr;
    auto it = id <= UINT32_MAX ? sites.find(static_cast<std::uint32_t>(id)) : sites.end();
    return it == sites.end() ? nullptr : &it->second;
  }

  void index_site(Site& site) {
    if (site.id >= kDirectIndex) return;
    if (site_by_id.size() <= site.id) site_by_id.resize(site.id + 1, nullptr);
    site_by_id[site.id] = &site;
  }

  // A thread the dictionary never described is still shown, by its index.
  const Thread& thread_for(std::uint32_t index) {
    if (index < thread_by_index.size() && thread_by_index[index]) return *thread_by_index[index];
    static const Thread kUnknown{};
    if (threads.size() >= kMaxThreadsPerStream && !threads.count(index)) return kUnknown;
    auto [it, inserted] = threads.try_emplace(index);
    if (inserted) {
      it->second.index = index;
      it->second.selected = wants(it->second);
    }
    if (index < kDirectIndex) {
      if (thread_by_index.size() <= index) thread_by_index.resize(index + 1, nullptr);
      thread_by_index[index] = &it->second;
    }
    return it->second;
  }

  std::int64_t to_unix_ns(std::uint64_t ticks) const { return clock.to_unix_ns(ticks); }

  // A problem in what a frame holds.
  void damage(std::uint64_t offset, std::string what) {
    if (!quiet) reader->report_content(offset, std::move(what));
  }
  // A problem with the frames themselves: tampering in a sealed file read
  // with its key (FORMAT.md §11.5).
  void frame_damage(std::uint64_t offset, std::string what) {
    if (!quiet) reader->report(offset, std::move(what));
  }

  // Parallel decoding (parallel.cpp). The reading thread's State hands its
  // frames on instead of walking records frames itself; a worker's State is
  // a replica that reads the same dictionary and calibration frames, quiet
  // (the reading thread reports their problems), and walks the records
  // frames handed to it.
  detail::FrameHandoff* handoff = nullptr;
  bool quiet = false;
  // The site a problem being reported says has no dictionary entry (reported
  // once per file, which only the thread putting problems in order can tell).
  std::optional<std::uint32_t> reporting_site;
  void hand_on(std::uint64_t offset, std::string_view payload, Layout layout);
  void take_handed(detail::HandedFrame& frame);

  bool next(Record& record);
  bool payload_of(const Frame& frame, std::string_view& out);
  void begin_records(std::uint64_t offset, std::string_view payload, Layout layout);
  void info(std::string_view payload);
  void calibration(const Frame& frame, std::string_view payload);
  void dictionary(const Frame& frame, std::string_view payload);
  void site_entry(const Frame& frame, wire::ByteReader& body);
  void thread_entry(const Frame& frame, wire::ByteReader& body);
  void text_entry(const Frame& frame, wire::ByteReader& body);
  bool next_in_frame(Record& record);
  // One row of the current records frame (FORMAT.md §7, §7.4).
  struct Row {
    std::uint64_t site_id = 0;
    std::uint64_t thread_index = 0;
    std::uint32_t index = 0;  // in its frame
    std::string_view args;
  };
  bool read_row(Row& row);
  // The row's site, or the site a control row reports on; false for a row
  // that gives no record (a context push, an unknown or unusable site).
  bool site_of_row(Row& row, Site*& site, Site*& reported, std::uint64_t& suppressed);
  bool resume_passed(std::uint32_t index, bool& failed);
  bool read_control(std::string_view args, Record& record);
  bool reported_site(std::string_view args, Site*& site, std::uint64_t& count);
  void report_unknown_site(std::uint64_t site_id);
  bool read_args(std::string_view args, Site& site, std::uint64_t site_id, Record& record);
};

}  // namespace terse::decoder
