// terse: reads .tlog files back as text or JSON lines, and verifies them.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <terse/decoder.hpp>
#include <terse/schema.hpp>

namespace fs = std::filesystem;
using namespace terse::decoder;

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

 private:
  std::string buffer_;
};

struct LogFileName {
  std::string prefix;
  std::string date;
  unsigned long sequence = 0;
};

std::optional<LogFileName> parse_name(const std::string& file) {
  static const std::regex pattern(R"((.*)-(\d{8})-(\d+)\.tlog)");
  std::smatch m;
  if (!std::regex_match(file, m, pattern)) return std::nullopt;
  return LogFileName{m[1], m[2], std::stoul(m[3].str().substr(0, 9))};
}

// A directory means its .tlog files, oldest first: by name prefix, then
// date, then sequence number compared as a number.
std::vector<std::string> expand(const std::vector<std::string>& paths, bool& ok) {
  std::vector<std::string> files;
  for (const auto& path : paths) {
    std::error_code ec;
    if (path == "-" || !fs::is_directory(path, ec)) {
      files.push_back(path);
      continue;
    }
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      if (entry.path().extension() == ".tlog") found.push_back(entry.path());
    }
    if (ec) {
      std::fprintf(stderr, "terse: %s: %s\n", path.c_str(), ec.message().c_str());
      ok = false;
    }
    std::sort(found.begin(), found.end(), [](const fs::path& a, const fs::path& b) {
      auto na = parse_name(a.filename().string());
      auto nb = parse_name(b.filename().string());
      if (na && nb)
        return std::tie(na->prefix, na->date, na->sequence) < std::tie(nb->prefix, nb->date, nb->sequence);
      return a.filename() < b.filename();
    });
    for (const auto& f : found) files.push_back(f.string());
  }
  return files;
}

Reporter stderr_reporter() {
  return [](const Problem& p) {
    std::fprintf(stderr, "terse: %s: offset %llu: %s\n", p.source.c_str(), static_cast<unsigned long long>(p.offset),
                 p.what.c_str());
  };
}

Summary decode_path(const std::string& path, const RecordSink& sink, const Reporter& reporter) {
  if (path == "-") {
    StreamDecoder decoder("<stdin>", reporter);
    return decoder.decode_fd(STDIN_FILENO, sink);
  }
  return decode_file(path, sink, reporter);
}

std::optional<std::uint8_t> parse_level(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  if (text == "warning") text = "warn";
  for (std::uint8_t level = 0; level < terse::schema::kLevelCount; ++level) {
    if (text == terse::schema::level_name(level)) return level;
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"terse: read, print and check terse binary log files"};
  app.require_subcommand(1);

  std::vector<std::string> cat_paths;
  std::string pattern;
  bool json = false;
  bool utc = false;
  std::string min_level;
  auto* cat = app.add_subcommand("cat", "Print records as text lines or JSON lines");
  cat->add_option("paths", cat_paths, "Files, directories (their .tlog files) or - for standard input")
      ->required();
  auto* format_option =
      cat->add_option("--format", pattern, "Line pattern: {time} {level} {thread} {file} {line} {message}");
  cat->add_flag("--json", json, "One JSON object per line: time, level, thread, file, line, message, args")
      ->excludes(format_option);
  cat->add_flag("--utc", utc, "Print times in UTC instead of local time");
  cat->add_option("--level", min_level, "Only records at this level or above (trace … critical)");

  std::vector<std::string> verify_paths;
  auto* verify = app.add_subcommand("verify", "Check every frame; exit 0 only when all of it is intact");
  verify->add_option("paths", verify_paths, "Files, directories or - for standard input")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }

  bool ok = true;
  if (*cat) {
    std::optional<LinePattern> line;
    try {
      if (!json) line.emplace(pattern.empty() ? kDefaultPattern : pattern);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "terse: %s\n", e.what());
      return kExitUsage;
    }
    std::uint8_t floor = 0;
    if (!min_level.empty()) {
      auto parsed = parse_level(min_level);
      if (!parsed) {
        std::fprintf(stderr, "terse: unknown level '%s' (trace, debug, info, warn, error, critical)\n",
                     min_level.c_str());
        return kExitUsage;
      }
      floor = *parsed;
    }
    TimeStyle style{utc};
    Output out;
    auto sink = [&](const Record& record) {
      // Decided from the call site alone, before any argument is formatted.
      if (record.kind == RecordKind::log && record.site->level < floor) return;
      if (json) {
        append_json_record(out.buffer(), record, style);
      } else {
        line->append(out.buffer(), record, style);
      }
      out.maybe_flush();
    };
    // A torn tail is where a live or crashed writer stopped: the end of the
    // data, not damage (`verify` still reports it).
    Reporter reporter = [&](const Problem& p) {
      if (p.torn_tail) return;
      out.flush();  // keep stderr and stdout in order on a terminal
      stderr_reporter()(p);
    };
    for (const auto& path : expand(cat_paths, ok)) {
      Summary summary = decode_path(path, sink, reporter);
      if (summary.damaged != 0) ok = false;
    }
    out.flush();
    return ok ? kExitOk : kExitDamage;
  }

  if (*verify) {
    for (const auto& path : expand(verify_paths, ok)) {
      std::uint64_t unformattable = 0;
      std::string scratch;
      auto sink = [&](const Record& record) {
        scratch.clear();
        if (!render_message(record, scratch)) ++unformattable;
      };
      Summary summary = decode_path(path, sink, stderr_reporter());
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
  return kExitUsage;
}
