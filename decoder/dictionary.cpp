// The frames that describe a stream rather than log: info, calibration and
// the dictionary (FORMAT.md §5, §6), whose sites, threads and texts the
// records refer to.
#include <atomic>
#include <string>

#include <terse/dictionary.hpp>
#include <terse/schema.hpp>
#include <terse/wire.hpp>

#include "stream_state.hpp"
#include "structured.hpp"

namespace terse::decoder {

namespace {

// Decoders run on several threads (parallel decoding, several readers), and
// the numbers need only be unique: relaxed.
std::uint64_t next_site_serial() {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

// FORMAT.md §6 (1.4): the optional flags field; bits this reader does not
// know are ignored.
Result<> read_site_flags(wire::ByteReader& body, Site& site) {
  site.limited = false;
  site.context = false;
  if (body.empty()) return {};
  std::uint64_t flags;
  if (!body.varint(flags)) return Failure{"its flags are malformed"};
  site.limited = (flags & schema::kSiteFlagLimited) != 0;
  // FORMAT.md §7.3: a context site holds a key, then a value.
  site.context = (flags & schema::kSiteFlagContext) != 0;
  if (site.context &&
      (site.limited || site.tags.size() != 2 || site.tags[0] != static_cast<std::uint8_t>(schema::TypeTag::string)))
    return Failure{"it is a context site but not a key and a value"};
  return {};
}

// FORMAT.md §6: the optional arg_names field, none or one per argument.
Result<> read_arg_names(wire::ByteReader& body, Site& site) {
  site.arg_names.clear();
  if (body.empty()) return {};
  std::uint64_t n;
  if (!body.varint(n) || (n != 0 && n != site.tags.size())) return Failure{"its argument names are malformed"};
  site.arg_names.resize(static_cast<std::size_t>(n));
  for (auto& name : site.arg_names) {
    std::string_view text;
    if (!body.length_prefixed(text, kMaxTextField)) return Failure{"its argument names are malformed"};
    name.assign(text);
  }
  // All positional: the same as no names, and rendered as fast.
  if (std::all_of(site.arg_names.begin(), site.arg_names.end(), [](const std::string& name) { return name.empty(); }))
    site.arg_names.clear();
  return {};
}

}  // namespace

void StreamDecoder::State::info(std::string_view payload) {
  wire::ByteReader r(payload);
  while (!r.empty()) {
    std::uint8_t key;
    std::string_view value;
    if (!r.le(key) || !r.length_prefixed(value, payload.size())) return;  // ignorable, so never damage
    // Authenticated only in a sealed file opened with its key.
    if (key == static_cast<std::uint8_t>(schema::InfoKey::previous_file) && opener &&
        value.size() == seal::kFileIdBytes) {
      sealed_file.previous = to_hex(value.data(), value.size());
      continue;
    }
    if (key != static_cast<std::uint8_t>(schema::InfoKey::private_values) || value.size() > 16) continue;
    auto& seen = summary.private_values;
    if (std::find(seen.begin(), seen.end(), value) == seen.end() && seen.size() < 3) seen.emplace_back(value);
  }
}

void StreamDecoder::State::calibration(const Frame& frame, std::string_view payload) {
  wire::ByteReader r(payload);
  std::uint64_t ticks;
  std::int64_t unix_ns;
  double rate;
  // From 1 kHz to 10 THz: any real clock, and nothing that makes the
  // conversion meaningless.
  if (!r.le(ticks) || !r.le(unix_ns) || !r.le(rate) || !(rate >= 1e3 && rate <= 1e13)) {
    damage(frame.offset, "calibration frame is malformed");
    return;
  }
  clock.add(ticks, unix_ns, rate);
}

void StreamDecoder::State::dictionary(const Frame& frame, std::string_view payload) {
  bool whole = schema::for_each_entry(payload, [&](const schema::EntryView& entry) {
    wire::ByteReader body(entry.body);
    if (entry.kind == static_cast<std::uint8_t>(schema::DictKind::site)) {
      site_entry(frame, body);
    } else if (entry.kind == static_cast<std::uint8_t>(schema::DictKind::thread)) {
      thread_entry(frame, body);
    } else if (entry.kind == static_cast<std::uint8_t>(schema::DictKind::text)) {
      text_entry(frame, body);
    }
    // Other kinds are newer than this decoder and skipped (FORMAT.md §6).
    return true;
  });
  if (!whole) damage(frame.offset, "dictionary frame is malformed");
}

// FORMAT.md §6 kind 1.
void StreamDecoder::State::site_entry(const Frame& frame, wire::ByteReader& b) {
  std::uint64_t id, line, nargs;
  std::uint8_t level;
  std::string_view file, format, tags;
  if (!b.varint(id) || id == 0 || id > UINT32_MAX || !b.le(level) || !b.varint(line) || line > UINT32_MAX ||
      !b.length_prefixed(file, kMaxTextField) || !b.length_prefixed(format, kMaxTextField) || !b.varint(nargs) ||
      nargs > kMaxArgs || !b.bytes(nargs, tags)) {
    damage(frame.offset, "dictionary entry for a call site is malformed");
    return;
  }
  if (sites.size() >= kMaxSitesPerStream && !sites.count(static_cast<std::uint32_t>(id))) {
    damage(frame.offset, "too many call sites in one file");
    return;
  }
  Site& site = sites[static_cast<std::uint32_t>(id)];
  forget_deltas(static_cast<std::uint32_t>(id));  // its tags may have changed
  site.id = static_cast<std::uint32_t>(id);
  site.serial = next_site_serial();
  site.level = level;
  site.line = static_cast<std::uint32_t>(line);
  site.file.assign(file);
  site.format.assign(format);
  site.tags.assign(tags.begin(), tags.end());
  Result<> readable = detail::read_type_expressions(b, site);
  if (readable) readable = read_arg_names(b, site);
  if (readable) readable = read_site_flags(b, site);
  site.usable = readable.ok();
  if (!site.usable) {
    site.types = SiteTypes{};
    site.arg_names.clear();
    site.limited = false;
    site.context = false;
  }
  if (site.context) has_context_sites = true;
  site.check = check_format(site.format, site.tags, site.arg_names);
  site.selected = wants(site);
  index_site(site);
  if (!site.usable) {
    damage(frame.offset, "call site " + std::to_string(id) + " (" + site.file + ":" + std::to_string(line) +
                             ") cannot be rendered, its records are skipped: " + readable.why());
  } else if (!site.check.ok) {
    damage(frame.offset, "call site " + std::to_string(id) + " (" + site.file + ":" + std::to_string(line) +
                             ") has an unusable format string: " + site.check.error);
  }
}

// FORMAT.md §6 kind 2.
void StreamDecoder::State::thread_entry(const Frame& frame, wire::ByteReader& b) {
  std::uint64_t index, tid;
  std::string_view name;
  if (!b.varint(index) || index > UINT32_MAX || !b.varint(tid) || !b.length_prefixed(name, kMaxTextField)) {
    damage(frame.offset, "dictionary entry for a thread is malformed");
    return;
  }
  if (threads.size() >= kMaxThreadsPerStream && !threads.count(static_cast<std::uint32_t>(index))) {
    damage(frame.offset, "too many threads in one file");
    return;
  }
  Thread& thread = threads[static_cast<std::uint32_t>(index)];
  thread.index = static_cast<std::uint32_t>(index);
  thread.os_tid = tid;
  thread.name.assign(name);
  thread.selected = wants(thread);
  if (index < kDirectIndex) {
    if (thread_by_index.size() <= index) thread_by_index.resize(index + 1, nullptr);
    thread_by_index[index] = &thread;
  }
}

// FORMAT.md §6 kind 3. An entry the file's bound leaves no room for is
// dropped, an earlier one of its id with it, so that records referring to
// it are reported rather than shown with other text.
void StreamDecoder::State::text_entry(const Frame& frame, wire::ByteReader& body) {
  std::uint64_t id;
  std::string_view bytes;
  if (!body.varint(id) || id == 0 || id > UINT32_MAX || !body.length_prefixed(bytes, kMaxTextBytesPerFile)) {
    damage(frame.offset, "dictionary entry for a text is malformed");
    return;
  }
  auto [it, inserted] = texts.try_emplace(static_cast<std::uint32_t>(id));
  text_bytes -= it->second.size();
  if (bytes.size() > kMaxTextBytesPerFile - text_bytes || texts.size() > kMaxTextsPerFile) {
    texts.erase(it);
    damage(frame.offset,
           "the file's text entries pass 64 MiB or 2^20 entries; text " + std::to_string(id) + " is dropped");
    return;
  }
  it->second.assign(bytes);
  text_bytes += bytes.size();
}

}  // namespace terse::decoder
