# Cross-building for 64-bit Windows with Debian's MinGW-w64 (GCC, POSIX
# threads) and running the tests under Wine; scripts/deps.sh windows installs
# both and stages what the build needs in build/deps/x86_64-w64-mingw32:
#   cmake -S . -B build/windows --toolchain cmake/x86_64-w64-mingw32.cmake
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)

# zstd cross-built from Debian's source package, and the header-only
# dependencies (fmt, Boost.PFR, CLI11, Catch2) staged from the host's
# packages without the rest of the host's /usr/include, which is glibc's.
set(TERSE_WINDOWS_DEPS ${CMAKE_CURRENT_LIST_DIR}/../build/deps/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32 ${TERSE_WINDOWS_DEPS})

# Static runtime libraries: a program runs from any folder, under Wine too,
# with no libstdc++ or winpthread DLL beside it.
set(CMAKE_EXE_LINKER_FLAGS_INIT -static)
set(CMAKE_SHARED_LINKER_FLAGS_INIT -static)

# Debian puts wine64 outside PATH. Tests run as `wine64 program.exe args`;
# tests that start other programs of the build read the emulator from
# TERSE_TEST_EMULATOR, as under qemu.
find_program(TERSE_WINE64 wine64 PATHS /usr/lib/wine REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${TERSE_WINE64})

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
