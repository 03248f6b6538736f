# bash completion for ctxfold: subcommands are read from `ctxfold --help`, flags from
# `ctxfold SUBCOMMAND --help`, so the binary's command table stays the one source.
_ctxfold() {
  local cur=${COMP_WORDS[COMP_CWORD]} sub="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      --db|--session) ((i++)) ;;
      -*) ;;
      *) sub=${COMP_WORDS[i]}; break ;;
    esac
  done
  if [ -z "$sub" ]; then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "--db --session --text --help --version" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$(ctxfold --help 2>/dev/null | awk '/^Subcommands:/{s=1;next} s&&NF{print $1}')" -- "$cur"))
    fi
    return
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(ctxfold "$sub" --help 2>/dev/null | grep -oE -- '--[a-z][a-z-]*' | sort -u)" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -F _ctxfold ctxfold
