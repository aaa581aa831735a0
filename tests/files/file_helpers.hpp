// Helpers for the file-level tests: a view of a .tlog file's frames, byte
// mutations that damage one frame in a controlled way, writing sample files
// with the real runtime, and running the `terse` CLI as a child process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace terse::test {

// ---- the frames of a file ---------------------------------------------------

struct FrameAt {
  std::size_t offset = 0;  // of the frame header
  std::uint8_t type = 0;
  std::uint8_t flags = 0;
  std::uint32_t stored = 0;
  std::uint32_t raw = 0;
  std::size_t end() const;  // one past the last payload byte
  std::size_t payload() const;
};

// Walks an intact file (one preamble, then frames) and lists its frames.
// Fails the current test if the file is not laid out as FORMAT.md says.
std::vector<FrameAt> frames_of(const std::string& bytes);
std::vector<FrameAt> frames_of_type(const std::string& bytes, std::uint8_t type);
// The types the runtime writes its records and flight frames as (FORMAT.md §7.4).
inline constexpr std::uint8_t kRecordsFrame = 6;
inline constexpr std::uint8_t kFlightFrame = 7;

// ---- byte mutations ---------------------------------------------------------

void increment_byte(std::string& bytes, std::size_t offset, int delta = 1);
void flip_byte(std::string& bytes, std::size_t offset);
void put_u16(std::string& bytes, std::size_t offset, std::uint16_t value);
void put_u32(std::string& bytes, std::size_t offset, std::uint32_t value);
std::uint32_t get_u32(const std::string& bytes, std::size_t offset);
// Lowers a frame's stored size by `by` bytes (its header then lies about
// where the next frame starts).
void shrink_size(std::string& bytes, const FrameAt& frame, std::uint32_t by);
// Recomputes the header checksum, and the payload checksum too when asked,
// so that a mutation reaches the code behind the checksums.
void fix_checksum(std::string& bytes, const FrameAt& frame, bool payload_too);

// Recomputes the preamble checksum after an edit to the version fields.
void fix_preamble_checksum(std::string& bytes);

// ---- sample files -----------------------------------------------------------

// What the sample writer logged, in order.
struct Sample {
  std::string path;
  std::string bytes;
  std::vector<std::string> messages;
};

// Logs `groups` groups of `per_group` records of varied types into a fresh
// file in `directory`, flushing after each group so that the file holds many
// records frames. compression_level 0 keeps payloads uncompressed.
// With `encrypt_to`, the file is sealed to that public key file.
Sample write_sample(const std::string& directory, int groups, int per_group, int compression_level = 1,
                    const std::string& tag = "", const std::string& encrypt_to = "");
// Stops the logger and fills in the one file it wrote into `directory`.
void finish_sample(const std::string& directory, Sample& sample);

// How many records decode from the bytes before each frame's end:
// records_through[i] counts the records of frames 0..i.
std::vector<std::size_t> records_through(const std::string& bytes, const std::vector<FrameAt>& frames);

std::vector<std::string> messages_of(const Decoded& decoded);
bool any_problem_at(const Decoded& decoded, std::uint64_t offset);
std::string describe(const Decoded& decoded);

// ---- running the CLI --------------------------------------------------------

struct Run {
  int exit_code = -1;  // -1 when the child did not exit normally
  int signal = 0;
  std::string out;
  std::string err;
};

// Runs the built `terse` with `args`; stdin comes from `stdin_path` (or
// /dev/null when empty). Output is captured through files, not pipes, so a
// large output cannot deadlock the test.
Run run_terse(const std::vector<std::string>& args, const std::string& stdin_path = "");

const char* terse_cli_path();

}  // namespace terse::test
