// A strict reader of one JSON text (RFC 8259) for the CLI tests: enough to
// say that a line is JSON and to look at its keys, with no library the
// project does not already need.
#pragma once

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace terse::test {

struct Json {
  enum class Kind { null, boolean, number, string, array, object } kind = Kind::null;
  bool boolean = false;
  double number = 0;
  std::string text;  // strings, unescaped but for \uXXXX, which stays as written
  std::vector<Json> items;
  std::map<std::string, Json> members;
};

// The value `text` holds, or nothing when it is not exactly one JSON value.
inline std::optional<Json> parse_json(std::string_view text) {
  struct Parser {
    std::string_view in;
    std::size_t at = 0;
    int depth = 0;

    void space() {
      while (at < in.size() && (in[at] == ' ' || in[at] == '\t' || in[at] == '\n' || in[at] == '\r')) ++at;
    }
    bool literal(std::string_view word) {
      if (in.substr(at, word.size()) != word) return false;
      at += word.size();
      return true;
    }
    bool string(std::string& out) {
      if (at >= in.size() || in[at] != '"') return false;
      for (++at; at < in.size(); ++at) {
        char c = in[at];
        if (c == '"') {
          ++at;
          return true;
        }
        if (static_cast<unsigned char>(c) < 0x20) return false;
        if (c != '\\') {
          out += c;
          continue;
        }
        if (++at >= in.size()) return false;
        c = in[at];
        if (c == 'u') {
          if (at + 4 >= in.size()) return false;
          for (int i = 1; i <= 4; ++i)
            if (!std::isxdigit(static_cast<unsigned char>(in[at + i]))) return false;
          out += "\\u";
          out += in.substr(at + 1, 4);
          at += 4;
        } else if (std::size_t which = std::string_view("\"\\/bfnrt").find(c); which != std::string_view::npos) {
          out += "\"\\/\b\f\n\r\t"[which];
        } else {
          return false;
        }
      }
      return false;
    }
    bool number(double& out) {
      std::size_t start = at;
      if (at < in.size() && in[at] == '-') ++at;
      if (at >= in.size() || !std::isdigit(static_cast<unsigned char>(in[at]))) return false;
      if (in[at] == '0') {
        ++at;
      } else {
        while (at < in.size() && std::isdigit(static_cast<unsigned char>(in[at]))) ++at;
      }
      auto digits = [&] {
        std::size_t from = at;
        while (at < in.size() && std::isdigit(static_cast<unsigned char>(in[at]))) ++at;
        return at > from;
      };
      if (at < in.size() && in[at] == '.' && (++at, !digits())) return false;
      if (at < in.size() && (in[at] == 'e' || in[at] == 'E')) {
        ++at;
        if (at < in.size() && (in[at] == '+' || in[at] == '-')) ++at;
        if (!digits()) return false;
      }
      out = std::strtod(std::string(in.substr(start, at - start)).c_str(), nullptr);
      return true;
    }
    bool value(Json& out) {
      if (++depth > 64) return false;
      space();
      if (at >= in.size()) return false;
      bool ok = false;
      char c = in[at];
      if (c == '{') {
        out.kind = Json::Kind::object;
        ++at;
        space();
        if (at < in.size() && in[at] == '}') {
          ++at;
          ok = true;
        }
        while (!ok) {
          space();
          std::string key;
          if (!string(key)) return false;
          space();
          if (at >= in.size() || in[at++] != ':') return false;
          Json member;
          if (!value(member) || out.members.count(key)) return false;
          out.members.emplace(std::move(key), std::move(member));
          space();
          if (at >= in.size()) return false;
          if (in[at] == '}')
            ok = true;
          else if (in[at] != ',')
            return false;
          ++at;
        }
      } else if (c == '[') {
        out.kind = Json::Kind::array;
        ++at;
        space();
        if (at < in.size() && in[at] == ']') {
          ++at;
          ok = true;
        }
        while (!ok) {
          Json item;
          if (!value(item)) return false;
          out.items.push_back(std::move(item));
          space();
          if (at >= in.size()) return false;
          if (in[at] == ']')
            ok = true;
          else if (in[at] != ',')
            return false;
          ++at;
        }
      } else if (c == '"') {
        out.kind = Json::Kind::string;
        ok = string(out.text);
      } else if (c == 't' || c == 'f') {
        out.kind = Json::Kind::boolean;
        out.boolean = c == 't';
        ok = literal(c == 't' ? "true" : "false");
      } else if (c == 'n') {
        ok = literal("null");
      } else {
        out.kind = Json::Kind::number;
        ok = number(out.number);
      }
      --depth;
      return ok;
    }
  };
  Parser parser{text};
  Json out;
  if (!parser.value(out)) return std::nullopt;
  parser.space();
  if (parser.at != text.size()) return std::nullopt;
  return out;
}

}  // namespace terse::test
