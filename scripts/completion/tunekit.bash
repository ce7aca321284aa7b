# bash completion for tunekit. Install: source this file from ~/.bashrc, or
# copy it to /usr/share/bash-completion/completions/tunekit.
# tests/cli/completion_test.cpp checks that every subcommand and option of
# `tunekit --help` and `tunekit SUB --help` is here.

# Strategies and output writers come from the tunekit being completed, so
# that plugins registered there are offered too.
_tunekit_plugins() {
  local section=$1
  "${COMP_WORDS[0]}" plugins 2>/dev/null | awk -v s="$section" '
    /^[a-z]/ { on = index($0, s) == 1; next }
    on && /^  [a-z]/ { sub(/^  /, ""); sub(/[: (].*/, ""); print }'
}

_tunekit() {
  local cur prev sub i
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  sub=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${COMP_WORDS[i]}" in
      -*) ;;
      *) sub="${COMP_WORDS[i]}"; break ;;
    esac
  done

  local subcommands="tune space select emit rules-report report resolve replay devices plugins"
  if [[ -z "$sub" ]]; then
    COMPREPLY=($(compgen -W "$subcommands -h --help --version" -- "$cur"))
    return
  fi

  # --json names a file for tune and emit; elsewhere it is a switch.
  if [[ "$prev" == --json && "$sub" != tune && "$sub" != emit ]]; then prev=""; fi
  case "$prev" in
    --strategy) COMPREPLY=($(compgen -W "$(_tunekit_plugins strategies)" -- "$cur")); return ;;
    --output)
      # Writers separated by commas: complete the one after the last comma.
      local done_part="" last="$cur"
      if [[ "$cur" == *,* ]]; then done_part="${cur%,*},"; last="${cur##*,}"; fi
      COMPREPLY=($(compgen -P "$done_part" -W "$(_tunekit_plugins 'output writers')" -- "$last"))
      compopt -o nospace 2>/dev/null
      return ;;
    --cache) COMPREPLY=($(compgen -W "cold cold-read hot" -- "$cur")); return ;;
    --mode) COMPREPLY=($(compgen -W "per-size all-sizes cover" -- "$cur")); return ;;
    --reference) COMPREPLY=($(compgen -W "default none" -- "$cur")); return ;;
    --early-stop) COMPREPLY=($(compgen -W "off 2 3 5" -- "$cur")); return ;;
    --confirm) COMPREPLY=($(compgen -W "off 2 3 5" -- "$cur")); return ;;
    -o|--out-dir|--vllm) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --db|--csv|--json|--html|--header|--write|--properties|--compiler|--replay|--t1|--spec|--python|--triton-configs)
      COMPREPLY=($(compgen -f -- "$cur")); return ;;
    -s|--size|-a|--axis|--where|--option|--max-evals|--max-time|--seed|-j|--jobs|--flags|--timeout|--atol|--rtol|\
    --entry|--arg|--within|--namespace|-c|--config|--kernel|--device|--max-fraction|--batch|--vllm-dtype|--vllm-block-shape|\
    --vllm-batch|--minimize|--maximize|--toolchain)
      return ;;
  esac

  local options
  case "$sub" in
    tune)
      options="-h --help -s --size -a --axis --where --strategy --option --output --max-evals --max-fraction --max-time --seed
               -j --jobs -o --out-dir --db --csv --json --html --fresh --compiler --flags --timeout --cache
               --properties --early-stop --confirm --reference --atol --rtol --entry --arg --no-progress --no-rules
               --retry-failed --keep-going --replay --no-transfer --device-index" ;;
    space) options="-h --help -s --size --properties --where --json --write" ;;
    select) options="-h --help --db -o --out-dir --seed --cache --toolchain --mode --within" ;;
    emit) options="-h --help --db -o --out-dir --seed --cache --toolchain --mode --within --header --json --namespace
                   --python --triton-configs --vllm --vllm-dtype --vllm-block-shape --vllm-batch" ;;
    rules-report) options="-h --help --db -o --out-dir --seed --cache --toolchain" ;;
    report) options="-h --help --db -o --out-dir --seed --cache --toolchain --html" ;;
    resolve) options="-h --help -s --size -c --config --properties --device-index --ignore-constraints --build -o --out-dir
                      --json" ;;
    replay) options="-h --help --t1 --spec -s --size --properties --kernel --device --strategy --option --max-evals
                     --max-fraction --max-time --minimize --maximize --seed --batch --json" ;;
    devices) options="-h --help --json" ;;
    plugins) options="-h --help --markdown" ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
  else
    # Specs, kernel sources and the other files the subcommands read.
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}

complete -o filenames -o bashdefault -F _tunekit tunekit
