// `terse ship` delivers what `terse cat -o json` prints, one message per
// record, nothing lost and nothing twice, and leaves its cursor file where
// `terse cat --show-cursor` says the last record is.
#include <algorithm>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include <terse/seal.hpp>

#include "kafka_harness.hpp"
#include "ship_helpers.hpp"
#include "test_support.hpp"

using namespace terse::test;
using namespace std::chrono_literals;

TEST_CASE("a million records reach the topic exactly as terse cat prints them") {
  TempDir dir;
  const std::string logs = dir / "logs";
  const long records = scaled(1'000'000);
  Process writer(writer_args({logs, "app", "mix", std::to_string(records)}), dir / "writer.err");
  REQUIRE(writer.wait(120s) == 0);
  std::vector<std::string> expected = cat_json({logs});
  REQUIRE(expected.size() == static_cast<std::size_t>(records));

  MockCluster cluster(3);
  // Eight partitions hold the whole run within the mock's per-partition
  // retention even if the reader falls behind.
  cluster.create_topic("logs", 8);
  TopicReader reader(cluster.bootstraps(), "logs");
  Process ship(ship_args(cluster.bootstraps(), "logs", dir / "cursor", {"--once", "--stats-interval", "1"}, {logs}),
               dir / "ship.err");
  int code = ship.wait(240s);
  INFO(ship.stderr_text());
  REQUIRE(code == 0);
  REQUIRE(reader.wait_for_count(expected.size(), 60s));
  std::this_thread::sleep_for(300ms);  // anything extra would show up now
  reader.stop();
  INFO(reader.last_error());
  REQUIRE(reader.gaps().empty());

  Tally tally = compare(sorted_hashes(expected), sorted_hashes(reader));
  CHECK(tally.missing == 0);
  CHECK(tally.duplicates == 0);
  CHECK(tally.unexpected == 0);
  CHECK(last_stat(ship.stderr_text(), "records") == static_cast<double>(records));
  CHECK(last_stat(ship.stderr_text(), "lag_records") == 0);

  // Kafka's timestamp is the record's; without a key, batches go to
  // partitions in turn (librdkafka's sticky partitioner).
  std::vector<int> per_partition(8, 0);
  bool keys_empty = true, stamped = true;
  reader.for_each([&](const MessageView& m) {
    ++per_partition.at(m.partition);
    keys_empty = keys_empty && m.key.empty();
    stamped = stamped && m.timestamp_ms > 1'700'000'000'000;
  });
  CHECK(keys_empty);
  CHECK(stamped);
  CHECK(std::count_if(per_partition.begin(), per_partition.end(), [](int count) { return count > 0; }) >= 2);

  CHECK(read_file(dir / "cursor") == final_cursor_file(logs));
}

TEST_CASE("a second run from the saved cursor ships only what was written since") {
  TempDir dir;
  const std::string logs = dir / "logs";
  MockCluster cluster(1);
  cluster.create_topic("logs", 2);
  TopicReader reader(cluster.bootstraps(), "logs");
  auto ship_once = [&](const std::string& name) {
    Process ship(ship_args(cluster.bootstraps(), "logs", dir / "cursor", {"--once", "--key", "thread"}, {logs}),
                 dir / name);
    int code = ship.wait(60s);
    INFO(ship.stderr_text());
    REQUIRE(code == 0);
  };
  Process first(writer_args({logs, "app", "bursts", "3", "50", "0", "first"}), dir / "w1.err");
  REQUIRE(first.wait(30s) == 0);
  ship_once("ship1.err");
  REQUIRE(reader.wait_for_count(150, 10s));
  Process second(writer_args({logs, "app", "bursts", "2", "50", "0", "second"}), dir / "w2.err");
  REQUIRE(second.wait(30s) == 0);
  ship_once("ship2.err");
  REQUIRE(reader.wait_for_count(250, 10s));
  std::this_thread::sleep_for(300ms);
  reader.stop();

  Tally tally = compare(sorted_hashes(cat_json({logs})), sorted_hashes(reader));
  CHECK(tally.missing == 0);
  CHECK(tally.duplicates == 0);
  CHECK(tally.unexpected == 0);
  // Keyed by thread: one writer thread per run, so each run's records share a key.
  std::set<std::string> keys;
  reader.for_each([&](const MessageView& m) { keys.insert(std::string(m.key)); });
  CHECK(keys.size() == 2);
}

TEST_CASE("without a key, even a short burst spreads evenly over the partitions") {
  TempDir dir;
  const std::string logs = dir / "logs";
  const long records = 20'000;
  Process writer(writer_args({logs, "app", "mix", std::to_string(records)}), dir / "writer.err");
  REQUIRE(writer.wait(60s) == 0);
  MockCluster cluster(1);
  cluster.create_topic("logs", 2);
  TopicReader reader(cluster.bootstraps(), "logs");
  Process ship(ship_args(cluster.bootstraps(), "logs", dir / "cursor", {"--once"}, {logs}), dir / "ship.err");
  int code = ship.wait(60s);
  INFO(ship.stderr_text());
  REQUIRE(code == 0);
  REQUIRE(reader.wait_for_count(static_cast<std::size_t>(records), 30s));
  reader.stop();
  // Each record to a partition of its own choosing: about half each, far
  // from the edges of this range (the standard deviation is 0.35 %).
  long first = 0;
  reader.for_each([&](const MessageView& m) { first += m.partition == 0; });
  INFO("partition 0: " << first << ", partition 1: " << records - first);
  CHECK(first > records * 2 / 5);
  CHECK(first < records * 3 / 5);
}

#ifdef TERSE_TEST_SEALED
TEST_CASE("sealed files ship as terse cat --key prints them, and without the key nothing ships") {
  TempDir dir;
  auto pair = terse::seal::new_key_pair("ship test");
  REQUIRE(pair);
  write_file(dir / "key", pair->secret);
  write_file(dir / "key.pub", pair->public_line);
  const std::string logs = dir / "logs";
  const long records = scaled(20'000, 1'000);
  set_environment("TERSE_ENCRYPT_TO", (dir / "key.pub").c_str());
  Process writer(writer_args({logs, "app", "mix", std::to_string(records)}), dir / "writer.err");
  int written = writer.wait(120s);
  set_environment("TERSE_ENCRYPT_TO", "");  // set but empty: not sealed (read by the writer only)
  REQUIRE(written == 0);
  std::vector<std::string> expected = cat_json({"--key", dir / "key", logs});
  REQUIRE(expected.size() == static_cast<std::size_t>(records));

  MockCluster cluster(1);
  cluster.create_topic("sealed", 2);
  TopicReader reader(cluster.bootstraps(), "sealed");
  Process ship(ship_args(cluster.bootstraps(), "sealed", dir / "cursor", {"--once", "--key", dir / "key"}, {logs}),
               dir / "ship.err");
  int code = ship.wait(120s);
  INFO(ship.stderr_text());
  REQUIRE(code == 0);
  REQUIRE(reader.wait_for_count(expected.size(), 60s));
  reader.stop();
  Tally tally = compare(sorted_hashes(expected), sorted_hashes(reader));
  CHECK(tally.missing == 0);
  CHECK(tally.duplicates == 0);
  CHECK(tally.unexpected == 0);

  Process keyless(ship_args(cluster.bootstraps(), "sealed", dir / "cursor2", {"--once"}, {logs}), dir / "keyless.err");
  CHECK(keyless.wait(120s) == 1);
  CHECK(keyless.stderr_text().find("sealed to key") != std::string::npos);
}
#endif
