// Splits a byte stream into verified frames (FORMAT.md §2, §3, §9).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <terse/decoder.hpp>

namespace terse::decoder::detail {

struct Frame {
  std::uint8_t type = 0;
  std::uint8_t flags = 0;
  std::uint32_t raw_size = 0;
  std::uint64_t offset = 0;  // of the frame header in the stream
  std::string_view payload;  // as stored; valid until the next call
  // The header's first 16 bytes as stored: a sealed frame's associated data
  // (FORMAT.md §11.2).
  unsigned char header[16] = {};
};

class FrameReader {
 public:
  // fd < 0 reads `memory` instead.
  FrameReader(int fd, std::string_view memory, std::string source, const Reporter& reporter, Summary& summary);

  enum class Event { frame, file_start, end };
  // Next frame, or the start of a new file inside the stream, or the end.
  Event next(Frame& frame);

  // See StreamDecoder::set_live.
  void set_live(bool live) { live_ = live; }
  std::uint64_t position() const { return base_offset_ + pos_; }
  std::uint64_t file_offset() const { return file_offset_; }
  // How often bytes that may have held frames were skipped as damage.
  std::uint64_t losses() const { return losses_; }

  // Problems in a sealed file read with its key are tampering (FORMAT.md
  // §11.5): the writer never leaves them so.
  void set_sealed(bool sealed) { sealed_ = sealed; }
  bool sealed() const { return sealed_; }
  // Damage to the file's frames: their bytes, their order.
  void report(std::uint64_t offset, std::string what);
  // What only a change made on purpose leaves in a sealed file, whether or
  // not its key opened it (a seal frame its own key does not open).
  void report_tampering(std::uint64_t offset, std::string what);
  // A problem inside a frame that was read whole (and, sealed, authenticated):
  // what its writer wrote, never tampering.
  void report_content(std::uint64_t offset, std::string what);
  // The current file's major version, from its preamble (FORMAT.md §2); 0
  // when the preamble's checksum failed.
  std::uint16_t version_major() const { return version_major_; }
  void report_torn_tail(std::uint64_t offset, std::string what);

 private:
  std::size_t available() const { return end_ - pos_; }
  bool fill(std::size_t need);
  void resync(std::uint64_t damaged_at, const std::string& reason);
  bool boundary_after(std::size_t length);
  void skip_bad_payload(std::uint64_t offset, std::size_t frame_size);
  std::optional<Event> read_preamble();
  std::optional<Event> read_frame(Frame& frame);

  int fd_;
  std::string_view memory_;
  std::string source_;
  const Reporter& reporter_;
  Summary& summary_;
  std::vector<unsigned char> buffer_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  std::uint64_t base_offset_ = 0;  // stream offset of buffer_[0]
  bool eof_ = false;
  bool at_file_start_ = true;
  bool live_ = false;
  bool sealed_ = false;
  std::uint16_t version_major_ = 0;
  std::uint64_t file_offset_ = 0;
  std::uint64_t losses_ = 0;
};

}  // namespace terse::decoder::detail
