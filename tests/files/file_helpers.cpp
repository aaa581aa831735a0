#include "file_helpers.hpp"

#include <fcntl.h>
#ifndef _WIN32
#include <sys/wait.h>
#endif
#include <unistd.h>

#include <cstring>
#include <sstream>

#include "temp_dir.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <terse/crc.hpp>
#include <terse/portable_libc.hpp>
#include <terse/schema.hpp>
#include <terse/wire.hpp>

namespace terse::test {

std::size_t FrameAt::payload() const { return offset + schema::kFrameHeaderSize; }
std::size_t FrameAt::end() const { return payload() + stored; }

std::vector<FrameAt> frames_of(const std::string& bytes) {
  std::vector<FrameAt> frames;
  REQUIRE(bytes.size() >= schema::kPreambleSize);
  REQUIRE(std::memcmp(bytes.data(), schema::kMagic, sizeof schema::kMagic) == 0);
  std::size_t at = schema::kPreambleSize;
  while (at < bytes.size()) {
    REQUIRE(at + schema::kFrameHeaderSize <= bytes.size());
    const auto* h = reinterpret_cast<const unsigned char*>(bytes.data()) + at;
    REQUIRE(std::memcmp(h, schema::kFrameSync, sizeof schema::kFrameSync) == 0);
    FrameAt f;
    f.offset = at;
    f.type = h[4];
    f.flags = h[5];
    f.stored = wire::get_le<std::uint32_t>(h + 8);
    f.raw = wire::get_le<std::uint32_t>(h + 12);
    REQUIRE(f.end() <= bytes.size());
    frames.push_back(f);
    at = f.end();
  }
  return frames;
}

std::vector<FrameAt> frames_of_type(const std::string& bytes, std::uint8_t type) {
  std::vector<FrameAt> out;
  for (const auto& f : frames_of(bytes))
    if (f.type == type) out.push_back(f);
  return out;
}

void increment_byte(std::string& bytes, std::size_t offset, int delta) {
  REQUIRE(offset < bytes.size());
  bytes[offset] = static_cast<char>(static_cast<unsigned char>(bytes[offset]) + delta);
}

void flip_byte(std::string& bytes, std::size_t offset) {
  REQUIRE(offset < bytes.size());
  bytes[offset] = static_cast<char>(static_cast<unsigned char>(bytes[offset]) ^ 0xFF);
}

void put_u16(std::string& bytes, std::size_t offset, std::uint16_t value) {
  REQUIRE(offset + 2 <= bytes.size());
  std::memcpy(bytes.data() + offset, &value, 2);
}

void put_u32(std::string& bytes, std::size_t offset, std::uint32_t value) {
  REQUIRE(offset + 4 <= bytes.size());
  std::memcpy(bytes.data() + offset, &value, 4);
}

std::uint32_t get_u32(const std::string& bytes, std::size_t offset) {
  REQUIRE(offset + 4 <= bytes.size());
  std::uint32_t value;
  std::memcpy(&value, bytes.data() + offset, 4);
  return value;
}

void shrink_size(std::string& bytes, const FrameAt& frame, std::uint32_t by) {
  std::uint32_t stored = get_u32(bytes, frame.offset + 8);
  REQUIRE(stored >= by);
  put_u32(bytes, frame.offset + 8, stored - by);
}

void fix_checksum(std::string& bytes, const FrameAt& frame, bool payload_too) {
  if (payload_too) {
    std::uint32_t stored = get_u32(bytes, frame.offset + 8);
    REQUIRE(frame.payload() + stored <= bytes.size());
    put_u32(bytes, frame.offset + 16, wire::crc32c(bytes.data() + frame.payload(), stored));
  }
  put_u32(bytes, frame.offset + schema::kFrameHeaderCrcOffset,
          wire::crc32c(bytes.data() + frame.offset, schema::kFrameHeaderCrcOffset));
}

void fix_preamble_checksum(std::string& bytes) {
  REQUIRE(bytes.size() >= schema::kPreambleSize);
  put_u32(bytes, schema::kPreambleCrcOffset, wire::crc32c(bytes.data(), schema::kPreambleCrcOffset));
}

Sample write_sample(const std::string& directory, int groups, int per_group, int compression_level,
                    const std::string& tag, const std::string& encrypt_to) {
  Config config = test_config(directory);
  config.compression_level = compression_level;
  config.encrypt_to = encrypt_to;
  terse::start(config);
  Sample sample;
  int n = 0;
  for (int g = 0; g < groups; ++g) {
    for (int i = 0; i < per_group; ++i, ++n) {
      switch (n % 4) {
        case 0:
          TERSE_INFO("{} record {} int {} double {:.3f}", tag, n, -n * 7, n * 0.5);
          sample.messages.push_back(fmt::format("{} record {} int {} double {:.3f}", tag, n, -n * 7, n * 0.5));
          break;
        case 1: {
          std::string text(static_cast<std::size_t>(n % 13), 'x');
          TERSE_WARN("{} record {} text '{}' bool {}", tag, n, text, n % 3 == 0);
          sample.messages.push_back(fmt::format("{} record {} text '{}' bool {}", tag, n, text, n % 3 == 0));
          break;
        }
        case 2: {
          auto hex = static_cast<unsigned>(n * 31);
          char c = static_cast<char>('a' + n % 26);
          TERSE_DEBUG("{} record {} hex {:#x} char {}", tag, n, hex, c);
          sample.messages.push_back(fmt::format("{} record {} hex {:#x} char {}", tag, n, hex, c));
          break;
        }
        default: {
          float f = static_cast<float>(n) / 4;
          std::uint64_t big = static_cast<std::uint64_t>(n) << 40;
          TERSE_ERROR("{} record {} float {} u64 {}", tag, n, f, big);
          sample.messages.push_back(fmt::format("{} record {} float {} u64 {}", tag, n, f, big));
          break;
        }
      }
    }
    terse::flush();
  }
  finish_sample(directory, sample);
  return sample;
}

void finish_sample(const std::string& directory, Sample& sample) {
  terse::stop();
  auto files = log_files(directory);
  REQUIRE(files.size() == 1);
  sample.path = files[0];
  sample.bytes = read_file(sample.path);
}

std::vector<std::size_t> records_through(const std::string& bytes, const std::vector<FrameAt>& frames) {
  std::vector<std::size_t> counts;
  for (const auto& f : frames) counts.push_back(decode_bytes(bytes.substr(0, f.end())).lines.size());
  return counts;
}

std::vector<std::string> messages_of(const Decoded& decoded) {
  std::vector<std::string> out;
  for (const auto& line : decoded.lines) out.push_back(line.message);
  return out;
}

bool any_problem_at(const Decoded& decoded, std::uint64_t offset) {
  for (const auto& p : decoded.problems)
    if (p.offset == offset) return true;
  return false;
}

std::string describe(const Decoded& decoded) {
  std::ostringstream s;
  s << decoded.lines.size() << " records, " << decoded.problems.size() << " problems";
  for (const auto& p : decoded.problems) s << "\n  offset " << p.offset << ": " << p.what;
  return s.str();
}

const char* terse_cli_path() { return TERSE_CLI_PATH; }

namespace {

// An empty file of this run's own, in a directory the object removes.
std::string temp_file(const TempDir& dir, const char* name) {
  std::string path = dir / name;
  write_file(path, "");
  return path;
}

}  // namespace

Run run_terse(const std::vector<std::string>& args, const std::string& stdin_path) {
  TempDir scratch("cli");
  std::string out_path = temp_file(scratch, "out");
  std::string err_path = temp_file(scratch, "err");
  std::vector<std::string> argv{terse_cli_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  int out_fd = ::open(out_path.c_str(), O_WRONLY | O_TRUNC | kOpenFlags);
  REQUIRE(out_fd >= 0);
  int status = run_process(argv, out_fd, err_path, stdin_path.empty() ? "/dev/null" : stdin_path);
  ::close(out_fd);

  Run run;
#ifdef _WIN32
  run.exit_code = status;  // no signals: what the program returned
#else
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
#endif
  run.out = read_file(out_path);
  run.err = read_file(err_path);
  return run;
}

}  // namespace terse::test
