#!/usr/bin/env bash
# The bash completion, driven as bash drives it (COMP_WORDS, COMP_CWORD, then
# COMPREPLY), checked against the CLI itself: the commands and options it
# offers are those `terse --help` and `terse COMMAND --help` list, the values
# of an enumerated option are those its --help names, and inputs complete to
# .tlog files and directories.
# Usage: completion_test.sh COMPLETION_FILE TERSE_BINARY SCRATCH_DIR
set -euo pipefail
completion=${1:?usage: completion_test.sh COMPLETION_FILE TERSE_BINARY SCRATCH_DIR}
terse=${2:?}
scratch=${3:?}
failures=0

# shellcheck source=/dev/null
source "$completion"
if [[ $(complete -p terse) != "complete -F _terse terse" ]]; then
  echo "FAIL: sourcing $completion registers no _terse completion for terse" >&2
  exit 1
fi

# complete WORD...: COMPREPLY for the command line WORD... (the last word is
# the one being completed), sorted, one a line.
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE="$*"
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  _terse
  if ((${#COMPREPLY[@]})); then printf '%s\n' "${COMPREPLY[@]}" | sort -u; fi
}

# expect WHAT ACTUAL EXPECTED (sorted lines each)
expect() {
  if [[ $2 != "$3" ]]; then
    echo "FAIL: $1" >&2
    diff <(echo "$3") <(echo "$2") | sed 's/^/  /' >&2 || true
    failures=$((failures + 1))
  else
    echo "ok: $1"
  fi
}

# The options of an --help text: the words starting with '-' at the start of
# its option lines ("  -o,--output TEXT:{...}  ...").
help_options() {
  sed -n 's/^  \(-[^ ]*\).*/\1/p' | tr ',' '\n' | sort -u
}

top_help=$("$terse" --help)
commands=$(echo "$top_help" | sed -n '/^Subcommands:/,/^$/s/^  \([a-z]\+\) .*/\1/p' | sort)
if [[ -z $commands ]]; then
  echo "FAIL: terse --help lists no subcommands:" >&2
  echo "$top_help" >&2
  exit 1
fi
expect "commands" "$(complete_words terse '')" "$commands"
expect "top-level options" "$(complete_words terse -)" "$(echo "$top_help" | help_options)"

for command in $commands; do
  help=$("$terse" "$command" --help)
  expect "$command options" "$(complete_words terse "$command" -)" "$(echo "$help" | help_options)"
  # Each option with a fixed set of values ("TEXT:{a,b,c}" in the help)
  # completes to that set, whichever of its names is used.
  while read -r names values; do
    expected=$(echo "$values" | tr ',' '\n' | sort)
    for name in ${names//,/ }; do
      expect "$command $name values" "$(complete_words terse "$command" "$name" '')" "$expected"
    done
    # --option=VALUE, as bash splits it at '=', and as one word where it does not.
    long=${names##*,}
    first=$(echo "$expected" | head -n 1)
    expect "$command $long=${first:0:2}" "$(complete_words terse "$command" "$long" = "${first:0:2}")" \
      "$(echo "$expected" | grep "^${first:0:2}")"
    expect "$command $long=${first:0:2} (one word)" "$(complete_words terse "$command" "$long=${first:0:2}")" \
      "$(echo "$expected" | grep "^${first:0:2}" | sed "s/^/$long=/")"
  done < <(echo "$help" | sed -n 's/^  \(-[^ ]*\) [A-Z]*:{\([^}]*\)}.*/\1 \2/p')
done

# Levels, which the help gives as prose: the writer's level names, also as
# the high end of a range.
levels=$(printf '%s\n' trace debug info warn error critical | sort)
expect "cat --level" "$(complete_words terse cat --level '')" "$levels"
expect "cat --level info..e" "$(complete_words terse cat --level info..e)" "info..error"
expect "ship --level w" "$(complete_words terse ship --level w)" "warn"

# Inputs: .tlog files and directories, nothing else; a free value (a time)
# gets no paths.
rm -rf "$scratch"
mkdir -p "$scratch/logs" "$scratch/more-logs"
touch "$scratch/app-20261129-001.tlog" "$scratch/notes.txt" "$scratch/logs/app-20261129-002.tlog"
cd "$scratch"
for command in $commands; do
  expect "$command inputs" "$(complete_words terse "$command" --threads 2 '')" \
    "$(printf '%s\n' app-20261129-001.tlog logs more-logs | sort)"
done
expect "cat inputs in a directory" "$(complete_words terse cat logs/)" "logs/app-20261129-002.tlog"
expect "cat --since takes a time" "$(complete_words terse cat --since '')" ""
expect "ship --cursor-file takes any file" "$(complete_words terse ship --cursor-file n)" "notes.txt"

if ((failures)); then
  echo "$failures completion checks failed" >&2
  exit 1
fi
echo "bash completion: every check passed"
