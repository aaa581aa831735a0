// Context fields (Context, FORMAT.md §7) in a text line and a JSON object:
// of several fields with one key, the innermost shows.
#include <span>
#include <string>
#include <string_view>

#include <terse/decoder.hpp>

namespace terse::decoder {

bool context_shows(std::span<const ContextField> context, std::size_t i) {
  for (std::size_t j = i + 1; j < context.size(); ++j)
    if (context[j].key == context[i].key) return false;
  return true;
}

const ContextField* context_find(std::span<const ContextField> context, std::string_view key) {
  for (std::size_t i = context.size(); i-- > 0;)
    if (context[i].key == key) return &context[i];
  return nullptr;
}

void append_context_text(std::string& out, std::span<const ContextField> context) {
  bool first = true;
  for (std::size_t i = 0; i < context.size(); ++i) {
    if (!context_shows(context, i)) continue;
    if (!first) out += ' ';
    first = false;
    out += context[i].key;
    out += '=';
    out += context[i].text;
  }
}

void append_json_context(std::string& out, std::span<const ContextField> context) {
  if (context.empty()) return;
  out += ",\"context\":{";
  bool first = true;
  for (std::size_t i = 0; i < context.size(); ++i) {
    if (!context_shows(context, i)) continue;
    if (!first) out += ',';
    first = false;
    append_json_string(out, context[i].key);
    out += ':';
    out += context[i].json;
  }
  out += '}';
}

}  // namespace terse::decoder
