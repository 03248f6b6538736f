#!/usr/bin/env bash
# The repository explains itself: no tracked file may cite a design document that lives outside
# it (the product page, the three design documents of ../shared/seeds, the field cases, the
# transcript notes of ../shared/data/transcripts, the architecture review, the style guide). The
# rules those documents gave are written in docs/ (model.md, invariants.md, strategies.md,
# commands.md, import.md); cite the docs/ page and section instead, or state the rule in place.
#
# Exits 1 listing every offending line as FILE:LINE:TEXT, 0 when there is none. Run by ctest as
# structure.citations. Usage: scripts/check-citations.sh [REPO_DIR]
#
# What is allowed, explicitly:
#   - reading data under ../shared/data (the real transcripts live there): a match that lies
#     inside a path ../shared/data/..., $CTXFOLD_TRANSCRIPTS/... or CTXFOLD_TRANSCRIPTS_DIR... is
#     not a citation;
#   - the word "provenance" (a summary's metadata field) and fuzz/seeds/ (the fuzzers' own corpus
#     in this repository): the patterns below match the document PROVENANCE.md and the seeds
#     directory of ../shared only;
#   - this script itself, which has to spell the patterns.
set -uo pipefail
repo=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$repo" || exit 2

# Citations, as Perl regular expressions (grep -P). Case-sensitive: the document names, and the
# field case ids C01..C29 as they were cited ("(C05)", "C13:", "C03_Name").
names='PRODUCT\.md|PRODUCT §|FIELD_CASES|FORMATS\.md|FORMATS §|PROVENANCE\.md|ARCHITECTURE_REVIEW|STYLE\.md|shared/seeds|shared/cases|(?<![A-Za-z0-9+])C[0-2][0-9](?![0-9A-Fa-f])'
# Case-insensitive: the ways the design documents and field cases were cited in prose: seed 000,
# seeds 000, Seed 002's; (seed 1); seeds/... as a path of its own (not fuzz/seeds/, not
# $dir/seeds/); "the seed(s)" meaning the design documents; a field case.
prose='(?<![\w-])seeds? [0-9]{3}(?![0-9])|\(seed [0-9]\)|(?<![\w/.$-])seeds/|\bthe seeds?\b(?! of| for| [0-9])|\bseed'"'"'s\b|\bfield cases?\b'
# Paths that only read data: removed from a line before it is checked.
data_path='(\.\./shared/data/|\$\{?CTXFOLD_TRANSCRIPTS\}?/?|CTXFOLD_TRANSCRIPTS_DIR)[^[:space:]"'"'"'`),;]*'

self=scripts/check-citations.sh
list_files() {
  if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$repo" ls-files -z
  else
    find . -type f -not -path './.git/*' -not -path './build*' -printf '%P\0'
  fi | grep -zvE "^${self}\$|\.(png|gz)\$|package-lock\.json\$"
}

# Candidate lines (FILE:LINE:TEXT, binary files skipped), then the data paths taken out of each
# and the line checked again.
offenders=$(
  { list_files | xargs -0 grep -HnIP -- "$names" 2>/dev/null
    list_files | xargs -0 grep -HniIP -- "$prose" 2>/dev/null; } | sort -t: -k1,1 -k2,2n -u |
    while IFS= read -r hit; do
      text=${hit#*:*:}
      stripped=$(printf '%s\n' "$text" | sed -E "s#${data_path}##g")
      if printf '%s\n' "$stripped" | grep -qP -- "$names" ||
         printf '%s\n' "$stripped" | grep -qiP -- "$prose"; then
        printf '%s\n' "$hit"
      fi
    done
)

if [ -n "$offenders" ]; then
  printf '%s\n' "$offenders"
  echo "check-citations: $(printf '%s\n' "$offenders" | wc -l) line(s) above cite documents outside the" \
    "repository; cite the docs/ page and section instead, or state the rule in place" >&2
  exit 1
fi
echo "check-citations: no citation of a document outside the repository"
exit 0
