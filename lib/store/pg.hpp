#pragma once
// The PostgreSQL engine behind Db and Stmt (docs/backends.md). Internal to lib/store: nothing
// above it includes this header or libpq's; db.hpp's Db and Stmt dispatch to it when the
// database is a postgresql:// or postgres:// URL.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct pg_conn;    // libpq's PGconn
struct pg_result;  // libpq's PGresult

namespace ctxfold::pg {

/// Whether `path` names a server database: it starts with postgresql:// or postgres://.
bool is_url(std::string_view path);

/// The URL with its password (the user-info part after ':' and any password= parameter) replaced
/// by "***", for every message that names the database. Other URLs are returned unchanged.
std::string redact(std::string_view url);

/// The URL with its password taken out (the user info's ":PASSWORD", a password= parameter), for a
/// command ctxfold writes for someone else to run: libpq then reads the password from PGPASSWORD or
/// ~/.pgpass (docs/backends.md "Pointing ctxfold at a server"). Other URLs are returned unchanged.
std::string without_password(std::string_view url);

/// `sql` written once for both engines, as PostgreSQL takes it: ?N placeholders become $N, and
/// SQLite's planner hint `INDEXED BY name` is dropped, and its join-order hint `CROSS JOIN` is
/// sent as JOIN. Quoted strings and identifiers are kept as they are. `params` is set to the largest placeholder number.
std::string translate(std::string_view sql, int& params);

/// How many executions of one Query run as one-shot statements before the next prepares it on the
/// server (pgJDBC's prepareThreshold has this role): a statement run once or twice pays no round
/// trips to prepare and deallocate it.
inline constexpr int kPrepareAfter = 2;

/// One connection (libpq, blocking). Errors: Error(environment, "db.open") when the server cannot
/// be reached or refuses the login; the message names the redacted URL.
class Conn {
 public:
  Conn(const std::string& url, bool read_only);
  ~Conn();
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  /// Runs one or more statements without parameters (the simple query protocol).
  void exec(std::string_view sql);
  /// Runs `sql` and ignores any error (ROLLBACK in destructors).
  void exec_quietly(const char* sql) noexcept;
  /// Whether a transaction is open (BEGIN without its COMMIT or ROLLBACK yet).
  bool in_transaction() const;
  /// The value of the last nextval() of this session (lastval()): the seq of the row just inserted.
  std::int64_t last_insert_id();
  /// Rows changed by the connection's last INSERT, UPDATE or DELETE.
  std::int64_t changes() const { return changes_; }
  /// Marks the connection as about to close: the statements destroyed from now on leave their
  /// server-side prepared statements to the end of the session rather than deallocate each.
  void closing() { closing_ = true; }
  const std::string& url() const { return url_; }
  pg_conn* handle() const { return conn_; }

  /// Throws the Error for a failed command: SQLSTATE classes mapped to the exit codes of
  /// docs/commands.md (connection: environment; integrity and the ledger's triggers: bad input;
  /// a missing table or column: db.damaged). `sql` names the tables of a damaged database.
  [[noreturn]] void fail(pg_result* res, std::string_view what, std::string_view sql) const;

 private:
  friend class Query;
  pg_conn* conn_ = nullptr;
  std::string url_;         // redacted
  std::string password_;    // scrubbed from the server's messages
  std::int64_t changes_ = 0;
  /// Deallocates the stale prepared statements in one round trip when no transaction is open (a
  /// DEALLOCATE that fails, as through a pooler that renames statements, would abort one).
  void release_stale();
  std::int64_t statements_ = 0;  // server-side prepared statements named so far (ctxfold_N)
  std::int64_t cursors_ = 0;     // cursors declared so far (ctxfold_cN)
  std::vector<std::string> stale_;  // prepared statements of destroyed Queries, not deallocated yet
  bool closing_ = false;
};

/// One statement with parameters, executed by the first step() after binding; the result's rows are
/// held in memory until reset() (so statements may interleave on one connection, as with SQLite).
/// The first kPrepareAfter executions are one PQexecParams each (parse, plan and run in one round
/// trip); from then on the statement is a server-side prepared statement of the connection, one per
/// set of parameter types bound (PQprepare once, named ctxfold_N, then PQexecPrepared):
/// a statement run once per row (Db::cached's, an insert in a loop) is parsed once, not per row
/// (docs/backends.md "Round trips"). A prepared statement outlives a rolled-back transaction (the
/// server's are not transactional). When the Query is destroyed its prepared statements are
/// deallocated at the next prepare outside a transaction (Conn::release_stale), or end with the
/// session.
class Query {
 public:
  Query(Conn& conn, std::string_view sql);
  ~Query();
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;

  void bind_text(int i, std::string_view v);
  void bind_int(int i, std::int64_t v);
  void bind_bytes(int i, std::string_view v);
  void bind_null(int i);
  bool step();
  /// Forgets the result and the bindings (and closes the statement's cursor, stream()).
  void reset();
  /// Reads the rows through a server-side cursor, `rows` at a time (DECLARE ... NO SCROLL CURSOR,
  /// then FETCH FORWARD rows per batch), so a scan over a whole session holds one batch in memory,
  /// not its whole result (libpq keeps a result's rows until it is cleared). Only inside a
  /// transaction (a cursor ends with it; a read-only store's snapshot is one); outside one the
  /// statement runs whole as before. Nothing may commit while the scan runs.
  void stream(int rows) { batch_ = rows; }

  /// Integer value of a column (a boolean reads as 1 or 0, NULL as 0, a decimal as its integer part).
  std::int64_t int64(int col) const;
  std::string_view view(int col) const;
  /// A bytea column's bytes (decoded from the text form into a buffer valid until the next read).
  std::string_view bytes(int col) const;
  bool is_null(int col) const;

 private:
  void set(int i, std::optional<std::string> v, unsigned type, int format);
  /// The name of the server-side statement for the bound parameter types, prepared now when past
  /// kPrepareAfter executions; nullptr while the statement runs unprepared.
  const char* prepared_name();
  Conn& conn_;
  std::string sql_;
  int params_ = 0;
  int executions_ = 0;  // since construction, all parameter types together
  std::vector<std::pair<std::vector<unsigned>, std::string>> prepared_;  // parameter types -> name
  std::vector<std::optional<std::string>> values_;
  std::vector<unsigned> types_;
  std::vector<int> formats_;
  /// The next batch of the open cursor (stream()); false when the cursor has no more rows.
  bool fetch();
  void close_cursor() noexcept;
  pg_result* res_ = nullptr;
  int row_ = -1;
  int rows_ = 0;
  int batch_ = 0;       // stream(): rows per FETCH; 0 runs the statement whole
  std::string cursor_;  // the open cursor's name while a streamed scan runs
  mutable std::string buffer_;
};

}  // namespace ctxfold::pg
