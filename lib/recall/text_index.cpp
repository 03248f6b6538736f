#include "recall/text_index.hpp"

#include <fmt/format.h>
#include <utf8proc.h>

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "recall/expand.hpp"
#include "recall/tri_index.hpp"
#include "util/error.hpp"
#include "util/varint.hpp"
#include "util/graphemes.hpp"
#include "util/utf8.hpp"

namespace ctxfold {

namespace {


/// Text added by one run above which the FTS5 segments are merged (`optimize`).
constexpr std::int64_t kOptimizeAfterBytes = 16 << 20;

constexpr const char* kCreateFts =
    "CREATE VIRTUAL TABLE grep_fts USING fts5(text, content='', columnsize=0, detail=full, "
    "tokenize='trigram case_sensitive 1')";


}  // namespace

std::string searchable_text(std::string_view content_json, const std::string& path, std::int64_t seq,
                            std::string_view id) {
  Node n;
  n.content = parse_node_content(content_json, path, seq, id);
  std::string text = node_text(n);
  if (!utf8_valid(text)) text = utf8_sanitize(text);
  return text;
}

namespace {
std::size_t utf8_len(unsigned char c) { return c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }


/// The postings of one gram in the batch being indexed.
struct GramList {
  std::string seqs;       // varint deltas
  std::int64_t last = 0;  // the last seq added (a node's repeats are added once)
};
}  // namespace

bool is_short_gram(std::string_view g) {
  if (g.empty()) return false;
  const std::size_t a = utf8_len(static_cast<unsigned char>(g[0]));
  if (a > g.size()) return false;
  const bool wide = static_cast<unsigned char>(g[0]) >= 0x80;
  if (a == g.size()) return wide;
  const std::size_t b = utf8_len(static_cast<unsigned char>(g[a]));
  return a + b == g.size() && (wide || static_cast<unsigned char>(g[a]) >= 0x80);
}

void short_grams(std::string_view t, const std::function<void(std::string_view)>& fn) {
  const std::size_t n = t.size();
  std::size_t i = 0;
  // ASCII pairs are not grams: skip to the byte before the first non-ASCII one.
  while (i < n) {
    const auto c = static_cast<unsigned char>(t[i]);
    const std::size_t len = std::min(utf8_len(c), n - i);
    const bool wide = c >= 0x80;
    if (i + len < n) {
      const auto d = static_cast<unsigned char>(t[i + len]);
      const std::size_t len2 = std::min(utf8_len(d), n - i - len);
      if (wide || d >= 0x80) fn(t.substr(i, len + len2));
    }
    if (wide) fn(t.substr(i, len));
    i += len;
  }
}

void for_each_gram_hit(Store& st, std::string_view gram, std::int64_t through,
                       const std::function<void(std::int64_t)>& fn) {
  Db& db = st.db();
  if (!db.has_schema_object("grep_gram")) return;
  auto q = db.prepare("SELECT chunk, seqs FROM grep_gram WHERE gram = ?1 AND chunk <= ?2 ORDER BY chunk");
  q.bind(1, std::string(gram)).bind(2, through);
  std::int64_t prev_end = 0;
  while (q.step()) {
    std::int64_t seq = q.int64(0) - 1;
    if (seq < prev_end) throw Error(Exit::bad_input, "gram.corrupt", "grep_gram chunks overlap", "run `ctxfold index --rebuild`");
    const std::string_view b = q.blob(1);
    std::uint64_t v = 0;
    int shift = 0;
    for (std::size_t k = 0; k < b.size(); ++k) {
      const auto c = static_cast<unsigned char>(b[k]);
      if (shift > 56) throw Error(Exit::bad_input, "gram.corrupt", "a grep_gram posting list does not decode", "run `ctxfold index --rebuild`");
      v |= static_cast<std::uint64_t>(c & 0x7F) << shift;
      shift += 7;
      if (c & 0x80) continue;
      if (v == 0) throw Error(Exit::bad_input, "gram.corrupt", "a grep_gram posting list is not ascending", "run `ctxfold index --rebuild`");
      seq += static_cast<std::int64_t>(v);
      v = 0;
      shift = 0;
      if (seq > through) return;
      fn(seq);
    }
    if (shift != 0) throw Error(Exit::bad_input, "gram.corrupt", "a grep_gram posting list is cut short", "run `ctxfold index --rebuild`");
    prev_end = seq;
  }
}

std::string text_fold_version() { return fmt::format("fold1/unicode-{}", utf8proc_unicode_version()); }

TextIndexState text_index_state(Store& st) {
  TextIndexState s;
  Db& db = st.db();
  if (!db.has_schema_object("text_index_state")) return s;
  std::string fold;
  bool fts = false;
  {
    auto q = db.prepare("SELECT through_seq, fold_version, fts FROM text_index_state WHERE id=1");
    if (!q.step()) return s;
    s.through_seq = q.int64(0);
    fold = q.text(1);
    fts = q.int64(2) != 0;
  }
  if (fold != text_fold_version()) {
    if (fts)
      s.fts_unusable = fmt::format("index folded under {}, this ctxfold folds under {} (run `ctxfold index`)", fold,
                                   text_fold_version());
    return s;
  }
  if (db.has_schema_object("grep_gram_state") && db.has_schema_object("grep_gram")) {
    auto q = db.prepare("SELECT through_seq FROM grep_gram_state WHERE id=1");
    if (q.step()) s.gram_through = std::min(q.int64(0), s.through_seq);
  }
  if (db.has_schema_object("grep_tri_state") && db.has_schema_object("grep_tri")) {
    auto q = db.prepare("SELECT through_seq FROM grep_tri_state WHERE id=1");
    if (q.step()) s.tri_through = std::min(q.int64(0), s.through_seq);
  }
  if (!fts || !db.has_schema_object("grep_fts")) return s;
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

namespace {

/// How far each part of the index reaches.
struct Marks {
  std::int64_t through = 0;
  std::int64_t gram_through = 0;  // grep_gram reaches this seq (<= through)
  std::int64_t tri_through = 0;   // grep_tri reaches this seq (<= through)
};

/// Empties every table of the text index for a rebuild.
void clear_index(Db& db) {
  db.exec("DELETE FROM node_text");
  db.exec("DROP TABLE IF EXISTS grep_fts");
  db.exec("DELETE FROM grep_gram");
  TriWriter::clear(db);
}

/// An index's mark in `state_table` (grep_gram_state or grep_tri_state), at most `through`,
/// written back; at 0, `clear` empties the index (rows past a state never written).
std::int64_t reset_mark(Db& db, const char* state_table, std::int64_t through, const std::function<void()>& clear) {
  std::int64_t mark = 0;
  {
    auto q = db.prepare(fmt::format("SELECT through_seq FROM {} WHERE id=1", state_table));
    mark = q.step() ? std::min(q.int64(0), through) : 0;
  }
  if (mark == 0) clear();
  auto w = db.prepare(fmt::format(
      "INSERT INTO {}(id, through_seq) VALUES (1, ?1) ON CONFLICT(id) DO UPDATE SET through_seq=excluded.through_seq",
      state_table));
  w.bind(1, mark);
  w.run();
  return mark;
}

/// grep_gram's mark, at most `through`, written back to grep_gram_state.
std::int64_t reset_gram_state(Db& db, std::int64_t through) {
  return reset_mark(db, "grep_gram_state", through, [&] { db.exec("DELETE FROM grep_gram"); });
}

/// grep_tri's mark, at most `through`, written back to grep_tri_state.
std::int64_t reset_tri_state(Db& db, std::int64_t through) {
  return reset_mark(db, "grep_tri_state", through, [&] { TriWriter::clear(db); });
}

/// Starts a run in one transaction: rebuilds the index when asked, when the fold version changed
/// or when FTS5 trigram became available (rep.rebuilt, rep.reason), and writes every state row.
Marks start_index(Db& db, bool rebuild, bool have_fts, IndexReport& rep) {
  Marks mk;
  Txn t(db);
  std::optional<std::string> fold;
  bool fts = false;
  {
    auto q = db.prepare("SELECT through_seq, fold_version, fts FROM text_index_state WHERE id=1");
    if (q.step()) {
      mk.through = q.int64(0);
      fold = q.text(1);
      fts = q.int64(2) != 0;
    }
  }
  if (!rebuild && fold && *fold != text_fold_version()) {
    rebuild = true;
    rep.reason = fmt::format("fold version changed ({} -> {})", *fold, text_fold_version());
  } else if (!rebuild && fold && have_fts && (!fts || !db.has_schema_object("grep_fts"))) {
    rebuild = true;
    rep.reason = "FTS5 trigram is available now: adding the full-text index";
  }
  if (rebuild) {
    rep.rebuilt = true;
    if (rep.reason.empty()) rep.reason = "--rebuild";
    clear_index(db);
    mk.through = 0;
  }
  mk.gram_through = reset_gram_state(db, mk.through);
  mk.tri_through = reset_tri_state(db, mk.through);
  if (have_fts && !db.has_schema_object("grep_fts")) db.exec(kCreateFts);
  auto q = db.prepare(
      "INSERT INTO text_index_state(id, through_seq, fold_version, fts) VALUES (1, ?1, ?2, ?3) "
      "ON CONFLICT(id) DO UPDATE SET through_seq=excluded.through_seq, fold_version=excluded.fold_version, "
      "fts=excluded.fts");
  q.bind(1, mk.through).bind(2, text_fold_version()).bind(3, std::int64_t{have_fts});
  q.run();
  t.commit();
  return mk;
}

/// The fold of a node's text the trigrams are read from.
std::string fold_for_trigrams(const std::string& text, bool wide) {
  // casefold() of ASCII text is its ASCII lower case.
  if (wide) return casefold(text);
  std::string folded = text;
  for (char& c : folded)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return folded;
}

/// One batch of update_text_index (one transaction): its statements, its grams and its byte counts.
struct Batch {
  Db& db;
  const Marks marks;  // as at the batch's start
  IndexReport& rep;
  TriWriter tri;
  Stmt put_text;
  std::optional<Stmt> put_fts;
  std::unordered_map<std::string, GramList> grams;
  std::int64_t chunk = 0;  // the first seq given grams in this batch (0: none yet)
  std::int64_t bytes = 0, added = 0;

  Batch(Db& d, const Marks& m, IndexReport& r, bool have_fts)
      : db(d), marks(m), rep(r), tri(d),
        put_text(d.prepare("INSERT INTO node_text(seq, session, view, graphemes, bytes) "
                           "VALUES (?1,?2,?3,?4,?5)")) {
    if (have_fts) put_fts.emplace(db.prepare("INSERT INTO grep_fts(rowid, text) VALUES (?1, ?2)"));
  }

  /// Indexes the node `read` is on (seq, session, kind, content) for what each mark lacks;
  /// returns its seq.
  std::int64_t add(Stmt& read) {
    const std::int64_t seq = read.int64(0);
    const std::string text = searchable_text(read.view(3), db.path(), seq);
    const bool wide = std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
    const bool view = kind::is_view(read.text(2));
    const bool want_tri = seq > marks.tri_through;
    const bool want_gram = seq > marks.gram_through && wide;
    std::string folded;
    if (want_tri) {
      folded = fold_for_trigrams(text, wide);
      tri.add(seq, view, folded);
    }
    if (seq > marks.through) {
      put_text.bind(1, seq).bind(2, read.text(1)).bind(3, std::int64_t{view});
      put_text.bind(4, static_cast<std::int64_t>(grapheme_count(text))).bind(5, static_cast<std::int64_t>(text.size()));
      put_text.run();
      put_text.reset();
      if (folded.empty() && (put_fts || wide)) folded = casefold(text);
      if (put_fts) {
        put_fts->bind(1, seq).bind(2, folded);
        put_fts->run();
        put_fts->reset();
      }
      bytes += static_cast<std::int64_t>(text.size()) + 1;
      added += static_cast<std::int64_t>(text.size()) + 1;
      ++rep.indexed;
    } else {
      if (want_gram && folded.empty()) folded = casefold(text);
      bytes += static_cast<std::int64_t>(text.size()) / 4 + 1;  // grams or trigrams only: cheaper per byte
    }
    if (want_gram) add_grams(seq, folded);
    if (seq > marks.gram_through) ++rep.gram_nodes;
    if (want_tri) ++rep.tri_nodes;
    return seq;
  }

  /// Adds node seq to the postings of every short gram of `folded`.
  void add_grams(std::int64_t seq, const std::string& folded) {
    if (chunk == 0) chunk = seq;
    short_grams(folded, [&](std::string_view g) {
      GramList& l = grams[std::string(g)];
      if (l.last == seq) return;
      put_varint(l.seqs, static_cast<std::uint64_t>(seq - (l.last ? l.last : chunk - 1)));
      l.last = seq;
    });
  }

  /// Writes the batch's gram postings, one grep_gram row per gram.
  void write_grams() {
    auto put = db.prepare("INSERT INTO grep_gram(gram, chunk, seqs) VALUES (?1, ?2, ?3)");
    for (const auto& [g, l] : grams) {
      put.bind(1, g).bind(2, chunk).bind_blob(3, l.seqs);
      put.run();
      put.reset();
    }
  }
};

/// Writes the three marks to their state rows.
void write_marks(Db& db, const Marks& mk) {
  auto q = db.prepare("UPDATE text_index_state SET through_seq=?1 WHERE id=1");
  q.bind(1, mk.through);
  q.run();
  auto g = db.prepare("UPDATE grep_gram_state SET through_seq=?1 WHERE id=1");
  g.bind(1, mk.gram_through);
  g.run();
  auto tr = db.prepare("UPDATE grep_tri_state SET through_seq=?1 WHERE id=1");
  tr.bind(1, mk.tri_through);
  tr.run();
}

/// Indexes the nodes after `from` in one transaction until batch_bytes of text, and advances the
/// marks past them. Returns false, writing nothing, when no node was left.
bool index_batch(Db& db, std::int64_t from, std::int64_t batch_bytes, bool have_fts, Marks& mk,
                 IndexReport& rep) {
  Txn t(db);
  auto read = db.prepare("SELECT seq, session, kind, content FROM nodes WHERE seq > ?1 ORDER BY seq");
  read.bind(1, from);
  Batch b(db, mk, rep, have_fts);
  std::int64_t last = from;
  while (b.bytes < batch_bytes && read.step()) last = b.add(read);
  read.reset();
  if (last == from) return false;  // nothing left (max_seq raced ahead of nothing)
  b.tri.finish();
  rep.tri_postings += b.tri.postings();
  b.write_grams();
  rep.text_bytes += b.added;
  mk.gram_through = std::max(mk.gram_through, last);
  mk.tri_through = std::max(mk.tri_through, last);
  mk.through = std::max(mk.through, last);
  write_marks(db, mk);
  t.commit();
  return true;
}

}  // namespace

IndexReport update_text_index(Store& st, bool rebuild, std::int64_t batch_bytes,
                              const std::function<void(std::int64_t, std::int64_t)>& progress) {
  if (st.read_only()) throw Error(Exit::usage, "index.read_only", "the text index needs a writable database");
  Db& db = st.db();
  IndexReport rep;
  const bool have_fts = fts5_trigram_available(db);
  rep.fts = have_fts;
  if (!have_fts) rep.reason = "this SQLite has no FTS5 trigram tokenizer: grep scans; node_text is still kept";

  Marks mk = start_index(db, rebuild, have_fts, rep);

  const std::int64_t total = st.max_seq();
  // One pass from the lowest mark: nodes up to `through` only get what they lack, grams or
  // trigrams (a database indexed before schema 008 or 010), the rest everything.
  while (std::min(mk.gram_through, mk.tri_through) < total) {
    if (!index_batch(db, std::min(mk.gram_through, mk.tri_through), batch_bytes, have_fts, mk, rep)) break;
    if (progress) progress(mk.through, total);
  }
  rep.through_seq = mk.through;
  // After a bulk load the FTS5 table is many b-tree segments, one per flush; merging them into
  // one makes each query read one position list per trigram instead of one per segment.
  if (have_fts && rep.text_bytes >= kOptimizeAfterBytes) {
    db.exec("INSERT INTO grep_fts(grep_fts) VALUES('optimize')");
    rep.optimized = true;
  }
  return rep;
}

}  // namespace ctxfold
