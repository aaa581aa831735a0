// Context fields (FORMAT.md §7.3): the pushes and pops of control records,
// followed per thread so that each record carries the fields open on its
// thread, and a filter can match them.
#include <string>

#include <terse/schema.hpp>
#include <terse/wire.hpp>

#include "records.hpp"
#include "stream_state.hpp"
#include "structured.hpp"

namespace terse::decoder {

using detail::parse_args;
using detail::split_records;

bool StreamDecoder::State::context_matches(std::span<const ContextField> open) const {
  for (const auto& [key, value] : filter.context) {
    const ContextField* field = context_find(open, key);
    if (field == nullptr || field->text != value) return false;
  }
  return true;
}

bool StreamDecoder::State::apply_context(std::uint32_t thread, std::string_view args, bool flight) {
  wire::ByteReader a(args);
  std::uint8_t kind;
  std::uint64_t serial;
  if (!a.le(kind)) return false;
  bool push = kind == static_cast<std::uint8_t>(schema::ControlKind::context_push);
  if (!push && kind != static_cast<std::uint8_t>(schema::ControlKind::context_pop)) return false;
  if (!a.varint(serial)) {
    damage(cursor_frame, "context record is malformed");
    return true;
  }
  if (!push) {
    auto& by_thread = flight ? flight_contexts : contexts;
    auto it = by_thread.find(thread);
    if (it != by_thread.end()) {
      std::erase_if(it->second, [serial](const ContextField& f) { return f.serial == serial; });
      if (it->second.empty()) by_thread.erase(it);
    }
    return true;
  }
  std::uint64_t id;
  if (!a.varint(id)) {
    damage(cursor_frame, "context record is malformed");
    return true;
  }
  Site* site = find_site(id);
  if (site == nullptr) {
    report_unknown_site(id);
    return true;
  }
  if (!site->usable) return true;
  if (!site->context) {
    damage(cursor_frame, "a context record names call site " + std::to_string(id) + ", which is no context site");
    return true;
  }
  if (Result<> parsed = parse_args(a, *site, texts, arg_values, marked_texts); !parsed) {
    damage(cursor_frame, "a context record of site " + std::to_string(id) + " " + parsed.why());
    return true;
  }
  std::vector<ContextField>& open = contexts_of(thread, flight);
  if (open.size() >= kMostContexts) {
    damage(cursor_frame,
           "more than " + std::to_string(kMostContexts) + " contexts open on one thread; this one is left out");
    return true;
  }
  ContextField field;
  field.serial = serial;
  field.key.assign(arg_values[0].text.substr(0, kMostContextBytes));
  Record value;
  value.site = site;
  value.args = arg_values;
  std::string message;
  render_message(value, message);
  // "{}={}": the value is what follows the key and its '='.
  std::size_t key_end = arg_values[0].text.size() + 1;
  field.text = message.size() >= key_end ? message.substr(key_end, kMostContextBytes) : message;
  const Arg& v = arg_values[1];
  if (v.tag == static_cast<std::uint8_t>(schema::TypeTag::structured)) {
    detail::append_json_value(field.json, detail::StructuredView{&site->types, v.type, v.text}, {});
  } else {
    detail::append_json_scalar(field.json, v);
  }
  if (field.json.size() > kMostContextBytes) {
    field.json.clear();
    append_json_string(field.json, field.text);
  }
  std::erase_if(open, [serial](const ContextField& f) { return f.serial == serial; });
  open.push_back(std::move(field));
  return true;
}

void StreamDecoder::State::scan_contexts(std::string_view payload, Layout layout) {
  bool flight = layout.flight;
  begin_run(flight);
  std::uint64_t base;
  wire::ByteReader ticks{nullptr, 0}, r{nullptr, 0};
  if (!split_records(payload, layout.columnar, base, ticks, r)) return;
  while (!r.empty()) {
    std::uint64_t site_id, thread_index, delta, args_size;
    std::string_view args;
    // A row beyond the tick column is damage (FORMAT.md §7.4), reported when the frame is read.
    if (!r.varint(site_id) || !r.varint(thread_index) || !(layout.columnar ? ticks.varint(delta) : r.varint(delta)) ||
        !r.varint(args_size) || !r.bytes(args_size, args) || thread_index > UINT32_MAX)
      return;  // reported if and when the frame is read
    if (site_id == schema::kControlSiteId) apply_context(static_cast<std::uint32_t>(thread_index), args, flight);
  }
}

void StreamDecoder::replace_contexts(std::string_view pushes) {
  State& s = *state_;
  s.in_records = false;
  s.contexts.clear();
  if (!pushes.empty()) s.scan_contexts(pushes, State::Layout{});
}

}  // namespace terse::decoder
