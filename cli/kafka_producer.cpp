#include "kafka_producer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace terse::cli {

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// ---- what is in flight ----------------------------------------------------------

std::uint64_t Ledger::sent(std::int64_t record_ns) {
  window_.push_back(Pending{record_ns, false});
  return next_seq_++;
}

void Ledger::acknowledged(std::uint64_t seq, std::size_t bytes) {
  if (seq < base_seq_ || seq >= next_seq_) return;  // not ours: cannot happen, but never index past the window
  window_[seq - base_seq_].acked = true;
  ++acked_records_;
  acked_bytes_ += bytes;
  while (!window_.empty() && window_.front().acked) {
    window_.pop_front();
    ++base_seq_;
  }
}

void Ledger::withdraw_last() {
  window_.pop_back();
  --next_seq_;
}

void Ledger::refused(std::uint64_t seq, std::string why) {
  ++refused_;
  if (!refusal_) refusal_ = "record " + std::to_string(seq + 1) + " of this run: " + std::move(why);
}

void Ledger::checkpoint(std::string cursor) {
  if (!checkpoints_.empty() && checkpoints_.back().end_seq == next_seq_) {
    checkpoints_.back().cursor = std::move(cursor);
  } else {
    checkpoints_.push_back(Checkpoint{next_seq_, std::move(cursor)});
  }
}

std::optional<std::string> Ledger::reached() {
  std::optional<std::string> latest;
  while (!checkpoints_.empty() && checkpoints_.front().end_seq <= base_seq_) {
    latest = std::move(checkpoints_.front().cursor);
    checkpoints_.pop_front();
  }
  return latest;
}

std::optional<std::int64_t> Ledger::oldest_unacked_ns() const {
  if (window_.empty()) return std::nullopt;
  return window_.front().record_ns;
}

void QuietLog::say(const std::string& kind, const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::int64_t now = steady_ms();
  auto [it, fresh] = last_ms_.try_emplace(kind, now);
  if (!fresh && now - it->second < 30'000) return;
  it->second = now;
  std::fprintf(stderr, "terse ship: kafka: %s\n", text.c_str());
}

// ---- librdkafka's callbacks ---------------------------------------------------------

namespace {

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

}  // namespace

Result<> valid_brokers(const std::string& list) {
  std::size_t start = 0;
  for (;;) {
    std::size_t comma = list.find(',', start);
    std::string broker = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::size_t colon = broker.rfind(':');
    bool port_ok = colon != std::string::npos && colon + 1 < broker.size() && colon > 0 &&
                   broker.find_first_not_of("0123456789", colon + 1) == std::string::npos &&
                   broker.size() - colon - 1 <= 5 && std::stoul(broker.substr(colon + 1)) - 1 < 65535;
    if (!port_ok) return Failure{"'" + broker + "' is not HOST:PORT (port 1 to 65535)"};
    if (comma == std::string::npos) return {};
    start = comma + 1;
  }
}

// ---- the producer ------------------------------------------------------------------

Producer::~Producer() {
  if (!rk_) return;
  // What is still queued was not acknowledged and stays before the saved
  // cursor: it is dropped here and produced again at the next start.
  rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  rd_kafka_poll(rk_, 0);
  if (rkt_) rd_kafka_topic_destroy(rkt_);
  rd_kafka_destroy(rk_);
}

// ship's settings, then the -X properties over them; fails on the first
// that librdkafka refuses.
Result<> Producer::configure(rd_kafka_conf_t* conf, const ShipOptions& o) {
  char error[512];
  auto set = [&](const std::string& key, const std::string& value, const char* origin) -> Result<> {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK)
      return Failure{std::string(origin) + " " + key + "=" + value + ": " + error};
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
      // Keyless records each to a random partition: the sticky default sends
      // all of 10 ms to one partition, a whole burst to one.
      {"sticky.partitioning.linger.ms", "0"},
      // A broker that is away is waited for, however long; SIGTERM ends
      // the wait, and what was not acknowledged is sent at the next start.
      {"message.timeout.ms", "0"},
      {"log.connection.close", "false"},
      {"statistics.interval.ms",
       std::to_string(o.stats_interval_s > 0 ? std::max(100, int(o.stats_interval_s * 1000)) : 0)},
  };
  for (const auto& [key, value] : defaults)
    if (Result<> done = set(key, value, "setting"); !done) return done;
  for (const auto& property : o.properties) {
    std::size_t eq = property.find('=');
    if (eq == std::string::npos || eq == 0)
      return Failure{"-X " + property + ": expected KEY=VALUE, e.g. -X linger.ms=50"};
    if (Result<> done = set(property.substr(0, eq), property.substr(eq + 1), "-X"); !done) return done;
  }
  return {};
}

Result<> Producer::start(const ShipOptions& o, KafkaState& state) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (Result<> configured = configure(conf, o); !configured) {
    rd_kafka_conf_destroy(conf);
    return configured;
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
  char error[512];
  rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);  // owns conf only when it succeeds
  if (!rk_) {
    rd_kafka_conf_destroy(conf);
    return Failure{std::string("the producer cannot start: ") + error};
  }
  topic_ = o.topic;
  return {};
}

rd_kafka_resp_err_t Producer::produce(std::string_view payload, std::string_view key, std::int64_t time_ms,
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

rd_kafka_resp_err_t Producer::topic_state(int timeout_ms) {
  if (!rkt_) rkt_ = rd_kafka_topic_new(rk_, topic_.c_str(), nullptr);
  const rd_kafka_metadata_t* metadata = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk_, 0, rkt_, &metadata, timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return err;
  if (metadata->topic_cnt == 1) err = metadata->topics[0].err;
  rd_kafka_metadata_destroy(metadata);
  return err;
}

}  // namespace terse::cli
