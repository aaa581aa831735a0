// The decoder reads format strings from files it cannot trust; check_format
// must accept every format fmt accepts for our types and refuse the ones
// that would make fmt misbehave or allocate without bound.
#include <catch2/catch.hpp>

#include <terse/decoder.hpp>
#include <terse/schema.hpp>

using terse::decoder::check_format;
using terse::decoder::kMaxWidthOrPrecision;
using terse::schema::TypeTag;

namespace {

std::vector<std::uint8_t> tags(std::initializer_list<TypeTag> list) {
  std::vector<std::uint8_t> out;
  for (TypeTag t : list) out.push_back(static_cast<std::uint8_t>(t));
  return out;
}

}  // namespace

TEST_CASE("ordinary format strings pass") {
  auto t = tags({TypeTag::i32, TypeTag::f64, TypeTag::string});
  for (const char* format : {"{} {} {}", "{:>10} {:+.3f} {:?}", "{2} {0} {1}", "{{}} {} {}}} {}", "{:*^9} {:e} {:s}",
                             "{:#x} {:G} {:<20}", "{:é>5} {:.0f} {}", "{:08d} {:L} {}"}) {
    INFO(format);
    auto check = check_format(format, t);
    CHECK(check.ok);
    CHECK(check.dynamic_args.empty());
  }
}

TEST_CASE("dynamic widths and precisions are found, in fmt's argument order") {
  auto check = check_format("{:{}.{}f}", tags({TypeTag::f64, TypeTag::i32, TypeTag::i32}));
  REQUIRE(check.ok);
  CHECK(check.dynamic_args == std::vector<std::uint16_t>{1, 2});
  auto manual = check_format("{0:{2}} {1:.{2}}", tags({TypeTag::string, TypeTag::f32, TypeTag::u8}));
  REQUIRE(manual.ok);
  CHECK(manual.dynamic_args == std::vector<std::uint16_t>{2, 2});
}

TEST_CASE("a static width or precision beyond the bound is refused") {
  auto t = tags({TypeTag::f64});
  CHECK(check_format("{:" + std::to_string(kMaxWidthOrPrecision) + "}", t).ok);
  CHECK_FALSE(check_format("{:" + std::to_string(kMaxWidthOrPrecision + 1) + "}", t).ok);
  CHECK_FALSE(check_format("{:.2147483648f}", t).ok);
  CHECK_FALSE(check_format("{:99999999999999999999999}", t).ok);
}

TEST_CASE("references to arguments the record does not have are refused") {
  CHECK_FALSE(check_format("{} {}", tags({TypeTag::i32})).ok);
  CHECK_FALSE(check_format("{3}", tags({TypeTag::i32})).ok);
  CHECK_FALSE(check_format("{:{}}", tags({TypeTag::i32})).ok);
  CHECK_FALSE(check_format("{0} {}", tags({TypeTag::i32, TypeTag::i32})).ok);
}

TEST_CASE("malformed fields and unknown type tags are refused") {
  auto t = tags({TypeTag::i32});
  for (const char* format : {"{", "}", "{:", "{:>", "{0", "{:.}", "{name}", "{:{x}}", "{:10.5fg}"}) {
    INFO(format);
    CHECK_FALSE(check_format(format, t).ok);
  }
  std::vector<std::uint8_t> unknown{0xEE};
  CHECK_FALSE(check_format("{}", unknown).ok);
}

TEST_CASE("{name} fields refer to the site's argument names, and only to them") {
  auto t = tags({TypeTag::string, TypeTag::i32, TypeTag::i32});
  std::vector<std::string> names{"user", "", "width"};
  for (const char* format :
       {"{user}", "login {user} from {1}", "{user:>{width}}", "{} {user} {}", "{user} {0} {2}", "{width:#x}", "{_x}"}) {
    INFO(format);
    std::vector<std::string> with_underscore = names;
    with_underscore[1] = "_x";
    CHECK(check_format(format, t, with_underscore).ok);
  }
  auto dynamic = check_format("{user:>{width}}", t, names);
  REQUIRE(dynamic.ok);
  CHECK(dynamic.dynamic_args == std::vector<std::uint16_t>{2});
  for (const char* format : {"{nobody}", "{User}", "{user", "{user:}}", "{1x}", "{:{nobody}}", "{user.name}"}) {
    INFO(format);
    CHECK_FALSE(check_format(format, t, names).ok);
  }
  CHECK_FALSE(check_format("{user}", t).ok);  // no names at all
}

TEST_CASE("structured arguments take their formatters' specs, with bounded numbers") {
  auto t = tags({TypeTag::structured, TypeTag::i32});
  for (const char* format : {"{} {}", "{::x} {}", "{:n} {}", "{:n:} {}", "{:%H:%M:%S} {}", "{::>10} {}", "{:::>5} {}",
                             "{0::{1}}", "{:{}}", "{::%Y-%m-%d}{}"}) {
    INFO(format);
    CHECK(check_format(format, t).ok);
  }
  auto dynamic = check_format("{::*^{}.{}f}", tags({TypeTag::structured, TypeTag::i32, TypeTag::i32}));
  REQUIRE(dynamic.ok);
  CHECK(dynamic.dynamic_args == std::vector<std::uint16_t>{1, 2});
  for (const char* format :
       {"{::>65537} {}", "{:.99999999999} {}", "{::{x}} {}", "{0::{}} {1}", "{::{}} {} {}", "{::", "{::{}"}) {
    INFO(format);
    CHECK_FALSE(check_format(format, t).ok);
  }
}
