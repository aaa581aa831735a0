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
    std::uint32_t& last = last_text(site_id, i);
    std::uint32_t id = last != 0 && by_id_[last] == text ? last : lookup(text, length, entries);
    if (id == 0) {
      wire::put_le<std::uint32_t>(args_out, static_cast<std::uint32_t>(length));
      args_out.append(text);
      continue;
    }
    last = id;
    wire::put_le<std::uint32_t>(args_out, schema::kStringInterned);
    wire::put_le<std::uint32_t>(args_out, id);
    changed = true;
  }
  return at == args.size();
}

std::uint32_t TextInterner::lookup(std::string_view text, std::size_t length, std::string& entries) {
  std::size_t hash = sample_hash(text);
  std::uint32_t id = 0;
  auto known = texts_.find(hash);
  if (known != texts_.end()) {
    for (const Text& t : known->second)
      if (t.bytes == text) id = t.id;
  }
  if (seen_once_.empty()) seen_once_.assign(kSeenOnceSlots, 0);
  std::size_t& seen = seen_once_[hash % kSeenOnceSlots];
  if (id == 0 && seen == hash && text_bytes_ + length <= kMaxTextBytes) {
    // Its second time in this file: from now on it is written once.
    id = next_id_++;
    std::vector<Text>& same_hash = texts_[hash];
    same_hash.push_back(Text{std::string(text), id});
    // Moving a long std::string keeps its heap bytes where they are, so the
    // views of the others stay valid when the vector grows.
    if (by_id_.size() <= id) by_id_.resize(id + 1);
    by_id_[id] = same_hash.back().bytes;
    text_bytes_ += length;
    pending_.push_back(hash);
    append_text_entry(entries, id, text);
  }
  if (id == 0) seen = hash;
  return id;
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
  pending_.clear();
  text_bytes_ = 0;
  next_id_ = 1;
}

}  // namespace terse::detail
