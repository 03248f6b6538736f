#include "recall/text_index.hpp"

#include <fmt/format.h>
#include <utf8proc.h>

#include "recall/expand.hpp"
#include "util/error.hpp"
#include "util/graphemes.hpp"
#include "util/utf8.hpp"

namespace ctxfold {

namespace {

bool table_exists(Db& db, const char* name) {
  auto q = db.prepare("SELECT 1 FROM sqlite_master WHERE name=?1");
  q.bind(1, name);
  return q.step();
}

/// Text added by one run above which the FTS5 segments are merged (`optimize`).
constexpr std::int64_t kOptimizeAfterBytes = 16 << 20;

constexpr const char* kCreateFts =
    "CREATE VIRTUAL TABLE grep_fts USING fts5(text, content='', columnsize=0, detail=full, "
    "tokenize='trigram case_sensitive 1')";


}  // namespace

std::string searchable_text(const std::string& content_json) {
  Node n;
  n.content = parse_stored_content(content_json);
  std::string text = node_text(n);
  if (!utf8_valid(text)) text = utf8_sanitize(text);
  return text;
}

std::string text_fold_version() { return fmt::format("fold1/unicode-{}", utf8proc_unicode_version()); }

TextIndexState text_index_state(Store& st) {
  TextIndexState s;
  Db& db = st.db();
  if (!table_exists(db, "text_index_state")) return s;
  std::string fold;
  bool fts = false;
  {
    auto q = db.prepare("SELECT through_seq, fold_version, fts FROM text_index_state WHERE id=1");
    if (!q.step()) return s;
    s.through_seq = q.int64(0);
    fold = q.text(1);
    fts = q.int64(2) != 0;
  }
  if (!fts || !table_exists(db, "grep_fts")) return s;
  if (fold != text_fold_version()) {
    s.fts_unusable = fmt::format("index folded under {}, this ctxfold folds under {} (run `ctxfold index`)", fold,
                                 text_fold_version());
    return s;
  }
  try {
    auto q = db.prepare("SELECT rowid FROM grep_fts WHERE grep_fts MATCH '\"abc\"' LIMIT 1");
    q.step();
    s.fts = true;
  } catch (const Error& e) {
    s.fts_unusable = fmt::format("this SQLite cannot read grep_fts: {}", e.what());
  }
  return s;
}

bool fts5_trigram_available(Db& db) {
  try {
    db.exec("CREATE VIRTUAL TABLE temp.ctxfold_trigram_probe USING fts5(x, tokenize='trigram')");
    db.exec("DROP TABLE temp.ctxfold_trigram_probe");
    return true;
  } catch (const Error&) {
    return false;
  }
}

IndexReport update_text_index(Store& st, bool rebuild, std::int64_t batch_bytes,
                              const std::function<void(std::int64_t, std::int64_t)>& progress) {
  if (st.read_only()) throw Error(Exit::usage, "index.read_only", "the text index needs a writable database");
  Db& db = st.db();
  IndexReport rep;
  const bool have_fts = fts5_trigram_available(db);
  rep.fts = have_fts;
  if (!have_fts) rep.reason = "this SQLite has no FTS5 trigram tokenizer: grep scans; node_text is still kept";

  std::int64_t through = 0;
  {
    Txn t(db);
    std::optional<std::string> fold;
    bool fts = false;
    {
      auto q = db.prepare("SELECT through_seq, fold_version, fts FROM text_index_state WHERE id=1");
      if (q.step()) {
        through = q.int64(0);
        fold = q.text(1);
        fts = q.int64(2) != 0;
      }
    }
    if (!rebuild && fold && *fold != text_fold_version()) {
      rebuild = true;
      rep.reason = fmt::format("fold version changed ({} -> {})", *fold, text_fold_version());
    } else if (!rebuild && fold && have_fts && (!fts || !table_exists(db, "grep_fts"))) {
      rebuild = true;
      rep.reason = "FTS5 trigram is available now: adding the full-text index";
    }
    if (rebuild) {
      rep.rebuilt = true;
      if (rep.reason.empty()) rep.reason = "--rebuild";
      db.exec("DELETE FROM node_text");
      db.exec("DROP TABLE IF EXISTS grep_fts");
      through = 0;
    }
    if (have_fts && !table_exists(db, "grep_fts")) db.exec(kCreateFts);
    auto q = db.prepare(
        "INSERT INTO text_index_state(id, through_seq, fold_version, fts) VALUES (1, ?1, ?2, ?3) "
        "ON CONFLICT(id) DO UPDATE SET through_seq=excluded.through_seq, fold_version=excluded.fold_version, "
        "fts=excluded.fts");
    q.bind(1, through).bind(2, text_fold_version()).bind(3, std::int64_t{have_fts});
    q.run();
    t.commit();
  }

  const std::int64_t total = st.max_seq();
  while (through < total) {
    Txn t(db);
    auto read = db.prepare("SELECT seq, session, kind, content FROM nodes WHERE seq > ?1 ORDER BY seq");
    read.bind(1, through);
    auto put_text = db.prepare("INSERT INTO node_text(seq, session, view, graphemes, bytes) VALUES (?1,?2,?3,?4,?5)");
    std::optional<Stmt> put_fts;
    if (have_fts) put_fts.emplace(db.prepare("INSERT INTO grep_fts(rowid, text) VALUES (?1, ?2)"));
    std::int64_t bytes = 0;
    std::int64_t last = through;
    while (bytes < batch_bytes && read.step()) {
      const std::int64_t seq = read.int64(0);
      const std::string text = searchable_text(read.text(3));
      put_text.bind(1, seq).bind(2, read.text(1)).bind(3, std::int64_t{kind::is_view(read.text(2))});
      put_text.bind(4, static_cast<std::int64_t>(grapheme_count(text))).bind(5, static_cast<std::int64_t>(text.size()));
      put_text.run();
      put_text.reset();
      if (put_fts) {
        put_fts->bind(1, seq).bind(2, casefold(text));
        put_fts->run();
        put_fts->reset();
      }
      bytes += static_cast<std::int64_t>(text.size()) + 1;
      ++rep.indexed;
      last = seq;
    }
    read.reset();
    if (last == through) break;  // nothing left (max_seq raced ahead of nothing)
    rep.text_bytes += bytes;
    through = last;
    auto q = db.prepare("UPDATE text_index_state SET through_seq=?1 WHERE id=1");
    q.bind(1, through);
    q.run();
    t.commit();
    if (progress) progress(through, total);
  }
  rep.through_seq = through;
  // After a bulk load the FTS5 table is many b-tree segments, one per flush; merging them into
  // one makes each query read one position list per trigram instead of one per segment.
  if (have_fts && rep.text_bytes >= kOptimizeAfterBytes) {
    db.exec("INSERT INTO grep_fts(grep_fts) VALUES('optimize')");
    rep.optimized = true;
  }
  return rep;
}

}  // namespace ctxfold
