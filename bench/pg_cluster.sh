# A throwaway PostgreSQL cluster for the bench/*.sh scripts that measure the server (source it
# after lib.sh and bench_workdir; not a benchmark itself).
#
# pg_cluster_start NAME   initdb + pg_ctl (Debian's postgresql, /usr/lib/postgresql/*/bin) in a new
#   temporary directory: a Unix socket only, trust authentication, the server's default settings
#   (fsync on); stopped and removed at exit, with $work unless --keep. NAME is the script's, for
#   messages. As root the cluster runs as `postgres` (or `nobody`): initdb refuses root. Sets
#   PG_BIN, PG_DIR, PGHOST/PGUSER/PGDATABASE (exported, for psql), postmaster (its pid).
# psql_ ARGS...           psql, no .psqlrc, stop on error.
# url_of DB               the ctxfold URL of database DB.
# server_cpu              seconds of CPU the cluster's processes used so far: the postmaster's own
#   and its reaped children's (a backend's time is added when its client disconnects), plus the
#   live children's (checkpointer, WAL writer, a sampler's backend).
pg_cluster_start() {
  local name=$1 owner
  PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ] ||
    { echo "$name: no PostgreSQL server binaries (scripts/deps.sh installs postgresql)" >&2; exit 4; }
  PG_DIR=$(mktemp -d /tmp/ctxfold-pgbench.XXXXXX)   # short: a socket path must fit in 107 bytes
  pg_run=()
  if [ "$(id -u)" = 0 ]; then
    if id postgres >/dev/null 2>&1; then owner=postgres; else owner=nobody; fi
    chown "$owner" "$PG_DIR"; chmod 755 "$PG_DIR"
    pg_run=(runuser -u "$owner" --)
  fi
  trap 'pg_cluster_stop; [ "$keep" = 1 ] || rm -rf "$work"' EXIT
  "${pg_run[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U ctxfold --auth=trust -E UTF8 --locale=C.UTF-8 >"$PG_DIR/initdb.log" 2>&1 ||
    { cat "$PG_DIR/initdb.log" >&2; exit 4; }
  "${pg_run[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w \
    -o "-c listen_addresses='' -c unix_socket_directories='$PG_DIR'" start >/dev/null ||
    { cat "$PG_DIR/server.log" >&2; exit 4; }
  export PGHOST=$PG_DIR PGUSER=ctxfold PGDATABASE=postgres
  postmaster=$(head -1 "$PG_DIR/data/postmaster.pid")
}
pg_cluster_stop() {
  "${pg_run[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
}
psql_() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }
url_of() { echo "postgresql://ctxfold@/$1?host=$PG_DIR"; }
server_cpu() {
  python3 - "$postmaster" "$(getconf CLK_TCK)" <<'PY'
import os, sys
pm, tck = sys.argv[1], int(sys.argv[2])
def fields(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()
t = sum(int(x) for x in fields(pm)[11:15])   # utime stime cutime cstime
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            f = fields(p)
            if f[1] == pm: t += int(f[11]) + int(f[12])
        except OSError:
            pass
print(t / tck)
PY
}
