// A codec's format string is checked against its fields at compile time.
#include <string>
#include <tuple>

#include <terse/terse.hpp>

struct Money {
  long cents;
  std::string currency;
};
template <>
struct terse::codec<Money> {
#ifdef TERSE_COMPILE_BAD
  static constexpr std::string_view format = "{:d} {:d}";  // the currency is a string
#else
  static constexpr std::string_view format = "{:d} {}";
#endif
  static auto fields(const Money& m) { return std::tuple(m.cents, m.currency); }
};

void snippet() { TERSE_INFO("{}", Money{1, "EUR"}); }
