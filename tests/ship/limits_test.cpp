// `terse ship` at its limits: a broker that is away from the start (memory
// stays bounded, reading waits, then everything flows), setups that are
// wrong (exit 2, nothing produced), records the broker refuses for good
// (exit 3, the cursor stays before them), a record too large for a message
// (shipped cut); redaction on the way out.
#include <signal.h>

#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

#include "kafka_harness.hpp"
#include "ship_helpers.hpp"
#include "test_support.hpp"

using namespace terse::test;
using namespace std::chrono_literals;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Runs ship to its end; its exit code and stderr.
std::pair<int, std::string> ship_run(const std::vector<std::string>& args, const std::string& err_path) {
  Process ship(args, err_path);
  int code = ship.wait(60s);
  return {code, ship.stderr_text()};
}

}  // namespace

TEST_CASE("with the broker away, ship waits with its memory bounded and delivers everything once it is back") {
  TempDir dir;
  const std::string logs = dir / "logs";
  // Not scaled down: the JSON must outgrow the buffer several times over.
  const long records = 300'000;
  Process writer(writer_args({logs, "app", "mix", std::to_string(records)}), dir / "writer.err");
  REQUIRE(writer.wait(120s) == 0);
  std::vector<std::string> expected = cat_json({logs});
  std::size_t json_bytes = 0;
  for (const auto& line : expected) json_bytes += line.size();

  MockCluster cluster(1);
  cluster.create_topic("logs", 2);
  cluster.broker_down(1);
  const int buffer_mb = 8;
  Process ship(ship_args(cluster.bootstraps(), "logs", dir / "cursor",
                         {"--max-buffer-mb", std::to_string(buffer_mb), "--stats-interval", "0.2"}, {logs}),
               dir / "ship.err");
  // Far more JSON than the buffer holds: reading must stop and wait.
  REQUIRE(json_bytes > 4u * (buffer_mb << 20));
  std::this_thread::sleep_for(3s);
  std::string waiting = ship.stderr_text();
  long peak_kib = ship.peak_rss_kib();
  INFO(waiting);
  CHECK(last_stat(waiting, "records") == 0);
  CHECK(last_stat(waiting, "buffer_full_waits") > 0);
  CHECK(last_stat(waiting, "lag_s") > 0);
  double waiting_lag = last_stat(waiting, "lag_records");
  CHECK(waiting_lag > 0);
  CHECK(waiting_lag < static_cast<double>(records) / 2);
  // The buffer's bound plus what any run needs (the decoder, librdkafka's
  // threads and the binary): far below the JSON waiting to be sent.
  WARN("peak RSS while the broker is away: " << peak_kib / 1024 << " MiB with --max-buffer-mb " << buffer_mb << " ("
                                             << json_bytes / (1 << 20) << " MiB of JSON to ship)");
  CHECK(peak_kib < (buffer_mb + 40) * 1024);

  cluster.broker_up(1);
  TopicReader reader(cluster.bootstraps(), "logs");
  bool all = reader.wait_for_count(expected.size(), 120s);
  Tally tally = stop_and_compare(ship, reader, expected, all);
  CHECK(tally.missing == 0);
  CHECK(tally.duplicates == 0);
  CHECK(tally.unexpected == 0);
}

TEST_CASE("a wrong setup is exit code 2 with the reason, before anything is produced") {
  TempDir dir;
  const std::string logs = dir / "logs";
  Process writer(writer_args({logs, "app", "bursts", "1", "10", "0", "setup"}), dir / "writer.err");
  REQUIRE(writer.wait(30s) == 0);
  MockCluster cluster(1);
  cluster.create_topic("logs", 1);
  const std::string brokers = cluster.bootstraps();

  auto [bad_property, err1] =
      ship_run(ship_args(brokers, "logs", dir / "c1", {"--once", "-X", "no.such.property=1"}, {logs}), dir / "1.err");
  CHECK(bad_property == 2);
  CHECK(contains(err1, "no.such.property"));

  auto [bad_value, err2] =
      ship_run(ship_args(brokers, "logs", dir / "c2", {"--once", "-X", "linger.ms=soon"}, {logs}), dir / "2.err");
  CHECK(bad_value == 2);
  CHECK(contains(err2, "linger.ms"));

  auto [bad_brokers, err3] = ship_run(ship_args("localhost", "logs", dir / "c3", {"--once"}, {logs}), dir / "3.err");
  CHECK(bad_brokers == 2);
  CHECK(contains(err3, "HOST:PORT"));

  write_file(dir / "c4", "not a cursor\n");
  auto [bad_cursor, err4] = ship_run(ship_args(brokers, "logs", dir / "c4", {"--once"}, {logs}), dir / "4.err");
  CHECK(bad_cursor == 2);
  CHECK(contains(err4, "does not hold a cursor"));

  auto [no_dir, err5] = ship_run(ship_args(brokers, "logs", dir / "missing/cursor", {"--once"}, {logs}), dir / "5.err");
  CHECK(no_dir == 2);
  CHECK(contains(err5, "--cursor-file"));

  // Two shippers on one cursor file would each save over the other's place.
  Process first(ship_args(brokers, "logs", dir / "c6", {}, {logs}), dir / "6a.err");
  std::this_thread::sleep_for(500ms);
  auto [second, err6] = ship_run(ship_args(brokers, "logs", dir / "c6", {"--once"}, {logs}), dir / "6b.err");
  CHECK(second == 2);
  CHECK(contains(err6, "another terse ship"));
  first.signal(SIGTERM);
  CHECK(first.wait(30s) == 0);

  // Only the one shipper that ran produced anything.
  TopicReader reader(brokers, "logs");
  CHECK(reader.wait_for_count(10, 10s));
  std::this_thread::sleep_for(300ms);
  CHECK(reader.count() == 10);
}

TEST_CASE("a record the broker refuses for good is exit code 3, and the cursor stays before it; one too large is cut") {
  TempDir dir;
  const std::string logs = dir / "logs";
  MockCluster cluster(1);
  cluster.create_topic("logs", 1);

  SECTION("larger than message.max.bytes: shipped cut, with a mark, instead of blocking the cursor") {
    Process small(writer_args({logs, "app", "bursts", "1", "5", "0", "small"}), dir / "w1.err");
    REQUIRE(small.wait(30s) == 0);
    Process large(writer_args({logs, "app", "bursts", "1", "1", "0", std::string(30000, 'x')}), dir / "w2.err");
    REQUIRE(large.wait(30s) == 0);
    TopicReader reader(cluster.bootstraps(), "logs");
    auto [code, err] = ship_run(ship_args(cluster.bootstraps(), "logs", dir / "cursor",
                                          {"--once", "-X", "message.max.bytes=6000", "--stats-interval", "60"}, {logs}),
                                dir / "1.err");
    INFO(err);
    CHECK(code == 0);
    CHECK(last_stat(err, "cut") == 1);
    REQUIRE(reader.wait_for_count(6, 10s));
    std::vector<Message> messages = reader.snapshot();
    const Message& cut = messages.back();
    INFO(cut.payload);
    CHECK(cut.payload.size() <= 6000);
    CHECK(contains(cut.payload, "\"message\":\"xxxxxxxx"));
    CHECK(contains(cut.payload, "\"args\":null,\"cut\":{\"json_bytes\":"));
    CHECK(read_file(dir / "cursor") == final_cursor_file(logs));
  }

  SECTION("a produce request refused: not authorised") {
    Process writer(writer_args({logs, "app", "bursts", "1", "5", "0", "denied"}), dir / "w.err");
    REQUIRE(writer.wait(30s) == 0);
    cluster.push_produce_errors(1, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
    auto [code, err] =
        ship_run(ship_args(cluster.bootstraps(), "logs", dir / "cursor", {"--once"}, {logs}), dir / "3.err");
    INFO(err);
    CHECK(code == 3);
    CHECK(contains(err, "authori"));
    CHECK(!std::ifstream(dir / "cursor").good());
  }

  SECTION("a topic the cluster says may not be written") {
    Process writer(writer_args({logs, "app", "bursts", "1", "5", "0", "denied"}), dir / "w.err");
    REQUIRE(writer.wait(30s) == 0);
    // librdkafka only waits for such a topic; ship asks after 5 s without progress.
    rd_kafka_mock_topic_set_error(cluster.native(), "logs", RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
    auto [code, err] =
        ship_run(ship_args(cluster.bootstraps(), "logs", dir / "cursor", {"--once"}, {logs}), dir / "4.err");
    INFO(err);
    CHECK(code == 3);
    CHECK(contains(err, "authori"));
    CHECK(!std::ifstream(dir / "cursor").good());
  }
}

TEST_CASE("--mask redacts messages and string arguments before they leave") {
  TempDir dir;
  const std::string logs = dir / "logs";
  Process writer(writer_args({logs, "app", "bursts", "2", "20", "0", "user-13812345678"}), dir / "w.err");
  REQUIRE(writer.wait(30s) == 0);
  write_file(dir / "mask.rules", "(1[3-9]\\d)\\d{4}(\\d{4}) => $1****$2\n");
  MockCluster cluster(1);
  cluster.create_topic("logs", 1);
  TopicReader reader(cluster.bootstraps(), "logs");
  auto [code, err] = ship_run(
      ship_args(cluster.bootstraps(), "logs", dir / "cursor", {"--once", "--mask", dir / "mask.rules"}, {logs}),
      dir / "ship.err");
  INFO(err);
  REQUIRE(code == 0);
  REQUIRE(reader.wait_for_count(40, 10s));
  std::size_t masked = 0, leaked = 0;
  reader.for_each([&](const MessageView& m) {
    masked += contains(std::string(m.payload), "\"message\":\"user-138****5678 burst") &&
              contains(std::string(m.payload), "\"args\":[\"user-138****5678\"");
    leaked += contains(std::string(m.payload), "13812345678");
  });
  CHECK(masked == 40);
  CHECK(leaked == 0);
}
