#include "test_support.hpp"

#if defined(_WIN32)
#include <windows.h>
#elif defined(__linux__)
#include <sys/syscall.h>
#endif

#include <fcntl.h>
#include <catch2/catch.hpp>
#include <terse/portable_libc.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace terse::test {

std::uint64_t os_thread_id() {
#if defined(_WIN32)
  return GetCurrentThreadId();
#elif defined(__linux__)
  return static_cast<std::uint64_t>(::syscall(SYS_gettid));
#else
  return 0;  // each other OS numbers its threads its own way (runtime/platform_posix.cpp)
#endif
}

void set_environment(const char* name, const char* value) {
#if defined(_WIN32)
  _putenv_s(name, value);
#else
  ::setenv(name, value, 1);
#endif
}

void unset_environment(const char* name) {
#if defined(_WIN32)
  _putenv_s(name, "");  // an empty value removes the variable there
#else
  ::unsetenv(name);
#endif
}

std::vector<std::string> log_files(const std::string& directory) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.path().extension() == ".tlog") files.push_back(entry.path().string());
  }
  // Names are NAME-YYYYMMDD-NNN.tlog; within one day, order by the number.
  std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return a.size() < b.size();
    return a < b;
  });
  return files;
}

namespace {

// One past the end of the compact JSON value that starts at `at` (as
// append_json_record writes it: no spaces), or the text's size when the
// value does not end.
std::size_t json_value_end(const std::string& json, std::size_t at) {
  int depth = 0;
  bool in_string = false;
  for (; at < json.size(); ++at) {
    char c = json[at];
    if (in_string) {
      if (c == '\\') {
        ++at;
      } else if (c == '"') {
        in_string = false;
        if (depth == 0) return at + 1;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      if (depth == 0) return at;  // the end of the enclosing value: a scalar ended
      if (--depth == 0) return at + 1;
    } else if (c == ',' || c == ':') {
      if (depth == 0) return at;
    }
  }
  return json.size();
}

}  // namespace

Line to_line(const decoder::Record& record) {
  Line line;
  line.unix_ns = record.unix_ns;
  line.ticks = record.ticks;
  line.thread = record.thread->os_tid;
  line.formatted = decoder::render_message(record, line.message).ok();
  line.suppressed = record.suppressed;
  line.suppressed_report = record.kind == decoder::RecordKind::suppressed;
  line.flight = record.flight;
  decoder::append_context_text(line.context, record.context);
  if (record.kind == decoder::RecordKind::dropped) {
    line.dropped = true;
    line.dropped_count = record.dropped_count;
    return line;
  }
  line.level = record.site->level;
  line.file = record.site->file;
  line.line = record.site->line;
  std::string json;
  decoder::append_json_record(json, record, decoder::TimeStyle{true});
  // "args" is the record's last key but "suppressed", "flight" and "context", and the
  // first place `"args":` can appear outside a string: the keys before it
  // are fixed and their values are numbers or escaped strings.
  auto cut_tail = [&json](const std::string& tail) {
    if (json.size() > tail.size() && json.compare(json.size() - tail.size(), tail.size(), tail) == 0)
      json.replace(json.size() - tail.size(), tail.size(), "}\n");
  };
  std::string context_tail;
  decoder::append_json_context(context_tail, record.context);
  if (!context_tail.empty()) cut_tail(context_tail + "}\n");
  if (record.flight) cut_tail(",\"flight\":true}\n");
  if (record.suppressed > 0) cut_tail(",\"suppressed\":" + std::to_string(record.suppressed) + "}\n");
  auto key = json.find("\"args\":");
  if (key == std::string::npos) return line;
  std::size_t begin = key + 7;
  if (json.compare(begin, 1, "[") == 0) {
    // An array: its inside, every argument together, as one text.
    line.json_args.push_back(json.substr(begin + 1, json.size() - begin - 1 - 3));
  } else if (json.compare(begin, 1, "{") == 0) {
    // An object (a site with argument names): each member's value in order.
    std::size_t at = begin + 1;
    while (at < json.size() && json[at] != '}') {
      std::size_t colon = json_value_end(json, at);  // past the key
      if (colon >= json.size() || json[colon] != ':') break;
      std::size_t end = json_value_end(json, colon + 1);
      line.json_args.push_back(json.substr(colon + 1, end - colon - 1));
      at = end < json.size() && json[end] == ',' ? end + 1 : end;
    }
  }
  return line;
}

Decoded decode_files(const std::vector<std::string>& files) {
  Decoded out;
  for (const auto& file : files) {
    out.files.push_back(file);
    out.summaries.push_back(decoder::decode_file(
        file, [&](const decoder::Record& r) { out.lines.push_back(to_line(r)); },
        [&](const decoder::Problem& p) { out.problems.push_back(p); }));
  }
  return out;
}

Decoded decode_bytes(const std::string& bytes, const std::vector<seal::SecretKey>& keys) {
  Decoded out;
  decoder::StreamDecoder decoder("<memory>", [&](const decoder::Problem& p) { out.problems.push_back(p); });
  decoder.set_keys(keys);
  out.summaries.push_back(
      decoder.decode_bytes(bytes, [&](const decoder::Record& r) { out.lines.push_back(to_line(r)); }));
  return out;
}

Decoded decode_sealed_dir(const std::string& directory, const seal::SecretKey& key, std::string& all_bytes) {
  Decoded all;
  for (const auto& file : log_files(directory)) {
    std::string bytes = read_file(file);
    all_bytes += bytes;
    Decoded one = decode_bytes(bytes, {key});
    all.files.push_back(file);
    all.lines.insert(all.lines.end(), one.lines.begin(), one.lines.end());
    all.problems.insert(all.problems.end(), one.problems.begin(), one.problems.end());
    all.summaries.insert(all.summaries.end(), one.summaries.begin(), one.summaries.end());
  }
  return all;
}

std::pair<std::string, seal::SecretKey> sealing_keys(const TempDir& dir) {
  auto pair = seal::new_key_pair("terse test");
  if (!pair) throw std::runtime_error("cannot make a key pair: " + pair.why());
  write_file(dir / "key", pair->secret);
  write_file(dir / "key.pub", pair->public_line);
  auto secret = seal::read_secret_key(dir / "key");
  if (!secret) throw std::runtime_error("cannot read the key just written: " + secret.why());
  return {dir / "key.pub", *secret};
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Opened as terse's readers open files: on Windows an ifstream would keep the writer from
// removing or replacing the file while it is read.
std::string read_file(const std::string& path) {
  std::string bytes;
  int fd = terse::open_path(path.c_str(), O_RDONLY);
  if (fd < 0) return bytes;
  char chunk[65536];
  for (ssize_t n; (n = terse::read_some(fd, chunk, sizeof chunk)) > 0;)
    bytes.append(chunk, static_cast<std::size_t>(n));
  ::close(fd);
  return bytes;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

double test_scale() {
  const char* text = std::getenv("TERSE_TEST_SCALE");
  if (text == nullptr || *text == '\0') return 1.0;
  const double scale = std::strtod(text, nullptr);
  return scale > 0 ? scale : 1.0;
}

std::uint64_t scaled(std::uint64_t count, std::uint64_t at_least) {
  return std::max(at_least, static_cast<std::uint64_t>(static_cast<double>(count) * test_scale()));
}

std::vector<int> threads_named(const std::string& name) {
  std::vector<int> ids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(entry.path() / "comm");
    std::string comm_name;
    std::getline(comm, comm_name);
    if (comm_name == name) ids.push_back(std::stoi(entry.path().filename().string()));
  }
  return ids;
}

void require_messages(const Decoded& decoded, const std::vector<std::string>& expected) {
  CHECK(decoded.intact());
  REQUIRE(decoded.lines.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("record " << i);
    REQUIRE(decoded.lines[i].message == expected[i]);
  }
}

}  // namespace terse::test
