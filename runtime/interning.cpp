#include "interning.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

#include <terse/schema.hpp>
#include <terse/wire.hpp>

#include "pipeline.hpp"
#include "registry.hpp"

namespace terse::detail {
namespace {

// Hashing every byte of every long string would cost the writer more than
// the compression it saves; the length and both ends pick the candidate,
// and a full comparison decides (a text seen once is remembered by this
// hash alone: a false match only interns a string one occurrence early).
std::size_t sample_hash(std::string_view text) {
  constexpr std::size_t kEdge = 64;
  std::size_t hash = std::hash<std::string_view>{}(text.substr(0, kEdge));
  hash ^= std::hash<std::string_view>{}(text.substr(text.size() - kEdge)) * 0x9E3779B97F4A7C15ull;
  return hash ^ (text.size() * 0xC2B2AE3D27D4EB4Full);
}

// What texts that differ in a counter, an id or a timestamp still share:
// their length and the bytes in their middle (such fields tend to come
// first or last). Texts with the same sample are compared in full.
std::size_t similarity_sample(std::string_view text) {
  constexpr std::size_t kSampleBytes = 32;
  std::size_t hash = std::hash<std::string_view>{}(text.substr(text.size() / 2 - kSampleBytes / 2, kSampleBytes));
  return hash ^ (text.size() * 0x9E3779B97F4A7C15ull);
}

// Appends the patches (FORMAT.md §8, 3.1) that make `base` into `text`, of
// the same length, to `out`; false as soon as they take more than `budget`
// bytes. A run of differing bytes goes on over fewer equal bytes than a
// patch's own varints would cost.
bool append_patches(std::string_view base, std::string_view text, std::size_t budget, std::string& out) {
  constexpr std::size_t kJoinedEqualBytes = 3;
  const char* a = base.data();
  const char* b = text.data();
  const std::size_t n = text.size();
  const std::size_t start = out.size();
  std::size_t patched_up_to = 0;
  std::size_t i = 0;
  for (;;) {
    // Blocks of 64 bytes with one branch each: a 4 KiB text mostly equal
    // to its base is otherwise 512 compares and branches.
    while (i + 64 <= n) {
      std::uint64_t x[8], y[8], differ = 0;
      std::memcpy(x, a + i, 64);
      std::memcpy(y, b + i, 64);
      for (int k = 0; k < 8; ++k) differ |= x[k] ^ y[k];
      if (differ != 0) break;
      i += 64;
    }
    for (std::uint64_t x, y; i + 8 <= n; i += 8) {
      std::memcpy(&x, a + i, 8);
      std::memcpy(&y, b + i, 8);
      if (x != y) break;
    }
    while (i < n && a[i] == b[i]) ++i;
    if (i >= n) return true;
    std::size_t begin = i;
    std::size_t end = i + 1;
    for (std::size_t j = end; j < n && j - end < kJoinedEqualBytes; ++j)
      if (a[j] != b[j]) end = j + 1;
    wire::put_varint(out, begin - patched_up_to);
    wire::put_varint(out, end - begin);
    wire::put_varint(out, end - begin);
    out.append(b + begin, end - begin);
    if (out.size() - start > budget) return false;
    patched_up_to = i = end;
  }
}

// The collector writes every varint in its shortest form.
std::size_t varint_size(std::uint64_t value) {
  std::size_t size = 1;
  for (; value >= 0x80; value >>= 7) ++size;
  return size;
}

// FORMAT.md §6 kind 3: a text entry, id and bytes.
void append_text_entry(std::string& entries, std::uint32_t id, std::string_view text) {
  std::string body;
  wire::put_varint(body, id);
  wire::put_bytes(body, text);
  entries.push_back(static_cast<char>(schema::DictKind::text));
  wire::put_varint(entries, body.size());
  entries.append(body);
}

}  // namespace

bool TextInterner::rewrite(std::string_view rows, std::string& out, std::string& entries) {
  wire::ByteReader r(rows);
  std::string& rewritten = rewritten_;
  rewritten.clear();
  // Records go over in runs, from the end of the last record changed to the
  // start of the next one: a payload with nothing to intern (long texts
  // that never repeat) is not copied at all.
  const char* unchanged_from = rows.data();
  BatchRecord record;
  while (!r.empty()) {
    if (!next_batch_row(r, record)) {
      // Cannot happen for the collector's own bytes; they are written as they are.
      discard();
      entries.clear();
      return false;
    }
    std::string_view args = record.args;
    if (args.size() < kMinLength) continue;
    const SiteInfo* site =
        record.site_id == schema::kControlSiteId ? nullptr : site_info(static_cast<std::uint32_t>(record.site_id));
    args_.clear();
    // A rate-limited site's suppressed count comes before its arguments.
    std::size_t count_size = site != nullptr && site->limited ? suppressed_count_size(args) : 0;
    args_.append(args.substr(0, count_size));
    bool changed = false;
    if (site == nullptr ||
        !rewrite_args(static_cast<std::uint32_t>(record.site_id), args.substr(count_size), site->arg_tags.data(),
                      site->arg_tags.size(), args_, entries, changed) ||
        !changed)
      continue;
    // The record's bytes up to its arguments' length go over as they are:
    // no varint is decoded only to be encoded again.
    if (rewritten.empty()) rewritten.reserve(rows.size());
    std::size_t length_size = varint_size(args.size());
    rewritten.append(unchanged_from, static_cast<std::size_t>(args.data() - unchanged_from) - length_size);
    wire::put_bytes(rewritten, args_);
    unchanged_from = args.data() + args.size();
  }
  if (rewritten.empty()) return false;
  rewritten.append(unchanged_from, static_cast<std::size_t>(rows.data() + rows.size() - unchanged_from));
  out.swap(rewritten);
  return true;
}

std::uint32_t& TextInterner::last_text(std::uint32_t site_id, std::size_t arg) {
  if (site_id >= last_text_.size()) last_text_.resize(std::max<std::size_t>(site_id + 1, last_text_.size() * 2));
  std::vector<std::uint32_t>& site = last_text_[site_id];
  if (arg >= site.size()) site.resize(arg + 1, 0);
  return site[arg];
}

bool TextInterner::rewrite_args(std::uint32_t site_id, std::string_view args, const std::uint8_t* tags,
                                std::size_t count, std::string& args_out, std::string& entries, bool& changed) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < count; ++i) {
    auto tag = static_cast<schema::TypeTag>(tags[i]);
    if (tag != schema::TypeTag::string && tag != schema::TypeTag::structured) {
      int width = schema::type_tag_size(tags[i]);
      if (width <= 0 || args.size() - at < static_cast<std::size_t>(width)) return false;
      args_out.append(args.substr(at, static_cast<std::size_t>(width)));
      at += static_cast<std::size_t>(width);
      continue;
    }
    if (args.size() - at < 4) return false;
    std::uint32_t header;
    std::memcpy(&header, args.data() + at, 4);
    std::size_t length = header;
    if (tag == schema::TypeTag::string) {
      std::size_t whole =
          schema::encoded_string_size(reinterpret_cast<const unsigned char*>(args.data()) + at, args.size() - at);
      if (whole == 0) return false;
      length = whole - 4;
    }
    if (args.size() - at - 4 < length) return false;
    std::string_view text = args.substr(at + 4, length);
    // Null, interned, truncated and cut headers all have the top bit set.
    bool plain_text = tag == schema::TypeTag::string && (header & schema::kStringTruncatedBit) == 0;
    if (!plain_text || length < kMinLength) {
      args_out.append(args.substr(at, 4 + length));
      at += 4 + length;
      continue;
    }
    at += 4 + length;
    if (write_known(text, last_text(site_id, i), args_out, entries)) {
      changed = true;
      continue;
    }
    wire::put_le<std::uint32_t>(args_out, static_cast<std::uint32_t>(length));
    args_out.append(text);
  }
  return at == args.size();
}

std::uint32_t TextInterner::lookup(std::string_view text, std::size_t hash, std::size_t sample, std::string& entries) {
  std::uint32_t id = 0;
  auto known = texts_.find(hash);
  if (known != texts_.end()) {
    for (const Text& t : known->second)
      if (t.bytes == text) id = t.id;
  }
  if (seen_once_.empty()) seen_once_.assign(kSeenOnceSlots, 0);
  std::size_t& seen = seen_once_[hash % kSeenOnceSlots];
  if (id == 0 && seen == hash) {
    // Its second time in this file: from now on it is written once.
    id = add_text(text, hash, sample, entries);
  }
  if (id == 0) seen = hash;
  return id;
}

std::uint32_t TextInterner::add_text(std::string_view text, std::size_t hash, std::size_t sample,
                                     std::string& entries) {
  if (text_bytes_ + text.size() > kMaxTextBytes) return 0;
  std::uint32_t id = next_id_++;
  std::vector<Text>& same_hash = texts_[hash];
  same_hash.push_back(Text{std::string(text), id});
  // Moving a long std::string keeps its heap bytes where they are, so the
  // views of the others stay valid when the vector grows.
  if (by_id_.size() <= id) by_id_.resize(id + 1);
  by_id_[id] = same_hash.back().bytes;
  text_bytes_ += text.size();
  pending_.push_back(hash);
  append_text_entry(entries, id, text);
  similar_[sample] = id;
  return id;
}

// A text with an entry like it is compared with that entry and not hashed
// whole: only a text with no such entry is looked up.
bool TextInterner::write_known(std::string_view text, std::uint32_t& last, std::string& args_out,
                               std::string& entries) {
  auto write_from = [&](std::uint32_t base) {
    // A forgotten text (its frame never reached the file) is empty: no match.
    if (base == 0 || base >= by_id_.size() || by_id_[base].size() != text.size()) return false;
    // memcmp outruns the patch search on a text that repeats whole, and
    // stops at the first byte of one that does not.
    if (by_id_[base] == text) {
      write_interned(args_out, base);
      last = base;
      return true;
    }
    std::size_t at = args_out.size();
    wire::put_le<std::uint32_t>(args_out, schema::kStringPatched);
    wire::put_le<std::uint32_t>(args_out, base);
    wire::put_le<std::uint32_t>(args_out, 0);
    if (!append_patches(by_id_[base], text, text.size() / kMostPatchedShare, args_out)) {
      args_out.resize(at);
      return false;
    }
    auto patches = static_cast<std::uint32_t>(args_out.size() - at - schema::kStringPatchedPrefix);
    std::memcpy(args_out.data() + at + 8, &patches, 4);
    last = base;
    return true;
  };
  if (write_from(last)) return true;
  const std::size_t sample = similarity_sample(text);
  auto similar = similar_.find(sample);
  if (similar != similar_.end() && by_id_[similar->second].empty()) {
    similar_.erase(similar);
    similar = similar_.end();
  }
  if (similar != similar_.end() && similar->second != last && write_from(similar->second)) return true;
  const std::size_t hash = sample_hash(text);
  if (std::uint32_t id = lookup(text, hash, sample, entries); id != 0) {
    last = id;
    write_interned(args_out, id);
    return true;
  }
  // Texts that share a sample with an entry but not its bytes stay inline
  // rather than each taking an entry of its own.
  if (similar != similar_.end()) return false;
  if (similar_seen_.empty()) similar_seen_.assign(kSeenOnceSlots, 0);
  std::size_t& seen = similar_seen_[sample % kSeenOnceSlots];
  if (seen != sample) {
    seen = sample;
    return false;
  }
  // A text like one before, with no entry it is near: it becomes the one
  // the next ones are patched from.
  std::uint32_t id = add_text(text, hash, sample, entries);
  if (id == 0) return false;
  last = id;
  write_interned(args_out, id);
  return true;
}

void TextInterner::write_interned(std::string& args_out, std::uint32_t id) {
  wire::put_le<std::uint32_t>(args_out, schema::kStringInterned);
  wire::put_le<std::uint32_t>(args_out, id);
}

void TextInterner::discard() {
  for (std::size_t hash : pending_) {
    auto it = texts_.find(hash);
    if (it == texts_.end()) continue;
    auto& list = it->second;
    // Texts of the failed write are the newest of their hash.
    while (!list.empty() && list.back().id >= next_id_ - static_cast<std::uint32_t>(pending_.size())) {
      text_bytes_ -= list.back().bytes.size();
      by_id_[list.back().id] = {};
      list.pop_back();
    }
    if (list.empty()) texts_.erase(it);
  }
  pending_.clear();
}

void TextInterner::append_known_entries(std::string& entries) const {
  for (std::uint32_t id = 1; id < by_id_.size(); ++id)
    if (!by_id_[id].empty()) append_text_entry(entries, id, by_id_[id]);
}

void TextInterner::new_file() {
  texts_.clear();
  by_id_.clear();
  last_text_.clear();
  seen_once_.clear();
  similar_.clear();
  similar_seen_.clear();
  pending_.clear();
  text_bytes_ = 0;
  next_id_ = 1;
}

}  // namespace terse::detail
