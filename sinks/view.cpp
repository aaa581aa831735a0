// The view thread ("terse-view"): decodes the writer's batches with the
// decoder library, as `terse cat` decodes a file, and renders them for the
// console and the callback. It shares the batches' bytes, not their
// memory: the writer copies each one into a queue of a few, and when the
// queue is full (the console or the callback is behind) counts its records
// as not shown instead of waiting.
#include "runtime/view.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include <terse/decoder.hpp>
#include <terse/dictionary.hpp>
#include <terse/wire.hpp>

#include "runtime/clock.hpp"
#include "runtime/pipeline.hpp"
#include "runtime/placement.hpp"
#include "runtime/platform.hpp"
#include "sinks/console_output.hpp"

namespace terse::detail {

struct RecordAccess {
  static void set_json(Record& record, std::string_view (*json)(const void*), const void* context) {
    record.json_ = json;
    record.json_context_ = context;
  }
};

namespace {

// Batches with records waiting for the view thread, as many as fill this
// many full batches; past that the writer counts a batch's records as not
// shown rather than copy it. Counted in bytes, not batches: small batches
// come in bursts (a flight recorder's trigger sends three at once), and a
// burst must not cost the console or the callback the record that sent it.
constexpr std::size_t kQueuedBatches = 4;
constexpr std::size_t kQueuedBytes = kQueuedBatches * kBatchTargetBytes;
constexpr std::size_t kMostQueuedMessages = 16;
// Rendered text waiting for the console; past this records are not shown.
constexpr std::size_t kConsoleBacklog = std::size_t{2} << 20;
// How often on_error hears that the callback misses records.
constexpr auto kMissedReportEvery = std::chrono::seconds(10);
constexpr int kDecoderProblemsReported = 10;

constexpr auto kWarn = static_cast<std::uint8_t>(Level::warn);

std::string_view console_notice_format() { return "{} records not shown on the console: it could not keep up"; }

bool color_allowed() {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return !(no_color && *no_color) && !(term && std::strcmp(term, "dumb") == 0);
}

// What the writer hands over of one batch.
struct Message {
  std::string dictionary;
  // The batch's records (RecordColumns); empty: none, or not copied (then
  // counted below).
  ByteBuffer rows;
  std::string ticks;
  std::uint64_t base = 0;
  RecordColumns columns() const { return {base, rows, ticks}; }
  bool calibration_changed = false;
  Calibration calibration;
  std::uint64_t console_skipped = 0;
  std::uint64_t callback_skipped = 0;
  std::uint64_t flush_sequence = 0;
  bool last = false;
  bool copied = false;  // `records` holds the batch's records
  bool flight = false;  // they are the flight recorder's
  // The contexts open after the batch (pipeline.hpp), for a view that skips
  // its records and so misses their pushes and pops.
  bool contexts_changed = false;
  std::string contexts;

  void clear() {
    dictionary.clear();
    rows.clear();
    ticks.clear();
    calibration_changed = false;
    console_skipped = callback_skipped = 0;
    flush_sequence = 0;
    last = false;
    copied = false;
    flight = false;
    contexts_changed = false;
    contexts.clear();
  }
};

// The level of each call site, by id, learned from the dictionary entries
// as they pass: what a batch's records are counted by when they are
// skipped without being decoded.
class SiteLevels {
 public:
  void learn(std::string_view dictionary) {
    schema::for_each_entry(dictionary, [this](const schema::EntryView& entry) {
      if (entry.kind != static_cast<std::uint8_t>(schema::DictKind::site)) return true;
      wire::ByteReader b(entry.body);
      std::uint64_t id;
      std::uint8_t level;
      if (!b.varint(id) || !b.le(level) || id > kMostSites) return true;
      if (levels_.size() <= id) levels_.resize(id + 1, 0);
      levels_[id] = level;
      return true;
    });
  }
  // How many of a records payload's records are at or above each level.
  void count(const RecordColumns& records, std::uint8_t console_level, std::uint64_t& console,
             std::uint8_t callback_level, std::uint64_t& callback) const {
    ColumnsReader r(records);
    BatchRecord record;
    while (!r.empty() && r.next(record)) {
      std::uint8_t level = record.site_id == schema::kControlSiteId ? kWarn
                           : record.site_id < levels_.size()        ? levels_[record.site_id]
                                                                    : 0;
      console += level >= console_level;
      callback += level >= callback_level;
    }
  }

 private:
  static constexpr std::uint64_t kMostSites = std::uint64_t{1} << 24;
  std::vector<std::uint8_t> levels_;
};

}  // namespace

struct View::Impl {
  explicit Impl(const Config& config);

  void offer(const Batch& batch);
  void run();
  void handle(const Message& message);
  bool show(const decoder::Record& record, bool message_wanted);
  bool console_full() const {
    return own.output->closed() || own.output->backlog() + own.chunk.size() >= kConsoleBacklog;
  }
  void call_back(const decoder::Record& record, std::uint8_t level);
  void show_notice();
  void report(std::string text) {
    if (settings.on_error) settings.on_error(std::move(text));
  }
  // Records at or above the console's and the callback's levels, for
  // those that cannot take them; a level of 255 for one that is off.
  std::uint8_t console_cut() const { return settings.console ? settings.console_level : std::uint8_t{255}; }
  std::uint8_t callback_cut() const { return settings.callback ? settings.callback_level : std::uint8_t{255}; }

  // Set at start, read by every thread.
  struct Settings {
    bool console = false;
    std::uint8_t console_level = 0;
    bool json = false;
    std::optional<decoder::LinePattern> pattern;
    decoder::TimeStyle style;
    std::function<void(const Record&)> callback;
    std::uint8_t callback_level = 0;
    std::function<void(const std::string&)> on_error;
    bool files = true;
  };
  // Between the writer and the view thread, under `mutex`.
  struct Handoff {
    std::mutex mutex;
    std::condition_variable ready;    // the view thread: a message is queued
    std::condition_variable handled;  // flush waiters
    std::deque<std::unique_ptr<Message>> queue;
    std::vector<std::unique_ptr<Message>> pool;
    std::size_t queued_with_records = 0;
    std::size_t queued_bytes = 0;     // of the copies that wait
    std::uint64_t handled_flush = 0;  // also in Counts, for signal handlers
    std::uint64_t handled_ticket = 0;
  };
  // The view thread's own (the console output it writes to runs a thread of its own).
  struct ViewThread {
    explicit ViewThread(decoder::Reporter reporter) : decoder("console", std::move(reporter)) {}
    std::thread thread;
    decoder::StreamDecoder decoder;
    SiteLevels view_levels;
    ByteBuffer joined;  // a message's records as the decoder reads them (FORMAT.md §7)
    std::unique_ptr<sinks::ConsoleOutput> output;
    std::string chunk;
    std::string message_text;
    std::string json_text;
    bool json_made = false;
    const decoder::Record* calling = nullptr;  // the record json() renders
    std::string context_text;                  // the record's terse::Context fields, for on_record
    std::uint64_t not_shown_unsaid = 0;        // not shown and not yet said so on the console
    std::uint64_t missed_unsaid = 0;
    std::chrono::steady_clock::time_point missed_said{};
    bool closed_said = false;
    int problems_said = 0;
    decoder::Site notice_site;
    decoder::Thread notice_thread;
  };
  // Read by any thread, signal handlers included.
  struct Counts {
    std::atomic<std::uint64_t> flushed_through{0};  // Handoff::handled_flush
    std::atomic<std::uint64_t> ticket_through{0};   // Handoff::handled_ticket
    std::atomic<std::uint64_t> moved{0};            // progress(): messages handled
    std::atomic<std::uint64_t> console_records{0};
    std::atomic<std::uint64_t> console_not_shown{0};
    std::atomic<std::uint64_t> callback_records{0};
    std::atomic<std::uint64_t> callback_missed{0};
    std::atomic<std::uint64_t> callback_errors{0};
  };

  Settings settings;
  SiteLevels writer_levels;  // the writer thread's own
  Handoff handoff;
  ViewThread own;
  Counts counts;
};

View::Impl::Impl(const Config& config)
    : settings{.console = config.console != Console::off,
               .console_level = static_cast<std::uint8_t>(config.console_level),
               .json = config.console == Console::json,
               .pattern = std::nullopt,
               .style = {},
               .callback = config.on_record,
               .callback_level = static_cast<std::uint8_t>(config.callback_level),
               .on_error = config.on_error,
               .files = !config.directory.empty()},
      own([this](const decoder::Problem& problem) {
        if (own.problems_said++ < kDecoderProblemsReported) report("console: " + problem.what);
      }) {
  if (settings.console) {
    if (!descriptor_open(config.console_fd))
      throw Error("terse: Config::console_fd " + std::to_string(config.console_fd) + " is not an open descriptor");
    if (!settings.json) {
      try {
        settings.pattern.emplace(config.console_format.empty() ? std::string(decoder::kDefaultPattern)
                                                               : config.console_format);
      } catch (const std::exception& e) {
        throw Error(std::string("terse: Config::console_format: ") + e.what());
      }
    }
    settings.style.color = (config.console == Console::color ||
                            (config.console == Console::automatic && ::isatty(config.console_fd) == 1)) &&
                           color_allowed();
    own.output = std::make_unique<sinks::ConsoleOutput>(config.console_fd);
  }
  own.notice_site.level = kWarn;
  own.notice_site.file = schema::kOwnFileName;
  own.notice_site.format = console_notice_format();
  own.notice_site.tags = {static_cast<std::uint8_t>(schema::TypeTag::u64)};
  own.notice_site.check = decoder::check_format(own.notice_site.format, own.notice_site.tags);
  std::uint8_t lowest = std::min(settings.console ? settings.console_level : std::uint8_t{255},
                                 settings.callback ? settings.callback_level : std::uint8_t{255});
  decoder::Filter filter;
  filter.site = [lowest](const decoder::Site& site) { return site.level >= lowest; };
  filter.dropped = lowest <= kWarn;
  own.decoder.set_filter(std::move(filter));
  own.decoder.start_feed();
}

void View::Impl::offer(const Batch& batch) {
  writer_levels.learn(batch.dictionary);
  bool has_records = batch.record_count > 0;
  std::unique_ptr<Message> message;
  bool copy = false;
  {
    std::lock_guard lock(handoff.mutex);
    std::size_t bytes = batch.columns().size();
    copy = has_records && (handoff.queued_with_records == 0 || (handoff.queued_with_records < kMostQueuedMessages &&
                                                                handoff.queued_bytes + bytes <= kQueuedBytes));
    if (copy) {
      ++handoff.queued_with_records;
      handoff.queued_bytes += bytes;
      if (!handoff.pool.empty()) {
        message = std::move(handoff.pool.back());
        handoff.pool.pop_back();
      }
    } else if (!handoff.queue.empty() && !handoff.queue.back()->copied && !handoff.queue.back()->last) {
      // Nothing of this batch for the view thread to decode: it joins the
      // message before, so a view that is behind holds a few, not one per batch.
      Message& before = *handoff.queue.back();
      before.dictionary += batch.dictionary;
      if (batch.calibration_changed) {
        before.calibration_changed = true;
        before.calibration = batch.calibration;
      }
      if (has_records)
        writer_levels.count(batch.columns(), console_cut(), before.console_skipped, callback_cut(),
                            before.callback_skipped);
      before.flush_sequence = std::max(before.flush_sequence, batch.flush_sequence);
      if (batch.contexts_changed) {
        before.contexts_changed = true;
        before.contexts = batch.contexts;
      }
      before.last = batch.last;
      handoff.ready.notify_one();
      return;
    }
  }
  if (!message) message = std::make_unique<Message>();
  message->dictionary = batch.dictionary;
  message->calibration_changed = batch.calibration_changed;
  message->calibration = batch.calibration;
  message->flush_sequence = batch.flush_sequence;
  message->contexts_changed = batch.contexts_changed;
  message->contexts = batch.contexts;
  message->last = batch.last;
  message->copied = copy;
  message->flight = batch.flight;
  if (copy) {
    RecordColumns records = batch.columns();
    message->rows.clear();
    char* at = message->rows.tail(records.rows.size());
    std::memcpy(at, records.rows.data(), records.rows.size());
    message->rows.commit(at + records.rows.size());
    message->ticks.assign(records.ticks);
    message->base = records.base;
  } else if (has_records) {
    writer_levels.count(batch.columns(), console_cut(), message->console_skipped, callback_cut(),
                        message->callback_skipped);
  }
  std::lock_guard lock(handoff.mutex);
  handoff.queue.push_back(std::move(message));
  handoff.ready.notify_one();
}

void View::Impl::run() {
  {
    // The copies' pages, touched here rather than by the writer on its first batches.
    std::lock_guard lock(handoff.mutex);
    while (handoff.pool.size() < kQueuedBatches + 1) {
      handoff.pool.push_back(std::make_unique<Message>());
      handoff.pool.back()->rows.reset_capacity(kBatchPreparedBytes);
    }
  }
  own.notice_thread.os_tid = thread_id();
  for (;;) {
    std::unique_ptr<Message> message;
    {
      std::unique_lock lock(handoff.mutex);
      handoff.ready.wait(lock, [&] { return !handoff.queue.empty(); });
      message = std::move(handoff.queue.front());
      handoff.queue.pop_front();
      if (message->copied) {
        --handoff.queued_with_records;
        handoff.queued_bytes -= message->columns().size();
      }
    }
    handle(*message);
    std::uint64_t ticket = own.output ? own.output->push(own.chunk) : 0;
    bool last = message->last;
    {
      std::lock_guard lock(handoff.mutex);
      if (message->flush_sequence > handoff.handled_flush) {
        handoff.handled_flush = message->flush_sequence;
        handoff.handled_ticket = ticket;
        counts.ticket_through.store(ticket, std::memory_order_relaxed);
        counts.flushed_through.store(handoff.handled_flush, std::memory_order_release);
      }
      message->clear();
      if (handoff.pool.size() <= kQueuedBatches) handoff.pool.push_back(std::move(message));
    }
    counts.moved.fetch_add(1, std::memory_order_relaxed);
    handoff.handled.notify_all();
    if (last) break;
  }
  if (own.not_shown_unsaid > 0) show_notice();
  std::uint64_t ticket = own.output ? own.output->push(own.chunk) : 0;
  {
    // Nothing more comes: no flush waits for this view any longer.
    std::lock_guard lock(handoff.mutex);
    handoff.handled_flush = UINT64_MAX;
    handoff.handled_ticket = ticket;
    counts.ticket_through.store(ticket, std::memory_order_relaxed);
    counts.flushed_through.store(handoff.handled_flush, std::memory_order_release);
  }
  handoff.handled.notify_all();
}

void View::Impl::handle(const Message& message) {
  if (message.calibration_changed)
    own.decoder.feed_calibration(message.calibration.ticks, message.calibration.unix_ns,
                                 message.calibration.ticks_per_second);
  if (!message.dictionary.empty()) {
    own.decoder.feed_dictionary(message.dictionary);
    own.view_levels.learn(message.dictionary);
  }
  std::uint64_t shown = 0;
  std::uint64_t not_shown = message.console_skipped;
  own.missed_unsaid += message.callback_skipped;
  counts.callback_missed.fetch_add(message.callback_skipped, std::memory_order_relaxed);
  if (own.not_shown_unsaid > 0 && own.output && !own.output->closed() && own.output->backlog() < kConsoleBacklog / 2)
    show_notice();
  bool decoded = message.copied && !(!settings.callback && console_full());
  // Records not decoded take their context pushes and pops with them.
  if (!decoded && message.contexts_changed) own.decoder.replace_contexts(message.contexts);
  if (message.copied && !decoded) {
    // Nothing would be shown: counted without being decoded.
    std::uint64_t none = 0;
    own.view_levels.count(message.columns(), settings.console_level, not_shown, 255, none);
  } else if (decoded) {
    own.joined.clear();
    join_columns(message.columns(), own.joined);
    own.decoder.feed_records(own.joined, message.flight);
    decoder::Record record;
    while (own.decoder.next(record)) {
      std::uint8_t level = record.site != nullptr ? record.site->level : kWarn;
      own.message_text.clear();
      own.json_made = false;
      bool to_callback = settings.callback && level >= settings.callback_level;
      if (settings.console && level >= settings.console_level) ++(show(record, to_callback) ? shown : not_shown);
      if (to_callback) call_back(record, level);
    }
  }
  counts.console_records.fetch_add(shown, std::memory_order_relaxed);
  own.not_shown_unsaid += not_shown;
  counts.console_not_shown.fetch_add(not_shown, std::memory_order_relaxed);
  if (own.missed_unsaid > 0 && std::chrono::steady_clock::now() - own.missed_said >= kMissedReportEvery) {
    report("on_record could not keep up: " + std::to_string(own.missed_unsaid) + " records were not passed to it" +
           (settings.files ? " (the file has them)" : ""));
    own.missed_unsaid = 0;
    own.missed_said = std::chrono::steady_clock::now();
  }
  if (own.output && own.output->closed() && !own.closed_said) {
    own.closed_said = true;
    int failure = own.output->failure();
    // A reader that left (EPIPE) is said nowhere: the console it would go to is that pipe.
    if (failure != EPIPE)
      report(std::string("writing to the console failed: ") + std::strerror(failure) +
             "; records are no longer shown there");
  }
}

// The console's line for one record; false (not shown) when the console is
// closed or that much behind.
bool View::Impl::show(const decoder::Record& record, bool message_wanted) {
  if (console_full()) return false;
  if (message_wanted) {
    // The callback wants the message too: rendered once for both.
    decoder::render_message(record, own.message_text, &settings.style);
    if (settings.pattern) {
      settings.pattern->append(own.chunk, record, settings.style, own.message_text);
    } else {
      decoder::append_json_record(own.chunk, record, settings.style, own.message_text, {});
    }
  } else if (settings.pattern) {
    settings.pattern->append(own.chunk, record, settings.style);
  } else {
    decoder::append_json_record(own.chunk, record, settings.style);
  }
  return true;
}

void View::Impl::call_back(const decoder::Record& record, std::uint8_t level) {
  if (own.message_text.empty()) decoder::render_message(record, own.message_text, &settings.style);
  bool is_log = record.site != nullptr;  // a log record or a suppressed-calls report
  Record r;
  r.level = static_cast<Level>(level);
  r.flight = record.flight;
  r.time_ns = record.unix_ns;
  r.thread = record.thread->shown_id();
  r.thread_name = record.thread->name;
  r.file = is_log ? std::string_view(record.site->file) : std::string_view(schema::kOwnFileName);
  r.line = is_log ? record.site->line : 0;
  r.format = is_log ? std::string_view(record.site->format) : std::string_view();
  r.message = own.message_text;
  r.dropped = record.kind == decoder::RecordKind::dropped ? record.dropped_count : 0;
  r.suppressed = record.suppressed;
  own.context_text.clear();
  decoder::append_context_text(own.context_text, record.context);
  r.context = own.context_text;
  own.calling = &record;
  RecordAccess::set_json(
      r,
      [](const void* context) -> std::string_view {
        auto* self = static_cast<Impl*>(const_cast<void*>(context));
        if (!self->own.json_made) {
          self->own.json_text.clear();
          decoder::TimeStyle plain = self->settings.style;
          plain.color = false;
          decoder::append_json_record(self->own.json_text, *self->own.calling, plain, self->own.message_text, {});
          if (!self->own.json_text.empty() && self->own.json_text.back() == '\n') self->own.json_text.pop_back();
          self->own.json_made = true;
        }
        return self->own.json_text;
      },
      this);
  try {
    settings.callback(r);
  } catch (const std::exception& e) {
    if (counts.callback_errors.fetch_add(1, std::memory_order_relaxed) == 0)
      report(std::string("on_record threw: ") + e.what() + "; it is still called for later records");
  } catch (...) {
    if (counts.callback_errors.fetch_add(1, std::memory_order_relaxed) == 0)
      report("on_record threw; it is still called for later records");
  }
  counts.callback_records.fetch_add(1, std::memory_order_relaxed);
}

// "N records not shown on the console", as a record of its own in the
// console's format, once the console has room again.
void View::Impl::show_notice() {
  if (!own.output || own.output->closed()) return;
  decoder::Arg count;
  count.tag = static_cast<std::uint8_t>(schema::TypeTag::u64);
  count.u = own.not_shown_unsaid;
  decoder::Record record;
  record.site = &own.notice_site;
  record.thread = &own.notice_thread;
  record.args = std::span<const decoder::Arg>(&count, 1);
  record.unix_ns = realtime_ns();
  if (settings.pattern) {
    settings.pattern->append(own.chunk, record, settings.style);
  } else {
    decoder::append_json_record(own.chunk, record, settings.style);
  }
  own.not_shown_unsaid = 0;
}

std::unique_ptr<View> View::create(const Config& config, const Calibration& calibration) {
  if (config.console == Console::off && !config.on_record) return nullptr;
  auto impl = std::make_unique<Impl>(config);
  // As the file opens with it (FORMAT.md §5).
  impl->own.decoder.feed_calibration(calibration.ticks, calibration.unix_ns, calibration.ticks_per_second);
  return std::unique_ptr<View>(new View(std::move(impl)));
}

View::View(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

View::~View() = default;

void View::start() {
  Impl& v = *impl_;
  if (v.own.output) v.own.output->start();
  v.own.thread = std::thread([&v] { v.run(); });
  place_thread(v.own.thread, "terse-view");
}

void View::offer(const Batch& batch) { impl_->offer(batch); }

void View::finish() {
  Impl& v = *impl_;
  if (v.own.thread.joinable()) v.own.thread.join();
  if (v.own.output) v.own.output->finish();
}

void View::wait_for_flush(std::uint64_t sequence) {
  Impl& v = *impl_;
  std::uint64_t ticket;
  {
    std::unique_lock lock(v.handoff.mutex);
    v.handoff.handled.wait(lock, [&] { return v.handoff.handled_flush >= sequence; });
    ticket = v.handoff.handled_ticket;
  }
  if (v.own.output) v.own.output->wait_written(ticket);
}

bool View::shown_through(std::uint64_t sequence) const noexcept {
  const Impl& v = *impl_;
  if (v.counts.flushed_through.load(std::memory_order_acquire) < sequence) return false;
  return !v.own.output || v.own.output->closed() ||
         v.own.output->written(v.counts.ticket_through.load(std::memory_order_relaxed));
}

std::uint64_t View::progress() const noexcept {
  const Impl& v = *impl_;
  return v.counts.moved.load(std::memory_order_relaxed) + (v.own.output ? v.own.output->bytes_written() : 0);
}

void View::add_to(Stats& stats) const {
  Impl& v = *impl_;
  stats.console_records = v.counts.console_records.load(std::memory_order_relaxed);
  stats.console_not_shown = v.counts.console_not_shown.load(std::memory_order_relaxed);
  stats.console_writes = v.own.output ? v.own.output->writes() : 0;
  stats.callback_records = v.counts.callback_records.load(std::memory_order_relaxed);
  stats.callback_missed = v.counts.callback_missed.load(std::memory_order_relaxed);
  stats.callback_errors = v.counts.callback_errors.load(std::memory_order_relaxed);
  std::int64_t busy = 0;
  if (v.own.thread.joinable()) busy += thread_cpu_ns(v.own.thread);
  if (v.own.output && v.own.output->running()) busy += thread_cpu_ns(v.own.output->thread());
  stats.view_busy = std::chrono::nanoseconds(busy);
}

}  // namespace terse::detail
