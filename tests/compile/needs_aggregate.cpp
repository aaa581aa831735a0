// An aggregate logged without <terse/aggregate.hpp>.
// Compiled twice: with TERSE_COMPILE_BAD the build must fail with a message
// that names the header to include; without it, the control must build.
#include <terse/terse.hpp>

struct Point {
  int x;
  int y;
};

void snippet() {
#ifdef TERSE_COMPILE_BAD
  TERSE_INFO("{}", Point{1, 2});
#else
  TERSE_INFO("{} {}", Point{1, 2}.x, Point{1, 2}.y);
#endif
}
