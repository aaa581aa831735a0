#!/usr/bin/env bash
# Builds the benchmark suite (Release, in its own build directory) and runs
# all of it: micro-benchmarks, per-call latency, bursts of 20, throughput with its four
# scenarios, decoder speed, the console's rendering rate, and the A/B against a previous
# build of terse (bench/ab.sh). Writes bench/results/results.md and
# bench/results/latency.svg; the raw CSV stays in the build directory.
#
#   bench/run.sh
#
# Environment:
#   TERSE_BENCH_BUILD     build directory (default: build-bench at the repository root)
#   TERSE_BENCH_MILLIONS  records per throughput run, in millions (default 2)
#   TERSE_BENCH_CALLS     timed calls per producer in the latency harness (default 400000)
#   TERSE_BENCH_REPS      repetitions for micro-benchmarks and decoder runs (default 3)
#   TERSE_BENCH_DECODE_MILLIONS  canonical records the decoder reads, in millions (default 10)
#   TERSE_BENCH_BURST_SAMPLES  bursts of 20 per logger in the latency harness (default 10000,
#                         about 30 s a logger)
#   TERSE_BENCH_AB_REF    the previous builds for the A/B, space-separated (default: the commits
#                         bench/BASELINE lists), one A/B table each; their builds are cached in
#                         the build directory, so only the first run pays for them
#
# Installs nothing: it needs cmake, a C++20 compiler, gnuplot (Debian
# gnuplot-nox) and the Debian packages libbenchmark-dev, libspdlog-dev,
# libfmt-dev, libzstd-dev, libcli11-dev and libboost-dev.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TERSE_BENCH_BUILD:-$root/build-bench}
millions=${TERSE_BENCH_MILLIONS:-2}
calls=${TERSE_BENCH_CALLS:-400000}
reps=${TERSE_BENCH_REPS:-3}
decode_millions=${TERSE_BENCH_DECODE_MILLIONS:-10}
burst_samples=${TERSE_BENCH_BURST_SAMPLES:-10000}
ab_ref=${TERSE_BENCH_AB_REF:-}
results=$root/bench/results
raw=$build/bench-raw

die() {
  echo "bench/run.sh: $*" >&2
  exit 1
}

for tool in cmake c++ gnuplot awk; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found; install it first (Debian: cmake g++ gnuplot-nox gawk)"
done

started=$(date +%s)
echo "== build (Release) in $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTERSE_TESTS=OFF -DTERSE_BENCH=ON >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log" >&2; die "cmake configure failed (missing libbenchmark-dev, libspdlog-dev, libfmt-dev, libzstd-dev, libcli11-dev or libboost-dev?)"; }
rm -f "$build.configure.log"
cmake --build "$build" -j "$(nproc)" --target terse_bench_micro terse_bench_latency terse_bench_throughput \
  terse_bench_latency_shared terse_bench_decode terse_bench_console terse_bench_threads terse_bench_follow \
  terse_cli >/dev/null || die "build failed; run: cmake --build $build"

rm -rf "$raw"
mkdir -p "$raw" "$results"
bin=$build/bench

echo "== micro-benchmarks (median of $reps)"
"$bin/terse_bench_micro" --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
  --benchmark_min_time=0.1 --benchmark_out="$raw/micro.csv" --benchmark_out_format=csv

echo "== latency"
"$bin/terse_bench_latency" --calls "$calls" --csv "$raw/latency.csv"
echo "== latency, bursts of 20 ($burst_samples per logger)"
"$bin/terse_bench_latency" --mode burst20 --samples "$burst_samples" --csv "$raw/burst20.csv"
echo "== latency, linked to libterse.so"
"$bin/terse_bench_latency_shared" --calls "$calls" --csv "$raw/latency_shared.csv"

echo "== throughput ($millions million records)"
"$bin/terse_bench_throughput" --millions "$millions" --csv "$raw/throughput.csv"

echo "== decoder ($decode_millions million canonical records)"
mkdir -p "$raw/terse-logs"
decode_records=$(awk -v m="$decode_millions" 'BEGIN { printf "%d", m * 1e6 }')
"$bin/terse_bench_throughput" --child terse canonical "$decode_records" --keep "$raw/terse-logs" >/dev/null ||
  die "writing the decoder's input failed"
"$bin/terse_bench_decode" --cli "$build/terse" --dir "$raw/terse-logs" --reps "$reps" --csv "$raw/decode.csv"
rm -rf "$raw/terse-logs"

echo "== many threads"
"$bin/terse_bench_threads" --csv "$raw/threads.csv"

echo "== live records"
"$bin/terse_bench_follow" --cli "$build/terse" --csv "$raw/follow.csv"

echo "== console"
"$bin/terse_bench_console" --cli "$build/terse" --millions "$millions" --reps "$reps" --csv "$raw/console.csv"

# Last, and alone: a few minutes of single calls, bursts and throughput, A and B alternating.
if [[ -z $ab_ref && -f $root/bench/BASELINE ]]; then
  ab_ref=$(awk '!/^[[:space:]]*(#|$)/ { printf "%s ", $1 }' "$root/bench/BASELINE")
fi
: >"$raw/ab.md"
for ref in ${ab_ref:-HEAD}; do
  echo "== A/B against $ref (bench/ab.sh, $reps runs a side)"
  # A failed A/B (no git history, a REF that does not build) costs its section, not the report.
  if ! TERSE_BENCH_BUILD=$build "$root/bench/ab.sh" --ref "$ref" --reps "$reps" --out "$raw/ab-one.md"; then
    echo "bench/run.sh: the A/B against $ref failed (above); the report says so" >&2
    # shellcheck disable=SC2016  # the backquotes are markdown
    printf '## A/B against %s\n\nNot run: `bench/ab.sh --ref %s` failed; run it alone to see why.\n' "$ref" "$ref" \
      >"$raw/ab-one.md"
  fi
  cat "$raw/ab-one.md" >>"$raw/ab.md"
  echo >>"$raw/ab.md"
done

# ---- the report ---------------------------------------------------------------

model=$(awk -F: '/^model name/ { sub(/^[ \t]+/, "", $2); print $2; exit }' /proc/cpuinfo)
cores=$(nproc)
online=$(grep -c '^processor' /proc/cpuinfo || true)
kernel=$(uname -sr)
when=$(date -u '+%Y-%m-%d %H:%M UTC')
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ]; then commit="$commit (with local changes)"; fi

{
  echo "# terse benchmark results"
  echo
  echo "Taken $when on ${model:-unknown CPU}, $cores of $online cores usable, $kernel; commit $commit."
  echo "Produced by \`bench/run.sh\`; every figure comes from the same run. Ratios say how many times"
  echo "better terse is: baseline ÷ terse for times, bytes and CPU, terse ÷ baseline for rates."
  echo

  awk -F, '
    /^calibration,tsc_step_ns,/ { step = $3 }
    /^latency,/ { v[$2, $3] = $0; if (!(($2) in seenp)) { seenp[$2] = 1; ps[++np] = $2 } }
    function cell(line, k,   f) { split(line, f, ","); return f[k + 3] }
    END {
      split("p50,p90,p99,p99.9,p99.99,max", names, ",")
      print "## Latency of one call, ns (TSC, timing cost included)"
      print ""
      print "Bursts of 20 calls with a short spin between them, producers pinned. The empty timed"
      print "region (two fenced TSC reads) costs " cell(v[1, "empty-timed-region"], 1) " ns at the median here."
      if (step >= 2)
        print "The TSC advances in steps of " step " ns on this machine, so every figure is a multiple of that."
      for (i = 1; i <= np; i++) {
        p = ps[i]
        print ""
        print "**" p " producer" (p > 1 ? "s" : "") "**"
        print ""
        print "| | terse | spdlog async | × | fprintf 40 KiB | × | fmt::format_to | × |"
        print "|---|---:|---:|---:|---:|---:|---:|---:|"
        for (k = 1; k <= 6; k++) {
          t = cell(v[p, "terse"], k)
          row = "| " names[k] " | " sprintf("%.0f", t)
          n = split("spdlog-async,fprintf-40k,fmt::format_to", others, ",")
          for (o = 1; o <= n; o++) {
            b = cell(v[p, others[o]], k)
            row = row " | " sprintf("%.0f", b) " | " (t > 0 ? sprintf("%.1f", b / t) : "–")
          }
          print row " |"
        }
      }
      print ""
    }' "$raw/latency.csv"

  awk -F, -v samples="$burst_samples" '
    /^burst20,/ { v[$3] = $0 }
    function cell(line, k,   f) { split(line, f, ","); return f[k + 3] }
    END {
      split("p50,p90,p99,p99.9,p99.99,max", names, ",")
      print "## Bursts of 20, ns per call"
      print ""
      print "The method of the third-party logger_benchmarks suite, whose tables other loggers publish:"
      print "20 back-to-back calls timed together (`rdtscp` at both ends) and divided by 20, then a random"
      print "1.7–4 ms busy wait; " samples " bursts, one pinned producer. The timing cost is shared among"
      print "the 20 calls, so these figures sit below the single calls above."
      print ""
      print "| | terse | spdlog async | × | fprintf 40 KiB | × | fmt::format_to | × |"
      print "|---|---:|---:|---:|---:|---:|---:|---:|"
      for (k = 1; k <= 6; k++) {
        t = cell(v["terse"], k)
        row = "| " names[k] " | " sprintf("%.0f", t)
        n = split("spdlog-async,fprintf-40k,fmt::format_to", others, ",")
        for (o = 1; o <= n; o++) {
          b = cell(v[others[o]], k)
          row = row " | " sprintf("%.0f", b) " | " (t > 0 ? sprintf("%.1f", b / t) : "–")
        }
        print row " |"
      }
      print ""
    }' "$raw/burst20.csv"

  cat "$raw/ab.md"
  echo

  awk -F, '
    /^latency,/ { v[$2, $3] = $0; if (!(($2) in seenp)) { seenp[$2] = 1; ps[++np] = $2 } }
    function cell(line, k,   f) { split(line, f, ","); return f[k + 3] }
    END {
      split("p50,p90,p99,p99.9,p99.99,max", names, ",")
      print "## The console on: latency of one call, ns"
      print ""
      print "The same harness, terse with `Config::console = text` to /dev/null beside terse without:"
      print "the console renders on terse'"'"'s threads, so the call should not see it."
      print ""
      print "| | 1 producer | console on | 2 producers | console on |"
      print "|---|---:|---:|---:|---:|"
      for (k = 1; k <= 6; k++) {
        row = "| " names[k]
        for (i = 1; i <= np; i++) {
          p = ps[i]
          row = row " | " sprintf("%.0f", cell(v[p, "terse"], k)) " | " sprintf("%.0f", cell(v[p, "terse+console"], k))
        }
        print row " |"
      }
      print ""
    }' "$raw/latency.csv"

  awk -F, '
    /^latency,/ && $3 ~ /^terse/ { v[$2, $3] = $0; if (!(($2) in seenp)) { seenp[$2] = 1; ps[++np] = $2 } }
    function cell(line, k,   f) { split(line, f, ","); return f[k + 3] }
    END {
      split("p50,p90,p99,p99.9,p99.99,max", names, ",")
      print "## The shared build: latency of one call, ns"
      print ""
      print "The same harness linked to libterse.so: the call in the program, and in a shared library"
      print "(its thread-local access goes through __tls_get_addr)."
      for (i = 1; i <= np; i++) {
        p = ps[i]
        print ""
        print "**" p " producer" (p > 1 ? "s" : "") "**"
        print ""
        print "| | static | shared, in the program | shared, in a library |"
        print "|---|---:|---:|---:|"
        for (k = 1; k <= 6; k++) {
          row = "| " names[k]
          n = split("terse,terse-shared,terse-shared-in-lib", loggers, ",")
          for (o = 1; o <= n; o++) row = row " | " sprintf("%.0f", cell(v[p, loggers[o]], k))
          print row " |"
        }
      }
      print ""
    }' "$raw/latency.csv" "$raw/latency_shared.csv"

  awk -F, '
    # Google Benchmark CSV: name,iterations,real_time,cpu_time,time_unit,...
    $1 ~ /_median"?$/ {
      name = $1; gsub(/"/, "", name); sub(/_median$/, "", name)
      split(name, parts, "/"); c = parts[1]; l = parts[2]
      if (!(c in seen)) { seen[c] = 1; cases[++nc] = c }
      t[c, l] = $3; unit = $5
    }
    END {
      print "## Micro-benchmarks: one call in a loop, ns (wall time, median of the repetitions)"
      print ""
      print "The loggers run for real, so a call that outruns its IO thread waits: this is the sustained"
      print "cost per call. fmt::format_to into memory is the floor for formatting at the call site."
      print ""
      print "| case | terse | fmt::format_to | × | spdlog async | × |"
      print "|---|---:|---:|---:|---:|---:|"
      for (i = 1; i <= nc; i++) {
        c = cases[i]; if (c == "kind") continue
        a = t[c, "terse"]; f = t[c, "fmt_format_to"]; s = t[c, "spdlog_async"]
        printf "| %s | %.1f | %.1f | %.2f | %.1f | %.1f |\n", c, a, f, f / a, s, s / a
      }
      if (unit != "ns") print "\n(time unit: " unit ")"
      print ""
      print "## What a call costs by what becomes of it, ns (the same loop)"
      print ""
      print "`counters {} {} {}` with three ints: written at info; disabled (a debug call at info, which"
      print "its call site'"'"'s gate turns away), beside the check every call made before levels per"
      print "module (one global level loaded and compared); suppressed by a rate limit past the site'"'"'s"
      print "first record (`TERSE_LOG_EVERY_N`, `TERSE_LOG_FIRST_N`, `TERSE_LOG_EVERY`); recorded by the"
      print "flight recorder and not written (`flight_level` debug, a debug call, no trigger); written"
      print "inside a `terse::Context`; and a context created and ended (its push and pop records)."
      print ""
      print "| call | ns | × written |"
      print "|---|---:|---:|"
      nk = split("written,recorded,with_context,context_push_pop,disabled,disabled_global_check,suppressed_every_n,suppressed_first_n,suppressed_every", kinds, ",")
      for (k = 1; k <= nk; k++) {
        v = t["kind", kinds[k]]
        if (v != "") printf "| %s | %.2f | %.3f |\n", kinds[k], v, v / t["kind", "written"]
      }
      print ""
    }' "$raw/micro.csv"

  awk -F, -v millions="$millions" '
    /^throughput,/ && $3 != "terse-pinned" {
      run = $2; logger = $3
      if (!(run in seen)) { seen[run] = 1; runs[++nr] = run }
      n[run]++; order[run, n[run]] = logger
      rate[run, logger] = $7; bpr[run, logger] = $9; rss[run, logger] = $10
      io[run, logger] = $12; p99[run, logger] = $13; zstd[run, logger] = $14; records[run] = $5; threads[run] = $4
    }
    function ratio(a, b) { return (a > 0 && b > 0) ? sprintf("%.1f", a / b) : "–" }
    function or_dash(x, fmt) { return x == "" ? "–" : sprintf(fmt, x) }
    END {
      r = "canonical"
      print "## Throughput until flushed: canonical record, one producer"
      print ""
      print "`request {} took {} us status {} path {}` with int, double, int and a short string, " records[r] " records"
      print "as fast as one thread can log them; the clock stops when the logger'"'"'s flush returns. IO CPU is"
      print "the CPU time of the logger'"'"'s own threads (terse-io + terse-write, spdlog'"'"'s worker)."
      print ""
      print "| logger | records/s | terse × | bytes/record | terse × | peak RSS MiB | IO CPU ms per M records | terse × |"
      print "|---|---:|---:|---:|---:|---:|---:|---:|"
      for (i = 1; i <= n[r]; i++) {
        l = order[r, i]
        printf "| %s | %.2f M | %s | %s | %s | %.1f | %s | %s |\n", l, rate[r, l] / 1e6, \
          (l == "terse" ? "" : ratio(rate[r, "terse"], rate[r, l])), \
          (bpr[r, l] > 0 ? sprintf("%.2f", bpr[r, l]) : "– (memory)"), \
          (l == "terse" || bpr[r, l] == 0 ? "" : ratio(bpr[r, l], bpr[r, "terse"])), rss[r, l] / 1024, \
          or_dash(io[r, l], "%.1f"), (l == "terse" || io[r, l] == "" ? "" : ratio(io[r, l], io[r, "terse"]))
      }
      # The yardstick for bytes on disk: the same log as text, compressed whole.
      # spdlog'"'"'s text has time, level and logger name, as terse'"'"'s records do
      # (though its timestamps are whole milliseconds, terse'"'"'s are TSC ticks).
      l = "spdlog-async"
      if (zstd[r, l] != "")
        printf "\nspdlog'"'"'s text of the same records as one file compressed with zstd at its default level: %.2f bytes/record;" \
          " terse: %.2f, i.e. %s× the text+zstd size.\n", zstd[r, l], bpr[r, "terse"], ratio(bpr[r, "terse"], zstd[r, l])
      print ""
      print "## Scenarios"
      print ""
      print "One call in 16 is timed (unfenced TSC pair, included) for the p99. 4 KiB records are printable,"
      print "incompressible on their own, the same text in every record."
      print ""
      print "The last column is the same log as text (the baseline'"'"'s own file) compressed whole with zstd at"
      print "its default level, the yardstick for terse'"'"'s bytes on disk."
      print ""
      print "| scenario | records | logger | records/s | terse × | p99 ns | IO CPU ms per M | bytes/record | text+zstd bytes/record |"
      print "|---|---:|---|---:|---:|---:|---:|---:|---:|"
      for (j = 1; j <= nr; j++) {
        r = runs[j]
        if (r == "canonical") continue
        for (i = 1; i <= n[r]; i++) {
          l = order[r, i]
          printf "| %s | %s | %s | %.2f M | %s | %s | %s | %.1f | %s |\n", (i == 1 ? r : ""), (i == 1 ? records[r] : ""), l, \
            rate[r, l] / 1e6, (l == "terse" ? "" : ratio(rate[r, "terse"], rate[r, l])), or_dash(p99[r, l], "%.0f"), \
            or_dash(io[r, l], "%.1f"), bpr[r, l], or_dash(zstd[r, l], "%.2f")
        }
      }
      print ""
    }' "$raw/throughput.csv"

  awk -F, '
    /^throughput,canonical,terse-pinned,/ { rate[++n] = $7; bpr[n] = $9 }
    /^throughput,canonical,terse,/ { free = $7 }
    function sort(a, k,   i, j, t) { for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } }
    END {
      if (n == 0) exit
      print "## terse'"'"'s threads pinned (`Config::cpus`)"
      print ""
      print "The canonical run again, " n " times: the producer on the last CPU, terse'"'"'s threads"
      print "pinned to the first with `Config::cpus`, as low-latency users run a logger."
      print ""
      line = ""
      for (i = 1; i <= n; i++) { line = line (i > 1 ? ", " : "") sprintf("%.2f M", rate[i] / 1e6); r[i] = rate[i] }
      sort(r, n)
      printf "records/s until flushed, run by run: %s; median %.2f M, lowest %.2f M, highest %.2f M (unpinned, the run above: %.2f M).\n", \
        line, r[int((n + 1) / 2)] / 1e6, r[1] / 1e6, r[n] / 1e6, free / 1e6
      print ""
    }' "$raw/throughput.csv"

  awk -F, '
    /^latency,1,terse pinned,/ { split($0, p, ",") }
    /^latency,1,terse,/ { split($0, f, ",") }
    END {
      if (p[1] == "") exit
      print "Latency of one call with terse'"'"'s threads pinned (1 producer, the harness above), ns:"
      print ""
      print "| | pinned | not pinned |"
      print "|---|---:|---:|"
      split("p50,p90,p99,p99.9,p99.99,max", names, ",")
      for (k = 1; k <= 6; k++) printf "| %s | %.0f | %.0f |\n", names[k], p[k + 3], f[k + 3]
      print ""
    }' "$raw/latency.csv"

  awk -F, '
    /^threads,/ { key = $2 "," $3 "," $4 "," $5; secs[key] = $6; peak[key] = $7; after[key] = $8; first[key] = $9; later[key] = $10; keys[++n] = key }
    END {
      print "## Many threads"
      print ""
      print "Churn: 10,000 threads, 20 alive at a time, each logging one canonical record, against the same"
      print "threads logging nothing; the first call of a new thread beside its second (medians over the"
      print "threads). Then N threads alive at once, M records each: the process'"'"'s peak RSS, and its RSS once"
      print "the threads have exited."
      print ""
      c = "churn,terse,10000,1"; z = "churn,none,10000,1"
      printf "Churn: %.2f s with terse, %.2f s without; the first call %.1f us, a later one %.0f ns; peak RSS %.1f MiB.\n", \
        secs[c], secs[z], first[c] / 1000, later[c], peak[c] / 1024
      print ""
      print "| threads | records each | seconds | peak RSS MiB | RSS after they exit, MiB |"
      print "|---:|---:|---:|---:|---:|"
      for (i = 1; i <= n; i++) {
        split(keys[i], k, ",")
        if (k[1] != "many") continue
        printf "| %d | %d | %.2f | %.1f | %.1f |\n", k[3], k[4], secs[keys[i]], peak[keys[i]] / 1024, after[keys[i]] / 1024
      }
      print ""
      for (i = 1; i <= n; i++) {
        split(keys[i], k, ",")
        if (k[1] != "quiet") continue
        printf "Quiet: %d threads log %d records each, then stay alive without logging: peak RSS %.1f MiB, %.1f MiB\n", \
          k[3], k[4], peak[keys[i]] / 1024, after[keys[i]] / 1024
        print "2 s later (`Config::release_idle_after` is 1 s), the threads still alive."
        print ""
      }
    }' "$raw/threads.csv"

  awk -F, '
    /^follow,/ {
      print "## Live records"
      print ""
      printf "A writer logging one record every %d ms, followed by `terse cat -f`: from the call to its line on\n", $3
      printf "the follower'"'"'s stdout, over %d records: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms%s.\n", \
        $2, $4, $5, $6, $7, ($8 > 0 ? ", " $8 " never arrived" : "")
      print ""
    }' "$raw/follow.csv"

  awk -F, '
    /^decode,/ { rows[++n] = $0; lines = $3 }
    /^follow,/ { appends = $2; follow_median = $3; follow_max = $4 }
    END {
      print "## Decoder: " lines " canonical records read back"
      print ""
      print "`library-*`: the decoder library rendering into memory, on one thread; `cli-*`: the built"
      print "`terse cat` (and `terse cat --json`) writing to /dev/null, median wall time of the"
      print "repetitions, on every CPU (`cli-text`, `cli-json`) and with `--threads 1` (`-1`)."
      print ""
      print "| mode | lines | text MB | lines/s | MB/s | CPU s |"
      print "|---|---:|---:|---:|---:|---:|"
      for (i = 1; i <= n; i++) {
        split(rows[i], f, ",")
        printf "| %s | %d | %.1f | %.2f M | %.1f | %.3f |\n", f[2], f[3], f[4] / 1e6, f[6] / 1e6, f[7], f[8]
      }
      if (appends > 0)
        printf "\n`terse cat -f` alone: a records frame appended to a followed file shows on its stdout after %.1f ms at the median, %.1f ms at most (%d appends).\n", follow_median, follow_max, appends
      print ""
    }' "$raw/decode.csv"

  awk -F, '
    /^console,/ { rows[++n] = $0 }
    /^cli,/ { cli = $0 }
    END {
      print "## Console: rendering on terse'"'"'s threads against `terse cat`"
      print ""
      print "`Config::console = text` to /dev/null, one producer, canonical record (after a burst that"
      print "is not measured); the rate is lines per CPU-second of the view and console threads."
      print "Unpaced, the console shows what it keeps up with and counts the rest as not shown."
      print ""
      print "| run | records | records/s until flushed | shown | not shown | shown per CPU-s |"
      print "|---|---:|---:|---:|---:|---:|"
      for (i = 1; i <= n; i++) {
        split(rows[i], f, ",")
        rate = f[9] > 0 ? sprintf("%.2f M", f[9] / 1e6) : "–"
        printf "| %s | %d | %.2f M | %d | %d | %s |\n", f[2], f[3], f[5] / 1e6, f[6], f[7], rate
      }
      split(cli, c, ",")
      printf "| `terse cat` of the unpaced file | %d | | | | %.2f M |\n", c[3], c[6] / 1e6
      print ""
    }' "$raw/console.csv"

  echo "![latency percentiles](latency.svg)"
} >"$results/results.md"

# ---- the chart ------------------------------------------------------------------

awk -F, '
  /^latency,/ && $3 != "empty-timed-region" && $3 != "terse pinned" {
    key = $3 " (" $2 "p)"
    if (!(key in seen)) { seen[key] = 1; keys[++n] = key }
    for (k = 1; k <= 6; k++) v[key, k] = $(k + 3)
  }
  /^latency,1,empty-timed-region/ { for (k = 1; k <= 6; k++) e[k] = $(k + 3) }
  END {
    split("p50 p90 p99 p99.9 p99.99 max", names, " ")
    header = "percentile"
    for (i = 1; i <= n; i++) header = header "\t\"" keys[i] "\""
    print header "\t\"empty timed region\""
    for (k = 1; k <= 6; k++) {
      line = names[k]
      for (i = 1; i <= n; i++) line = line "\t" (v[keys[i], k] > 0 ? v[keys[i], k] : 1)
      print line "\t" e[k]
    }
  }' "$raw/latency.csv" >"$raw/latency.dat"
columns=$(head -1 "$raw/latency.dat" | awk -F'\t' '{ print NF }')
half=$(((columns - 2) / 2 + 1))  # the last column of the one-producer rows

gnuplot <<EOF || die "gnuplot failed"
set terminal svg size 900,540 dynamic noenhanced font "sans,12" background rgb "white"
set output "$results/latency.svg"
set title "Latency of one logging call (canonical record), $(echo "$model" | sed 's/"//g'), $cores cores"
set ylabel "ns (log scale, timing cost included)"
set logscale y
set format y "%g"
set grid ytics
set key outside right top
set datafile separator tab
set style data linespoints
# One producer solid, two producers dashed, in the same colours.
plot for [i=2:$half] "$raw/latency.dat" using i:xtic(1) title columnheader(i) lc i-1 lw 2 pt 7 ps 0.6 dt 1, \
     for [i=$((half + 1)):$((columns - 1))] "$raw/latency.dat" using i:xtic(1) title columnheader(i) \
       lc i-$((half)) lw 2 pt 6 ps 0.6 dt 2, \
     "$raw/latency.dat" using $columns:xtic(1) title columnheader($columns) lc rgb "black" dt 3 lw 1.5 pt -1
EOF

elapsed=$(($(date +%s) - started))
echo "== wrote $results/results.md and $results/latency.svg in ${elapsed}s"
