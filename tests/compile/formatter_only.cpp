// A type with its own fmt::formatter but no terse::codec and no opt-in to
// formatting on the calling thread fails the build: the decoder could not
// run that formatter later.
#include <terse/terse.hpp>

struct Temperature {
  double degrees;
};
template <>
struct fmt::formatter<Temperature> : fmt::formatter<double> {
  auto format(const Temperature& t, fmt::format_context& ctx) const {
    return fmt::formatter<double>::format(t.degrees, ctx);
  }
};

void snippet() {
#ifdef TERSE_COMPILE_BAD
  TERSE_INFO("{}", Temperature{21.5});
#else
  TERSE_INFO("{}", Temperature{21.5}.degrees);
#endif
}
