// start/flush/stop and the two stages behind them: the collector drains the
// thread buffers in time order into a batch, the writer compresses the
// previous batch and appends it to the current file.
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <zstd.h>

#include <terse/crc.hpp>
#include <terse/delta.hpp>
#include <terse/wire.hpp>

#include "internal.hpp"
#include "interning.hpp"

namespace terse {
namespace detail {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr std::size_t kBatchTargetBytes = 1024 * 1024;
constexpr std::size_t kBatchCount = 3;
constexpr auto kMaxBatchDelay = std::chrono::milliseconds(50);
constexpr std::uint32_t kDropRecordArgs = 1 + 8 + 8 + 8;
constexpr std::size_t kEmergencyBytes = 1 << 20;
constexpr std::int64_t kCalibrationPeriodNs = 1'000'000'000;
constexpr const char* kWriterName = "terse " TERSE_VERSION_STRING;

struct Calibration {
  std::uint64_t ticks = 0;
  std::int64_t unix_ns = 0;
  double ticks_per_second = 1e9;
};

// Grows without zero-filling, so the collector writes records in place.
class ByteBuffer {
 public:
  // Room for `n` more bytes at the end; commit() says how many were used.
  char* tail(std::size_t n) {
    if (capacity_ - size_ < n) grow(size_ + n);
    return data_.get() + size_;
  }
  void commit(const char* end) { size_ = static_cast<std::size_t>(end - data_.get()); }
  std::size_t size() const { return size_; }
  void clear() { size_ = 0; }
  operator std::string_view() const { return {data_.get(), size_}; }

 private:
  void grow(std::size_t needed) {
    std::size_t capacity = std::max(needed, capacity_ * 2 + 4096);
    auto fresh = std::make_unique<char[]>(capacity);
    if (size_ != 0) std::memcpy(fresh.get(), data_.get(), size_);
    data_ = std::move(fresh);
    capacity_ = capacity;
  }
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

// One unit of work handed from the collector to the writer.
struct Batch {
  std::string dictionary;  // FORMAT.md §6 entries new in this batch
  ByteBuffer records;      // FORMAT.md §7 payload
  std::uint64_t last_ticks = 0;
  std::size_t record_count = 0;
  std::uint64_t sequence = 0;  // numbers batches, so per-frame state can tell a new one
  bool calibration_changed = false;
  Calibration calibration;
  std::uint64_t flush_sequence = 0;  // non-zero: completes that flush once written
  bool last = false;                 // the collector has stopped
  bool has_long_args = false;        // some record may hold a string worth interning

  void clear() {
    dictionary.clear();
    records.clear();
    last_ticks = 0;
    record_count = 0;
    calibration_changed = false;
    flush_sequence = 0;
    last = false;
    has_long_args = false;
  }
};

void append_frame(std::string& out, schema::FrameType type, std::string_view payload, int level,
                  ZSTD_CCtx* cctx, std::string& scratch) {
  std::uint8_t flags = 0;
  std::string_view stored = payload;
  if (level != 0 && payload.size() >= 64) {
    scratch.resize(ZSTD_compressBound(payload.size()));
    std::size_t n = ZSTD_compressCCtx(cctx, scratch.data(), scratch.size(), payload.data(), payload.size(), level);
    if (!ZSTD_isError(n) && n < payload.size()) {
      stored = std::string_view(scratch.data(), n);
      flags |= schema::kFrameFlagZstd;
    }
  }
  unsigned char header[schema::kFrameHeaderSize] = {};
  std::memcpy(header, schema::kFrameSync, sizeof schema::kFrameSync);
  header[4] = static_cast<unsigned char>(type);
  header[5] = flags;
  wire::store_le<std::uint32_t>(header + 8, static_cast<std::uint32_t>(stored.size()));
  wire::store_le<std::uint32_t>(header + 12, static_cast<std::uint32_t>(payload.size()));
  wire::store_le<std::uint32_t>(header + 16, wire::crc32c(stored.data(), stored.size()));
  wire::store_le<std::uint32_t>(header + 20, wire::crc32c(header, schema::kFrameHeaderCrcOffset));
  out.append(reinterpret_cast<const char*>(header), sizeof header);
  out.append(stored);
}

// Dictionary frames stay far below the reader's frame limit however many
// sites a process has: entries are split across frames at entry boundaries.
constexpr std::size_t kDictionaryFrameBytes = 1 << 20;

void append_dictionary_frames(std::string& out, std::string_view entries, int level, ZSTD_CCtx* cctx,
                              std::string& scratch) {
  while (!entries.empty()) {
    wire::Reader r(entries);
    std::size_t cut = 0;
    while (!r.empty()) {
      std::uint8_t kind;
      std::string_view body;
      if (!r.le(kind) || !r.length_prefixed(body, entries.size())) break;
      std::size_t end = static_cast<std::size_t>(r.position() - reinterpret_cast<const unsigned char*>(entries.data()));
      if (cut != 0 && end > kDictionaryFrameBytes) break;
      cut = end;
    }
    if (cut == 0) cut = entries.size();
    append_frame(out, schema::FrameType::dictionary, entries.substr(0, cut), level, cctx, scratch);
    entries.remove_prefix(cut);
  }
}

std::string calibration_payload(const Calibration& c) {
  std::string out;
  wire::put_le<std::uint64_t>(out, c.ticks);
  wire::put_le<std::int64_t>(out, c.unix_ns);
  wire::put_le<double>(out, c.ticks_per_second);
  return out;
}

void put_entry(std::string& out, std::uint8_t kind, const std::string& body) {
  out.push_back(static_cast<char>(kind));
  wire::put_varint(out, body.size());
  out.append(body);
}

std::string program_name() {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return {};
  return fs::path(std::string(path, static_cast<std::size_t>(n))).filename().string();
}

std::string host_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

// FORMAT.md §4 info key 8: how private values are stored as the file opens.
std::string private_values_word() {
  switch (static_cast<schema::PrivateMode>(g_hot.private_mode.load(std::memory_order_relaxed))) {
    case schema::PrivateMode::hashed: return "hash";
    case schema::PrivateMode::clear: return "clear";
    default: return "omit";
  }
}

std::string local_date(std::int64_t unix_ns) {
  time_t seconds = static_cast<time_t>(unix_ns / 1'000'000'000);
  tm parts{};
  localtime_r(&seconds, &parts);
  char text[40];
  std::snprintf(text, sizeof text, "%04d%02d%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday);
  return text;
}

// Lives apart from the Logger and is never destroyed, so that a thread
// waking the IO thread while stop() runs never touches freed memory.
struct Wakeup {
  std::mutex mutex;
  std::condition_variable cv;
};
Wakeup* g_wakeup = new Wakeup;
Wakeup& io_wakeup() { return *g_wakeup; }

Calibration sample_clock() {
  Calibration c;
  std::uint64_t before = ticks();
  c.unix_ns = realtime_ns();
  std::uint64_t after = ticks();
  c.ticks = before + (after - before) / 2;
  return c;
}

}  // namespace

class Logger {
 public:
  explicit Logger(const Config& config) : config_(config) {
    if (!config_.on_error) {
      config_.on_error = [](const std::string& message) { std::fprintf(stderr, "terse: %s\n", message.c_str()); };
    }
    calibrate_initial();
    calibration_written_ = calibration_;
    for (auto& batch : batches_) free_batches_.push_back(&batch);
    cctx_ = ZSTD_createCCtx();
    if (cctx_ == nullptr) throw Error("terse: cannot create a zstd compression context");
    if (config_.crash_handler) {
      emergency_.resize(kEmergencyBytes);
      (void)wire::crc32c("", 0);  // its one-time setup must not first run inside a signal handler
    }
    if (!open_file(true))
      throw Error("terse: cannot write the first file in '" + config_.directory + "': " + std::strerror(last_errno_));
  }

  ~Logger() {
    if (fd_ >= 0) ::close(fd_);
    ZSTD_freeCCtx(cctx_);
  }

  void run() {
    collector_ = std::thread([this] {
      collector_tid_.store(::gettid(), std::memory_order_relaxed);
      collect_loop();
    });
    writer_ = std::thread([this] {
      writer_tid_.store(::gettid(), std::memory_order_relaxed);
      write_loop();
    });
    // Named from here, so the names are there when start() returns.
    pthread_setname_np(collector_.native_handle(), "terse-io");
    pthread_setname_np(writer_.native_handle(), "terse-write");
  }

  void flush() {
    std::uint64_t sequence = flush_requested_.fetch_add(1, std::memory_order_acq_rel) + 1;
    wake_io_thread();
    std::unique_lock lock(mutex_);
    flushed_.wait(lock, [&] { return flush_completed_ >= sequence || writer_done_; });
  }

  // Async-signal-safe: atomics and nanosleep only. The collector notices the
  // request within its idle wait (10 ms at most).
  void flush_from_signal() noexcept {
    pid_t self = ::gettid();
    bool io_thread_crashed =
        self == collector_tid_.load(std::memory_order_relaxed) || self == writer_tid_.load(std::memory_order_relaxed);
    if (!io_thread_crashed) {
      crashing_.store(true, std::memory_order_relaxed);
      std::uint64_t sequence = flush_requested_.fetch_add(1, std::memory_order_acq_rel) + 1;
      for (int waited_ms = 0; waited_ms < 1000; ++waited_ms) {
        if (flushed_through_.load(std::memory_order_acquire) >= sequence) return;
        timespec pause{0, 1'000'000};
        nanosleep(&pause, nullptr);
      }
    }
    // Nobody answered (an IO thread crashed, or is stuck, say on a heap lock
    // the crashing thread held): write what the buffers hold from here.
    emergency_write();
  }

  // Async-signal-safe: no lock, no allocation, plain write(2) into the
  // pre-allocated emergency buffer. Each record goes into a records frame
  // of its own, so its site's deltas start from zero and the raw argument
  // bytes are already their encoding (FORMAT.md §7.1); stored, not
  // compressed. Dictionary and thread entries are repeated (readers take
  // the latest). Records the stuck IO thread also writes may then appear
  // twice; none is lost.
  void emergency_write() noexcept {
    int fd = current_fd_.load(std::memory_order_acquire);
    if (fd < 0 || emergency_.empty()) return;
    EmergencyWriter out(emergency_.data(), emergency_.size(), fd);
    auto& registry = buffer_registry();
    ThreadBuffer* const* buffers = registry.buffers.data();  // unlocked: the process is dying
    std::size_t count = registry.buffers.size();
    for (std::size_t i = 0; i < count; ++i) {
      ThreadBuffer& b = *buffers[i];
      std::uint64_t position = b.consumed.load(std::memory_order_acquire);
      std::uint64_t end = b.committed.load(std::memory_order_acquire);
      out.thread_entry(b);
      while (position < end) {
        std::uint64_t offset = position & (b.capacity - 1);
        RingRecordHeader header;
        std::memcpy(&header, b.data + offset, 4);
        if (header.site_id == kRingWrapMarker) {
          position += b.capacity - offset;
          continue;
        }
        std::memcpy(&header, b.data + offset, sizeof header);
        if (header.site_id != schema::kControlSiteId) {
          if (const Site* site = site_by_id(header.site_id)) out.site_entry(header.site_id, *site);
        }
        out.record(header, b.index, b.data + offset + kRingHeaderSize);
        position += ring_stride(header.args_size);
      }
    }
    out.finish();
  }

  class EmergencyWriter {
   public:
    EmergencyWriter(char* memory, std::size_t size, int fd) : begin_(memory), end_(memory + size), at_(memory), fd_(fd) {}

    void thread_entry(const ThreadBuffer& b) {
      std::size_t name = ::strnlen(b.name, sizeof b.name);
      char* body = open_frame(schema::FrameType::dictionary, 64 + name);
      if (body == nullptr) return;
      char* p = body;
      *p++ = static_cast<char>(schema::DictKind::thread);
      char* length = p++;  // a thread entry's body is always under 128 bytes
      char* start = p;
      p = wire::write_varint(p, b.index);
      p = wire::write_varint(p, b.os_tid);
      p = wire::write_varint(p, name);
      std::memcpy(p, b.name, name);
      p += name;
      *length = static_cast<char>(p - start);
      close_frame(p);
    }

    void site_entry(std::uint32_t id, const Site& site) {
      std::size_t file = std::strlen(site.file);
      std::size_t format = std::strlen(site.format);
      const std::string* extension = site.extension.load(std::memory_order_acquire);
      std::size_t extra = extension ? extension->size() : 0;
      char* body = open_frame(schema::FrameType::dictionary, 64 + file + format + site.arg_count + extra);
      if (body == nullptr) return;
      char* p = body;
      *p++ = static_cast<char>(schema::DictKind::site);
      char body_bytes[40];  // the fixed-size head of the body, to learn its length first
      char* h = body_bytes;
      h = wire::write_varint(h, id);
      *h++ = static_cast<char>(site.level);
      h = wire::write_varint(h, site.line);
      std::size_t head = static_cast<std::size_t>(h - body_bytes);
      std::size_t total = head + varint_size(file) + file + varint_size(format) + format + varint_size(site.arg_count) +
                          site.arg_count + extra;
      p = wire::write_varint(p, total);
      std::memcpy(p, body_bytes, head);
      p += head;
      p = wire::write_varint(p, file);
      std::memcpy(p, site.file, file);
      p += file;
      p = wire::write_varint(p, format);
      std::memcpy(p, site.format, format);
      p += format;
      p = wire::write_varint(p, site.arg_count);
      std::memcpy(p, site.arg_tags, site.arg_count);
      p += site.arg_count;
      if (extra != 0) {
        std::memcpy(p, extension->data(), extra);
        p += extra;
      }
      close_frame(p);
    }

    void record(const RingRecordHeader& header, std::uint32_t thread, const char* args) {
      char* body = open_frame(schema::FrameType::records, 8 + 40 + header.args_size);
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
    static std::size_t varint_size(std::uint64_t v) {
      std::size_t n = 1;
      while (v >= 0x80) {
        v >>= 7;
        ++n;
      }
      return n;
    }

    // Room for a frame whose payload is at most `payload` bytes; nullptr if
    // it could never fit.
    char* open_frame(schema::FrameType type, std::size_t payload) {
      if (payload + schema::kFrameHeaderSize > static_cast<std::size_t>(end_ - begin_)) return nullptr;
      if (payload + schema::kFrameHeaderSize > static_cast<std::size_t>(end_ - at_)) drain();
      frame_ = at_;
      std::memset(frame_, 0, schema::kFrameHeaderSize);
      std::memcpy(frame_, schema::kFrameSync, sizeof schema::kFrameSync);
      frame_[4] = static_cast<char>(type);
      return frame_ + schema::kFrameHeaderSize;
    }

    void close_frame(char* payload_end) {
      auto* h = reinterpret_cast<unsigned char*>(frame_);
      const unsigned char* payload = h + schema::kFrameHeaderSize;
      auto size = static_cast<std::uint32_t>(reinterpret_cast<unsigned char*>(payload_end) - payload);
      wire::store_le<std::uint32_t>(h + 8, size);
      wire::store_le<std::uint32_t>(h + 12, size);
      wire::store_le<std::uint32_t>(h + 16, wire::crc32c(payload, size));
      wire::store_le<std::uint32_t>(h + 20, wire::crc32c(h, schema::kFrameHeaderCrcOffset));
      at_ = payload_end;
    }

    void drain() {
      const char* p = begin_;
      while (p < at_) {
        ssize_t n = ::write(fd_, p, static_cast<std::size_t>(at_ - p));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        p += n;
      }
      at_ = begin_;
    }

    char* begin_;
    char* end_;
    char* at_;
    char* frame_ = nullptr;
    int fd_;
  };

  void flush_durable() {
    flush();
    std::unique_lock lock(mutex_);
    std::uint64_t sequence = ++sync_requested_;
    batch_ready_.notify_one();
    flushed_.wait(lock, [&] { return sync_completed_ >= sequence || writer_done_; });
  }

  Stats stats() {
    Stats s;
    s.records_written = records_written_.load(std::memory_order_relaxed);
    s.bytes_in = bytes_in_.load(std::memory_order_relaxed);
    s.bytes_out = bytes_out_.load(std::memory_order_relaxed);
    s.files_opened = files_opened_.load(std::memory_order_relaxed);
    s.files_removed = files_removed_.load(std::memory_order_relaxed);
    s.write_errors = write_errors_.load(std::memory_order_relaxed);
    s.syncs = syncs_.load(std::memory_order_relaxed);
    s.records_dropped = dropped_released_.load(std::memory_order_relaxed);
    for (std::thread* t : {&collector_, &writer_}) {
      clockid_t clock;
      timespec used{};
      if (pthread_getcpuclockid(t->native_handle(), &clock) == 0 && clock_gettime(clock, &used) == 0)
        s.io_busy += std::chrono::seconds(used.tv_sec) + std::chrono::nanoseconds(used.tv_nsec);
    }
    auto& registry = buffer_registry();
    std::lock_guard lock(registry.mutex);
    for (const ThreadBuffer* b : registry.buffers) {
      ThreadStats t;
      t.os_tid = b->os_tid;
      t.name = std::string(b->name, ::strnlen(b->name, sizeof b->name));
      t.buffer_bytes = b->capacity;
      t.highest_fill = b->highest_fill.load(std::memory_order_relaxed);
      t.dropped = b->dropped.load(std::memory_order_relaxed);
      s.records_dropped += t.dropped;
      s.threads.push_back(std::move(t));
    }
    return s;
  }

  void stop() {
    stop_requested_.store(true, std::memory_order_release);
    wake_io_thread();
    collector_.join();
    writer_.join();
  }

 private:
  // ---- collector --------------------------------------------------------

  struct Cursor {
    ThreadBuffer* buffer;
    std::uint64_t position;
    std::uint64_t end;
    RingRecordHeader header;
    const char* args;
  };

  // Moves the cursor onto its next record; false when it has none left.
  static bool load(Cursor& cursor) {
    ThreadBuffer& b = *cursor.buffer;
    while (cursor.position < cursor.end) {
      std::uint64_t offset = cursor.position & (b.capacity - 1);
      std::uint32_t site_id;
      std::memcpy(&site_id, b.data + offset, sizeof site_id);
      if (site_id == kRingWrapMarker) {
        cursor.position += b.capacity - offset;
        continue;
      }
      std::memcpy(&cursor.header, b.data + offset, sizeof cursor.header);
      cursor.args = b.data + offset + kRingHeaderSize;
      return true;
    }
    return false;
  }

  void calibrate_initial() {
    anchor_ = sample_clock();
#if TERSE_CLOCK_TSC
    std::this_thread::sleep_for(2ms);
    Calibration later = sample_clock();
    anchor_.ticks_per_second =
        static_cast<double>(later.ticks - anchor_.ticks) * 1e9 / static_cast<double>(later.unix_ns - anchor_.unix_ns);
    calibration_ = later;
    calibration_.ticks_per_second = anchor_.ticks_per_second;
#else
    anchor_.ticks_per_second = 1e9;
    calibration_ = anchor_;
#endif
    window_ticks_ = static_cast<std::uint64_t>(static_cast<double>(config_.ordering_window.count()) * 1e-6 *
                                               calibration_.ticks_per_second);
  }

  // The rate is measured over the whole time since start, so it sharpens
  // as the process runs; the anchor follows the wall clock.
  void recalibrate(Batch& batch) {
    Calibration now = sample_clock();
    if (now.unix_ns - calibration_.unix_ns < kCalibrationPeriodNs) return;
#if TERSE_CLOCK_TSC
    if (now.unix_ns > anchor_.unix_ns && now.ticks > anchor_.ticks) {
      now.ticks_per_second =
          static_cast<double>(now.ticks - anchor_.ticks) * 1e9 / static_cast<double>(now.unix_ns - anchor_.unix_ns);
    } else {
      now.ticks_per_second = calibration_.ticks_per_second;
    }
#else
    now.ticks_per_second = 1e9;
#endif
    calibration_ = now;
    batch.calibration_changed = true;
    batch.calibration = calibration_;
  }

  void refresh_buffers() {
    auto& registry = buffer_registry();
    std::uint64_t generation = registry.generation.load(std::memory_order_acquire);
    if (generation == buffers_generation_) return;
    std::lock_guard lock(registry.mutex);
    buffers_ = registry.buffers;
    buffers_generation_ = registry.generation.load(std::memory_order_relaxed);
  }

  // FORMAT.md §7: the "dropped" control record. Stamped no earlier than
  // the batch's last record so the stream stays in time order; the interval
  // the drops happened in is in the record itself.
  void report_drops(Batch& batch, ThreadBuffer& b, std::uint64_t now) {
    std::uint64_t dropped = b.dropped.load(std::memory_order_relaxed);
    if (dropped != b.drops_reported) {
      char args[kDropRecordArgs];
      std::uint64_t count = dropped - b.drops_reported;
      std::uint64_t last = b.last_drop_ticks.load(std::memory_order_relaxed);
      args[0] = static_cast<char>(schema::ControlKind::dropped);
      std::memcpy(args + 1, &count, 8);
      std::memcpy(args + 9, &b.drops_checked_ticks, 8);
      std::memcpy(args + 17, &last, 8);
      Cursor c{&b, 0, 0, {schema::kControlSiteId, kDropRecordArgs, std::max(last, batch.last_ticks)}, args};
      describe_thread(batch, b);
      append_record(batch, c);
      b.drops_reported = dropped;
    }
    b.drops_checked_ticks = now;
  }

  void release_abandoned(Batch& batch) {
    bool changed = false;
    for (ThreadBuffer* b : buffers_) {
      if (!b->abandoned.load(std::memory_order_acquire)) continue;
      if (b->committed.load(std::memory_order_acquire) != b->consumed.load(std::memory_order_relaxed)) continue;
      report_drops(batch, *b, ticks());  // its last drops, now that it can drop no more
      auto& registry = buffer_registry();
      {
        std::lock_guard lock(registry.mutex);
        std::erase(registry.buffers, b);
        registry.generation.fetch_add(1, std::memory_order_release);
        dropped_released_.fetch_add(b->dropped.load(std::memory_order_relaxed), std::memory_order_relaxed);
      }
      destroy_thread_buffer(b);
      changed = true;
    }
    if (changed) {
      buffers_generation_ = 0;
      refresh_buffers();
    }
  }

  void describe_site(Batch& batch, std::uint32_t id) {
    if (id == schema::kControlSiteId) return;
    if (id >= sites_written_.size()) sites_written_.resize(std::max<std::size_t>(id + 1, sites_written_.size() * 2));
    if (sites_written_[id]) return;
    const Site* site = site_by_id(id);
    while (site == nullptr) {  // published by a racing first call; visible momentarily
      std::this_thread::yield();
      site = site_by_id(id);
    }
    std::string body;
    wire::put_varint(body, id);
    body.push_back(static_cast<char>(site->level));
    wire::put_varint(body, site->line);
    wire::put_bytes(body, site->file);
    wire::put_bytes(body, site->format);
    wire::put_varint(body, site->arg_count);
    body.append(reinterpret_cast<const char*>(site->arg_tags), site->arg_count);
    if (const std::string* extension = site->extension.load(std::memory_order_acquire)) body.append(*extension);
    put_entry(batch.dictionary, static_cast<std::uint8_t>(schema::DictKind::site), body);
    sites_written_[id] = true;
  }

  void describe_thread(Batch& batch, const ThreadBuffer& b) {
    if (b.index >= threads_written_.size())
      threads_written_.resize(std::max<std::size_t>(b.index + 1, threads_written_.size() * 2));
    if (threads_written_[b.index]) return;
    std::string body;
    wire::put_varint(body, b.index);
    wire::put_varint(body, b.os_tid);
    wire::put_bytes(body, std::string_view(b.name, ::strnlen(b.name, sizeof b.name)));
    put_entry(batch.dictionary, static_cast<std::uint8_t>(schema::DictKind::thread), body);
    threads_written_[b.index] = true;
  }

  // FORMAT.md §7.2. Each site's previous values live in one flat array;
  // a site's slots count as zero until it first appears in the batch.
  void delta_code(Batch& batch, std::uint32_t id, char* args, std::size_t size) {
    if (id >= delta_slots_.size()) delta_slots_.resize(std::max<std::size_t>(id + 1, delta_slots_.size() * 2));
    std::unique_ptr<DeltaSlots>& slots = delta_slots_[id];
    if (!slots) {
      const Site* site = site_by_id(id);
      slots = std::make_unique<DeltaSlots>(site->arg_tags, site->arg_count);
    }
    if (slots->batch != batch.sequence) {
      std::fill(slots->previous.begin(), slots->previous.end(), 0);
      slots->batch = batch.sequence;
    }
    slots->plan.apply<wire::Delta::encode>(reinterpret_cast<unsigned char*>(args), size, slots->previous.data());
  }

  // The caller has described the record's thread (once per pass is enough).
  void append_record(Batch& batch, const Cursor& c) {
    if (c.header.site_id >= sites_written_.size() || !sites_written_[c.header.site_id])
      describe_site(batch, c.header.site_id);
    char* out = batch.records.tail(8 + 4 * 10 + c.header.args_size);
    if (batch.record_count == 0) {
      std::memcpy(out, &c.header.ticks, 8);
      out += 8;
      batch.last_ticks = c.header.ticks;
    }
    out = wire::write_varint(out, c.header.site_id);
    out = wire::write_varint(out, c.buffer->index);
    out = wire::write_varint(out, wire::zigzag(static_cast<std::int64_t>(c.header.ticks - batch.last_ticks)));
    out = wire::write_varint(out, c.header.args_size);
    if (c.header.args_size >= TextInterner::kMinLength) batch.has_long_args = true;
    std::memcpy(out, c.args, c.header.args_size);
    if (c.header.site_id != schema::kControlSiteId) delta_code(batch, c.header.site_id, out, c.header.args_size);
    batch.records.commit(out + c.header.args_size);
    batch.last_ticks = c.header.ticks;
    ++batch.record_count;
  }

  // Drains every buffer up to what it had committed when the pass began, in
  // time order, stopping at `cutoff`. Returns the number of records taken.
  std::size_t drain(std::uint64_t cutoff, Batch*& batch) {
    // A thread between its timestamp and its commit holds the cutoff back
    // to its previous timestamp. The marker is read before the commit
    // position: a call that clears it has published its record first.
    for (ThreadBuffer* b : buffers_) cutoff = std::min(cutoff, b->in_call_since.load(std::memory_order_acquire));
    cursors_.clear();
    for (ThreadBuffer* b : buffers_) {
      Cursor c{b, b->consumed.load(std::memory_order_relaxed), b->committed.load(std::memory_order_acquire), {},
               nullptr};
      if (c.end - c.position > b->highest_fill.load(std::memory_order_relaxed))
        b->highest_fill.store(c.end - c.position, std::memory_order_relaxed);
      if (load(c)) {
        describe_thread(*batch, *b);
        cursors_.push_back(c);
      }
    }
    auto later = [](const Cursor& a, const Cursor& b) { return a.header.ticks > b.header.ticks; };
    std::make_heap(cursors_.begin(), cursors_.end(), later);
    std::size_t taken = 0;
    while (!cursors_.empty()) {
      std::pop_heap(cursors_.begin(), cursors_.end(), later);
      Cursor& c = cursors_.back();
      if (c.header.ticks > cutoff) {
        publish(c);
        cursors_.pop_back();
        continue;  // this thread's later records wait for the next pass
      }
      // Threads log in runs: take this thread's records up to the next
      // thread's first one without touching the heap in between.
      std::uint64_t limit = cursors_.size() > 1 ? std::min(cutoff, cursors_.front().header.ticks) : cutoff;
      bool more;
      do {
        append_record(*batch, c);
        ++taken;
        c.position += ring_stride(c.header.args_size);
        if (batch->records.size() >= kBatchTargetBytes) {
          publish_consumed();
          submit(batch);
          batch = take_batch();
          batch_opened_ = {};
        }
        more = load(c);
      } while (more && c.header.ticks <= limit);
      if (more) {
        std::push_heap(cursors_.begin(), cursors_.end(), later);
      } else {
        publish(c);
        cursors_.pop_back();
      }
    }
    return taken;
  }

  // Hands the ring space behind the cursor back to its thread.
  static void publish(const Cursor& c) {
    c.buffer->consumed.store(c.position, std::memory_order_release);
    room_freed(*c.buffer);
  }

  void publish_consumed() {
    for (const Cursor& c : cursors_) publish(c);
  }

  // A flush writes every record logged before it. A call in flight when
  // the flush began finishes within nanoseconds unless its thread was
  // preempted; it is waited for (briefly) so it does not land after later
  // records of other threads.
  void wait_for_calls_in_flight() {
    auto give_up = std::chrono::steady_clock::now() + 10ms;
    for (ThreadBuffer* b : buffers_) {
      std::uint64_t marker = b->in_call_since.load(std::memory_order_acquire);
      if (marker == kNotInCall) continue;
      std::uint64_t committed = b->committed.load(std::memory_order_acquire);
      while (b->in_call_since.load(std::memory_order_acquire) == marker &&
             b->committed.load(std::memory_order_acquire) == committed &&
             std::chrono::steady_clock::now() < give_up) {
        std::this_thread::yield();
      }
    }
  }

  bool anything_pending() const {
    for (const ThreadBuffer* b : buffers_) {
      if (b->committed.load(std::memory_order_acquire) != b->consumed.load(std::memory_order_relaxed)) return true;
    }
    return false;
  }

  void collect_loop() {
    Batch* batch = take_batch();
    auto idle_since = std::chrono::steady_clock::now();
    for (;;) {
      std::uint64_t flush_target = flush_requested_.load(std::memory_order_acquire);
      bool stopping = stop_requested_.load(std::memory_order_acquire);
      bool drain_all = stopping || flush_target > flush_handled_;
      refresh_buffers();
      recalibrate(*batch);
      if (drain_all) wait_for_calls_in_flight();
      std::uint64_t now = ticks();
      std::uint64_t cutoff = drain_all ? kNotInCall : now - window_ticks_;
      std::size_t taken = drain(cutoff, batch);
      for (ThreadBuffer* b : buffers_) report_drops(*batch, *b, now);
      release_abandoned(*batch);
      if (drain_all) {
        batch->flush_sequence = flush_target;
        flush_handled_ = flush_target;
        if (stopping && !anything_pending()) {
          batch->last = true;
          submit(batch);
          return;
        }
      }
      // Small batches compress badly, so a batch fills until it is big or
      // has waited long enough for a reader following the file.
      auto now_steady = std::chrono::steady_clock::now();
      if (batch->record_count > 0 && batch_opened_ == std::chrono::steady_clock::time_point{})
        batch_opened_ = now_steady;
      bool due = batch->flush_sequence != 0 ||
                 (batch->record_count > 0 && now_steady - batch_opened_ >= kMaxBatchDelay);
      if (due) {
        submit(batch);
        batch = take_batch();
        batch_opened_ = {};
      }
      if (taken > 0) {
        idle_since = now_steady;
        if (!drain_all) std::this_thread::yield();
        continue;
      }
      auto idle_for = std::chrono::steady_clock::now() - idle_since;
      auto sleep = idle_for < 100ms ? 1ms : 10ms;
      auto& wakeup = io_wakeup();
      std::unique_lock lock(wakeup.mutex);
      wakeup.cv.wait_for(lock, sleep, [&] {
        return stop_requested_.load(std::memory_order_acquire) ||
               flush_requested_.load(std::memory_order_acquire) > flush_handled_;
      });
    }
  }

  Batch* take_batch() {
    std::unique_lock lock(mutex_);
    batch_returned_.wait(lock, [&] { return !free_batches_.empty(); });
    Batch* batch = free_batches_.back();
    free_batches_.pop_back();
    batch->clear();
    batch->sequence = ++batches_taken_;
    return batch;
  }

  void submit(Batch* batch) {
    {
      std::lock_guard lock(mutex_);
      full_batches_.push_back(batch);
    }
    batch_ready_.notify_one();
  }

  // ---- writer -----------------------------------------------------------

  void write_loop() {
    for (;;) {
      Batch* batch = nullptr;
      std::uint64_t sync_target;
      {
        std::unique_lock lock(mutex_);
        auto ready = [&] { return !full_batches_.empty() || sync_requested_ > sync_completed_; };
        if (unsynced_bytes_ > 0 && config_.fsync_interval.count() > 0) {
          batch_ready_.wait_until(lock, unsynced_since_ + config_.fsync_interval, ready);
        } else {
          batch_ready_.wait(lock, ready);
        }
        if (!full_batches_.empty()) {
          batch = full_batches_.front();
          full_batches_.pop_front();
        }
        sync_target = sync_requested_;
      }
      if (batch != nullptr) {
        absorb(*batch);
        bool written = write_batch(*batch) || write_failed(*batch);
        if (written && failing_) write_recovered();
      }
      bool durable_wanted = sync_target > sync_completed_;
      if (durable_wanted || sync_due()) sync_file();
      bool last = batch != nullptr && batch->last;
      if (last) sync_file();
      {
        std::lock_guard lock(mutex_);
        if (batch != nullptr) {
          if (batch->flush_sequence > flush_completed_) flush_completed_ = batch->flush_sequence;
          flushed_through_.store(flush_completed_, std::memory_order_release);
          free_batches_.push_back(batch);
        }
        if (durable_wanted) sync_completed_ = sync_target;
        if (last) writer_done_ = true;
      }
      batch_returned_.notify_one();
      flushed_.notify_all();
      if (last) return;
    }
  }

  bool sync_due() const {
    if (unsynced_bytes_ == 0) return false;
    if (config_.fsync_bytes > 0 && unsynced_bytes_ >= config_.fsync_bytes) return true;
    return config_.fsync_interval.count() > 0 &&
           std::chrono::steady_clock::now() - unsynced_since_ >= config_.fsync_interval;
  }

  void sync_file() {
    if (fd_ < 0 || unsynced_bytes_ == 0) return;
    if (::fdatasync(fd_) != 0) {
      write_errors_.fetch_add(1, std::memory_order_relaxed);
      config_.on_error("fdatasync of " + path_ + " failed: " + std::strerror(errno));
    }
    syncs_.fetch_add(1, std::memory_order_relaxed);
    unsynced_bytes_ = 0;
  }

  // Takes in what a batch adds to the process-wide state, once per batch
  // however often writing it is tried.
  void absorb(const Batch& batch) {
    dictionary_.append(batch.dictionary);
    if (batch.calibration_changed) calibration_written_ = batch.calibration;
  }

  // False when the batch did not reach the file (the file is left as it was).
  bool write_batch(const Batch& batch) {
    if (batch.record_count == 0 && batch.dictionary.empty() && !batch.calibration_changed) return true;
    bool fresh = false;
    if (fd_ < 0 || file_bytes_ >= config_.roll_bytes ||
        (config_.roll_daily && local_date(realtime_ns()) != file_date_)) {
      if (!open_file(false)) return false;
      fresh = true;  // the new file's opening frames already hold the dictionary
    } else if (!file_started_) {
      if (!(file_started_ = write_file_start())) return false;
      fresh = true;
    }
    out_.clear();
    int level = crashing_.load(std::memory_order_relaxed) ? 0 : config_.compression_level;
    // After a failed write the dictionary entries of lost batches are
    // missing from the file: repeat all of them (readers take the latest).
    bool whole_dictionary = replay_dictionary_ && !fresh;
    if ((batch.calibration_changed || whole_dictionary) && !fresh)
      append_frame(out_, schema::FrameType::calibration, calibration_payload(calibration_written_), 0, cctx_,
                   scratch_);
    if (whole_dictionary) {
      append_dictionary_frames(out_, dictionary_, level, cctx_, scratch_);
    } else if (!batch.dictionary.empty() && !fresh) {
      append_dictionary_frames(out_, batch.dictionary, level, cctx_, scratch_);
    }
    std::string_view records = batch.records;
    if (batch.record_count > 0 && batch.has_long_args) {
      interned_entries_.clear();
      if (interner_.rewrite(records, interned_records_, interned_entries_)) {
        records = interned_records_;
        if (!interned_entries_.empty())
          append_dictionary_frames(out_, interned_entries_, level, cctx_, scratch_);
      }
    }
    if (batch.record_count > 0) append_frame(out_, schema::FrameType::records, records, level, cctx_, scratch_);
    if (!append_to_file(out_)) {
      interner_.discard();
      return false;
    }
    interner_.confirm();
    replay_dictionary_ = false;
    records_written_.fetch_add(batch.record_count, std::memory_order_relaxed);
    bytes_in_.fetch_add(batch.records.size() + batch.dictionary.size(), std::memory_order_relaxed);
    return true;
  }

  // A write that fails part-way is cut back, so the file never holds a torn
  // frame in front of good ones.
  bool append_to_file(std::string_view bytes) {
    std::uint64_t start = file_bytes_;
    if (write_all(bytes)) return true;
    if (file_bytes_ != start && ::ftruncate(fd_, static_cast<off_t>(start)) == 0) {
      bytes_out_.fetch_sub(file_bytes_ - start, std::memory_order_relaxed);
      unsynced_bytes_ -= std::min(unsynced_bytes_, file_bytes_ - start);
      file_bytes_ = start;
    }
    return false;
  }

  // Disk full, file too large, I/O error: reported once; the block policy
  // holds the batch and retries (callers block as buffers fill), the drop
  // policy counts its records as lost. Stopping gives up holding.
  bool write_failed(const Batch& batch) {
    bool hold = config_.overflow == Overflow::block;
    if (!failing_) {
      failing_ = true;
      config_.on_error("writing " + (path_.empty() ? config_.directory : path_) +
                       " failed: " + std::strerror(last_errno_) +
                       (hold ? "; records are held until writes succeed again"
                             : "; records are dropped and counted until writes succeed again"));
    }
    replay_dictionary_ = true;
    auto pause = std::chrono::milliseconds(10);
    while (hold && !stop_requested_.load(std::memory_order_acquire)) {
      std::this_thread::sleep_for(pause);
      pause = std::min<std::chrono::milliseconds>(pause * 2, std::chrono::milliseconds(500));
      if (write_batch(batch)) return true;
    }
    if (batch.record_count > 0) {
      std::uint64_t first = wire::get_le<std::uint64_t>(
          reinterpret_cast<const unsigned char*>(std::string_view(batch.records).data()));
      lost_first_ticks_ = lost_records_ == 0 ? first : std::min(lost_first_ticks_, first);
      lost_last_ticks_ = std::max(lost_last_ticks_, batch.last_ticks);
      std::uint64_t earlier_drops = 0;
      std::uint64_t lost = log_records_in(batch, earlier_drops);
      // Drops a lost control record reported are counted in stats already.
      lost_records_ += lost + earlier_drops;
      dropped_released_.fetch_add(lost, std::memory_order_relaxed);
    }
    return false;
  }

  // The log records of a batch; `drops` gets what its "dropped" control
  // records reported, since those reports are lost with it.
  static std::uint64_t log_records_in(const Batch& batch, std::uint64_t& drops) {
    std::uint64_t count = 0;
    wire::Reader r(std::string_view(batch.records));
    r.skip(8);
    BatchRecord record;
    while (!r.empty() && next_batch_record(r, record)) {
      std::uint64_t dropped = 0;
      std::string_view args = record.args;
      if (record.site_id == schema::kControlSiteId && args.size() >= 9 &&
          args[0] == static_cast<char>(schema::ControlKind::dropped)) {
        std::memcpy(&dropped, args.data() + 1, 8);
        drops += dropped;
      } else {
        ++count;
      }
    }
    return count;
  }

  // Writes work again: say so, and put the loss into the log itself.
  void write_recovered() {
    failing_ = false;
    std::string note = "writing " + path_ + " works again";
    if (lost_records_ > 0) {
      // FORMAT.md §7: a "dropped" control record; thread index 0 stands for
      // the writer, since the lost records came from any thread.
      std::string payload;
      wire::put_le<std::uint64_t>(payload, lost_last_ticks_);
      std::string args;
      args.push_back(static_cast<char>(schema::ControlKind::dropped));
      wire::put_le<std::uint64_t>(args, lost_records_);
      wire::put_le<std::uint64_t>(args, lost_first_ticks_);
      wire::put_le<std::uint64_t>(args, lost_last_ticks_);
      wire::put_varint(payload, schema::kControlSiteId);
      wire::put_varint(payload, 0);
      wire::put_varint(payload, 0);
      wire::put_bytes(payload, args);
      out_.clear();
      append_frame(out_, schema::FrameType::records, payload, 0, cctx_, scratch_);
      if (append_to_file(out_)) {
        note += "; " + std::to_string(lost_records_) + " records logged in the meantime are lost, as the log now says";
        lost_records_ = 0;
      }
    }
    config_.on_error(note);
  }

  bool write_all(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        last_errno_ = errno;
        write_errors_.fetch_add(1, std::memory_order_relaxed);
        return false;
      }
      bytes.remove_prefix(static_cast<std::size_t>(n));
      file_bytes_ += static_cast<std::uint64_t>(n);
      bytes_out_.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_relaxed);
      if (unsynced_bytes_ == 0) unsynced_since_ = std::chrono::steady_clock::now();
      unsynced_bytes_ += static_cast<std::uint64_t>(n);
    }
    return true;
  }

  struct LogFile {
    fs::path path;
    std::string date;
    unsigned sequence = 0;
    std::uint64_t bytes = 0;
  };

  // This logger's files (NAME-YYYYMMDD-NNN.tlog) in the directory, oldest first.
  std::vector<LogFile> log_files() const {
    std::vector<LogFile> files;
    std::string prefix = config_.name + "-";
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(config_.directory, ec)) {
      std::string file = entry.path().filename().string();
      // prefix, 8 digits, '-', at least one digit, ".tlog"
      if (file.size() < prefix.size() + 15 || file.compare(0, prefix.size(), prefix) != 0) continue;
      if (file.compare(file.size() - 5, 5, ".tlog") != 0 || file[prefix.size() + 8] != '-') continue;
      std::string date = file.substr(prefix.size(), 8);
      std::string digits = file.substr(prefix.size() + 9, file.size() - prefix.size() - 14);
      auto all_digits = [](const std::string& s) { return s.find_first_not_of("0123456789") == std::string::npos; };
      if (!all_digits(date) || digits.empty() || digits.size() > 9 || !all_digits(digits)) continue;
      std::error_code size_error;
      std::uint64_t bytes = entry.file_size(size_error);
      files.push_back({entry.path(), date, static_cast<unsigned>(std::stoul(digits)), size_error ? 0 : bytes});
    }
    std::sort(files.begin(), files.end(), [](const LogFile& a, const LogFile& b) {
      return std::tie(a.date, a.sequence) < std::tie(b.date, b.sequence);
    });
    return files;
  }

  // Sequence numbers continue after those already in the directory for the
  // day, so a restart never overwrites a file.
  unsigned next_sequence(const std::string& date) const {
    unsigned highest = 0;
    for (const LogFile& f : log_files())
      if (f.date == date) highest = std::max(highest, f.sequence);
    return highest + 1;
  }

  // Retention: the oldest files go first, never the one being written, and
  // files left by earlier runs count as much as this run's.
  void apply_retention() {
    if (config_.max_files == 0 && config_.max_total_bytes == 0) return;
    std::vector<LogFile> files = log_files();
    std::uint64_t total = 0;
    for (const LogFile& f : files) total += f.bytes;
    std::size_t count = files.size();
    for (const LogFile& f : files) {
      bool too_many = config_.max_files != 0 && count > config_.max_files;
      bool too_big = config_.max_total_bytes != 0 && total > config_.max_total_bytes;
      if (!too_many && !too_big) break;
      if (f.path == fs::path(path_)) continue;
      std::error_code ec;
      if (fs::remove(f.path, ec)) {
        --count;
        total -= f.bytes;
        files_removed_.fetch_add(1, std::memory_order_relaxed);
      } else if (ec) {
        config_.on_error("retention cannot remove " + f.path.string() + ": " + ec.message());
      }
    }
  }

  bool open_file(bool throw_on_error) {
    std::string date = local_date(realtime_ns());
    if (date != file_date_) {
      file_date_ = date;
      sequence_ = next_sequence(date);
    }
    for (int attempt = 0; attempt < 1000; ++attempt, ++sequence_) {
      char suffix[32];
      std::snprintf(suffix, sizeof suffix, "-%s-%03u.tlog", date.c_str(), sequence_);
      std::string path = (fs::path(config_.directory) / (config_.name + suffix)).string();
      int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
                      static_cast<mode_t>(config_.file_mode));
      if (fd < 0 && errno == EEXIST) continue;
      if (fd < 0) {
        last_errno_ = errno;
        std::string message = "cannot create " + path + ": " + std::strerror(errno);
        if (throw_on_error) throw Error("terse: " + message);
        return false;
      }
      if (fd_ >= 0) {
        sync_file();  // a rolled file is complete: make it durable before letting go
        ::close(fd_);
      }
      fd_ = fd;
      current_fd_.store(fd, std::memory_order_release);
      path_ = path;
      file_bytes_ = 0;
      interner_.new_file();
      files_opened_.fetch_add(1, std::memory_order_relaxed);
      file_started_ = write_file_start();
      ++sequence_;
      apply_retention();
      return file_started_;
    }
    std::string message = "no free file name in " + config_.directory;
    if (throw_on_error) throw Error("terse: " + message);
    config_.on_error(message);
    return false;
  }

  // Preamble, info, calibration and the whole dictionary so far: every file
  // decodes on its own.
  bool write_file_start() {
    out_.clear();
    out_.append(reinterpret_cast<const char*>(schema::kMagic), sizeof schema::kMagic);
    wire::put_le<std::uint16_t>(out_, schema::kVersionMajor);
    wire::put_le<std::uint16_t>(out_, schema::kVersionMinor);
    wire::put_le<std::uint32_t>(out_, wire::crc32c(out_.data(), schema::kPreambleCrcOffset));
    std::string info;
    auto put_info = [&](schema::InfoKey key, const std::string& value) {
      put_entry(info, static_cast<std::uint8_t>(key), value);
    };
    auto varint_text = [](std::uint64_t v) {
      std::string s;
      wire::put_varint(s, v);
      return s;
    };
    put_info(schema::InfoKey::writer, kWriterName);
    put_info(schema::InfoKey::pid, varint_text(static_cast<std::uint64_t>(::getpid())));
    put_info(schema::InfoKey::host, host_name());
    put_info(schema::InfoKey::program, program_name());
    put_info(schema::InfoKey::file_sequence, varint_text(sequence_));
    put_info(schema::InfoKey::clock, TERSE_CLOCK_TSC ? "tsc" : "monotonic");
    put_info(schema::InfoKey::created_unix_ns, varint_text(static_cast<std::uint64_t>(realtime_ns())));
    put_info(schema::InfoKey::private_values, private_values_word());
    append_frame(out_, schema::FrameType::info, info, 0, cctx_, scratch_);
    append_frame(out_, schema::FrameType::calibration, calibration_payload(calibration_written_), 0, cctx_,
                 scratch_);
    append_dictionary_frames(out_, dictionary_, config_.compression_level, cctx_, scratch_);
    return append_to_file(out_);
  }

  Config config_;
  Calibration anchor_;
  Calibration calibration_;          // collector's latest
  Calibration calibration_written_;  // writer's latest
  std::uint64_t window_ticks_ = 0;

  std::thread collector_;
  std::thread writer_;
  std::mutex mutex_;
  std::condition_variable flushed_;
  std::condition_variable batch_ready_;
  std::condition_variable batch_returned_;
  std::atomic<std::uint64_t> flush_requested_{0};
  std::uint64_t flush_completed_ = 0;
  std::atomic<std::uint64_t> flushed_through_{0};  // flush_completed_, readable from a signal handler
  std::atomic<pid_t> collector_tid_{0};
  std::atomic<int> current_fd_{-1};  // the file being written, for the crash path
  std::vector<char> emergency_;      // pre-allocated: the crash path allocates nothing
  std::atomic<pid_t> writer_tid_{0};
  // A crash flush is under way: frames are stored, not compressed, to
  // depend on as little as possible.
  std::atomic<bool> crashing_{false};
  std::uint64_t sync_requested_ = 0;  // under mutex_
  std::uint64_t sync_completed_ = 0;  // under mutex_
  std::atomic<bool> stop_requested_{false};
  bool writer_done_ = false;

  // Collector-only state.
  std::vector<ThreadBuffer*> buffers_;
  std::uint64_t buffers_generation_ = 0;
  std::vector<Cursor> cursors_;
  std::vector<std::uint8_t> sites_written_;
  std::vector<std::uint8_t> threads_written_;
  std::uint64_t flush_handled_ = 0;
  struct DeltaSlots {
    DeltaSlots(const std::uint8_t* tags, std::size_t count) : plan(tags, count), previous(count) {}
    wire::DeltaPlan plan;
    std::vector<std::uint64_t> previous;
    std::uint64_t batch = 0;
  };
  std::vector<std::unique_ptr<DeltaSlots>> delta_slots_;
  std::uint64_t batches_taken_ = 0;
  std::chrono::steady_clock::time_point batch_opened_{};

  Batch batches_[kBatchCount];
  std::vector<Batch*> free_batches_;
  std::deque<Batch*> full_batches_;

  // Counters for stats(), written by the IO threads.
  std::atomic<std::uint64_t> records_written_{0};
  std::atomic<std::uint64_t> bytes_in_{0};
  std::atomic<std::uint64_t> bytes_out_{0};
  std::atomic<std::uint64_t> files_opened_{0};
  std::atomic<std::uint64_t> files_removed_{0};
  std::atomic<std::uint64_t> write_errors_{0};
  std::atomic<std::uint64_t> syncs_{0};
  std::atomic<std::uint64_t> dropped_released_{0};  // drops of threads whose buffers are gone

  // Writer-only state.
  bool file_started_ = false;       // the current file's opening frames are written
  bool failing_ = false;            // the last write failed
  bool replay_dictionary_ = false;  // batches were lost since the dictionary was last whole
  int last_errno_ = 0;
  std::uint64_t lost_records_ = 0;
  std::uint64_t lost_first_ticks_ = 0;
  std::uint64_t lost_last_ticks_ = 0;
  std::uint64_t unsynced_bytes_ = 0;
  std::chrono::steady_clock::time_point unsynced_since_{};
  ZSTD_CCtx* cctx_ = nullptr;
  std::string dictionary_;  // every entry written so far, replayed into each new file
  TextInterner interner_;   // per file
  std::string interned_records_;
  std::string interned_entries_;
  std::string out_;
  std::string scratch_;
  int fd_ = -1;
  std::string path_;
  std::string file_date_;
  unsigned sequence_ = 1;
  std::uint64_t file_bytes_ = 0;

  friend void terse::start(const Config&);
};

namespace {

std::mutex g_lifecycle;
std::unique_ptr<Logger> g_logger;
std::atomic<Logger*> g_crash_target{nullptr};  // the running logger, for the signal handler
std::atomic<bool> g_active{false};

void validate(const Config& config) {
  if (config.directory.empty()) throw Error("terse: Config::directory is empty");
  if (config.name.empty()) throw Error("terse: Config::name is empty");
  if (config.name.find('/') != std::string::npos || config.name == "." || config.name == "..")
    throw Error("terse: Config::name '" + config.name + "' must be a plain file name prefix, without '/'");
  std::size_t b = config.thread_buffer_bytes;
  // A record may take half a ring and must fit one frame (FORMAT.md §3).
  if (b < kMinRingCapacity || b > schema::kMaxFrameRawSize || (b & (b - 1)) != 0)
    throw Error("terse: Config::thread_buffer_bytes must be a power of two from 4 KiB to 64 MiB, not " +
                std::to_string(b));
  if (config.roll_bytes < 4096)
    throw Error("terse: Config::roll_bytes must be at least 4096, not " + std::to_string(config.roll_bytes));
  if (config.compression_level < -7 || config.compression_level > ZSTD_maxCLevel())
    throw Error("terse: Config::compression_level must be -7 to " + std::to_string(ZSTD_maxCLevel()) +
                ", not " + std::to_string(config.compression_level));
  if (static_cast<int>(config.level) > static_cast<int>(Level::off))
    throw Error("terse: Config::level is not a valid level");
  if (config.file_mode > 07777) throw Error("terse: Config::file_mode is not a permission mode");
  if (config.fsync_interval.count() < 0) throw Error("terse: Config::fsync_interval is negative");
  if (config.ordering_window < std::chrono::microseconds(0) || config.ordering_window > std::chrono::seconds(10))
    throw Error("terse: Config::ordering_window must be between 0 and 10 s");
  if (config.max_container_elements < 1 || config.max_container_elements > schema::kCountMask)
    throw Error("terse: Config::max_container_elements must be 1 to 2^31-1, not " +
                std::to_string(config.max_container_elements));
  if (static_cast<int>(config.private_values) > static_cast<int>(PrivateValues::clear))
    throw Error("terse: Config::private_values is not a valid mode");
  if (config.private_values == PrivateValues::hash && config.private_key.empty())
    throw Error("terse: Config::private_values = hash needs a Config::private_key");
  std::error_code ec;
  fs::create_directories(config.directory, ec);
  if (ec) throw Error("terse: cannot create directory '" + config.directory + "': " + ec.message());
  if (!fs::is_directory(config.directory, ec))
    throw Error("terse: '" + config.directory + "' is not a directory");
  if (::access(config.directory.c_str(), W_OK | X_OK) != 0)
    throw Error("terse: directory '" + config.directory + "' is not writable: " + std::strerror(errno));
}

void stop_at_exit() { terse::stop(); }

// fork(): the child gets no IO threads, so it must not wait for them. It
// starts out not logging (its calls are discarded) and may call start()
// to log into a file of its own. The locks are held across fork() so the
// child never inherits one held by a thread it does not have.
void before_fork() {
  g_lifecycle.lock();
  buffer_registry().mutex.lock();
}

void after_fork_in_parent() {
  buffer_registry().mutex.unlock();
  g_lifecycle.unlock();
}

void after_fork_in_child() {
  g_hot.level.store(static_cast<int>(Level::off), std::memory_order_relaxed);
  buffer_settings().running.store(false, std::memory_order_relaxed);
  g_active.store(false, std::memory_order_relaxed);
  g_crash_target.store(nullptr, std::memory_order_relaxed);
  (void)g_logger.release();  // its threads are the parent's: never join or destroy it here
  g_wakeup = new Wakeup;     // the parent's IO thread may have held the old one's mutex
  auto& registry = buffer_registry();
  for (ThreadBuffer* b : registry.buffers) {
    // Records waiting in the copied buffers are the parent's to write.
    b->consumed.store(b->committed.load(std::memory_order_relaxed), std::memory_order_relaxed);
    b->cached_read = b->write_pos;
    if (b != tls_buffer) b->abandoned.store(true, std::memory_order_relaxed);
  }
  registry.mutex.unlock();
  g_lifecycle.unlock();
}

}  // namespace

void flush_for_crash() noexcept {
  static std::atomic<bool> flushed{false};  // a crash flushes once, however it unwinds
  if (flushed.exchange(true)) return;
  if (Logger* logger = g_crash_target.load(std::memory_order_acquire)) logger->flush_from_signal();
}

void wake_io_thread() noexcept {
  auto& wakeup = io_wakeup();
  { std::lock_guard lock(wakeup.mutex); }  // orders the wake after a waiter's predicate check
  wakeup.cv.notify_all();
}

}  // namespace detail

void start(const Config& config) {
  using namespace detail;
  std::lock_guard lock(g_lifecycle);
  if (g_logger) throw Error("terse: start() called while already running; call stop() first");
  validate(config);
  set_private_key(config.private_key);
  g_hot.max_container_elements.store(config.max_container_elements, std::memory_order_relaxed);
  set_private_values(config.private_values);
  auto logger = std::make_unique<Logger>(config);
  auto& settings = buffer_settings();
  settings.buffer_bytes.store(config.thread_buffer_bytes, std::memory_order_relaxed);
  settings.drop_when_full.store(config.overflow == Overflow::drop, std::memory_order_relaxed);
  settings.crash_handler.store(config.crash_handler, std::memory_order_relaxed);
  settings.running.store(true, std::memory_order_release);
  logger->run();
  g_active.store(true, std::memory_order_release);
  g_logger = std::move(logger);
  if (config.crash_handler) {
    g_crash_target.store(g_logger.get(), std::memory_order_release);
    install_crash_handlers();
  }
  static bool hooks_registered =
      (std::atexit(stop_at_exit), pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child), true);
  (void)hooks_registered;
  g_hot.level.store(static_cast<int>(config.level), std::memory_order_relaxed);
}

void flush() {
  using namespace detail;
  std::lock_guard lock(g_lifecycle);
  if (g_logger) g_logger->flush();
}

void flush(Durable) {
  using namespace detail;
  std::lock_guard lock(g_lifecycle);
  if (g_logger) g_logger->flush_durable();
}

Stats stats() {
  using namespace detail;
  std::lock_guard lock(g_lifecycle);
  return g_logger ? g_logger->stats() : Stats{};
}

void stop() {
  using namespace detail;
  std::lock_guard lock(g_lifecycle);
  if (!g_logger) return;
  g_hot.level.store(static_cast<int>(Level::off), std::memory_order_relaxed);
  g_crash_target.store(nullptr, std::memory_order_release);
  uninstall_crash_handlers();
  g_logger->stop();
  buffer_settings().running.store(false, std::memory_order_release);
  g_active.store(false, std::memory_order_release);
  g_logger.reset();
}

void set_async(bool asynchronous) noexcept {
  detail::g_hot.synchronous.store(!asynchronous, std::memory_order_relaxed);
}

namespace detail {
void wait_until_written() noexcept {
  try {
    terse::flush();
  } catch (...) {
    // flush() only throws when a mutex cannot be locked; the record is in
    // the buffer regardless and will be written.
  }
}
}  // namespace detail

void set_level(Level level) noexcept {
  if (detail::g_active.load(std::memory_order_acquire))
    detail::g_hot.level.store(static_cast<int>(level), std::memory_order_relaxed);
}

Level level() noexcept { return static_cast<Level>(detail::g_hot.level.load(std::memory_order_relaxed)); }

}  // namespace terse
