# bash completion for ctxfold. The candidates come from the binary being completed
# (`ctxfold __complete WORD...`), which reads its own command table and flags and, for ids, the
# database read-only; nothing is listed here, so this file never goes stale.
_ctxfold() {
  local IFS=$'\n'
  COMPREPLY=($("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
  # nothing offered (a file argument): bash falls back to file names (-o default)
}
complete -o default -F _ctxfold ctxfold
