#!/usr/bin/env bash
# What including terse costs a translation unit: compile time (median of
# several runs of its CPU time, g++ -O2 -std=c++20, object code discarded) and preprocessed
# lines (-E | wc -l), for a file with 0 and with 100 logging calls, beside
# fmt and spdlog doing the same work. Writes bench/results/compile_time.md.
#
#   bench/compile_time.sh [SOURCE_TREE]
#
# SOURCE_TREE is the terse tree whose headers are measured (default: this
# one), so an older checkout can be measured with today's script.
#
# Environment:
#   CXX                       compiler (default g++)
#   TERSE_COMPILE_REPS        runs per case, the median is kept (default 5)
#   TERSE_COMPILE_RESULTS     output file (default bench/results/compile_time.md)
#
# Needs the Debian packages libfmt-dev, libspdlog-dev and libboost-dev.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tree=$(cd "${1:-$here}" && pwd)
cxx=${CXX:-g++}
reps=${TERSE_COMPILE_REPS:-5}
results=${TERSE_COMPILE_RESULTS:-$here/bench/results/compile_time.md}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

flags=(-std=c++20 -O2 -I"$tree/include" -I"$tree/schema")

# spdlog as its CMake package builds it (the compiled library, external fmt),
# not header-only.
spdlog_headers='#define SPDLOG_COMPILED_LIB 1\n#define SPDLOG_SHARED_LIB 1\n#define SPDLOG_FMT_EXTERNAL 1\n'
spdlog_headers+='#include <spdlog/spdlog.h>\n'

# One call of each case; the index keeps every call site distinct.
call_terse() { echo "  TERSE_INFO(\"request {} from {} took {:.3f} ms ({})\", i + $1, name, ms, text);"; }
call_terse_std() {
  if (($1 % 2 == 0)); then
    call_terse "$1"
  else
    echo "  TERSE_INFO(\"batch {} ids {} waited {}\", i + $1, ids, std::chrono::milliseconds(i));"
  fi
}
call_fmt() { echo "  out += fmt::format(\"request {} from {} took {:.3f} ms ({})\", i + $1, name, ms, text);"; }
call_spdlog() { echo "  spdlog::info(\"request {} from {} took {:.3f} ms ({})\", i + $1, name, ms, text);"; }

# write_tu FILE CALLS HEADER_LINES CALL_FUNCTION
write_tu() {
  local file=$1 calls=$2 headers=$3 call=$4
  {
    printf '%b' "$headers"
    echo "#include <string>"
    echo "#include <vector>"
    echo "std::string out;"
    echo "void work(int i, const char* name, double ms, const std::string& text, const std::vector<int>& ids) {"
    echo "  (void)i; (void)name; (void)ms; (void)text; (void)ids;"
    for ((n = 0; n < calls; ++n)); do "$call" "$n"; done
    echo "}"
  } >"$file"
}

# The case's compile time in seconds (median of $reps) and its preprocessed
# lines. The time is the compiler's CPU time (user + system, its children
# included): on a machine shared with other builds, wall time mostly
# measures the others.
measure() {
  local file=$1 times=()
  for ((r = 0; r < reps; ++r)); do
    /usr/bin/time -f '%U %S' -o "$work/time" "$cxx" "${flags[@]}" -c "$file" -o "$work/out.o"
    times+=("$(awk '{ print $1 + $2 }' "$work/time")")
  done
  local median
  median=$(printf '%s\n' "${times[@]}" | sort -g | sed -n "$(((reps + 1) / 2))p")
  local lines
  lines=$("$cxx" "${flags[@]}" -E "$file" | wc -l)
  printf '%.2f %d' "$median" "$lines"
}

# The tree may predate <terse/std.hpp>, when terse.hpp carried every type.
std_headers='#include <terse/terse.hpp>\n'
if [[ -f $tree/include/terse/std.hpp ]]; then std_headers+='#include <terse/std.hpp>\n'; fi
std_headers+='#include <chrono>\n'

cases=(
  "terse.hpp, scalars and strings|#include <terse/terse.hpp>\n|call_terse"
  "terse.hpp + terse/std.hpp, half the calls structured|$std_headers|call_terse_std"
  "fmt/format.h, fmt::format|#include <fmt/format.h>\n|call_fmt"
  "fmt/core.h, fmt::format|#include <fmt/core.h>\n|call_fmt"
  "spdlog/spdlog.h (compiled library), spdlog::info|$spdlog_headers|call_spdlog"
)

rows=()
for entry in "${cases[@]}"; do
  IFS='|' read -r label headers call <<<"$entry"
  row="| $label |"
  for calls in 0 100; do
    write_tu "$work/tu.cpp" "$calls" "$headers" "$call"
    read -r seconds lines <<<"$(measure "$work/tu.cpp")"
    row+=" $seconds | $lines |"
    echo "compile_time: $label, $calls calls: ${seconds} s, $lines lines" >&2
  done
  rows+=("$row")
done

mkdir -p "$(dirname "$results")"
{
  echo "# Compile time of a translation unit"
  echo
  echo "\`bench/compile_time.sh\`, $(date -u +%Y-%m-%d), $("$cxx" --version | head -1), \`-O2 -std=c++20 -c\`,"
  echo "CPU seconds (user + system), median of $reps runs; lines are \`-E | wc -l\`. The machine may have"
  echo "been busy with other builds, which CPU time mostly discounts: compare figures taken in one run."
  echo "Each logging call has four arguments (an int, a C string, a double with a precision and a"
  echo "std::string); in the structured case every second call logs a std::vector<int> and a"
  echo "std::chrono::milliseconds instead."
  echo
  echo "| header, calls | 0 calls: s | 0 calls: lines | 100 calls: s | 100 calls: lines |"
  echo "|---|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
} >"$results"
echo "compile_time: wrote $results" >&2
