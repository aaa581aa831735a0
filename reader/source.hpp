// One input of `terse cat`: a sequence of rolled files (or standard input)
// read one file after another, optionally following the last one live.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <terse/decoder.hpp>
#include <terse/result.hpp>

#include "log_files.hpp"

namespace terse::input {

// When following, the last file is read live: its end means "nothing more
// yet" until a newer file of the same sequence appears, and then its rest is
// read as a finished file before moving on (tail -F across rolls). A
// sequence is one writer's files (writer_of): another process writing the
// same NAME has files of its own, read by a source of its own.
class Source {
 public:
  Source(std::string label, const decoder::Reporter& reporter, const decoder::Filter& filter, bool follow);
  ~Source();
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  // The keys that open sealed files (FORMAT.md §11); they outlive the source.
  void set_keys(const std::vector<seal::SecretKey>* keys, const std::vector<seal::PublicKeyBytes>* signers) {
    keys_ = keys;
    signers_ = signers;
  }
  static std::unique_ptr<Source> standard_input(const decoder::Reporter& reporter, const decoder::Filter& filter);

  // Following: look for newer files of this sequence in `dir`.
  void watch(std::string dir, std::string prefix);
  // The writer whose files are this sequence, told by `cache`; nothing when
  // not known yet (the first file found is then taken as its).
  void identify(WriterCache& cache, std::optional<std::string> writer);
  void add(const std::string& file);
  void sort_pending();

  // The next record, or false: at the end (not following) or for now.
  bool next(decoder::Record& record);

  // Not following: instead of next(), hands each file (or standard input)
  // in turn to `decode`, which reads it to its end and says what it found,
  // counted as next() counts it; false from `decode` stops there.
  using FileDecoder = std::function<bool(int fd, const std::string& source, decoder::Summary& summary)>;
  void drain(const FileDecoder& decode);

  // Damage found in the files, and files that would not open.
  std::uint64_t damaged() const { return totals_.damaged + open_failures_; }
  // What the decoders of the files read to their end (or left) found, added up.
  const decoder::Summary& totals() const { return totals_; }
  const std::string& label() const { return label_; }
  // writer_hash of the writer whose files this is; 0 when not known.
  std::uint64_t writer() const { return writer_hash_; }
  bool is_stdin() const { return stdin_; }
  // The name (no directory) of the file the last record came from.
  const std::string& current_name() const { return current_name_; }

  // --after-cursor: start after the record at (frame_offset, frame_index)
  // of the file called `file` in this sequence's directory. When that file
  // is gone (retention removed it), start at the oldest later file and say
  // so in `note`. Fails saying why when the cursor cannot apply.
  Result<> resume_after(const std::string& file, std::uint64_t frame_offset, std::uint32_t frame_index,
                        std::uint64_t ticks, std::string& note);

 private:
  using FileKey = std::tuple<std::string, unsigned long>;  // date, sequence

  struct Resume {
    std::string file;
    std::uint64_t frame_offset;
    std::uint32_t frame_index;
    std::uint64_t ticks;
  };

  bool open_next();
  void report_open_failure(const std::string& path);
  bool open_file(const std::string& path);
  void close_current();
  void rescan();
  Result<> resume_in_named_file(const std::string& file, const Resume& at, std::string& note);
  bool is_mine(const std::string& path);

  std::string label_;
  std::string current_name_;
  std::optional<Resume> resume_;
  const decoder::Reporter& reporter_;
  const decoder::Filter& filter_;
  const std::vector<seal::SecretKey>* keys_ = nullptr;
  const std::vector<seal::PublicKeyBytes>* signers_ = nullptr;
  bool follow_ = false;
  bool stdin_ = false;
  bool live_ = false;
  std::string dir_, prefix_;
  WriterCache* writers_ = nullptr;
  std::optional<std::string> writer_;
  std::uint64_t writer_hash_ = 0;
  std::vector<std::string> pending_;
  std::set<std::string> seen_;
  std::optional<FileKey> last_;   // the newest file opened
  std::optional<FileKey> floor_;  // the oldest file asked for
  int fd_ = -1;
  std::unique_ptr<decoder::StreamDecoder> decoder_;
  std::uint64_t open_failures_ = 0;
  decoder::Summary totals_;
  void count(const decoder::Summary& summary);
};

}  // namespace terse::input
