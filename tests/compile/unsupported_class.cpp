// A class terse can neither reflect (not an aggregate, no TERSE_FIELDS) nor
// hand to fmt fails the build, with a message that says what to do.
// Compiled twice: with TERSE_COMPILE_BAD the build must fail; without it,
// the same file is the control that proves nothing else is broken.
#include <terse/terse.hpp>

class Opaque {
 public:
  explicit Opaque(int v) : value_(v) {}
  int value() const { return value_; }  // read, or Clang warns of an unused field

 private:
  int value_;
};

void snippet() {
#ifdef TERSE_COMPILE_BAD
  Opaque o(1);
  TERSE_INFO("{}", o);
#else
  int o = 1;
  TERSE_INFO("{}", o);
#endif
}
