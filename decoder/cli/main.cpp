// terse: reads .tlog files back as text or JSON lines, follows live ones,
// filters, merges by time, shows statistics and verifies files.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include <terse/decoder.hpp>
#include <terse/schema.hpp>

#include "cursor.hpp"
#include "filters.hpp"
#include "inputs.hpp"
#include "mask.hpp"
#include "printer.hpp"
#include "ship.hpp"
#include "stats.hpp"

using namespace terse::decoder;
using namespace terse::cli;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitDamage = 1;
constexpr int kExitUsage = 2;

// Output goes through one buffer and large writes; a reader that went away
// (a closed pipe) ends the program quietly.
class Output {
 public:
  std::string& buffer() { return buffer_; }
  void maybe_flush() {
    if (buffer_.size() >= (1 << 16)) flush();
  }
  void flush() {
    const char* p = buffer_.data();
    std::size_t left = buffer_.size();
    while (left > 0) {
      ssize_t n = ::write(STDOUT_FILENO, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EPIPE) std::exit(kExitOk);
        std::fprintf(stderr, "terse: writing output failed: %s\n", std::strerror(errno));
        std::exit(kExitUsage);
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    buffer_.clear();
  }
  // While following, nothing may be written for a long time; a pipe whose
  // reader left must still end the program.
  static bool reader_gone() {
    pollfd p{STDOUT_FILENO, 0, 0};
    return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
  }

 private:
  std::string buffer_;
};

void print_problem(const Problem& p) {
  std::fprintf(stderr, "terse: %s: offset %llu: %s\n", p.source.c_str(), static_cast<unsigned long long>(p.offset),
               p.what.c_str());
}

Summary decode_path(const std::string& path, const RecordSink& sink, const Reporter& reporter) {
  if (path == "-") {
    StreamDecoder decoder("<stdin>", reporter);
    return decoder.decode_fd(STDIN_FILENO, sink);
  }
  return decode_file(path, sink, reporter);
}

const char* const kMainFooter = R"(Examples:
  terse cat logs/                          every .tlog file of the directory, oldest first
  terse cat -f logs/ | grep --line-buffered ERROR
  terse cat -f logs/ other-logs/           several inputs: one stream in time order
  terse cat --level warn --since "1h ago" logs/
  terse cat --json logs/ | jq .message
  terse stats logs/
  terse verify logs/app-20261129-001.tlog
  terse ship --brokers k1:9092 --topic app-logs --cursor-file app.cursor logs/

Run 'terse COMMAND --help' for a command's options; 'man terse' for more.)";

const char* const kCatFooter = R"(Times for --since/--until: "2026-11-29 14:00", "2026-11-29 14:00:05.25", "14:00" (today),
RFC 3339 ("2026-11-29T14:00:05Z", "...+02:00"), relative ("-10m", "1h ago", "30s",
"+5m"), "now", "today", "yesterday". Local time unless a zone is given or --utc.

Output modes (-o): precise (the default: times to the nanosecond), short (to the microsecond),
cat (the message only), json (one object per line; --json is the same).

Examples:
  terse cat logs/                               all files of the directory, merged by time
  terse cat -f logs/                            print, then follow new records and rolled files
  terse cat -f logs/ db-logs/                   follow several: one stream in strict time order
                                                (a quiet input holds the others back up to 200 ms)
  terse cat -f -n 20 logs/                      the last 20 records, then follow
  terse cat --level warn..error logs/           warnings and errors only
  terse cat --since "2026-11-29 14:00" --until "2026-11-29 14:05" logs/
  terse cat --site "queue depth" logs/          records of call sites whose format has the text
  terse cat --site net/conn.cpp:120 logs/       one call site by file:line
  terse cat --thread 4711 -g "timeout|refused" logs/
  terse cat -o json logs/ | jq 'select(.level == "error")'
  terse cat --mask mask.rules logs/             redact: lines of 'REGEX => REPLACEMENT', e.g.
                                                (1[3-9]\d)\d{4}(\d{4}) => $1****$2
  terse cat -f -o json --show-cursor logs/      each object gets a "cursor" key ...
  terse cat -f -o json --after-cursor C logs/   ... and a restarted shipper goes on right after it
  terse cat -o json --show-cursor logs/ db/     a merged run's cursor holds a place per input
  terse cat -o json --schema-header logs/       first line: {"schema":"terse.record/1","fields":{...}}
  terse cat --format "{time} {level:<8} {message}" logs/
  cat logs/*.tlog | terse cat -                 standard input)";

const char* const kVerifyFooter = R"(Exit code 0 only when every frame of every file is intact; damage is listed on
stderr with the file and offset (a torn tail is where a writer stopped: the
records before it are all readable with 'terse cat').

Examples:
  terse verify logs/
  terse verify logs/app-20261129-001.tlog || echo damaged)";

const char* const kStatsFooter = R"(Shows per-level and per-call-site counts, file bytes, stored and raw frame bytes
(the compression ratio), the time span, dropped records and a per-minute rate
sparkline by level.

Examples:
  terse stats logs/
  terse stats --top 10 logs/app-20261129-001.tlog
  terse stats --json logs/ | jq .levels)";

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"terse: read, follow, filter, check and summarise terse binary log files, and ship them to Kafka"};
  app.require_subcommand(1);
  app.footer(kMainFooter);

  std::vector<std::string> cat_paths;
  std::string pattern;
  std::string mode;
  bool json = false;
  bool follow = false;
  std::optional<std::size_t> tail_lines;
  std::string color = "auto";
  FilterOptions filter_options;
  auto* cat = app.add_subcommand("cat", "Print records as text lines or JSON lines");
  cat->footer(kCatFooter);
  cat->add_option("paths", cat_paths, "Files, directories (their .tlog files) or - for standard input")
      ->required();
  auto* format_option =
      cat->add_option("--format", pattern, "Line pattern: {time} {level} {thread} {file} {line} {message}");
  auto* mode_option = cat->add_option("-o,--output", mode, "Output mode: short, precise, cat or json")
                          ->check(CLI::IsMember({"short", "precise", "cat", "json"}));
  cat->add_flag("--json", json, "One JSON object per line: time, level, thread, file, line, message, args (= -o json)")
      ->excludes(format_option)
      ->excludes(mode_option);
  cat->add_flag("--utc", filter_options.utc, "Print (and read --since/--until) times in UTC instead of local time");
  cat->add_option("--color", color, "Colour levels: auto (on a terminal), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cat->add_option("--level", filter_options.level,
                  "Only this level and above (trace … critical), or a range LOW..HIGH");
  cat->add_option("-S,--since", filter_options.since, "Only records at or after this time");
  cat->add_option("-U,--until", filter_options.until, "Only records at or before this time");
  cat->add_option("--thread", filter_options.threads, "Only this thread: OS thread id or name (repeatable)");
  cat->add_option("--site", filter_options.sites,
                  "Only call sites whose format string contains TEXT, or whose file or file:line is TEXT (repeatable)");
  cat->add_option("-g,--grep", filter_options.grep,
                  "Only records whose message matches this regex (no capitals: case-insensitive)");
  cat->add_flag("-f,--follow", follow,
                "Keep reading: new records and new files as the writer rolls (like tail -F); several inputs stay "
                "in time order");
  cat->add_option("-n,--lines", tail_lines, "Start with the last N records");
  std::string mask_path;
  cat->add_option("--mask", mask_path,
                  "Redact: a file of 'REGEX => REPLACEMENT' lines applied to messages and string arguments "
                  "(re-read when it changes while following)");
  bool show_cursor = false;
  std::string after_cursor;
  cat->add_flag("--show-cursor", show_cursor,
                "With -o json: add a \"cursor\" key, where every input stands after this record, for "
                "--after-cursor");
  auto* after_option = cat->add_option("--after-cursor", after_cursor,
                                       "Start right after the record this cursor (from --show-cursor) names");
  after_option->excludes(cat->get_option("--lines"));
  bool schema_header = false;
  cat->add_flag("--schema-header", schema_header,
                "With -o json: first print one object that names and describes the keys of the records");

  std::vector<std::string> verify_paths;
  auto* verify = app.add_subcommand("verify", "Check every frame; exit 0 only when all of it is intact");
  verify->footer(kVerifyFooter);
  verify->add_option("paths", verify_paths, "Files, directories or - for standard input")->required();

  StatsOptions stats_options;
  auto* stats = app.add_subcommand("stats", "Counts per level and call site, bytes, compression, time span, drops");
  stats->footer(kStatsFooter);
  stats->add_option("paths", stats_options.paths, "Files, directories or - for standard input")->required();
  stats->add_flag("--json", stats_options.json, "One JSON object instead of the text report");
  stats->add_flag("--utc", stats_options.utc, "Print times in UTC");
  stats->add_option("--top", stats_options.top, "How many call sites to list (default 20; 0 for all)");

  ShipOptions ship_options;
  auto* ship = add_ship_command(app, ship_options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }

  bool ok = true;
  if (*cat) {
    if (json) mode = "json";
    TimeStyle style;
    style.utc = filter_options.utc;
    // Nanoseconds unless asked for less: the file has them, and a reader
    // comparing records of a busy process needs them.
    style.digits = mode == "short" ? 6 : 9;
    const char* no_color = std::getenv("NO_COLOR");
    const char* term = std::getenv("TERM");
    style.color = color == "always" || (color == "auto" && ::isatty(STDOUT_FILENO) && !(no_color && *no_color) &&
                                        !(term && std::strcmp(term, "dumb") == 0));
    std::optional<LinePattern> line;
    Filters filters;
    std::optional<Masker> mask;
    try {
      if (!mask_path.empty()) mask.emplace(mask_path);
      if (!pattern.empty() && mode == "cat") throw UsageError("-o cat and --format both say what a line is; pick one");
      if (mode != "json") {
        line.emplace(!pattern.empty() ? pattern : mode == "cat" ? std::string("{message}") : kDefaultPattern);
      }
      filters = make_filters(filter_options, now_ns());
      if (show_cursor && mode != "json") throw UsageError("--show-cursor adds a key to JSON records: use it with -o json");
      if (schema_header && mode != "json")
        throw UsageError("--schema-header describes JSON records: use it with -o json");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "terse: %s\n", e.what());
      return kExitUsage;
    }
    Output out;
    Printer printer(std::move(line), style, filters.grep, mask ? &*mask : nullptr);
    // A torn tail is where a live or crashed writer stopped: the end of the
    // data, not damage (`verify` still reports it).
    Reporter reporter = [&](const Problem& p) {
      if (p.torn_tail) return;
      out.flush();  // keep stderr and stdout in order on a terminal
      print_problem(p);
      if (p.bad_resume) {
        std::fprintf(stderr,
                     "terse: the cursor does not fit the file it names (was the file replaced or damaged?); "
                     "start again without --after-cursor, or with a later cursor\n");
        std::exit(kExitDamage);
      }
    };
    Merger merger(reporter, filters.decoder, follow);
    if (!merger.add_paths(cat_paths)) ok = false;
    bool after = after_option->count() > 0;
    if (show_cursor || after) {
      if (merger.reads_stdin()) {
        std::fprintf(stderr,
                     "terse: cursors name places in files, and standard input has none: give the files or "
                     "directories instead of -\n");
        return kExitUsage;
      }
      merger.keep_positions();
    }
    if (after) {
      ParsedCursor cursor = parse_cursor(after_cursor);
      if (!cursor.error.empty()) {
        std::string shown = after_cursor.size() > 80 ? after_cursor.substr(0, 77) + "..." : after_cursor;
        std::fprintf(stderr,
                     "terse: --after-cursor '%s' is not a cursor: %s; pass the \"cursor\" value that "
                     "'terse cat -o json --show-cursor' printed, unchanged\n",
                     shown.c_str(), cursor.error.c_str());
        return kExitUsage;
      }
      std::vector<std::string> notes;
      std::string error = merger.resume_after(cursor.inputs, notes);
      if (!error.empty()) {
        std::fprintf(stderr, "terse: --after-cursor: %s\n", error.c_str());
        return kExitUsage;
      }
      for (const auto& note : notes) std::fprintf(stderr, "terse: --after-cursor: %s\n", note.c_str());
    }
    if (schema_header) out.buffer() += json_schema_header(show_cursor);
    std::vector<InputPosition> positions;
    auto print = [&](const Record& record, std::string& text) {
      if (!printer.print(record, text)) return false;
      if (show_cursor) {
        merger.positions(positions);
        add_cursor_key(text, positions);
      }
      return true;
    };
    Record record;
    if (tail_lines) {
      // Only the last N lines are kept while the rest is read.
      std::deque<std::string> ring;
      while (merger.next(record)) {
        std::string text;
        if (!print(record, text)) continue;
        ring.push_back(std::move(text));
        if (ring.size() > *tail_lines) ring.pop_front();
      }
      for (const auto& l : ring) {
        out.buffer() += l;
        out.maybe_flush();
      }
    }
    for (;;) {
      while (merger.next(record)) {
        print(record, out.buffer());
        out.maybe_flush();
      }
      if (!follow) break;
      // One batch is out: flush it so `| grep` sees it now.
      out.flush();
      if (Output::reader_gone()) return kExitOk;
      std::this_thread::sleep_for(merger.next_round_in());
      merger.new_round();
      if (mask) {
        // Between two records: each line is masked by one set of rules.
        std::string error;
        if (mask->reload_if_changed(error)) {
          std::fprintf(stderr, "terse: --mask %s: reloaded (%zu rules)\n", mask_path.c_str(), mask->size());
        } else if (!error.empty()) {
          std::fprintf(stderr, "terse: %s\n", error.c_str());
        }
      }
    }
    out.flush();
    if (merger.damaged() != 0) ok = false;
    return ok ? kExitOk : kExitDamage;
  }

  if (*verify) {
    for (const auto& path : expand_paths(verify_paths, ok)) {
      std::uint64_t unformattable = 0;
      std::string scratch;
      auto sink = [&](const Record& record) {
        scratch.clear();
        if (!render_message(record, scratch)) ++unformattable;
      };
      Summary summary = decode_path(path, sink, print_problem);
      bool intact = summary.intact() && unformattable == 0;
      std::printf("%s: %s (%llu frames, %llu records%s%s)\n", path.c_str(), intact ? "ok" : "DAMAGED",
                  static_cast<unsigned long long>(summary.frames), static_cast<unsigned long long>(summary.records),
                  summary.torn_tail ? ", torn tail" : "",
                  unformattable ? (", " + std::to_string(unformattable) + " unformattable").c_str() : "");
      if (!intact) ok = false;
    }
    std::fflush(stdout);
    return ok ? kExitOk : kExitDamage;
  }

  if (*stats) return run_stats(stats_options) ? kExitOk : kExitDamage;
  if (*ship) {
#ifdef TERSE_HAVE_KAFKA
    return run_ship(ship_options);
#else
    std::fprintf(stderr, "terse: this terse was built without librdkafka, so it cannot ship; rebuild it with "
                         "librdkafka-dev installed\n");
    return kShipUsage;
#endif
  }
  return kExitUsage;
}
