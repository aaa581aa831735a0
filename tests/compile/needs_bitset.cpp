// A std::bitset logged without <terse/std/bitset.hpp>.
// Compiled twice: with TERSE_COMPILE_BAD the build must fail with a message
// that names the header to include; without it, the control must build.
#include <terse/terse.hpp>

#include <bitset>

void snippet() {
#ifdef TERSE_COMPILE_BAD
  std::bitset<4> b(5);
  TERSE_INFO("{}", b);
#else
  std::bitset<4> b(5);
  TERSE_INFO("{}", b.to_ulong());
#endif
}
