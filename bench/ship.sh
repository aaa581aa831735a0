#!/usr/bin/env bash
# How fast `terse ship` delivers, on one core, against librdkafka's mock
# cluster (2 partitions) running in a process of its own on another core;
# beside it, `terse cat -o json` on the same core and files, the cost of
# decoding and rendering alone. Writes bench/results/ship.md.
#
#   bench/ship.sh
#
# Environment:
#   TERSE_BENCH_SHIP_BUILD  build directory (default: build-bench-ship at the repository root)
#   TERSE_BENCH_MILLIONS    records to ship, in millions (default 2)
#   TERSE_BENCH_REPS        runs of each, the median is reported (default 3)
#
# Needs two cores, cmake, a C++20 compiler, taskset (util-linux) and the Debian
# packages of the build (librdkafka-dev among them) and of the tests (catch2):
# the mock cluster and the log writer are test programs.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TERSE_BENCH_SHIP_BUILD:-$root/build-bench-ship}
millions=${TERSE_BENCH_MILLIONS:-2}
reps=${TERSE_BENCH_REPS:-3}
results=$root/bench/results
work=$build/ship-raw

die() {
  echo "bench/ship.sh: $*" >&2
  exit 1
}
command -v taskset >/dev/null || die "'taskset' not found (Debian: util-linux)"
(($(nproc) >= 2)) || die "needs two cores: one for terse ship, one for the mock cluster"

echo "== build (Release) in $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTERSE_TESTS=ON -DTERSE_BENCH=OFF >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log" >&2; die "cmake configure failed"; }
rm -f "$build.configure.log"
cmake --build "$build" -j "$(nproc)" --target terse_cli terse_mock_kafka terse_live_writer >/dev/null ||
  die "build failed; run: cmake --build $build --target terse_cli terse_mock_kafka terse_live_writer"
terse=$build/terse
mock=$build/tests/ship/terse_mock_kafka
writer=$build/tests/cli/terse_live_writer
[ -x "$mock" ] || die "terse_mock_kafka was not built: is librdkafka-dev installed?"

rm -rf "$work"
mkdir -p "$work" "$results"
records=$((millions * 1000000))
echo "== writing $records records (100 call sites, as tests/cli/live_writer's mix)"
"$writer" "$work/logs" app mix "$records"

now_ns() { date +%s%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "== terse cat -o json, one core"
: >"$work/cat.rates"
for ((i = 0; i < reps; i++)); do
  start=$(now_ns)
  taskset -c 0 "$terse" cat -o json "$work/logs" >/dev/null
  end=$(now_ns)
  awk -v n="$records" -v ns=$((end - start)) 'BEGIN { printf "%.0f\n", n / (ns / 1e9) }' >>"$work/cat.rates"
done
json_bytes=$("$terse" cat -o json "$work/logs" | wc -c)

echo "== terse ship, one core (mock cluster on another)"
coproc MOCK { exec taskset -c 1 "$mock" --brokers 1 --topic logs --partitions 2; }
read -r word bootstrap <&"${MOCK[0]}" || die "the mock cluster did not start"
[ "$word" = BOOTSTRAP ] || die "the mock cluster said '$word $bootstrap'"
: >"$work/ship.rates"
: >"$work/ship.rss"
for ((i = 0; i < reps; i++)); do
  rm -f "$work/cursor" "$work/cursor.lock"
  start=$(now_ns)
  taskset -c 0 "$terse" ship --once --brokers "$bootstrap" --topic logs --cursor-file "$work/cursor" \
    --stats-interval 3600 "$work/logs" 2>"$work/ship.err" || { cat "$work/ship.err" >&2; die "terse ship failed"; }
  end=$(now_ns)
  shipped=$(awk -F'records=' '/records=/ { split($2, f, " "); n = f[1] } END { print n }' "$work/ship.err")
  [ "$shipped" = "$records" ] || { cat "$work/ship.err" >&2; die "shipped $shipped of $records records"; }
  awk -v n="$records" -v ns=$((end - start)) 'BEGIN { printf "%.0f\n", n / (ns / 1e9) }' >>"$work/ship.rates"
  awk -F'peak_rss_mib=' '/peak_rss_mib=/ { split($2, f, " "); v = f[1] } END { print v }' "$work/ship.err" >>"$work/ship.rss"
done
echo quit >&"${MOCK[1]}"
wait "$MOCK_PID" 2>/dev/null || true

cat_rate=$(median <"$work/cat.rates")
ship_rate=$(median <"$work/ship.rates")
ship_rss=$(median <"$work/ship.rss")
model=$(awk -F: '/^model name/ { sub(/^[ \t]+/, "", $2); print $2; exit }' /proc/cpuinfo)
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ]; then commit="$commit (with local changes)"; fi
{
  echo "# terse ship: benchmark results"
  echo
  echo "Taken $(date -u '+%Y-%m-%d %H:%M UTC') on ${model:-unknown CPU}; commit $commit. Produced by \`bench/ship.sh\`."
  echo
  echo "$records records of 100 call sites ($((json_bytes / records)) bytes of JSON each on average), shipped with the"
  echo "defaults (zstd, batches of up to 1024 records, idempotent producer, acks from all replicas)"
  echo "to librdkafka's mock cluster: one broker, 2 partitions, in its own process on core 1."
  echo "\`terse ship --once\` runs on core 0, all its threads (librdkafka's included) sharing it;"
  echo "the clock runs from start to exit, so it covers connecting and waiting for the last"
  echo "acknowledgement. Median of $reps runs."
  echo
  echo "| | records/s | peak RSS MiB |"
  echo "|---|---:|---:|"
  echo "| terse cat -o json > /dev/null (decode and render only) | $(awk -v r="$cat_rate" 'BEGIN { printf "%.0f", r }') | |"
  echo "| terse ship --once | $(awk -v r="$ship_rate" 'BEGIN { printf "%.0f", r }') | $ship_rss |"
  echo
  echo "terse ship delivers at $(awk -v a="$ship_rate" -v b="$cat_rate" 'BEGIN { printf "%.2f", a / b }')× the rate at which \`terse cat\` only prints."
  echo "Every run: $(paste -sd' ' "$work/ship.rates") records/s (ship), $(paste -sd' ' "$work/cat.rates") (cat)."
} >"$results/ship.md"
rm -rf "$work/logs"
cat "$results/ship.md"
