// `terse ship`: reads logs as `terse cat -f -o json` does and produces each
// record to Kafka through librdkafka, at least once (kafka_producer.hpp says
// how). A run goes through its stages: start (options, cursor file,
// producer, inputs), produce round after round, drain, finish.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <filesystem>

#include <terse/reader.hpp>

#include "commands.hpp"
#include "cursor_file.hpp"
#include "filters.hpp"
#include "kafka_producer.hpp"
#include "mask.hpp"
#include "output.hpp"
#include "printer.hpp"

namespace terse::cli {
namespace {

std::string parent_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

std::atomic<int> stop_requests{0};

void request_stop(int) { stop_requests.fetch_add(1, std::memory_order_relaxed); }

bool stop_requested() { return stop_requests.load(std::memory_order_relaxed) != 0; }

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

constexpr const char* kProgram = "terse ship";

int usage_error(const std::string& text) {
  std::fprintf(stderr, "terse ship: %s\n", text.c_str());
  return kShipUsage;
}

// ---- records too large for a message ----------------------------------------------

// A record whose JSON exceeds message.max.bytes would be refused for good,
// and as the cursor cannot pass it, would stop shipping for good too. It is
// shipped as a stand-in instead: the same keys, the message cut, "args" null
// and "cut" saying how large the record was, so the loss is visible where
// the logs are read.
void append_cut_record(std::string& out, const reader::Record& record, const reader::Formatter& without_args,
                       std::string message, std::size_t json_bytes, std::size_t limit) {
  // Escaping can grow text up to six times (\u00XX); cut so that even then it fits.
  std::size_t keep = limit > 4096 ? (limit - 4096) / 6 : 0;
  if (message.size() > keep) {
    std::size_t at = keep;
    while (at > 0 && (static_cast<unsigned char>(message[at]) & 0xC0) == 0x80) --at;  // not inside a character
    message.resize(at);
  }
  // The keys as terse cat writes them, "args" null; "cut" goes last.
  without_args.append(record, message, out);
  out.resize(out.size() - 2);  // "}\n"
  out += ",\"cut\":{\"json_bytes\":" + std::to_string(json_bytes) + ",\"message.max.bytes\":" + std::to_string(limit) +
         "}}";
}

// ---- progress -------------------------------------------------------------------------

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds);
  return text;
}

// From /proc, not getrusage: ru_maxrss survives exec, so a shipper started
// by a large process would report its parent's peak.
long peak_rss_kib() {
  std::FILE* status = std::fopen("/proc/self/status", "r");
  if (!status) return 0;
  char line[256];
  long kib = 0;
  while (std::fgets(line, sizeof line, status))
    if (std::strncmp(line, "VmHWM:", 6) == 0) kib = std::atol(line + 6);
  std::fclose(status);
  return kib;
}

// One run of `terse ship`.
class Shipper {
 public:
  explicit Shipper(const ShipOptions& o)
      : o_(o), cursor_file_(o.cursor_file), problems_(kProgram, TornTails::count_silently) {}

  // An exit code when shipping cannot start.
  std::optional<int> start();
  void produce_all();
  // Everything produced gets its chance to be acknowledged: --drain-timeout
  // from the first SIGTERM or SIGINT; a second one stops waiting.
  void drain();
  int finish();

 private:
  std::optional<int> check_options();
  std::optional<int> open_inputs(const std::string& saved_cursor);
  void read_round();
  bool ship_record(const reader::Record& record);
  void cut_to_fit(const reader::Record& record);
  bool produce(const reader::Record& record);
  void wait_for_next_round();
  void take_checkpoint();
  void save_cursor(bool now);
  void say_saver_news();
  void print_stats(bool now);
  void judge_topic(rd_kafka_resp_err_t err, const char* meanwhile);
  void check_stall();
  void keep_up();
  void serve(int timeout_ms);
  bool failed() const { return state_.fatal || state_.ledger.refusal(); }
  bool may_read() const { return !stop_requested() && !failed() && !problems_.bad_resume(); }

  static constexpr std::uint32_t kCheckpointEvery = 256, kPollEvery = 1024;

  const ShipOptions& o_;
  reader::FormatOptions format_;
  Filters filters_;
  std::optional<Masker> mask_;
  CursorFile cursor_file_;
  KafkaState state_;
  Ledger& ledger_ = state_.ledger;
  Producer producer_;
  ProblemReporter problems_;
  std::optional<reader::Reader> reader_;
  reader::ChangeWaiter changes_;
  std::optional<Printer> printer_;
  std::optional<reader::Formatter> cut_formatter_;
  std::optional<CursorSaver> saver_;
  reader::Record record_;
  std::string message_;
  std::string key_;

  std::int64_t last_save_ms_ = 0;  // the first place reached is saved at once
  std::optional<std::string> unsaved_;
  // Set when reading stopped after a record that was never produced: no
  // checkpoint may be taken past it.
  bool abandoned_ = false;
  std::uint32_t since_checkpoint_ = 0, since_poll_ = 0;
  bool caught_up_ = false;
  std::int64_t last_read_ns_ = 0;
  std::uint64_t full_waits_ = 0;
  std::uint64_t cut_records_ = 0;
  std::int64_t stats_every_ms_ = 0;
  std::int64_t last_stats_ms_ = 0;
  std::uint64_t last_stats_records_ = 0;
  std::int64_t progress_ms_ = 0;
  std::uint64_t progress_acked_ = 0;
  int stops_seen_ = 0;
};

std::optional<int> Shipper::start() {
  if (auto code = check_options()) return code;
  Result<std::string> saved_cursor = cursor_file_.open();
  if (!saved_cursor) return usage_error("--cursor-file: " + saved_cursor.why());
  if (Result<> started = producer_.start(o_, state_); !started) return usage_error(started.why());
  install_stop_handlers();
  if (auto code = open_inputs(*saved_cursor)) return code;
  printer_.emplace(format_, filters_.grep, mask_ ? &*mask_ : nullptr);
  reader::FormatOptions cut = format_;
  cut.json_args = false;
  cut_formatter_.emplace(cut);
  saver_.emplace(cursor_file_);
  stats_every_ms_ = o_.stats_interval_s > 0 ? std::max<std::int64_t>(1, std::int64_t(o_.stats_interval_s * 1000)) : 0;
  last_stats_ms_ = steady_ms();
  progress_ms_ = steady_ms();
  // Asking for the topic first spares the first records the second that
  // librdkafka otherwise takes to look it up, and says early when it cannot
  // be written; a cluster that does not answer yet is waited for as usual.
  judge_topic(producer_.topic_state(2000), "shipping starts when it can");
  return std::nullopt;
}

std::optional<int> Shipper::check_options() {
  if (Result<> brokers = valid_brokers(o_.brokers); !brokers) return usage_error("--brokers: " + brokers.why());
  if (o_.topic.empty()) return usage_error("--topic is empty");
  for (const auto& path : o_.paths)
    if (path == "-")
      return usage_error("standard input has no places for a cursor to name: give the files or directories");
  format_.json = true;
  format_.utc = o_.filters.utc;
  try {
    if (!o_.filters.mask_path.empty()) mask_.emplace(o_.filters.mask_path);
    filters_ = make_filters(o_.filters, now_ns());
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
  return std::nullopt;
}

std::optional<int> Shipper::open_inputs(const std::string& saved_cursor) {
  reader::Options options;
  options.filter = filters_.reader_filter;
  options.follow = !o_.once;
  options.cursors = true;
  options.utc = o_.filters.utc;
  options.on_problem = problems_.handler();
  options.keys = o_.keys;
  options.signers = o_.signers;
  try {
    reader_.emplace(o_.paths, std::move(options));
  } catch (const reader::OpenError& e) {
    return usage_error(e.what());
  }
  if (saved_cursor.empty()) return std::nullopt;
  reader::ResumeResult resumed = reader_->resume_after(saved_cursor);
  if (resumed.malformed)
    return usage_error("--cursor-file " + o_.cursor_file + " does not hold a cursor: " + resumed.error +
                       "; remove it to ship from the first record");
  if (!resumed.ok) return usage_error("--cursor-file " + o_.cursor_file + ": " + resumed.error);
  for (const auto& note : resumed.notes) std::fprintf(stderr, "terse ship: resuming: %s\n", note.c_str());
  return std::nullopt;
}

void Shipper::produce_all() {
  for (;;) {
    read_round();
    if (!may_read() || o_.once) return;
    wait_for_next_round();
    reader_->poll();
    if (mask_) reload_mask(*mask_, kProgram);
  }
}

// Reads and produces until the inputs have nothing more for now.
void Shipper::read_round() {
  while (may_read()) {
    if (!reader_->next(record_)) {
      caught_up_ = true;
      break;
    }
    caught_up_ = false;
    last_read_ns_ = record_.time_ns();
    if (!ship_record(record_)) {
      abandoned_ = true;
      break;
    }
    if (++since_checkpoint_ >= kCheckpointEvery) {
      since_checkpoint_ = 0;
      take_checkpoint();
    }
    if (++since_poll_ >= kPollEvery) {
      since_poll_ = 0;
      serve(0);
    }
  }
  if (!abandoned_ && !problems_.bad_resume()) take_checkpoint();
}

// False when the record was not produced and reading must stop.
bool Shipper::ship_record(const reader::Record& record) {
  message_.clear();
  if (!printer_->print(record, message_)) return true;
  message_.pop_back();  // the newline
  if (message_.size() + 1024 > producer_.max_message_bytes() && record.kind() == reader::RecordKind::log)
    cut_to_fit(record);
  if (o_.show_cursor) add_cursor_key(message_, reader_->cursor());
  key_.clear();
  if (o_.message_key == "thread") {
    key_ = std::to_string(record.thread().os_tid);
  } else if (o_.message_key == "site" && record.kind() != reader::RecordKind::dropped) {
    key_ = std::string(record.file()) + ":" + std::to_string(record.line());
  }
  return produce(record);
}

void Shipper::cut_to_fit(const reader::Record& record) {
  std::string text;
  record.message(text);
  if (mask_) mask_->apply(text);
  std::size_t json_bytes = message_.size();
  message_.clear();
  append_cut_record(message_, record, *cut_formatter_, std::move(text), json_bytes, producer_.max_message_bytes());
  ++cut_records_;
}

// Waits while librdkafka's buffer is full; false when the record is refused
// for good or shipping stops meanwhile.
bool Shipper::produce(const reader::Record& record) {
  for (;;) {
    std::uint64_t seq = ledger_.sent(record.time_ns());
    rd_kafka_resp_err_t err = producer_.produce(message_, key_, record.time_ns() / 1'000'000, seq);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return true;
    ledger_.withdraw_last();
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      ledger_.refused(seq, rd_kafka_err2str(err));
      return false;
    }
    ++full_waits_;
    serve(100);
    if (stop_requested() || failed()) return false;
  }
}

// Acknowledgements keep coming while the files are quiet; a change to them
// ends the wait.
void Shipper::wait_for_next_round() {
  for (const auto& dir : reader_->watched_directories()) changes_.watch_directory(dir);
  if (mask_) changes_.watch_directory(parent_of(mask_->path()));
  std::int64_t until = steady_ms() + reader_->poll_interval().count();
  for (std::int64_t left; (left = until - steady_ms()) > 0 && !stop_requested();) {
    if (!changes_.watching()) {
      serve(int(std::min<std::int64_t>(left, 100)));
      continue;
    }
    // Watching the files and serving librdkafka in turn: neither waits on
    // the other for more than a few milliseconds.
    serve(0);
    if (changes_.wait(std::chrono::milliseconds(std::min<std::int64_t>(left, 5)))) return;
  }
}

void Shipper::take_checkpoint() {
  if (std::string cursor = reader_->cursor(); !cursor.empty()) ledger_.checkpoint(std::move(cursor));
}

void Shipper::save_cursor(bool now) {
  if (auto reached = ledger_.reached()) unsaved_ = std::move(*reached);
  if (unsaved_ && (now || steady_ms() - last_save_ms_ >= o_.commit_interval_ms)) {
    last_save_ms_ = steady_ms();
    saver_->post(std::move(*unsaved_));
    unsaved_.reset();
  }
  say_saver_news();
}

void Shipper::say_saver_news() {
  if (std::string news = saver_->news(); !news.empty())
    std::fprintf(stderr, "terse ship: --cursor-file: %s\n", news.c_str());
}

void Shipper::print_stats(bool now) {
  if (!stats_every_ms_) return;
  std::int64_t t = steady_ms();
  if (!now && t - last_stats_ms_ < stats_every_ms_) return;
  double span_s = double(t - last_stats_ms_) / 1000.0;
  double rate = span_s > 0 ? double(ledger_.acked_records() - last_stats_records_) / span_s : 0;
  last_stats_ms_ = t;
  last_stats_records_ = ledger_.acked_records();
  double lag_s = 0;
  auto wall_clock_ns = [] {
    return std::int64_t(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
  };
  if (auto oldest = ledger_.oldest_unacked_ns()) {
    lag_s = double(wall_clock_ns() - *oldest) / 1e9;
  } else if (!caught_up_ && last_read_ns_) {
    lag_s = double(wall_clock_ns() - last_read_ns_) / 1e9;
  }
  std::fprintf(stderr,
               "terse ship: records=%" PRIu64 " rate=%.0f/s bytes=%" PRIu64 " lag_records=%" PRIu64
               " lag_s=%s retries=%" PRIu64 " buffer_full_waits=%" PRIu64 " cut=%" PRIu64 " refused=%" PRIu64
               " damaged=%" PRIu64 " peak_rss_mib=%.1f\n",
               ledger_.acked_records(), rate, ledger_.acked_bytes(), ledger_.in_flight(),
               seconds_text(std::max(0.0, lag_s)).c_str(), state_.broker_retries + state_.transient_errors, full_waits_,
               cut_records_, ledger_.refused_count(), problems_.problems(), double(peak_rss_kib()) / 1024.0);
}

// What the cluster says of the topic: not being allowed to write it is for
// good; the rest (unknown topic, no leader) may mend, so ship says so and waits.
void Shipper::judge_topic(rd_kafka_resp_err_t err, const char* meanwhile) {
  if (err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED || err == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED) {
    if (!state_.fatal) state_.fatal = "topic " + o_.topic + ": " + rd_kafka_err2str(err);
  } else if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    state_.log.say("topic", "topic " + o_.topic + ": " + rd_kafka_err2str(err) + "; " + meanwhile);
  }
}

// Records waiting with no acknowledgement for a while: ask about the topic.
void Shipper::check_stall() {
  std::int64_t t = steady_ms();
  if (ledger_.in_flight() == 0 || ledger_.acked_records() != progress_acked_) {
    progress_acked_ = ledger_.acked_records();
    progress_ms_ = t;
    return;
  }
  if (t - progress_ms_ < 5000) return;
  progress_ms_ = t;
  judge_topic(producer_.topic_state(1000), "records wait for it");
}

// After acknowledgements came in: the cursor out, progress shown.
void Shipper::keep_up() {
  save_cursor(false);
  print_stats(false);
  check_stall();
}

void Shipper::serve(int timeout_ms) {
  producer_.poll(timeout_ms);
  keep_up();
}

// Ends at the drain's deadline, which starts at the first signal: a run that
// read everything (--once) and has heard none waits as a follower would,
// however long the broker takes, and the signal that ends that wait gives
// the drain --drain-timeout like any stop. A further signal ends it at once.
void Shipper::drain() {
  std::optional<std::int64_t> drain_until;
  while (ledger_.in_flight() > 0 && !failed()) {
    int stops = stop_requests.load(std::memory_order_relaxed);
    if (stops > 0 && !drain_until) {
      stops_seen_ = stops;
      drain_until = steady_ms() + std::int64_t(o_.drain_timeout_s * 1000);
    }
    if (drain_until && (steady_ms() >= *drain_until || stops > stops_seen_)) break;
    producer_.flush(100);
    keep_up();
  }
}

// The last place saved, the last progress line, and the exit code.
int Shipper::finish() {
  save_cursor(true);
  saver_->finish();
  say_saver_news();
  print_stats(true);
  if (state_.fatal) {
    std::fprintf(stderr,
                 "terse ship: the producer failed for good: %s; the cursor file holds the last place "
                 "acknowledged\n",
                 state_.fatal->c_str());
    return kShipDeliveryFailed;
  }
  if (ledger_.refusal()) {
    std::fprintf(stderr,
                 "terse ship: a record was refused: %s; the cursor file stays before it, so it is tried "
                 "again at the next start\n",
                 ledger_.refusal()->c_str());
    return kShipDeliveryFailed;
  }
  if (ledger_.in_flight() > 0) {
    std::fprintf(stderr,
                 "terse ship: %" PRIu64
                 " records were not acknowledged %s; they are shipped again at "
                 "the next start\n",
                 ledger_.in_flight(),
                 stop_requests.load() > stops_seen_ ? "before a second signal" : "within --drain-timeout");
    return kShipDeliveryFailed;
  }
  if (problems_.bad_resume()) {
    std::fprintf(stderr,
                 "terse ship: the cursor in %s does not fit the file it names (was the file replaced or "
                 "damaged?); remove the cursor file to ship from the first record\n",
                 o_.cursor_file.c_str());
    return kShipInputDamaged;
  }
  if (o_.once && problems_.problems() > 0) return kShipInputDamaged;
  return kShipOk;
}

}  // namespace

int run_ship(const ShipOptions& o) {
  if (!read_keys(o.keys) || !read_signers(o.signers)) return kShipUsage;
  Shipper shipper(o);
  if (auto code = shipper.start()) return *code;
  shipper.produce_all();
  shipper.drain();
  return shipper.finish();
}

}  // namespace terse::cli
