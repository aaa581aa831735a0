// Durations and time points. Their text comes from fmt/chrono.h itself:
// for the periods fmt knows by name (and the calendar ones) the real
// std::chrono type is rebuilt, so every chrono spec (`{:%H:%M:%S}`, `{:.2}`)
// behaves as the writer's fmt would. Counts take the widest type of their
// kind (long long, unsigned long long, float, double), which prints the
// same as the writer's narrower ones.
#include <chrono>
#include <ctime>
#include <iterator>
#include <numeric>
#include <ratio>
#include <string>

#include <fmt/chrono.h>

#include <terse/portable_libc.hpp>

#include "structured_kind.hpp"

namespace terse::decoder::detail {

using schema::TypeTag;

namespace {

template <typename Rep>
Rep count_as(const Arg& a) {
  switch (static_cast<TypeTag>(a.tag)) {
    case TypeTag::i8:
    case TypeTag::i16:
    case TypeTag::i32:
    case TypeTag::i64:
      return static_cast<Rep>(a.i);
    case TypeTag::u8:
    case TypeTag::u16:
    case TypeTag::u32:
    case TypeTag::u64:
      return static_cast<Rep>(a.u);
    case TypeTag::f32:
      return static_cast<Rep>(a.f32);
    case TypeTag::f64:
      return static_cast<Rep>(a.f64);
    default:
      return Rep{};
  }
}

template <typename Rep, typename Ratio>
class DurationFormatter final : public Formatter {
 public:
  explicit DurationFormatter(std::uint8_t rep) : rep_(rep) {}

  const char* parse(fmt::format_parse_context& ctx) override { return formatter_.parse(ctx); }

  void format(wire::ByteReader& value, const Sink& out) const override {
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
    accept_only_fill_align_width(ctx, "a duration of this period takes only fill, align and width as its spec");
    return text_.parse(ctx);
  }

  void format(wire::ByteReader& value, const Sink& out) const override {
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

  void format(wire::ByteReader& value, const Sink& out) const override {
    Arg count = take_scalar(value, rep_);
    std::tm local{};
    std::time_t seconds = to_time_t(count);
    if (!local_calendar(seconds, local)) format_failure("time_t value out of range");
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
      long double seconds =
          std::trunc(ticks * static_cast<long double>(period_.num) / static_cast<long double>(period_.den));
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

FormatterPtr make_duration_formatter(std::uint8_t rep, const Period& period) {
  switch (static_cast<TypeTag>(rep)) {
    case TypeTag::f32:
      return duration_formatter<float>(rep, period);
    case TypeTag::f64:
      return duration_formatter<double>(rep, period);
    case TypeTag::u8:
    case TypeTag::u16:
    case TypeTag::u32:
    case TypeTag::u64:
      return duration_formatter<unsigned long long>(rep, period);
    default:
      return duration_formatter<long long>(rep, period);
  }
}

// ---- JSON -------------------------------------------------------------------------------

// The unit fmt's duration formatter prints: get_units(), else "[num/den]s".
std::string duration_unit(const Period& p) {
  static const struct {
    std::uint64_t num, den;
    const char* unit;
  } kUnits[] = {{1, 1000000000000000000ull, "as"},
                {1, 1000000000000000ull, "fs"},
                {1, 1000000000000ull, "ps"},
                {1, 1000000000, "ns"},
                {1, 1000000, "\xC2\xB5s"},
                {1, 1000, "ms"},
                {1, 100, "cs"},
                {1, 10, "ds"},
                {1, 1, "s"},
                {10, 1, "das"},
                {100, 1, "hs"},
                {1000, 1, "ks"},
                {1000000, 1, "Ms"},
                {1000000000, 1, "Gs"},
                {1000000000000ull, 1, "Ts"},
                {1000000000000000ull, 1, "Ps"},
                {1000000000000000000ull, 1, "Es"},
                {60, 1, "m"},
                {3600, 1, "h"}};
  for (const auto& u : kUnits)
    if (u.num == p.num && u.den == p.den) return u.unit;
  return p.den == 1 ? fmt::format("[{}]s", p.num) : fmt::format("[{}/{}]s", p.num, p.den);
}

// UTC with nanoseconds, when the count is an integer whose time fits.
bool rfc3339_utc(std::string& out, const Arg& count, const Period& period) {
  if (!integer_tag(count.tag)) return false;
  std::int64_t seconds, nanos;
  if (!period_seconds(count, period, true, seconds, nanos)) return false;
  constexpr std::int64_t kLimit = std::int64_t{1} << 40;  // far beyond year 9999
  if (seconds > kLimit || seconds < -kLimit) return false;
  time_t t = static_cast<time_t>(seconds);
  tm parts{};
  if (!utc_calendar(t, parts) || parts.tm_year + 1900 < 0 || parts.tm_year + 1900 > 9999) return false;
  fmt::format_to(std::back_inserter(out), "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}Z", parts.tm_year + 1900,
                 parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, nanos);
  return true;
}

void write_count_and_unit(ValueOut& out, const Arg& count, const Period& period, const char* clock) {
  out.begin_object();
  out.member("count");
  out.scalar(count);
  out.member("unit");
  out.string(duration_unit(period));
  if (clock) {
    out.member("clock");
    out.string(clock);
  }
  out.end_object();
}

// ---- the kinds ----------------------------------------------------------------------------

bool duration_rep_tag(std::uint8_t tag) {
  return integer_tag(tag) || tag == static_cast<std::uint8_t>(TypeTag::f32) ||
         tag == static_cast<std::uint8_t>(TypeTag::f64);
}

// A duration's expression is its count's tag and its period; a time
// point's has its clock first.
template <bool HasClock>
bool read_count_and_period(TypeReader& in, std::uint32_t index) {
  wire::ByteReader& r = in.input();
  std::uint8_t clock = 0, rep;
  if (HasClock && !r.le(clock)) return in.fail("a time point type ends early");
  if (!r.le(rep)) return in.fail("a duration type ends early");
  if (!duration_rep_tag(rep)) return in.fail("a duration counts in type tag " + hex_byte(rep));
  Period period;
  if (!r.varint(period.num) || !r.varint(period.den)) return in.fail("a duration type ends early");
  if (period.num == 0 || period.den == 0) return in.fail("a duration has a period of zero");
  std::uint64_t divisor = std::gcd(period.num, period.den);
  period.num /= divisor;
  period.den /= divisor;
  TypeExpr& node = in.node(index);
  node.rep = rep;
  // Clocks newer than this reader are shown as durations, like "other".
  node.clock = clock <= static_cast<std::uint8_t>(schema::Clock::steady) ? clock : 0;
  node.extra = static_cast<std::uint32_t>(in.types().periods.size());
  in.types().periods.push_back(period);
  return true;
}

bool check_count(ValueChecker&, const TypeExpr& node, wire::ByteReader& r) {
  return r.skip(static_cast<std::size_t>(schema::type_tag_size(node.rep)));
}

// JSON: {"count": N, "unit": "ms"}, the unit as fmt prints it ("[5/7]s" for
// odd periods).
struct Duration {
  static bool read_type(TypeReader& in, std::uint32_t index, int) { return read_count_and_period<false>(in, index); }
  static bool check_value(ValueChecker& checker, const TypeExpr& node, wire::ByteReader& r) {
    return check_count(checker, node, r);
  }
  static void write_value(ValueWriter& w, const TypeExpr& node, wire::ByteReader& r) {
    Arg a;
    read_scalar(r, node.rep, a);
    write_count_and_unit(w.out(), a, w.types().periods[node.extra], nullptr);
  }
  static FormatterPtr make_formatter(const SiteTypes& types, const TypeExpr& node) {
    return make_duration_formatter(node.rep, types.periods[node.extra]);
  }
};

// JSON: of the system clock "2023-11-14T22:13:20.123000000Z" (UTC), else (or
// out of range) {"count": N, "unit": "ns", "clock": "steady" or "other"}.
// Text: of the system clock as fmt 9.1 prints a sys_time, else as the
// duration since the epoch.
struct TimePoint {
  static bool read_type(TypeReader& in, std::uint32_t index, int) { return read_count_and_period<true>(in, index); }
  static bool check_value(ValueChecker& checker, const TypeExpr& node, wire::ByteReader& r) {
    return check_count(checker, node, r);
  }
  static void write_value(ValueWriter& w, const TypeExpr& node, wire::ByteReader& r) {
    Arg a;
    read_scalar(r, node.rep, a);
    const Period& period = w.types().periods[node.extra];
    std::string time;
    if (node.clock == static_cast<std::uint8_t>(schema::Clock::system) && rfc3339_utc(time, a, period)) {
      w.out().string(time);
      return;
    }
    write_count_and_unit(w.out(), a, period,
                         node.clock == static_cast<std::uint8_t>(schema::Clock::steady) ? "steady" : "other");
  }
  static FormatterPtr make_formatter(const SiteTypes& types, const TypeExpr& node) {
    const Period& period = types.periods[node.extra];
    if (node.clock == static_cast<std::uint8_t>(schema::Clock::system))
      return std::make_unique<SystemTimeFormatter>(node.rep, period);
    return make_duration_formatter(node.rep, period);
  }
};

}  // namespace

const Kind& duration_kind() { return kind_from<Duration>(); }
const Kind& time_point_kind() { return kind_from<TimePoint>(); }

}  // namespace terse::decoder::detail
