#!/usr/bin/env bash
# Quick start, part two: build every configuration and run every test.
#   format   the tree follows .clang-format (clang-format-14)
#   release  all tests (and the benchmarks compiled, not run)
#   clang    the same with Clang (libstdc++), benchmarks included: what GCC
#            accepts and Clang warns about fails here
#   tsan     the concurrency tests under ThreadSanitizer
#   asan     decoder, file, CLI, ship, console, levels and rate-limit tests and the fuzz corpus under
#            AddressSanitizer + UBSan
#            (ship's record counts scaled by TERSE_TEST_SCALE, default 0.2), then a short
#            libFuzzer run (TERSE_FUZZ_SECONDS, default 30)
# Every configuration builds with TERSE_WERROR=ON: a new warning fails CI.
# Usage: scripts/test.sh [format|release|clang|tsan|asan]...   (default: format release tsan asan)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
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
    clang)
      cmake -S . -B build/ci-clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
        -DTERSE_TESTS=ON -DTERSE_BENCH=ON -DTERSE_WERROR=ON >/dev/null
      cmake --build build/ci-clang -j"$jobs"
      ctest --test-dir build/ci-clang -j2 --output-on-failure
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
    *)
      echo "unknown configuration '$config' (format, release, clang, tsan, asan)" >&2
      exit 2
      ;;
  esac
done
echo "=== all tests passed: ${configs[*]}"
