// terse::reader::Value from a record's decoded arguments: a scalar with
// its type, a structured value as a tree straight from the decoded bytes.
#include <fmt/format.h>

#include <terse/reader.hpp>

#include "reader_detail.hpp"
#include "structured.hpp"

namespace terse::reader {

double Value::as_double() const {
  switch (kind) {
    case Kind::signed_integer:
      return static_cast<double>(i);
    case Kind::unsigned_integer:
      return static_cast<double>(u);
    case Kind::floating:
      return f;
    default:
      return 0;
  }
}

std::int64_t Value::as_int64() const {
  switch (kind) {
    case Kind::signed_integer:
      return i;
    case Kind::unsigned_integer:
      return static_cast<std::int64_t>(u);
    case Kind::floating:
      return static_cast<std::int64_t>(f);
    default:
      return 0;
  }
}

std::uint64_t Value::as_uint64() const {
  switch (kind) {
    case Kind::signed_integer:
      return static_cast<std::uint64_t>(i);
    case Kind::unsigned_integer:
      return u;
    case Kind::floating:
      return static_cast<std::uint64_t>(f);
    default:
      return 0;
  }
}

const Value* Value::find(std::string_view member_name) const {
  for (const auto& child : children)
    if (child.name == member_name) return &child;
  return nullptr;
}

namespace {

template <typename T>
std::string formatted(const T& value) {
  return fmt::format("{}", value);
}

// A scalar's kind and typed fields; a string's text. True when `text` is
// left to the caller.
bool set_scalar(Value& v, const decoder::Arg& a) {
  using schema::TypeTag;
  switch (static_cast<TypeTag>(a.tag)) {
    case TypeTag::i8:
    case TypeTag::i16:
    case TypeTag::i32:
    case TypeTag::i64:
      v.kind = Value::Kind::signed_integer;
      v.i = a.i;
      break;
    case TypeTag::u8:
    case TypeTag::u16:
    case TypeTag::u32:
    case TypeTag::u64:
      v.kind = Value::Kind::unsigned_integer;
      v.u = a.u;
      break;
    case TypeTag::pointer:
      v.kind = Value::Kind::pointer;
      v.u = a.u;
      break;
    case TypeTag::boolean:
      v.kind = Value::Kind::boolean;
      v.b = a.b;
      break;
    case TypeTag::character:
      v.kind = Value::Kind::character;
      v.c = a.c;
      break;
    case TypeTag::f32:
      v.kind = Value::Kind::floating;
      v.f = a.f32;
      break;
    case TypeTag::f64:
      v.kind = Value::Kind::floating;
      v.f = a.f64;
      break;
    case TypeTag::f80:
    case TypeTag::f128:
      v.kind = Value::Kind::floating;
      v.f = static_cast<double>(a.f80);
      break;
    case TypeTag::string:
      if (a.null_string) {
        v.null_string = true;
        v.text = "(null)";
        return false;
      }
      v.kind = Value::Kind::string;
      v.text.assign(a.text);
      v.truncated = a.truncated;
      v.original_size = a.original_size;
      return false;
    case TypeTag::structured:
      return false;
  }
  return true;
}

Value scalar_value(const decoder::Arg& a) {
  Value v;
  if (set_scalar(v, a)) v.text = decoder::detail::visit_scalar(a, [](const auto& x) { return formatted(x); });
  return v;
}

// A structured value's pieces as a Value tree, straight from the decoded
// bytes: numbers keep the type they were logged with. Each piece's text is
// its JSON, as `terse cat -o json` writes it.
class ValueTree final : public decoder::detail::ValueOut {
 public:
  explicit ValueTree(Value& root) : root_(root), json_(json_text_) {}

  void begin_list() override { open(Value::Kind::list); }
  void end_list() override {
    json_.end_list();
    close();
  }
  void begin_object() override { open(Value::Kind::object); }
  void member(std::string_view name) override {
    json_.member(name);
    name_.assign(name);
  }
  void end_object() override {
    json_.end_object();
    close();
  }
  void null() override {
    Value& v = next();
    std::size_t start = json_text_.size();
    json_.null();
    v.text = json_text_.substr(start);
  }
  void scalar(const decoder::Arg& a) override {
    Value& v = next();
    std::size_t start = json_text_.size();
    json_.scalar(a);
    if (set_scalar(v, a)) v.text = json_text_.substr(start);
  }
  void string(std::string_view text) override {
    Value& v = next();
    json_.string(text);
    v.kind = Value::Kind::string;
    v.text.assign(text);
  }
  // Each open container's text is a copy of its JSON: nesting multiplies
  // them, so the copies count against the limit too.
  void check() const override {
    json_.check();
    if (copied_ > decoder::detail::kMaxRenderedBytes) throw decoder::detail::ValueTooLarge{};
  }

 private:
  struct Open {
    Value* value;
    std::size_t json_start;
  };

  // Where the next value goes: the root, or a new child of the innermost
  // open container, named by the member before it.
  Value& next() {
    json_.separate();
    if (open_.empty()) return root_;
    Value& child = open_.back().value->children.emplace_back();
    child.name = std::move(name_);
    name_.clear();
    return child;
  }
  void open(Value::Kind kind) {
    Value& v = next();
    v.kind = kind;
    open_.push_back({&v, json_text_.size()});
    if (kind == Value::Kind::list) {
      json_.begin_list();
    } else {
      json_.begin_object();
    }
  }
  void close() {
    Open done = open_.back();
    open_.pop_back();
    done.value->text = json_text_.substr(done.json_start);
    copied_ += done.value->text.size();
  }

  Value& root_;
  std::string json_text_;
  decoder::detail::JsonText json_;
  std::vector<Open> open_;  // containers begun and not yet ended, outermost first
  std::string name_;
  std::size_t copied_ = 0;
};

Value structured_value(const decoder::Site& site, const decoder::Arg& a) {
  decoder::detail::StructuredView view{&site.types, a.type, a.text};
  Value v;
  try {
    ValueTree tree(v);
    decoder::detail::write_value(view, tree, nullptr);
  } catch (const decoder::detail::ValueTooLarge&) {
    v = Value{};
    v.kind = Value::Kind::string;
    v.text = decoder::detail::kValueTooLargeNote;
    return v;
  }
  // The whole value as `{}` prints it, as in the message; its JSON when fmt
  // cannot print it.
  decoder::detail::reset_render_budget();
  try {
    v.text = fmt::format("{}", view);
  } catch (const fmt::format_error&) {
  }
  return v;
}

}  // namespace

Value detail::argument_value(const decoder::Site& site, const decoder::Arg& a) {
  return a.tag == static_cast<std::uint8_t>(schema::TypeTag::structured) ? structured_value(site, a) : scalar_value(a);
}

}  // namespace terse::reader
