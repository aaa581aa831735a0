// The log file taken from under the writer: its descriptor closed by the
// application (a daemon's closefrom() after start-up), its directory
// removed, the file renamed. terse must never write into a descriptor that
// is not its file any more, and must go on in a new file that says what
// became of the old one.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace terse::test;
namespace fs = std::filesystem;

namespace {

// The writer looks whether its path still names its file about once a second.
constexpr auto kPastPathCheck = std::chrono::milliseconds(1300);

// The descriptor of the open file under `directory`, -1 when there is none.
int descriptor_into(const std::string& directory) {
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    fs::path target = fs::read_symlink(entry.path(), ec);
    if (!ec && target.parent_path() == fs::path(directory)) return std::stoi(entry.path().filename().string());
  }
  return -1;
}

// The records terse wrote about itself, and the others.
std::vector<Line> notices_in(const Decoded& decoded) {
  std::vector<Line> notices;
  for (const auto& line : decoded.lines)
    if (line.file == "terse") notices.push_back(line);
  return notices;
}

std::vector<std::string> application_messages(const Decoded& decoded) {
  std::vector<std::string> messages;
  for (const auto& line : decoded.lines)
    if (line.file != "terse" && !line.dropped) messages.push_back(line.message);
  return messages;
}

}  // namespace

TEST_CASE("a daemon that closes every descriptor after start-up keeps its own file clean, and the log every record") {
  TempDir log_dir, data_dir;
  std::string data_path = (fs::path(data_dir.path()) / "data.bin").string();
  std::string errors_path = (fs::path(data_dir.path()) / "errors.txt").string();
  // In a child: closing every descriptor would take the test runner's too.
  pid_t pid = ::fork();
  if (pid == 0) {
    ErrorLog errors;
    terse::Config config = test_config(log_dir.path());
    config.on_error = errors.reporter();
    terse::start(config);
    for (int i = 0; i < 1000; ++i) TERSE_INFO("before the close {}", i);
    terse::flush();
    int log_fd = descriptor_into(log_dir.path());
    if (log_fd < 0) std::_Exit(2);
    for (int fd = 3; fd < 1024; ++fd) ::close(fd);  // closefrom(3), as daemonize routines do
    int data = ::open(data_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    // terse keeps its file at a high number, which a daemon's next files
    // rarely reach; here the application's file gets it all the same.
    if (data != log_fd && (::dup2(data, log_fd) != log_fd || ::close(data) != 0)) std::_Exit(3);
    data = log_fd;
    const std::string first = "application data\n";
    if (::write(data, first.data(), first.size()) != static_cast<ssize_t>(first.size())) std::_Exit(4);
    for (int i = 0; i < 1000; ++i) TERSE_INFO("after the close {}", i);
    terse::flush();
    for (int i = 1000; i < 2000; ++i) TERSE_INFO("after the close {}", i);
    terse::stop();
    // Fails where terse closed the application's descriptor as its own: the parent sees the text missing.
    const std::string second = "more application data\n";
    [[maybe_unused]] ssize_t written = ::write(data, second.data(), second.size());
    ::close(data);
    std::ofstream out(errors_path);
    for (const auto& m : errors.messages()) out << m << '\n';
    out.close();  // _Exit flushes no stream
    std::_Exit(out ? 0 : 6);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  CHECK(read_file(data_path) == "application data\nmore application data\n");
  Decoded decoded = decode_dir(log_dir.path());
  CHECK(decoded.intact());
  std::vector<std::string> expected;
  for (int i = 0; i < 1000; ++i) expected.push_back(fmt::format("before the close {}", i));
  for (int i = 0; i < 2000; ++i) expected.push_back(fmt::format("after the close {}", i));
  CHECK(application_messages(decoded) == expected);
  for (const auto& line : decoded.lines) CHECK_FALSE(line.dropped);
  std::vector<Line> notices = notices_in(decoded);
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].level == static_cast<std::uint8_t>(terse::Level::warn));
  CHECK(notices[0].message.find("was closed by the application") != std::string::npos);
  CHECK(read_file(errors_path).find("was closed by the application") != std::string::npos);
  CHECK(log_files(log_dir.path()).size() == 2);
}

TEST_CASE("the log file's descriptor lies above the numbers a daemon's own files get") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  TERSE_INFO("one record {}", 1);
  terse::flush();
  int log_fd = descriptor_into(dir.path());
  terse::stop();
  CHECK(log_fd >= 256);
}

TEST_CASE("a log directory removed while the program runs is made again, and the new file says what went with it") {
  TempDir parent;
  std::string dir = (fs::path(parent.path()) / "logs").string();
  ErrorLog errors;
  terse::Config config = test_config(dir);
  config.on_error = errors.reporter();
  terse::start(config);
  for (int i = 0; i < 1000; ++i) TERSE_INFO("into the removed file {}", i);
  terse::flush();
  fs::remove_all(dir);  // an operator's rm -rf logs/
  std::this_thread::sleep_for(kPastPathCheck);
  for (int i = 0; i < 1000; ++i) TERSE_INFO("after the removal {}", i);
  terse::flush();
  for (int i = 1000; i < 2000; ++i) TERSE_INFO("after the removal {}", i);
  terse::stop();

  REQUIRE(fs::is_directory(dir));
  Decoded decoded = decode_dir(dir);
  CHECK(decoded.intact());
  std::vector<std::string> expected;
  for (int i = 0; i < 2000; ++i) expected.push_back(fmt::format("after the removal {}", i));
  CHECK(application_messages(decoded) == expected);
  std::uint64_t dropped = 0;
  for (const auto& line : decoded.lines)
    if (line.dropped) dropped += line.dropped_count;
  CHECK(dropped == 1000);
  std::vector<Line> notices = notices_in(decoded);
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].message.find("was removed") != std::string::npos);
  CHECK(notices[0].message.find("the 1000 records written to it are gone") != std::string::npos);
  CHECK(errors.any_contains("was removed"));
}

TEST_CASE("a log file renamed while in use keeps its records, and the log goes on in a new file") {
  TempDir dir, elsewhere;
  ErrorLog errors;
  terse::Config config = test_config(dir.path());
  config.on_error = errors.reporter();
  terse::start(config);
  for (int i = 0; i < 500; ++i) TERSE_INFO("before the rename {}", i);
  terse::flush();
  std::vector<std::string> files = log_files(dir.path());
  REQUIRE(files.size() == 1);
  std::string moved = (fs::path(elsewhere.path()) / fs::path(files[0]).filename()).string();
  fs::rename(files[0], moved);
  std::this_thread::sleep_for(kPastPathCheck);
  for (int i = 0; i < 500; ++i) TERSE_INFO("after the rename {}", i);
  terse::stop();

  Decoded before = decode_files({moved});
  CHECK(before.intact());
  std::vector<std::string> expected_before;
  for (int i = 0; i < 500; ++i) expected_before.push_back(fmt::format("before the rename {}", i));
  CHECK(application_messages(before) == expected_before);

  Decoded after = decode_dir(dir.path());
  CHECK(after.intact());
  std::vector<std::string> expected_after;
  for (int i = 0; i < 500; ++i) expected_after.push_back(fmt::format("after the rename {}", i));
  CHECK(application_messages(after) == expected_after);
  for (const auto& line : after.lines) CHECK_FALSE(line.dropped);
  std::vector<Line> notices = notices_in(after);
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].message.find("renamed or moved") != std::string::npos);
  CHECK(errors.any_contains("renamed or moved"));
}
