#include "store/db.hpp"

#include <sys/stat.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <vector>

#include "store/map_vfs.hpp"
#include "store/pg.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

/// The tables a statement reads or writes: the names after FROM, JOIN, INTO and UPDATE, in order,
/// once each. A plain scan of the SQL text, good enough for error messages.
std::vector<std::string> tables_of(std::string_view sql) {
  std::vector<std::string> words;
  std::string w;
  auto flush = [&] {
    if (!w.empty()) words.push_back(std::move(w));
    w.clear();
  };
  for (char c : sql) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') w += c;
    else flush();
  }
  flush();
  auto lower = [](std::string t) {
    for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return t;
  };
  std::vector<std::string> out;
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string k = lower(words[i]);
    if (k != "from" && k != "join" && k != "into" && k != "update") continue;
    const std::string t = words[i + 1];
    const std::string lt = lower(t);
    if (lt == "select" || lt == "with" || lt == "values" || std::isdigit(static_cast<unsigned char>(t[0]))) continue;
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  return out;
}

/// "table nodes" / "tables nodes, covers" for the tables `sql` names; empty when it names none.
std::string tables_phrase(std::string_view sql) {
  auto t = tables_of(sql);
  if (t.empty()) return {};
  return fmt::format("{} {}", t.size() == 1 ? "table" : "tables", fmt::join(t, ", "));
}

std::string db_path_of(sqlite3* db) {
  const char* f = db ? sqlite3_db_filename(db, "main") : nullptr;
  return f && *f ? f : ":memory:";
}

/// The Error for a statement that names a schema object the file lacks (SQLite's "no such table:
/// X", "no such column: C", "no such index: I"), or nullopt for another message.
std::optional<Error> missing_object(sqlite3* db, const std::string& msg, std::string_view sql) {
  for (const char* what : {"table", "column", "index"}) {
    const std::string prefix = fmt::format("no such {}: ", what);
    if (msg.rfind(prefix, 0) != 0) continue;
    const std::string name = msg.substr(prefix.size());
    std::string detail = fmt::format("{} {} is missing", what, name);
    if (std::string_view(what) == "column")
      if (auto t = tables_phrase(sql); !t.empty()) detail = fmt::format("{} has no column {}", t, name);
    return Error(Exit::bad_input, "db.damaged", fmt::format("'{}' is damaged: {}", db_path_of(db), detail),
                 kDamagedDatabaseHint);
  }
  return std::nullopt;
}

/// Throws the Error for a failed SQLite call: "WHAT: MESSAGE", the message being `message` when
/// given (sqlite3_exec's own), else the connection's. `sql` is the statement's text, to name the
/// tables of a damaged file.
[[noreturn]] void fail(sqlite3* db, int rc, std::string_view what, std::string message = {}, std::string_view sql = {}) {
  int code = rc & 0xff;
  std::string msg = !message.empty() ? std::move(message) : db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
    throw Error(Exit::environment, "db.locked", fmt::format("database is locked ({})", what),
                "another ctxfold process is writing; retry");
  if (code == SQLITE_NOTADB)
    throw Error(Exit::bad_input, "db.not_ctxfold", fmt::format("not a ctxfold database: {}", msg));
  if (code == SQLITE_CORRUPT || (code == SQLITE_ERROR && msg.rfind("malformed database schema", 0) == 0)) {
    std::string where = tables_phrase(sql);
    throw Error(Exit::bad_input, "db.corrupt",
                fmt::format("'{}' is damaged: {}{}", db_path_of(db), msg, where.empty() ? "" : " (reading " + where + ")"),
                kDamagedDatabaseHint);
  }
  if (code == SQLITE_ERROR)
    if (auto e = missing_object(db, msg, sql)) throw *e;
  if (code == SQLITE_CANTOPEN || code == SQLITE_IOERR || code == SQLITE_FULL || code == SQLITE_READONLY ||
      code == SQLITE_PERM)
    throw Error(Exit::environment, "db.io", fmt::format("{}: {}", what, msg));
  if (code == SQLITE_CONSTRAINT)
    throw Error(Exit::bad_input, "db.constraint", fmt::format("{}: {}", what, msg));
  throw Error(Exit::internal, "db.error", fmt::format("{}: {}", what, msg));
}

}  // namespace

Stmt::Stmt(sqlite3* db, std::string_view sql) : db_(db) {
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), 0, &st_, &tail);
  if (rc != SQLITE_OK) fail(db, rc, "prepare", {}, sql);
  // Like fossil's db_prepare: surplus SQL after the first statement is a bug.
  while (tail && *tail && (*tail == ' ' || *tail == '\n' || *tail == '\t' || *tail == ';')) ++tail;
  if (tail && *tail) throw Error(Exit::internal, "db.surplus_sql", fmt::format("surplus SQL: {}", tail));
}

Stmt::Stmt(pg::Conn& conn, std::string_view sql) : pg_(new pg::Query(conn, sql)) {}

Stmt::~Stmt() {
  if (st_) sqlite3_finalize(st_);
  delete pg_;
}

Stmt& Stmt::bind(int i, std::int64_t v) {
  if (pg_) [[unlikely]] {
    pg_->bind_int(i, v);
    return *this;
  }
  if (int rc = sqlite3_bind_int64(st_, i, v); rc != SQLITE_OK) fail(db_, rc, "bind");
  return *this;
}
Stmt& Stmt::bind(int i, std::string_view v) {
  if (pg_) [[unlikely]] {
    pg_->bind_text(i, v);
    return *this;
  }
  if (int rc = sqlite3_bind_text64(st_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8); rc != SQLITE_OK)
    fail(db_, rc, "bind");
  return *this;
}
Stmt& Stmt::bind(int i, const std::optional<std::string>& v) {
  return v ? bind(i, std::string_view(*v)) : bind_null(i);
}
Stmt& Stmt::bind_blob(int i, std::string_view v) {
  if (pg_) [[unlikely]] {
    pg_->bind_bytes(i, v);
    return *this;
  }
  // An empty view may have no data pointer, which SQLite would bind as NULL.
  const int rc = v.empty() ? sqlite3_bind_zeroblob(st_, i, 0) : sqlite3_bind_blob64(st_, i, v.data(), v.size(), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) fail(db_, rc, "bind");
  return *this;
}
Stmt& Stmt::bind_null(int i) {
  if (pg_) [[unlikely]] {
    pg_->bind_null(i);
    return *this;
  }
  if (int rc = sqlite3_bind_null(st_, i); rc != SQLITE_OK) fail(db_, rc, "bind");
  return *this;
}

bool Stmt::step() {
  if (pg_) [[unlikely]] return pg_->step();
  int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  const char* sql = sqlite3_sql(st_);
  fail(db_, rc, "step", {}, sql ? std::string_view(sql) : std::string_view());
}

Stmt& Stmt::stream(int rows) {
  if (pg_) pg_->stream(rows);
  return *this;
}

void Stmt::reset() {
  if (pg_) [[unlikely]] return pg_->reset();
  sqlite3_reset(st_);
  sqlite3_clear_bindings(st_);
}

std::int64_t Stmt::int64(int col) const {
  if (pg_) [[unlikely]] return pg_->int64(col);
  return sqlite3_column_int64(st_, col);
}
std::string Stmt::text(int col) const {
  if (pg_) [[unlikely]] return std::string(pg_->view(col));
  auto p = reinterpret_cast<const char*>(sqlite3_column_text(st_, col));
  return p ? std::string(p, sqlite3_column_bytes(st_, col)) : std::string();
}
std::string_view Stmt::view(int col) const {
  if (pg_) [[unlikely]] return pg_->view(col);
  auto p = reinterpret_cast<const char*>(sqlite3_column_text(st_, col));
  return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(st_, col))) : std::string_view();
}
std::string_view Stmt::blob(int col) const {
  if (pg_) [[unlikely]] return pg_->bytes(col);
  auto p = static_cast<const char*>(sqlite3_column_blob(st_, col));
  return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(st_, col))) : std::string_view();
}
std::optional<std::string> Stmt::opt_text(int col) const {
  if (is_null(col)) return std::nullopt;
  return text(col);
}
std::optional<std::int64_t> Stmt::opt_int64(int col) const {
  if (is_null(col)) return std::nullopt;
  return int64(col);
}
bool Stmt::is_null(int col) const {
  if (pg_) [[unlikely]] return pg_->is_null(col);
  return sqlite3_column_type(st_, col) == SQLITE_NULL;
}

bool is_server_url(std::string_view path) { return pg::is_url(path); }

Db::Db(const std::string& path, bool read_only, bool immutable) : read_only_(read_only), path_(path) {
  if (pg::is_url(path)) {
    path_ = pg::redact(path);
    pg_ = new pg::Conn(path, read_only);
    return;
  }
  // A tidy reader (docs/commands.md "Reading never writes"): without a -wal file beside the
  // database nobody is writing it, so a reader opens it with SQLITE_OPEN_READWRITE, never creating
  // it (SQLite falls back to reading a write-protected file) and query_only (store.cpp), so that
  // closing this last connection removes the -wal and -shm files SQLite needs for the read (see
  // ~Db). With a -wal file they are a writer's: open read-only and leave them.
  std::error_code ec;
  const bool tidy = read_only && !immutable && path != ":memory:" && !std::filesystem::exists(path + "-wal", ec);
  int flags = read_only && !tidy ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (!read_only) flags |= SQLITE_OPEN_CREATE;
  std::string name = path;
  if (immutable) {
    // file: URI with immutable=1: no locks, no -wal/-shm; only for a file nobody can write.
    std::string escaped;
    for (char c : path) {
      if (c == '%' || c == '?' || c == '#') escaped += fmt::format("%{:02X}", static_cast<unsigned char>(c));
      else escaped += c;
    }
    name = "file:" + escaped + "?immutable=1";
    flags |= SQLITE_OPEN_URI;
  }
  // Read-only connections go through the mapping VFS (a pass-through until a scan turns its
  // whole-file mapping on: lib/store/map_vfs.hpp).
  int rc = sqlite3_open_v2(name.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, read_only ? map_vfs_name() : nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(Exit::environment, "db.open", fmt::format("cannot open database '{}': {}", path, msg),
                read_only ? "check the --db path; read commands never create a database" : "");
  }
  sqlite3_busy_timeout(db_, 5000);
  sqlite3_extended_result_codes(db_, 1);
}

Db::~Db() {
  if (pg_) pg_->closing();  // the cached statements' prepared statements end with the session
  cache_.clear();
  if (pg_) {
    delete pg_;  // closing the connection ends (rolls back) an open transaction
    return;
  }
  if (!db_) return;
  // A read-only store holds one read transaction for its lifetime (store.cpp finish_read_only).
  if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  if (read_only_ && sqlite3_db_readonly(db_, "main") == 0) {
    // A tidy reader: closing it as the last connection checkpoints and removes the -wal and -shm
    // files. When a writer put frames in the WAL meanwhile, the checkpoint would write them into
    // the database file: a reader never does, so it leaves the files to their writer.
    const char* wal = sqlite3_filename_wal(sqlite3_db_filename(db_, "main"));
    struct stat sb {};
    if (wal && ::stat(wal, &sb) == 0 && sb.st_size > 0)
      sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  }
  sqlite3_close_v2(db_);
}

Stmt Db::prepare_scan(std::string_view sql) {
  Stmt st = prepare(sql);
  st.stream(kScanBatchRows);
  return st;
}

Stmt& Db::cached(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) it = cache_.emplace(sql, std::make_unique<Stmt>(prepare(sql))).first;
  it->second->reset();
  return *it->second;
}

void Db::exec(std::string_view sql) {
  schema_names_.reset();  // the statements may create or drop relations
  if (pg_) return pg_->exec(sql);
  std::string s(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : "";
    sqlite3_free(err);
    fail(db_, rc, "exec", std::move(msg), sql);
  }
}

bool Db::has_schema_object(std::string_view name) {
  if (pg_) {
    if (!schema_names_) {
      std::unordered_set<std::string> names;
      Stmt q = prepare("SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace s "
                       "ON s.oid = c.relnamespace WHERE s.nspname = current_schema()");
      while (q.step()) names.insert(q.text(0));
      schema_names_ = std::move(names);
    }
    return schema_names_->count(std::string(name)) > 0;
  }
  Stmt& q = cached("SELECT 1 FROM sqlite_master WHERE name=?1");
  ResetOnExit reset(q);
  q.bind(1, name);
  return q.step();
}

std::int64_t Db::user_version() {
  if (pg_ && !has_schema_object("ctxfold_schema")) return 0;
  Stmt st = prepare(pg_ ? "SELECT version FROM ctxfold_schema WHERE id = 1" : "PRAGMA user_version");
  return st.step() ? st.int64(0) : 0;
}

void Db::set_user_version(std::int64_t v) {
  if (!pg_) return exec(fmt::format("PRAGMA user_version={}", v));
  exec(fmt::format("INSERT INTO ctxfold_schema(id, version) VALUES (1, {}) "
                   "ON CONFLICT (id) DO UPDATE SET version = excluded.version", v));
}

bool Db::schema_empty() {
  Stmt st = prepare(pg_ ? "SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace s ON "
                          "s.oid = c.relnamespace WHERE s.nspname = current_schema() AND c.relkind IN ('r','v','i','S','m','p')"
                        : "SELECT count(*) FROM sqlite_master");
  st.step();
  return st.int64(0) == 0;
}

std::int64_t Db::last_insert_id() { return pg_ ? pg_->last_insert_id() : sqlite3_last_insert_rowid(db_); }

std::int64_t Db::changes() { return pg_ ? pg_->changes() : sqlite3_changes(db_); }

void Db::begin_read_snapshot() {
  if (pg_) return exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  exec("PRAGMA query_only=ON");
  exec("BEGIN");
}

std::string Db::quick_check() {
  if (pg_) return "ok";
  Stmt st = prepare("PRAGMA quick_check(1)");
  return st.step() ? st.text(0) : std::string("no answer");
}

bool Db::in_transaction() const { return pg_ ? pg_->in_transaction() : sqlite3_get_autocommit(db_) == 0; }

void Db::commit_quietly() noexcept {
  schema_names_.reset();
  if (pg_) return pg_->exec_quietly("COMMIT");
  if (db_) sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
}

void Db::rollback_quietly() noexcept {
  schema_names_.reset();
  if (pg_) return pg_->exec_quietly("ROLLBACK");
  if (db_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

/// The key of the advisory lock every server write transaction takes ("ctxf" in ASCII): one
/// writer at a time per database, as SQLite's BEGIN IMMEDIATE gives.
constexpr std::int64_t kWriterLock = 0x63747866;

/// Run by a server writer once it holds the lock: the nodes' sequence restarts just past the
/// largest seq stored. A sequence hands out values outside transactions, so an insert rolled back
/// (a failed or killed import, a refused append) would leave a gap that invariant I1 rightly
/// reads as a vanished node; writers take turns, so the next seq is max(seq) + 1 as with SQLite's
/// AUTOINCREMENT, whose counter rolls back with the transaction. Nothing is done in a database
/// without ctxfold's schema (a new one, or another application's).
constexpr const char* kNodeSeqFromMax =
    "DO $$ BEGIN IF to_regclass('ctxfold_schema') IS NOT NULL AND to_regclass('nodes') IS NOT NULL THEN "
    "PERFORM setval(pg_get_serial_sequence('nodes', 'seq'), coalesce((SELECT max(seq) FROM nodes), 0) + 1, false); "
    "END IF; END $$";

Txn::Txn(Db& db) : db_(db) {
  if (!db_.pg_) {
    db_.exec("BEGIN IMMEDIATE");
    return;
  }
  try {
    // One round trip: the simple query protocol runs the three in order and stops at an error.
    db_.exec(fmt::format("BEGIN; SELECT pg_advisory_xact_lock({}); {}", kWriterLock, kNodeSeqFromMax));
  } catch (...) {
    db_.rollback_quietly();
    throw;
  }
}
Txn::~Txn() {
  if (!done_) db_.rollback_quietly();
}
void Txn::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace ctxfold
