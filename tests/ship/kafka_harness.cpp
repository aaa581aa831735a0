#include "kafka_harness.hpp"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <utility>

namespace terse::test {
namespace {

// Kafka's protocol number for Produce, which the public mock header takes
// but does not name.
constexpr std::int16_t kProduceApiKey = 0;

// librdkafka logs every refused connection; a test that takes brokers down
// would drown its own output. TERSE_TEST_KAFKA_LOG=1 brings the logs back;
// any other value is also taken as librdkafka's debug contexts (e.g.
// "fetch,topic,metadata").
std::string_view kafka_log_setting() {
  const char* v = std::getenv("TERSE_TEST_KAFKA_LOG");
  return v == nullptr || std::string_view(v) == "0" ? std::string_view() : std::string_view(v);
}

void log_to_stderr(const rd_kafka_t* rk, int level, const char* facility, const char* text) {
  std::fprintf(stderr, "[librdkafka %s %d %s] %s\n", rd_kafka_name(rk), level, facility, text);
}

void drop_log(const rd_kafka_t*, int, const char*, const char*) {}

void set(rd_kafka_conf_t* conf, const char* name, const std::string& value) {
  char err[512];
  if (rd_kafka_conf_set(conf, name, value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error("kafka harness: setting " + std::string(name) + "=" + value + ": " + err);
  }
}

rd_kafka_conf_t* quiet_conf() {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  std::string_view wanted = kafka_log_setting();
  rd_kafka_conf_set_log_cb(conf, wanted.empty() ? drop_log : log_to_stderr);
  if (!wanted.empty() && wanted != "1") set(conf, "debug", std::string(wanted));
  return conf;
}

rd_kafka_t* make_handle(rd_kafka_type_t type, rd_kafka_conf_t* conf) {
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);  // owns conf on success
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("kafka harness: creating a client: ") + err);
  }
  return rk;
}

void check(rd_kafka_resp_err_t err, const std::string& what) {
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw std::runtime_error("mock cluster: " + what + ": " + rd_kafka_err2str(err));
}

std::string random_suffix() {
  std::random_device rd;
  return std::to_string(rd()) + std::to_string(rd());
}

}  // namespace

std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// ---------------------------------------------------------------- MockCluster

MockCluster::MockCluster(int brokers) : brokers_(brokers) {
  if (brokers < 1) throw std::invalid_argument("mock cluster: needs at least one broker");
  // A producer that never produces: the mock cluster needs a handle to run on.
  owner_ = make_handle(RD_KAFKA_PRODUCER, quiet_conf());
  cluster_ = rd_kafka_mock_cluster_new(owner_, brokers);
  if (cluster_ == nullptr) {
    rd_kafka_destroy(owner_);
    throw std::runtime_error("mock cluster: could not start " + std::to_string(brokers) + " brokers");
  }
}

MockCluster::~MockCluster() {
  rd_kafka_mock_cluster_destroy(cluster_);
  rd_kafka_destroy(owner_);
}

std::string MockCluster::bootstraps() const { return rd_kafka_mock_cluster_bootstraps(cluster_); }

void MockCluster::create_topic(const std::string& topic, int partitions, int replication) {
  check(rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, replication), "creating topic " + topic);
}

void MockCluster::broker_down(int id) {
  check(rd_kafka_mock_broker_set_down(cluster_, id), "taking broker " + std::to_string(id) + " down");
}

void MockCluster::broker_up(int id) {
  check(rd_kafka_mock_broker_set_up(cluster_, id), "bringing broker " + std::to_string(id) + " up");
}

void MockCluster::set_rtt(int id, int rtt_ms) {
  check(rd_kafka_mock_broker_set_rtt(cluster_, id, rtt_ms), "setting broker " + std::to_string(id) + "'s round trip");
}

void MockCluster::set_leader(const std::string& topic, int partition, int broker_id) {
  check(rd_kafka_mock_partition_set_leader(cluster_, topic.c_str(), partition, broker_id),
        "making broker " + std::to_string(broker_id) + " the leader of " + topic + " [" + std::to_string(partition) +
            "]");
}

void MockCluster::push_produce_errors(int count, rd_kafka_resp_err_t err) {
  if (count < 0) throw std::invalid_argument("mock cluster: a negative count of produce errors");
  if (count == 0) return;
  std::vector<rd_kafka_resp_err_t> errors(static_cast<std::size_t>(count), err);
  rd_kafka_mock_push_request_errors_array(cluster_, kProduceApiKey, errors.size(), errors.data());
}

// ---------------------------------------------------------------- TopicReader

TopicReader::TopicReader(const std::string& bootstraps, const std::string& topic) : topic_(topic) {
  rd_kafka_conf_t* conf = quiet_conf();
  set(conf, "bootstrap.servers", bootstraps);
  // assign() needs a group, but nothing is ever committed to it.
  set(conf, "group.id", "terse-topic-reader-" + random_suffix());
  set(conf, "enable.auto.commit", "false");
  set(conf, "enable.auto.offset.store", "false");
  // A partition the mock cluster trimmed under the reader resumes at its new
  // start, which gaps() then reports.
  set(conf, "auto.offset.reset", "earliest");
  set(conf, "enable.partition.eof", "false");
  // Fetch as much as the broker has, as soon as it has it.
  set(conf, "fetch.wait.max.ms", "5");
  set(conf, "fetch.error.backoff.ms", "10");
  set(conf, "fetch.max.bytes", std::to_string(100 << 20));
  set(conf, "max.partition.fetch.bytes", std::to_string(16 << 20));
  set(conf, "receive.message.max.bytes", std::to_string(200 << 20));
  set(conf, "queued.min.messages", "1000000");
  set(conf, "queued.max.messages.kbytes", std::to_string(1 << 20));
  // Brokers that come back are reconnected to quickly, and leaders that
  // moved are found quickly.
  set(conf, "topic.metadata.refresh.fast.interval.ms", "50");
  set(conf, "reconnect.backoff.ms", "10");
  set(conf, "reconnect.backoff.max.ms", "200");
  // A fetch left hanging by a broker that went down, or by a partition whose
  // leader moved, is given up after 3 s instead of librdkafka's 60.
  set(conf, "socket.timeout.ms", "3000");
  set(conf, "topic.metadata.refresh.interval.ms", "1000");
  consumer_ = make_handle(RD_KAFKA_CONSUMER, conf);
  // Errors and other events come out of the same queue as the messages.
  rd_kafka_poll_set_consumer(consumer_);
  queue_ = rd_kafka_queue_get_consumer(consumer_);
  thread_ = std::thread([this] { run(); });
}

TopicReader::~TopicReader() { stop(); }

void TopicReader::stop() {
  if (consumer_ == nullptr) return;
  stopping_ = true;
  thread_.join();
  rd_kafka_queue_destroy(queue_);
  rd_kafka_consumer_close(consumer_);
  rd_kafka_destroy(consumer_);
  consumer_ = nullptr;
  queue_ = nullptr;
}

bool TopicReader::assign() {
  while (!stopping_) {
    std::string why;
    const rd_kafka_metadata_t* md = nullptr;
    // All topics, not just this one: asking the mock cluster about a topic
    // it does not have creates it, with its default partition count. Short,
    // so that stop() is not kept waiting while brokers are down.
    rd_kafka_resp_err_t err = rd_kafka_metadata(consumer_, 1, nullptr, &md, 500);
    int partitions = 0;
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      why = rd_kafka_err2str(err);
    } else {
      for (int i = 0; i < md->topic_cnt; ++i) {
        const auto& t = md->topics[i];
        if (topic_ != t.topic) continue;
        if (t.err != RD_KAFKA_RESP_ERR_NO_ERROR)
          why = rd_kafka_err2str(t.err);
        else
          partitions = t.partition_cnt;
      }
      rd_kafka_metadata_destroy(md);
    }
    if (partitions > 0) {
      // Asked about by name now that it exists, so that every partition
      // knows its leader before the assignment: else the first offset
      // lookup finds none and retries only half a second later.
      rd_kafka_topic_t* handle = rd_kafka_topic_new(consumer_, topic_.c_str(), nullptr);
      if (handle != nullptr) {
        if (rd_kafka_metadata(consumer_, 0, handle, &md, 500) == RD_KAFKA_RESP_ERR_NO_ERROR)
          rd_kafka_metadata_destroy(md);
        rd_kafka_topic_destroy(handle);
      }
      rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
      for (int p = 0; p < partitions; ++p)
        rd_kafka_topic_partition_list_add(list, topic_.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
      err = rd_kafka_assign(consumer_, list);
      rd_kafka_topic_partition_list_destroy(list);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        next_offset_.assign(static_cast<std::size_t>(partitions), 0);
        partitions_ = partitions;
        std::lock_guard lock(mutex_);
        last_error_.clear();  // what it waited for is over
        return true;
      }
      why = std::string("assigning its partitions: ") + rd_kafka_err2str(err);
    }
    {
      std::lock_guard lock(mutex_);
      last_error_ = "topic reader: waiting for topic " + topic_ + ": " + (why.empty() ? "not in the metadata" : why);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void TopicReader::run() {
  if (!assign()) return;
  constexpr std::size_t kBatch = 8192;
  std::vector<rd_kafka_message_t*> batch(kBatch);
  std::vector<Stored> records;
  records.reserve(kBatch);
  std::string first_gap;
  std::size_t redelivered = 0;

  while (!stopping_) {
    // Block briefly for the first message, then drain what is already queued.
    rd_kafka_message_t* first = rd_kafka_consumer_poll(consumer_, 50);
    if (first == nullptr) continue;
    batch[0] = first;
    ssize_t more = rd_kafka_consume_batch_queue(queue_, 0, batch.data() + 1, kBatch - 1);
    std::size_t n = 1 + (more > 0 ? static_cast<std::size_t>(more) : 0);

    std::size_t bytes = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (batch[i]->err == RD_KAFKA_RESP_ERR_NO_ERROR) bytes += batch[i]->len + batch[i]->key_len;
    std::string chunk;
    chunk.reserve(bytes);
    records.clear();
    std::string error;

    for (std::size_t i = 0; i < n; ++i) {
      rd_kafka_message_t* m = batch[i];
      if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        error = rd_kafka_message_errstr(m);
        rd_kafka_message_destroy(m);
        continue;
      }
      auto p = static_cast<std::size_t>(m->partition);
      if (p >= next_offset_.size()) next_offset_.resize(p + 1, 0);  // not assigned: never expected
      std::int64_t& next = next_offset_[p];
      if (m->offset < next) {
        ++redelivered;
        rd_kafka_message_destroy(m);
        continue;
      }
      if (m->offset > next && first_gap.empty()) {
        first_gap =
            "topic " + topic_ + " partition " + std::to_string(p) +
            (next == 0 ? " starts at offset " + std::to_string(m->offset) + " instead of 0"
                       : " jumps from offset " + std::to_string(next - 1) + " to " + std::to_string(m->offset)) +
            ": the mock cluster keeps only the newest 5 MiB or 100000 message sets of a "
            "partition and dropped older ones before they were read; start the TopicReader "
            "before producing, or spread the data over more partitions, or compress it";
      }
      next = m->offset + 1;
      Stored s{};
      s.chunk = 0;  // set under the lock
      s.at = static_cast<std::uint32_t>(chunk.size());
      s.payload_len = static_cast<std::uint32_t>(m->len);
      s.key_len = static_cast<std::uint32_t>(m->key_len);
      s.partition = m->partition;
      s.offset = m->offset;
      s.timestamp_ms = rd_kafka_message_timestamp(m, nullptr);
      if (m->len > 0) chunk.append(static_cast<const char*>(m->payload), m->len);
      if (m->key_len > 0) chunk.append(static_cast<const char*>(m->key), m->key_len);
      records.push_back(s);
      rd_kafka_message_destroy(m);
    }

    {
      std::lock_guard lock(mutex_);
      if (!records.empty()) {
        auto index = static_cast<std::uint32_t>(chunks_.size());
        chunks_.push_back(std::move(chunk));
        for (Stored& s : records) s.chunk = index;
        stored_.insert(stored_.end(), records.begin(), records.end());
        count_ += records.size();
      }
      redelivered_ = redelivered;
      if (first_gap_.empty()) first_gap_ = first_gap;
      if (!error.empty()) last_error_ = std::move(error);
    }
    if (!records.empty()) arrived_.notify_all();
  }
}

std::size_t TopicReader::count() const {
  std::lock_guard lock(mutex_);
  return count_;
}

bool TopicReader::wait_for_count(std::size_t n, std::chrono::milliseconds limit) const {
  std::unique_lock lock(mutex_);
  return arrived_.wait_for(lock, limit, [&] { return count_ >= n; });
}

MessageView TopicReader::view(const Stored& s) const {
  const std::string& chunk = chunks_[s.chunk];
  MessageView v;
  v.payload = std::string_view(chunk).substr(s.at, s.payload_len);
  v.key = std::string_view(chunk).substr(s.at + s.payload_len, s.key_len);
  v.partition = s.partition;
  v.offset = s.offset;
  v.timestamp_ms = s.timestamp_ms;
  return v;
}

void TopicReader::for_each(const std::function<void(const MessageView&)>& visit) const {
  std::lock_guard lock(mutex_);
  for (const Stored& s : stored_) visit(view(s));
}

std::vector<Message> TopicReader::snapshot() const {
  std::vector<Message> out;
  std::lock_guard lock(mutex_);
  out.reserve(stored_.size());
  for (const Stored& s : stored_) {
    MessageView v = view(s);
    out.push_back(Message{std::string(v.payload), std::string(v.key), v.partition, v.offset, v.timestamp_ms});
  }
  return out;
}

std::vector<Message> TopicReader::take() {
  std::vector<Stored> stored;
  std::vector<std::string> chunks;
  {
    std::lock_guard lock(mutex_);
    stored.swap(stored_);
    chunks.swap(chunks_);
  }
  std::vector<Message> out;
  out.reserve(stored.size());
  for (const Stored& s : stored) {
    std::string_view chunk = chunks[s.chunk];
    out.push_back(Message{std::string(chunk.substr(s.at, s.payload_len)),
                          std::string(chunk.substr(s.at + s.payload_len, s.key_len)), s.partition, s.offset,
                          s.timestamp_ms});
  }
  return out;
}

std::string TopicReader::gaps() const {
  std::lock_guard lock(mutex_);
  return first_gap_;
}

std::size_t TopicReader::redelivered() const {
  std::lock_guard lock(mutex_);
  return redelivered_;
}

std::string TopicReader::last_error() const {
  std::lock_guard lock(mutex_);
  return last_error_;
}

}  // namespace terse::test
