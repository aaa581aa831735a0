#!/usr/bin/env bash
# Quick start, part two: build every configuration and run every test.
#   format   the tree follows .clang-format (clang-format-14)
#   release  all tests (and the benchmarks compiled, not run)
#   tsan     the concurrency tests under ThreadSanitizer
#   asan     decoder, file, CLI, ship, console, levels and rate-limit tests and the fuzz corpus under
#            AddressSanitizer + UBSan
#            (ship's record counts scaled by TERSE_TEST_SCALE, default 0.2), then a short
#            libFuzzer run (TERSE_FUZZ_SECONDS, default 30)
#   aarch64  cross-built for 64-bit Arm (cmake/aarch64-linux-gnu.cmake), the concurrency and
#            round-trip tests and the CRC-32C test run under qemu-user (TERSE_TEST_SCALE,
#            default 0.2); only those tests and what they start are built. Not in the default
#            list; needs scripts/deps.sh aarch64
# Every configuration builds with TERSE_WERROR=ON: a new warning fails CI.
# Usage: scripts/test.sh [format|release|tsan|asan|aarch64]...   (default: the first four)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
for config in "$@"; do
  if [[ $config == aarch64 ]]; then scripts/deps.sh aarch64; fi
done
jobs=$(nproc)
configs=("$@")
((${#configs[@]})) || configs=(format release tsan asan)
fuzz_seconds=${TERSE_FUZZ_SECONDS:-30}

for config in "${configs[@]}"; do
  echo "=== $config"
  case $config in
    format)
      scripts/format.sh --check
      ;;
    release)
      cmake -S . -B build/ci-release -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=g++ \
        -DTERSE_TESTS=ON -DTERSE_BENCH=ON -DTERSE_WERROR=ON >/dev/null
      cmake --build build/ci-release -j"$jobs"
      ctest --test-dir build/ci-release -j2 --output-on-failure
      ;;
    tsan)
      cmake -S . -B build/ci-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
        -DTERSE_SANITIZE=thread -DTERSE_TESTS=ON -DTERSE_BENCH=OFF -DTERSE_WERROR=ON >/dev/null
      cmake --build build/ci-tsan -j"$jobs"
      TERSE_TEST_SCALE=${TERSE_TEST_SCALE:-0.1} TSAN_OPTIONS=halt_on_error=1 \
        ctest --test-dir build/ci-tsan -j2 --output-on-failure -L "concurrency|roundtrip"
      ;;
    asan)
      cmake -S . -B build/ci-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
        -DTERSE_SANITIZE=address,undefined -DTERSE_FUZZ=ON -DTERSE_FUZZ_SECONDS="$fuzz_seconds" \
        -DTERSE_TESTS=ON -DTERSE_BENCH=OFF -DTERSE_WERROR=ON >/dev/null
      cmake --build build/ci-asan -j"$jobs"
      TERSE_TEST_SCALE=${TERSE_TEST_SCALE:-0.2} ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        ctest --test-dir build/ci-asan -j2 --output-on-failure -L "decoder|fuzz|files|cli|ship|sinks|control"
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
      mapfile -t tests < <(ctest --test-dir build/ci-aarch64 -N -L "$selection" | sed -n 's/^ *Test *#[0-9]*: //p')
      tests+=(files_crc_test)
      cmake --build build/ci-aarch64 -j"$jobs" --target "${tests[@]}"
      TERSE_TEST_SCALE=${TERSE_TEST_SCALE:-0.2} ctest --test-dir build/ci-aarch64 -j2 --output-on-failure \
        -R "^($(IFS='|'; echo "${tests[*]}"))\$"
      ;;
    *)
      echo "unknown configuration '$config' (format, release, tsan, asan, aarch64)" >&2
      exit 2
      ;;
  esac
done
echo "=== all tests passed: ${configs[*]}"
