# fish completion for ctxfold: the candidates come from the binary (`ctxfold __complete WORD...`),
# which reads its own command table and flags and, for ids, the database read-only.
function __ctxfold_complete
    set -l words (commandline -opc) (commandline -ct)
    $words[1] __complete $words[2..-1] 2>/dev/null
end
complete -c ctxfold -a '(__ctxfold_complete)'
