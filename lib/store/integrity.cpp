// The engine's own checks of a database (verify-invariants I11, docs/invariants.md "I11"): SQLite's
// integrity_check and foreign keys; on a server, what the server can say (docs/backends.md
// "verify-invariants on a server").
#include <fmt/format.h>

#include <filesystem>
#include <vector>

#include "store/map_vfs.hpp"
#include "store/pg.hpp"
#include "store/scan.hpp"

namespace ctxfold {
namespace {

/// PRAGMA integrity_check (quick_check when quick): each row that is not "ok".
void sqlite_pages(Db& db, bool quick, std::vector<std::string>& out) {
  const char* pragma = quick ? "quick_check" : "integrity_check";
  auto st = db.prepare(fmt::format("PRAGMA {}", pragma));
  while (st.step()) {
    std::string row = st.text(0);
    if (row != "ok") out.push_back(fmt::format("sqlite {}: {}", pragma, row));
  }
}

/// Foreign keys. PRAGMA foreign_key_check over the whole file reads every row of nodes again (a
/// full pass at 10^6 nodes, 3-4 s); nodes' two keys are checked through their indexes instead
/// (node_keys), and every other table with PRAGMA foreign_key_check(table).
void sqlite_foreign_keys(Db& db, std::vector<std::string>& out) {
  std::vector<std::string> tables;
  {
    auto t = db.prepare(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' AND name <> 'nodes' "
        "ORDER BY name");
    while (t.step()) tables.push_back(t.text(0));
  }
  for (const auto& table : tables) {
    auto st = db.prepare(fmt::format("PRAGMA foreign_key_check(\"{}\")", table));
    while (st.step())
      out.push_back(fmt::format("table '{}' row {} references a row of '{}' that does not exist (foreign key {})",
                                st.text(0), st.is_null(1) ? std::string("?") : std::to_string(st.int64(1)),
                                st.text(2), st.int64(3)));
  }
}

/// nodes.session -> sessions(id) and nodes.predecessor -> nodes(id) (share/schema/001_init.sql),
/// each read through its index (the hint is dropped on a server, whose planner has statistics).
void node_keys(Db& db, std::vector<std::string>& out) {
  struct NodeKey {
    const char* sql;
    const char* target;
    const char* key;
  };
  for (const NodeKey& k :
       {NodeKey{"SELECT n.seq FROM nodes n INDEXED BY nodes_session_seq "
                "WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = n.session)",
                "sessions", "session"},
        NodeKey{"SELECT p.seq FROM nodes p INDEXED BY nodes_predecessor WHERE p.predecessor IS NOT NULL "
                "AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = p.predecessor)",
                "nodes", "predecessor"}}) {
    auto st = db.prepare(k.sql);
    while (st.step())
      out.push_back(fmt::format("table 'nodes' row {} references a row of '{}' that does not exist (foreign key {})",
                                st.int64(0), k.target, k.key));
  }
}

/// The server's other declared keys (share/schema/pg/001_init.sql), which the server enforces on
/// write but not for rows written while its triggers were off (session_replication_role =
/// replica, ALTER TABLE ... DISABLE TRIGGER ALL). Each row is named by its seq.
void server_foreign_keys(Db& db, std::vector<std::string>& out) {
  struct Key {
    const char* sql;
    const char* table;
    const char* target;
    const char* key;
  };
  for (const Key& k : {Key{"SELECT c.summary_seq FROM covers c WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE "
                           "n.seq = c.summary_seq)",
                           "covers", "nodes", "summary_seq"},
                       Key{"SELECT h.seq FROM head_moves h WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE "
                           "s.id = h.session)",
                           "head_moves", "sessions", "session"},
                       Key{"SELECT h.seq FROM head_moves h WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE "
                           "n.id = h.node_id)",
                           "head_moves", "nodes", "node_id"}}) {
    auto st = db.prepare(k.sql);
    while (st.step())
      out.push_back(fmt::format("table '{}' row {} references a row of '{}' that does not exist (foreign key {})",
                                k.table, st.int64(0), k.target, k.key));
  }
}

/// The append-only triggers of the ledger tables (share/schema/pg/001_init.sql): each present and
/// enabled, else the server no longer refuses changes to that table and I1's rule rests on
/// ctxfold alone.
void server_triggers(Db& db, std::vector<std::string>& out) {
  static constexpr const char* kLedger[] = {"sessions", "nodes",   "covers",      "head_moves",
                                            "events",   "source_records", "source_files"};
  for (const char* table : kLedger)
    for (const char* what : {"change", "truncate"}) {
      const std::string name = fmt::format("{}_no_{}", table, what);
      auto st = db.prepare(
          "SELECT t.tgenabled FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid "
          "JOIN pg_catalog.pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = current_schema() "
          "AND c.relname = ?1 AND t.tgname = ?2");
      st.bind(1, table).bind(2, name);
      if (!st.step())
        out.push_back(fmt::format("trigger {} on table '{}' is missing: the server no longer refuses to {} its rows",
                                  name, table, what == std::string_view("change") ? "change or delete" : "truncate"));
      else if (st.text(0) != "O")
        out.push_back(fmt::format("trigger {} on table '{}' is disabled: the server no longer refuses to {} its rows",
                                  name, table, what == std::string_view("change") ? "change or delete" : "truncate"));
    }
}

/// Page checksum failures the server counted in this database (pg_stat_database; none are
/// counted on a cluster initialised without data checksums).
void server_checksums(Db& db, std::vector<std::string>& out) {
  auto st = db.prepare(
      "SELECT coalesce(checksum_failures, 0) FROM pg_catalog.pg_stat_database WHERE datname = current_database()");
  if (st.step() && st.int64(0) > 0)
    out.push_back(fmt::format("the server counted {} data page checksum failure(s) in this database", st.int64(0)));
}

}  // namespace

std::vector<std::string> integrity_findings(Db& db, bool quick) {
  std::vector<std::string> out;
  if (db.is_server()) {
    server_checksums(db, out);
    server_triggers(db, out);
    node_keys(db, out);
    server_foreign_keys(db, out);
    return out;
  }
  sqlite_pages(db, quick, out);
  sqlite_foreign_keys(db, out);
  node_keys(db, out);
  return out;
}

std::optional<std::int64_t> node_seq_high_water(Db& db) {
  if (db.is_server()) return std::nullopt;
  auto st = db.prepare("SELECT seq FROM sqlite_sequence WHERE name='nodes'");
  if (!st.step()) return std::nullopt;
  return st.int64(0);
}

void read_for_scan(Db& db) {
  if (db.is_server() || !db.read_only()) return;
  read_ahead(db.raw(), true);
  db.exec("PRAGMA cache_size=-16384");
}

std::string export_read_snapshot(Db& db) {
  if (!db.is_server() || !db.read_only()) return {};
  Stmt st = db.prepare("SELECT pg_export_snapshot()");
  return st.step() ? st.text(0) : std::string();
}

void import_read_snapshot(Db& db, const std::string& id) {
  if (id.empty() || !db.is_server() || !db.read_only()) return;
  // A snapshot is imported before the transaction's first query: `db` starts its read again.
  db.rollback_quietly();
  db.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  // The id is pg_export_snapshot's (hexadecimal digits and dashes); quoted all the same.
  std::string quoted;
  for (char c : id) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  db.exec(fmt::format("SET TRANSACTION SNAPSHOT '{}'", quoted));
}

void release_read_snapshots(Db& db) {
  sqlite3* raw = db.raw();
  if (raw == nullptr) return;  // a server database
  for (sqlite3_stmt* st = sqlite3_next_stmt(raw, nullptr); st; st = sqlite3_next_stmt(raw, st))
    if (sqlite3_stmt_busy(st)) sqlite3_reset(st);
}

std::string shown_database(const std::string& path) { return pg::is_url(path) ? pg::redact(path) : path; }

std::string database_label(const std::string& path) {
  if (!pg::is_url(path)) return std::filesystem::path(path).filename().string();
  // postgresql://user@host:port/NAME?params: NAME, else the dbname parameter, else the URL shown.
  std::string_view u(path);
  const std::size_t query = u.find('?');
  std::string_view rest = u.substr(0, query);
  rest.remove_prefix(rest.find("://") + 3);
  if (std::size_t slash = rest.find('/'); slash != std::string_view::npos && slash + 1 < rest.size())
    return std::string(rest.substr(slash + 1));
  if (query != std::string_view::npos) {
    const std::string_view params = u.substr(query + 1);
    for (std::size_t at = 0; at < params.size();) {
      std::size_t end = params.find('&', at);
      if (end == std::string_view::npos) end = params.size();
      if (std::string_view p = params.substr(at, end - at); p.substr(0, 7) == "dbname=") return std::string(p.substr(7));
      at = end + 1;
    }
  }
  return shown_database(path);
}

std::string runnable_database(const std::string& path) {
  if (pg::is_url(path)) return pg::without_password(path);
  return std::filesystem::absolute(path).lexically_normal().string();
}

}  // namespace ctxfold
