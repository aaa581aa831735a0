// `terse stats`: what a set of files holds, without printing its records.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <terse/decoder.hpp>
#include <terse/reader.hpp>
#include <terse/schema.hpp>

#include "commands.hpp"
#include "output.hpp"

namespace terse::cli {

namespace {

const char* const kStatsFooter = R"(Shows per-level and per-call-site counts, file bytes, stored and raw frame bytes
(the compression ratio), the time span, dropped records and a per-minute rate
sparkline by level.

Examples:
  terse stats logs/
  terse stats --top 10 logs/app-20261129-001.tlog
  terse stats --json logs/ | jq .levels)";

constexpr int kLevels = schema::kLevelCount;
constexpr std::int64_t kMinuteNs = 60'000'000'000;
constexpr std::size_t kMaxColumns = 60;

struct SiteCount {
  std::string file;
  std::uint32_t line = 0;
  std::uint8_t level = 0;
  std::string format;
  std::uint64_t count = 0;
  std::uint64_t suppressed = 0;  // calls of a rate-limited site that wrote no record
};

struct Totals {
  std::uint64_t files = 0;
  std::uint64_t file_bytes = 0;
  reader::Summary frames;  // frames, stored records, stored and raw bytes, damage summed
  std::uint64_t torn_tails = 0;
  std::vector<std::string> private_values;  // the modes the files were opened with
  std::array<std::uint64_t, kLevels> levels{};
  std::uint64_t drop_reports = 0;
  std::uint64_t dropped = 0;
  std::uint64_t suppressed = 0;
  std::uint64_t flight = 0;  // records of the flight recorder (counted in the levels too)
  std::int64_t first_ns = INT64_MAX;
  std::int64_t last_ns = INT64_MIN;
  std::vector<SiteCount> sites;
  std::map<std::string, std::size_t> site_index;  // file \0 line \0 format -> sites[]
  std::map<std::int64_t, std::array<std::uint64_t, kLevels>> per_minute;
};

// Groups a minute table into at most kMaxColumns columns.
struct Buckets {
  std::int64_t start_minute = 0;
  std::int64_t minutes_per_column = 1;
  std::vector<std::array<std::uint64_t, kLevels>> columns;
};

Buckets bucket(const Totals& t) {
  Buckets b;
  if (t.per_minute.empty()) return b;
  b.start_minute = t.per_minute.begin()->first;
  std::int64_t span = t.per_minute.rbegin()->first - b.start_minute + 1;
  b.minutes_per_column = (span + static_cast<std::int64_t>(kMaxColumns) - 1) / static_cast<std::int64_t>(kMaxColumns);
  b.columns.resize(static_cast<std::size_t>((span + b.minutes_per_column - 1) / b.minutes_per_column));
  for (const auto& [minute, counts] : t.per_minute) {
    auto& column = b.columns[static_cast<std::size_t>((minute - b.start_minute) / b.minutes_per_column)];
    for (int l = 0; l < kLevels; ++l) column[static_cast<std::size_t>(l)] += counts[static_cast<std::size_t>(l)];
  }
  return b;
}

std::string sparkline(const Buckets& b, int level) {
  static const char* const kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  std::uint64_t max = 0;
  for (const auto& c : b.columns) max = std::max(max, c[static_cast<std::size_t>(level)]);
  std::string line;
  for (const auto& c : b.columns) {
    std::uint64_t v = c[static_cast<std::size_t>(level)];
    if (v == 0) {
      line += ' ';
    } else {
      // The smallest block for anything above zero, so a rare event shows.
      auto step = static_cast<std::size_t>((v * 7 + max - 1) / max);
      line += kBlocks[std::min<std::size_t>(step, 7)];
    }
  }
  return line;
}

template <typename... T>
void put(std::string& out, fmt::format_string<T...> format, T&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<T>(args)...);
}

std::string bytes_text(std::uint64_t n) {
  if (n < 1024) return fmt::format("{} B", n);
  if (n < (1u << 20)) return fmt::format("{:.1f} KiB", static_cast<double>(n) / 1024);
  if (n < (1u << 30)) return fmt::format("{:.1f} MiB", static_cast<double>(n) / (1 << 20));
  return fmt::format("{:.2f} GiB", static_cast<double>(n) / (1 << 30));
}

std::string duration_text(std::int64_t ns) {
  std::int64_t s = ns / 1'000'000'000;
  if (s < 60) return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9);
  if (s < 3600) return fmt::format("{}m {:02}s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}h {:02}m {:02}s", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}d {:02}h {:02}m", s / 86400, s / 3600 % 24, s / 60 % 60);
}

// What the totals take of one record: all of it but its site, which
// site_of() finds.
struct Counted {
  reader::RecordKind kind = reader::RecordKind::log;
  bool flight = false;
  std::uint8_t level = 0;
  std::int64_t unix_ns = 0;
  std::uint64_t suppressed = 0;
  std::uint64_t dropped = 0;
};

Counted counted(const reader::Record& r) {
  bool dropped = r.kind() == reader::RecordKind::dropped;
  return Counted{r.kind(),    r.flight(),     dropped ? std::uint8_t{0} : static_cast<std::uint8_t>(r.level()),
                 r.time_ns(), r.suppressed(), dropped ? r.dropped_count() : 0};
}

std::string site_key(const reader::Record& r) {
  return std::string(r.file()) + '\0' + std::to_string(r.line()) + '\0' + std::string(r.format());
}

// The site's entry in t.sites, by `key` (site_key).
std::size_t site_of(Totals& t, const std::string& key, std::uint8_t level) {
  auto [index, added] = t.site_index.try_emplace(key, t.sites.size());
  if (added) {
    std::size_t a = key.find('\0'), b = key.find('\0', a + 1);
    t.sites.push_back({key.substr(0, a), static_cast<std::uint32_t>(std::stoul(key.substr(a + 1, b - a - 1))), level,
                       key.substr(b + 1), 0, 0});
  }
  return index->second;
}

void count(Totals& t, const Counted& r, std::size_t site_index) {
  if (r.unix_ns < t.first_ns) t.first_ns = r.unix_ns;
  if (r.unix_ns > t.last_ns) t.last_ns = r.unix_ns;
  std::int64_t minute = r.unix_ns / kMinuteNs - (r.unix_ns % kMinuteNs < 0 ? 1 : 0);
  // Hostile times could make the minute table as large as the file; cap it.
  auto it = t.per_minute.find(minute);
  if (it == t.per_minute.end() && t.per_minute.size() < (1u << 20))
    it = t.per_minute.emplace(minute, std::array<std::uint64_t, kLevels>{}).first;
  if (r.kind == reader::RecordKind::dropped) {
    ++t.drop_reports;
    t.dropped += r.dropped;
    return;
  }
  SiteCount& site = t.sites[site_index];
  site.suppressed += r.suppressed;
  t.suppressed += r.suppressed;
  if (r.kind == reader::RecordKind::suppressed) return;  // a count, not a record
  if (r.flight) ++t.flight;
  std::uint8_t level = r.level < kLevels ? r.level : static_cast<std::uint8_t>(kLevels - 1);
  ++t.levels[level];
  if (it != t.per_minute.end()) ++it->second[level];
  ++site.count;
}

// Record::site_id() -> t.sites: a key is built once per site of a file, not per record.
using SiteCache = std::unordered_map<std::uint64_t, std::size_t>;

void add_record(Totals& t, const reader::Record& r, SiteCache& cache) {
  std::size_t index = 0;
  if (r.kind() != reader::RecordKind::dropped) {
    auto [hit, inserted] = cache.try_emplace(r.site_id(), 0);
    if (inserted) hit->second = site_of(t, site_key(r), static_cast<std::uint8_t>(r.level()));
    index = hit->second;
  }
  count(t, counted(r), index);
}

// --threads: each decoding thread writes what count() needs of a record as
// a Packed, and the key of a site the first time it meets the site; the
// totals are then added up in record order, as add_record does.
struct Packed {
  Counted record;
  std::uint64_t site = 0;      // Record::site_id()
  std::uint32_t key_size = 0;  // the size of the site's key that follows, the first time
};

reader::RendererFactory packing_renderers() {
  return [] {
    auto seen = std::make_shared<std::unordered_set<std::uint64_t>>();
    return [seen](const reader::Record& r, std::string& out) {
      Packed packed;
      packed.record = counted(r);
      std::string key;
      if (r.kind() != reader::RecordKind::dropped) {
        packed.site = r.site_id();
        if (seen->insert(packed.site).second) key = site_key(r);
      }
      packed.key_size = static_cast<std::uint32_t>(key.size());
      out.append(reinterpret_cast<const char*>(&packed), sizeof packed);
      out += key;
    };
  };
}

std::string time_text(std::int64_t ns, bool utc) {
  std::string out;
  decoder::TimeStyle style;
  style.utc = utc;
  style.digits = 3;
  decoder::append_time(out, ns, style);
  return out;
}

std::string rfc3339(std::int64_t ns, bool utc) {
  std::string out;
  decoder::TimeStyle style;
  style.utc = utc;
  decoder::append_time_rfc3339(out, ns, style);
  return out;
}

void print_text(const Totals& t, const StatsOptions& o, std::string& out) {
  std::uint64_t records = 0;
  for (auto n : t.levels) records += n;
  put(out, "files      {} ({} on disk)\n", t.files, bytes_text(t.file_bytes));
  put(out, "frames     {}: {} stored, {} raw", t.frames.frames, bytes_text(t.frames.stored_bytes),
      bytes_text(t.frames.raw_bytes));
  if (t.frames.stored_bytes)
    put(out, ", compression {:.1f}x",
        static_cast<double>(t.frames.raw_bytes) / static_cast<double>(t.frames.stored_bytes));
  put(out, "\n");
  put(out, "records    {}", records);
  if (records && t.file_bytes)
    put(out, " ({:.2f} bytes each on disk)", static_cast<double>(t.file_bytes) / static_cast<double>(records));
  put(out, "\n");
  if (t.first_ns <= t.last_ns)
    put(out, "time span  {} … {} ({})\n", time_text(t.first_ns, o.utc), time_text(t.last_ns, o.utc),
        duration_text(t.last_ns - t.first_ns));
  put(out, "dropped    {} records in {} reports\n", t.dropped, t.drop_reports);
  if (t.suppressed) put(out, "suppressed {} calls by rate limits (per site below)\n", t.suppressed);
  if (t.flight) put(out, "flight     {} records of the flight recorder, written by a trigger or a crash\n", t.flight);
  if (!t.private_values.empty()) put(out, "private    values stored as: {}\n", fmt::join(t.private_values, ", "));
  if (t.frames.damaged || t.torn_tails)
    put(out, "damage     {} problems, {} torn tails (see stderr)\n", t.frames.damaged, t.torn_tails);
  put(out, "\nlevels\n");
  for (int l = kLevels - 1; l >= 0; --l)
    put(out, "  {:<9}{:>12}\n", schema::level_name(static_cast<std::uint8_t>(l)),
        t.levels[static_cast<std::size_t>(l)]);
  Buckets b = bucket(t);
  if (!b.columns.empty()) {
    put(out, "\nrecords per {} (from {}, {} columns)\n",
        b.minutes_per_column == 1 ? std::string("minute") : fmt::format("{} minutes", b.minutes_per_column),
        time_text(b.start_minute * kMinuteNs, o.utc).substr(0, 16), b.columns.size());
    for (int l = kLevels - 1; l >= 0; --l) {
      if (t.levels[static_cast<std::size_t>(l)] == 0) continue;
      std::uint64_t max = 0;
      for (const auto& c : b.columns) max = std::max(max, c[static_cast<std::size_t>(l)]);
      put(out, "  {:<9}│{}│ max {}\n", schema::level_name(static_cast<std::uint8_t>(l)), sparkline(b, l), max);
    }
  }
  std::vector<const SiteCount*> sites;
  for (const auto& s : t.sites) sites.push_back(&s);
  std::stable_sort(sites.begin(), sites.end(),
                   [](const SiteCount* x, const SiteCount* y) { return x->count > y->count; });
  std::size_t shown = o.top == 0 ? sites.size() : std::min(o.top, sites.size());
  put(out, "\ncall sites ({} of {}, most records first)\n", shown, sites.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const SiteCount& s = *sites[i];
    std::string format = s.format.size() > 60 ? s.format.substr(0, 57) + "..." : s.format;
    for (char& c : format)
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    put(out, "  {:>12} {:>6.2f}%  {:<8} {}:{}  {}", s.count,
        records ? 100.0 * static_cast<double>(s.count) / static_cast<double>(records) : 0.0,
        schema::level_name(s.level), s.file, s.line, format);
    if (s.suppressed) put(out, "  [{} suppressed]", s.suppressed);
    put(out, "\n");
  }
}

void print_json(const Totals& t, const StatsOptions& o, std::string& out) {
  std::uint64_t records = 0;
  for (auto n : t.levels) records += n;
  put(out,
      "{{\"files\":{},\"file_bytes\":{},\"frames\":{},\"stored_bytes\":{},\"raw_bytes\":{},\"compression_ratio\":{}",
      t.files, t.file_bytes, t.frames.frames, t.frames.stored_bytes, t.frames.raw_bytes,
      t.frames.stored_bytes ? static_cast<double>(t.frames.raw_bytes) / static_cast<double>(t.frames.stored_bytes)
                            : 0.0);
  put(out,
      ",\"records\":{},\"dropped\":{},\"drop_reports\":{},\"suppressed\":{},\"flight\":{},\"damaged\":{},\"torn_"
      "tails\":{}",
      records, t.dropped, t.drop_reports, t.suppressed, t.flight, t.frames.damaged, t.torn_tails);
  out += ",\"private_values\":[";
  for (std::size_t i = 0; i < t.private_values.size(); ++i) {
    if (i) out += ',';
    decoder::append_json_string(out, t.private_values[i]);
  }
  out += ']';
  if (t.first_ns <= t.last_ns) {
    out += ",\"first\":";
    decoder::append_json_string(out, rfc3339(t.first_ns, o.utc));
    out += ",\"last\":";
    decoder::append_json_string(out, rfc3339(t.last_ns, o.utc));
    put(out, ",\"span_seconds\":{}", static_cast<double>(t.last_ns - t.first_ns) / 1e9);
  }
  out += ",\"levels\":{";
  for (int l = 0; l < kLevels; ++l)
    put(out, "{}\"{}\":{}", l ? "," : "", schema::level_name(static_cast<std::uint8_t>(l)),
        t.levels[static_cast<std::size_t>(l)]);
  out += "},\"sites\":[";
  std::vector<const SiteCount*> sites;
  for (const auto& s : t.sites) sites.push_back(&s);
  std::stable_sort(sites.begin(), sites.end(),
                   [](const SiteCount* x, const SiteCount* y) { return x->count > y->count; });
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const SiteCount& s = *sites[i];
    out += i ? ",{\"file\":" : "{\"file\":";
    decoder::append_json_string(out, s.file);
    put(out, ",\"line\":{},\"level\":\"{}\",\"format\":", s.line, schema::level_name(s.level));
    decoder::append_json_string(out, s.format);
    put(out, ",\"count\":{},\"suppressed\":{}}}", s.count, s.suppressed);
  }
  out += "]";
  Buckets b = bucket(t);
  if (!b.columns.empty()) {
    out += ",\"per_minute\":{\"start\":";
    decoder::append_json_string(out, rfc3339(b.start_minute * kMinuteNs, o.utc));
    put(out, ",\"minutes_per_bucket\":{},\"counts\":{{", b.minutes_per_column);
    for (int l = 0; l < kLevels; ++l) {
      put(out, "{}\"{}\":[", l ? "," : "", schema::level_name(static_cast<std::uint8_t>(l)));
      for (std::size_t c = 0; c < b.columns.size(); ++c)
        put(out, "{}{}", c ? "," : "", b.columns[c][static_cast<std::size_t>(l)]);
      out += "]";
    }
    out += "}}";
  }
  out += "}\n";
}

// Adds one file's (or standard input's) records and frames to the totals;
// false when anything was damaged.
bool add_path(Totals& t, const std::string& path, ProblemReporter& problems, unsigned threads,
              const std::vector<std::string>& keys, const std::vector<std::string>& signers) {
  reader::Options options;
  options.on_problem = problems.handler();
  options.report_open_failures = true;  // said on stderr and counted as damage, as a damaged file is
  options.keys = keys;
  options.signers = signers;
  reader::Reader input({path}, std::move(options));
  SiteCache sites;
  std::string rest;  // a Packed cut by the end of a frame's output
  auto write = [&](std::string_view text) {
    rest.append(text);
    std::size_t at = 0;
    Packed packed;
    while (rest.size() - at >= sizeof packed) {
      std::memcpy(&packed, rest.data() + at, sizeof packed);
      if (rest.size() - at - sizeof packed < packed.key_size) break;
      std::size_t index = 0;
      if (packed.record.kind != reader::RecordKind::dropped) {
        if (packed.key_size > 0)
          sites[packed.site] = site_of(t, rest.substr(at + sizeof packed, packed.key_size), packed.record.level);
        index = sites[packed.site];
      }
      count(t, packed.record, index);
      at += sizeof packed + packed.key_size;
    }
    rest.erase(0, at);
    return true;
  };
  if (threads <= 1 || !input.decode_parallel(threads, packing_renderers(), write)) {
    SiteCache cache;
    reader::Record record;
    while (input.next(record)) add_record(t, record, cache);
  }
  if (path != "-") {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) t.file_bytes += static_cast<std::uint64_t>(st.st_size);
  }
  reader::Summary s = input.summary();
  ++t.files;
  t.frames.frames += s.frames;
  t.frames.stored_records += s.stored_records;
  t.frames.damaged += s.damaged;
  t.frames.stored_bytes += s.stored_bytes;
  t.frames.raw_bytes += s.raw_bytes;
  for (const auto& mode : s.private_values)
    if (std::find(t.private_values.begin(), t.private_values.end(), mode) == t.private_values.end())
      t.private_values.push_back(mode);
  return s.damaged == 0 && s.sealed_unopened == 0;
}

}  // namespace

CLI::App* add_stats_command(CLI::App& app, StatsOptions& o) {
  auto* stats = app.add_subcommand("stats", "Counts per level and call site, bytes, compression, time span, drops");
  stats->footer(kStatsFooter);
  stats->add_option("paths", o.paths, "Files, directories or - for standard input")->required();
  stats->add_flag("--json", o.json, "One JSON object instead of the text report");
  stats->add_flag("--utc", o.utc, "Print times in UTC");
  stats->add_option("--top", o.top, "How many call sites to list (default 20; 0 for all)");
  add_threads_option(*stats, o.threads);
  add_key_option(*stats, o.keys);
  add_signer_option(*stats, o.signers);
  return stats;
}

int run_stats(const StatsOptions& o) {
  if (!read_keys(o.keys) || !read_signers(o.signers)) return kExitUsage;
  bool ok = true;
  Totals t;
  ProblemReporter problems("terse", TornTails::count_silently);
  for (const auto& path : reader::expand_paths(o.paths, ok))
    if (!add_path(t, path, problems, decoding_threads(o.threads), o.keys, o.signers)) ok = false;
  t.torn_tails = problems.torn_tails();
  std::string out;
  if (o.json) {
    print_json(t, o, out);
  } else {
    print_text(t, o, out);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return ok ? kExitOk : kExitDamage;
}

}  // namespace terse::cli
