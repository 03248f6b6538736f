// grep() itself: which index answers, the index hits of each kind, the scan of the unindexed
// tail (text packs, then nodes), and the counting and paging of matches.
#include <algorithm>
#include <chrono>

#include "model/view_kinds.hpp"
#include "recall/expand.hpp"
#include "recall/grep.hpp"
#include "recall/grep_detail.hpp"
#include "recall/like_index.hpp"
#include "recall/text_index.hpp"
#include "recall/text_packs.hpp"
#include "recall/tri_index.hpp"
#include "store/scan.hpp"
#include "util/graphemes.hpp"

namespace ctxfold {

namespace {
constexpr std::size_t kSnippetBefore = 30;
constexpr std::size_t kSnippetGraphemes = 80;
}  // namespace

std::optional<std::string> covering_summary(Store& st, const std::string& id) {
  auto& q = st.db().cached(
      "SELECT s.id FROM covers c JOIN nodes s ON s.seq=c.summary_seq WHERE c.node_id=?1 "
      "ORDER BY c.summary_seq DESC LIMIT 1");
  ResetOnExit reset(q);
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  return q.text(0);
}

std::string grep_snippet(std::string_view text, std::size_t grapheme) {
  std::size_t g0 = grapheme > kSnippetBefore ? grapheme - kSnippetBefore : 0;
  std::size_t b0 = grapheme_byte_offset(text, g0);
  std::string_view rest = text.substr(b0);
  std::size_t b1 = grapheme_byte_offset(rest, kSnippetGraphemes);
  return std::string(rest.substr(0, b1));
}

namespace {

constexpr const char* kRow =
    "SELECT seq, id, session, kind, coalesce(role,''), content FROM nodes WHERE seq=?1";
// kRow without the content, for a match whose snippet is already known.
constexpr const char* kRowMeta = "SELECT seq, id, session, kind, coalesce(role,'') FROM nodes WHERE seq=?1";

// One read transaction for the rest: every statement below (a lookup per index hit) then
// shares it instead of opening and closing its own (WAL lock calls each). A read-only store is
// in its snapshot already.
struct ReadTxn {
  Db& db;
  bool began;
  explicit ReadTxn(Db& d) : db(d), began(!d.in_transaction()) {
    if (began) db.exec("BEGIN");
  }
  ~ReadTxn() {
    if (began) db.commit_quietly();
  }
  ReadTxn(const ReadTxn&) = delete;
  ReadTxn& operator=(const ReadTxn&) = delete;
};

/// m's index query if the index state ix can answer it, else nullopt.
std::optional<IndexQuery> usable_query(const Matcher& m, const TextIndexState& ix) {
  std::optional<IndexQuery> iq;
  if (ix.fts || ix.gram_through > 0 || ix.tri_through > 0) iq = m.index_query();
  if (iq && ix.tri_through == 0) iq->tri.clear();
  if (iq && iq->tri.empty() && (iq->gram.empty() ? !ix.fts : ix.gram_through == 0)) iq.reset();
  return iq;
}

/// One grep run: the pattern, the index that answers up to `through`, and the running totals.
struct Search {
  Store& st;
  const GrepOptions& o;
  const std::function<void(const GrepMatch&)>& on_match;
  Matcher m;
  GrepTotals totals;
  const bool want_raw;
  const bool want_views;
  std::optional<IndexQuery> iq;
  std::int64_t through = 0;
  /// The raw-content prefilter of the nodes read and matched (none when exhaustive).
  std::optional<RawFilter> prefilter;
  /// The index is grep_like (an engine's own trigram index, like_index.hpp) rather than SQLite's
  /// FTS5 or trigram tables; `like_hits` are its candidates with seq <= through, ascending.
  bool like = false;
  std::vector<std::pair<std::int64_t, bool>> like_hits;
  /// The reads of a full scan, set up by prepare_scan (store/scan.hpp ScanReads; undone when the
  /// Search ends).
  std::optional<ScanReads> scan_reads;

  Search(Store& s, const GrepOptions& opts, const std::function<void(const GrepMatch&)>& fn)
      : st(s), o(opts), on_match(fn), m(o.pattern, o.regex, o.ignore_case),
        want_raw(o.in != GrepIn::summaries), want_views(o.in != GrepIn::raw) {}
  Search(const Search&) = delete;
  Search& operator=(const Search&) = delete;

  void choose_index();
  void choose_like_index();
  void drop_index_if_costly();
  void prepare_scan();
  void index_hits(const std::function<void(std::int64_t)>& fn);
  bool in_page(std::int64_t index) const {
    return index >= o.offset && (o.limit < 0 || index < o.offset + o.limit);
  }
  void report(std::int64_t seq, std::string_view id, std::string_view session, std::string_view k,
              std::string_view role, std::string_view content, std::string text);
  void emit(std::int64_t seq, std::string_view id, std::string_view session, std::string_view k, std::string_view role,
            std::int64_t offset, std::string snippet);
  void on_pack_match(const grep_detail::PackMatch& pm);
  void consider(std::int64_t seq, std::string_view id, std::string_view session, std::string_view k,
                std::string_view role, std::string_view content);
  void on_hit(std::int64_t seq, bool view, bool exact, bool from_pack = false);
  void search_scope();
  void search_index();
  void tri_hits_all_sessions();
  void hits_all_sessions();
  std::int64_t session_count();
  std::vector<std::int64_t> sorted_seqs(const std::string& sql);
  void gram_hits_of_session();
  void fts_hits_of_session();
  std::int64_t scan_packs_from_index();
  void scan_nodes_after(std::int64_t scanned);
};

/// Picks the index that answers for seq <= through, if any (iq, through, totals.index_note).
void Search::choose_index() {
  // The index answers for seq <= through; everything after it (the unindexed tail) is scanned.
  if (!o.no_index && !o.exhaustive) {
    TextIndexState ix = text_index_state(st);
    iq = usable_query(m, ix);
    if (iq) through = !iq->tri.empty() ? ix.tri_through : iq->gram.empty() ? ix.through_seq : ix.gram_through;
    if (!ix.fts_unusable.empty()) totals.index_note = ix.fts_unusable;
    if (!iq && like_index_supported(st.db())) choose_like_index();
  }
}

/// On an engine with its own trigram index (a server's pg_trgm over grep_like): its candidates
/// up to the indexed seq, when the pattern has literals of 3 characters or more and they are few
/// enough to read and match each (the cap of drop_index_if_costly); otherwise the scan. --scope
/// reads the covered nodes themselves.
void Search::choose_like_index() {
  if (o.scope) return;
  const LikeIndexState lx = like_index_state(st);
  if (!lx.unusable.empty()) totals.index_note = lx.unusable;
  if (lx.through_seq == 0) return;
  std::optional<IndexQuery> q = m.index_query();
  if (!q || q->literals.empty()) return;
  const std::int64_t cap = o.max_verified >= 0 ? o.max_verified : std::max<std::int64_t>(1000, lx.through_seq / 512);
  const bool few = like_candidates(st, q->literals, lx.through_seq, o.session, cap, [&](std::int64_t seq, bool view) {
    like_hits.emplace_back(seq, view);
  });
  if (!few) {
    like_hits.clear();
    return;
  }
  iq = std::move(q);
  iq->exact = false;  // every candidate is read and matched
  iq->tri.clear();
  iq->gram.clear();
  like = true;
  through = lx.through_seq;
}

/// Drops the index when more of its hits would have to be verified than a scan costs.
void Search::drop_index_if_costly() {
  // Hits the index cannot count exactly are read and matched one by one (a node read and JSON
  // parse each, ~10^5 instructions); past a share of the nodes a scan of the text packs (a few
  // hundred instructions per node) is cheaper: then scan.
  if (iq && !iq->exact && !like) {
    const std::int64_t cap = o.max_verified >= 0 ? o.max_verified : std::max<std::int64_t>(1000, through / 512);
    std::int64_t hits = 0;
    if (iq->gram.empty()) {
      auto q = st.db().prepare(
          "SELECT count(*) FROM (SELECT rowid FROM grep_fts WHERE grep_fts MATCH ?1 AND rowid <= ?2 LIMIT ?3)");
      q.bind(1, iq->match).bind(2, through).bind(3, cap + 1);
      if (q.step()) hits = q.int64(0);
    } else {
      for_each_gram_hit(st, iq->gram, through, [&](std::int64_t) { ++hits; });
    }
    if (hits > cap) {
      iq.reset();
      through = 0;
    }
  }
}

/// Sets up the reads of a full scan and records how far the index answered.
void Search::prepare_scan() {
  // A full scan reads most of the file once, mostly in file order (the text packs' overflow
  // chains, the nodes table). A read-only connection reads ahead: 64 KiB per pread(2) into a
  // reused buffer (lib/store/map_vfs.hpp read_ahead), cheaper here than faulting in every page of
  // a memory map. Otherwise the file is mapped instead of copying every page through read(2).
  // Index lookups touch few pages: neither pays for itself there.
  // Pages read once (the b-tree and overflow pages the pack handles walk through) recycle a
  // few cache slots instead of growing the page cache (16 MiB, Store::open) a slot at a time:
  // each new slot is fresh heap memory, whose page faults cost more than the reads.
  if (!iq) scan_reads.emplace(st.db());
  totals.indexed_through = through;
}

// The index's hits with seq <= through, ascending.
void Search::index_hits(const std::function<void(std::int64_t)>& fn) {
  if (!iq->tri.empty()) return for_each_tri_hit(st, iq->tri, through, [&](std::int64_t seq, bool) { fn(seq); });
  if (!iq->gram.empty()) return for_each_gram_hit(st, iq->gram, through, fn);
  auto q = st.db().prepare("SELECT rowid FROM grep_fts WHERE grep_fts MATCH ?1 AND rowid <= ?2 ORDER BY rowid");
  q.bind(1, iq->match).bind(2, through);
  while (q.step()) fn(q.int64(0));
}

// A match known to be one (from the scan, or an exact index hit): counted, and reported when it
// falls inside the page. `text` is computed from `content` when empty.
void Search::report(std::int64_t seq, std::string_view id, std::string_view session, std::string_view k,
                    std::string_view role, std::string_view content, std::string text) {
  if (o.skip.count(seq)) return;
  const bool raw = !kind::is_view(k);
  std::int64_t& count = raw ? totals.raw_matches : totals.summary_matches;
  const std::int64_t index = count++;
  if (!in_page(index)) return;  // outside the page: counted only
  if (text.empty()) text = searchable_text(content, st.path(), seq, id);
  // 0 when folding one grapheme at a time finds no match where the whole text did
  const std::size_t g = m.find_grapheme(text).value_or(0);
  emit(seq, id, session, k, role, static_cast<std::int64_t>(g), grep_snippet(text, g));
}

// Prints one match of the page whose place in its node's text is known.
void Search::emit(std::int64_t seq, std::string_view id, std::string_view session, std::string_view k,
                  std::string_view role, std::int64_t offset, std::string snippet) {
  GrepMatch r;
  r.session = std::string(session);
  r.id = std::string(id);
  r.kind = std::string(k);
  r.role = std::string(role);
  r.seq = seq;
  r.raw = !kind::is_view(k);
  r.offset = offset;
  r.snippet = std::move(snippet);
  r.covered_by = covering_summary(st, r.id);
  on_match(r);
}

// A match of the pack scan: one placed while its pack's text was at hand is counted and, inside
// the page, printed from the node's row without its content; any other is read as an exact hit.
void Search::on_pack_match(const grep_detail::PackMatch& pm) {
  if (o.skip.count(pm.seq)) return;
  if (!pm.located) return on_hit(pm.seq, pm.view, true, true);
  if (pm.view ? !want_views : !want_raw) return;
  std::int64_t& count = pm.view ? totals.summary_matches : totals.raw_matches;
  if (!in_page(count++)) return;
  auto& q = st.db().cached(kRowMeta);
  ResetOnExit reset(q);
  q.bind(1, pm.seq);
  if (!q.step()) return;
  emit(q.int64(0), q.view(1), q.view(2), q.view(3), q.view(4), pm.offset, pm.snippet);
}

// A node whose text must be read and matched (unless its raw JSON proves there is no match).
void Search::consider(std::int64_t seq, std::string_view id, std::string_view session, std::string_view k,
                      std::string_view role, std::string_view content) {
  const bool raw = !kind::is_view(k);
  if (raw ? !want_raw : !want_views) return;
  ++totals.nodes_scanned;
  if (prefilter && !prefilter->may_match(content)) return;
  std::string text = searchable_text(content, st.path(), seq, id);
  if (!m.matches(text)) return;
  report(seq, id, session, k, role, content, std::move(text));
}

// An index hit: exact ones are reported without reading the text unless they are in the page.
void Search::on_hit(std::int64_t seq, bool view, bool exact, bool from_pack) {
  if (view ? !want_views : !want_raw) return;
  if (o.skip.count(seq)) return;
  if (exact) {
    std::int64_t& count = view ? totals.summary_matches : totals.raw_matches;
    if (!in_page(count)) {
      ++count;
      return;
    }
  }
  auto& q = st.db().cached(kRow);
  ResetOnExit reset(q);
  q.bind(1, seq);
  if (!q.step()) return;
  if (exact) {
    if (!from_pack) ++totals.nodes_scanned;  // scan_packs counted it
    report(q.int64(0), q.view(1), q.view(2), q.view(3), q.view(4), q.view(5), {});
  } else {
    consider(q.int64(0), q.view(1), q.view(2), q.view(3), q.view(4), q.view(5));
  }
}

/// --scope: the nodes one view node covers, in seq order, from the index up to `through`.
void Search::search_scope() {
  Coverage cov = resolve_coverage(st, *o.scope);
  std::vector<std::string> ids = cov.views;
  ids.insert(ids.end(), cov.rows.begin(), cov.rows.end());
  // Seq order, as for a full scan.
  std::vector<std::pair<std::int64_t, std::string>> ordered;
  for (const std::string& id : ids) {
    auto& q = st.db().cached("SELECT seq FROM nodes WHERE id=?1");
    ResetOnExit reset(q);
    q.bind(1, id);
    if (q.step()) ordered.emplace_back(q.int64(0), id);
  }
  std::sort(ordered.begin(), ordered.end());
  std::vector<std::int64_t> hits;  // index hits with seq <= through, ascending
  if (iq) index_hits([&](std::int64_t seq) { hits.push_back(seq); });
  for (const auto& [seq, id] : ordered) {
    if (seq <= through) {
      if (!std::binary_search(hits.begin(), hits.end(), seq)) continue;
      auto& q = st.db().cached("SELECT view FROM node_text WHERE seq=?1");
      ResetOnExit reset(q);
      q.bind(1, seq);
      if (!q.step()) continue;
      const bool view = q.int64(0) != 0;
      q.reset();
      on_hit(seq, view, iq->exact);
      continue;
    }
    auto q = st.db().prepare(kRow);
    q.bind(1, seq);
    if (q.step()) consider(q.int64(0), q.view(1), q.view(2), q.view(3), q.view(4), q.view(5));
  }
}

/// The index hits up to `through`, by the way the chosen index and --session read them best.
void Search::search_index() {
  if (like) {
    // Every candidate is read and matched (as on_hit does for an inexact hit), 256 per statement.
    std::vector<std::int64_t> seqs;
    for (const auto& [seq, view] : like_hits)
      if ((view ? want_views : want_raw) && !o.skip.count(seq)) seqs.push_back(seq);
    for_each_candidate_row(st, seqs, [&](Stmt& r) {
      consider(r.int64(0), r.view(1), r.view(2), r.view(3), r.view(4), r.view(5));
    });
  } else if (iq && !o.session && !iq->tri.empty()) {
    tri_hits_all_sessions();
  } else if (iq && !o.session) {
    hits_all_sessions();
  } else if (iq && (!iq->gram.empty() || !iq->tri.empty())) {
    gram_hits_of_session();
  } else if (iq) {
    fts_hits_of_session();
  }
}

void Search::tri_hits_all_sessions() {
  // Trigram hits carry their view flag and are exact: outside the page they are only counted.
  for_each_tri_hit(st, iq->tri, through, [&](std::int64_t seq, bool view) {
    if (view ? !want_views : !want_raw) return;
    if (o.skip.count(seq)) return;
    std::int64_t& count = view ? totals.summary_matches : totals.raw_matches;
    if (!in_page(count)) {
      ++count;
      return;
    }
    on_hit(seq, view, true);
  });
}

void Search::hits_all_sessions() {
  // Hits in seq order straight from the index (no per-hit join), split into raw and view
  // nodes by the view seqs: read at once from the partial index node_text_views (schema
  // 010). Without it (a database not yet indexed at schema 010, opened read-only), few hits
  // are looked up in node_text one by one and many through nodes(session, kind, seq): three
  // index seeks per session (CROSS JOIN and INDEXED BY: without statistics the planner walks
  // every node).
  std::vector<std::int64_t> hits;
  index_hits([&](std::int64_t seq) { hits.push_back(seq); });
  std::vector<std::int64_t> views;
  const bool have_views = st.db().has_schema_object("node_text_views");
  if (have_views && !hits.empty()) {
    views = sorted_seqs("SELECT seq FROM node_text INDEXED BY node_text_views WHERE view = 1 AND seq <= ?1");
  } else if (!hits.empty()) {
    const std::int64_t sessions = session_count();
    if (static_cast<std::int64_t>(hits.size()) <= 3 * sessions) {
      auto& t = st.db().cached("SELECT view FROM node_text WHERE seq=?1");
      for (const std::int64_t seq : hits) {
        bool view = false;
        {
          ResetOnExit reset(t);
          t.bind(1, seq);
          view = t.step() && t.int64(0) != 0;
        }
        on_hit(seq, view, iq->exact);
      }
      hits.clear();
    } else {
      views = sorted_seqs(
          "SELECT n.seq FROM sessions s CROSS JOIN nodes n INDEXED BY nodes_session_kind "
          "WHERE n.session = s.id AND n.kind IN " + std::string(kViewKindsSql) + " AND n.seq <= ?1");
    }
  }
  for (const std::int64_t seq : hits) on_hit(seq, std::binary_search(views.begin(), views.end(), seq), iq->exact);
}

std::int64_t Search::session_count() {
  std::int64_t sessions = 0;
  auto c = st.db().prepare("SELECT count(*) FROM sessions");
  if (c.step()) sessions = c.int64(0);
  return sessions;
}

/// The seqs `sql` selects with ?1 bound to `through`, ascending.
std::vector<std::int64_t> Search::sorted_seqs(const std::string& sql) {
  std::vector<std::int64_t> seqs;
  auto v = st.db().prepare(sql);
  v.bind(1, through);
  while (v.step()) seqs.push_back(v.int64(0));
  std::sort(seqs.begin(), seqs.end());
  return seqs;
}

void Search::gram_hits_of_session() {
  // Gram or trigram hits of one session: session and --in from node_text, one lookup per hit.
  auto& t = st.db().cached("SELECT session, view FROM node_text WHERE seq=?1");
  std::vector<std::pair<std::int64_t, bool>> mine;
  index_hits([&](std::int64_t seq) {
    ResetOnExit reset(t);
    t.bind(1, seq);
    if (t.step() && t.view(0) == *o.session) mine.emplace_back(seq, t.int64(1) != 0);
  });
  for (const auto& [seq, view] : mine) on_hit(seq, view, iq->exact);
}

void Search::fts_hits_of_session() {
  // Hits in seq order, filtered by session and --in from node_text (no node read for them).
  auto q = st.db().prepare(
      "SELECT t.seq, t.view FROM grep_fts f JOIN node_text t ON t.seq = f.rowid "
      "WHERE grep_fts MATCH ?1 AND f.rowid <= ?2 AND (?3 = '' OR t.session = ?3) "
      "AND (CASE WHEN t.view THEN ?5 ELSE ?4 END) ORDER BY f.rowid");
  q.bind(1, iq->match).bind(2, through).bind(3, o.session.value_or(""));
  q.bind(4, std::int64_t{want_raw}).bind(5, std::int64_t{want_views});
  while (q.step()) on_hit(q.int64(0), q.int64(1) != 0, iq->exact);
}

/// Scans the text packs past `through`; returns the seq the node scan goes on after.
std::int64_t Search::scan_packs_from_index() {
  // Then the text packs (import, append and `ctxfold index` keep them) from there on: a few
  // large reads and one substring search per pack instead of a JSON parse per node.
  std::int64_t scanned = through;
  if (!o.exhaustive && !o.no_packs) {
    const std::int64_t packed = text_pack_through(st);
    if (packed > through) {
      grep_detail::scan_packs(st, m, o, through, want_raw, want_views, totals,
                              [&](const grep_detail::PackMatch& pm) { on_pack_match(pm); });
      scanned = packed;
      totals.packed_through = packed;
    }
  }
  return scanned;
}

/// Reads and matches every node with seq > scanned (of --session, or all).
void Search::scan_nodes_after(std::int64_t scanned) {
  // Nodes are streamed in seq order, kRowsPerRead at a time (a server holds a statement's rows
  // in memory: one statement over every node would hold them all); kinds outside --in are
  // filtered in SQL.
  constexpr std::int64_t kRowsPerRead = 1024;
  const std::string where =
      std::string("seq > ?4 AND (CASE WHEN kind IN ") + kViewKindsSql + " THEN ?3 ELSE ?2 END) = 1";
  auto q = st.db().prepare(o.session ? "SELECT seq, id, session, kind, coalesce(role,''), content FROM nodes "
                                       "WHERE session = ?1 AND " + where + " ORDER BY seq LIMIT ?5"
                                     : "SELECT seq, id, session, kind, coalesce(role,''), content FROM nodes "
                                       "WHERE ?1 = '' AND " + where + " ORDER BY seq LIMIT ?5");
  for (std::int64_t rows = kRowsPerRead; rows == kRowsPerRead;) {
    q.reset();
    q.bind(1, o.session.value_or("")).bind(2, std::int64_t{want_raw}).bind(3, std::int64_t{want_views});
    q.bind(4, scanned).bind(5, kRowsPerRead);
    rows = 0;
    while (q.step()) {
      ++rows;
      scanned = q.int64(0);
      consider(scanned, q.view(1), q.view(2), q.view(3), q.view(4), q.view(5));
    }
  }
}

}  // namespace

GrepTotals grep(Store& st, const GrepOptions& o, const std::function<void(const GrepMatch&)>& on_match) {
  const auto t0 = std::chrono::steady_clock::now();
  Search s(st, o, on_match);
  s.choose_index();
  s.drop_index_if_costly();
  const auto& iq = s.iq;
  s.totals.index = !iq ? "scan" : s.like ? like_index_name(st.db()) : !iq->tri.empty() ? "trigrams" : iq->gram.empty() ? "fts5" : "grams";
  s.prepare_scan();
  ReadTxn read_txn(st.db());
  s.prefilter = o.exhaustive ? std::nullopt : s.m.raw_filter();
  if (o.scope) {
    s.search_scope();
  } else {
    s.search_index();
    s.scan_nodes_after(s.scan_packs_from_index());
  }
  s.totals.elapsed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  return s.totals;
}

}  // namespace ctxfold
