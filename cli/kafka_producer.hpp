// What `terse ship` needs of Kafka: a producer over librdkafka, and the
// ledger of what is in flight that tells which place the broker has
// acknowledged everything before.
//
// The guarantee rests on one rule: the cursor file only ever names a place
// every record before which the broker has acknowledged. Records get a
// sequence number as they are produced; acknowledgements arrive in any order
// across partitions, so a window of in-flight records finds the longest
// acknowledged prefix, and checkpoints (a cursor taken every few hundred
// records) say which place that prefix reaches.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <librdkafka/rdkafka.h>

#include <terse/result.hpp>

#include "commands.hpp"

namespace terse::cli {

std::int64_t steady_ms();

class Ledger {
 public:
  // A sequence number for a record about to be produced.
  std::uint64_t sent(std::int64_t record_ns);
  void acknowledged(std::uint64_t seq, std::size_t bytes);
  // The last record given a number was not produced after all.
  void withdraw_last();
  void refused(std::uint64_t seq, std::string why);

  // A place in the logs: every record produced so far lies before it.
  void checkpoint(std::string cursor);
  // The latest checkpoint whose records are all acknowledged, once.
  std::optional<std::string> reached();

  std::uint64_t in_flight() const { return next_seq_ - base_seq_; }
  // The window starts at the first record not acknowledged.
  std::optional<std::int64_t> oldest_unacked_ns() const;
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
  void say(const std::string& kind, const std::string& text);

 private:
  std::mutex mutex_;
  std::map<std::string, std::int64_t> last_ms_;
};

// What librdkafka's callbacks tell the shipper.
struct KafkaState {
  Ledger ledger;
  QuietLog log;
  std::optional<std::string> fatal;
  std::uint64_t broker_retries = 0;    // request retries, from librdkafka's statistics
  std::uint64_t transient_errors = 0;  // connections refused or lost, timeouts: each is tried again
};

// Fails, saying why, for a list that is not HOST:PORT[,HOST:PORT...].
Result<> valid_brokers(const std::string& list);

class Producer {
 public:
  Producer() = default;
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // An empty string, or why the producer cannot start (a bad -X property, say).
  Result<> start(const ShipOptions& o, KafkaState& state);

  // RD_KAFKA_RESP_ERR__QUEUE_FULL when the buffer is full; other errors are
  // for good (a record larger than message.max.bytes, an unknown topic).
  rd_kafka_resp_err_t produce(std::string_view payload, std::string_view key, std::int64_t time_ms, std::uint64_t seq);

  // What the cluster says of the topic: NO_ERROR, or why it cannot take
  // records (unknown, not authorised, no leader); librdkafka itself only
  // waits in such cases, silently.
  rd_kafka_resp_err_t topic_state(int timeout_ms);

  void poll(int timeout_ms) { rd_kafka_poll(rk_, timeout_ms); }
  std::size_t max_message_bytes() const { return max_message_bytes_; }
  // Sends what lingers now and serves acknowledgements for up to timeout_ms.
  void flush(int timeout_ms) { rd_kafka_flush(rk_, timeout_ms); }

 private:
  Result<> configure(rd_kafka_conf_t* conf, const ShipOptions& o);

  rd_kafka_t* rk_ = nullptr;
  rd_kafka_topic_t* rkt_ = nullptr;
  std::string topic_;
  std::size_t max_message_bytes_ = 1'000'000;
};

}  // namespace terse::cli
