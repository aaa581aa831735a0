#!/usr/bin/env bash
# `terse ship --once` against a slow broker: librdkafka's mock cluster (one
# broker, in a process of its own) answering every request RTT ms late. For
# each setup, the rate and the CPU time ship used, with ship's defaults
# (idempotent producer) and with the -X settings the man page gives for a
# slow broker. Writes bench/results/ship_slow_broker.md.
#
#   bench/ship_slow_broker.sh
#
# Environment:
#   TERSE_BENCH_SHIP_BUILD  a build directory with terse, terse_mock_kafka and
#                           terse_live_writer built (default: build at the repository root)
#   TERSE_BENCH_RTT_MS      the broker's round trip (default 100)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TERSE_BENCH_SHIP_BUILD:-$root/build}
rtt=${TERSE_BENCH_RTT_MS:-100}
work=$build/ship-slow-raw
terse=$build/terse
mock=$build/tests/ship/terse_mock_kafka
writer=$build/tests/cli/terse_live_writer
for program in "$terse" "$mock" "$writer"; do
  [ -x "$program" ] || { echo "bench/ship_slow_broker.sh: $program is not built" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "bench/ship_slow_broker.sh: needs /usr/bin/time (Debian: time)" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"
pipelined=(-X enable.idempotence=false -X max.in.flight.requests.per.connection=5)

# One run: PARTITIONS RECORDS then ship's options; prints a table row.
run() {
  local partitions=$1 records=$2
  shift 2
  [ -d "$work/logs-$records" ] || "$writer" "$work/logs-$records" app mix "$records"
  coproc MOCK { exec "$mock" --brokers 1 --topic logs --partitions "$partitions"; }
  local word bootstrap ok
  read -r word bootstrap <&"${MOCK[0]}"
  echo "rtt 1 $rtt" >&"${MOCK[1]}"
  read -r ok <&"${MOCK[0]}"
  rm -f "$work/cursor" "$work/cursor.lock"
  /usr/bin/time -f "cpu=%U+%S wall=%e" -o "$work/time" "$terse" ship --once --brokers "$bootstrap" --topic logs \
    --cursor-file "$work/cursor" --stats-interval 3600 "$@" "$work/logs-$records" 2>"$work/ship.err" ||
    { cat "$work/ship.err" >&2; exit 1; }
  echo quit >&"${MOCK[1]}"
  wait "$MOCK_PID" 2>/dev/null || true
  awk -v n="$records" -v p="$partitions" -v opts="$*" '
    { split($1, c, "[=+]"); split($2, w, "=") }
    END { printf "| %d | %d | %s | %.0f | %.2f | %.1f |\n", p, n, opts == "" ? "(defaults)" : opts, n / w[2], c[2] + c[3], w[2] }' \
    "$work/time"
}

{
  echo "# terse ship against a slow broker"
  echo
  echo "Taken $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)."
  echo "Produced by \`bench/ship_slow_broker.sh\`: \`terse ship --once\` over a backlog, against"
  echo "librdkafka's mock cluster with one broker that answers every request ${rtt} ms late."
  echo "CPU is what ship's process used (user + system), all threads; nothing is pinned, so a"
  echo "busy machine lowers the CPU figures of a spinning thread and the rates alike."
  echo
  echo "With the idempotent producer (ship's default) librdkafka keeps one produce request in flight"
  echo "per partition and, while ship is behind, its broker thread polls without sleeping until the"
  echo "answer comes (\`strace -c\` counts thousands of \`poll(…, 0)\` a second against a few requests sent)."
  echo
  echo "| partitions | records | options | records/s | CPU s | wall s |"
  echo "|---:|---:|---|---:|---:|---:|"
  run 1 20000 --batch-records 100
  run 1 20000 --batch-records 100 "${pipelined[@]}"
  run 2 100000
  run 2 100000 "${pipelined[@]}"
} >"$work/table.md"
mkdir -p "$root/bench/results"
cp "$work/table.md" "$root/bench/results/ship_slow_broker.md"
rm -rf "$work"
cat "$root/bench/results/ship_slow_broker.md"
