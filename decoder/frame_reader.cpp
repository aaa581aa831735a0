#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <terse/crc.hpp>
#include <terse/frame.hpp>
#include <terse/portable_libc.hpp>
#include <terse/schema.hpp>
#include <terse/seal.hpp>
#include <terse/wire.hpp>

#include "frame_reader.hpp"

namespace terse::decoder::detail {
namespace {

constexpr std::size_t kReadChunk = 1 << 20;
// zstd never expands a frame by more than this over its input; a stored
// size beyond it is damage, not data.
constexpr std::uint32_t kMaxStoredSize = schema::kMaxFrameRawSize + (schema::kMaxFrameRawSize >> 7) + 4096;

// Resync looks for a frame's sync marker or the first as many bytes of a
// file's magic number.
constexpr std::size_t kMarkerBytes = sizeof schema::kFrameSync;

bool starts_with(const unsigned char* p, const unsigned char* prefix, std::size_t n) {
  return std::memcmp(p, prefix, n) == 0;
}

}  // namespace

FrameReader::FrameReader(int fd, std::string_view memory, std::string source, const Reporter& reporter,
                         Summary& summary)
    : fd_(fd), memory_(memory), source_(std::move(source)), reporter_(reporter), summary_(summary) {
  if (fd_ < 0) {
    buffer_.assign(memory.begin(), memory.end());
    end_ = buffer_.size();
    eof_ = true;
  }
}

void FrameReader::report(std::uint64_t offset, std::string what) {
  if (sealed_) return report_tampering(offset, std::move(what));
  ++summary_.damaged;
  if (reporter_) reporter_(Problem{source_, offset, std::move(what), false});
}

void FrameReader::report_tampering(std::uint64_t offset, std::string what) {
  ++summary_.damaged;
  ++summary_.tampered;
  if (reporter_) reporter_(Problem{source_, offset, "tampering: " + what, false, false, true});
}

void FrameReader::report_content(std::uint64_t offset, std::string what) {
  ++summary_.damaged;
  if (reporter_) reporter_(Problem{source_, offset, std::move(what), false});
}

void FrameReader::report_torn_tail(std::uint64_t offset, std::string what) {
  summary_.torn_tail = true;
  if (reporter_) reporter_(Problem{source_, offset, std::move(what), true});
}

bool FrameReader::fill(std::size_t need) {
  while (available() < need) {
    if (eof_) return false;
    if (pos_ > 0 && (pos_ >= buffer_.size() / 2 || buffer_.size() - end_ < kReadChunk)) {
      std::memmove(buffer_.data(), buffer_.data() + pos_, available());
      end_ -= pos_;
      base_offset_ += pos_;
      pos_ = 0;
    }
    std::size_t want = std::max(need - available(), kReadChunk);
    if (buffer_.size() - end_ < want) buffer_.resize(end_ + want);
    ssize_t n = read_some(fd_, buffer_.data() + end_, buffer_.size() - end_);
    if (n < 0) {
      if (errno == EINTR) continue;
      report(base_offset_ + end_, std::string("read failed: ") + std::strerror(errno));
      eof_ = true;
      return false;
    }
    if (n == 0) {
      eof_ = true;
      return false;
    }
    end_ += static_cast<std::size_t>(n);
  }
  return true;
}

// Skips forward to the next byte sequence that starts a frame or a file.
void FrameReader::resync(std::uint64_t damaged_at, const std::string& reason) {
  ++losses_;
  ++pos_;
  for (;;) {
    const unsigned char* begin = buffer_.data() + pos_;
    const unsigned char* stop = buffer_.data() + end_;
    const unsigned char* hit = stop;
    for (const unsigned char* p = begin; p + kMarkerBytes <= stop; ++p) {
      if ((*p == schema::kFrameSync[0] && starts_with(p, schema::kFrameSync, kMarkerBytes)) ||
          (*p == schema::kMagic[0] && starts_with(p, schema::kMagic, kMarkerBytes))) {
        hit = p;
        break;
      }
    }
    if (hit != stop) {
      pos_ = static_cast<std::size_t>(hit - buffer_.data());
      break;
    }
    // Keep all but a marker's last byte: a marker may straddle the read boundary.
    pos_ = end_ >= pos_ + (kMarkerBytes - 1) ? end_ - (kMarkerBytes - 1) : pos_;
    if (!fill(available() + kMarkerBytes)) {
      pos_ = end_;
      break;
    }
  }
  std::uint64_t resumed = base_offset_ + pos_;
  report(damaged_at,
         reason + "; skipped " + std::to_string(resumed - damaged_at) + " bytes to offset " + std::to_string(resumed));
}

// Whether the bytes `length` past the current position start a frame or a
// file, or the data ends there (FORMAT.md §9 rule 6).
bool FrameReader::boundary_after(std::size_t length) {
  fill(length + schema::kFrameHeaderSize);  // may fall short at the end of the data
  std::size_t left = available() > length ? available() - length : 0;
  if (left == 0) return true;
  const unsigned char* p = buffer_.data() + pos_ + length;
  if (starts_with(p, schema::kMagic, std::min(left, sizeof schema::kMagic))) return true;
  if (left < schema::kFrameHeaderSize) {
    return starts_with(p, schema::kFrameSync, std::min(left, sizeof schema::kFrameSync));  // a torn tail
  }
  return schema::frame_sync_at(p) && schema::frame_header_crc_ok(p);
}

// The header's checksum vouches for its size, so the damaged frame is skipped
// whole: its payload may hold bytes that look like frames (a logged .tlog
// file) and must not be searched. Only when no frame or file follows where
// the size says was the frame torn and something else written after it
// (files concatenated on a pipe); then its bytes are searched like any damage.
void FrameReader::skip_bad_payload(std::uint64_t offset, std::size_t frame_size) {
  if (!boundary_after(frame_size)) {
    resync(offset, "frame payload checksum mismatch");
    return;
  }
  pos_ += frame_size;
  ++losses_;
  report(offset, "frame payload checksum mismatch; skipped " + std::to_string(position() - offset) +
                     " bytes to offset " + std::to_string(position()));
}

// A file's preamble at the current position: the file starts, or the data
// ends, or (nothing) the reader resynced and the caller looks again.
std::optional<FrameReader::Event> FrameReader::read_preamble() {
  // What is wrong with a new file's preamble is not the sealed file's
  // before it; that file's own reports (missing frames, its end) come after,
  // and then the decoder sets this for the new file.
  struct NotSealedHere {
    bool& sealed;
    bool was;
    ~NotSealedHere() { sealed = was; }
  } not_sealed_here{sealed_, std::exchange(sealed_, false)};
  if (!fill(schema::kPreambleSize)) {
    if (live_ && (available() == 0 ||
                  starts_with(buffer_.data() + pos_, schema::kMagic, std::min(available(), sizeof schema::kMagic))))
      return Event::end;  // a preamble still being written
    if (available() > 0 && at_file_start_ && base_offset_ + pos_ == 0 &&
        !starts_with(buffer_.data() + pos_, schema::kMagic, std::min(available(), sizeof schema::kMagic))) {
      report(0, "not a terse log file (no magic number)");
    } else if (available() > 0) {
      report_torn_tail(base_offset_ + pos_, "file ends inside its preamble");
    }
    return Event::end;
  }
  const unsigned char* p = buffer_.data() + pos_;
  std::uint64_t offset = base_offset_ + pos_;
  if (!starts_with(p, schema::kMagic, 8)) {
    at_file_start_ = false;
    resync(offset, "not a terse log file (no magic number)");
    return std::nullopt;
  }
  schema::Preamble preamble = schema::decode_preamble(p);
  if (!schema::preamble_crc_ok(p)) {
    // A damaged version field must not cost the whole file: the frames
    // carry their own checksums, so read on as the version we know.
    report(offset, "preamble checksum mismatch; reading on as format version " + std::to_string(schema::kVersionMajor));
  } else if (preamble.version_major < schema::kOldestVersionMajor || preamble.version_major > schema::kVersionMajor) {
    report(offset, "format version " + std::to_string(preamble.version_major) + "." +
                       std::to_string(preamble.version_minor) + " is not supported (this decoder reads " +
                       std::to_string(schema::kOldestVersionMajor) + ".x to " + std::to_string(schema::kVersionMajor) +
                       ".x); use a newer terse");
    return Event::end;
  }
  file_offset_ = offset;
  version_major_ = schema::preamble_crc_ok(p) ? preamble.version_major : 0;
  pos_ += schema::kPreambleSize;
  at_file_start_ = false;
  return Event::file_start;
}

// A frame at the current position, as read_preamble() says what came of it.
std::optional<FrameReader::Event> FrameReader::read_frame(Frame& frame) {
  if (!fill(schema::kFrameHeaderSize)) {
    if (available() > 0 && !live_) {
      report_torn_tail(base_offset_ + pos_, "file ends inside a frame header (" + std::to_string(available()) +
                                                " bytes); the writer stopped mid-write");
    }
    return Event::end;
  }
  const unsigned char* h = buffer_.data() + pos_;
  std::uint64_t offset = base_offset_ + pos_;
  if (!schema::frame_sync_at(h)) {
    resync(offset, "no frame starts here");
    return std::nullopt;
  }
  if (!schema::frame_header_crc_ok(h)) {
    resync(offset, "frame header checksum mismatch");
    return std::nullopt;
  }
  schema::FrameHeader header = schema::decode_frame_header(h);
  frame.type = header.type;
  frame.flags = header.flags;
  std::uint32_t stored = header.stored_size;
  frame.raw_size = header.raw_size;
  if (header.reserved != 0 || (frame.flags & ~schema::kFrameFlagsKnown) != 0 || stored > kMaxStoredSize ||
      frame.raw_size > schema::kMaxFrameRawSize ||
      ((frame.flags & schema::kFrameFlagZstd) == 0 &&
       stored != frame.raw_size + ((frame.flags & schema::kFrameFlagSealed) ? seal::kOverheadBytes : 0))) {
    resync(offset, "frame header has invalid fields");
    return std::nullopt;
  }
  if (!fill(schema::kFrameHeaderSize + stored)) {
    if (live_) return Event::end;  // the rest of the frame is on its way
    report_torn_tail(offset, "file ends inside a frame (" + std::to_string(available()) + " of " +
                                 std::to_string(schema::kFrameHeaderSize + stored) +
                                 " bytes); the writer stopped mid-write");
    pos_ = end_;
    return Event::end;
  }
  h = buffer_.data() + pos_;
  const unsigned char* payload = h + schema::kFrameHeaderSize;
  if (wire::crc32c(payload, stored) != header.payload_crc) {
    skip_bad_payload(offset, schema::kFrameHeaderSize + stored);
    return std::nullopt;
  }
  frame.offset = offset;
  frame.payload = std::string_view(reinterpret_cast<const char*>(payload), stored);
  std::memcpy(frame.header, h, sizeof frame.header);
  pos_ += schema::kFrameHeaderSize + stored;
  ++summary_.frames;
  summary_.stored_bytes += stored;
  summary_.raw_bytes += frame.raw_size;
  return Event::frame;
}

FrameReader::Event FrameReader::next(Frame& frame) {
  // Live: the end of the data last time was only the end of what had been
  // written so far.
  if (live_ && fd_ >= 0 && eof_) {
    eof_ = false;
    forget_end_of_file(fd_);
  }
  for (;;) {
    bool at_preamble =
        at_file_start_ || (fill(sizeof schema::kMagic) && starts_with(buffer_.data() + pos_, schema::kMagic, 8));
    if (auto event = at_preamble ? read_preamble() : read_frame(frame)) return *event;
  }
}

}  // namespace terse::decoder::detail
