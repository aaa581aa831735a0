#!/usr/bin/env bash
# What sealing costs (README "Sealed logs", FORMAT.md §11): the same records
# written plain and sealed (Config::encrypt_to), alternating in one run, for
# the IO threads' CPU per million records and the bytes per record; then
# `terse cat` reading both back, alternating, for lines per second. Writes
# bench/results/sealed.md. The calling thread does the same work either way
# (sealing is the writer thread's), which bench/run.sh's latency harness covers.
#
# Usage: bench/sealed.sh
#   TERSE_BENCH_BUILD     build directory (default build-bench, Release)
#   TERSE_BENCH_MILLIONS  canonical records per write run, in millions (default 2)
#   TERSE_BENCH_REPS      runs of each, alternating (default 5)
#   TERSE_BENCH_DECODE_MILLIONS  canonical records read back, in millions (default 5)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TERSE_BENCH_BUILD:-$root/build-bench}
millions=${TERSE_BENCH_MILLIONS:-2}
reps=${TERSE_BENCH_REPS:-5}
decode_millions=${TERSE_BENCH_DECODE_MILLIONS:-5}
out=$root/bench/results/sealed.md

die() {
  echo "bench/sealed.sh: $*" >&2
  exit 1
}

echo "== build (Release) in $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTERSE_TESTS=OFF -DTERSE_BENCH=ON >/dev/null ||
  die "cmake configure failed"
cmake --build "$build" -j "$(nproc)" --target terse_bench_throughput terse_cli >/dev/null || die "build failed"
bin=$build/bench
terse=$build/terse

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$terse" keygen -C "bench key" "$work/key" >/dev/null
export TERSE_BENCH_SEAL_KEY=$work/key.pub

records=$(awk -v m="$millions" 'BEGIN { printf "%d", m * 1e6 }')
json_records=$((records / 16))
# CSV of the throughput child: run,logger,threads,records,seconds,records/s,disk,B/record,RSS,IO ms,IO ms/M,...
echo "== writing: $records canonical and $json_records JSON-heavy records, plain and sealed, $reps runs each"
for ((rep = 1; rep <= reps; rep++)); do
  for logger in terse terse-sealed; do
    "$bin/terse_bench_throughput" --child "$logger" canonical "$records" >>"$work/write.csv"
    "$bin/terse_bench_throughput" --child "$logger" "1 thread 1/3 4 KiB JSON" "$json_records" >>"$work/write.csv"
  done
done

decode_records=$(awk -v m="$decode_millions" 'BEGIN { printf "%d", m * 1e6 }')
echo "== reading: $decode_records canonical records with terse cat, plain and sealed, $reps runs each"
"$bin/terse_bench_throughput" --child terse canonical "$decode_records" --keep "$work/plain" >/dev/null
"$bin/terse_bench_throughput" --child terse-sealed canonical "$decode_records" --keep "$work/sealed" >/dev/null
TIMEFORMAT='%R'
for ((rep = 1; rep <= reps; rep++)); do
  for kind in plain sealed; do
    for threads in 1 0; do
      key=()
      [[ $kind == sealed ]] && key=(--key "$work/key")
      seconds=$({ time "$terse" cat "${key[@]}" --threads "$threads" -o cat "$work/$kind" >/dev/null; } 2>&1)
      echo "decode,$kind,$threads,$seconds" >>"$work/read.csv"
    done
  done
done
plain_lines=$("$terse" cat -o cat "$work/plain" | wc -l)
sealed_lines=$("$terse" cat --key "$work/key" -o cat "$work/sealed" | wc -l)
[[ $sealed_lines -eq $plain_lines ]] || die "the sealed files read back $sealed_lines lines, the plain ones $plain_lines"

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
{
  echo "# What sealing costs"
  echo
  echo "\`bench/sealed.sh\` on $(nproc) CPUs ($cpu), $(date -u +%Y-%m-%d), commit $(git -C "$root" rev-parse --short HEAD)."
  echo "The same records written plain and sealed (\`Config::encrypt_to\`), $reps runs each, alternating;"
  echo "medians, with the run-by-run range of sealed/plain. Bytes are whole files on disk."
  echo
  echo "| records | | plain | sealed | sealed/plain | range |"
  echo "|---|---|---:|---:|---:|---:|"
  awk -F, '
    function median(list, n,   sorted, i, j, t) {
      for (i = 1; i <= n; i++) sorted[i] = list[i]
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (sorted[j] < sorted[i]) { t = sorted[i]; sorted[i] = sorted[j]; sorted[j] = t }
      return n % 2 ? sorted[(n + 1) / 2] : (sorted[n / 2] + sorted[n / 2 + 1]) / 2
    }
    /^throughput,/ {
      run = $2; kind = ($3 == "terse-sealed") ? "sealed" : "plain"
      k = run SUBSEP kind
      n[k]++; io[k, n[k]] = $12; bpr[k, n[k]] = $8 / $5; rate[k, n[k]] = $7
      runs[run] = 1
    }
    END {
      for (run in runs) {
        p = run SUBSEP "plain"; s = run SUBSEP "sealed"
        m = (n[p] < n[s]) ? n[p] : n[s]
        for (what = 1; what <= 3; what++) {
          lo = 1e30; hi = 0
          for (i = 1; i <= m; i++) {
            a = (what == 1) ? io[p, i] : (what == 2) ? bpr[p, i] : rate[p, i]
            b = (what == 1) ? io[s, i] : (what == 2) ? bpr[s, i] : rate[s, i]
            pa[i] = a; sb[i] = b; r = (a > 0) ? b / a : 0
            if (r < lo) lo = r; if (r > hi) hi = r
          }
          ma = median(pa, m); mb = median(sb, m)
          label = (what == 1) ? "IO CPU, ms per million records" : (what == 2) ? "bytes per record" : "records/s"
          fmt = (what == 2) ? "| %s | %s | %.3f | %.3f | %.3f | %.3f–%.3f |\n" : "| %s | %s | %.1f | %.1f | %.3f | %.3f–%.3f |\n"
          printf fmt, run, label, ma, mb, (ma > 0 ? mb / ma : 0), lo, hi
        }
      }
    }' "$work/write.csv"
  echo
  echo "Reading $decode_records canonical records back with \`terse cat -o cat\` (sealed: \`--key\`), lines per second:"
  echo
  echo "| threads | plain | sealed | sealed/plain |"
  echo "|---|---:|---:|---:|"
  awk -F, -v records="$decode_records" '
    function median(list, n,   sorted, i, j, t) {
      for (i = 1; i <= n; i++) sorted[i] = list[i]
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (sorted[j] < sorted[i]) { t = sorted[i]; sorted[i] = sorted[j]; sorted[j] = t }
      return n % 2 ? sorted[(n + 1) / 2] : (sorted[n / 2] + sorted[n / 2 + 1]) / 2
    }
    /^decode,/ { k = $2 SUBSEP $3; n[k]++; t[k, n[k]] = $4 }
    END {
      for (threads = 1; threads >= 0; threads--) {
        p = "plain" SUBSEP threads; s = "sealed" SUBSEP threads
        for (i = 1; i <= n[p]; i++) a[i] = t[p, i]
        for (i = 1; i <= n[s]; i++) b[i] = t[s, i]
        lp = records / median(a, n[p]); ls = records / median(b, n[s])
        printf "| %s | %.2f M | %.2f M | %.3f |\n", (threads ? "1" : "all"), lp / 1e6, ls / 1e6, ls / lp
      }
    }' "$work/read.csv"
} >"$out"
cat "$out"
