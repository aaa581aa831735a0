// `terse ship`: reads logs as `terse cat -f -o json` does and produces each
// record to Kafka through librdkafka, at least once.
//
// The guarantee rests on one rule: the cursor file only ever names a place
// every record before which the broker has acknowledged. Records get a
// sequence number as they are produced; acknowledgements arrive in any order
// across partitions, so a window of in-flight records finds the longest
// acknowledged prefix, and checkpoints (a cursor taken every few hundred
// records) say which place that prefix reaches.
#include "ship.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <librdkafka/rdkafka.h>

#include <terse/decoder.hpp>

#include "cursor.hpp"
#include "cursor_file.hpp"
#include "filters.hpp"
#include "inputs.hpp"
#include "mask.hpp"
#include "printer.hpp"

namespace terse::cli {
namespace {

std::atomic<int> stop_requests{0};

void request_stop(int) { stop_requests.fetch_add(1, std::memory_order_relaxed); }

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// ---- what is in flight ----------------------------------------------------------

class Ledger {
 public:
  std::uint64_t sent(std::int64_t record_ns) {
    window_.push_back(Pending{record_ns, false});
    return next_seq_++;
  }

  void acknowledged(std::uint64_t seq, std::size_t bytes) {
    if (seq < base_seq_ || seq >= next_seq_) return;  // not ours: cannot happen, but never index past the window
    window_[seq - base_seq_].acked = true;
    ++acked_records_;
    acked_bytes_ += bytes;
    while (!window_.empty() && window_.front().acked) {
      window_.pop_front();
      ++base_seq_;
    }
  }

  // The last record given a number was not produced after all.
  void withdraw_last() {
    window_.pop_back();
    --next_seq_;
  }

  void refused(std::uint64_t seq, std::string why) {
    ++refused_;
    if (!refusal_) refusal_ = "record " + std::to_string(seq + 1) + " of this run: " + std::move(why);
  }

  // A place in the logs: every record produced so far lies before it.
  void checkpoint(std::string cursor) {
    if (!checkpoints_.empty() && checkpoints_.back().end_seq == next_seq_) {
      checkpoints_.back().cursor = std::move(cursor);
    } else {
      checkpoints_.push_back(Checkpoint{next_seq_, std::move(cursor)});
    }
  }

  // The latest checkpoint whose records are all acknowledged, once.
  std::optional<std::string> reached() {
    std::optional<std::string> latest;
    while (!checkpoints_.empty() && checkpoints_.front().end_seq <= base_seq_) {
      latest = std::move(checkpoints_.front().cursor);
      checkpoints_.pop_front();
    }
    return latest;
  }

  std::uint64_t in_flight() const { return next_seq_ - base_seq_; }
  // The window starts at the first record not acknowledged.
  std::optional<std::int64_t> oldest_unacked_ns() const {
    if (window_.empty()) return std::nullopt;
    return window_.front().record_ns;
  }
  std::uint64_t acked_records() const { return acked_records_; }
  std::uint64_t acked_bytes() const { return acked_bytes_; }
  std::uint64_t refused_count() const { return refused_; }
  const std::optional<std::string>& refusal() const { return refusal_; }

 private:
  struct Pending {
    std::int64_t record_ns;
    bool acked;
  };
  struct Checkpoint {
    std::uint64_t end_seq;  // records with a smaller sequence number lie before `cursor`
    std::string cursor;
  };
  std::deque<Pending> window_;
  std::deque<Checkpoint> checkpoints_;
  std::uint64_t base_seq_ = 0, next_seq_ = 0;
  std::uint64_t acked_records_ = 0, acked_bytes_ = 0, refused_ = 0;
  std::optional<std::string> refusal_;
};

// librdkafka repeats a broker's trouble on every reconnect attempt: each
// kind of trouble is shown at most once per half minute. Locked: librdkafka
// calls its log callback from its own threads.
class QuietLog {
 public:
  void say(const std::string& kind, const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::int64_t now = steady_ms();
    auto [it, fresh] = last_ms_.try_emplace(kind, now);
    if (!fresh && now - it->second < 30'000) return;
    it->second = now;
    std::fprintf(stderr, "terse ship: kafka: %s\n", text.c_str());
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::int64_t> last_ms_;
};

// ---- the producer ------------------------------------------------------------------

struct KafkaState {
  Ledger ledger;
  QuietLog log;
  std::optional<std::string> fatal;
  std::uint64_t broker_retries = 0;  // request retries, from librdkafka's statistics
  std::uint64_t transient_errors = 0;  // connections refused or lost, timeouts: each is tried again
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  auto& state = *static_cast<KafkaState*>(opaque);
  auto seq = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(message->_private));
  if (message->err) {
    state.ledger.refused(seq, rd_kafka_err2str(message->err));
  } else {
    state.ledger.acknowledged(seq, message->len);
  }
}

void on_error(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
  auto& state = *static_cast<KafkaState*>(opaque);
  if (err == RD_KAFKA_RESP_ERR__FATAL) {
    char text[512];
    rd_kafka_fatal_error(rk, text, sizeof text);
    if (!state.fatal) state.fatal = text;
    return;
  }
  ++state.transient_errors;
  // Keyed by the error, not its text: librdkafka varies the text ("after
  // 0ms", "1 identical error(s) suppressed") while the trouble stays the same.
  state.log.say(rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err)), reason);
}

// Errors reach on_error; the log adds only what is worse.
void on_log(const rd_kafka_t* rk, int level, const char* facility, const char* text) {
  if (level > 2) return;
  auto* state = static_cast<KafkaState*>(rd_kafka_opaque(rk));
  if (state) state->log.say(facility, text);
}

// The sum of every broker's "txretries" in a statistics document: the only
// figure ship takes from it, so a scan for the key serves.
int on_statistics(rd_kafka_t*, char* json, std::size_t length, void* opaque) {
  auto& state = *static_cast<KafkaState*>(opaque);
  std::string_view doc(json, length);
  constexpr std::string_view key = "\"txretries\":";
  std::uint64_t total = 0;
  for (std::size_t at = doc.find(key); at != std::string_view::npos; at = doc.find(key, at + key.size())) {
    std::uint64_t value = 0;
    for (std::size_t i = at + key.size(); i < doc.size() && doc[i] >= '0' && doc[i] <= '9'; ++i)
      value = value * 10 + static_cast<std::uint64_t>(doc[i] - '0');
    total += value;
  }
  state.broker_retries = total;
  return 0;  // librdkafka frees the document
}

bool valid_brokers(const std::string& list, std::string& why) {
  std::size_t start = 0;
  for (;;) {
    std::size_t comma = list.find(',', start);
    std::string broker = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::size_t colon = broker.rfind(':');
    bool port_ok = colon != std::string::npos && colon + 1 < broker.size() && colon > 0 &&
                   broker.find_first_not_of("0123456789", colon + 1) == std::string::npos &&
                   broker.size() - colon - 1 <= 5 && std::stoul(broker.substr(colon + 1)) - 1 < 65535;
    if (!port_ok) {
      why = "'" + broker + "' is not HOST:PORT (port 1 to 65535)";
      return false;
    }
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

class Producer {
 public:
  Producer() = default;
  ~Producer() {
    if (!rk_) return;
    // What is still queued was not acknowledged and stays before the saved
    // cursor: it is dropped here and produced again at the next start.
    rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_poll(rk_, 0);
    if (rkt_) rd_kafka_topic_destroy(rkt_);
    rd_kafka_destroy(rk_);
  }
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  std::string start(const ShipOptions& o, KafkaState& state) {
    char error[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    auto set = [&](const std::string& key, const std::string& value, const char* origin) -> std::string {
      if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK)
        return std::string(origin) + " " + key + "=" + value + ": " + error;
      return {};
    };
    // Bounded memory: librdkafka counts payload bytes against max.kbytes;
    // each queued message also costs about 300 bytes of its own, which the
    // message count bound keeps inside --max-buffer-mb with the payloads.
    std::uint64_t budget = std::uint64_t(o.max_buffer_mb) << 20;
    std::uint64_t max_messages = std::clamp<std::uint64_t>(budget / 4 / 300, 1000, 10'000'000);
    std::uint64_t max_kbytes = std::max<std::uint64_t>(budget * 3 / 4 / 1024, 256);
    const std::pair<std::string, std::string> defaults[] = {
        {"bootstrap.servers", o.brokers},
        {"client.id", "terse-ship"},
        {"compression.type", o.compression},
        {"linger.ms", std::to_string(o.linger_ms)},
        {"batch.num.messages", std::to_string(o.batch_records)},
        {"queue.buffering.max.messages", std::to_string(max_messages)},
        {"queue.buffering.max.kbytes", std::to_string(max_kbytes)},
        // Retries keep order and never write a record twice within a run.
        {"enable.idempotence", "true"},
        // A broker that is away is waited for, however long; SIGTERM ends
        // the wait, and what was not acknowledged is sent at the next start.
        {"message.timeout.ms", "0"},
        {"log.connection.close", "false"},
        {"statistics.interval.ms", std::to_string(o.stats_interval_s > 0 ? std::max(100, int(o.stats_interval_s * 1000)) : 0)},
    };
    std::string problem;
    for (const auto& [key, value] : defaults)
      if (problem.empty()) problem = set(key, value, "setting");
    for (const auto& property : o.properties) {
      if (!problem.empty()) break;
      std::size_t eq = property.find('=');
      if (eq == std::string::npos || eq == 0) {
        problem = "-X " + property + ": expected KEY=VALUE, e.g. -X linger.ms=50";
        break;
      }
      problem = set(property.substr(0, eq), property.substr(eq + 1), "-X");
    }
    if (!problem.empty()) {
      rd_kafka_conf_destroy(conf);
      return problem;
    }
    char value[64];
    std::size_t value_size = sizeof value;
    if (rd_kafka_conf_get(conf, "message.max.bytes", value, &value_size) == RD_KAFKA_CONF_OK)
      max_message_bytes_ = std::strtoull(value, nullptr, 10);
    rd_kafka_conf_set_opaque(conf, &state);
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_conf_set_error_cb(conf, on_error);
    rd_kafka_conf_set_log_cb(conf, on_log);
    rd_kafka_conf_set_stats_cb(conf, on_statistics);
    rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);  // owns conf only when it succeeds
    if (!rk_) {
      rd_kafka_conf_destroy(conf);
      return std::string("the producer cannot start: ") + error;
    }
    topic_ = o.topic;
    return {};
  }

  // RD_KAFKA_RESP_ERR__QUEUE_FULL when the buffer is full; other errors are
  // for good (a record larger than message.max.bytes, an unknown topic).
  rd_kafka_resp_err_t produce(std::string_view payload, std::string_view key, std::int64_t time_ms,
                              std::uint64_t seq) {
    // The array form: the varargs macros are GNU statement expressions.
    rd_kafka_vu_t fields[6];
    fields[0].vtype = RD_KAFKA_VTYPE_TOPIC;
    fields[0].u.cstr = topic_.c_str();
    fields[1].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
    fields[1].u.i = RD_KAFKA_MSG_F_COPY;
    fields[2].vtype = RD_KAFKA_VTYPE_VALUE;
    fields[2].u.mem.ptr = const_cast<char*>(payload.data());
    fields[2].u.mem.size = payload.size();
    fields[3].vtype = RD_KAFKA_VTYPE_TIMESTAMP;
    fields[3].u.i64 = time_ms;
    fields[4].vtype = RD_KAFKA_VTYPE_OPAQUE;
    fields[4].u.ptr = reinterpret_cast<void*>(static_cast<std::uintptr_t>(seq));
    std::size_t count = 5;
    if (!key.empty()) {
      fields[5].vtype = RD_KAFKA_VTYPE_KEY;
      fields[5].u.mem.ptr = const_cast<char*>(key.data());
      fields[5].u.mem.size = key.size();
      count = 6;
    }
    rd_kafka_error_t* error = rd_kafka_produceva(rk_, fields, count);
    if (!error) return RD_KAFKA_RESP_ERR_NO_ERROR;
    rd_kafka_resp_err_t code = rd_kafka_error_code(error);
    rd_kafka_error_destroy(error);
    return code;
  }

  // What the cluster says of the topic: NO_ERROR, or why it cannot take
  // records (unknown, not authorised, no leader); librdkafka itself only
  // waits in such cases, silently.
  rd_kafka_resp_err_t topic_state(int timeout_ms) {
    if (!rkt_) rkt_ = rd_kafka_topic_new(rk_, topic_.c_str(), nullptr);
    const rd_kafka_metadata_t* metadata = nullptr;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk_, 0, rkt_, &metadata, timeout_ms);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return err;
    if (metadata->topic_cnt == 1) err = metadata->topics[0].err;
    rd_kafka_metadata_destroy(metadata);
    return err;
  }

  void poll(int timeout_ms) { rd_kafka_poll(rk_, timeout_ms); }
  std::size_t max_message_bytes() const { return max_message_bytes_; }
  // Sends what lingers now and serves acknowledgements for up to timeout_ms.
  void flush(int timeout_ms) { rd_kafka_flush(rk_, timeout_ms); }

 private:
  rd_kafka_t* rk_ = nullptr;
  rd_kafka_topic_t* rkt_ = nullptr;
  std::string topic_;
  std::size_t max_message_bytes_ = 1'000'000;
};

// ---- records too large for a message ----------------------------------------------

// A record whose JSON exceeds message.max.bytes would be refused for good,
// and as the cursor cannot pass it, would stop shipping for good too. It is
// shipped as a stand-in instead: the same keys, the message cut, "args" null
// and "cut" saying how large the record was, so the loss is visible where
// the logs are read.
void append_cut_record(std::string& out, const decoder::Record& record, const decoder::TimeStyle& style,
                       std::string message, std::size_t json_bytes, std::size_t limit) {
  // Escaping can grow text up to six times (\u00XX); cut so that even then it fits.
  std::size_t keep = limit > 4096 ? (limit - 4096) / 6 : 0;
  if (message.size() > keep) {
    std::size_t at = keep;
    while (at > 0 && (static_cast<unsigned char>(message[at]) & 0xC0) == 0x80) --at;  // not inside a character
    message.resize(at);
  }
  // The keys as terse cat writes them, from the record without its
  // arguments; "args" is the last key, so its value is replaced at the end.
  decoder::Record bare = record;
  bare.args = {};
  decoder::append_json_record(out, bare, style, message, decoder::TextRewrite{});
  out.resize(out.rfind("\"args\":") + 7);
  out += "null,\"cut\":{\"json_bytes\":" + std::to_string(json_bytes) +
         ",\"message.max.bytes\":" + std::to_string(limit) + "}}";
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

}  // namespace

int run_ship(const ShipOptions& o) {
  auto usage_error = [](const std::string& text) {
    std::fprintf(stderr, "terse ship: %s\n", text.c_str());
    return kShipUsage;
  };
  std::string why;
  if (!valid_brokers(o.brokers, why)) return usage_error("--brokers: " + why);
  if (o.topic.empty()) return usage_error("--topic is empty");
  for (const auto& path : o.paths)
    if (path == "-")
      return usage_error("standard input has no places for a cursor to name: give the files or directories");

  decoder::TimeStyle style;
  style.utc = o.filters.utc;
  Filters filters;
  std::optional<Masker> mask;
  try {
    if (!o.mask_path.empty()) mask.emplace(o.mask_path);
    filters = make_filters(o.filters, now_ns());
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }

  CursorFile cursor_file(o.cursor_file);
  std::string saved_cursor;
  if (std::string error = cursor_file.open(saved_cursor); !error.empty()) return usage_error("--cursor-file: " + error);

  KafkaState state;
  Producer producer;
  if (std::string error = producer.start(o, state); !error.empty()) return usage_error(error);

  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  bool cursor_misfit = false;
  std::uint64_t damaged = 0;
  decoder::Reporter reporter = [&](const decoder::Problem& p) {
    if (p.torn_tail) return;
    std::fprintf(stderr, "terse ship: %s: offset %llu: %s\n", p.source.c_str(),
                 static_cast<unsigned long long>(p.offset), p.what.c_str());
    if (p.bad_resume) cursor_misfit = true;
    ++damaged;
  };
  Merger merger(reporter, filters.decoder, !o.once);
  if (!merger.add_paths(o.paths)) return usage_error("cannot read the inputs given");
  merger.keep_positions();
  if (!saved_cursor.empty()) {
    ParsedCursor cursor = parse_cursor(saved_cursor);
    if (!cursor.error.empty())
      return usage_error("--cursor-file " + o.cursor_file + " does not hold a cursor: " + cursor.error +
                         "; remove it to ship from the first record");
    std::vector<std::string> notes;
    std::string error = merger.resume_after(cursor.inputs, notes);
    if (!error.empty()) return usage_error("--cursor-file " + o.cursor_file + ": " + error);
    for (const auto& note : notes) std::fprintf(stderr, "terse ship: resuming: %s\n", note.c_str());
  }

  Printer printer(std::nullopt, style, filters.grep, mask ? &*mask : nullptr);
  Ledger& ledger = state.ledger;
  std::vector<InputPosition> positions;
  auto take_checkpoint = [&] {
    merger.positions(positions);
    if (!positions.empty()) ledger.checkpoint(encode_cursor(positions));
  };

  CursorSaver saver(cursor_file);
  std::int64_t last_save_ms = 0;  // the first place reached is saved at once
  std::optional<std::string> unsaved;
  auto save_cursor = [&](bool now) {
    if (auto reached = ledger.reached()) unsaved = std::move(*reached);
    if (unsaved && (now || steady_ms() - last_save_ms >= o.commit_interval_ms)) {
      last_save_ms = steady_ms();
      saver.post(std::move(*unsaved));
      unsaved.reset();
    }
    if (std::string news = saver.news(); !news.empty())
      std::fprintf(stderr, "terse ship: --cursor-file: %s\n", news.c_str());
  };

  bool caught_up = false;
  std::int64_t last_read_ns = 0;
  std::uint64_t full_waits = 0;
  std::uint64_t cut_records = 0;
  std::int64_t stats_every_ms = o.stats_interval_s > 0 ? std::max<std::int64_t>(1, std::int64_t(o.stats_interval_s * 1000)) : 0;
  std::int64_t last_stats_ms = steady_ms();
  std::uint64_t last_stats_records = 0;
  auto print_stats = [&](bool now) {
    if (!stats_every_ms) return;
    std::int64_t t = steady_ms();
    if (!now && t - last_stats_ms < stats_every_ms) return;
    double span_s = double(t - last_stats_ms) / 1000.0;
    double rate = span_s > 0 ? double(ledger.acked_records() - last_stats_records) / span_s : 0;
    last_stats_ms = t;
    last_stats_records = ledger.acked_records();
    double lag_s = 0;
    if (auto oldest = ledger.oldest_unacked_ns()) {
      lag_s = double(wall_clock_ns() - *oldest) / 1e9;
    } else if (!caught_up && last_read_ns) {
      lag_s = double(wall_clock_ns() - last_read_ns) / 1e9;
    }
    std::fprintf(stderr,
                 "terse ship: records=%" PRIu64 " rate=%.0f/s bytes=%" PRIu64 " lag_records=%" PRIu64
                 " lag_s=%s retries=%" PRIu64 " buffer_full_waits=%" PRIu64 " cut=%" PRIu64 " refused=%" PRIu64
                 " damaged=%" PRIu64
                 " peak_rss_mib=%.1f\n",
                 ledger.acked_records(), rate, ledger.acked_bytes(), ledger.in_flight(),
                 seconds_text(std::max(0.0, lag_s)).c_str(), state.broker_retries + state.transient_errors, full_waits,
                 cut_records, ledger.refused_count(), damaged, double(peak_rss_kib()) / 1024.0);
  };
  // What the cluster says of the topic: not being allowed to write it is for
  // good; the rest (unknown topic, no leader) may mend, so ship says so and waits.
  auto judge_topic = [&](rd_kafka_resp_err_t err, const char* meanwhile) {
    if (err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED || err == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED) {
      if (!state.fatal) state.fatal = "topic " + o.topic + ": " + rd_kafka_err2str(err);
    } else if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      state.log.say("topic", "topic " + o.topic + ": " + rd_kafka_err2str(err) + "; " + meanwhile);
    }
  };
  // Records waiting with no acknowledgement for a while: ask about the topic.
  std::int64_t progress_ms = steady_ms();
  std::uint64_t progress_acked = 0;
  auto check_stall = [&] {
    std::int64_t t = steady_ms();
    if (ledger.in_flight() == 0 || ledger.acked_records() != progress_acked) {
      progress_acked = ledger.acked_records();
      progress_ms = t;
      return;
    }
    if (t - progress_ms < 5000) return;
    progress_ms = t;
    judge_topic(producer.topic_state(1000), "records wait for it");
  };
  // After acknowledgements came in: the cursor out, progress shown.
  auto keep_up = [&] {
    save_cursor(false);
    print_stats(false);
    check_stall();
  };
  auto serve = [&](int timeout_ms) {
    producer.poll(timeout_ms);
    keep_up();
  };
  auto failed = [&] { return state.fatal || ledger.refusal(); };

  // Asking for the topic first spares the first records the second that
  // librdkafka otherwise takes to look it up, and says early when it cannot
  // be written; a cluster that does not answer yet is waited for as usual.
  judge_topic(producer.topic_state(2000), "shipping starts when it can");

  decoder::Record record;
  std::string message;
  std::string key;
  // Set when reading stopped after a record that was never produced: no
  // checkpoint may be taken past it.
  bool abandoned = false;
  std::uint32_t since_checkpoint = 0, since_poll = 0;
  constexpr std::uint32_t kCheckpointEvery = 256, kPollEvery = 1024;
  auto may_read = [&] { return !stop_requests.load(std::memory_order_relaxed) && !failed() && !cursor_misfit; };
  for (;;) {
    while (may_read()) {
      if (!merger.next(record)) {
        caught_up = true;
        break;
      }
      caught_up = false;
      last_read_ns = record.unix_ns;
      message.clear();
      if (printer.print(record, message)) {
        message.pop_back();  // the newline
        if (message.size() + 1024 > producer.max_message_bytes() && record.kind == decoder::RecordKind::log) {
          std::string text;
          decoder::render_message(record, text, nullptr, &style);
          if (mask) mask->apply(text);
          std::size_t json_bytes = message.size();
          message.clear();
          append_cut_record(message, record, style, std::move(text), json_bytes, producer.max_message_bytes());
          ++cut_records;
        }
        if (o.show_cursor) {
          merger.positions(positions);
          add_cursor_key(message, positions);
        }
        key.clear();
        if (o.key == "thread") {
          key = std::to_string(record.thread->os_tid);
        } else if (o.key == "site" && record.site) {
          key = record.site->file + ":" + std::to_string(record.site->line);
        }
        for (;;) {
          std::uint64_t seq = ledger.sent(record.unix_ns);
          rd_kafka_resp_err_t err = producer.produce(message, key, record.unix_ns / 1'000'000, seq);
          if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
          ledger.withdraw_last();
          if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            ledger.refused(seq, rd_kafka_err2str(err));
            abandoned = true;
            break;
          }
          ++full_waits;
          serve(100);
          if (stop_requests.load(std::memory_order_relaxed) || failed()) {
            abandoned = true;
            break;
          }
        }
        if (abandoned) break;
      }
      if (++since_checkpoint >= kCheckpointEvery) {
        since_checkpoint = 0;
        take_checkpoint();
      }
      if (++since_poll >= kPollEvery) {
        since_poll = 0;
        serve(0);
      }
    }
    if (!abandoned && !cursor_misfit) take_checkpoint();
    if (!may_read() || o.once) break;
    // Acknowledgements keep coming while the files are quiet.
    std::int64_t until = steady_ms() + merger.next_round_in().count();
    for (std::int64_t left; (left = until - steady_ms()) > 0 && !stop_requests.load(std::memory_order_relaxed);)
      serve(int(std::min<std::int64_t>(left, 100)));
    merger.new_round();
    if (mask) {
      std::string error;
      if (mask->reload_if_changed(error)) {
        std::fprintf(stderr, "terse ship: --mask %s: reloaded (%zu rules)\n", o.mask_path.c_str(), mask->size());
      } else if (!error.empty()) {
        std::fprintf(stderr, "terse ship: %s\n", error.c_str());
      }
    }
  }

  // Draining: everything produced gets its chance to be acknowledged; a
  // second SIGTERM or SIGINT stops waiting.
  int stops_seen = stop_requests.load(std::memory_order_relaxed);
  std::int64_t drain_until = steady_ms() + std::int64_t(o.drain_timeout_s * 1000);
  while (ledger.in_flight() > 0 && !failed() && steady_ms() < drain_until &&
         stop_requests.load(std::memory_order_relaxed) == stops_seen) {
    producer.flush(100);
    keep_up();
  }
  save_cursor(true);
  saver.finish();
  if (std::string news = saver.news(); !news.empty())
    std::fprintf(stderr, "terse ship: --cursor-file: %s\n", news.c_str());
  print_stats(true);

  if (state.fatal) {
    std::fprintf(stderr, "terse ship: the producer failed for good: %s; the cursor file holds the last place "
                 "acknowledged\n", state.fatal->c_str());
    return kShipDeliveryFailed;
  }
  if (ledger.refusal()) {
    std::fprintf(stderr, "terse ship: a record was refused: %s; the cursor file stays before it, so it is tried "
                 "again at the next start\n", ledger.refusal()->c_str());
    return kShipDeliveryFailed;
  }
  if (ledger.in_flight() > 0) {
    std::fprintf(stderr, "terse ship: %" PRIu64 " records were not acknowledged %s; they are shipped again at "
                 "the next start\n", ledger.in_flight(),
                 stop_requests.load() > stops_seen ? "before a second signal" : "within --drain-timeout");
    return kShipDeliveryFailed;
  }
  if (cursor_misfit) {
    std::fprintf(stderr, "terse ship: the cursor in %s does not fit the file it names (was the file replaced or "
                 "damaged?); remove the cursor file to ship from the first record\n", o.cursor_file.c_str());
    return kShipInputDamaged;
  }
  if (o.once && damaged > 0) return kShipInputDamaged;
  return kShipOk;
}

}  // namespace terse::cli
