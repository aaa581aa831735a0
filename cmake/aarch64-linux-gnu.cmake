# Cross-building for 64-bit Arm Linux with Debian's cross compiler and its
# multiarch :arm64 libraries (scripts/deps.sh aarch64 installs both):
#   cmake -S . -B build/aarch64 --toolchain cmake/aarch64-linux-gnu.cmake
# ctest then runs the test binaries under qemu-user.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Multiarch: the arm64 libraries and their CMake packages live in
# /usr/lib/aarch64-linux-gnu of the host itself, which CMake searches when
# it knows the library architecture; headers in /usr/include are shared.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Tests are run as `emulator binary args`: a container has no binfmt_misc
# entry that would start an Arm binary on its own. The arm64 loader and libc
# are in the host's /lib, where the multiarch packages put them, so qemu
# needs no -L. Tests that start other binaries of the build (the CLI, writer
# programs) read the emulator from TERSE_TEST_EMULATOR, which
# tests/CMakeLists.txt sets from this variable.
find_program(TERSE_QEMU_AARCH64 qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${TERSE_QEMU_AARCH64})

# Programs (the emulator, code generators) are the host's; libraries,
# headers and packages are the target's only.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
