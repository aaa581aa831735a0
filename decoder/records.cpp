#include "records.hpp"

#include <string>

#include <terse/schema.hpp>
#include <terse/wire.hpp>

#include "structured.hpp"

namespace terse::decoder::detail {

namespace {

// FORMAT.md §8 (1.3): a cut string, its original length, then the stored
// string; the kept bytes and the mark go into `marked`, which the argument's
// text then refers to.
bool read_cut_string(wire::ByteReader& r, Arg& a, std::string& marked) {
  std::uint64_t original;
  r.skip(4);
  if (!r.le(original) || r.remaining() < 4) return false;
  std::uint32_t header = wire::get_le<std::uint32_t>(r.position());
  if (header == schema::kStringNull || header == schema::kStringCut ||
      !detail::read_scalar(r, static_cast<std::uint8_t>(schema::TypeTag::string), a) || original < a.text.size())
    return false;
  marked.assign(a.text);
  marked.append("... ").append(std::to_string(original)).append(" bytes total");
  a.text = marked;
  a.truncated = true;
  a.original_size = original;
  return true;
}

// FORMAT.md §8 (3.1): a patched string, its text entry with byte ranges
// replaced; the result goes into `patched`, which the argument's text then
// refers to. False for anything malformed, which the caller reports.
bool read_patched_string(wire::ByteReader& r, const std::unordered_map<std::uint32_t, std::string>& texts, Arg& a,
                         std::string& patched) {
  std::uint32_t id = 0;
  std::uint32_t size = 0;
  std::string_view patches;
  r.skip(4);
  if (!r.le(id) || !r.le(size) || !r.bytes(size, patches)) return false;
  auto text = texts.find(id);
  if (text == texts.end()) return false;
  std::string_view base = text->second;
  wire::ByteReader p(patches);
  patched.clear();
  std::size_t at = 0;
  while (!p.empty()) {
    std::uint64_t skip = 0;
    std::uint64_t removed = 0;
    std::uint64_t inserted = 0;
    std::string_view bytes;
    if (!p.varint(skip) || !p.varint(removed) || !p.varint(inserted) || (removed == 0 && inserted == 0) ||
        skip > base.size() - at || removed > base.size() - at - skip || !p.bytes(inserted, bytes))
      return false;
    if (patched.size() + skip + inserted > schema::kStringLengthMask) return false;
    patched.append(base.substr(at, skip)).append(bytes);
    at += skip + removed;
  }
  if (patched.size() + (base.size() - at) > schema::kStringLengthMask) return false;
  patched.append(base.substr(at));
  a.text = patched;
  return true;
}

}  // namespace

Result<> parse_args(wire::ByteReader& r, const Site& site, const std::unordered_map<std::uint32_t, std::string>& texts,
                    std::vector<Arg>& args, std::vector<std::string>& marked) {
  static constexpr const char* kMismatch = "does not match the site's argument types";
  const std::vector<std::uint8_t>& tags = site.tags;
  args.resize(tags.size());
  std::size_t structured = 0;
  detail::ValueBudget budget;
  for (std::size_t i = 0; i < tags.size(); ++i) {
    Arg& a = args[i];
    a = Arg{};
    if (tags[i] != static_cast<std::uint8_t>(schema::TypeTag::structured)) {
      // FORMAT.md §8: a top-level string may be one of the file's texts,
      // one patched, or cut; its header says which (a length is none of them).
      std::uint32_t header = tags[i] == static_cast<std::uint8_t>(schema::TypeTag::string) && r.remaining() >= 4
                                 ? wire::get_le<std::uint32_t>(r.position())
                                 : 0;
      if (header == schema::kStringInterned) {
        std::uint32_t id = 0;
        r.skip(4);
        auto text = r.le(id) ? texts.find(id) : texts.end();
        if (text == texts.end()) return Failure{"refers to a text entry the file has not defined"};
        a.tag = tags[i];
        a.text = text->second;
        continue;
      }
      if (header == schema::kStringPatched) {
        if (marked.size() <= i) marked.resize(tags.size());
        a.tag = tags[i];
        if (!read_patched_string(r, texts, a, marked[i]))
          return Failure{"holds a patched string that its text entry cannot make"};
        continue;
      }
      if (header == schema::kStringCut) {
        if (marked.size() <= i) marked.resize(tags.size());
        if (!read_cut_string(r, a, marked[i])) return Failure{kMismatch};
        continue;
      }
      if (!detail::read_scalar(r, tags[i], a)) return Failure{kMismatch};
      continue;
    }
    a.tag = tags[i];
    a.type = site.types.roots[structured++];
    std::uint32_t size;
    if (!r.le(size) || !r.bytes(size, a.text)) return Failure{kMismatch};
    if (!detail::check_value(site.types, a.type, a.text, budget)) {
      return Failure{budget.elements > detail::kMaxElementsPerRecord || budget.values > detail::kMaxValuesPerRecord
                         ? "holds more structured elements than a record may (2^20)"
                         : "has a structured argument that does not match its type expression"};
    }
  }
  if (!r.empty()) return Failure{kMismatch};
  return {};
}

bool split_records(std::string_view payload, bool columnar, std::uint64_t& base_ticks, wire::ByteReader& ticks,
                   wire::ByteReader& rows) {
  wire::ByteReader r(payload);
  std::string_view column;
  if (!r.le(base_ticks) || (columnar && !r.length_prefixed(column, payload.size()))) return false;
  ticks = wire::ByteReader(column);
  rows = r;
  return true;
}

}  // namespace terse::decoder::detail
