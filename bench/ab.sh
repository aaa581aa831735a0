#!/usr/bin/env bash
# A/B against a previous build of terse: builds terse at REF (cached by commit)
# and the working tree, the same small driver (bench/ab_driver.cpp) against
# each, and runs the call-site and throughput scenarios with both, alternating
# A (REF) and B (the working tree) process by process, so that both sides see
# the same machine. Prints one table: the median of the repetitions for every
# cell, and B/A. A tail can regress while the median does not move, so every
# percentile is compared, not just p50.
#
#   bench/ab.sh [--ref REF] [--reps N] [--quick] [--scenarios LIST] [--out FILE]
#
#   --ref REF         any commit (default: the first one bench/BASELINE names); HEAD compares
#                     the working tree, uncommitted changes included, with its last commit
#   --reps N          processes per side and scenario (default 3: the VMs this runs on are
#                     noisy, and three are the fewest whose median ignores one bad run)
#   --quick           a tenth of the calls, samples and records: under a minute, for a first look
#   --scenarios LIST  a comma-separated subset of single-1p,single-2p,burst20,throughput,throughput-fixed
#   --out FILE        also write the table, with how it was taken, as markdown (bench/run.sh
#                     puts it into bench/results/results.md)
#
# Scenarios (the record: TERSE_INFO("request {} took {} us status {} path {}", i, i * 0.25,
# 200, "/api/v1/orders"), default Config):
#   single-1p, single-2p  each call timed alone, bursts of 20 calls 1.5 us apart, 100 us sleep
#                         between bursts, producers on CPU 0 (and 1); 200,000 calls each;
#                         and the first call of each burst alone (-first), which sets the p99,
#                         and the second (-second)
#   burst20               20 back-to-back calls timed together, / 20, then 1.7-4 ms busy;
#                         10,000 samples
#   throughput            10 M records back to back until flushed
#   throughput-fixed      the same with the zstd level fixed: the writer's level otherwise drops
#                         while it is behind, so a faster collector shows less IO CPU and more bytes
#
# Environment: TERSE_BENCH_BUILD, the build directory (default: build-bench at the repository
# root, as bench/run.sh); the builds go to its ab/ folder, REF's in ab/ref-COMMIT.
# TERSE_AB_CMAKE_ARGS, configure arguments for both sides (e.g. -DTERSE_PLATFORM=posix, to
# measure the POSIX platform's calls); such builds go to folders of their own.
# TERSE_AB_NO_HUGE_PAGES=1: both sides keep their rings on 4 KiB pages (Config::huge_pages = false).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TERSE_BENCH_BUILD:-$root/build-bench}
ab=$build/ab

die() {
  echo "bench/ab.sh: $*" >&2
  exit 1
}

usage() {
  sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}" >&2
  exit 2
}

ref=""
reps=3
quick=0
scenario_list=single-1p,single-2p,burst20,throughput,throughput-fixed
out=""
while (($#)); do
  case $1 in
    --ref) ref=${2:-}; shift 2 || usage ;;
    --reps) reps=${2:-}; shift 2 || usage ;;
    --quick) quick=1; shift ;;
    --scenarios) scenario_list=${2:-}; shift 2 || usage ;;
    --out) out=${2:-}; shift 2 || usage ;;
    -h | --help) usage ;;
    *) echo "bench/ab.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ $reps =~ ^[1-9][0-9]*$ ]] || die "--reps needs a positive number, not '$reps'"
IFS=, read -r -a scenarios <<<"$scenario_list"
for s in "${scenarios[@]}"; do
  case $s in single-1p | single-2p | burst20 | throughput | throughput-fixed) ;; *) die "unknown scenario '$s' (single-1p, single-2p, burst20, throughput, throughput-fixed)" ;; esac
done

for tool in cmake c++ git tar awk; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found; install it first (Debian: cmake g++ git tar gawk)"
done

if [ -z "$ref" ]; then
  [ -f "$root/bench/BASELINE" ] || die "no --ref given and no bench/BASELINE"
  ref=$(awk '!/^[[:space:]]*(#|$)/ { print $1; exit }' "$root/bench/BASELINE")
  [ -n "$ref" ] || die "bench/BASELINE names no commit"
fi
commit=$(git -C "$root" rev-parse --verify --quiet "$ref^{commit}") || die "'$ref' is not a commit of $root"
short=$(git -C "$root" rev-parse --short "$commit")
subject=$(git -C "$root" log -1 --format=%s "$commit")
((${#subject} <= 72)) || subject="${subject:0:70}…"

if ((quick)); then
  calls=20000 samples=1000 records=1000000
else
  calls=200000 samples=10000 records=10000000
fi

# ---- the builds ------------------------------------------------------------------

# Both sides are configured alike: only what an application links, in Release.
flags=(-DCMAKE_BUILD_TYPE=Release -DTERSE_TESTS=OFF -DTERSE_BENCH=OFF -DTERSE_CLI=OFF -DTERSE_SHIP=OFF)
read -r -a extra_flags <<<"${TERSE_AB_CMAKE_ARGS:-}"
variant=""
if ((${#extra_flags[@]})); then
  flags+=("${extra_flags[@]}")
  variant=-$(printf '%s\n' "${extra_flags[@]}" | cksum | cut -d' ' -f1)
  echo "== both sides configured with: ${extra_flags[*]}"
fi
jobs=$(nproc)

# Runs a build step with its output in LOG, shown only when the step fails.
# The compilers run at a lower priority, so that a build started beside a
# measurement disturbs it less.
step() {
  local log=$1 what=$2
  shift 2
  nice -n 10 "$@" >>"$log" 2>&1 || { tail -n 40 "$log" >&2; die "$what failed; the whole log is $log"; }
}

mkdir -p "$ab"
ref_dir=$ab/ref-$commit$variant
# A REF is built once: its stamp is written last, so an interrupted build is redone.
if [ -f "$ref_dir/prefix/.complete" ]; then
  echo "== A: terse at $short, built before ($ref_dir)"
else
  echo "== A: building terse at $short ($subject)"
  rm -rf "$ref_dir"
  mkdir -p "$ref_dir/src"
  git -C "$root" archive "$commit" | tar -x -C "$ref_dir/src" || die "extracting $short failed"
  log=$ref_dir/build.log
  step "$log" "configuring terse at $short" cmake -S "$ref_dir/src" -B "$ref_dir/build" "${flags[@]}" \
    -DCMAKE_INSTALL_PREFIX="$ref_dir/prefix"
  step "$log" "building terse at $short" cmake --build "$ref_dir/build" -j "$jobs"
  step "$log" "installing terse at $short" cmake --install "$ref_dir/build"
  touch "$ref_dir/prefix/.complete"
fi

# The driver against REF's installed package, and only that one: a terse
# installed elsewhere on the machine must not stand in for it.
log=$ref_dir/driver.log
: >"$log"
step "$log" "configuring the driver against $short" cmake -S "$root/bench/ab" -B "$ref_dir/driver" "${flags[@]}" \
  -DCMAKE_PREFIX_PATH="$ref_dir/prefix"
found=$(awk -F= '/^terse_DIR:/ { print $2 }' "$ref_dir/driver/CMakeCache.txt")
[[ $found == "$ref_dir/prefix/"* ]] || die "the driver found terse in '$found', not in $ref_dir/prefix"
step "$log" "building the driver against $short" cmake --build "$ref_dir/driver" -j "$jobs" --target terse_bench_ab

echo "== B: building the working tree"
log=$ab/tree.log
: >"$log"
step "$log" "configuring the driver against the working tree" cmake -S "$root/bench/ab" -B "$ab/tree$variant" "${flags[@]}" \
  -DTERSE_AB_SOURCE="$root"
step "$log" "building the driver against the working tree" cmake --build "$ab/tree$variant" -j "$jobs" --target terse_bench_ab

bin_a=$ref_dir/driver/terse_bench_ab
bin_b=$ab/tree$variant/terse_bench_ab
tree=$(git -C "$root" rev-parse --short HEAD)
[ -z "$(git -C "$root" status --porcelain --untracked-files=no)" ] || tree="$tree with local changes"

# ---- the runs ---------------------------------------------------------------------

arguments() {
  case $1 in
    single-1p) echo "single --producers 1 --calls $calls" ;;
    single-2p) echo "single --producers 2 --calls $calls" ;;
    burst20) echo "burst20 --samples $samples" ;;
    throughput) echo "throughput --records $records" ;;
    throughput-fixed) echo "throughput-fixed --records $records" ;;
  esac
}

started=$(date +%s)
raw=$ab/last-run.csv  # side,rep,load,scenario,metric,value
: >"$raw"
run_dir=""
trap 'rm -rf "$run_dir"' EXIT
echo "== $reps × (A, B) per scenario, A = $short, B = the working tree ($tree)"
for ((rep = 1; rep <= reps; rep++)); do
  for s in "${scenarios[@]}"; do
    for side in A B; do
      if [ "$side" = A ]; then bin=$bin_a; else bin=$bin_b; fi
      run_dir=$(mktemp -d "${TMPDIR:-/tmp}/terse-ab.XXXXXX")
      load=$(cut -d' ' -f1-3 /proc/loadavg)
      # shellcheck disable=SC2046  # the arguments are words by design
      lines=$("$bin" $(arguments "$s") --dir "$run_dir") || die "$side ($bin) failed in $s"
      rm -rf "$run_dir"
      run_dir=""
      awk -v side="$side" -v rep="$rep" -v load="${load%% *}" '{ print side "," rep "," load "," $0 }' \
        <<<"$lines" >>"$raw"
      awk -F, -v head="$(printf '%d/%d %-10s %s' "$rep" "$reps" "$s" "$side")" -v load="$load" '
        { figures = figures sprintf("  %s %.4g", $2, $3) }
        END { print "  " head figures "   (load " load ")" }' <<<"$lines"
    done
  done
done

# ---- the table ------------------------------------------------------------------

model=$(awk -F: '/^model name/ { sub(/^[ \t]+/, "", $2); print $2; exit }' /proc/cpuinfo)
report=$ab/last-report.md
awk -F, -v extra="${extra_flags[*]:-}" -v short="$short" -v subject="$subject" -v tree="$tree" -v reps="$reps" -v calls="$calls" \
  -v samples="$samples" -v records="$records" -v quick="$quick" -v model="${model:-unknown CPU}" -v cores="$(nproc)" '
  function sort(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } }
  function median(a, n) { sort(a, n); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  function group(n,   s) { s = sprintf("%d", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s); return s }
  function show(m, v) {
    if (m == "records/s") return sprintf("%.2f M", v / 1e6)
    if (m == "bytes/record") return sprintf("%.2f", v)
    if (m ~ /CPU|RSS/) return sprintf("%.1f", v)
    return sprintf("%.0f", v)
  }
  {
    side = $1; rep = $2; load = $3; s = $4; m = $5
    if (!(s in seen_s)) { seen_s[s] = 1; order_s[++ns] = s }
    if (!((s, m) in seen_m)) { seen_m[s, m] = 1; order_m[s, ++nm[s]] = m }
    v[s, m, side, rep] = $6
    if (nl == 0 || load < lo) lo = load
    if (nl == 0 || load > hi) hi = load
    nl++
  }
  END {
    title["single-1p"] = "single calls, 1 producer, ns"
    title["single-2p"] = "single calls, 2 producers, ns"
    title["single-1p-first"] = "the first call of each burst, 1 producer, ns"
    title["single-2p-first"] = "the first call of each burst, 2 producers, ns"
    title["single-1p-second"] = "the second call of each burst, 1 producer, ns"
    title["single-2p-second"] = "the second call of each burst, 2 producers, ns"
    title["burst20"] = "bursts of 20, ns per call"
    title["throughput"] = "throughput, 1 producer"
    title["throughput-fixed"] = "throughput, zstd level fixed"
    print "## A/B: the working tree against " short
    print ""
    print "A: terse at " short " (" subject ")."
    print "B: the working tree (" tree ")."
    if (extra != "") print "Both configured with `" extra "`."
    print ""
    print "`bench/ab.sh`: the same driver built against each; every scenario a process of its own, A then B,"
    print reps " times over, and every cell the median of the " reps " runs (" model ", " cores " cores; load average"
    print "over the runs " lo "–" hi "). B/A above 1: B takes longer, or more bytes, CPU or memory, except"
    print "records/s, where above 1 means B is faster. The last column is B/A taken run by run, each B"
    print "against the A just before it: a change is real when it holds in every run, not in the median alone."
    print ""
    if (("single-1p" in seen_s) || ("single-2p" in seen_s)) {
      print "Single calls: " group(calls) " calls a producer, each timed alone between `lfence;rdtsc` and"
      print "`rdtscp;lfence` (their cost included), in bursts of 20 calls 1.5 µs apart, 100 µs between bursts;"
      print "\"the first call of each burst\": the call after each pause alone, one in 20, which sets the p99;"
      print "\"the second\": the call 1.5 µs after it."
    }
    if ("burst20" in seen_s)
      print "Bursts of 20: " group(samples) " samples of 20 back-to-back calls timed together, then a 1.7–4 ms wait."
    if (("throughput" in seen_s) || ("throughput-fixed" in seen_s))
      print "Throughput: " group(records) " records until flushed; IO CPU is the process'"'"'s CPU time less the producer'"'"'s."
    if (quick) {
      print ""
      print "Taken with `--quick`: p99.99 and max rest on the slowest few calls of each run, which one"
      print "preemption moves (an A/A run, the same build on both sides, showed B/A up to 25 there). Compare"
      print "tails in a full run."
    }
    print ""
    print "| scenario | | A: " short " | B: this tree | B/A | B/A by run |"
    print "|---|---|---:|---:|---:|---:|"
    for (i = 1; i <= ns; i++) {
      s = order_s[i]
      for (j = 1; j <= nm[s]; j++) {
        m = order_m[s, j]
        na = nb = nr = 0
        rlo = rhi = ""
        for (r = 1; r <= reps; r++) {
          if ((s, m, "A", r) in v) a[++na] = v[s, m, "A", r]
          if ((s, m, "B", r) in v) b[++nb] = v[s, m, "B", r]
          if (((s, m, "A", r) in v) && ((s, m, "B", r) in v) && v[s, m, "A", r] > 0) {
            q = v[s, m, "B", r] / v[s, m, "A", r]
            if (nr++ == 0 || q < rlo) rlo = q
            if (nr == 1 || q > rhi) rhi = q
          }
        }
        ma = median(a, na); mb = median(b, nb)
        printf "| %s | %s | %s | %s | %s | %s |\n", (j == 1 ? (s in title ? title[s] : s) : ""), m, show(m, ma), show(m, mb), \
          (ma > 0 ? sprintf("%.2f", mb / ma) : "–"), (nr > 1 ? sprintf("%.2f–%.2f", rlo, rhi) : "")
      }
    }
  }' "$raw" >"$report"

echo "== the runs took $(($(date +%s) - started)) s"
echo
cat "$report"
if [ -n "$out" ]; then
  cp "$report" "$out" || die "could not write $out"
fi
