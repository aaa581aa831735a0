// The options and help of `terse ship`, built with or without librdkafka so
// that the command always shows in --help; ship.cpp (built only with
// librdkafka) does the work.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "filters.hpp"

namespace terse::cli {
namespace {

const char* const kShipFooter =
    R"(Each record becomes one message: the JSON object 'terse cat -o json' prints, without
its newline, timestamped with the record's time. The cursor file holds where shipping
stands; it is replaced (write, fsync, rename) only once the broker acknowledged every
record before that place, so a restart after a crash or kill -9 sends again at most the
records that were unacknowledged or acknowledged after the last save (--commit-interval).

A broker that is slow or away is waited for, also with --once: librdkafka retries with
backoff, records wait in a buffer bounded by --max-buffer-mb, and reading pauses while it
is full. The application that writes the logs never waits for ship. SIGTERM or SIGINT
stops reading (or, with --once, the wait for acknowledgements) and drains for up to
--drain-timeout; a second signal ends the drain.

Exit codes: 0 all read records delivered (--once, or stopped by SIGTERM/SIGINT after
draining); 1 damaged input with --once, or a cursor that fits no file; 2 bad options,
-X property, cursor file or --mask rules; 3 a record was refused for good, or records were
still unacknowledged when the drain after a signal ended (they are sent again at the next
start).

Examples:
  terse ship --brokers k1:9092,k2:9092 --topic app-logs --cursor-file /var/lib/terse/app.cursor logs/
  terse ship ... --mask mask.rules --level info logs/
  terse ship ... -X security.protocol=ssl -X linger.ms=50 --stats-interval 10 logs/
  terse ship ... --once logs/                  ship what is there, wait for the broker, exit
  timeout 10m terse ship ... --once logs/      the same, but at most 10 minutes and the drain)";

}  // namespace

CLI::App* add_ship_command(CLI::App& app, ShipOptions& o) {
  auto* ship = app.add_subcommand("ship", "Produce records to Kafka as JSON messages, at least once, following");
  ship->footer(kShipFooter);
  ship->add_option("paths", o.paths, "Files or directories (their .tlog files)")->required();
  ship->add_option("--brokers", o.brokers, "Bootstrap brokers: HOST:PORT[,HOST:PORT...]")->required();
  ship->add_option("--topic", o.topic, "Topic to produce to")->required();
  ship->add_option("--cursor-file", o.cursor_file,
                   "Where shipping stands: read at start (absent: from the first record), saved as records are "
                   "acknowledged")
      ->required();
  ship->add_option("-X", o.properties, "Any librdkafka producer property, KEY=VALUE (repeatable; applied last)");
  ship->add_option("--batch-records", o.batch_records, "Most records per batch (batch.num.messages; default 1024)")
      ->check(CLI::Range(1, 1000000));
  ship->add_option("--linger-ms", o.linger_ms, "Longest wait to fill a batch (linger.ms; default 200)")
      ->check(CLI::Range(0, 900000));
  ship->add_option("--compression", o.compression, "compression.type: zstd (default), lz4, snappy, gzip or none")
      ->check(CLI::IsMember({"zstd", "lz4", "snappy", "gzip", "none"}));
  ship->add_option("--max-buffer-mb", o.max_buffer_mb,
                   "Bound on records waiting for the broker, in MiB (default 16); reading pauses when it is full")
      ->check(CLI::Range(1, 4096));
  ship->add_option("--commit-interval", o.commit_interval_ms,
                   "Least milliseconds between saves of the cursor file while records are acknowledged (default 10)")
      ->check(CLI::Range(0, 3600000));
  ship->add_option("--stats-interval", o.stats_interval_s,
                   "Seconds between progress lines on stderr: records, bytes, lag, retries (default 0: none)")
      ->check(CLI::Range(0.0, 86400.0));
  ship->add_option("--message-key", o.message_key,
                   "Message key: none (default; each record to a random partition), thread (a thread's records stay in "
                   "order) or site (file:line)")
      ->check(CLI::IsMember({"none", "thread", "site"}));
  // --key none|thread|site was the message key's name before sealed logs
  // took --key for the reading key; those three words still mean it.
  ship->add_option_function<std::vector<std::string>>(
          "--key",
          [&o](const std::vector<std::string>& values) {
            for (const auto& value : values) {
              if (value == "none" || value == "thread" || value == "site") {
                o.message_key = value;
              } else {
                o.keys.push_back(value);
              }
            }
          },
          "Private key that opens sealed files (as cat --key); none, thread or site: --message-key, its former name")
      ->envname("TERSE_KEY")
      ->type_name("FILE");
  add_signer_option(*ship, o.signers);
  ship->add_flag("--once", o.once, "Ship what the files hold now, wait for every acknowledgement, exit");
  ship->add_option("--drain-timeout", o.drain_timeout_s,
                   "Seconds to wait for acknowledgements after SIGTERM or SIGINT (default 30)")
      ->check(CLI::Range(0.0, 86400.0));
  ship->add_flag("--show-cursor", o.show_cursor, "Add a \"cursor\" key to each message, as cat --show-cursor does");
  add_filter_options(*ship, o.filters, UntilOption::not_offered);
  return ship;
}

#ifndef TERSE_HAVE_KAFKA
int run_ship(const ShipOptions&) {
  std::fprintf(stderr,
               "terse: this terse was built without librdkafka, so it cannot ship; rebuild it with "
               "librdkafka-dev installed\n");
  return kShipUsage;
}
#endif

}  // namespace terse::cli
