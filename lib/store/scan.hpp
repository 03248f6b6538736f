#pragma once
// What a command that checks or scans a whole database asks of its engine (verify-invariants):
// the engine's own integrity findings, the seq high-water mark, a mapping for the scan, a second
// connection reading the same snapshot, and the database's printable name. Each works on both
// engines (docs/backends.md); the caller never asks which one it has.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/db.hpp"

namespace ctxfold {

/// The engine's own findings about the database, empty when it finds nothing (verify-invariants
/// I11, docs/invariants.md "I11"). SQLite: PRAGMA integrity_check (quick_check when quick) and
/// the foreign keys of every table. A server, which checks its own pages as it reads them and
/// enforces the keys on write: the data page checksum failures it counted, the append-only
/// triggers of the ledger present and enabled, and the declared keys re-checked (rows written
/// while its triggers were off). Cost: SQLite reads every page; a server one anti-join per key.
std::vector<std::string> integrity_findings(Db& db, bool quick);

/// The highest seq ever handed to a node, vanished or not (SQLite's sqlite_sequence row for
/// nodes), or nullopt when the engine keeps no such mark: a server's sequence also counts values
/// of rolled-back inserts, so it proves nothing (docs/invariants.md "I11").
std::optional<std::int64_t> node_seq_high_water(Db& db);

/// Prepares a read-only connection for a scan of the whole database: on SQLite a page read that
/// continues the previous one fetches the next 64 KiB with one pread(2) (store/map_vfs.hpp
/// read_ahead) into a 16 MiB page cache, not a map of the file, whose touched pages would all count
/// in the process's RSS (bench/README.md "Memory", fifth pass); a server needs nothing. A
/// read-write connection is left as it is.
void read_for_scan(Db& db);

/// The snapshot read-only connection `db` reads, as an id another connection can import
/// (pg_export_snapshot) when `db` is a server's; empty for SQLite, where each connection keeps the
/// snapshot its first read took. Call it from the thread that uses `db`.
std::string export_read_snapshot(Db& db);

/// Makes read-only connection `db` read the snapshot `id` (export_read_snapshot) from now on: a
/// server's SET TRANSACTION SNAPSHOT, so two threads of one check see one state whatever writers
/// commit meanwhile. Nothing when `id` is empty or `db` is not a read-only server connection.
void import_read_snapshot(Db& db, const std::string& id);

/// Ends the read snapshot that statements still stepping on `db` hold (SQLite: cached statements
/// keep their last row, and BEGIN IMMEDIATE on a stale snapshot fails with SQLITE_BUSY_SNAPSHOT
/// once another process has appended, without waiting). A server's statements hold their rows in
/// memory and no snapshot outside a transaction: nothing to do.
void release_read_snapshots(Db& db);

/// How output and messages name database `path`: a server URL with its password replaced by
/// "***" (docs/backends.md "Pointing ctxfold at a server"), a file's path as given.
std::string shown_database(const std::string& path);

}  // namespace ctxfold
