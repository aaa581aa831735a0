#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <new>
#include <optional>
#include <unordered_set>
#include <utility>

#include <zstd.h>

#include <terse/delta.hpp>
#include <terse/dictionary.hpp>
#include <terse/portable_libc.hpp>
#include <terse/schema.hpp>
#include <terse/wire.hpp>

#include "frame_reader.hpp"
#include "records.hpp"
#include "stream_state.hpp"
#include "structured.hpp"
#include "tick_clock.hpp"

namespace terse::decoder {

using detail::parse_args;
using detail::split_records;

StreamDecoder::StreamDecoder(std::string source, Reporter reporter)
    : state_(std::make_unique<State>(std::move(source), std::move(reporter))) {}

StreamDecoder::~StreamDecoder() = default;

namespace {

// FORMAT.md §3.1: a frame's number, where its payload carries one.
std::optional<std::uint64_t> frame_number_of(schema::FrameType type, std::string_view payload) {
  std::uint64_t number;
  switch (type) {
    case schema::FrameType::end: {
      wire::ByteReader r(payload);
      if (r.varint(number)) return number;
      return std::nullopt;
    }
    case schema::FrameType::calibration: {
      if (payload.size() <= schema::kCalibrationFrameNumberOffset) return std::nullopt;
      wire::ByteReader r(payload.substr(schema::kCalibrationFrameNumberOffset));
      if (r.varint(number)) return number;
      return std::nullopt;
    }
    case schema::FrameType::dictionary: {
      // Only as its first entry.
      std::optional<std::uint64_t> found;
      schema::for_each_entry(payload, [&](const schema::EntryView& entry) {
        wire::ByteReader b(entry.body);
        if (entry.kind == static_cast<std::uint8_t>(schema::DictKind::frame_number) && b.varint(number)) found = number;
        return false;
      });
      return found;
    }
    case schema::FrameType::records:
    case schema::FrameType::flight:
    case schema::FrameType::records_columnar:
    case schema::FrameType::flight_columnar: {
      wire::ByteReader r(payload);
      std::uint64_t site_id, thread_index, delta;
      std::string_view args, ticks;
      std::uint8_t kind;
      // FORMAT.md §7.4: the number's tick delta is in the column ahead of the rows.
      bool columnar = schema::is_columnar(type);
      if (!r.skip(8) || (columnar && !r.length_prefixed(ticks, payload.size())) || !r.varint(site_id) ||
          site_id != schema::kControlSiteId || !r.varint(thread_index) || (!columnar && !r.varint(delta)) ||
          !r.length_prefixed(args, payload.size()))
        return std::nullopt;
      wire::ByteReader a(args);
      if (!a.le(kind) || kind != static_cast<std::uint8_t>(schema::ControlKind::frame_number) || !a.varint(number))
        return std::nullopt;
      return number;
    }
    default:
      return std::nullopt;
  }
}

std::string frame_range(std::uint64_t first, std::uint64_t last) {
  return first == last ? "frame " + std::to_string(first) + " is"
                       : "frames " + std::to_string(first) + " to " + std::to_string(last) + " are";
}

}  // namespace

// False for a frame that repeats one already read: its records were given
// once and are not given again. A frame out of order is reported and read.
bool StreamDecoder::State::frame_number_fits(const Frame& frame, std::uint64_t number) {
  if (resuming) {  // the frames before the resume point were not all read
    frame_high = number;
    frame_gaps.clear();
    return true;
  }
  std::uint64_t losses = reader->losses() + lost_payloads;
  bool lost_since = std::exchange(losses_at_number, losses) != losses;
  std::uint64_t unknown = std::exchange(unknown_frames, 0);
  if (number > frame_high) {
    std::uint64_t skipped = number - frame_high - 1;
    if (skipped > unknown && !lost_since) frame_gaps.emplace(frame_high + 1, std::make_pair(number - 1, frame.offset));
    frame_high = number;
    return true;
  }
  auto gap = frame_gaps.upper_bound(number);
  if (gap == frame_gaps.begin() || (--gap)->second.first < number) {
    frame_damage(frame.offset, "frame " + std::to_string(number) + " repeats an earlier frame of the file; skipped");
    return false;
  }
  auto [first, rest] = *gap;
  frame_gaps.erase(gap);
  if (first < number) frame_gaps.emplace(first, std::make_pair(number - 1, rest.second));
  if (number < rest.first) frame_gaps.emplace(number + 1, rest);
  frame_damage(frame.offset, "frame " + std::to_string(number) + " is out of order: it comes after frame " +
                                 std::to_string(frame_high));
  return true;
}

void StreamDecoder::State::report_missing_frames() {
  for (const auto& [first, rest] : frame_gaps)
    frame_damage(rest.second, frame_range(first, rest.first) + " missing before the frame at this offset");
  frame_gaps.clear();
}

bool StreamDecoder::State::payload_of(const Frame& frame, std::string_view& out) {
  if ((frame.flags & schema::kFrameFlagZstd) == 0) {
    out = frame.payload;
    return true;
  }
  if (!decompressor) decompressor.reset(ZSTD_createDCtx());
  if (!decompressor) throw std::bad_alloc();
  raw.resize(frame.raw_size);
  std::size_t n =
      ZSTD_decompressDCtx(decompressor.get(), raw.data(), raw.size(), frame.payload.data(), frame.payload.size());
  if (ZSTD_isError(n) || n != frame.raw_size) {
    ++lost_payloads;
    damage(frame.offset, std::string("frame does not decompress: ") +
                             (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size differs from its header"));
    return false;
  }
  out = std::string_view(raw.data(), n);
  return true;
}

// FORMAT.md §11.1: the file is sealed; opened when a key given is its
// recipient's, else said once and its sealed frames passed over.
void StreamDecoder::State::seal_frame(const Frame& frame) {
  file_sealed = true;
  std::string why;
  if ((frame.flags & schema::kFrameFlagZstd) != 0 || (frame.flags & schema::kFrameFlagSealed) != 0) {
    why = "seal frame is compressed or sealed itself";
  } else if (auto seal = seal::parse_seal_frame(frame.payload); !seal) {
    why = seal.why();
  } else {
    std::string to = seal::fingerprint(seal->recipient);
    if (std::find(summary.sealed_to.begin(), summary.sealed_to.end(), to) == summary.sealed_to.end())
      summary.sealed_to.push_back(to);
    if (!seal::available()) {
      // Not damage: this build cannot open any sealed file (FORMAT.md §11).
      if (!quiet && reporter)
        reporter(Problem{source, frame.offset,
                         "file is sealed to key " + to +
                             ", and this terse was built without libsodium, so it cannot open it; its records are "
                             "not shown",
                         false});
      return;
    }
    auto opened_with = seal::FileOpener::open(*seal, keys);
    if (opened_with) {
      opener = std::move(*opened_with);
      reader->set_sealed(true);
      sealed_file.id = to_hex(seal->file_id.data(), seal->file_id.size());
      check_signature(frame, *seal);
      if (reader->version_major() != 0 && reader->version_major() < 3)
        tampering(frame.offset,
                  "a seal frame in a file of format " + std::to_string(reader->version_major()) + ".x, which has none");
      return;
    }
    why = opened_with.why();
    check_signature(frame, *seal);
    bool key_given = std::any_of(keys.begin(), keys.end(),
                                 [&](const seal::SecretKey& key) { return key.public_key.ed25519 == seal->recipient; });
    if (key_given) {
      // Its recipient's key is there and does not open it: the seal frame was changed.
      tampering(frame.offset, "file is " + why);
      return;
    }
    if (!keys.empty()) {
      // A key was given and it is not this file's: its contents cannot be
      // checked, which is worth a problem of its own.
      damage(frame.offset, "file is " + why);
      return;
    }
    if (!quiet && reporter)
      reporter(Problem{source, frame.offset, "file is " + why + "; its records are not shown", false});
    return;
  }
  damage(frame.offset, "file is sealed but its seal frame cannot be read (" + why + "); its records are not shown");
}

// FORMAT.md §11.1: who signed the seal, when it is signed, and whether it is
// one of the writers the reader asked for. Tampering once the file is open.
void StreamDecoder::State::check_signature(const Frame& frame, const seal::SealFrame& seal) {
  auto problem = [&](std::string what) {
    if (opener) {
      tampering(frame.offset, std::move(what));
    } else {
      frame_damage(frame.offset, std::move(what));
    }
  };
  if (seal.signed_by_writer && !seal.signature_valid) {
    problem("the seal frame's signature by " + seal::fingerprint(seal.signer) + " does not hold");
    return;
  }
  if (seal.signed_by_writer) {
    std::string by = seal::fingerprint(seal.signer);
    if (std::find(summary.signed_by.begin(), summary.signed_by.end(), by) == summary.signed_by.end())
      summary.signed_by.push_back(by);
  }
  if (signers.empty()) return;
  if (!seal.signed_by_writer) {
    problem("the file is not signed, and a writer's signature was asked for (--signer)");
  } else if (std::find(signers.begin(), signers.end(), seal.signer) == signers.end()) {
    problem("the file is signed by " + seal::fingerprint(seal.signer) + ", not by a writer asked for (--signer)");
  }
}

// A frame as its type would have stored it: opened when the file is sealed
// and its key given. False: passed over (no key), or tampering reported.
bool StreamDecoder::State::open_sealed(Frame& frame) {
  bool sealed = (frame.flags & schema::kFrameFlagSealed) != 0;
  if (file_ended && opener) {
    tampering(frame.offset, "a frame after the end frame of a sealed file; skipped");
    return false;
  }
  if (!file_sealed) {
    if (!sealed) return true;
    // Said once: every frame after is sealed too.
    file_sealed = true;
    damage(frame.offset, "sealed frames, but the file's seal frame is missing or damaged: they cannot be opened");
  }
  if (!opener) {
    ++summary.sealed_unopened;
    return false;
  }
  if (!sealed) {
    tampering(frame.offset, "a frame in the clear inside a sealed file; skipped");
    return false;
  }
  std::uint64_t counter = 0;
  if (!opener->open_frame(frame.header, frame.payload, opened, counter)) {
    ++lost_payloads;
    tampering(frame.offset, "frame fails authentication: it was changed after it was written; skipped");
    return false;
  }
  if ((frame.flags & schema::kFrameFlagZstd) == 0 && opened.size() != frame.raw_size) {
    ++lost_payloads;
    tampering(frame.offset, "sealed frame's size differs from its header; skipped");
    return false;
  }
  // The info frame carries no number (FORMAT.md §3.1); in a sealed file it
  // is the first frame sealed, so its counter places it (§11.3).
  bool info = frame.type == static_cast<std::uint8_t>(schema::FrameType::info);
  if (info && (counter != 0 || info_opened)) {
    tampering(frame.offset, "an info frame that is not the file's own, or repeated; skipped");
    return false;
  }
  if (!info && !info_opened) tampering(frame.offset, "the file's info frame is missing");
  info_opened = true;
  frame.payload = opened;
  frame.flags = static_cast<std::uint8_t>(frame.flags & ~schema::kFrameFlagSealed);
  return true;
}

// A sealed file read to its end with its key: without an end frame its
// writer did not close it (killed, crashed, or still writing) or its end
// was cut off; the file alone cannot tell which (README: sealed logs).
void StreamDecoder::State::finish_file() {
  if (!file_sealed || !opener || live || quiet || sealed_file.id.empty()) return;
  sealed_file.ended = file_ended;
  summary.sealed_files.push_back(std::exchange(sealed_file, {}));
  if (file_ended) return;
  file_ended = true;  // said once
  if (reporter)
    reporter(Problem{source, reader->position(),
                     "sealed file has no end frame: its writer did not close it (killed or crashed) or its end was "
                     "cut off",
                     true});
  summary.torn_tail = true;
}

bool StreamDecoder::State::next(Record& record) {
  if (!reader || resume_failed) return false;
  for (;;) {
    if (in_records) {
      if (next_in_frame(record)) return true;
      in_records = false;
      if (resume_failed) return false;
      if (resuming && cursor_frame == resume_frame) {
        fail_resume(resume_frame, "the resume position's frame has no record " + std::to_string(resume_index));
        return false;
      }
    }
    Frame frame;
    auto event = reader->next(frame);
    if (event == FrameReader::Event::end) {
      if (resuming && !live) fail_resume(resume_frame, "the stream ends before the resume position");
      if (!live) {
        finish_file();
        report_missing_frames();
      }
      return false;
    }
    if (event == FrameReader::Event::file_start) {
      reset_file();
      if (handoff) handoff->file_start();
      continue;
    }
    bool first_frame = !std::exchange(frames_in_file, true);
    if (first_frame && reader->version_major() == 3 &&
        frame.type != static_cast<std::uint8_t>(schema::FrameType::seal)) {
      // FORMAT.md §11: only a sealed file is 3.0.
      frame_damage(frame.offset, "a file of format 3.x that does not start with its seal frame");
    }
    if (frame.type == static_cast<std::uint8_t>(schema::FrameType::seal)) {
      if (first_frame) {
        seal_frame(frame);
      } else {
        frame_damage(frame.offset, "a seal frame inside the file, not at its start; skipped");
      }
      continue;
    }
    if (!open_sealed(frame)) continue;
    std::string_view payload;
    auto type = static_cast<schema::FrameType>(frame.type);
    auto read_numbered = [&] {
      if (!payload_of(frame, payload)) return false;
      std::optional<std::uint64_t> number = frame_number_of(type, payload);
      return !number || frame_number_fits(frame, *number);
    };
    switch (type) {
      case schema::FrameType::seal:
        break;  // taken above
      case schema::FrameType::end:
        if (read_numbered()) file_ended = true;
        break;
      case schema::FrameType::info:
        // Nothing in it changes how records decode; only the private-value
        // mode is kept, for what a reader may want to say about the file.
        if (payload_of(frame, payload)) info(payload);
        break;
      case schema::FrameType::calibration:
        if (read_numbered()) {
          calibration(frame, payload);
          if (handoff) handoff->calibration(payload);
        }
        break;
      case schema::FrameType::dictionary:
        if (read_numbered()) {
          dictionary(frame, payload);
          if (handoff) handoff->dictionary(payload);
        }
        break;
      case schema::FrameType::records:
      case schema::FrameType::flight:
      case schema::FrameType::records_columnar:
      case schema::FrameType::flight_columnar: {
        Layout layout{schema::holds_flight(type), schema::is_columnar(type)};
        if (resuming && frame.offset != resume_frame) {
          if (frame.offset < resume_frame) {
            // Before the resume point: not even decompressed, unless its
            // contexts are those of the records after it.
            if (has_context_sites && read_numbered()) scan_contexts(payload, layout);
            break;
          }
          fail_resume(resume_frame, "no records frame starts at the resume position");
          return false;
        }
        if (!read_numbered()) break;
        if (handoff) {
          hand_on(frame.offset, payload, layout);
          break;
        }
        begin_records(frame.offset, payload, layout);
        break;
      }
    }
    // Unknown frame types are skipped: newer writers may add them (FORMAT.md §10).
    if (frame.type > static_cast<std::uint8_t>(schema::FrameType::end)) ++unknown_frames;
  }
}

namespace {

const char* too_short(bool columnar) {
  return columnar ? "records frame is too short for its tick column" : "records frame is too short";
}

}  // namespace

// A records payload (FORMAT.md §7) whose records next() walks from now on.
void StreamDecoder::State::begin_records(std::uint64_t offset, std::string_view payload, Layout layout) {
  bool flight = layout.flight;
  if (payload.data() != raw.data()) raw.assign(payload);  // deltas are undone in place: own the bytes
  ++records_frames;
  cursor_columnar = layout.columnar;
  if (!split_records(raw, layout.columnar, cursor_ticks, tick_cursor, cursor)) {
    damage(offset, too_short(layout.columnar));
    return;
  }
  if (!clock.calibrated() && !reported_missing_calibration) {
    reported_missing_calibration = true;
    damage(offset, "records before any clock calibration; times are raw ticks");
  }
  cursor_frame = offset;
  cursor_file_offset = reader->file_offset();
  cursor_flight = flight;
  begin_run(flight);
  cursor_index = 0;
  in_records = true;
}

// The reading thread's half of begin_records(): what depends on the frames
// before is settled here, in stream order; the records are walked by the
// worker that take_handed() the frame.
void StreamDecoder::State::hand_on(std::uint64_t offset, std::string_view payload, Layout layout) {
  bool flight = layout.flight;
  ++records_frames;
  std::uint64_t base;
  wire::ByteReader ticks{nullptr, 0}, rows{nullptr, 0};
  if (!split_records(payload, layout.columnar, base, ticks, rows)) {
    damage(offset, too_short(layout.columnar));
    return;
  }
  if (!clock.calibrated() && !reported_missing_calibration) {
    reported_missing_calibration = true;
    damage(offset, "records before any clock calibration; times are raw ticks");
  }
  begin_run(flight);
  detail::HandedFrame handed;
  handed.offset = offset;
  handed.file_offset = reader->file_offset();
  handed.flight = flight;
  handed.columnar = layout.columnar;
  if (has_context_sites) {
    // The worker applies the frame's pushes and pops (and reports what is
    // wrong with them) itself; the reading thread only needs where they
    // leave the contexts for the frames after.
    handed.contexts = contexts;
    handed.flight_contexts = flight_contexts;
    quiet = true;
    scan_contexts(payload, layout);
    quiet = false;
  }
  handed.payload = payload.data() == raw.data() ? std::move(raw) : std::string(payload);
  handoff->records(std::move(handed));
}

void StreamDecoder::State::take_handed(detail::HandedFrame& frame) {
  raw = std::move(frame.payload);
  contexts = std::move(frame.contexts);
  flight_contexts = std::move(frame.flight_contexts);
  ++records_frames;
  cursor_columnar = frame.columnar;
  split_records(raw, frame.columnar, cursor_ticks, tick_cursor, cursor);  // the reading thread checked it
  cursor_frame = frame.offset;
  cursor_file_offset = frame.file_offset;
  cursor_flight = frame.flight;
  last_records_flight = frame.flight;
  cursor_index = 0;
  in_records = true;
}

// A control record's arguments (FORMAT.md §7): true when `record` now holds
// a drop report; kinds newer than this reader are passed over.
bool StreamDecoder::State::read_control(std::string_view args, Record& record) {
  wire::ByteReader a(args);
  std::uint8_t kind;
  std::uint64_t count, first, last;
  if (!a.le(kind)) return false;
  if (kind == static_cast<std::uint8_t>(schema::ControlKind::suppressed)) {
    // The site was looked up (and its selection applied) before.
    record.kind = RecordKind::suppressed;
    record.args = {};
    record.dropped_count = 0;
    return true;
  }
  if (kind != static_cast<std::uint8_t>(schema::ControlKind::dropped)) return false;
  if (!a.le(count) || !a.le(first) || !a.le(last)) {
    damage(cursor_frame, "drop record is malformed");
    return false;
  }
  record.kind = RecordKind::dropped;
  record.site = nullptr;
  record.suppressed = 0;
  record.args = {};
  record.dropped_count = count;
  record.dropped_first_ns = to_unix_ns(first);
  record.dropped_last_ns = to_unix_ns(last);
  return true;
}

void StreamDecoder::State::report_unknown_site(std::uint64_t site_id) {
  if (quiet) return;
  if (unknown_sites_reported.size() < 1024 &&
      unknown_sites_reported.insert(static_cast<std::uint32_t>(site_id)).second) {
    reporting_site = static_cast<std::uint32_t>(site_id);
    damage(cursor_frame,
           "records of call site " + std::to_string(site_id) + " cannot be decoded: its dictionary entry is missing");
    reporting_site.reset();
  }
}

// FORMAT.md §7 kind 3: the site a suppressed-calls report names, and its
// count; `site` stays null for every other control kind. False (reported
// where it is damage) when the record is to be passed over.
bool StreamDecoder::State::reported_site(std::string_view args, Site*& site, std::uint64_t& count) {
  wire::ByteReader a(args);
  std::uint8_t kind;
  if (!a.le(kind) || kind != static_cast<std::uint8_t>(schema::ControlKind::suppressed)) return true;
  std::uint64_t id;
  if (!a.varint(id) || !a.varint(count)) {
    damage(cursor_frame, "suppressed-calls record is malformed");
    return false;
  }
  site = find_site(id);
  if (site == nullptr) {
    report_unknown_site(id);
    return false;
  }
  return site->usable;
}

// A log record's arguments, by its site's types; false (reported) when they
// do not fit them.
bool StreamDecoder::State::read_args(std::string_view args, Site& site, std::uint64_t site_id, Record& record) {
  wire::ByteReader a(args);
  if (Result<> parsed = parse_args(a, site, texts, arg_values, marked_texts); !parsed) {
    damage(cursor_frame, "a record of call site " + std::to_string(site_id) + " " + parsed.why());
    return false;
  }
  record.site = &site;
  record.dropped_count = 0;
  record.args = arg_values;
  return true;
}

// False, having reported the rest of the frame as damaged, when the row is
// garbled or the tick column ends before it.
[[gnu::always_inline]] inline bool StreamDecoder::State::read_row(Row& row) {
  wire::ByteReader& r = cursor;
  std::uint64_t delta = 0, args_size;
  if (!r.varint(row.site_id) || !r.varint(row.thread_index) || (!cursor_columnar && !r.varint(delta)) ||
      !r.varint(args_size) || !r.bytes(args_size, row.args) || row.thread_index > UINT32_MAX) {
    damage(cursor_frame,
           "records frame is garbled at record " + std::to_string(cursor_index) + "; the rest of the frame is skipped");
    return false;
  }
  // FORMAT.md §7.4: one tick delta per row; the rows it has none for are lost.
  if (cursor_columnar && !tick_cursor.varint(delta)) {
    damage(cursor_frame, "records frame's tick column ends before record " + std::to_string(cursor_index) +
                             " (or is garbled there); the rest of the frame is skipped");
    return false;
  }
  row.index = cursor_index++;
  cursor_ticks += static_cast<std::uint64_t>(wire::unzigzag(delta));
  return true;
}

[[gnu::always_inline]] inline bool StreamDecoder::State::site_of_row(Row& row, Site*& site, Site*& reported,
                                                                     std::uint64_t& suppressed) {
  if (row.site_id == schema::kControlSiteId) {
    if (apply_context(static_cast<std::uint32_t>(row.thread_index), row.args, cursor_flight)) return false;
    if (!reported_site(row.args, reported, suppressed)) return false;
  } else {
    site = find_site(row.site_id);
    if (site == nullptr) {
      report_unknown_site(row.site_id);
      return false;
    }
  }
  // Its dictionary entry was reported as unusable; nothing of it can render.
  if (site != nullptr && !site->usable) return false;
  if (site != nullptr && site->limited) {
    wire::ByteReader count(row.args);
    if (!count.varint(suppressed)) {
      damage(cursor_frame, "a record of call site " + std::to_string(row.site_id) + " lacks its suppressed count");
      return false;
    }
    row.args.remove_prefix(row.args.size() - count.remaining());
  }
  // Every record of a selected site, printed or not, carries the delta
  // chain forward (FORMAT.md §7.1); a site nobody wants needs none.
  return site == nullptr || !site->selected || undo_deltas(*site, row.args);
}

// While resuming: true once the row is past the resume position; `failed`
// when the row at that position is not the one expected.
bool StreamDecoder::State::resume_passed(std::uint32_t index, bool& failed) {
  if (cursor_frame != resume_frame || index > resume_index) return true;
  if (index < resume_index) return false;
  if (cursor_ticks != resume_ticks) {
    fail_resume(cursor_frame, "the record at the resume position has another time stamp than expected");
    failed = true;
    return false;
  }
  resuming = false;
  return false;
}

// The next record of the current records frame that passes the filter.
bool StreamDecoder::State::next_in_frame(Record& record) {
  Row row;
  while (!cursor.empty()) {
    if (!read_row(row)) return false;
    std::uint64_t site_id = row.site_id, thread_index = row.thread_index;
    std::uint32_t index = row.index;
    const Thread& thread = thread_for(static_cast<std::uint32_t>(thread_index));
    Site* site = nullptr;
    // A control record that names a site (FORMAT.md §7 kind 3) is filtered as that site's.
    Site* reported = nullptr;
    std::uint64_t suppressed = 0;
    if (!site_of_row(row, site, reported, suppressed)) continue;
    std::string_view args = row.args;
    if (resuming) {
      bool failed = false;
      bool passed = resume_passed(index, failed);
      if (failed) return false;
      if (!passed) continue;
    }
    // Decided before anything else of the record is read.
    bool wanted = thread.selected && (site ? site->selected : reported ? reported->selected : filter.dropped);
    std::int64_t unix_ns = 0;
    if (wanted) {
      unix_ns = to_unix_ns(cursor_ticks);
      wanted = unix_ns >= filter.since_ns && unix_ns <= filter.until_ns;
    }
    if (!wanted) {
      ++summary.records;
      ++summary.skipped;
      continue;
    }
    record.kind = RecordKind::log;
    record.ticks = cursor_ticks;
    record.unix_ns = unix_ns;
    record.thread = &thread;
    record.frame_offset = cursor_frame;
    record.frame_index = index;
    record.file_offset = cursor_file_offset;
    // Its site's records name none: a context site is no call site.
    if (site != nullptr && site->context) continue;
    record.context = {};
    if (site != nullptr) {
      auto open = (cursor_flight ? flight_contexts : contexts).find(static_cast<std::uint32_t>(thread_index));
      if (open != (cursor_flight ? flight_contexts : contexts).end()) record.context = open->second;
    }
    if (!filter.context.empty() && !context_matches(record.context)) {
      ++summary.records;
      ++summary.skipped;
      continue;
    }
    if (!(site == nullptr ? read_control(args, record) : read_args(args, *site, site_id, record))) continue;
    if (reported != nullptr) record.site = reported;
    record.suppressed = suppressed;
    record.flight = cursor_flight;
    ++summary.records;
    return true;
  }
  if (cursor_columnar && !tick_cursor.empty()) {
    damage(cursor_frame,
           "records frame's tick column holds more ticks than its " + std::to_string(cursor_index) + " records");
    tick_cursor = wire::ByteReader(nullptr, 0);
  }
  return false;
}

namespace {
void add_unseen(std::vector<std::string>& to, const std::vector<std::string>& from) {
  for (const auto& item : from)
    if (std::find(to.begin(), to.end(), item) == to.end()) to.push_back(item);
}
}  // namespace

void Summary::add(const Summary& other) {
  frames += other.frames;
  records += other.records;
  damaged += other.damaged;
  skipped += other.skipped;
  stored_bytes += other.stored_bytes;
  raw_bytes += other.raw_bytes;
  torn_tail = torn_tail || other.torn_tail;
  add_unseen(private_values, other.private_values);
  tampered += other.tampered;
  sealed_unopened += other.sealed_unopened;
  add_unseen(sealed_to, other.sealed_to);
  add_unseen(signed_by, other.signed_by);
  sealed_files.insert(sealed_files.end(), other.sealed_files.begin(), other.sealed_files.end());
}

void StreamDecoder::set_keys(std::vector<seal::SecretKey> keys) { state_->keys = std::move(keys); }

void StreamDecoder::set_signers(std::vector<seal::PublicKeyBytes> signers) { state_->signers = std::move(signers); }

void StreamDecoder::set_filter(Filter filter) {
  State& s = *state_;
  s.filter = std::move(filter);
  for (auto& [id, site] : s.sites) site.selected = s.wants(site);
  for (auto& [index, thread] : s.threads) thread.selected = s.wants(thread);
}

void StreamDecoder::start_fd(int fd) {
  state_->read_from(fd, {});
  state_->reader->set_live(state_->live);
}

void StreamDecoder::start_bytes(std::string_view bytes) { state_->read_from(-1, bytes); }

void StreamDecoder::start_feed() {
  start_bytes({});
  state_->reset_file();
}

void StreamDecoder::feed_calibration(std::uint64_t ticks, std::int64_t unix_ns, double ticks_per_second) {
  state_->clock.add(ticks, unix_ns, ticks_per_second);
}

void StreamDecoder::feed_dictionary(std::string_view entries) {
  State& s = *state_;
  s.dictionary(Frame{}, entries);
}

void StreamDecoder::feed_records(std::string_view payload, bool flight) {
  State& s = *state_;
  s.in_records = false;
  if (payload.empty()) return;
  s.begin_records(s.records_frames, payload, State::Layout{flight, false});
}

bool StreamDecoder::next(Record& record) { return state_->next(record); }

void StreamDecoder::resume_after(std::uint64_t frame_offset, std::uint32_t frame_index, std::uint64_t ticks) {
  State& s = *state_;
  s.resuming = true;
  s.resume_failed = false;
  s.resume_frame = frame_offset;
  s.resume_index = frame_index;
  s.resume_ticks = ticks;
}

void StreamDecoder::set_live(bool live) {
  state_->live = live;
  if (state_->reader) state_->reader->set_live(live);
}

const Summary& StreamDecoder::summary() const { return state_->summary; }

std::uint64_t StreamDecoder::position() const { return state_->reader ? state_->reader->position() : 0; }

Summary StreamDecoder::decode_fd(int fd, const RecordSink& sink) {
  start_fd(fd);
  Record record;
  while (next(record)) sink(record);
  state_->reader.reset();
  return state_->summary;
}

Summary StreamDecoder::decode_bytes(std::string_view bytes, const RecordSink& sink) {
  start_bytes(bytes);
  Record record;
  while (next(record)) sink(record);
  state_->reader.reset();
  return state_->summary;
}

Summary decode_file(const std::string& path, const RecordSink& sink, const Reporter& reporter) {
  int fd = open_path(path.c_str(), O_RDONLY);
  if (fd < 0) {
    Summary summary;
    summary.damaged = 1;
    if (reporter) reporter(Problem{path, 0, std::string("cannot open: ") + std::strerror(errno)});
    return summary;
  }
  StreamDecoder decoder(path, reporter);
  Summary summary = decoder.decode_fd(fd, sink);
  ::close(fd);
  return summary;
}

}  // namespace terse::decoder
