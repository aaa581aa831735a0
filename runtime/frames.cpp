#include "frames.hpp"

#include <unistd.h>

#include <cstring>
#include <random>

#include <zstd.h>

#include <terse/crc.hpp>
#include <terse/dictionary.hpp>
#include <terse/frame.hpp>
#include <terse/terse.hpp>
#include <terse/wire.hpp>

#include "pipeline.hpp"
#include "platform.hpp"
#include "registry.hpp"

namespace terse::detail {
namespace {

constexpr const char* kWriterName = "terse " TERSE_VERSION_STRING;

// Dictionary frames stay far below the reader's frame limit however many
// sites a process has: entries are split across frames at entry boundaries.
constexpr std::size_t kDictionaryFrameBytes = 1 << 20;

// Only worth compressing from this size on.
constexpr std::size_t kMinCompressedPayload = 64;
// Frames from this size on are timed (take_compression_cost).
constexpr std::size_t kTimedPayload = 64 << 10;
constexpr int kFastLevelsHashLog = 12;

// Rows are a few bytes here and there, moved with wire::copy_short.
char* copy_bytes(char* out, const unsigned char* from, const unsigned char* to) {
  auto n = static_cast<std::size_t>(to - from);
  wire::copy_short(out, from, n);
  return out + n;
}

// A row's pieces are moved 16 bytes at a time, whatever their length: the
// bytes moved past a piece's end are overwritten by the next piece, and
// the buffers have kRowSlack bytes to spare behind their last. Branching on
// each piece's length (a row is three pieces of 1 to 30 bytes) cost more
// than the moves.
constexpr std::size_t kRowSlack = 64;
// A frame number's row: site id and thread index (a byte each), the
// arguments' length, their kind and the number.
constexpr std::size_t kNumberRowBytes = 1 + 1 + 1 + 1 + 10;
// A records frame's head but its ticks: base, the ticks column's length,
// the frame number's delta and row.
constexpr std::size_t kHeadBytes = 8 + 10 + 1 + kNumberRowBytes;
char* move_row_piece(char* out, const unsigned char* from, const unsigned char* to) {
  auto n = static_cast<std::size_t>(to - from);
  if (n > 64) {
    std::memcpy(out, from, n);
  } else {
    for (std::size_t i = 0; i < n; i += 16) std::memcpy(out + i, from + i, 16);
  }
  return out + n;
}

// Past a varint at `p`, which has 10 bytes readable; nullptr when it runs
// longer than a varint may.
const unsigned char* skip_varint(const unsigned char* p) {
  for (int i = 0; i < 10; ++i) {
    if ((p[i] & 0x80) == 0) return p + i + 1;
  }
  return nullptr;
}

void put_entry(std::string& out, std::uint8_t kind, const std::string& body) {
  out.push_back(static_cast<char>(kind));
  wire::put_varint(out, body.size());
  out.append(body);
}

// FORMAT.md §4 info key 8: how private values are stored as the file opens.
std::string private_values_word() {
  switch (static_cast<schema::PrivateMode>(g_hot.private_mode.load(std::memory_order_relaxed))) {
    case schema::PrivateMode::hashed:
      return "hash";
    case schema::PrivateMode::clear:
      return "clear";
    default:
      return "omit";
  }
}

std::string varint_text(std::uint64_t v) {
  std::string s;
  wire::put_varint(s, v);
  return s;
}

// Random, so that runs never share one: pids repeat across containers and
// restarts. Without a random source, time and pid still tell runs apart.
std::uint64_t new_run_id() {
  std::uint64_t id = static_cast<std::uint64_t>(realtime_ns()) ^ (static_cast<std::uint64_t>(::getpid()) << 40);
  try {
    std::random_device random;
    id ^= static_cast<std::uint64_t>(random()) << 32 | random();
  } catch (...) {
  }
  return id;
}

std::string info_payload(std::uint32_t sequence, std::uint64_t run_id, std::string_view previous_file) {
  std::string info;
  auto put_info = [&](schema::InfoKey key, const std::string& value) {
    put_entry(info, static_cast<std::uint8_t>(key), value);
  };
  put_info(schema::InfoKey::writer, kWriterName);
  put_info(schema::InfoKey::pid, varint_text(static_cast<std::uint64_t>(::getpid())));
  put_info(schema::InfoKey::host, host_name());
  put_info(schema::InfoKey::program, program_name());
  put_info(schema::InfoKey::file_sequence, varint_text(sequence));
  put_info(schema::InfoKey::clock, TERSE_CLOCK_TSC ? "tsc" : TERSE_CLOCK_CNTVCT ? "cntvct" : "monotonic");
  put_info(schema::InfoKey::created_unix_ns, varint_text(static_cast<std::uint64_t>(realtime_ns())));
  put_info(schema::InfoKey::private_values, private_values_word());
  std::string run_id_bytes;
  wire::put_le<std::uint64_t>(run_id_bytes, run_id);
  put_info(schema::InfoKey::run_id, run_id_bytes);
  if (!previous_file.empty()) put_info(schema::InfoKey::previous_file, std::string(previous_file));
  return info;
}

}  // namespace

FrameEncoder::FrameEncoder() : cctx_(ZSTD_createCCtx()), run_id_(new_run_id()) {
  if (cctx_ == nullptr) throw Error("terse: cannot create a zstd compression context");
}

FrameEncoder::~FrameEncoder() { ZSTD_freeCCtx(cctx_); }

void FrameEncoder::prepare(std::size_t bytes) {
  prefault(scratch_, ZSTD_compressBound(bytes));
  prefault(numbered_, bytes + 64);
  prefault(columnar_, bytes + bytes / 8);
  prefault(ticks_, bytes / 8);
}

bool FrameEncoder::release_memory(std::size_t bytes) {
  // zstd's output grows with every large frame; the columnar copy only with
  // rows that had no room before them (RecordsJoin's have it).
  if (std::max(columnar_.capacity(), scratch_.capacity()) <= 2 * (bytes + bytes / 8)) return false;
  for (std::string* buffer : {&scratch_, &numbered_, &columnar_, &ticks_}) std::string().swap(*buffer);
  prepare(bytes);
  return true;
}

// The payload with the frame's number where its type carries one (FORMAT.md
// §3.1): appended to a calibration, a first entry of a dictionary, a first
// control record of a records frame. An info frame is number 0 unwritten.
std::string_view FrameEncoder::numbered(schema::FrameType type, std::string_view payload) {
  std::uint64_t number = next_number_++;
  numbered_.clear();
  switch (type) {
    case schema::FrameType::calibration:
    case schema::FrameType::end:
      numbered_.append(payload);
      wire::put_varint(numbered_, number);
      return numbered_;
    case schema::FrameType::dictionary:
      put_entry(numbered_, static_cast<std::uint8_t>(schema::DictKind::frame_number), varint_text(number));
      numbered_.append(payload);
      return numbered_;
    case schema::FrameType::records:
    case schema::FrameType::flight: {
      if (payload.size() < 8) return payload;
      std::string args(1, static_cast<char>(schema::ControlKind::frame_number));
      wire::put_varint(args, number);
      numbered_.append(payload.substr(0, 8));
      wire::put_varint(numbered_, schema::kControlSiteId);
      wire::put_varint(numbered_, 0);  // thread index: the writer's
      wire::put_varint(numbered_, 0);  // tick delta: at the frame's base
      wire::put_bytes(numbered_, args);
      numbered_.append(payload.substr(8));
      return numbered_;
    }
    default:
      return payload;
  }
}

void FrameEncoder::append_frame(std::string& out, schema::FrameType type, std::string_view unnumbered, int level) {
  append_stored(out, type, numbered(type, unnumbered), level);
}

void FrameEncoder::append_records(std::string& out, schema::FrameType type, std::string_view rows, int level) {
  wire::ByteReader r(rows);
  std::uint64_t base;
  if (!r.le(base)) return append_frame(out, type, rows, level);
  // The rows' bytes are moved, not decoded and encoded again: each row's
  // time delta (zigzagged already) goes to the ticks column as it is, the
  // rest of the row to the rows. Re-encoding them, a byte at a time into
  // growing strings, was a quarter of the IO threads' time. The rows go
  // straight to their place in the payload, behind room for the frame's
  // head, sized after the last frame's; copying the payload together
  // afterwards was a quarter of the writer's time with 4 KiB texts. The
  // strings only grow, so that no batch pays for zeroing them.
  std::size_t rows_at = kHeadBytes + static_cast<std::size_t>(static_cast<double>(r.remaining()) * ticks_share_);
  std::size_t needed = rows_at + r.remaining() + kRowSlack;
  if (columnar_.size() < needed) columnar_.resize(needed);
  if (ticks_.size() < r.remaining() + kRowSlack) ticks_.resize(r.remaining() + kRowSlack);
  char* ticks_out = ticks_.data();
  char* rows_out = columnar_.data() + rows_at;
  const unsigned char* p = r.position();
  const unsigned char* end = p + r.remaining();
  // Rows that end kRowSlack bytes or more before the payload's end are read
  // without a bound check per byte: their four varints fit in that slack.
  while (p != end) {
    const unsigned char* row = p;
    const unsigned char* delta_at;
    const unsigned char* args_at;
    const unsigned char* row_end;
    if (end - p >= static_cast<std::ptrdiff_t>(kRowSlack)) {
      const unsigned char* thread_at = skip_varint(row);
      delta_at = thread_at != nullptr ? skip_varint(thread_at) : nullptr;
      args_at = delta_at != nullptr ? skip_varint(delta_at) : nullptr;
      if (args_at == nullptr) return append_frame(out, type, rows, level);
      wire::ByteReader length(args_at, 10);
      std::uint64_t args_size;
      if (!length.varint(args_size) || args_size > static_cast<std::uint64_t>(end - length.position()))
        return append_frame(out, type, rows, level);
      row_end = length.position() + args_size;
    } else {
      wire::ByteReader tail(p, static_cast<std::size_t>(end - p));
      std::uint64_t site_id, thread_index, delta;
      std::string_view row_args;
      if (!tail.varint(site_id) || !tail.varint(thread_index)) return append_frame(out, type, rows, level);
      delta_at = tail.position();
      if (!tail.varint(delta)) return append_frame(out, type, rows, level);
      args_at = tail.position();
      if (!tail.length_prefixed(row_args, tail.remaining())) return append_frame(out, type, rows, level);
      row_end = tail.position();
    }
    // Reading 16 bytes at a time may pass the payload's end only in its
    // last kRowSlack bytes, which copy_bytes moves exactly.
    if (end - row_end >= 16) {
      rows_out = move_row_piece(rows_out, row, delta_at);
      ticks_out = move_row_piece(ticks_out, delta_at, args_at);
      rows_out = move_row_piece(rows_out, args_at, row_end);
    } else {
      rows_out = copy_bytes(rows_out, row, delta_at);
      ticks_out = copy_bytes(ticks_out, delta_at, args_at);
      rows_out = copy_bytes(rows_out, args_at, row_end);
    }
    p = row_end;
  }
  auto ticks_size = static_cast<std::size_t>(ticks_out - ticks_.data());
  auto rows_size = static_cast<std::size_t>(rows_out - (columnar_.data() + rows_at));
  ticks_share_ = static_cast<double>(ticks_size) / static_cast<double>(rows.size()) * 1.25;
  if (kHeadBytes + ticks_size > rows_at) {  // more ticks than the room left for them: the rows move up
    std::size_t moved_to = kHeadBytes + ticks_size;
    if (columnar_.size() < moved_to + rows_size) columnar_.resize(moved_to + rows_size);
    std::memmove(columnar_.data() + moved_to, columnar_.data() + rows_at, rows_size);
    rows_at = moved_to;
  }
  append_columns(out, type, base, std::string_view(ticks_.data(), ticks_size), columnar_.data() + rows_at, rows_size,
                 rows_at, level);
}

void FrameEncoder::append_columns(std::string& out, schema::FrameType type, std::uint64_t base, std::string_view ticks,
                                  char* rows, std::size_t rows_size, std::size_t room, int level) {
  auto columnar =
      type == schema::FrameType::flight ? schema::FrameType::flight_columnar : schema::FrameType::records_columnar;
  // FORMAT.md §3.1: the frame number is the first row, at the frame's base.
  char number_row[kNumberRowBytes];
  char* number_end = wire::write_varint(number_row, schema::kControlSiteId);
  number_end = wire::write_varint(number_end, 0);  // thread index: the writer's
  char number_args[1 + 10];
  number_args[0] = static_cast<char>(schema::ControlKind::frame_number);
  auto number_args_size = static_cast<std::size_t>(wire::write_varint(number_args + 1, next_number_) - number_args);
  number_end = wire::write_varint(number_end, number_args_size);
  std::memcpy(number_end, number_args, number_args_size);
  number_end += number_args_size;
  auto number_size = static_cast<std::size_t>(number_end - number_row);
  char length[10];
  std::size_t ticks_column = 1 + ticks.size();  // the frame number's delta, 0, first
  auto length_size = static_cast<std::size_t>(wire::write_varint(length, ticks_column) - length);
  std::size_t head_size = 8 + length_size + ticks_column + number_size;
  if (head_size > room) {
    // Only rows that are not a batch's: a joined or interned payload.
    if (columnar_.size() < head_size + rows_size) columnar_.resize(head_size + rows_size);
    std::memmove(columnar_.data() + head_size, rows, rows_size);
    rows = columnar_.data() + head_size;
  }
  char* head = rows - head_size;
  std::memcpy(head, &base, 8);  // little-endian, as wire.hpp requires
  head += 8;
  std::memcpy(head, length, length_size);
  head += length_size;
  *head++ = 0;
  std::memcpy(head, ticks.data(), ticks.size());
  head += ticks.size();
  std::memcpy(head, number_row, number_size);
  ++next_number_;
  append_stored(out, columnar, std::string_view(rows - head_size, head_size + rows_size), level);
}

void FrameEncoder::use_level(int level) {
  if (level == cctx_level_) return;
  ZSTD_CCtx_reset(cctx_, ZSTD_reset_parameters);
  ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level);
  // zstd's fast levels (1 and the negative ones) hash 2^14 positions for a
  // payload over 256 KiB, a table larger than the L1 cache. 2^12 compressed
  // batches of short records 16 % faster to the same size, and of 4 KiB
  // JSON texts 7 % faster for 0.5 % more bytes.
  if (level <= 1) ZSTD_CCtx_setParameter(cctx_, ZSTD_c_hashLog, kFastLevelsHashLog);
  cctx_level_ = level;
}

void FrameEncoder::append_stored(std::string& out, schema::FrameType type, std::string_view payload, int level) {
  schema::FrameHeader header;
  header.type = static_cast<std::uint8_t>(type);
  std::string_view stored = payload;
  if (level != 0 && payload.size() >= kMinCompressedPayload) {
    scratch_.resize(ZSTD_compressBound(payload.size()));
    // Two clock reads a frame are nothing beside compressing 64 KiB.
    bool timed = payload.size() >= kTimedPayload;
    std::int64_t started = timed ? own_thread_cpu_ns() : 0;
    use_level(level);
    std::size_t n = ZSTD_compress2(cctx_, scratch_.data(), scratch_.size(), payload.data(), payload.size());
    if (timed) {
      cost_.cpu_ns += own_thread_cpu_ns() - started;
      cost_.bytes += payload.size();
    }
    if (!ZSTD_isError(n) && n < payload.size()) {
      stored = std::string_view(scratch_.data(), n);
      header.flags |= schema::kFrameFlagZstd;
    }
  }
  if (sealer_.ready()) {
    std::size_t at = out.size();
    out.resize(at + schema::kFrameHeaderSize + seal::kOverheadBytes + stored.size());
    sealer_.seal_frame(reinterpret_cast<unsigned char*>(out.data() + at), header.type, header.flags,
                       static_cast<std::uint32_t>(payload.size()),
                       reinterpret_cast<const unsigned char*>(stored.data()), stored.size(), seal_counter_++);
    return;
  }
  header.stored_size = static_cast<std::uint32_t>(stored.size());
  header.raw_size = static_cast<std::uint32_t>(payload.size());
  header.payload_crc = wire::crc32c(stored.data(), stored.size());
  unsigned char bytes[schema::kFrameHeaderSize];
  schema::encode_frame_header(header, bytes);
  out.append(reinterpret_cast<const char*>(bytes), sizeof bytes);
  out.append(stored);
}

void FrameEncoder::append_dictionary(std::string& out, std::string_view entries, int level) {
  while (!entries.empty()) {
    std::size_t cut = 0;
    schema::for_each_entry(entries, [&](const schema::EntryView& entry) {
      if (cut != 0 && entry.end > kDictionaryFrameBytes) return false;
      cut = entry.end;
      return true;
    });
    if (cut == 0) cut = entries.size();
    append_frame(out, schema::FrameType::dictionary, entries.substr(0, cut), level);
    entries.remove_prefix(cut);
  }
}

void FrameEncoder::append_calibration(std::string& out, const Calibration& c) {
  std::string payload;
  wire::put_le<std::uint64_t>(payload, c.ticks);
  wire::put_le<std::int64_t>(payload, c.unix_ns);
  wire::put_le<double>(payload, c.ticks_per_second);
  append_frame(out, schema::FrameType::calibration, payload, 0);
}

void FrameEncoder::append_file_start(std::string& out, std::uint32_t sequence, const Calibration& calibration) {
  sealer_ = seal::FileSealer();
  schema::Preamble version;
  if (recipient_ != nullptr) version.version_major = schema::kVersionMajor;
  unsigned char preamble[schema::kPreambleSize];
  schema::encode_preamble(version, preamble);
  out.append(reinterpret_cast<const char*>(preamble), sizeof preamble);
  next_number_ = 0;
  if (recipient_ != nullptr) {
    auto sealer = seal::FileSealer::create(*recipient_, run_id_, signer_);
    if (!sealer) throw Error("terse: cannot seal a new file: " + sealer.why());
    append_stored(out, schema::FrameType::seal, sealer->seal_payload(), 0);  // the one frame in the clear
    sealer_ = *sealer;
    seal_counter_ = 0;
  }
  // FORMAT.md §11.4: a sealed file names the file its writer closed before
  // it, so that a reader finds that file's end cut off, or the file gone.
  std::string previous;
  if (sealer_.ready() && ended_file_)
    previous.assign(reinterpret_cast<const char*>(ended_file_->data()), ended_file_->size());
  ended_file_.reset();
  append_frame(out, schema::FrameType::info, info_payload(sequence, run_id_, previous), 0);
  append_calibration(out, calibration);
}

void FrameEncoder::append_end(std::string& out) {
  if (!sealer_.ready()) return;
  append_frame(out, schema::FrameType::end, {}, 0);
  std::array<unsigned char, seal::kFileIdBytes> id;
  std::memcpy(id.data(), sealer_.seal_payload().data() + 1, id.size());  // FORMAT.md §11.1: after the scheme
  ended_file_ = id;
}

RecordsJoin::SiteChain* RecordsJoin::chain(std::uint32_t site_id) {
  auto it = chains_.find(site_id);
  if (it != chains_.end()) return &it->second;
  const SiteInfo* site = site_info(site_id);
  if (site == nullptr) return nullptr;
  return &chains_.try_emplace(site_id, site->arg_tags).first->second;
}

bool RecordsJoin::add(const RecordColumns& records) {
  std::uint64_t ticks = records.base;
  bool first = empty();
  if (first) {
    base_ = ticks;
    // The frame's head: its base, the ticks column with its length, and
    // the frame number's row (FrameEncoder::append_columns).
    room_ = kHeadBytes + std::max<std::size_t>(4096, last_ticks_size_ + last_ticks_size_ / 4);
    rows_.resize(room_);
  }
  ++adds_;
  met_.clear();
  std::uint64_t previous_ticks = first ? ticks : last_ticks_;
  ColumnsReader r(records);
  BatchRecord record;
  while (!r.empty()) {
    if (!r.next(record) || record.site_id > UINT32_MAX) {
      give_back();
      return false;
    }
    ticks += static_cast<std::uint64_t>(wire::unzigzag(record.tick_delta));
    std::string_view args = record.args;
    SiteChain* chain_of_record = nullptr;
    std::size_t count = 0;
    bool recode = false;
    if (record.site_id != schema::kControlSiteId) {
      SiteChain* c = chain(static_cast<std::uint32_t>(record.site_id));
      if (c == nullptr || !c->plan.valid()) {
        give_back();
        return false;
      }
      bool site_first = c->added != adds_;
      if (site_first) {
        c->added = adds_;
        c->pending.assign(c->plan.slots(), 0);
        met_.push_back(static_cast<std::uint32_t>(record.site_id));
      }
      // A rate-limited site's suppressed count is never delta-coded.
      const SiteInfo* info = site_info(static_cast<std::uint32_t>(record.site_id));
      count = info->limited ? suppressed_count_size(args) : 0;
      chain_of_record = c;
      recode = site_first && !c->last.empty();
    }
    wire::put_varint(rows_, record.site_id);
    wire::put_varint(rows_, record.thread);
    wire::put_varint(ticks_, wire::zigzag(static_cast<std::int64_t>(ticks - previous_ticks)));
    wire::put_bytes(rows_, args);
    previous_ticks = ticks;
    if (chain_of_record == nullptr) continue;
    // The values, recovered as a reader of this payload alone would; the
    // site's first record in it is coded again against the joined frame's
    // last values, in place in the copy.
    auto* bytes = reinterpret_cast<unsigned char*>(rows_.data() + rows_.size() - args.size()) + count;
    std::size_t size = args.size() - count;
    std::uint64_t* values = chain_of_record->pending.data();
    bool followed = recode ? chain_of_record->plan.apply<wire::Delta::decode>(bytes, size, values)
                           : chain_of_record->plan.follow(bytes, size, values);
    if (!followed) {
      give_back();
      return false;
    }
    if (recode) {
      before_ = chain_of_record->last;
      chain_of_record->plan.apply<wire::Delta::encode>(bytes, size, before_.data());
    }
  }
  pending_ticks_ = ticks;
  return true;
}

void RecordsJoin::keep() {
  kept_rows_ = rows_.size();
  kept_ticks_ = ticks_.size();
  last_ticks_ = pending_ticks_;
  for (std::uint32_t id : met_) {
    SiteChain& c = chains_.at(id);
    c.last = c.pending;
  }
  met_.clear();
}

void RecordsJoin::give_back() {
  // Nothing kept yet: the rows lose their room too, and the join is empty again.
  rows_.resize(kept_rows_);
  ticks_.resize(kept_ticks_);
  // The sites met keep `added` at this add's count, which no later add has.
  met_.clear();
}

void RecordsJoin::clear() {
  if (!empty()) last_ticks_size_ = ticks_.size();
  rows_.clear();
  ticks_.clear();
  kept_rows_ = 0;
  kept_ticks_ = 0;
  chains_.clear();
  met_.clear();
}

}  // namespace terse::detail
