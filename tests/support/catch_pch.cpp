// The translation unit that precompiles catch2/catch.hpp for every test binary
// (tests/CMakeLists.txt): CMake adds the header, so it needs nothing of its own.
