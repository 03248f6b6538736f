#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace ctxfold {

namespace pg {
class Conn;
class Query;
}  // namespace pg

/// The hint of every error that finds the database file damaged (a missing table or column, a
/// stored JSON column that does not parse): docs/invariants.md says what verify reports.
inline constexpr const char* kDamagedDatabaseHint =
    "`ctxfold verify-invariants` reports what is wrong; restore the database from a backup";

/// Rows a server scan (Db::prepare_scan) fetches per round trip: a few MB of node rows.
inline constexpr int kScanBatchRows = 256;

/// Move-only prepared statement. Bind by 1-based index; reads of NULL columns give nullopt.
/// step() returns true while a row is available; errors throw Error (exit codes and names: db.cpp fail).
/// The SQL is written once for both engines (docs/backends.md "Writing SQL for both engines"):
/// on a server database ?N placeholders are sent as $N (store/pg.hpp translate).
/// One engine per statement, tagged by which handle is set: a SQLite read is one branch away
/// from the sqlite3_column_* call, no virtual call.
class Stmt {
 public:
  Stmt(sqlite3* db, std::string_view sql);
  Stmt(pg::Conn& conn, std::string_view sql);
  ~Stmt();
  Stmt(Stmt&& o) noexcept : db_(o.db_), st_(o.st_), pg_(o.pg_) {
    o.st_ = nullptr;
    o.pg_ = nullptr;
  }
  Stmt& operator=(Stmt&&) = delete;
  Stmt(const Stmt&) = delete;

  Stmt& bind(int i, std::int64_t v);
  Stmt& bind(int i, std::string_view v);
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const std::optional<std::string>& v);
  Stmt& bind_null(int i);
  /// Binds bytes as a BLOB (no text affinity, no encoding).
  Stmt& bind_blob(int i, std::string_view v);

  bool step();
  void run() { while (step()) {} }
  /// Db::prepare_scan: on a server, the rows are fetched through a cursor `rows` at a time.
  Stmt& stream(int rows);
  void reset();

  std::int64_t int64(int col) const;
  std::string text(int col) const;
  /// The column's bytes without a copy; valid until the next step(), reset() or column read of
  /// another type.
  std::string_view view(int col) const;
  /// The column's bytes as a BLOB (sqlite3_column_blob: no NUL terminator added, no copy for
  /// a BLOB column); valid like view().
  std::string_view blob(int col) const;
  std::optional<std::string> opt_text(int col) const;
  std::optional<std::int64_t> opt_int64(int col) const;
  bool is_null(int col) const;

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* st_ = nullptr;
  pg::Query* pg_ = nullptr;  // owned; set instead of st_ on a server database
};

/// Resets a statement when the scope ends, ending its implicit read transaction.
class ResetOnExit {
 public:
  explicit ResetOnExit(Stmt& st) : st_(st) {}
  ~ResetOnExit() { st_.reset(); }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  Stmt& st_;
};

/// Whether `path` names a PostgreSQL database (postgresql://... or postgres://...) rather than a
/// SQLite file (docs/backends.md "Pointing ctxfold at a server").
bool is_server_url(std::string_view path);

/// Move-only connection. read_only never changes the file's bytes: SQLITE_OPEN_READONLY, or read-write
/// and query_only when no -wal file exists (db.cpp Db::Db); writers use WAL and a busy timeout.
/// A server URL (is_server_url) opens a libpq connection instead (docs/backends.md); the
/// statements and transactions below behave the same on both engines.
class Db {
 public:
  /// immutable (read-only only): open as an immutable file (no locking, WAL ignored), the
  /// fallback for a WAL database in a directory this process cannot write.
  Db(const std::string& path, bool read_only, bool immutable = false);
  ~Db();
  Db(Db&& o) noexcept
      : cache_(std::move(o.cache_)),
        db_(o.db_),
        pg_(o.pg_),
        read_only_(o.read_only_),
        path_(std::move(o.path_)),
        schema_names_(std::move(o.schema_names_)) {
    o.db_ = nullptr;
    o.pg_ = nullptr;
  }
  Db& operator=(Db&&) = delete;
  Db(const Db&) = delete;

  void exec(std::string_view sql);
  Stmt prepare(std::string_view sql) { return pg_ ? Stmt(*pg_, sql) : Stmt(db_, sql); }
  /// A statement for a scan whose rows together may be large (every node of a session with its
  /// content): on a server it reads through a cursor, kScanBatchRows rows at a time, inside the
  /// open transaction (a read-only store's snapshot, a writer's Txn; pg.hpp Query::stream), so the
  /// scan holds one batch, not the whole result; nothing may commit until it ends. SQLite already
  /// steps row by row: the same as prepare().
  Stmt prepare_scan(std::string_view sql);
  /// A prepared statement kept for the connection's lifetime (reset and unbound on each call),
  /// for hot single-row statements. Not for statements that may be stepped re-entrantly. Pair it
  /// with a ResetOnExit so no half-stepped statement keeps a read transaction (and an old WAL
  /// snapshot) open between calls.
  Stmt& cached(const std::string& sql);
  /// Whether the schema holds a table, index or view of this name (sqlite_master). Derived data
  /// (text index, cover spans, trigrams) is optional in databases opened read-only at an older
  /// schema, so its readers check first. On a server the names of the schema's relations are read
  /// in one query and kept until the next exec(), commit or rollback (which may change them), so
  /// the checks a command makes at open cost one round trip (docs/backends.md "Round trips").
  bool has_schema_object(std::string_view name);
  /// The SQLite handle, for lib/store's SQLite-only paths (page checks, read-ahead); null on a
  /// server database, where those paths have server counterparts (docs/backends.md).
  sqlite3* raw() const { return db_; }
  bool is_server() const { return pg_ != nullptr; }
  bool read_only() const { return read_only_; }
  /// The path the connection was opened with, as the user gave it (for messages); a server URL
  /// with its password redacted.
  const std::string& path() const { return path_; }
  /// The schema version: PRAGMA user_version, or on a server the row of table ctxfold_schema (0
  /// when there is none).
  std::int64_t user_version();
  void set_user_version(std::int64_t v);
  /// Whether the database holds no table, index or view at all (a new database).
  bool schema_empty();
  /// The seq (rowid) of the row the connection inserted last.
  std::int64_t last_insert_id();
  /// Rows changed by the connection's last INSERT, UPDATE or DELETE.
  std::int64_t changes();
  /// A read-only store's one snapshot for its lifetime: SQLite query_only and BEGIN; a server's
  /// BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY.
  void begin_read_snapshot();
  /// The whole-file check of the bulk writers (PRAGMA quick_check(1)): "ok" or SQLite's first
  /// finding; a server database answers "ok" (its own storage checks its pages).
  std::string quick_check();
  /// Whether a transaction is open on the connection (SQLite: not in autocommit mode; a server:
  /// BEGIN without its end), e.g. a read-only store's snapshot.
  bool in_transaction() const;
  /// Commits an open transaction, ignoring errors (destructors of read scopes).
  void commit_quietly() noexcept;
  /// Rolls back an open transaction, ignoring errors (destructors).
  void rollback_quietly() noexcept;

 private:
  friend class Txn;
  std::unordered_map<std::string, std::unique_ptr<Stmt>> cache_;  // destroyed before db_ closes
  sqlite3* db_ = nullptr;
  pg::Conn* pg_ = nullptr;  // owned; set instead of db_ for a server URL
  bool read_only_;
  std::string path_;
  std::optional<std::unordered_set<std::string>> schema_names_;  // a server's, while no exec() ran since
};

/// BEGIN IMMEDIATE ... COMMIT; rolls back in the destructor unless commit() ran. On a server:
/// BEGIN and a transaction-scoped advisory lock, so writers take turns as with SQLite's one
/// writer and seq grows in commit order.
class Txn {
 public:
  explicit Txn(Db& db);
  ~Txn();
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;
  void commit();

 private:
  Db& db_;
  bool done_ = false;
};

}  // namespace ctxfold
