#!/usr/bin/env bash
# Quick start, part one: build terse, run the demo app, print its log back.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
cmake -S . -B build/demo -DCMAKE_BUILD_TYPE=Release -DTERSE_TESTS=OFF -DTERSE_BENCH=OFF >/dev/null
cmake --build build/demo -j"$(nproc)" --target terse_demo terse_cli
rm -rf build/demo/logs
echo "--- the demo's console as it runs (warn and above; TERSE_CONSOLE=json or =off changes it)"
build/demo/terse_demo build/demo/logs
echo "--- terse cat build/demo/logs (first and last lines of $(build/demo/terse cat build/demo/logs | wc -l) records)"
build/demo/terse cat build/demo/logs | head -n 8
echo "..."
build/demo/terse cat build/demo/logs | tail -n 4
echo "--- terse cat --json --level warn build/demo/logs | head -n 2"
build/demo/terse cat --json --level warn build/demo/logs | head -n 2
echo "--- terse verify build/demo/logs"
build/demo/terse verify build/demo/logs
