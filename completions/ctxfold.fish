# fish completion for ctxfold: the candidates come from the binary (`ctxfold __complete WORD...`),
# which reads its own command table and flags and, for ids, the database read-only. When it offers
# nothing (a file argument), paths are completed instead.
function __ctxfold_complete
    set -l words (commandline -opc) (commandline -ct)
    command -q $words[1]; or return
    set -l cands ($words[1] __complete $words[2..-1] 2>/dev/null)
    if test (count $cands) -gt 0
        printf '%s\n' $cands
    else
        __fish_complete_path (commandline -ct)
    end
end
complete -c ctxfold -f -a '(__ctxfold_complete)'
