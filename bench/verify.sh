#!/usr/bin/env bash
# verify-invariants against SQLite's own `PRAGMA integrity_check` on the same database file, in the
# same run (issue 6): target verify <= 3x integrity_check wall time, peak RSS < 64 MB at 10^6 nodes.
#
# usage: bench/verify.sh [--nodes 1e6] [--runs 3] [--no-build] [--work DIR] [--keep]
#   The database: ctxfold-gen --nodes N --compact-tail 50 --seed 1 (one compacted Claude Code
#   session, as bench/run.sh makes), imported once with `ctxfold import`; a database already in
#   --work (from --keep) is reused. Both tools run R times alternately on a warm page cache; the
#   best wall time of each is compared. Peak RSS from /usr/bin/time. Results: bench/out/verify.json.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
build=${BUILD_DIR:-$repo/build-bench}
nodes=1e6
runs=3
do_build=1
keep=0
work=""
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --work) work=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "bench/verify.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
n=$(python3 -c "import sys; print(int(float(sys.argv[1])))" "$nodes")
for tool in sqlite3 jq python3; do
  command -v "$tool" >/dev/null || { echo "bench/verify.sh: $tool is required" >&2; exit 4; }
done
[ -x /usr/bin/time ] || { echo "bench/verify.sh: /usr/bin/time is required (apt-get install time)" >&2; exit 4; }
if [ "$do_build" = 1 ]; then
  echo "== build (Release) in $build" >&2
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" --target ctxfold ctxfold-gen -j2 >/dev/null
fi
CTXFOLD=${CTXFOLD_BIN:-$build/ctxfold}
GEN=${CTXFOLD_GEN_BIN:-$build/bench/ctxfold-gen}
if [ -z "$work" ]; then work=$(mktemp -d "${TMPDIR:-/tmp}/ctxfold-verify.XXXXXX"); fi
mkdir -p "$work" "$here/out"
cleanup() { if [ "$keep" = 0 ]; then rm -rf "$work"; fi; }
trap cleanup EXIT

db=$work/n$n.db
if [ ! -s "$db" ]; then
  echo "== generate and import $n nodes into $db" >&2
  "$GEN" --nodes "$n" --compact-tail 50 --seed 1 -q -o "$work/n$n.jsonl"
  "$CTXFOLD" --db "$db" import "$work/n$n.jsonl" > /dev/null
  rm -f "$work/n$n.jsonl"
  # A read-only verify must find no WAL to replay: fold it into the main file like a closed writer.
  sqlite3 "$db" "PRAGMA wal_checkpoint(TRUNCATE);" > /dev/null
fi
db_bytes=$(stat -c %s "$db")
node_count=$(sqlite3 "$db" "SELECT count(*) FROM nodes")
cat "$db" > /dev/null   # warm page cache for both tools

# timed NAME CMD...: wall seconds, CPU seconds, peak RSS KB of one run -> "$NAME.tsv"
timed() {
  local name=$1; shift
  local tf=$work/time.txt
  local t0 t1 rc
  t0=$(date +%s%N)
  set +e
  /usr/bin/time -f "%M %U %S" -o "$tf" "$@" > "$work/$name.out" 2> "$work/$name.err"
  rc=$?
  set -e
  t1=$(date +%s%N)
  read -r rss u s < "$tf"
  echo "$(( (t1 - t0) / 1000 )) $(python3 -c "print($u+$s)") $rss $rc" >> "$work/$name.tsv"
}
rm -f "$work"/*.tsv
for ((r = 0; r < runs; r++)); do
  echo "== run $((r + 1))/$runs" >&2
  timed integrity sqlite3 "$db" "PRAGMA integrity_check"
  timed verify "$CTXFOLD" --db "$db" verify-invariants --all-sessions
  timed quick "$CTXFOLD" --db "$db" verify-invariants --all-sessions --quick
done
[ "$(cat "$work/integrity.out")" = ok ] || { echo "integrity_check: $(head -c 300 "$work/integrity.out")" >&2; exit 1; }
vok=$(jq -r .ok "$work/verify.out" 2>/dev/null || echo null)

python3 - "$work" "$n" "$node_count" "$db_bytes" "$vok" "$here/out/verify.json" <<'PY'
import json, sys
work, n, count, size, vok, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
def load(name):
    rows = [list(map(float, l.split())) for l in open(f"{work}/{name}.tsv")]
    return {"best_wall_s": min(r[0] for r in rows) / 1e6, "best_cpu_s": min(r[1] for r in rows),
            "peak_rss_kb": int(max(r[2] for r in rows)), "exit": int(max(r[3] for r in rows)), "runs": len(rows)}
res = {"nodes_requested": n, "nodes": count, "db_bytes": size, "verify_ok": vok,
       "integrity_check": load("integrity"), "verify": load("verify"), "verify_quick": load("quick")}
base = res["integrity_check"]["best_wall_s"]
res["ratio_verify"] = res["verify"]["best_wall_s"] / base
res["ratio_verify_quick"] = res["verify_quick"]["best_wall_s"] / base
json.dump(res, open(out, "w"), indent=1)
print(f"database: {count} nodes, {size/1e6:.0f} MB; verify ok: {vok}")
print(f"{'':24} {'wall s':>8} {'cpu s':>8} {'peak RSS MB':>12}  ratio (target <= 3)")
for k in ("integrity_check", "verify", "verify_quick"):
    r = res[k]
    ratio = r["best_wall_s"] / base
    print(f"{k:24} {r['best_wall_s']:8.2f} {r['best_cpu_s']:8.2f} {r['peak_rss_kb']/1024:12.1f}  {ratio:.2f}x")
PY
