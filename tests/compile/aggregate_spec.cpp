// An aggregate renders as {fields}; a format spec for it has no meaning and
// fails the build rather than being ignored.
#include <terse/aggregate.hpp>

struct Point {
  int x;
  int y;
};

void snippet() {
#ifdef TERSE_COMPILE_BAD
  TERSE_INFO("{:>10}", Point{1, 2});
#else
  TERSE_INFO("{}", Point{1, 2});
#endif
}
