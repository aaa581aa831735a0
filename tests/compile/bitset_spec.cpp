// A bitset takes a string's fill, align and width, nothing more (FORMAT.md
// §8.1): a precision fails the build.
#include <terse/std/bitset.hpp>

void snippet() {
  std::bitset<4> bits(5);
#ifdef TERSE_COMPILE_BAD
  TERSE_INFO("{:.2}", bits);
#else
  TERSE_INFO("{:*>8}", bits);
#endif
}
