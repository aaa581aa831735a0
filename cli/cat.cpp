// `terse cat`: prints records as text lines or JSON lines, merged by time,
// filtered, optionally following live files and resuming after a cursor.
// Everything goes through terse::reader, as in any program reading logs:
// the records from a Reader, their lines from a Formatter.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <terse/reader.hpp>

#include "commands.hpp"
#include "filters.hpp"
#include "mask.hpp"
#include "output.hpp"
#include "printer.hpp"

namespace terse::cli {

namespace fs = std::filesystem;
namespace {

const char* const kCatFooter =
    R"(Times for --since/--until: "2026-11-29 14:00", "2026-11-29 14:00:05.25", "14:00" (today),
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

// What the options make of the output; built before anything is read.
struct CatSetup {
  std::string mode;              // short, precise, cat or json
  reader::FormatOptions format;  // the mask goes in when the printer is made
  Filters filters;
  std::optional<Masker> mask;
};

bool color_wanted(const std::string& color) {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return color == "always" || (color == "auto" && ::isatty(STDOUT_FILENO) && !(no_color && *no_color) &&
                               !(term && std::strcmp(term, "dumb") == 0));
}

// Throws UsageError (or what the mask rules and filters throw) for options that do not fit.
CatSetup make_setup(const CatOptions& o) {
  CatSetup s;
  s.mode = o.json ? "json" : o.mode;
  s.format.utc = o.filters.utc;
  // Nanoseconds unless asked for less: the file has them, and a reader
  // comparing records of a busy process needs them.
  s.format.time_digits = s.mode == "short" ? 6 : 9;
  s.format.color = color_wanted(o.color);
  if (!o.filters.mask_path.empty()) s.mask.emplace(o.filters.mask_path);
  if (!o.pattern.empty() && s.mode == "cat") throw UsageError("-o cat and --format both say what a line is; pick one");
  s.format.json = s.mode == "json";
  if (!o.pattern.empty()) {
    s.format.pattern = o.pattern;
  } else if (s.mode == "cat") {
    s.format.pattern = "{message}";
  }
  reader::Formatter checked(s.format);  // a bad pattern is a usage error before anything is read
  s.filters = make_filters(o.filters, now_ns());
  if (o.show_cursor && s.mode != "json")
    throw UsageError("--show-cursor adds a key to JSON records: use it with -o json");
  if (o.schema_header && s.mode != "json")
    throw UsageError("--schema-header describes JSON records: use it with -o json");
  return s;
}

std::string parent_of(const std::string& path) {
  std::string dir = fs::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

int exit_code_of(Output::State state) { return state == Output::State::reader_left ? kExitOk : kExitUsage; }

// One run of `terse cat`, from the first record to the exit code.
class CatRun {
 public:
  CatRun(const CatOptions& o, CatSetup& setup)
      : o_(o),
        setup_(setup),
        problems_("terse", TornTails::count_silently),
        printer_(setup.format, setup.filters.grep, setup.mask ? &*setup.mask : nullptr) {
    // A torn tail is where a live or crashed writer stopped: the end of the
    // data, not damage (`verify` still reports it).
    problems_.before_each([this] { return out_.flush(); });  // keep stderr and stdout in order on a terminal
    problems_.go_quiet_after_bad_resume();
  }

  int run() {
    if (auto code = open()) return *code;
    if (o_.schema_header) out_.buffer() += json_schema_header(o_.show_cursor);
    if (print_parallel()) {
      if (out_.state() != Output::State::open) return exit_code_of(out_.state());
    } else {
      if (o_.tail_lines) {
        if (auto code = print_last_lines(*o_.tail_lines)) return *code;
      }
      if (auto code = print_rounds()) return *code;
    }
    if (!out_.flush()) return exit_code_of(out_.state());
    reader::Summary summary = reader_->summary();
    return summary.unreadable_inputs == 0 && summary.damaged == 0 && summary.sealed_unopened == 0 ? kExitOk
                                                                                                  : kExitDamage;
  }

 private:
  // The reader over the inputs, and --show-cursor and --after-cursor; an
  // exit code when they cannot apply.
  std::optional<int> open() {
    bool cursors = o_.show_cursor || o_.after_cursor;
    if (cursors && std::find(o_.paths.begin(), o_.paths.end(), "-") != o_.paths.end()) {
      std::fprintf(stderr,
                   "terse: cursors name places in files, and standard input has none: give the files or "
                   "directories instead of -\n");
      return kExitUsage;
    }
    reader::Options options;
    options.filter = setup_.filters.reader_filter;
    options.follow = o_.follow;
    options.cursors = cursors;
    // Each path that cannot be read is said, and the others are read.
    options.report_open_failures = true;
    options.on_problem = problems_.handler();
    options.keys = o_.keys;
    options.signers = o_.signers;
    reader_.emplace(o_.paths, std::move(options));
    if (!o_.after_cursor) return std::nullopt;
    const std::string& text = *o_.after_cursor;
    reader::ResumeResult resumed = reader_->resume_after(text);
    if (resumed.malformed) {
      std::string shown = text.size() > 80 ? text.substr(0, 77) + "..." : text;
      std::fprintf(stderr,
                   "terse: --after-cursor '%s' is not a cursor: %s; pass the \"cursor\" value that "
                   "'terse cat -o json --show-cursor' printed, unchanged\n",
                   shown.c_str(), resumed.error.c_str());
      return kExitUsage;
    }
    if (!resumed.ok) {
      std::fprintf(stderr, "terse: --after-cursor: %s\n", resumed.error.c_str());
      return kExitUsage;
    }
    for (const auto& note : resumed.notes) std::fprintf(stderr, "terse: --after-cursor: %s\n", note.c_str());
    return std::nullopt;
  }

  // The next record, or false: none for now, or the run must end (halt_ says how).
  bool next(reader::Record& record) {
    bool got = reader_->next(record);
    if (problems_.bad_resume()) {
      std::fprintf(stderr,
                   "terse: the cursor does not fit the file it names (was the file replaced or damaged?); "
                   "start again without --after-cursor, or with a later cursor\n");
      halt_ = kExitDamage;
      return false;
    }
    if (out_.state() != Output::State::open) {
      halt_ = exit_code_of(out_.state());
      return false;
    }
    return got;
  }

  bool print(const reader::Record& record, std::string& text) {
    if (!printer_.print(record, text)) return false;
    if (o_.show_cursor) add_cursor_key(text, reader_->cursor());
    return true;
  }

  // -n: only the last N lines are kept while the rest is read.
  std::optional<int> print_last_lines(std::size_t count) {
    std::deque<std::string> ring;
    reader::Record record;
    while (next(record)) {
      std::string text;
      if (!print(record, text)) continue;
      ring.push_back(std::move(text));
      if (ring.size() > count) ring.pop_front();
    }
    if (halt_) return halt_;
    for (const auto& line : ring) {
      out_.buffer() += line;
      if (!out_.maybe_flush()) return exit_code_of(out_.state());
    }
    return std::nullopt;
  }

  // One sequence of files, read once through, may be decoded on several
  // threads (the reader says whether the inputs are that). Following,
  // merging, -n and cursors need each record in turn (its time, its
  // position) and take the one-thread path. False when it did not apply.
  bool print_parallel() {
    if (threads_ <= 1 || o_.tail_lines) return false;
    reader::RendererFactory make_renderer = [this] {
      auto printer = std::make_shared<Printer>(printer_);
      return reader::Renderer(
          [printer](const reader::Record& record, std::string& out) { printer->print(record, out); });
    };
    return reader_->decode_parallel(threads_, make_renderer,
                                    [this](std::string_view text) { return out_.write(text); });
  }

  // Everything there is, then (following) round after round of what comes.
  std::optional<int> print_rounds() {
    reader::Record record;
    for (;;) {
      while (next(record)) {
        print(record, out_.buffer());
        if (!out_.maybe_flush()) return exit_code_of(out_.state());
      }
      if (halt_) return halt_;
      if (!o_.follow) return std::nullopt;
      // One batch is out: flush it so `| grep` sees it now.
      if (!out_.flush()) return exit_code_of(out_.state());
      if (Output::reader_gone()) return kExitOk;
      for (const auto& dir : reader_->watched_directories()) changes_.watch_directory(dir);
      if (setup_.mask) changes_.watch_directory(parent_of(setup_.mask->path()));
      changes_.wait(reader_->poll_interval());
      reader_->poll();
      // Between two records: each line is masked by one set of rules.
      if (setup_.mask) reload_mask(*setup_.mask, "terse");
    }
  }

  const CatOptions& o_;
  CatSetup& setup_;
  Output out_;
  ProblemReporter problems_;
  Printer printer_;
  std::optional<reader::Reader> reader_;
  reader::ChangeWaiter changes_;
  std::optional<int> halt_;
  unsigned threads_ = decoding_threads(o_.threads);
};

}  // namespace

void add_threads_option(CLI::App& command, unsigned& threads) {
  command.add_option("--threads", threads,
                     "Decode on N threads (default: as many as there are CPUs to run on; 1: on this thread alone)");
}

unsigned decoding_threads(unsigned option) { return option != 0 ? option : reader::available_cpus(); }

CLI::App* add_cat_command(CLI::App& app, CatOptions& o) {
  auto* cat = app.add_subcommand("cat", "Print records as text lines or JSON lines");
  cat->footer(kCatFooter);
  cat->add_option("paths", o.paths, "Files, directories (their .tlog files) or - for standard input")->required();
  auto* format_option =
      cat->add_option("--format", o.pattern, "Line pattern: {time} {level} {thread} {file} {line} {message} {context}");
  auto* mode_option = cat->add_option("-o,--output", o.mode, "Output mode: short, precise, cat or json")
                          ->check(CLI::IsMember({"short", "precise", "cat", "json"}));
  cat->add_flag("--json", o.json,
                "One JSON object per line: time, level, thread, file, line, message, args (= -o json)")
      ->excludes(format_option)
      ->excludes(mode_option);
  cat->add_option("--color", o.color, "Colour levels: auto (on a terminal), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  add_filter_options(*cat, o.filters, UntilOption::offered);
  cat->add_flag("-f,--follow", o.follow,
                "Keep reading: new records and new files as the writer rolls (like tail -F); several inputs stay "
                "in time order");
  auto* lines_option = cat->add_option("-n,--lines", o.tail_lines, "Start with the last N records");
  cat->add_flag("--show-cursor", o.show_cursor,
                "With -o json: add a \"cursor\" key, where every input stands after this record, for "
                "--after-cursor");
  cat->add_option_function<std::string>(
         "--after-cursor", [&o](const std::string& cursor) { o.after_cursor = cursor; },
         "Start right after the record this cursor (from --show-cursor) names")
      ->excludes(lines_option);
  cat->add_flag("--schema-header", o.schema_header,
                "With -o json: first print one object that names and describes the keys of the records");
  add_threads_option(*cat, o.threads);
  add_key_option(*cat, o.keys);
  add_signer_option(*cat, o.signers);
  return cat;
}

int run_cat(const CatOptions& o) {
  if (!read_keys(o.keys) || !read_signers(o.signers)) return kExitUsage;
  std::optional<CatSetup> setup;
  try {
    setup.emplace(make_setup(o));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "terse: %s\n", e.what());
    return kExitUsage;
  }
  CatRun run(o, *setup);
  return run.run();
}

}  // namespace terse::cli
