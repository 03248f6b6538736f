#include "recall/cover_spans.hpp"

#include <unordered_map>
#include <unordered_set>

#include "recall/text_index.hpp"
#include "util/error.hpp"

namespace ctxfold {

namespace {


bool has_successor(Store& st, const std::string& id) {
  auto& q = st.db().cached("SELECT 1 FROM nodes WHERE predecessor=?1 LIMIT 1");
  ResetOnExit reset(q);
  q.bind(1, id);
  return q.step();
}

}  // namespace

CoversCursor::CoversCursor(Store& st, std::int64_t view_seq, std::int64_t from_pos, bool lengths)
    : st_(st),
      q_(st.db().prepare(lengths ? "SELECT c.node_id, n.seq, n.kind, n.covers_count, t.graphemes FROM covers c "
                                   "LEFT JOIN nodes n ON n.id = c.node_id LEFT JOIN node_text t ON t.seq = n.seq "
                                   "WHERE c.summary_seq = ?1 AND c.pos >= ?2 ORDER BY c.pos"
                                 : "SELECT c.node_id, n.seq, n.kind, n.covers_count, NULL FROM covers c "
                                   "LEFT JOIN nodes n ON n.id = c.node_id WHERE c.summary_seq = ?1 AND c.pos >= ?2 "
                                   "ORDER BY c.pos")) {
  q_.bind(1, view_seq).bind(2, from_pos);
}

bool CoversCursor::next(CoveredEntry& e) {
  if (!q_.step()) return false;
  e.id = q_.text(0);
  e.found = !q_.is_null(1);
  e.seq = e.found ? q_.int64(1) : 0;
  e.graphemes = e.found && !q_.is_null(4) ? q_.int64(4) : -1;
  e.child_view = e.found && kind::is_view(q_.view(2)) && !q_.is_null(3) && !has_successor(st_, e.id);
  return true;
}

std::optional<CoverSpan> stored_cover_span(Store& st, std::int64_t view_seq) {
  if (!st.db().has_schema_object("cover_spans")) return std::nullopt;
  auto& q = st.db().cached("SELECT rows, graphemes FROM cover_spans WHERE summary_seq=?1 AND complete=1");
  ResetOnExit reset(q);
  q.bind(1, view_seq);
  if (!q.step()) return std::nullopt;
  return CoverSpan{q.int64(0), q.int64(1)};
}

std::vector<CoverBlock> stored_cover_blocks(Store& st, std::int64_t view_seq) {
  std::vector<CoverBlock> out;
  if (!st.db().has_schema_object("cover_blocks")) return out;
  auto q = st.db().prepare("SELECT block, rows, graphemes FROM cover_blocks WHERE summary_seq=?1 ORDER BY block");
  q.bind(1, view_seq);
  while (q.step()) out.push_back({q.int64(0), {q.int64(1), q.int64(2)}});
  return out;
}

std::vector<std::int64_t> stored_cover_children(Store& st, std::int64_t view_seq) {
  std::vector<std::int64_t> out;
  if (!st.db().has_schema_object("cover_children")) return out;
  auto& q = st.db().cached("SELECT child_seq FROM cover_children WHERE summary_seq=?1 ORDER BY child_seq");
  ResetOnExit reset(q);
  q.bind(1, view_seq);
  while (q.step()) out.push_back(q.int64(0));
  return out;
}

bool cover_span_current(Store& st, std::int64_t view_seq) {
  std::vector<std::int64_t> todo{view_seq};
  auto& idq = st.db().cached("SELECT id FROM nodes WHERE seq=?1");
  while (!todo.empty()) {
    const std::int64_t v = todo.back();
    todo.pop_back();
    for (std::int64_t c : stored_cover_children(st, v)) {
      std::string id;
      {
        ResetOnExit reset(idq);
        idq.bind(1, c);
        if (!idq.step()) return false;
        id = idq.text(0);
      }
      if (has_successor(st, id)) return false;
      todo.push_back(c);
    }
  }
  return true;
}

namespace {

/// Derives the spans of the view nodes in (from, to], in seq order, within one transaction.
class SpanBuilder {
 public:
  explicit SpanBuilder(Store& st) : st_(st) {}

  /// Derives view node `seq`: its span, its blocks and its children.
  bool derive(std::int64_t seq) {
    std::vector<CoverBlock> blocks;
    CoverSpan total;
    bool complete = true;
    std::vector<std::int64_t> children;
    {
      CoversCursor cur(st_, seq, 0, true);
      CoveredEntry e;
      std::int64_t pos = 0;
      while (cur.next(e)) {
        const std::int64_t b = pos++ / kCoverBlock;
        if (blocks.empty() || blocks.back().block != b) blocks.push_back({b, {}});
        CoverSpan add;
        if (e.child_view) {
          std::optional<CoverSpan> child = stored_cover_span(st_, e.seq);
          if (!child || e.seq == seq) {
            complete = false;
            break;
          }
          add = *child;
          children.push_back(e.seq);
        } else {
          if (!e.found || e.graphemes < 0) {
            complete = false;
            break;
          }
          add = {1, e.graphemes};
        }
        blocks.back().span.rows += add.rows;
        blocks.back().span.graphemes += add.graphemes;
        total.rows += add.rows;
        total.graphemes += add.graphemes;
      }
    }
    // Expansion opens each view node once (a broken database cannot loop): a view node met twice
    // under this one resolves differently from the sum of the spans, so it is left to the walk.
    if (complete && !children.empty()) {
      std::unordered_set<std::int64_t> met{seq};
      complete = all_new(children, met);
    }
    children_[seq] = children;
    auto put = st_.db().prepare(
        "INSERT OR REPLACE INTO cover_spans(summary_seq, rows, graphemes, complete) VALUES (?1, ?2, ?3, ?4)");
    put.bind(1, seq).bind(2, complete ? total.rows : 0).bind(3, complete ? total.graphemes : 0);
    put.bind(4, std::int64_t{complete});
    put.run();
    if (complete) {
      auto& pc = st_.db().cached("INSERT OR IGNORE INTO cover_children(summary_seq, child_seq) VALUES (?1, ?2)");
      for (std::int64_t c : children) {
        ResetOnExit reset(pc);
        pc.bind(1, seq).bind(2, c);
        pc.run();
      }
      auto& pb = st_.db().cached(
          "INSERT OR REPLACE INTO cover_blocks(summary_seq, block, rows, graphemes) VALUES (?1, ?2, ?3, ?4)");
      for (const CoverBlock& b : blocks) {
        ResetOnExit reset(pb);
        pb.bind(1, seq).bind(2, b.block).bind(3, b.span.rows).bind(4, b.span.graphemes);
        pb.run();
      }
    }
    return complete;
  }

 private:
  /// Whether every view node under `children` (recursively) is met once, counting `met`.
  bool all_new(const std::vector<std::int64_t>& children, std::unordered_set<std::int64_t>& met) {
    for (std::int64_t c : children) {
      if (!met.insert(c).second) return false;
      if (!all_new(children_of(c), met)) return false;
    }
    return true;
  }

  /// The child view nodes of a complete view node derived earlier (this run or a previous one).
  const std::vector<std::int64_t>& children_of(std::int64_t seq) {
    auto it = children_.find(seq);
    if (it != children_.end()) return it->second;
    return children_[seq] = stored_cover_children(st_, seq);
  }

  Store& st_;
  std::unordered_map<std::int64_t, std::vector<std::int64_t>> children_;
};

}  // namespace

CoverSpanReport update_cover_spans(Store& st, bool rebuild) {
  if (st.read_only()) throw Error(Exit::usage, "index.read_only", "the text index needs a writable database");
  Db& db = st.db();
  CoverSpanReport rep;
  const std::int64_t to = text_index_state(st).through_seq;
  Txn t(db);
  if (rebuild) {
    db.exec("DELETE FROM cover_blocks");
    db.exec("DELETE FROM cover_children");
    db.exec("DELETE FROM cover_spans");
    db.exec("DELETE FROM cover_spans_state");
  }
  std::int64_t from = 0;
  {
    auto q = db.prepare("SELECT through_seq FROM cover_spans_state WHERE id=1");
    if (q.step()) from = q.int64(0);
  }
  rep.through_seq = std::max(from, to);
  if (to > from) {
    // node_text marks view nodes, so finding them reads the small table, not the nodes.
    std::vector<std::int64_t> views;
    {
      auto q = db.prepare("SELECT seq FROM node_text WHERE view=1 AND seq > ?1 AND seq <= ?2 ORDER BY seq");
      q.bind(1, from).bind(2, to);
      while (q.step()) views.push_back(q.int64(0));
    }
    SpanBuilder b(st);
    for (std::int64_t seq : views) {
      ++rep.views;
      if (!b.derive(seq)) ++rep.incomplete;
    }
    auto q = db.prepare(
        "INSERT INTO cover_spans_state(id, through_seq) VALUES (1, ?1) "
        "ON CONFLICT(id) DO UPDATE SET through_seq=excluded.through_seq");
    q.bind(1, to);
    q.run();
  }
  t.commit();
  return rep;
}

}  // namespace ctxfold
