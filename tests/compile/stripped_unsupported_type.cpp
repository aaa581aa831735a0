// A call removed by TERSE_MIN_LEVEL is still type-checked: an argument terse
// cannot log fails the build even though the call never runs.
#include <terse/terse.hpp>

#include <vector>

void snippet() {
#ifdef TERSE_COMPILE_BAD
  int x = 0;
  TERSE_DEBUG("{}", &x);  // int*: neither a value nor a void* address
#else
  TERSE_DEBUG("{}", 12);
#endif
}
