// The Kafka test harness checked with a plain librdkafka producer, before any
// `terse ship` test relies on it: the reader sees every message once, also
// across a broker outage, a moved leader and a topic created late, and it
// reports the mock cluster's retention dropping data.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "kafka_harness.hpp"
#include "test_support.hpp"

using namespace terse::test;
using namespace std::chrono_literals;

namespace {

class Producer {
 public:
  Producer(const std::string& bootstraps, const std::vector<std::pair<std::string, std::string>>& settings) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    std::vector<std::pair<std::string, std::string>> all{{"bootstrap.servers", bootstraps},
                                                         {"queue.buffering.max.messages", "1000000"},
                                                         {"reconnect.backoff.ms", "10"},
                                                         {"reconnect.backoff.max.ms", "200"}};
    all.insert(all.end(), settings.begin(), settings.end());
    char err[512];
    for (const auto& [name, value] : all)
      REQUIRE(rd_kafka_conf_set(conf, name.c_str(), value.c_str(), err, sizeof err) == RD_KAFKA_CONF_OK);
    rd_kafka_conf_set_log_cb(conf, [](const rd_kafka_t*, int, const char*, const char*) {});
    rd_kafka_conf_set_opaque(conf, this);
    rd_kafka_conf_set_dr_msg_cb(conf, [](rd_kafka_t*, const rd_kafka_message_t* m, void* self) {
      auto* producer = static_cast<Producer*>(self);
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR)
        ++producer->delivered;
      else if (producer->failed++ == 0)
        producer->first_failure = rd_kafka_err2str(m->err);
    });
    rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    REQUIRE(rk_ != nullptr);
  }
  ~Producer() { rd_kafka_destroy(rk_); }
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Without a partition, librdkafka's sticky partitioner picks one.
  void produce(const std::string& topic, const std::string& payload, int partition = RD_KAFKA_PARTITION_UA) {
    // produceva, not the RD_KAFKA_V_ macros: those are GNU statement
    // expressions, which clang's -Wpedantic reports.
    rd_kafka_vu_t fields[4] = {};
    fields[0].vtype = RD_KAFKA_VTYPE_TOPIC;
    fields[0].u.cstr = topic.c_str();
    fields[1].vtype = RD_KAFKA_VTYPE_PARTITION;
    fields[1].u.i32 = partition;
    fields[2].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
    fields[2].u.i = RD_KAFKA_MSG_F_COPY;
    fields[3].vtype = RD_KAFKA_VTYPE_VALUE;
    fields[3].u.mem.ptr = const_cast<char*>(payload.data());
    fields[3].u.mem.size = payload.size();
    for (;;) {
      rd_kafka_error_t* error = rd_kafka_produceva(rk_, fields, 4);
      if (error == nullptr) break;
      rd_kafka_resp_err_t err = rd_kafka_error_code(error);
      rd_kafka_error_destroy(error);
      REQUIRE(err == RD_KAFKA_RESP_ERR__QUEUE_FULL);
      rd_kafka_poll(rk_, 10);
    }
    rd_kafka_poll(rk_, 0);
  }

  void flush(std::chrono::milliseconds limit = 60s) {
    rd_kafka_resp_err_t err = rd_kafka_flush(rk_, static_cast<int>(limit.count()));
    INFO("first delivery failure: " << first_failure);
    REQUIRE(err == RD_KAFKA_RESP_ERR_NO_ERROR);
    REQUIRE(failed == 0);
  }

  std::size_t delivered = 0;
  std::size_t failed = 0;
  std::string first_failure;

 private:
  rd_kafka_t* rk_ = nullptr;
};

std::string line(std::size_t seq) {
  return "{\"seq\":" + std::to_string(seq) + ",\"level\":\"info\",\"msg\":\"harness line\"}";
}

// The line's sequence number, or SIZE_MAX for a payload no line() made.
std::size_t seq_of(std::string_view payload) {
  constexpr std::string_view tag = "{\"seq\":";
  std::size_t seq = SIZE_MAX;
  if (payload.substr(0, tag.size()) != tag ||
      std::from_chars(payload.data() + tag.size(), payload.data() + payload.size(), seq).ec != std::errc())
    return SIZE_MAX;
  return seq;
}

// How often each of 0..n-1 was read; anything else fails the test.
std::vector<int> times_read(const TopicReader& reader, std::size_t n) {
  std::vector<int> seen(n, 0);
  std::size_t strangers = 0;
  reader.for_each([&](const MessageView& m) {
    std::size_t seq = seq_of(m.payload);
    if (seq < n)
      ++seen[seq];
    else
      ++strangers;
  });
  CHECK(strangers == 0);
  return seen;
}

void wait_for_all(const TopicReader& reader, std::size_t n) {
  bool all = reader.wait_for_count(n, 60s);
  INFO("read " << reader.count() << " of " << n << "; gaps: " << reader.gaps()
               << "; last consumer error: " << reader.last_error());
  REQUIRE(all);
  REQUIRE(reader.gaps().empty());
}

}  // namespace

TEST_CASE("the reader gets every message exactly once, in offset order per partition") {
  MockCluster cluster(3);
  cluster.create_topic("lines", 4);
  TopicReader reader(cluster.bootstraps(), "lines");

  const std::size_t n = scaled(200'000, 1000);
  {
    Producer producer(cluster.bootstraps(),
                      {{"compression.type", "zstd"}, {"enable.idempotence", "true"}, {"linger.ms", "5"}});
    for (std::size_t i = 0; i < n; ++i) producer.produce("lines", line(i));
    producer.flush();
    CHECK(producer.delivered == n);
  }
  wait_for_all(reader, n);

  auto seen = times_read(reader, n);
  CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<std::ptrdiff_t>(n));
  CHECK(reader.count() == n);
  CHECK(reader.redelivered() == 0);
  CHECK(reader.partitions() == 4);

  std::vector<std::int64_t> next(4, 0);
  bool in_order = true;
  reader.for_each(
      [&](const MessageView& m) { in_order = in_order && m.offset == next[static_cast<std::size_t>(m.partition)]++; });
  CHECK(in_order);

  auto taken = reader.take();
  CHECK(taken.size() == n);
  CHECK(reader.snapshot().empty());
  CHECK(reader.count() == n);
  CHECK(seq_of(taken.front().payload) < n);
}

TEST_CASE("messages produced while a broker is down arrive once it is back") {
  MockCluster cluster(3);
  cluster.create_topic("lines", 4);
  // The broker taken down must lead something: partitions 0 and 3.
  for (int p = 0; p < 4; ++p) cluster.set_leader("lines", p, 1 + p % 3);
  TopicReader reader(cluster.bootstraps(), "lines");

  const std::size_t n = scaled(60'000, 1000);
  const std::size_t slices = 22;
  Producer producer(cluster.bootstraps(),
                    {{"compression.type", "zstd"}, {"enable.idempotence", "true"}, {"linger.ms", "5"}});
  // Production spreads over about 2.2 s; the broker is down from 0.3 s to 1.8 s.
  auto started = std::chrono::steady_clock::now();
  bool down = false;
  bool back = false;
  std::size_t read_when_back = 0;
  for (std::size_t slice = 0; slice < slices; ++slice) {
    for (std::size_t i = slice * n / slices; i < (slice + 1) * n / slices; ++i)
      producer.produce("lines", line(i), static_cast<int>(i % 4));
    std::this_thread::sleep_until(started + (slice + 1) * 100ms);
    auto elapsed = std::chrono::steady_clock::now() - started;
    if (!down && elapsed >= 300ms) {
      cluster.broker_down(1);
      down = true;
    } else if (down && !back && elapsed >= 1800ms) {
      read_when_back = reader.count();
      cluster.broker_up(1);
      back = true;
    }
  }
  REQUIRE(back);
  producer.flush();
  wait_for_all(reader, n);
  // Half the partitions were stuck for 1.5 s, so some messages must have waited.
  CHECK(read_when_back < n * 3 / 4);

  // The mock cluster appends a retried batch again even when an idempotent
  // producer sends it (a real broker would drop the repeat), so a batch whose
  // acknowledgement was lost with the connection can be stored twice: say
  // so, but not as a failure of the harness.
  auto seen = times_read(reader, n);
  CHECK(std::count(seen.begin(), seen.end(), 0) == 0);
  auto twice = std::count_if(seen.begin(), seen.end(), [](int k) { return k > 1; });
  if (twice > 0) WARN(twice << " messages were written twice across the outage");
  CHECK(reader.redelivered() == 0);
}

TEST_CASE("gaps() reports the messages the mock cluster's retention dropped before they were read") {
  MockCluster cluster(1);
  cluster.create_topic("lines", 1);
  // 8 MiB of random bytes without compression: more than the 5 MiB the
  // partition keeps, however it is batched.
  const std::size_t n = 8 * 1024;
  {
    Producer producer(cluster.bootstraps(), {{"compression.type", "none"}, {"linger.ms", "5"}});
    std::mt19937_64 random(42);
    std::string payload(1024, '\0');
    for (std::size_t i = 0; i < n; ++i) {
      for (char& c : payload) c = static_cast<char>(random());
      producer.produce("lines", payload);
    }
    producer.flush();
  }

  TopicReader reader(cluster.bootstraps(), "lines");
  // The newest message is kept whatever retention dropped.
  auto until = std::chrono::steady_clock::now() + 30s;
  bool newest = false;
  while (!newest && std::chrono::steady_clock::now() < until) {
    reader.wait_for_count(1, 100ms);
    reader.for_each([&](const MessageView& m) { newest = newest || m.offset == static_cast<std::int64_t>(n - 1); });
  }
  REQUIRE(newest);
  std::string gaps = reader.gaps();
  INFO(gaps);
  CHECK_THAT(gaps, Catch::Contains("partition 0 starts at offset"));
  CHECK_THAT(gaps, Catch::Contains("start the TopicReader before producing"));
  auto kept = reader.snapshot();
  REQUIRE(!kept.empty());
  CHECK(kept.front().offset > 0);
  CHECK(kept.size() == n - static_cast<std::size_t>(kept.front().offset));
  CHECK(kept.back().offset == static_cast<std::int64_t>(n - 1));
}

TEST_CASE("a partition moved off a broker that stays down, and refused Produce requests, lose nothing") {
  MockCluster cluster(3);
  cluster.create_topic("lines", 2);
  cluster.set_leader("lines", 0, 1);
  cluster.set_leader("lines", 1, 2);
  TopicReader reader(cluster.bootstraps(), "lines");
  Producer producer(cluster.bootstraps(), {{"enable.idempotence", "true"}, {"linger.ms", "5"}});
  for (std::size_t i = 0; i < 1000; ++i) producer.produce("lines", line(i), static_cast<int>(i % 2));
  producer.flush();

  // The mock cluster never elects a new leader by itself: without this move
  // partition 0 would wait for broker 1 to come back.
  cluster.broker_down(1);
  cluster.set_leader("lines", 0, 2);
  cluster.push_produce_errors(5, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION);
  for (std::size_t i = 1000; i < 2000; ++i) producer.produce("lines", line(i), static_cast<int>(i % 2));
  producer.flush(20s);
  wait_for_all(reader, 2000);
  auto seen = times_read(reader, 2000);
  CHECK(std::count(seen.begin(), seen.end(), 0) == 0);
}

TEST_CASE("a reader started before its topic exists, while the broker is down, reads it once both are there") {
  MockCluster cluster(1);
  cluster.broker_down(1);
  TopicReader reader(cluster.bootstraps(), "lines");
  auto until = std::chrono::steady_clock::now() + 5s;
  while (reader.last_error().empty() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(20ms);
  CHECK(reader.partitions() == 0);
  CHECK_THAT(reader.last_error(), Catch::Contains("waiting for topic lines"));

  cluster.broker_up(1);
  // Looking for the topic must not create it (with the mock's default of 4
  // partitions, before create_topic could).
  std::this_thread::sleep_for(300ms);
  CHECK(reader.partitions() == 0);
  cluster.create_topic("lines", 3);
  Producer producer(cluster.bootstraps(), {{"linger.ms", "5"}});
  for (std::size_t i = 0; i < 3000; ++i) producer.produce("lines", line(i), static_cast<int>(i % 3));
  producer.flush(20s);
  wait_for_all(reader, 3000);
  CHECK(reader.partitions() == 3);
  auto seen = times_read(reader, 3000);
  CHECK(std::count(seen.begin(), seen.end(), 1) == 3000);
}
