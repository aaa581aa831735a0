#include "emergency.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <terse/crc.hpp>
#include <terse/dictionary.hpp>
#include <terse/frame.hpp>
#include <terse/portable_libc.hpp>

#include "buffers.hpp"
#include "registry.hpp"

namespace terse::detail {
namespace {

// Gathers whole frames in a fixed block of memory and writes the block out
// when the next frame would not fit.
class EmergencyWriter {
 public:
  EmergencyWriter(char* memory, std::size_t size, int fd, CrashSeal seal)
      : begin_(memory), end_(memory + size), at_(memory), fd_(fd), seal_(seal) {
    if (seal_.sealer != nullptr && !seal_.sealer->ready()) seal_ = {};
  }

  template <typename Entry>
  void entry(const Entry& entry) {
    char* body = open_frame(schema::FrameType::dictionary, schema::entry_size(entry));
    if (body == nullptr) return;
    if (char* body_end = schema::encode_entry(entry, body, end_)) close_frame(body_end);
  }

  void record(const RingRecordHeader& header, std::uint32_t thread, const char* args, schema::FrameType type) {
    char* body = open_frame(type, 8 + 40 + header.args_size);
    if (body == nullptr) return;
    char* p = body;
    std::memcpy(p, &header.ticks, 8);
    p += 8;
    p = wire::write_varint(p, header.site_id);
    p = wire::write_varint(p, thread);
    p = wire::write_varint(p, 0);
    p = wire::write_varint(p, header.args_size);
    std::memcpy(p, args, header.args_size);
    close_frame(p + header.args_size);
  }

  void finish() { drain(); }

 private:
  // Room for a frame whose payload is at most `payload` bytes; nullptr if
  // it could never fit.
  char* open_frame(schema::FrameType type, std::size_t payload) {
    std::size_t frame = schema::kFrameHeaderSize + payload + (seal_.sealer ? seal::kOverheadBytes : 0);
    if (frame > static_cast<std::size_t>(end_ - begin_)) return nullptr;
    if (frame > static_cast<std::size_t>(end_ - at_)) drain();
    frame_ = at_;
    type_ = type;
    // A sealed frame's message starts behind its counter, where it is
    // encrypted in place.
    return frame_ + schema::kFrameHeaderSize + (seal_.sealer ? seal::kCounterBytes : 0);
  }

  void close_frame(char* payload_end) {
    if (seal_.sealer) {
      auto* message = reinterpret_cast<unsigned char*>(frame_ + schema::kFrameHeaderSize + seal::kCounterBytes);
      auto size = static_cast<std::size_t>(reinterpret_cast<unsigned char*>(payload_end) - message);
      std::uint64_t counter = seal::kCrashCounterBase + seal_.counter->fetch_add(1, std::memory_order_relaxed);
      at_ =
          frame_ + seal_.sealer->seal_frame(reinterpret_cast<unsigned char*>(frame_), static_cast<std::uint8_t>(type_),
                                            0, static_cast<std::uint32_t>(size), message, size, counter);
      return;
    }
    const char* payload = frame_ + schema::kFrameHeaderSize;
    schema::FrameHeader header;
    header.type = static_cast<std::uint8_t>(type_);
    header.stored_size = static_cast<std::uint32_t>(payload_end - payload);
    header.raw_size = header.stored_size;
    header.payload_crc = wire::crc32c(payload, header.stored_size);
    unsigned char bytes[schema::kFrameHeaderSize];
    schema::encode_frame_header(header, bytes);
    std::memcpy(frame_, bytes, sizeof bytes);
    at_ = payload_end;
  }

  void drain() {
    write_all(fd_, std::string_view(begin_, static_cast<std::size_t>(at_ - begin_)));
    at_ = begin_;
  }

  char* begin_;
  char* end_;
  char* at_;
  char* frame_ = nullptr;
  schema::FrameType type_ = schema::FrameType::records;
  int fd_;
  CrashSeal seal_;
};

schema::ThreadEntry thread_entry(const ThreadBuffer& b) {
  return {b.index, b.os_tid, std::string_view(b.name, ::strnlen(b.name, sizeof b.name))};
}

}  // namespace

void write_all(int fd, std::string_view bytes) noexcept {
  while (!bytes.empty()) {
    ssize_t n = write_some(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere to write them: the descriptor is closed or the disk full
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void write_buffers_for_crash(int fd, char* memory, std::size_t size, CrashSeal seal) noexcept {
  if (fd < 0 || size == 0) return;
  EmergencyWriter out(memory, size, fd, seal);
  auto& registry = buffer_registry();
  ThreadBuffer* const* buffers = registry.buffers.data();  // unlocked: the process is dying
  std::size_t count = registry.buffers.size();
  for (std::size_t i = 0; i < count; ++i) {
    ThreadBuffer& b = *buffers[i];
    out.entry(thread_entry(b));
    for_each_ring_record(b, b.consumed.load(std::memory_order_acquire), b.committed.load(std::memory_order_acquire),
                         [&](RingRecordHeader header, const char* args) {
                           // Recorded by the flight recorder and not yet taken by the
                           // collector: a flight frame, as a trigger would have written it.
                           auto type = schema::FrameType::records;
                           if (header.site_id & kRingFlightBit) {
                             header.site_id &= ~kRingFlightBit;
                             type = schema::FrameType::flight;
                           }
                           if (header.site_id != schema::kControlSiteId) {
                             if (const SiteInfo* site = site_info(header.site_id)) out.entry(site->entry());
                           }
                           out.record(header, b.index, args, type);
                         });
  }
  out.finish();
}

}  // namespace terse::detail
