// A Kafka cluster inside the test process (librdkafka's mock cluster, real
// TCP listeners on localhost) and a reader that records everything a topic
// holds, for end-to-end tests of `terse ship`.
//
// The mock cluster keeps only the newest 5 MiB or 100000 message sets
// (produce batches) of each partition and silently drops older ones: without
// compression that is only some 70000 lines of 60 bytes. A TopicReader started
// before the producer keeps up with it; gaps() says when it did not, so a
// test fails with that reason instead of a puzzling count of missing lines.
//
// Create topics before any client names them: the mock cluster creates a
// topic it is asked about, with its default of 4 partitions.
//
// Declare a cluster before the readers and producers that use it, so that it
// outlives them: a producer flushing into a vanished cluster waits out its
// whole timeout.
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace terse::test {

// 64-bit FNV-1a, to compare large sets of lines by hash instead of by text.
std::uint64_t fnv1a64(std::string_view bytes);

class MockCluster {
 public:
  // Brokers get the ids 1..brokers.
  explicit MockCluster(int brokers);
  ~MockCluster();
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  // "127.0.0.1:port,..." for bootstrap.servers.
  std::string bootstraps() const;
  int brokers() const { return brokers_; }

  // Replication is capped at the broker count; the mock picks each
  // partition's leader at random (set_leader makes it predictable).
  void create_topic(const std::string& topic, int partitions, int replication = 1);
  // A down broker drops its connections and refuses new ones, but stays the
  // leader of its partitions: producing to them and reading them waits until
  // it is up again, or until set_leader moves them (clients notice within
  // about a second).
  void broker_down(int id);
  void broker_up(int id);
  void set_leader(const std::string& topic, int partition, int broker_id);
  // Every answer of the broker is delayed by rtt_ms, as over a slow network.
  void set_rtt(int id, int rtt_ms);
  // The next `count` Produce requests, on any broker, fail with `err`.
  void push_produce_errors(int count, rd_kafka_resp_err_t err);

  // For the mock functions this class does not wrap.
  rd_kafka_mock_cluster_t* native() const { return cluster_; }

 private:
  int brokers_;
  rd_kafka_t* owner_ = nullptr;  // the mock cluster lives on this handle's threads
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
};

struct Message {
  std::string payload;
  std::string key;
  int partition = 0;
  std::int64_t offset = 0;
  std::int64_t timestamp_ms = 0;
};

// A message as the reader stores it; the views live as long as the visit.
struct MessageView {
  std::string_view payload;
  std::string_view key;
  int partition = 0;
  std::int64_t offset = 0;
  std::int64_t timestamp_ms = 0;
};

// Reads every partition of `topic` from its first offset on a background
// thread, without a consumer group's commits, and keeps what it read.
class TopicReader {
 public:
  // Returns at once. The thread looks the topic up and assigns all its
  // partitions, waiting as long as it takes for brokers that are down or a
  // topic not created yet (last_error() says what it waits for).
  TopicReader(const std::string& bootstraps, const std::string& topic);
  ~TopicReader();
  TopicReader(const TopicReader&) = delete;
  TopicReader& operator=(const TopicReader&) = delete;

  // Ends the reading; what was read stays available. Idempotent.
  void stop();

  // 0 until the topic was found.
  int partitions() const { return partitions_; }
  // Messages read since the start, those already taken included.
  std::size_t count() const;
  bool wait_for_count(std::size_t n, std::chrono::milliseconds limit) const;

  // Copies of what is stored, in the order read (per partition, by offset).
  std::vector<Message> snapshot() const;
  // Hands over what is stored and forgets it; count() does not go down.
  std::vector<Message> take();
  // Visits what is stored without copying; the reader waits meanwhile.
  void for_each(const std::function<void(const MessageView&)>& visit) const;

  // Empty while every partition's offsets read so far are 0, 1, 2, ...;
  // else what the first hole was and why it happens.
  std::string gaps() const;
  // Offsets delivered a second time (not stored again): normally 0.
  std::size_t redelivered() const;
  // What the reader is waiting for, or else the latest error the consumer
  // reported (broker connections coming and going show up here too), for a
  // failing test to print.
  std::string last_error() const;

 private:
  struct Stored {
    std::uint32_t chunk;
    std::uint32_t at;  // payload then key, in chunks_[chunk]
    std::uint32_t payload_len;
    std::uint32_t key_len;
    std::int32_t partition;
    std::int64_t offset;
    std::int64_t timestamp_ms;
  };

  bool assign();  // false when stopped first
  void run();
  MessageView view(const Stored& s) const;

  std::string topic_;
  std::atomic<int> partitions_{0};
  rd_kafka_t* consumer_ = nullptr;
  rd_kafka_queue_t* queue_ = nullptr;
  std::atomic<bool> stopping_{false};
  std::thread thread_;

  mutable std::mutex mutex_;
  mutable std::condition_variable arrived_;
  // Each batch's bytes are one chunk, moved in whole, so the lock is held
  // for a move and an append, never for copying payloads.
  std::vector<std::string> chunks_;
  std::vector<Stored> stored_;
  std::size_t count_ = 0;
  std::size_t redelivered_ = 0;
  std::vector<std::int64_t> next_offset_;  // per partition; the thread's own
  std::string first_gap_;
  std::string last_error_;
};

}  // namespace terse::test
