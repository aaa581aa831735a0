#!/usr/bin/env bash
# Quick start, part two: build every configuration and run every test.
#   format   the tree follows .clang-format (clang-format-14)
#   release  all tests with GCC (and the benchmarks compiled, not run)
#   clang    the same with Clang 14 and LLVM's libc++ (what macOS has), fmt header-only
#            (Debian's libfmt is built for libstdc++): what GCC accepts and Clang warns
#            about, or what only libstdc++ declares, fails here; built on the POSIX platform
#            (-DTERSE_PLATFORM=posix, what macOS and the BSDs take), so every test also
#            proves that nothing outside runtime/platform_linux.cpp needs Linux. Without the
#            benchmarks (Google Benchmark is built for libstdc++; GCC's build compiles them)
#            and the Debian package tests (GCC's build runs them)
#   tsan     the concurrency and round-trip tests under ThreadSanitizer
#   asan     decoder, file, CLI, ship, console, levels and rate-limit tests and the fuzz corpus under
#            AddressSanitizer + UBSan
#            (ship's record counts scaled by TERSE_TEST_SCALE, default 0.2), then a short
#            libFuzzer run (TERSE_FUZZ_SECONDS, default 30)
#   windows  cross-built for 64-bit Windows with MinGW-w64 (cmake/x86_64-w64-mingw32.cmake;
#            zstd cross-built by scripts/deps.sh windows), run under Wine: terse.exe decodes
#            and verifies every golden file, byte for byte, and reads back the demo's log
#   aarch64  cross-built for 64-bit Arm (cmake/aarch64-linux-gnu.cmake), the concurrency and
#            round-trip tests and the CRC-32C test run under qemu-user (TERSE_TEST_SCALE,
#            default 0.2); installs its packages with scripts/deps.sh aarch64
# Every configuration builds with TERSE_WERROR=ON: a new warning fails CI. The sanitizer and
# aarch64 configurations build only the tests they run (and the programs those start).
# Usage: scripts/test.sh [format|release|clang|tsan|asan|windows|aarch64]...   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
jobs=$(nproc)
configs=("$@")
((${#configs[@]})) || configs=(format release clang tsan asan windows aarch64)
for config in "${configs[@]}"; do
  case $config in
    aarch64) scripts/deps.sh aarch64 ;;
    clang) scripts/deps.sh libcxx ;;
    windows) scripts/deps.sh windows ;;
  esac
done
fuzz_seconds=${TERSE_FUZZ_SECONDS:-30}
# Line tables only (-g1): sanitizer reports and backtraces still name files and lines, and the
# build takes some 30 % less time than with full debug information.
optimized=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
# The sanitizers at -O1, which their documentation names as enough: the build takes some 10 %
# less time than at -O2, and fewer frames of a report are inlined away.
sanitized=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")

# Builds, in build directory $1, the tests that ctest -L $2 selects (each is a target of its
# name; a test that is not, such as a script over the CLI, needs one of the extra targets
# given after the labels), but those whose names match the regular expression $excluded_tests.
build_tests() {
  local dir=$1 labels=$2
  shift 2
  # A lookup table, not a pipe into grep -q: grep quits at the first match, the writer then
  # dies of SIGPIPE, pipefail turns that into "no match", and the test was silently not built
  # (a CI run then reported it as "Not Run").
  local -A is_target=()
  local target
  while read -r target; do is_target[$target]=1; done < <(cmake --build "$dir" --target help |
    sed -n 's/^\.\.\. \([^ ]*\).*/\1/p')
  local wanted=("$@") test
  while read -r test; do
    if [[ -n ${excluded_tests:-} && $test =~ ^($excluded_tests)$ ]]; then continue; fi
    if [[ -n ${is_target[$test]:-} ]]; then wanted+=("$test"); fi
  done < <(list_tests "$dir" "$labels")
  build_targets "$dir" "${wanted[@]}"
}

# The names of the tests that ctest -L $2 selects in build directory $1, one a line.
list_tests() {
  ctest --test-dir "$1" -N -L "$2" | sed -n 's/^ *Test *#[0-9]*: //p'
}

# Builds, in build directory $1, the targets given after it, as the one goal terse_selected.
build_targets() {
  local dir=$1
  shift
  cmake -S . -B "$dir" "-DTERSE_SELECTED_TARGETS=$(IFS=';'; echo "$*")" >/dev/null
  cmake --build "$dir" -j"$jobs" --target terse_selected
}

for config in "${configs[@]}"; do
  echo "=== $config"
  SECONDS=0
  case $config in
    format)
      scripts/format.sh --check
      ;;
    release)
      cmake -S . -B build/ci-release "${optimized[@]}" -DCMAKE_CXX_COMPILER=g++ \
        -DTERSE_TESTS=ON -DTERSE_BENCH=ON -DTERSE_WERROR=ON >/dev/null
      cmake --build build/ci-release -j"$jobs"
      ctest --test-dir build/ci-release -j2 --output-on-failure
      ;;
    clang)
      # A Release build, without debug information (GCC's build above has its line tables):
      # some 10 % less compile time.
      cmake -S . -B build/ci-clang -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" \
        -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS=-stdlib=libc++ -DTERSE_FMT_HEADER_ONLY=ON \
        -DTERSE_PLATFORM=posix -DTERSE_TESTS=ON -DTERSE_BENCH=OFF -DTERSE_WERROR=ON >/dev/null
      cmake --build build/ci-clang -j"$jobs"
      ctest --test-dir build/ci-clang -j2 --output-on-failure -E '^package_'
      ;;
    windows)
      # Without debug information. At -O2: at -O1, GCC 12 warns of a string copy out of bounds
      # inside libstdc++ that is not there (-Warray-bounds). The round-trip, file,
      # decoder, CLI and crash tests, but (README: Platforms) those of what Windows does not
      # have (Linux's /proc, fork() and waitpid(), bash) and those of the source tree rather
      # than a build.
      cmake -S . -B build/ci-windows --toolchain cmake/x86_64-w64-mingw32.cmake -DCMAKE_BUILD_TYPE=Release \
        "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" -DTERSE_FMT_HEADER_ONLY=ON -DTERSE_SHIP=OFF \
        -DTERSE_TESTS=ON -DTERSE_BENCH=OFF -DTERSE_WERROR=ON >/dev/null
      labels="roundtrip|files|decoder|cli|crash"
      excluded_tests="roundtrip_placement_test|lifecycle_test|lost_file_test|cli_bash_completion|layout_.*|files_spec_test"
      build_tests build/ci-windows "$labels" terse_cli terse_demo
      # Wine's first start makes its prefix and says so on stderr, which a test reads: once,
      # here, in a prefix of the build's own.
      wine=(env "WINEPREFIX=$PWD/build/ci-windows/wine" WINEDEBUG=-all)
      "${wine[@]}" /usr/lib/wine/wine64 build/ci-windows/terse.exe --version >/dev/null 2>&1
      "${wine[@]}" ctest --test-dir build/ci-windows -j2 --output-on-failure -L "$labels" -E "^($excluded_tests)\$"
      excluded_tests=
      ;;
    tsan)
      cmake -S . -B build/ci-tsan "${optimized[@]}" -DCMAKE_CXX_COMPILER=clang++ \
        -DTERSE_SANITIZE=thread -DTERSE_TESTS=ON -DTERSE_BENCH=OFF -DTERSE_WERROR=ON >/dev/null
      labels="concurrency|roundtrip"
      build_tests build/ci-tsan "$labels"
      TERSE_TEST_SCALE=${TERSE_TEST_SCALE:-0.1} TSAN_OPTIONS=halt_on_error=1 \
        ctest --test-dir build/ci-tsan -j2 --output-on-failure -L "$labels"
      ;;
    asan)
      cmake -S . -B build/ci-asan "${sanitized[@]}" -DCMAKE_CXX_COMPILER=clang++ \
        -DTERSE_SANITIZE=address,undefined -DTERSE_FUZZ=ON -DTERSE_FUZZ_SECONDS="$fuzz_seconds" \
        -DTERSE_TESTS=ON -DTERSE_BENCH=OFF -DTERSE_WERROR=ON >/dev/null
      labels="decoder|fuzz|files|cli|ship|sinks|control"
      # The golden-file and completion tests run the CLI, the demo's test the demo too; the fuzz
      # smoke test runs the fuzzer.
      build_tests build/ci-asan "$labels" terse_cli terse_demo decoder_fuzz
      TERSE_TEST_SCALE=${TERSE_TEST_SCALE:-0.2} ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        ctest --test-dir build/ci-asan -j2 --output-on-failure -L "$labels"
      ;;
    aarch64)
      # Emulation runs a test some 5 to 20 times slower than natively, and building all the
      # tests would take most of the time: the tests of weak memory ordering (the concurrency
      # and round-trip labels, as under ThreadSanitizer) and of the Arm-only code (the CRC-32C
      # paths; the generic-timer clock is roundtrip_clock_test) are what this adds to the
      # native runs. Programs the tests start (the CLI, writers) run under the emulator too.
      # Without debug information, which is some 40 % of the compile time here.
      cmake -S . -B build/ci-aarch64 --toolchain cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" -DTERSE_TESTS=ON -DTERSE_BENCH=OFF -DTERSE_SHIP=OFF \
        -DTERSE_WERROR=ON >/dev/null
      selection="concurrency|roundtrip"
      mapfile -t tests < <(list_tests build/ci-aarch64 "$selection")
      tests+=(files_crc_test)
      build_targets build/ci-aarch64 "${tests[@]}"
      TERSE_TEST_SCALE=${TERSE_TEST_SCALE:-0.2} ctest --test-dir build/ci-aarch64 -j2 --output-on-failure \
        -R "^($(IFS='|'; echo "${tests[*]}"))\$"
      ;;
    *)
      echo "unknown configuration '$config' (format, release, clang, tsan, asan, windows, aarch64)" >&2
      exit 2
      ;;
  esac
  echo "=== $config took $((SECONDS / 60)) min $((SECONDS % 60)) s"
done
echo "=== all tests passed: ${configs[*]}"
