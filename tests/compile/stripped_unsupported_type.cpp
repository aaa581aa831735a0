// A call removed by TERSE_MIN_LEVEL is still type-checked: an argument terse
// cannot log fails the build even though the call never runs.
#include <terse/terse.hpp>

#include <vector>

void snippet() {
#ifdef TERSE_COMPILE_BAD
  TERSE_DEBUG("{}", std::vector<int>{1, 2});
#else
  TERSE_DEBUG("{}", 12);
#endif
}
