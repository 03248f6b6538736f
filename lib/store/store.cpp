#include "store/store.hpp"
#include "model/view_kinds.hpp"


#include <fmt/format.h>

#include <string.h>

#include <chrono>
#include <filesystem>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "store/node_cache.hpp"
#include "model/strategy_label.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace ctxfold {

std::vector<std::string_view> embedded_schema();     // generated from share/schema/*.sql
std::vector<std::string_view> embedded_pg_schema();  // generated from share/schema/pg/*.sql

std::int64_t schema_version() { return static_cast<std::int64_t>(embedded_schema().size()); }

namespace {
/// The migrations of the database's engine: share/schema/ for SQLite, share/schema/pg/ for a
/// server (docs/backends.md "Schema").
std::vector<std::string_view> migrations_of(const Db& db) { return db.is_server() ? embedded_pg_schema() : embedded_schema(); }
}  // namespace

namespace {

constexpr const char* kNodeColumns =
    "seq, id, session, predecessor, kind, role, content, metadata, covers_first, covers_last, covers_count, tokens, "
    "digest";

/// A JSON column of a stored row, parsed; a value that is not JSON (a damaged file: the store
/// only writes dump_json's output) is Error(bad_input, "db.bad_json") naming the file, the table,
/// the column and the row (`row`, e.g. "node seq 17 (id 'u3')").
Json stored_json(std::string_view text, const std::string& path, const char* table, const char* column,
                 const std::function<std::string()>& row) {
  try {
    return parse_json(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(Exit::bad_input, "db.bad_json",
                fmt::format("'{}' is damaged: column {} of {} in table {} is not valid JSON ({})", path, column, row(),
                            table, e.what()),
                kDamagedDatabaseHint);
  }
}

/// The node_marks bits of a node (share/schema/013_node_marks.sql): 1 when the stored metadata
/// text holds a lineage key (the terms lineage.cpp's queries repeat), 2 when metadata.event is
/// 'system_prompt'. 0: the node is not listed.
std::int64_t node_mark(const Json& meta, std::string_view meta_text) {
  // memmem (glibc: a vectorised scan) rather than string_view::find, which calls memchr at every
  // 'r' and '"' of the text.
  auto holds = [&](std::string_view needle) {
    return memmem(meta_text.data(), meta_text.size(), needle.data(), needle.size()) != nullptr;
  };
  std::int64_t mark = 0;
  if (holds("requestSessionId") || holds("\"duplicate_of\"") || holds("\"forked_from\"")) mark |= 1;
  if (meta.is_object())
    if (auto it = meta.find("event"); it != meta.end() && it->is_string() && it->get_ref<const std::string&>() == "system_prompt")
      mark |= 2;
  return mark;
}

/// The seq of the row an `INSERT ... RETURNING seq` statement adds, read in the same step (no
/// second statement for lastval() on a server: docs/backends.md "Round trips"); nullopt when it
/// added none. The statement is stepped to its end.
std::optional<std::int64_t> inserted_seq(Stmt& st) {
  if (!st.step()) return std::nullopt;
  const std::int64_t seq = st.int64(0);
  st.run();
  return seq;
}

/// A node row (bound ?1..?12 as named), inserted only when no node has its id (?1), its seq
/// returned: on a server one statement, one round trip, for what is otherwise a look-up, the INSERT
/// and `SELECT lastval()` (docs/backends.md "Round trips"). A row not inserted takes no seq (no
/// row reaches the INSERT, so the sequence does not move): a seq gap would read as a vanished node
/// to invariant 1. covers_count is cast so that a NULL bound without a type is a number.
constexpr const char* kInsertNodeIfAbsent =
    "INSERT INTO nodes(id, session, predecessor, kind, role, content, metadata, covers_first, covers_last, "
    "covers_count, tokens, digest) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, CAST(?10 AS BIGINT), ?11, ?12 "
    "WHERE NOT EXISTS (SELECT 1 FROM nodes WHERE id=?1) RETURNING seq";

/// The same row, inserted unconditionally (SQLite: a look-up before it, and the seq from
/// sqlite3_last_insert_rowid). SQLite pays no round trip per statement, and there the one
/// statement above costs more CPU than the two (an INSERT ... SELECT with RETURNING: 0.65 s ->
/// 1.1 s of CPU for a 10,000-node import, measured 2026-12-06).
constexpr const char* kInsertNode =
    "INSERT INTO nodes(id, session, predecessor, kind, role, content, metadata, covers_first, covers_last, "
    "covers_count, tokens, digest) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";

/// The seq of a node inserted by `st` (kInsertNodeIfAbsent on a server, kInsertNode on SQLite,
/// bound), run here; nullopt when a node of its id is stored already.
std::optional<std::int64_t> insert_node(Db& db, Stmt& st) {
  if (db.is_server()) return inserted_seq(st);
  st.run();
  return db.last_insert_id();
}

/// Whether a node of `id` is stored, on SQLite, where the look-up comes before the INSERT (an
/// INSERT that adds nothing would still take an AUTOINCREMENT value, and a seq gap reads as a
/// vanished node to invariant 1). Always false on a server, whose INSERT looks itself.
bool stored_before_insert(Db& db, const std::string& id) {
  if (db.is_server()) return false;
  auto& st = db.cached("SELECT 1 FROM nodes WHERE id=?1");
  ResetOnExit st_reset(st);
  st.bind(1, id);
  return st.step();
}

/// What an append of a node whose id is stored already is: duplicate when the stored digest is
/// `digest`, else conflict.
AppendResult stored_as(Db& db, const std::string& id, const std::string& digest) {
  auto& st = db.cached("SELECT digest FROM nodes WHERE id=?1");
  ResetOnExit st_reset(st);
  st.bind(1, id);
  if (!st.step()) throw Error(Exit::internal, "db.error", fmt::format("node '{}' was neither inserted nor found", id));
  return st.text(0) == digest ? AppendResult::duplicate : AppendResult::conflict;
}

/// How many ids or rows one statement of coverage_problem and put_covers carries: a view covering
/// 10,000 nodes is 100 statements (round trips on a server), not 10,000.
constexpr std::size_t kIdsPerStatement = 100;

/// "?FIRST, ?FIRST+1, ..." for `n` placeholders.
std::string placeholders(std::size_t n, std::size_t first) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += fmt::format("{}?{}", i ? ", " : "", first + i);
  return out;
}

/// Runs `use(st, at, k)` once per chunk of `count` items, kIdsPerStatement at a time: `st` is the
/// statement `sql_for(k)` for the chunk's k items, from the connection's cache when the chunk is
/// full (the same text each time), prepared for the shorter last one; `use` binds and steps it.
template <class SqlFor, class Use>
void in_chunks(Db& db, std::size_t count, const SqlFor& sql_for, const Use& use) {
  for (std::size_t at = 0; at < count; at += kIdsPerStatement) {
    const std::size_t k = std::min(kIdsPerStatement, count - at);
    if (k == kIdsPerStatement) {
      auto& st = db.cached(sql_for(k));
      ResetOnExit st_reset(st);
      use(st, at, k);
    } else {
      auto st = db.prepare(sql_for(k));
      use(st, at, k);
    }
  }
}

/// The coverage list of the view node `seq` (table covers, pos 0..n-1 in `ids`' order): one
/// multi-row INSERT per kIdsPerStatement rows.
void put_covers(Db& db, std::int64_t seq, const std::vector<std::string>& ids) {
  auto sql_for = [](std::size_t k) {
    std::string sql = "INSERT INTO covers(summary_seq, pos, node_id) VALUES ";
    for (std::size_t i = 0; i < k; ++i) sql += fmt::format("{}({})", i ? ", " : "", placeholders(3, 3 * i + 1));
    return sql;
  };
  in_chunks(db, ids.size(), sql_for, [&](Stmt& st, std::size_t at, std::size_t k) {
    for (std::size_t i = 0; i < k; ++i) {
      const int p = static_cast<int>(3 * i + 1);
      st.bind(p, seq).bind(p + 1, static_cast<std::int64_t>(at + i)).bind(p + 2, ids[at + i]);
    }
    st.run();
  });
}

/// Lists the node of `seq` in node_marks when node_mark gives it a bit.
void put_node_mark(Db& db, std::int64_t seq, std::int64_t mark) {
  if (mark == 0) return;
  auto& st = db.cached("INSERT INTO node_marks(seq, mark) VALUES (?1, ?2)");
  ResetOnExit st_reset(st);
  st.bind(1, seq).bind(2, mark);
  st.run();
}

}  // namespace

Json parse_node_content(std::string_view raw, const std::string& path, std::int64_t seq, std::string_view id) {
  auto row = [&] { return id.empty() ? fmt::format("node seq {}", seq) : fmt::format("node seq {} (id '{}')", seq, id); };
  try {
    return parse_json(raw);  // the hot path of grep and index: one parse, no separate UTF-8 pass
  } catch (const nlohmann::json::exception&) {
    if (utf8_valid(raw)) return stored_json(raw, path, "nodes", "content", row);  // throws db.bad_json
    return stored_json(utf8_sanitize(raw), path, "nodes", "content", row);
  }
}

namespace {

/// The columns of "SELECT kNodeColumns FROM nodes" a Node and a StoredNode read alike.
template <class N>
void read_node_frame(const Stmt& st, N& n) {
  n.seq = st.int64(0);
  n.id = st.text(1);
  n.session = st.text(2);
  n.predecessor = st.opt_text(3);
  n.kind = st.text(4);
  n.tokens = st.int64(11);
  n.digest = st.text(12);
}

Node read_node(const Stmt& st, const std::string& path) {
  Node n;
  read_node_frame(st, n);
  n.role = st.opt_text(5).value_or("");
  auto row = [&] { return fmt::format("node seq {} (id '{}')", n.seq, n.id); };
  n.content = stored_json(st.view(6), path, "nodes", "content", row);
  n.metadata = stored_json(st.view(7), path, "nodes", "metadata", row);
  if (!st.is_null(8)) {
    n.metadata["covers"] = Json{{"first", st.text(8)}, {"last", st.text(9)}, {"count", st.int64(10)}};
  }
  return n;
}

SessionInfo read_session(const Stmt& st, const std::string& path) {
  SessionInfo s;
  s.id = st.text(0);
  s.kind = st.text(1);
  s.parent_session = st.opt_text(2);
  s.parent_node = st.opt_text(3);
  s.source = st.opt_text(4);
  s.format = st.opt_text(5);
  s.metadata = stored_json(st.view(6), path, "sessions", "metadata", [&] { return fmt::format("session '{}'", s.id); });
  s.created_seq = st.int64(7);
  return s;
}

constexpr const char* kSessionColumns = "id, kind, parent_session, parent_node, source, format, metadata, created_seq";

}  // namespace

namespace {

/// The tables of the append-only ledger (share/schema/001_init.sql; docs/model.md "The
/// append-only ledger"): every ctxfold database holds them, whatever its schema version.
constexpr const char* kLedgerTables[] = {"sessions", "nodes", "covers", "head_moves", "events", "source_records"};

/// Whether the file holds no schema object at all: a new (0-byte) file, or one whose creation was
/// killed before its first commit.
bool schema_empty(Db& db) { return db.schema_empty(); }

/// Throws Error(bad_input, "db.damaged") naming the first ledger table the file lacks (a table
/// dropped by hand or a damaged schema). One read of sqlite_master.
void require_ledger(Db& db, const std::string& path) {
  for (const char* t : kLedgerTables)
    if (!db.has_schema_object(t))
      throw Error(Exit::bad_input, "db.damaged", fmt::format("'{}' is damaged: table {} is missing", path, t),
                  kDamagedDatabaseHint);
}

[[noreturn]] void throw_newer(const std::string& path, std::int64_t v, std::int64_t known) {
  throw Error(Exit::bad_input, "db.schema_newer",
              fmt::format("'{}' has schema version {}, newer than this ctxfold ({})", path, v, known),
              "upgrade ctxfold");
}

/// Switches a writer's connection to WAL. Several processes creating one file at once all ask
/// for it; a refusal while another holds the file (SQLITE_BUSY, which this pragma reports without
/// waiting) is retried until the busy timeout, and a file another process already switched needs
/// nothing more.
void enable_wal(Db& db, const std::string& path) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    try {
      db.exec("PRAGMA journal_mode=WAL");
      return;
    } catch (const Error& e) {
      if (e.code() == "db.locked" && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      if (e.code() != "db.io") throw;
      // A file (or directory) this user cannot write: say which, and what still works.
      throw Error(Exit::environment, "db.io", fmt::format("cannot write database '{}': {}", path, e.what()),
                  "read commands and compact --dry-run open it read-only");
    }
  }
}

}  // namespace

namespace {
/// Whether a --db value that names no file reads as a libpq key=value connection string
/// ("dbname=x host=y", "host=/run/postgresql"): it starts with one of libpq's keywords and '='.
bool looks_like_conninfo(std::string_view v) {
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  for (std::string_view key : {"host", "hostaddr", "port", "dbname", "user", "password", "passfile", "service",
                               "sslmode", "connect_timeout", "application_name", "options"}) {
    if (v.substr(0, key.size()) != key) continue;
    std::string_view rest = v.substr(key.size());
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (!rest.empty() && rest.front() == '=') return true;
  }
  return false;
}
}  // namespace

Store Store::open(const std::string& path, Mode mode, TokenMeasure measure) {
  if (measure == nullptr) throw Error(Exit::internal, "db.open", "Store::open needs a token measure");
  bool ro = mode == Mode::read_only;
  if (is_server_url(path)) {
    Db db(path, ro);
    const std::string shown = db.path();  // the URL without its password
    Store s(std::move(db), shown, measure);
    if (ro) return finish_read_only(std::move(s));
    s.migrate();
    return s;
  }
  if (!std::filesystem::exists(path) && looks_like_conninfo(path))
    // Not echoed: such a string often carries a password.
    throw Error(Exit::usage, "db.conninfo",
                "the database named looks like a libpq key=value connection string, not a file; ctxfold takes a server as a URL",
                "postgresql://USER@HOST/DATABASE (docs/backends.md \"Pointing ctxfold at a server\")");
  if (ro && path != ":memory:" && !std::filesystem::exists(path))
    throw Error(Exit::environment, "db.open", fmt::format("cannot open database '{}': no such file", path),
                "import a transcript first, or pass --db");
  if (ro) {
    Store s(Db(path, true), path, measure);
    // Probe: is this a ctxfold database this binary understands? A WAL database needs its -shm
    // file even to read; in a directory we cannot write, read it as an immutable file instead.
    try {
      (void)s.db_.user_version();
    } catch (const Error& e) {
      if (e.exit() != Exit::environment || e.code() == "db.locked") throw;
      Store again(Db(path, true, true), path, measure);
      return finish_read_only(std::move(again));
    }
    return finish_read_only(std::move(s));
  }
  Store s(Db(path, false), path, measure);
  // 16 KiB pages for a new file (an existing file keeps its own: the pragma only takes effect
  // before the first table is written). An import writes every page twice, to the WAL and at the
  // checkpoint, a system call per page each time, and a node's content and metadata run over
  // overflow pages: at 4 KiB, the writes were a third of an import's CPU; at 16 KiB the whole
  // import takes ~1/3 less CPU (bench/README.md "Import").
  s.db_.exec("PRAGMA page_size=16384");
  enable_wal(s.db_, path);
  s.db_.exec("PRAGMA synchronous=NORMAL");
  s.db_.exec("PRAGMA foreign_keys=ON");
  s.db_.exec("PRAGMA cache_size=-16384");  // 16 MiB page cache: bounded, and enough for index seeks
  // Extra checks of every b-tree page a writer reads, so a write stops (db.corrupt, rolled back) at
  // a damaged page it meets instead of building on it (docs/commands.md "Damaged databases").
  s.db_.exec("PRAGMA cell_size_check=ON");
  s.migrate();
  return s;
}

Store Store::finish_read_only(Store s) {
  const std::string& path = s.path_;
  // One read transaction for the store's lifetime: in WAL mode every statement of the command
  // then reads the one snapshot taken by the first read below, whatever writers commit meanwhile
  // (docs/commands.md "Reading never writes"); a server's is REPEATABLE READ READ ONLY. The
  // connection's close ends it.
  s.db_.begin_read_snapshot();
  std::int64_t v = s.db_.user_version();
  if (v == 0 && schema_empty(s.db_))
    throw Error(Exit::bad_input, "db.empty",
                fmt::format("'{}' holds no ctxfold data yet (an empty file, or a first import that was interrupted)", path),
                "import a transcript into it: import and append take it as a new database");
  if (v == 0 || !s.db_.has_schema_object("nodes"))
    throw Error(Exit::bad_input, "db.not_ctxfold", fmt::format("'{}' is not a ctxfold database", path));
  const auto known = static_cast<std::int64_t>(migrations_of(s.db_).size());
  if (v > known) throw_newer(path, v, known);
  require_ledger(s.db_, path);
  return s;
}

void Store::migrate() {
  auto files = migrations_of(db_);
  const auto current = static_cast<std::int64_t>(files.size());
  if (db_.user_version() != current) {
    // Creation and every pending migration are one write transaction, the version re-read inside
    // it: of several processes creating one new database, the first creates it and the others wait
    // for the lock (the busy timeout) and find it current. A file with no schema object (0 bytes,
    // or a creation killed before its commit) is new.
    Txn t(db_);
    const std::int64_t v = db_.user_version();
    if (v > current) throw_newer(path_, v, current);
    // A non-empty database without our version is someone else's file: never touch it.
    if (v == 0 && !schema_empty(db_))
      throw Error(Exit::bad_input, "db.not_ctxfold", fmt::format("'{}' is not a ctxfold database", path_));
    for (std::size_t i = static_cast<std::size_t>(v); i < files.size(); ++i) db_.exec(files[i]);
    if (v != current) db_.set_user_version(current);
    t.commit();
  }
  require_ledger(db_, path_);
}

std::int64_t Store::max_seq() {
  auto& st = db_.cached("SELECT coalesce(max(seq),0) FROM nodes");
  ResetOnExit st_reset(st);
  st.step();
  return st.int64(0);
}

std::optional<SessionInfo> Store::session(const std::string& id) {
  auto& st = db_.cached(fmt::format("SELECT {} FROM sessions WHERE id=?1", kSessionColumns));
  ResetOnExit st_reset(st);
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return read_session(st, path_);
}

std::vector<SessionInfo> Store::sessions() {
  std::vector<SessionInfo> out;
  auto st = db_.prepare(fmt::format("SELECT {} FROM sessions ORDER BY created_seq, rowid", kSessionColumns));
  while (st.step()) out.push_back(read_session(st, path_));
  return out;
}

bool Store::create_session(const SessionInfo& s) {
  if (session(s.id)) return false;
  auto st = db_.prepare(
      "INSERT INTO sessions(id, kind, parent_session, parent_node, source, format, metadata, created_seq) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  st.bind(1, s.id).bind(2, s.kind).bind(3, s.parent_session).bind(4, s.parent_node).bind(5, s.source);
  st.bind(6, s.format).bind(7, dump_json(s.metadata)).bind(8, max_seq());
  st.run();
  return true;
}

std::string Store::resolve_session(const std::optional<std::string>& requested) {
  if (requested && !requested->empty()) {
    if (!session(*requested))
      throw Error(Exit::bad_input, "session.unknown", fmt::format("no session '{}' in '{}'", *requested, path_),
                  "list them with 'ctxfold sessions'");
    return *requested;
  }
  auto all = sessions();
  if (all.empty())
    throw Error(Exit::bad_input, "session.none", fmt::format("'{}' holds no session", path_),
                "import a transcript with 'ctxfold import FILE'");
  if (all.size() == 1) return all[0].id;
  // The most recently written top-level session: the main session owning the newest node.
  auto st = db_.prepare(
      "SELECT n.session FROM nodes n JOIN sessions s ON s.id = n.session WHERE s.kind = 'main' "
      "ORDER BY n.seq DESC LIMIT 1");
  if (st.step()) return st.text(0);
  for (auto it = all.rbegin(); it != all.rend(); ++it)
    if (it->kind == "main") return it->id;
  return all.back().id;
}

namespace {

/// sha256_hex(canonical_node(n, content_json, metadata_json)) (model/node.hpp), hashed piece by
/// piece: the content, the metadata and a view node's covered ids are fed as they are, never
/// copied into one string (a summary covering 10^5 nodes built a JSON array of its ids and two
/// copies of their text: ~130 bytes per covered id at once, bench/README.md "Import memory,
/// step 3"). The frame comes from canonical_node itself, around one-byte stand-ins for content and
/// metadata (control bytes never appear raw in dumped JSON) and with no covered ids.
std::string canonical_digest(const Node& n, std::string_view content_json, std::string_view metadata_json) {
  Node frame_node;
  frame_node.id = n.id;
  frame_node.session = n.session;
  frame_node.predecessor = n.predecessor;
  frame_node.kind = n.kind;
  frame_node.role = n.role;
  const std::string frame = canonical_node(frame_node, "\x01", "\x02");
  const std::size_t a = frame.find('\x01'), b = frame.find('\x02');
  const std::string_view f(frame);
  Sha256 h;
  h.update(f.substr(0, a));
  h.update(content_json);
  h.update(f.substr(a + 1, b - a - 1));
  h.update(metadata_json);
  if (!n.is_view()) {
    h.update(f.substr(b + 1));
    return h.hex();
  }
  h.update(f.substr(b + 1, f.size() - b - 3));  // up to the covers_ids array's "[" (frame ends "[]}")
  for (std::size_t i = 0; i < n.covers_ids.size(); ++i) {
    if (i > 0) h.update(",");
    h.update(dump_json(Json(n.covers_ids[i])));
  }
  h.update("]}");
  return h.hex();
}


/// The columns of one new node row, its content and metadata as the text to store.
struct NodeRow {
  const std::string& id;
  const std::string& session;
  const std::optional<std::string>& predecessor;
  const std::string& kind;
  const std::optional<std::string>& role;  ///< null for events
  std::string_view content, metadata;
  const std::vector<std::string>& covers;  ///< a view node's covered ids; empty otherwise
  std::int64_t tokens;
  std::string_view digest;
};

/// Inserts the row unless a node of its id is stored (then duplicate or conflict, by digest, and
/// nothing written), with its covers rows and its node_marks entry; `seq` is set to the new row's.
AppendResult insert_node_row(Db& db, const NodeRow& r, const Json& metadata, std::int64_t& seq) {
  const std::string digest(r.digest);
  if (stored_before_insert(db, r.id)) return stored_as(db, r.id, digest);
  {
    auto& st = db.cached(db.is_server() ? kInsertNodeIfAbsent : kInsertNode);
    ResetOnExit st_reset(st);
    st.bind(1, r.id).bind(2, r.session).bind(3, r.predecessor).bind(4, r.kind).bind(5, r.role);
    st.bind(6, r.content).bind(7, r.metadata);
    if (!r.covers.empty())
      st.bind(8, r.covers.front()).bind(9, r.covers.back()).bind(10, static_cast<std::int64_t>(r.covers.size()));
    else
      st.bind_null(8).bind_null(9).bind_null(10);
    st.bind(11, r.tokens).bind(12, r.digest);
    const auto inserted = insert_node(db, st);
    if (!inserted) return stored_as(db, r.id, digest);
    seq = *inserted;
  }
  put_node_mark(db, seq, node_mark(metadata, r.metadata));
  if (!r.covers.empty()) put_covers(db, seq, r.covers);
  return AppendResult::added;
}

}  // namespace

AppendResult Store::append(Node& n) {
  // Serialize once: the same bytes are stored and hashed.
  std::string content = dump_json(n.content);
  std::string meta = metadata_json(n);
  std::string digest = canonical_digest(n, content, meta);
  std::int64_t tokens = measure_(n);
  static const std::vector<std::string> kNone;
  const std::optional<std::string> role = n.role.empty() ? std::nullopt : std::optional<std::string>(n.role);
  const AppendResult r = insert_node_row(db_,
                                         NodeRow{n.id, n.session, n.predecessor, n.kind, role, content, meta,
                                                 n.is_view() ? n.covers_ids : kNone, tokens, digest},
                                         n.metadata, n.seq);
  if (r != AppendResult::added) return r;
  n.digest = std::move(digest);
  n.tokens = tokens;
  return AppendResult::added;
}

std::optional<Store::NodeLink> Store::link(const std::string& id) {
  auto& st = db_.cached("SELECT seq, session, predecessor FROM nodes WHERE id=?1");
  ResetOnExit st_reset(st);
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return NodeLink{st.int64(0), st.text(1), st.opt_text(2)};
}

bool Store::copy_node(const std::string& from, const std::string& to, const std::string& session,
                      const std::function<void(Json& metadata, std::optional<std::string>& predecessor)>& edit) {
  Node copy;
  std::string content;
  Json meta;
  std::int64_t tokens = 0;
  {
    auto& rd = db_.cached("SELECT predecessor, kind, role, content, metadata, tokens FROM nodes WHERE id=?1");
    ResetOnExit rd_reset(rd);
    rd.bind(1, from);
    if (!rd.step()) return false;
    copy.predecessor = rd.opt_text(0);
    copy.kind = rd.text(1);
    copy.role = rd.opt_text(2).value_or("");
    content = rd.text(3);
    meta = stored_json(rd.view(4), path_, "nodes", "metadata", [&] { return fmt::format("node id '{}'", from); });
    tokens = rd.int64(5);
  }
  copy.id = to;
  copy.session = session;
  edit(meta, copy.predecessor);
  const std::string meta_text = dump_json(meta);
  auto& ins = db_.cached(
      "INSERT INTO nodes(id, session, predecessor, kind, role, content, metadata, tokens, digest) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING seq");
  ResetOnExit ins_reset(ins);
  ins.bind(1, copy.id).bind(2, copy.session).bind(3, copy.predecessor).bind(4, copy.kind);
  if (copy.role.empty()) ins.bind_null(5); else ins.bind(5, copy.role);
  ins.bind(6, content).bind(7, meta_text).bind(8, tokens);
  ins.bind(9, canonical_digest(copy, content, meta_text));
  put_node_mark(db_, inserted_seq(ins).value_or(0), node_mark(meta, meta_text));
  return true;
}

namespace {
/// One row of "SELECT kNodeColumns FROM nodes", bytes as stored; covers_ids not loaded.
StoredNode stored_from_row(const Stmt& st) {
  StoredNode n;
  read_node_frame(st, n);
  n.role = st.opt_text(5);
  n.content = st.text(6);
  n.metadata = st.text(7);
  return n;
}
}  // namespace

std::optional<StoredNode> Store::stored_node(std::int64_t seq) {
  auto& st = db_.cached(fmt::format("SELECT {} FROM nodes WHERE seq=?1", kNodeColumns));
  ResetOnExit st_reset(st);
  st.bind(1, seq);
  if (!st.step()) return std::nullopt;
  StoredNode n = stored_from_row(st);
  const bool covered = !st.is_null(8);
  st.reset();
  if (covered) n.covers_ids = covers_of(seq);
  return n;
}

std::vector<StoredNode> Store::stored_nodes(const std::string& session, std::int64_t first_seq, int limit) {
  std::vector<StoredNode> out;
  std::vector<std::size_t> covered;
  {
    auto& st = db_.cached(
        fmt::format("SELECT {} FROM nodes WHERE session=?1 AND seq>=?2 ORDER BY seq LIMIT ?3", kNodeColumns));
    ResetOnExit st_reset(st);
    st.bind(1, session).bind(2, first_seq).bind(3, static_cast<std::int64_t>(limit));
    while (st.step()) {
      if (!st.is_null(8)) covered.push_back(out.size());
      out.push_back(stored_from_row(st));
    }
  }
  for (std::size_t i : covered) out[i].covers_ids = covers_of(out[i].seq);
  return out;
}

std::string Store::stored_digest(const StoredNode& s) {
  Node frame;
  frame.id = s.id;
  frame.session = s.session;
  frame.predecessor = s.predecessor;
  frame.kind = s.kind;
  frame.role = s.role.value_or("");
  frame.covers_ids = s.covers_ids;
  return canonical_digest(frame, s.content, s.metadata);
}

AppendResult Store::append_stored(StoredNode& n) {
  const Json meta = stored_json(n.metadata, path_, "nodes", "metadata", [&] { return fmt::format("node id '{}'", n.id); });
  return insert_node_row(db_,
                         NodeRow{n.id, n.session, n.predecessor, n.kind, n.role, n.content, n.metadata, n.covers_ids,
                                 n.tokens, n.digest},
                         meta, n.seq);
}

std::optional<std::string> Store::coverage_problem(const Node& view) {
  if (view.covers_ids.empty())
    return fmt::format("view node '{}' covers nothing (covers_ids is empty)", view.id);
  // The covered nodes' sessions, kIdsPerStatement ids per statement (one round trip each on a
  // server, docs/backends.md "Round trips"), then checked in the view's order.
  const auto& ids = view.covers_ids;
  std::unordered_map<std::string, std::string> session_of;
  auto sql_for = [](std::size_t k) {
    return fmt::format("SELECT id, session FROM nodes WHERE id IN ({})", placeholders(k, 1));
  };
  in_chunks(db_, ids.size(), sql_for, [&](Stmt& st, std::size_t at, std::size_t k) {
    for (std::size_t i = 0; i < k; ++i) st.bind(static_cast<int>(i + 1), ids[at + i]);
    while (st.step()) session_of.emplace(st.text(0), st.text(1));
  });
  for (const auto& id : ids) {
    const auto it = session_of.find(id);
    if (it == session_of.end()) return fmt::format("view node '{}' covers '{}', which does not exist", view.id, id);
    if (it->second != view.session)
      return fmt::format("view node '{}' covers '{}' of another session '{}'", view.id, id, it->second);
  }
  return std::nullopt;
}

std::optional<Node> Store::node(const std::string& id, bool with_covers) {
  NodeCacheScope* cache = with_covers ? nullptr : NodeCacheScope::active(*this);
  if (cache)
    if (auto hit = cache->find(id)) return hit;
  auto& st = db_.cached(fmt::format("SELECT {} FROM nodes WHERE id=?1", kNodeColumns));
  ResetOnExit st_reset(st);
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  Node n = read_node(st, path_);
  if (with_covers && n.is_view()) n.covers_ids = covers_of(n.seq);
  if (cache) cache->keep(n, st.view(6).size() + st.view(7).size());
  return n;
}

bool Store::has_node(const std::string& id) {
  auto& st = db_.cached("SELECT 1 FROM nodes WHERE id=?1");
  ResetOnExit st_reset(st);
  st.bind(1, id);
  return st.step();
}

std::optional<std::string> Store::predecessor_of(const std::string& id) {
  auto& st = db_.cached("SELECT predecessor FROM nodes WHERE id=?1");
  ResetOnExit st_reset(st);
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return st.opt_text(0);
}

std::optional<Node> Store::node_by_seq(std::int64_t seq, bool with_covers) {
  auto& st = db_.cached(fmt::format("SELECT {} FROM nodes WHERE seq=?1", kNodeColumns));
  ResetOnExit st_reset(st);
  st.bind(1, seq);
  if (!st.step()) return std::nullopt;
  Node n = read_node(st, path_);
  if (with_covers && n.is_view()) n.covers_ids = covers_of(n.seq);
  return n;
}

bool Store::defer_predecessor_index() {
  if (db_.is_server() || predecessor_index_deferred_) return false;
  auto& any = db_.cached("SELECT 1 FROM nodes LIMIT 1");
  ResetOnExit any_reset(any);
  if (any.step()) return false;
  db_.exec("DROP INDEX nodes_predecessor");
  predecessor_index_deferred_ = true;
  return true;
}

void Store::restore_predecessor_index() {
  if (!predecessor_index_deferred_) return;
  // The text share/schema/001_init.sql gives it (SQLite keeps it as written, without IF NOT EXISTS):
  // after a rollback the index is back already.
  db_.exec("CREATE INDEX IF NOT EXISTS nodes_predecessor ON nodes(predecessor)");
  predecessor_index_deferred_ = false;
}

std::vector<std::string> Store::children(const std::string& id) {
  restore_predecessor_index();
  std::vector<std::string> out;
  auto& st = db_.cached("SELECT id FROM nodes WHERE predecessor=?1 ORDER BY seq");
  ResetOnExit st_reset(st);
  st.bind(1, id);
  while (st.step()) out.push_back(st.text(0));
  return out;
}

std::vector<std::string> Store::covers_of(std::int64_t view_seq) {
  std::vector<std::string> out;
  auto& st = db_.cached("SELECT node_id FROM covers WHERE summary_seq=?1 ORDER BY pos");
  ResetOnExit st_reset(st);
  st.bind(1, view_seq);
  while (st.step()) out.push_back(st.text(0));
  return out;
}

void Store::for_each_node(const std::string& session, const std::function<bool(const Node&)>& fn, std::int64_t as_of,
                          bool with_covers) {
  auto st = db_.prepare_scan(fmt::format("SELECT {} FROM nodes WHERE session=?1 AND seq<=?2 ORDER BY seq", kNodeColumns));
  st.bind(1, session).bind(2, as_of);
  while (st.step()) {
    Node n = read_node(st, path_);
    if (with_covers && n.is_view()) n.covers_ids = covers_of(n.seq);
    if (!fn(n)) break;
  }
}

std::int64_t Store::node_count(const std::string& session, std::int64_t as_of) {
  auto& st = db_.cached("SELECT count(*) FROM nodes WHERE session=?1 AND seq<=?2");
  ResetOnExit st_reset(st);
  st.bind(1, session).bind(2, as_of);
  st.step();
  return st.int64(0);
}

std::vector<Node> Store::view_nodes(const std::string& session, const std::string& kind_filter, std::int64_t as_of,
                                    bool with_covers) {
  std::vector<Node> out;
  // INDEXED BY: without statistics the planner walks (session, seq) to skip the sort, reading every
  // node of the session (a full pass over a 10^6-node session); the view nodes are few.
  auto& st = db_.cached(fmt::format(
      "SELECT {} FROM nodes INDEXED BY nodes_session_kind WHERE session=?1 AND seq<=?2 "
      "AND kind IN {} "
      "AND (?3 = '' OR kind = ?3) ORDER BY seq",
      kNodeColumns, kViewKindsSql));
  ResetOnExit st_reset(st);
  st.bind(1, session).bind(2, as_of).bind(3, kind_filter);
  while (st.step()) {
    Node n = read_node(st, path_);
    if (with_covers) n.covers_ids = covers_of(n.seq);
    out.push_back(std::move(n));
  }
  return out;
}

std::optional<Node> Store::active_summary(const std::string& session, std::int64_t as_of) {
  auto& st = db_.cached(fmt::format(
      "SELECT {} FROM nodes WHERE session=?1 AND kind='summary' AND seq<=?2 AND covers_count IS NOT NULL "
      "AND coalesce(json_extract(metadata,'$.strategy'),?3)=?3 ORDER BY seq DESC LIMIT 1",
      kNodeColumns));
  ResetOnExit st_reset(st);
  // Absent or null reads as rolling: model/strategy_label.hpp strategy_label.
  st.bind(1, session).bind(2, as_of).bind(3, label_name(StrategyLabel::rolling));
  if (!st.step()) return std::nullopt;
  return read_node(st, path_);
}

std::optional<Node> Store::system_prompt(const std::string& session, std::int64_t as_of) {
  // Through node_marks (schema 013) where the file has it: only the marked nodes are read. A file
  // of an older schema opened read-only reads through its partial index nodes_system_prompt. The
  // subquery does not test the metadata again: mark bit 2 says what it holds (node_mark), and a
  // server's planner may walk every event node of the session before the marks, calling the
  // json_extract function on each (a render of a 1,893-node session spent 17 ms there).
  const bool marks = db_.has_schema_object("node_marks");
  auto& st = db_.cached(fmt::format(
      "SELECT {} FROM nodes WHERE {}session=?1 AND kind='event' AND seq<=?2 "
      "AND json_extract(metadata,'$.event')='system_prompt' ORDER BY seq DESC LIMIT 1",
      kNodeColumns,
      marks ? "seq = (SELECT max(m.seq) FROM node_marks m CROSS JOIN nodes x ON x.seq = m.seq WHERE (m.mark & 2) <> 0 "
              "AND m.seq<=?2 AND x.session=?1 AND x.kind='event') AND "
            : ""));
  ResetOnExit st_reset(st);
  st.bind(1, session).bind(2, as_of);
  if (!st.step()) return std::nullopt;
  return read_node(st, path_);
}

std::optional<Node> Store::latest_of_kind(const std::string& session, const std::string& kind, std::int64_t as_of) {
  auto& st = db_.cached(
      fmt::format("SELECT {} FROM nodes WHERE session=?1 AND kind=?2 AND seq<=?3 ORDER BY seq DESC LIMIT 1", kNodeColumns));
  ResetOnExit st_reset(st);
  st.bind(1, session).bind(2, kind).bind(3, as_of);
  if (!st.step()) return std::nullopt;
  return read_node(st, path_);
}

std::vector<Store::SummaryRange> Store::summary_ranges(const std::string& session, StrategyLabel label,
                                                       std::int64_t as_of) {
  return view_ranges(session, kind::kSummary, label, as_of);
}

std::optional<Node> Store::active_view(const std::string& session, const std::string& kind_name,
                                       StrategyLabel label, std::int64_t as_of) {
  auto& st = db_.cached(fmt::format(
      "SELECT {} FROM nodes WHERE session=?1 AND kind=?3 AND seq<=?2 AND covers_count IS NOT NULL "
      "AND json_extract(metadata,'$.strategy')=?4 ORDER BY seq DESC LIMIT 1",
      kNodeColumns));
  ResetOnExit st_reset(st);
  st.bind(1, session).bind(2, as_of).bind(3, kind_name).bind(4, label_name(label));
  if (!st.step()) return std::nullopt;
  return read_node(st, path_);
}

std::vector<Store::SummaryRange> Store::view_ranges(const std::string& session, const std::string& kind_name,
                                                    StrategyLabel label, std::int64_t as_of) {
  std::vector<SummaryRange> out;
  auto& st = db_.cached(
      "SELECT seq, id, predecessor, covers_first, covers_last, covers_count FROM nodes WHERE session=?1 AND "
      "kind=?4 AND seq<=?2 AND covers_count IS NOT NULL AND json_extract(metadata,'$.strategy')=?3 ORDER BY seq");
  ResetOnExit st_reset(st);
  st.bind(1, session).bind(2, as_of).bind(3, label_name(label)).bind(4, kind_name);
  while (st.step()) {
    SummaryRange r;
    r.seq = st.int64(0);
    r.id = st.text(1);
    r.predecessor = st.opt_text(2);
    r.first = st.text(3);
    r.last = st.text(4);
    r.count = st.int64(5);
    out.push_back(std::move(r));
  }
  return out;
}

bool Store::covers_contains(std::int64_t view_seq, const std::string& id) {
  auto& st = db_.cached("SELECT 1 FROM covers WHERE summary_seq=?1 AND node_id=?2 LIMIT 1");
  ResetOnExit st_reset(st);
  st.bind(1, view_seq).bind(2, id);
  return st.step();
}

std::optional<std::string> Store::head(const std::string& session, std::int64_t as_of) {
  auto& st = db_.cached(
      "SELECT node_id FROM head_moves WHERE session=?1 AND boundary_seq<=?2 ORDER BY seq DESC LIMIT 1");
  ResetOnExit st_reset(st);
  st.bind(1, session).bind(2, as_of);
  if (!st.step()) return std::nullopt;
  return st.text(0);
}

void Store::move_head(const std::string& session, const std::string& node_id, const std::string& cause) {
  auto previous = head(session);
  auto st = db_.prepare(
      "INSERT INTO head_moves(session, node_id, previous, cause, boundary_seq) VALUES (?1, ?2, ?3, ?4, ?5)");
  st.bind(1, session).bind(2, node_id).bind(3, previous).bind(4, cause).bind(5, max_seq());
  st.run();
}

void Store::copy_head_move(const HeadMove& m) {
  auto st = db_.prepare(
      "INSERT INTO head_moves(session, node_id, previous, cause, boundary_seq) VALUES (?1, ?2, ?3, ?4, ?5)");
  st.bind(1, m.session).bind(2, m.node_id).bind(3, m.previous).bind(4, m.cause).bind(5, max_seq());
  st.run();
}

std::vector<HeadMove> Store::head_moves(const std::string& session) {
  std::vector<HeadMove> out;
  auto& st = db_.cached(
      "SELECT seq, session, node_id, previous, cause, boundary_seq FROM head_moves WHERE session=?1 ORDER BY seq");
  ResetOnExit st_reset(st);
  st.bind(1, session);
  while (st.step()) {
    HeadMove m;
    m.seq = st.int64(0);
    m.session = st.text(1);
    m.node_id = st.text(2);
    m.previous = st.opt_text(3);
    m.cause = st.text(4);
    m.boundary_seq = st.int64(5);
    out.push_back(std::move(m));
  }
  return out;
}

std::int64_t Store::log_event(const std::string& session, const std::string& type,
                              const std::optional<std::string>& ref, const Json& payload) {
  auto st = db_.prepare("INSERT INTO events(session, type, ref, payload, boundary_seq) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING seq");
  st.bind(1, session).bind(2, type).bind(3, ref).bind(4, dump_json(payload)).bind(5, max_seq());
  return inserted_seq(st).value_or(0);
}

std::int64_t Store::copy_event(const std::string& session, const std::string& type,
                               const std::optional<std::string>& ref, std::string_view payload_json) {
  auto st = db_.prepare("INSERT INTO events(session, type, ref, payload, boundary_seq) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING seq");
  st.bind(1, session).bind(2, type).bind(3, ref).bind(4, payload_json).bind(5, max_seq());
  return inserted_seq(st).value_or(0);
}

namespace {
// One row of "SELECT seq, session, type, ref, payload, boundary_seq FROM events".
Event event_from_row(Stmt& st, const std::string& path) {
  Event e;
  e.seq = st.int64(0);
  e.session = st.text(1);
  e.type = st.text(2);
  e.ref = st.opt_text(3);
  e.payload = stored_json(st.view(4), path, "events", "payload", [&] { return fmt::format("event seq {}", e.seq); });
  e.boundary_seq = st.int64(5);
  return e;
}
}  // namespace

std::vector<Event> Store::events(const std::string& session, const std::string& type_prefix) {
  std::vector<Event> out;
  auto st = db_.prepare(
      "SELECT seq, session, type, ref, payload, boundary_seq FROM events WHERE session=?1 "
      "AND substr(type, 1, length(?2)) = ?2 ORDER BY seq");
  st.bind(1, session).bind(2, type_prefix);
  while (st.step()) {
    out.push_back(event_from_row(st, path_));
  }
  return out;
}

std::optional<Event> Store::last_event(const std::string& session, const std::string& type) {
  auto st = db_.prepare(
      "SELECT seq, session, type, ref, payload, boundary_seq FROM events WHERE session=?1 AND type=?2 "
      "ORDER BY seq DESC LIMIT 1");
  st.bind(1, session).bind(2, type);
  if (!st.step()) return std::nullopt;
  return event_from_row(st, path_);
}

bool Store::add_source_record(const std::string& session, const std::string& source, std::int64_t line,
                              const std::string& type, const std::string& raw) {
  auto& st = db_.cached(
      "INSERT INTO source_records(session, source, line, type, digest, raw) VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
      "ON CONFLICT DO NOTHING");
  ResetOnExit r(st);
  st.bind(1, session).bind(2, source).bind(3, line).bind(4, type).bind(5, sha256_hex(raw)).bind(6, raw);
  st.run();
  return db_.changes() > 0;
}

std::int64_t Store::source_record_count(const std::string& session) {
  auto st = db_.prepare("SELECT count(*) FROM source_records WHERE session=?1");
  st.bind(1, session);
  st.step();
  return st.int64(0);
}

void Store::for_each_source_record(const std::string& session, const std::string& type,
                                   const std::function<bool(const SourceRecord&)>& fn) {
  auto st = db_.prepare(
      "SELECT source, line, type, raw FROM source_records WHERE session=?1 AND type=?2 ORDER BY source, line, seq");
  st.bind(1, session).bind(2, type);
  while (st.step()) {
    SourceRecord r{st.text(0), st.int64(1), st.text(2), st.text(3)};
    if (!fn(r)) break;
  }
}

}  // namespace ctxfold
