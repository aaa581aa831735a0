// Long strings that repeat within a file are written once (FORMAT.md §6
// kind 3, §8): frames compress independently, so without this every 1 MiB
// frame would carry its own copy of a 4 KiB payload the program logs over
// and over. Runs on the writer thread, which knows where files begin.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace terse::detail {

class TextInterner {
 public:
  // Strings shorter than this stay inline: zstd finds their repeats
  // within a frame anyway.
  static constexpr std::size_t kMinLength = 128;
  // Per file: texts kept for comparison, and hashes of texts seen once
  // (a direct-mapped table: a hash that takes another's slot only makes
  // that text wait for its next two occurrences).
  static constexpr std::size_t kMaxTextBytes = std::size_t{16} << 20;
  static constexpr std::size_t kSeenOnceSlots = 1 << 14;
  // FORMAT.md §8 (3.1): a long text that differs from a text entry of its
  // length in few bytes (a payload with a counter or an id in it) is written
  // as that entry patched, if its patches take at most this share of it.
  static constexpr std::size_t kMostPatchedShare = 4;

  // Rewrites a batch's rows (RecordColumns: FORMAT.md §7 records without
  // their time deltas, which do not change): a long string argument seen
  // before in this file becomes a reference to a text entry, which is
  // appended to `entries` (dictionary entries) when it is new. Returns
  // false, leaving `out` untouched, when nothing was worth changing.
  bool rewrite(std::string_view rows, std::string& out, std::string& entries);
  // The rewritten frame reached the file: its new texts may be referred to.
  void confirm() { pending_.clear(); }
  // It did not: forget the texts it defined (their entries are not there).
  void discard();
  // A new file starts: texts of the old one cannot be referred to.
  void new_file();
  // The entries of every text this file refers to, for a file that takes
  // over from one lost in the middle (records held back refer to them).
  void append_known_entries(std::string& entries) const;

 private:
  struct Text {
    std::string bytes;
    std::uint32_t id;
  };
  // Appends the argument bytes of one record, interned, to `args_out`.
  bool rewrite_args(std::uint32_t site_id, std::string_view args, const std::uint8_t* tags, std::size_t count,
                    std::string& args_out, std::string& entries, bool& changed);
  // The id of the text a site's argument held last time, 0 for none: a
  // call site mostly logs the same long text again, which one comparison
  // then finds without hashing it.
  std::uint32_t& last_text(std::uint32_t site_id, std::size_t arg);
  // The id `text` (of sample hash `hash`, similarity sample `sample`) is
  // written as in this file, 0 while it is to stay inline; a text seen for
  // the second time gets one, and its entry is appended to `entries`.
  std::uint32_t lookup(std::string_view text, std::size_t hash, std::size_t sample, std::string& entries);
  // Writes `text` to `args_out` as a text entry (FORMAT.md §8), patched
  // where it differs from it, and returns true: the site's last (`last`,
  // updated), the entry of its similarity sample, an entry of the same
  // bytes, or a new entry for a text seen before or whose sample came
  // before with no entry. False: it stays inline.
  bool write_known(std::string_view text, std::uint32_t& last, std::string& args_out, std::string& entries);
  static void write_interned(std::string& args_out, std::uint32_t id);
  // A new text entry for `text`, whose sample hash is `hash` and similarity
  // sample `sample`.
  std::uint32_t add_text(std::string_view text, std::size_t hash, std::size_t sample, std::string& entries);

  std::unordered_map<std::size_t, std::uint32_t> similar_;  // text id by similarity sample
  std::vector<std::size_t> similar_seen_;                   // samples of texts that stayed inline

  std::unordered_map<std::size_t, std::vector<Text>> texts_;  // by hash
  // Each interned text's bytes by id (empty once forgotten); they live in texts_.
  std::vector<std::string_view> by_id_;
  std::vector<std::vector<std::uint32_t>> last_text_;  // by site id, then argument
  std::vector<std::size_t> seen_once_;                 // kSeenOnceSlots once a long text came
  std::vector<std::size_t> pending_;                   // hashes of texts defined by the last rewrite
  std::size_t text_bytes_ = 0;
  std::uint32_t next_id_ = 1;
  std::string args_;
  std::string rewritten_;
};

}  // namespace terse::detail
