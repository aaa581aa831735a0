// Durations and system-clock time points, rendered by fmt/chrono.h itself:
// for the periods fmt knows by name (and the calendar ones) the real
// std::chrono type is rebuilt, so every chrono spec (`{:%H:%M:%S}`, `{:.2}`)
// behaves as the writer's fmt would. Counts take the widest type of their
// kind (long long, unsigned long long, float, double), which prints the
// same as the writer's narrower ones.
#include <chrono>
#include <ctime>
#include <ratio>

#include <fmt/chrono.h>

#include "structured_format.hpp"

namespace terse::decoder::detail {

using schema::TypeTag;

namespace {

template <typename Rep>
Rep count_as(const Arg& a) {
  switch (static_cast<TypeTag>(a.tag)) {
    case TypeTag::i8:
    case TypeTag::i16:
    case TypeTag::i32:
    case TypeTag::i64: return static_cast<Rep>(a.i);
    case TypeTag::u8:
    case TypeTag::u16:
    case TypeTag::u32:
    case TypeTag::u64: return static_cast<Rep>(a.u);
    case TypeTag::f32: return static_cast<Rep>(a.f32);
    case TypeTag::f64: return static_cast<Rep>(a.f64);
    default: return Rep{};
  }
}

template <typename Rep, typename Ratio>
class DurationFormatter final : public Formatter {
 public:
  explicit DurationFormatter(std::uint8_t rep) : rep_(rep) {}

  const char* parse(fmt::format_parse_context& ctx) override { return formatter_.parse(ctx); }

  void format(wire::Reader& value, const Sink& out) const override {
    Rep count = count_as<Rep>(take_scalar(value, rep_));
    fmt::format_context ctx = out.context();
    formatter_.format(std::chrono::duration<Rep, Ratio>(count), ctx);
  }

 private:
  fmt::formatter<std::chrono::duration<Rep, Ratio>> formatter_;
  std::uint8_t rep_;
};

// A period fmt has no name for prints as "5[7/3]s" (format_duration_unit);
// as no C++ type can be made for it here, only fill, align and width are
// taken, which is what fmt does with a spec that has no chrono part.
template <typename Rep>
class OddDurationFormatter final : public Formatter {
 public:
  OddDurationFormatter(std::uint8_t rep, const Period& period) : rep_(rep), period_(period) {}

  const char* parse(fmt::format_parse_context& ctx) override {
    const char* it = ctx.begin();
    const char* end = ctx.end();
    auto align = [](char c) { return c == '<' || c == '>' || c == '^'; };
    if (it != end && *it != '}') {
      auto lead = static_cast<unsigned char>(*it);
      std::ptrdiff_t fill = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : 4;
      if (end - it > fill && align(it[fill]) && *it != '{') {
        it += fill + 1;
      } else if (align(*it)) {
        ++it;
      }
      if (it != end && *it == '{') {
        while (it != end && *it != '}') ++it;
        if (it != end) ++it;
      } else {
        while (it != end && *it >= '0' && *it <= '9') ++it;
      }
      if (it != end && *it != '}')
        format_failure("a duration of this period takes only fill, align and width as its spec");
    }
    return text_.parse(ctx);
  }

  void format(wire::Reader& value, const Sink& out) const override {
    Rep count = count_as<Rep>(take_scalar(value, rep_));
    // The count as fmt prints a duration's count, less the unit "s".
    fmt::memory_buffer text;
    fmt::format_to(fmt::appender(text), "{}", std::chrono::duration<Rep>(count));
    text.resize(text.size() - 1);
    if (period_.den == 1) {
      fmt::format_to(fmt::appender(text), "[{}]s", period_.num);
    } else {
      fmt::format_to(fmt::appender(text), "[{}/{}]s", period_.num, period_.den);
    }
    fmt::format_context ctx = out.context();
    text_.format(fmt::string_view(text.data(), text.size()), ctx);
  }

 private:
  fmt::formatter<fmt::string_view> text_;
  std::uint8_t rep_;
  Period period_;
};

template <typename Rep>
FormatterPtr duration_formatter(std::uint8_t rep, const Period& p) {
#define TERSE_PERIOD(R) \
  if (p.num == R::num && p.den == R::den) return std::make_unique<DurationFormatter<Rep, R>>(rep);
  TERSE_PERIOD(std::atto)
  TERSE_PERIOD(std::femto)
  TERSE_PERIOD(std::pico)
  TERSE_PERIOD(std::nano)
  TERSE_PERIOD(std::micro)
  TERSE_PERIOD(std::milli)
  TERSE_PERIOD(std::centi)
  TERSE_PERIOD(std::deci)
  TERSE_PERIOD(std::ratio<1>)
  TERSE_PERIOD(std::deca)
  TERSE_PERIOD(std::hecto)
  TERSE_PERIOD(std::kilo)
  TERSE_PERIOD(std::mega)
  TERSE_PERIOD(std::giga)
  TERSE_PERIOD(std::tera)
  TERSE_PERIOD(std::peta)
  TERSE_PERIOD(std::exa)
  TERSE_PERIOD(std::ratio<60>)
  TERSE_PERIOD(std::ratio<3600>)
  TERSE_PERIOD(std::ratio<86400>)
#undef TERSE_PERIOD
  return std::make_unique<OddDurationFormatter<Rep>>(rep, p);
}

// fmt 9.1 prints a std::chrono::sys_time through std::tm in local time, to
// the second: the formatter of sys_seconds parses the spec (its default is
// "%F %T") and its std::tm base writes the broken-down time made here.
class SystemTimeFormatter final : public Formatter {
 public:
  SystemTimeFormatter(std::uint8_t rep, const Period& period) : rep_(rep), period_(period) {}

  const char* parse(fmt::format_parse_context& ctx) override { return formatter_.parse(ctx); }

  void format(wire::Reader& value, const Sink& out) const override {
    Arg count = take_scalar(value, rep_);
    std::tm local{};
    std::time_t seconds = to_time_t(count);
    if (!localtime_r(&seconds, &local)) format_failure("time_t value out of range");
    fmt::format_context ctx = out.context();
    static_cast<const fmt::formatter<std::tm>&>(formatter_).format(local, ctx);
  }

 private:
  // system_clock::to_time_t: whole seconds since the epoch, rounded toward
  // zero.
  std::time_t to_time_t(const Arg& count) const {
    constexpr long double kLimit = 9.2e18L;
    if (count.tag == static_cast<std::uint8_t>(TypeTag::f32) || count.tag == static_cast<std::uint8_t>(TypeTag::f64)) {
      long double ticks = count.tag == static_cast<std::uint8_t>(TypeTag::f32) ? count.f32 : count.f64;
      long double seconds = std::trunc(ticks * static_cast<long double>(period_.num) / static_cast<long double>(period_.den));
      if (!(seconds > -kLimit && seconds < kLimit)) format_failure("time_t value out of range");
      return static_cast<std::time_t>(seconds);
    }
    std::int64_t seconds, nanos;
    if (!period_seconds(count, period_, false, seconds, nanos)) format_failure("time_t value out of range");
    return static_cast<std::time_t>(seconds);
  }

  fmt::formatter<std::chrono::sys_seconds> formatter_;
  std::uint8_t rep_;
  Period period_;
};

}  // namespace

FormatterPtr make_duration_formatter(std::uint8_t rep, const Period& period) {
  switch (static_cast<TypeTag>(rep)) {
    case TypeTag::f32: return duration_formatter<float>(rep, period);
    case TypeTag::f64: return duration_formatter<double>(rep, period);
    case TypeTag::u8:
    case TypeTag::u16:
    case TypeTag::u32:
    case TypeTag::u64: return duration_formatter<unsigned long long>(rep, period);
    default: return duration_formatter<long long>(rep, period);
  }
}

FormatterPtr make_system_time_formatter(std::uint8_t rep, const Period& period) {
  return std::make_unique<SystemTimeFormatter>(rep, period);
}

}  // namespace terse::decoder::detail
