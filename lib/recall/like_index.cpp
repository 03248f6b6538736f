#include "recall/like_index.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "model/view_kinds.hpp"
#include "recall/derived_mark.hpp"
#include "recall/text_index.hpp"
#include "store/scan.hpp"
#include "util/error.hpp"
#include "util/graphemes.hpp"

namespace ctxfold {

namespace {

constexpr const char* kCreateTable =
    "CREATE TABLE IF NOT EXISTS grep_like (seq BIGINT PRIMARY KEY, session TEXT NOT NULL, view INTEGER NOT NULL, "
    "folded TEXT NOT NULL)";
constexpr const char* kCreateState =
    "CREATE TABLE IF NOT EXISTS grep_like_state (id INTEGER PRIMARY KEY CHECK (id = 1), through_seq BIGINT NOT NULL, "
    "fold_version TEXT NOT NULL)";

constexpr DerivedMark kLikeMark{"grep_like_state", "fold_version", "grep_like"};

/// Rows read from nodes per statement: a server holds a statement's rows in memory.
constexpr std::int64_t kReadRows = 256;

/// `s` with every NUL written as U+FFFF (a server's text type holds no NUL). The same for the
/// stored text and the literals, one character for one, so "text holds literal" is kept.
std::string without_nul(std::string s) {
  for (std::size_t p = s.find('\0'); p != std::string::npos; p = s.find('\0', p + 3)) s.replace(p, 1, "\xEF\xBF\xBF");
  return s;
}

/// Creates the tables and the engine's index, clears them when `rebuild` or the fold version
/// changed, and returns the seq the index reaches.
std::int64_t start_like_index(Db& db, bool rebuild, LikeIndexReport& rep) {
  Txn t(db);
  db.exec(kCreateTable);
  db.exec(kCreateState);
  create_like_index(db, "grep_like_trgm", "grep_like", "folded");
  const std::int64_t through = start_derived_mark(db, kLikeMark, text_fold_version(), rebuild, &rep.rebuilt);
  t.commit();
  return through;
}

/// Adds the nodes after `from` in one transaction until batch_bytes of text; returns the last
/// seq added (`from` when none was left).
std::int64_t like_batch(Db& db, std::int64_t from, std::int64_t batch_bytes, LikeIndexReport& rep) {
  Txn t(db);
  auto read = db.prepare("SELECT seq, session, kind, content FROM nodes WHERE seq > ?1 ORDER BY seq LIMIT ?2");
  auto put = db.prepare("INSERT INTO grep_like(seq, session, view, folded) VALUES (?1, ?2, ?3, ?4)");
  std::int64_t last = from, bytes = 0;
  for (bool more = true; more && bytes < batch_bytes;) {
    read.reset();
    read.bind(1, last).bind(2, kReadRows);
    std::int64_t rows = 0;
    while (read.step()) {
      ++rows;
      const std::int64_t seq = read.int64(0);
      std::string folded = without_nul(casefold(searchable_text(read.view(3), db.path(), seq)));
      put.bind(1, seq).bind(2, read.view(1)).bind(3, std::int64_t{kind::is_view(read.view(2))}).bind(4, folded);
      put.run();
      put.reset();
      bytes += static_cast<std::int64_t>(folded.size()) + 1;
      rep.text_bytes += static_cast<std::int64_t>(folded.size());
      ++rep.indexed;
      last = seq;
    }
    more = rows == kReadRows;
  }
  read.reset();
  if (last == from) return from;
  advance_derived_mark(db, kLikeMark, last);
  t.commit();
  return last;
}

}  // namespace

LikeIndexState like_index_state(Store& st) {
  LikeIndexState s;
  Db& db = st.db();
  if (!db.has_schema_object("grep_like_state") || !db.has_schema_object("grep_like")) return s;
  auto mark = read_derived_mark(db, kLikeMark);
  if (!mark) return s;
  if (mark->second != text_fold_version()) {
    s.unusable = fmt::format("index folded under {}, this ctxfold folds under {} (run `ctxfold index`)", mark->second,
                             text_fold_version());
    return s;
  }
  s.through_seq = mark->first;
  return s;
}

LikeIndexReport update_like_index(Store& st, bool rebuild, std::int64_t batch_bytes) {
  if (st.read_only()) throw Error(Exit::usage, "index.read_only", "the text index needs a writable database");
  Db& db = st.db();
  LikeIndexReport rep;
  std::int64_t through = start_like_index(db, rebuild, rep);
  const std::int64_t total = st.max_seq();
  while (through < total) {
    const std::int64_t last = like_batch(db, through, batch_bytes, rep);
    if (last == through) break;
    through = last;
  }
  rep.through_seq = through;
  return rep;
}

bool like_candidates(Store& st, const std::vector<std::string>& literals, std::int64_t through,
                     const std::optional<std::string>& session, std::int64_t cap,
                     const std::function<void(std::int64_t seq, bool view)>& fn) {
  if (literals.empty()) return false;
  std::string sql = "SELECT seq, view FROM grep_like WHERE seq <= ?1";
  int n = 1;
  if (session) sql += fmt::format(" AND session = ?{}", ++n);
  sql += " AND (";
  for (std::size_t i = 0; i < literals.size(); ++i)
    sql += fmt::format("{}folded LIKE ?{} ESCAPE '\\'", i ? " OR " : "", ++n);
  sql += ") ORDER BY seq";
  if (cap >= 0) sql += fmt::format(" LIMIT ?{}", ++n);
  auto q = st.db().prepare(sql);
  int at = 1;
  q.bind(at++, through);
  if (session) q.bind(at++, *session);
  for (const std::string& l : literals) q.bind(at++, like_contains_pattern(without_nul(l)));
  if (cap >= 0) q.bind(at++, cap + 1);
  std::vector<std::pair<std::int64_t, bool>> found;
  while (q.step()) {
    found.emplace_back(q.int64(0), q.int64(1) != 0);
    if (cap >= 0 && static_cast<std::int64_t>(found.size()) > cap) return false;
  }
  for (const auto& [seq, view] : found) fn(seq, view);
  return true;
}

void for_each_candidate_row(Store& st, const std::vector<std::int64_t>& seqs, const std::function<void(Stmt& row)>& fn) {
  constexpr std::size_t kPerRead = 256;
  for (std::size_t at = 0; at < seqs.size(); at += kPerRead) {
    const std::size_t n = std::min(kPerRead, seqs.size() - at);
    std::string sql = "SELECT seq, id, session, kind, coalesce(role,''), content FROM nodes WHERE seq IN (";
    for (std::size_t i = 0; i < n; ++i) sql += fmt::format("{}?{}", i ? "," : "", i + 1);
    sql += ") ORDER BY seq";
    auto q = st.db().prepare(sql);
    for (std::size_t i = 0; i < n; ++i) q.bind(static_cast<int>(i + 1), seqs[at + i]);
    while (q.step()) fn(q);
  }
}

}  // namespace ctxfold
