// A whole-database scan's reads on either engine (store/scan.hpp): grep's read-ahead, BLOB
// columns read into the caller's buffer, and the engine's trigram index for LIKE.
#include <fmt/format.h>

#include <cstring>
#include <optional>

#include "store/map_vfs.hpp"
#include "store/scan.hpp"
#include "util/error.hpp"

namespace ctxfold {

ScanReads::ScanReads(Db& db) : db_(db) {
  if (db.is_server()) return;
  if (db.read_only() && read_ahead(db.raw(), true)) {
    reading_ahead_ = true;
    auto q = db.prepare("PRAGMA cache_size");
    if (q.step()) cache_size_ = q.int64(0);
    db.exec("PRAGMA cache_size=16");
  } else {
    db.exec("PRAGMA mmap_size=4294967296");
    // SQLite maps at most 2 GB (SQLITE_MAX_MMAP_SIZE); the rest of a larger file is read one
    // page per pread(2) unless the whole file is mapped (read-only connections only).
    if (db.read_only()) map_whole_file(db.raw());
  }
}

ScanReads::~ScanReads() {
  if (!reading_ahead_) return;
  read_ahead(db_.raw(), false);
  const std::string restore = "PRAGMA cache_size=" + std::to_string(cache_size_);
  sqlite3_exec(db_.raw(), restore.c_str(), nullptr, nullptr, nullptr);
}

struct RowBlobs::Impl {
  std::vector<sqlite3_blob*> handles;  // SQLite: one per column, reopened on each row
  std::optional<Stmt> row;             // a server: the row's columns
  std::vector<std::string> held;       // a server: the decoded columns of the current row
};

RowBlobs::RowBlobs(Db& db, std::string table, std::string key, std::vector<std::string> columns)
    : db_(db), table_(std::move(table)), key_(std::move(key)), columns_(std::move(columns)), impl_(new Impl) {
  impl_->handles.assign(columns_.size(), nullptr);
  if (db.is_server()) {
    std::string cols;
    for (const std::string& c : columns_) cols += (cols.empty() ? "" : ", ") + c;
    impl_->row.emplace(db.prepare(fmt::format("SELECT {} FROM {} WHERE {} = ?1", cols, table_, key_)));
  }
}

RowBlobs::~RowBlobs() {
  for (sqlite3_blob* b : impl_->handles)
    if (b) sqlite3_blob_close(b);
  delete impl_;
}

RowBlobs::Found RowBlobs::read(std::int64_t id, const std::function<char*(std::size_t)>& buffer,
                               std::vector<std::string_view>& out) {
  const std::size_t n = columns_.size();
  out.assign(n, {});
  std::vector<std::size_t> sizes(n);
  std::size_t total = 0;
  if (impl_->row) {
    Stmt& q = *impl_->row;
    q.reset();
    q.bind(1, id);
    if (!q.step()) return Found::no_row;
    impl_->held.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (q.is_null(static_cast<int>(i))) return Found::not_blob;
      impl_->held[i].assign(q.blob(static_cast<int>(i)));  // one decode buffer per statement: keep each
      sizes[i] = impl_->held[i].size();
      total += sizes[i];
    }
    char* at = buffer(total);
    for (std::size_t i = 0; i < n; ++i) {
      if (sizes[i] > 0) std::memcpy(at, impl_->held[i].data(), sizes[i]);
      out[i] = std::string_view(at, sizes[i]);
      at += sizes[i];
    }
    q.reset();
    return Found::row;
  }
  sqlite3* raw = db_.raw();
  for (std::size_t i = 0; i < n; ++i) {
    sqlite3_blob*& h = impl_->handles[i];
    const int rc = h ? sqlite3_blob_reopen(h, id)
                     : sqlite3_blob_open(raw, "main", table_.c_str(), columns_[i].c_str(), id, 0, &h);
    if (rc == SQLITE_ERROR) return Found::not_blob;  // not a blob (or no such row: the caller stepped it)
    if (rc != SQLITE_OK) throw Error(Exit::environment, "db.io", sqlite3_errmsg(raw));
    sizes[i] = static_cast<std::size_t>(sqlite3_blob_bytes(h));
    total += sizes[i];
  }
  char* at = buffer(total);
  for (std::size_t i = 0; i < n; ++i) {
    if (sizes[i] > 0) {
      const int rc = sqlite3_blob_read(impl_->handles[i], at, static_cast<int>(sizes[i]), 0);
      if (rc != SQLITE_OK) throw Error(Exit::environment, "db.io", sqlite3_errmsg(raw));
    }
    out[i] = std::string_view(at, sizes[i]);
    at += sizes[i];
  }
  return Found::row;
}

bool like_index_supported(Db& db) { return db.is_server(); }

std::string like_index_name(Db& db) { return like_index_supported(db) ? "pg_trgm" : ""; }

void create_like_index(Db& db, std::string_view name, std::string_view table, std::string_view column) {
  if (!like_index_supported(db))
    throw Error(Exit::usage, "index.engine", "this database engine has no trigram index for LIKE");
  bool installed = false, available = false;
  {
    auto q = db.prepare("SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'pg_trgm'");
    installed = q.step();
  }
  if (!installed) {
    auto q = db.prepare("SELECT 1 FROM pg_catalog.pg_available_extensions WHERE name = 'pg_trgm'");
    available = q.step();
  }
  if (!installed && !available)
    throw Error(Exit::environment, "index.pg_trgm",
                fmt::format("the PostgreSQL server of '{}' has no pg_trgm extension: grep's server index needs it",
                            db.path()),
                "install the server's pg_trgm module (Debian's postgresql-NN package ships it; other builds: "
                "postgresql-contrib) and run `ctxfold index` again; grep without it scans (docs/backends.md)");
  if (!installed) {
    try {
      db.exec("CREATE EXTENSION IF NOT EXISTS pg_trgm");
    } catch (const Error& e) {
      throw Error(Exit::environment, "index.pg_trgm",
                  fmt::format("cannot create the pg_trgm extension in '{}': {}", db.path(), e.what()),
                  "a role allowed to (the database's owner, or an administrator) runs `CREATE EXTENSION pg_trgm` in "
                  "this database once; grep without the index scans (docs/backends.md)");
    }
  }
  db.exec(fmt::format("CREATE INDEX IF NOT EXISTS {} ON {} USING gin ({} gin_trgm_ops)", name, table, column));
}

std::string like_contains_pattern(std::string_view text) {
  std::string out = "%";
  out.reserve(text.size() + 8);
  for (char c : text) {
    if (c == '%' || c == '_' || c == '\\') out += '\\';
    out += c;
  }
  return out + '%';
}

}  // namespace ctxfold
