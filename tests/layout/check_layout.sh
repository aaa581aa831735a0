#!/usr/bin/env bash
# The layout rules of the README's "Layout" section, checked on every #include:
#   schema/    includes nothing of the project's other folders (and no fmt)
#   include/   the public API: schema/ and itself, never runtime/ or decoder/
#   runtime/   include/ and schema/, never decoder/
#   decoder/   schema/ and itself, never include/ or runtime/
#   sinks/     all four (the console renders with the decoder); nothing but
#              the library's own objects includes sinks/
# and, for ports: in runtime/, sinks/ and include/ only runtime/platform_<os>.cpp
# includes the Linux-only headers behind runtime/platform.hpp.
# A header named <terse/X.hpp> is looked up in include/terse, schema/terse,
# decoder/terse and decoder/include/terse (the reader's public header); a
# quoted header next to the including file, else from the source root
# ("runtime/view.hpp").
# Usage: check_layout.sh SOURCE_DIR
set -euo pipefail
root=${1:?usage: check_layout.sh SOURCE_DIR}
cd "$root"
failures=0

# Which folder a header written as <terse/...> or "..." comes from.
owner_of() {
  local including=$1 spelled=$2 quoted=$3
  if [[ $quoted == yes && -f $(dirname "$including")/$spelled ]]; then
    local resolved
    resolved=$(realpath -m --relative-to=. "$(dirname "$including")/$spelled")
    echo "${resolved%%/*}"
    return
  fi
  if [[ $quoted == yes && -f $spelled ]]; then
    echo "${spelled%%/*}"
    return
  fi
  for folder in include schema decoder decoder/include; do
    [[ -f $folder/$spelled ]] && { echo "${folder%%/*}"; return; }
  done
  case $spelled in
    fmt/*) echo fmt ;;
    *) echo external ;;
  esac
}

allowed() {
  local from=$1 to=$2
  case $from in
    schema) [[ $to == schema || $to == external ]] ;;
    include) [[ $to == include || $to == schema || $to == fmt || $to == external ]] ;;
    runtime) [[ $to != decoder && $to != sinks ]] ;;
    decoder) [[ $to == decoder || $to == schema || $to == fmt || $to == external ]] ;;
    sinks) true ;;
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
    if [[ $quoted == no && $from != schema && $from != decoder && $file != runtime/platform_*.cpp &&
      $spelled =~ ^(linux/.*|sys/syscall\.h|sys/mman\.h|sys/prctl\.h|sched\.h)$ ]]; then
      echo "$file: includes <$spelled>, which only runtime/platform_<os>.cpp may (runtime/platform.hpp)" >&2
      failures=$((failures + 1))
    fi
    to=$(owner_of "$file" "$spelled" "$quoted")
    if ! allowed "$from" "$to"; then
      echo "$file: includes $spelled from $to/, which $from/ may not include" >&2
      failures=$((failures + 1))
    fi
  done < <(grep -E '^[[:space:]]*#[[:space:]]*include' "$file" || true)
done < <(find schema include runtime decoder sinks -name '*.hpp' -o -name '*.cpp' -o -name '*.h' | sort)

if ((failures)); then
  echo "$failures include(s) break the layout rules (README, Layout)" >&2
  exit 1
fi
echo "layout: every include follows the rules"
