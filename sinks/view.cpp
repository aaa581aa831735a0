// The view thread ("terse-view"): decodes the writer's batches with the
// decoder library, as `terse cat` decodes a file, and renders them for the
// console and the callback. It shares the batches' bytes, not their
// memory: the writer copies each one into a queue of a few, and when the
// queue is full (the console or the callback is behind) counts its records
// as not shown instead of waiting.
#include "runtime/view.hpp"

#include <fcntl.h>
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
      wire::Reader b(entry.body);
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
  bool console_full() const { return output->closed() || output->backlog() + chunk.size() >= kConsoleBacklog; }
  void call_back(const decoder::Record& record, std::uint8_t level);
  void show_notice();
  void report(std::string text) {
    if (on_error) on_error(std::move(text));
  }
  // Records at or above the console's and the callback's levels, for
  // those that cannot take them; a level of 255 for one that is off.
  std::uint8_t console_cut() const { return console ? console_level : std::uint8_t{255}; }
  std::uint8_t callback_cut() const { return callback ? callback_level : std::uint8_t{255}; }

  // Settings.
  bool console = false;
  std::uint8_t console_level = 0;
  bool json = false;
  std::optional<decoder::LinePattern> pattern;
  decoder::TimeStyle style;
  std::function<void(const Record&)> callback;
  std::uint8_t callback_level = 0;
  std::function<void(const std::string&)> on_error;
  bool files = true;

  SiteLevels writer_levels;  // the writer's own
  SiteLevels view_levels;    // the view thread's own

  std::mutex mutex;
  std::condition_variable ready;    // the view thread: a message is queued
  std::condition_variable handled;  // flush waiters
  std::deque<std::unique_ptr<Message>> queue;
  std::vector<std::unique_ptr<Message>> pool;
  std::size_t queued_with_records = 0;
  std::size_t queued_bytes = 0;     // of the copies that wait
  std::uint64_t handled_flush = 0;  // guarded; also in the atomics below for signal handlers
  std::uint64_t handled_ticket = 0;

  // The view thread's own.
  std::thread thread;
  decoder::StreamDecoder decoder;
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

  std::atomic<std::uint64_t> flushed_through{0};  // handled_flush
  std::atomic<std::uint64_t> ticket_through{0};   // handled_ticket
  std::atomic<std::uint64_t> moved{0};            // progress(): messages handled
  std::atomic<std::uint64_t> console_records{0};
  std::atomic<std::uint64_t> console_not_shown{0};
  std::atomic<std::uint64_t> callback_records{0};
  std::atomic<std::uint64_t> callback_missed{0};
  std::atomic<std::uint64_t> callback_errors{0};
};

View::Impl::Impl(const Config& config)
    : console(config.console != Console::off),
      console_level(static_cast<std::uint8_t>(config.console_level)),
      json(config.console == Console::json),
      callback(config.on_record),
      callback_level(static_cast<std::uint8_t>(config.callback_level)),
      on_error(config.on_error),
      files(!config.directory.empty()),
      decoder("console", [this](const decoder::Problem& problem) {
        if (problems_said++ < kDecoderProblemsReported) report("console: " + problem.what);
      }) {
  if (console) {
    if (::fcntl(config.console_fd, F_GETFD) < 0)
      throw Error("terse: Config::console_fd " + std::to_string(config.console_fd) + " is not an open descriptor");
    if (!json) {
      try {
        pattern.emplace(config.console_format.empty() ? std::string(decoder::kDefaultPattern) : config.console_format);
      } catch (const std::exception& e) {
        throw Error(std::string("terse: Config::console_format: ") + e.what());
      }
    }
    style.color = (config.console == Console::color ||
                   (config.console == Console::automatic && ::isatty(config.console_fd) == 1)) &&
                  color_allowed();
    output = std::make_unique<sinks::ConsoleOutput>(config.console_fd);
  }
  notice_site.level = kWarn;
  notice_site.file = schema::kOwnFileName;
  notice_site.format = console_notice_format();
  notice_site.tags = {static_cast<std::uint8_t>(schema::TypeTag::u64)};
  notice_site.check = decoder::check_format(notice_site.format, notice_site.tags);
  std::uint8_t lowest =
      std::min(console ? console_level : std::uint8_t{255}, callback ? callback_level : std::uint8_t{255});
  decoder::Filter filter;
  filter.site = [lowest](const decoder::Site& site) { return site.level >= lowest; };
  filter.dropped = lowest <= kWarn;
  decoder.set_filter(std::move(filter));
  decoder.start_feed();
}

void View::Impl::offer(const Batch& batch) {
  writer_levels.learn(batch.dictionary);
  bool has_records = batch.record_count > 0;
  std::unique_ptr<Message> message;
  bool copy = false;
  {
    std::lock_guard lock(mutex);
    std::size_t bytes = batch.columns().size();
    copy = has_records && (queued_with_records == 0 ||
                           (queued_with_records < kMostQueuedMessages && queued_bytes + bytes <= kQueuedBytes));
    if (copy) {
      ++queued_with_records;
      queued_bytes += bytes;
      if (!pool.empty()) {
        message = std::move(pool.back());
        pool.pop_back();
      }
    } else if (!queue.empty() && !queue.back()->copied && !queue.back()->last) {
      // Nothing of this batch for the view thread to decode: it joins the
      // message before, so a view that is behind holds a few, not one per batch.
      Message& before = *queue.back();
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
      ready.notify_one();
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
  std::lock_guard lock(mutex);
  queue.push_back(std::move(message));
  ready.notify_one();
}

void View::Impl::run() {
  {
    // The copies' pages, touched here rather than by the writer on its first batches.
    std::lock_guard lock(mutex);
    while (pool.size() < kQueuedBatches + 1) {
      pool.push_back(std::make_unique<Message>());
      pool.back()->rows.reset_capacity(kBatchPreparedBytes);
    }
  }
  notice_thread.os_tid = thread_id();
  for (;;) {
    std::unique_ptr<Message> message;
    {
      std::unique_lock lock(mutex);
      ready.wait(lock, [&] { return !queue.empty(); });
      message = std::move(queue.front());
      queue.pop_front();
      if (message->copied) {
        --queued_with_records;
        queued_bytes -= message->columns().size();
      }
    }
    handle(*message);
    std::uint64_t ticket = output ? output->push(chunk) : 0;
    bool last = message->last;
    {
      std::lock_guard lock(mutex);
      if (message->flush_sequence > handled_flush) {
        handled_flush = message->flush_sequence;
        handled_ticket = ticket;
        ticket_through.store(ticket, std::memory_order_relaxed);
        flushed_through.store(handled_flush, std::memory_order_release);
      }
      message->clear();
      if (pool.size() <= kQueuedBatches) pool.push_back(std::move(message));
    }
    moved.fetch_add(1, std::memory_order_relaxed);
    handled.notify_all();
    if (last) break;
  }
  if (not_shown_unsaid > 0) show_notice();
  std::uint64_t ticket = output ? output->push(chunk) : 0;
  {
    // Nothing more comes: no flush waits for this view any longer.
    std::lock_guard lock(mutex);
    handled_flush = UINT64_MAX;
    handled_ticket = ticket;
    ticket_through.store(ticket, std::memory_order_relaxed);
    flushed_through.store(handled_flush, std::memory_order_release);
  }
  handled.notify_all();
}

void View::Impl::handle(const Message& message) {
  if (message.calibration_changed)
    decoder.feed_calibration(message.calibration.ticks, message.calibration.unix_ns,
                             message.calibration.ticks_per_second);
  if (!message.dictionary.empty()) {
    decoder.feed_dictionary(message.dictionary);
    view_levels.learn(message.dictionary);
  }
  std::uint64_t shown = 0;
  std::uint64_t not_shown = message.console_skipped;
  missed_unsaid += message.callback_skipped;
  callback_missed.fetch_add(message.callback_skipped, std::memory_order_relaxed);
  if (not_shown_unsaid > 0 && output && !output->closed() && output->backlog() < kConsoleBacklog / 2) show_notice();
  bool decoded = message.copied && !(!callback && console_full());
  // Records not decoded take their context pushes and pops with them.
  if (!decoded && message.contexts_changed) decoder.replace_contexts(message.contexts);
  if (message.copied && !decoded) {
    // Nothing would be shown: counted without being decoded.
    std::uint64_t none = 0;
    view_levels.count(message.columns(), console_level, not_shown, 255, none);
  } else if (decoded) {
    joined.clear();
    join_columns(message.columns(), joined);
    decoder.feed_records(joined, message.flight);
    decoder::Record record;
    while (decoder.next(record)) {
      std::uint8_t level = record.site != nullptr ? record.site->level : kWarn;
      message_text.clear();
      json_made = false;
      bool to_callback = callback && level >= callback_level;
      if (console && level >= console_level) ++(show(record, to_callback) ? shown : not_shown);
      if (to_callback) call_back(record, level);
    }
  }
  console_records.fetch_add(shown, std::memory_order_relaxed);
  not_shown_unsaid += not_shown;
  console_not_shown.fetch_add(not_shown, std::memory_order_relaxed);
  if (missed_unsaid > 0 && std::chrono::steady_clock::now() - missed_said >= kMissedReportEvery) {
    report("on_record could not keep up: " + std::to_string(missed_unsaid) + " records were not passed to it" +
           (files ? " (the file has them)" : ""));
    missed_unsaid = 0;
    missed_said = std::chrono::steady_clock::now();
  }
  if (output && output->closed() && !closed_said) {
    closed_said = true;
    int failure = output->failure();
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
    decoder::render_message(record, message_text, nullptr, &style);
    if (pattern) {
      pattern->append(chunk, record, style, message_text);
    } else {
      decoder::append_json_record(chunk, record, style, message_text, {});
    }
  } else if (pattern) {
    pattern->append(chunk, record, style);
  } else {
    decoder::append_json_record(chunk, record, style);
  }
  return true;
}

void View::Impl::call_back(const decoder::Record& record, std::uint8_t level) {
  if (message_text.empty()) decoder::render_message(record, message_text, nullptr, &style);
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
  r.message = message_text;
  r.dropped = record.kind == decoder::RecordKind::dropped ? record.dropped_count : 0;
  r.suppressed = record.suppressed;
  context_text.clear();
  decoder::append_context_text(context_text, record.context);
  r.context = context_text;
  calling = &record;
  RecordAccess::set_json(
      r,
      [](const void* context) -> std::string_view {
        auto* self = static_cast<Impl*>(const_cast<void*>(context));
        if (!self->json_made) {
          self->json_text.clear();
          decoder::TimeStyle plain = self->style;
          plain.color = false;
          decoder::append_json_record(self->json_text, *self->calling, plain, self->message_text, {});
          if (!self->json_text.empty() && self->json_text.back() == '\n') self->json_text.pop_back();
          self->json_made = true;
        }
        return self->json_text;
      },
      this);
  try {
    callback(r);
  } catch (const std::exception& e) {
    if (callback_errors.fetch_add(1, std::memory_order_relaxed) == 0)
      report(std::string("on_record threw: ") + e.what() + "; it is still called for later records");
  } catch (...) {
    if (callback_errors.fetch_add(1, std::memory_order_relaxed) == 0)
      report("on_record threw; it is still called for later records");
  }
  callback_records.fetch_add(1, std::memory_order_relaxed);
}

// "N records not shown on the console", as a record of its own in the
// console's format, once the console has room again.
void View::Impl::show_notice() {
  if (!output || output->closed()) return;
  decoder::Arg count;
  count.tag = static_cast<std::uint8_t>(schema::TypeTag::u64);
  count.u = not_shown_unsaid;
  decoder::Record record;
  record.site = &notice_site;
  record.thread = &notice_thread;
  record.args = std::span<const decoder::Arg>(&count, 1);
  record.unix_ns = realtime_ns();
  if (pattern) {
    pattern->append(chunk, record, style);
  } else {
    decoder::append_json_record(chunk, record, style);
  }
  not_shown_unsaid = 0;
}

std::unique_ptr<View> View::create(const Config& config, const Calibration& calibration) {
  if (config.console == Console::off && !config.on_record) return nullptr;
  auto impl = std::make_unique<Impl>(config);
  // As the file opens with it (FORMAT.md §5).
  impl->decoder.feed_calibration(calibration.ticks, calibration.unix_ns, calibration.ticks_per_second);
  return std::unique_ptr<View>(new View(std::move(impl)));
}

View::View(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

View::~View() = default;

void View::start() {
  Impl& v = *impl_;
  if (v.output) v.output->start();
  v.thread = std::thread([&v] { v.run(); });
  place_thread(v.thread, "terse-view");
}

void View::offer(const Batch& batch) { impl_->offer(batch); }

void View::finish() {
  Impl& v = *impl_;
  if (v.thread.joinable()) v.thread.join();
  if (v.output) v.output->finish();
}

void View::wait_for_flush(std::uint64_t sequence) {
  Impl& v = *impl_;
  std::uint64_t ticket;
  {
    std::unique_lock lock(v.mutex);
    v.handled.wait(lock, [&] { return v.handled_flush >= sequence; });
    ticket = v.handled_ticket;
  }
  if (v.output) v.output->wait_written(ticket);
}

bool View::shown_through(std::uint64_t sequence) const noexcept {
  const Impl& v = *impl_;
  if (v.flushed_through.load(std::memory_order_acquire) < sequence) return false;
  return !v.output || v.output->closed() || v.output->written(v.ticket_through.load(std::memory_order_relaxed));
}

std::uint64_t View::progress() const noexcept {
  const Impl& v = *impl_;
  return v.moved.load(std::memory_order_relaxed) + (v.output ? v.output->bytes_written() : 0);
}

void View::add_to(Stats& stats) const {
  Impl& v = *impl_;
  stats.console_records = v.console_records.load(std::memory_order_relaxed);
  stats.console_not_shown = v.console_not_shown.load(std::memory_order_relaxed);
  stats.console_writes = v.output ? v.output->writes() : 0;
  stats.callback_records = v.callback_records.load(std::memory_order_relaxed);
  stats.callback_missed = v.callback_missed.load(std::memory_order_relaxed);
  stats.callback_errors = v.callback_errors.load(std::memory_order_relaxed);
  std::int64_t busy = 0;
  if (v.thread.joinable()) busy += thread_cpu_ns(v.thread);
  if (v.output && v.output->running()) busy += thread_cpu_ns(v.output->thread());
  stats.view_busy = std::chrono::nanoseconds(busy);
}

}  // namespace terse::detail
