// What the program and its two shared libraries log (shared_program.cpp) and
// what the test expects to decode (shared_library_test.cpp).
#pragma once

#include <string>

#include <fmt/format.h>

namespace terse::test {

inline constexpr int kSharedRecordsEach = 2000;

inline std::string main_record(int i) { return fmt::format("main record {} of {}", i, kSharedRecordsEach); }
inline std::string library_a_record(int i) { return fmt::format("library a record {} name {}", i, "alpha"); }
inline std::string library_b_record(int i) { return fmt::format("library b record {} ratio {:.2f}", i, i / 8.0); }

// Defined in the two shared libraries, each linked to the shared libterse.
void library_a_log(int count);
void library_b_log(int count);

}  // namespace terse::test
