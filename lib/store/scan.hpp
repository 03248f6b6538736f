#pragma once
// What a command that checks or scans a whole database asks of its engine (verify-invariants,
// grep): the engine's own integrity findings, the seq high-water mark, a mapping for the scan, a
// second connection reading the same snapshot, the database's printable name, the BLOB columns of
// a row read into the caller's buffer, and the engine's own trigram index for LIKE. Each works on
// both engines (docs/backends.md); the caller never asks which one it has.

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
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

/// How a progress line names database `path` in a few characters: a file's name without its
/// folder, a server database's name (the URL's path, else its dbname parameter, else the URL as
/// shown_database gives it).
std::string database_label(const std::string& path);

/// How a command ctxfold prints for later runs (a hook's settings, the recall commands of its
/// re-injected context) names database `path`: a server URL without its password (pg.hpp
/// without_password; the password is not written into a settings file or a model's context), a
/// file's path made absolute and normal.
std::string runnable_database(const std::string& path);

/// The reads of one pass over most of the database (grep's cold scan), set up for the scope's
/// lifetime and undone at its end. A read-only SQLite connection reads ahead (64 KiB per pread(2),
/// store/map_vfs.hpp read_ahead) with a 16-page cache, so pages read once recycle a few cache
/// slots instead of growing the 16 MiB cache a fresh slot at a time (each fresh slot a page fault:
/// 64 pages of 16 KiB cost ~190 faults more than 16, bench/README.md "Cold grep: page faults, not
/// bytes"); a read-write one maps the
/// file (SQLite's mmap, up to 4 GiB). A server needs nothing: its rows arrive over the connection.
class ScanReads {
 public:
  explicit ScanReads(Db& db);
  ~ScanReads();
  ScanReads(const ScanReads&) = delete;
  ScanReads& operator=(const ScanReads&) = delete;

 private:
  Db& db_;
  bool reading_ahead_ = false;
  std::int64_t cache_size_ = -2000;  // PRAGMA cache_size before, restored at the end
};

/// Reads several BLOB columns of one row at a time (the arrays of a text pack) into one buffer
/// the caller supplies, without a column copy per row: SQLite's incremental BLOB handles, reopened
/// on the next row; a server's bytea columns, decoded. The row is named by its integer key
/// (`key`: SQLite's rowid alias; the server's primary key column).
class RowBlobs {
 public:
  /// What read() found.
  enum class Found { row, no_row, not_blob };
  RowBlobs(Db& db, std::string table, std::string key, std::vector<std::string> columns);
  ~RowBlobs();
  RowBlobs(const RowBlobs&) = delete;
  RowBlobs& operator=(const RowBlobs&) = delete;
  /// Reads the columns of row `id`: `buffer(total)` gives room for all of them (called once, total
  /// the sum of their sizes), and `out[i]` is set to column i's bytes in it. not_blob: a column
  /// holds no BLOB (a row some other writer made); no_row: no such row. I/O errors throw
  /// Error(environment, "db.io").
  Found read(std::int64_t id, const std::function<char*(std::size_t)>& buffer, std::vector<std::string_view>& out);

 private:
  struct Impl;
  Db& db_;
  std::string table_, key_;
  std::vector<std::string> columns_;
  Impl* impl_ = nullptr;
};

/// Whether the engine has a trigram index of its own that answers `column LIKE '%literal%'` from
/// an index (PostgreSQL's pg_trgm with a GIN index, docs/backends.md "grep on a server"). SQLite:
/// false (its grep index is FTS5's trigram tokenizer, lib/recall/text_index.hpp).
bool like_index_supported(Db& db);

/// The name grep reports for that index ("pg_trgm"; empty without one).
std::string like_index_name(Db& db);

/// Creates the engine's trigram index `name` on table(column) for LIKE (like_index_supported),
/// and the pg_trgm extension first when the database lacks it. Run inside a write transaction.
/// Errors: Error(environment, "index.pg_trgm") when the server has no pg_trgm extension
/// installed, or when this role may not create it (its hint says what an administrator runs);
/// Error(usage, "index.engine") on an engine without one.
void create_like_index(Db& db, std::string_view name, std::string_view table, std::string_view column);

/// `text` as a LIKE pattern that matches exactly the strings holding it: `%`, `_` and the escape
/// character `\` escaped with `\` (use it with `ESCAPE '\'`), and `%` on both sides.
std::string like_contains_pattern(std::string_view text);

}  // namespace ctxfold
