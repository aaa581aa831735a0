#include "test_support.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

#include <algorithm>
#include <fstream>
#include <sstream>

extern char** environ;

namespace terse::test {

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

Line to_line(const decoder::Record& record) {
  Line line;
  line.unix_ns = record.unix_ns;
  line.ticks = record.ticks;
  line.thread = record.thread->os_tid;
  line.formatted = decoder::render_message(record, line.message);
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
  auto begin = json.find("\"args\":[");
  if (begin != std::string::npos) line.json_args.push_back(json.substr(begin + 8, json.size() - begin - 8 - 3));
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

Decoded decode_bytes(const std::string& bytes) {
  Decoded out;
  decoder::StreamDecoder decoder("<memory>", [&](const decoder::Problem& p) { out.problems.push_back(p); });
  out.summaries.push_back(
      decoder.decode_bytes(bytes, [&](const decoder::Record& r) { out.lines.push_back(to_line(r)); }));
  return out;
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

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

pid_t spawn_process(const std::vector<std::string>& args, int stdout_fd, int close_fd,
                    const std::string& stderr_path) {
  std::vector<std::string> storage = args;
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (stdout_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
    posix_spawn_file_actions_addclose(&actions, stdout_fd);
  }
  if (close_fd >= 0) posix_spawn_file_actions_addclose(&actions, close_fd);
  if (!stderr_path.empty())
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? pid : -1;
}

}  // namespace terse::test
