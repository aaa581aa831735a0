#!/usr/bin/env bash
# Formats the C++ sources with the house style (.clang-format), or with --check
# lists the files that are not formatted and fails (what CI runs).
# Usage: scripts/format.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
formatter=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$formatter" >/dev/null; then
  echo "$formatter not found: install the Debian package clang-format-14" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h')
if [[ ${1:-} == --check ]]; then
  unformatted=()
  for f in "${files[@]}"; do
    "$formatter" --style=file "$f" | cmp -s - "$f" || unformatted+=("$f")
  done
  if ((${#unformatted[@]})); then
    printf 'not formatted (run scripts/format.sh):\n' >&2
    printf '  %s\n' "${unformatted[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files follow .clang-format"
else
  "$formatter" --style=file -i "${files[@]}"
fi
