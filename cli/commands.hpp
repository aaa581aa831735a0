// The commands of `terse`: each registers its options on its own CLI11
// subcommand and has one entry point that returns the process's exit code.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "filters.hpp"

namespace CLI {
class App;
}

namespace terse::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitDamage = 1;
inline constexpr int kExitUsage = 2;

// ---- cat ------------------------------------------------------------------------

struct CatOptions {
  std::vector<std::string> paths;
  std::string pattern;
  std::string mode;
  bool json = false;
  bool follow = false;
  std::optional<std::size_t> tail_lines;
  std::string color = "auto";
  bool show_cursor = false;
  std::optional<std::string> after_cursor;
  bool schema_header = false;
  unsigned threads = 0;  // 0: as many as there are CPUs to run on
  FilterOptions filters;
  std::vector<std::string> keys;
  std::vector<std::string> signers;  // --signer FILE
};

// --key FILE (and TERSE_KEY), for the commands that read sealed files; and
// whether every key file given reads as a private key (said on stderr when not).
void add_key_option(CLI::App& command, std::vector<std::string>& keys);
bool read_keys(const std::vector<std::string>& paths);
// --signer FILE (and TERSE_SIGNER): writers' public keys that must have
// signed each sealed file; and whether every one given reads.
void add_signer_option(CLI::App& command, std::vector<std::string>& signers);
bool read_signers(const std::vector<std::string>& paths);

// --threads, for the commands that decode every record of their files.
void add_threads_option(CLI::App& command, unsigned& threads);
// What --threads asks for: 0 is the CPUs the process may run on.
unsigned decoding_threads(unsigned option);

CLI::App* add_cat_command(CLI::App& app, CatOptions& o);
int run_cat(const CatOptions& o);

// ---- verify ---------------------------------------------------------------------

struct VerifyOptions {
  std::vector<std::string> paths;
  unsigned threads = 0;
  std::vector<std::string> keys;
  std::vector<std::string> signers;  // --signer FILE
};

CLI::App* add_verify_command(CLI::App& app, VerifyOptions& o);
int run_verify(const VerifyOptions& o);

// ---- stats ----------------------------------------------------------------------

struct StatsOptions {
  std::vector<std::string> paths;
  bool json = false;
  bool utc = false;
  std::size_t top = 20;
  unsigned threads = 0;
  std::vector<std::string> keys;
  std::vector<std::string> signers;  // --signer FILE
};

CLI::App* add_stats_command(CLI::App& app, StatsOptions& o);
int run_stats(const StatsOptions& o);

// ---- ship -----------------------------------------------------------------------

// Exit codes of `terse ship` (terse.1 lists them): a service manager can tell
// a setup to fix from a broker that refused records.
inline constexpr int kShipOk = 0;
inline constexpr int kShipInputDamaged = 1;    // damaged frames (with --once), a cursor that fits no file
inline constexpr int kShipUsage = 2;           // options, -X properties, the cursor file, --mask rules
inline constexpr int kShipDeliveryFailed = 3;  // a record refused for good, or left unacknowledged at exit

struct ShipOptions {
  std::vector<std::string> paths;
  std::string brokers;
  std::string topic;
  std::string cursor_file;
  std::vector<std::string> properties;  // -X key=value, applied last
  int batch_records = 1024;
  int linger_ms = 200;
  std::string compression = "zstd";
  int max_buffer_mb = 16;
  int commit_interval_ms = 10;
  double stats_interval_s = 0;
  std::string message_key = "none";  // --message-key
  std::vector<std::string> keys;     // --key FILE
  std::vector<std::string> signers;  // --signer FILE
  bool once = false;
  double drain_timeout_s = 30;
  bool show_cursor = false;
  FilterOptions filters;
};

// Registered even where terse was built without librdkafka, so that the
// command shows in --help; run_ship then says how to get it.
CLI::App* add_ship_command(CLI::App& app, ShipOptions& o);
int run_ship(const ShipOptions& o);

// ---- keygen ---------------------------------------------------------------------

struct KeygenOptions {
  std::string file;
  std::string comment = "terse log key";
};

CLI::App* add_keygen_command(CLI::App& app, KeygenOptions& o);
int run_keygen(const KeygenOptions& o);

}  // namespace terse::cli
