#!/usr/bin/env bash
# The layout rules of the README's "Layout" section, checked on every #include:
#   schema/    includes nothing of the project's other folders (and no fmt)
#   include/   the public API: schema/ and itself, never runtime/ or the reading side
#   runtime/   include/ and schema/, never the reading side or sinks/
#   decoder/   schema/ and itself, never include/ or runtime/
#   reader/    decoder/, schema/ and itself
#   cli/       the public headers of the reader (<terse/reader.hpp>) and of
#              the decoder (<terse/decoder.hpp>), schema/ and itself: never
#              the inside of either
#   sinks/     include/, schema/, decoder/ (the console renders with the
#              decoder) and of runtime/ only the headers that say what the
#              runtime asks of sinks/ (view.hpp, record_text.hpp) and what
#              those hand over (batches, calibration, call sites, thread
#              placement, the OS seam); nothing but the library's own
#              objects includes sinks/
# so that reading is three rooms, decoder < reader < cli, and for ports: in
# runtime/, sinks/ and include/ only runtime/platform_<os>.cpp includes the
# OS's own headers behind runtime/platform.hpp (and runtime/signals_windows.cpp
# Windows', for the crash and termination handlers there), and
# runtime/platform_posix.cpp none that only Linux has.
# A header named <terse/X.hpp> is looked up in include/terse, schema/terse,
# decoder/terse and reader/terse (each room's public headers); a quoted
# header next to the including file, else from the source root
# ("runtime/view.hpp"), else in a room's folder (its include root).
# Usage: check_layout.sh SOURCE_DIR
#        check_layout.sh --self-test SOURCE_DIR   (each rule, broken on purpose
#                                                  in a copy, must be caught)
set -euo pipefail

if [[ ${1:-} == --self-test ]]; then
  source_dir=$(realpath "${2:?usage: check_layout.sh --self-test SOURCE_DIR}")
  self=$(realpath "$0")
  copy=$(mktemp -d)
  trap 'rm -rf "$copy"' EXIT
  # A violation per rule of the reading side, plus one the old rules caught.
  violations=(
    'cli/main.cpp|#include "source.hpp"'
    'cli/main.cpp|#include "structured.hpp"'
    'cli/main.cpp|#include "runtime/buffers.hpp"'
    'reader/select.cpp|#include "filters.hpp"'
    'decoder/message.cpp|#include <terse/reader.hpp>'
    'decoder/json_record.cpp|#include "cursor.hpp"'
    'runtime/logger.cpp|#include <terse/decoder.hpp>'
    'sinks/view.cpp|#include "runtime/buffers.hpp"'
    'runtime/platform_posix.cpp|#include <sys/prctl.h>'
    'runtime/logger.cpp|#include <windows.h>'
  )
  bash "$self" "$source_dir" >/dev/null || { echo "self-test: the tree itself breaks the rules" >&2; exit 1; }
  missed=0
  for violation in "${violations[@]}"; do
    file=${violation%%|*} line=${violation#*|}
    rm -rf "${copy:?}"/*
    for folder in schema include runtime decoder reader cli sinks; do cp -r "$source_dir/$folder" "$copy/"; done
    printf '%s\n' "$line" >>"$copy/$file"
    if bash "$self" "$copy" >/dev/null 2>&1; then
      echo "self-test: $file with '$line' passed the check" >&2
      missed=$((missed + 1))
    fi
  done
  ((missed == 0)) || exit 1
  echo "layout self-test: all ${#violations[@]} deliberate violations caught"
  exit 0
fi

root=${1:?usage: check_layout.sh SOURCE_DIR}
cd "$root"
failures=0

# Where a header written as <terse/...> or "..." comes from: its folder, then
# "public" when it is one of that folder's <terse/...> headers.
owner_of() {
  local including=$1 spelled=$2 quoted=$3
  local resolved=""
  if [[ $quoted == yes && -f $(dirname "$including")/$spelled ]]; then
    resolved=$(realpath -m --relative-to=. "$(dirname "$including")/$spelled")
  elif [[ $quoted == yes && -f $spelled ]]; then
    resolved=$spelled
  else
    for folder in include schema decoder reader cli; do
      [[ -f $folder/$spelled ]] && { resolved=$folder/$spelled; break; }
    done
  fi
  if [[ -z $resolved ]]; then
    case $spelled in
      fmt/*) echo "fmt public -" ;;
      *) echo "external public -" ;;
    esac
    return
  fi
  local folder=${resolved%%/*} rest=${resolved#*/}
  if [[ $rest == terse/* ]]; then echo "$folder public $resolved"; else echo "$folder private $resolved"; fi
}

# The runtime's side of its seam with sinks/.
sinks_may_include=" runtime/view.hpp runtime/record_text.hpp runtime/pipeline.hpp runtime/clock.hpp runtime/registry.hpp \
runtime/placement.hpp runtime/platform.hpp "

allowed() {
  local from=$1 to=$2 kind=$3 resolved=$4
  case $from in
    schema) [[ $to == schema || $to == external ]] ;;
    include) [[ $to == include || $to == schema || $to == fmt || $to == external ]] ;;
    runtime) [[ $to == include || $to == runtime || $to == schema || $to == fmt || $to == external ]] ;;
    decoder) [[ $to == decoder || $to == schema || $to == fmt || $to == external ]] ;;
    reader) [[ $to == reader || $to == decoder || $to == schema || $to == fmt || $to == external ]] ;;
    cli) [[ $to == cli || $to == schema || $to == fmt || $to == external ||
      (($to == reader || $to == decoder) && $kind == public) ]] ;;
    sinks) [[ $to == sinks || $to == include || $to == schema || $to == decoder || $to == fmt || $to == external ||
      ($to == runtime && $sinks_may_include == *" $resolved "*) ]] ;;
    *) [[ $to != sinks ]] ;;
  esac
}

while IFS= read -r file; do
  from=${file%%/*}
  while IFS= read -r line; do
    if [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\<([^>]+)\> ]]; then
      spelled=${BASH_REMATCH[1]} quoted=no
    elif [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
      spelled=${BASH_REMATCH[1]} quoted=yes
    else
      continue
    fi
    if [[ $quoted == no && $from != schema && $from != decoder && $from != reader && $from != cli &&
      $file != runtime/platform_*.cpp && $file != runtime/*_windows.cpp &&
      $spelled =~ ^(linux/.*|sys/syscall\.h|sys/mman\.h|sys/prctl\.h|sched\.h|windows\.h|synchapi\.h)$ ]]; then
      echo "$file: includes <$spelled>, which only runtime/platform_<os>.cpp (and on Windows" \
        "runtime/signals_windows.cpp) may (runtime/platform.hpp)" >&2
      failures=$((failures + 1))
    fi
    if [[ $quoted == no && ($file == runtime/platform_posix.cpp || $file == runtime/platform_unix.cpp) &&
      $spelled =~ ^(linux/.*|sys/syscall\.h|sys/prctl\.h|sched\.h|malloc\.h|link\.h|sys/inotify\.h|sys/auxv\.h)$ ]]; then
      echo "$file: includes <$spelled>, which is Linux's alone (runtime/platform_linux.cpp)" >&2
      failures=$((failures + 1))
    fi
    read -r to kind resolved < <(owner_of "$file" "$spelled" "$quoted")
    if ! allowed "$from" "$to" "$kind" "$resolved"; then
      echo "$file: includes $spelled ($kind, from $to/), which $from/ may not include" >&2
      failures=$((failures + 1))
    fi
  done < <(grep -E '^[[:space:]]*#[[:space:]]*include' "$file" || true)
done < <(find schema include runtime decoder reader cli sinks -name '*.hpp' -o -name '*.cpp' -o -name '*.h' | sort)

if ((failures)); then
  echo "$failures include(s) break the layout rules (README, Layout)" >&2
  exit 1
fi
echo "layout: every include follows the rules"
