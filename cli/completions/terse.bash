# bash completion for terse(1): the commands, their options, the values of
# options that take one of a few words, and .tlog files and directories for
# the inputs. It needs nothing but bash itself (not the bash-completion
# package), so that sourcing this file is enough.
# The lists follow cli/*.cpp; tests/package/completion_test.sh
# checks them against `terse COMMAND --help`.

# The options of COMMAND (empty: before the command), those taking a value
# first, then the flags.
_terse_options() {
  local filters_with_value="--level -S --since --thread --site -g --grep --context --mask"
  case $1 in
    cat)
      echo "--format -o --output --color -n --lines --after-cursor --threads -U --until --key --signer $filters_with_value"
      echo "--json -f --follow --show-cursor --schema-header --utc -h --help"
      ;;
    verify)
      echo "--threads --key --signer"
      echo "-h --help"
      ;;
    stats)
      echo "--top --threads --key --signer"
      echo "--json --utc -h --help"
      ;;
    keygen)
      echo "-C --comment"
      echo "-h --help"
      ;;
    ship)
      echo "--brokers --topic --cursor-file -X --batch-records --linger-ms --compression --max-buffer-mb" \
        "--commit-interval --stats-interval --message-key --key --signer --drain-timeout $filters_with_value"
      echo "--once --show-cursor --utc -h --help"
      ;;
    *)
      echo ""
      echo "-h --help --version"
      ;;
  esac
}

# Whether OPTION of COMMAND takes a value (the next word, or after '=').
_terse_takes_value() {
  local with_value option
  with_value=$(_terse_options "$1" | head -n 1)
  for option in $with_value; do
    [[ $option == "$2" ]] && return 0
  done
  return 1
}

# COMPREPLY: .tlog files and directories that start with $1.
_terse_paths() {
  mapfile -t COMPREPLY < <(
    compgen -d -- "$1"
    compgen -f -X '!*.tlog' -- "$1"
  )
  # Directories get their slash; outside a completion (a test) there is no
  # completion to set options on.
  compopt -o filenames 2>/dev/null
  return 0
}

# COMPREPLY: the values of OPTION that start with CUR, each after PREFIX.
_terse_values() {
  local option=$1 cur=$2 prefix=$3 words=""
  local levels="trace debug info warn error critical"
  case $option in
    -o | --output) words="short precise cat json" ;;
    --color) words="auto always never" ;;
    --compression) words="zstd lz4 snappy gzip none" ;;
    --message-key) words="none thread site" ;;
    --level)
      # LOW..HIGH: the second level after the first one's dots.
      if [[ $cur == *..* ]]; then
        prefix+="${cur%%..*}.."
        cur=${cur#*..}
      fi
      words=$levels
      ;;
    --mask | --cursor-file | --key | --signer)
      mapfile -t COMPREPLY < <(compgen -f -P "$prefix" -- "$cur")
      compopt -o filenames 2>/dev/null
      return 0
      ;;
  esac
  # A free value (a time, a thread, a pattern...): nothing to offer.
  mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "$words" -- "$cur")
  return 0
}

_terse() {
  COMPREPLY=()
  local cword=$COMP_CWORD
  local cur=${COMP_WORDS[cword]}
  local prev=""
  ((cword > 0)) && prev=${COMP_WORDS[cword - 1]}

  # The command: the first word that is not an option (only --help and
  # --version come before it).
  local command="" i
  for ((i = 1; i < cword; i++)); do
    case ${COMP_WORDS[i]} in
      cat | verify | stats | ship | keygen)
        command=${COMP_WORDS[i]}
        break
        ;;
    esac
  done

  # --option=value: bash splits at '=' when COMP_WORDBREAKS has it (the
  # default), else the word holds both.
  if [[ $cur == = ]]; then
    cur=""
    _terse_takes_value "$command" "$prev" && _terse_values "$prev" "" ""
    return 0
  fi
  if [[ $prev == = ]] && ((cword >= 2)); then
    local option=${COMP_WORDS[cword - 2]}
    _terse_takes_value "$command" "$option" && _terse_values "$option" "$cur" ""
    return 0
  fi
  if [[ $cur == --*=* ]]; then
    local option=${cur%%=*}
    _terse_takes_value "$command" "$option" && _terse_values "$option" "${cur#*=}" "$option="
    return 0
  fi

  if [[ -n $command ]] && _terse_takes_value "$command" "$prev"; then
    _terse_values "$prev" "$cur" ""
    return 0
  fi

  if [[ -z $command ]]; then
    if [[ $cur == -* ]]; then
      mapfile -t COMPREPLY < <(compgen -W "$(_terse_options "")" -- "$cur")
    else
      mapfile -t COMPREPLY < <(compgen -W "cat verify stats ship keygen" -- "$cur")
    fi
    return 0
  fi

  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_terse_options "$command")" -- "$cur")
    return 0
  fi
  _terse_paths "$cur"
}

complete -F _terse terse
