#include "recall/expand.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "recall/cover_spans.hpp"
#include "recall/text_index.hpp"
#include "util/error.hpp"
#include "util/graphemes.hpp"
#include "util/utf8.hpp"

namespace ctxfold {

namespace {

void collect(Store& st, std::int64_t view_seq, Coverage& out, std::unordered_set<std::string>& seen, int depth,
             bool stats) {
  if (depth > 64) throw Error(Exit::bad_input, "coverage.too_deep", "summary coverage nests deeper than 64 levels");
  CoversCursor cur(st, view_seq, 0, stats);
  CoveredEntry e;
  while (cur.next(e)) {
    if (e.child_view) {
      if (!seen.insert(e.id).second) continue;  // a broken database cannot loop
      out.views.push_back(e.id);
      collect(st, e.seq, out, seen, depth + 1, stats);
    } else {
      out.row_graphemes.push_back(e.graphemes);
      out.rows.push_back(std::move(e.id));
    }
  }
}

/// node_text of a stored row, sanitized (stored text is JSON, but a lone surrogate escape or a
/// replaced byte must not reach grapheme slicing unflagged).
struct RowText {
  std::int64_t seq = 0;
  std::string role;
  std::string text;
};
RowText row_text(Store& st, const std::string& id) {
  auto& q = st.db().cached("SELECT seq, role, content FROM nodes WHERE id=?1");
  ResetOnExit reset(q);
  q.bind(1, id);
  RowText r;
  if (!q.step()) throw Error(Exit::bad_input, "node.missing", fmt::format("covered node '{}' is missing", id));
  r.seq = q.int64(0);
  r.role = q.opt_text(1).value_or("");
  r.text = searchable_text(q.view(2), st.path(), r.seq, id);
  return r;
}

}  // namespace

namespace {

/// The seq of view node `id`; the errors of resolve_coverage.
std::int64_t view_seq(Store& st, const std::string& id) {
  auto& q = st.db().cached("SELECT seq, kind FROM nodes WHERE id=?1");
  ResetOnExit reset(q);
  q.bind(1, id);
  if (!q.step()) throw Error(Exit::bad_input, "node.unknown", fmt::format("no node '{}'", id));
  std::int64_t seq = q.int64(0);
  std::string k = q.text(1);
  q.reset();
  if (!kind::is_view(k))
    throw Error(Exit::bad_input, "node.not_view", fmt::format("node '{}' is a {}, not a summary", id, k),
                "expand takes a summary, archive or notes id (see `ctxfold list`)");
  return seq;
}

std::int64_t slice_into(ExpandPage& page, const std::string& id, const RowText& r, std::int64_t start,
                        std::int64_t offset, std::int64_t end) {
  const std::int64_t len = static_cast<std::int64_t>(grapheme_count(r.text));
  if (start + len > offset || (len == 0 && start >= offset)) {
    const std::int64_t from = std::max<std::int64_t>(0, offset - start);
    const std::int64_t to = std::min<std::int64_t>(len, end - start);
    std::size_t b0 = grapheme_byte_offset(r.text, static_cast<std::size_t>(from));
    std::size_t b1 = to >= len ? r.text.size() : grapheme_byte_offset(r.text, static_cast<std::size_t>(to));
    page.rows.push_back({id, r.seq, r.role, r.text.substr(b0, b1 - b0)});
  }
  return len;
}

/// A page read with the derived spans (lib/recall/cover_spans.hpp): whole covered view nodes and
/// whole blocks of 1024 covers before the page are skipped by their stored lengths, so the cost is
/// the block list plus the rows of the page, however deep the page lies. Gives exactly the page
/// of the row-by-row walk below.
class SpanWalk {
 public:
  SpanWalk(Store& st, ExpandPage& page, std::int64_t offset, std::int64_t end)
      : st_(st), page_(page), offset_(offset), end_(end) {}

  /// Walks view node `seq` with stored span `span`; false once the page is full.
  bool view(std::int64_t seq, const CoverSpan& span, int depth) {
    if (depth > 64) throw Error(Exit::bad_input, "coverage.too_deep", "summary coverage nests deeper than 64 levels");
    if (skip(span)) return true;
    std::int64_t from_pos = 0;
    for (const CoverBlock& b : stored_cover_blocks(st_, seq)) {
      if (!skip(b.span)) {
        from_pos = b.block * kCoverBlock;
        break;
      }
      from_pos = (b.block + 1) * kCoverBlock;
    }
    CoversCursor cur(st_, seq, from_pos, true);
    CoveredEntry e;
    while (cur.next(e)) {
      if (e.child_view) {
        if (!view(e.seq, child_span(e), depth + 1)) return false;
        continue;
      }
      const std::int64_t start = seen_ > 0 ? pos_ + 2 : pos_;  // kExpandSeparator before every row but the first
      if (start >= end_) {
        more_ = true;
        return false;
      }
      const std::int64_t g = e.graphemes;
      if (g >= 0 && start + g <= offset_ && !(g == 0 && start >= offset_)) {
        pos_ = start + g;  // before the page: skipped by its indexed length, never read
      } else {
        pos_ = start + slice_into(page_, e.id, row_text(st_, e.id), start, offset_, end_);
      }
      ++seen_;
      if (pos_ > end_) {
        more_ = true;
        return false;
      }
    }
    return true;
  }

  /// The first (or last) original row under view node `seq`, empty when it has none.
  std::string edge(std::int64_t seq, bool last, int depth) {
    if (depth > 64) throw Error(Exit::bad_input, "coverage.too_deep", "summary coverage nests deeper than 64 levels");
    std::vector<CoverBlock> blocks = stored_cover_blocks(st_, seq);
    if (last) std::reverse(blocks.begin(), blocks.end());
    for (const CoverBlock& b : blocks) {
      if (b.span.rows == 0) continue;
      CoversCursor cur(st_, seq, b.block * kCoverBlock, false);
      CoveredEntry e;
      std::string found;
      for (std::int64_t i = 0; i < kCoverBlock && cur.next(e); ++i) {
        std::string here;
        if (!e.child_view) here = e.id;
        else if (child_span(e).rows > 0) here = edge(e.seq, last, depth + 1);
        if (here.empty()) continue;
        found = std::move(here);
        if (!last) break;
      }
      if (!found.empty()) return found;
    }
    return {};
  }

  bool more() const { return more_; }

 private:
  /// Skips a run of `span.rows` rows wholly before the page; false (nothing moved) otherwise.
  bool skip(const CoverSpan& span) {
    if (span.rows == 0) return true;
    const std::int64_t start = seen_ > 0 ? pos_ + 2 : pos_;
    const std::int64_t stop = start + span.graphemes + 2 * (span.rows - 1);
    if (stop >= offset_) return false;
    pos_ = stop;
    seen_ += span.rows;
    return true;
  }

  CoverSpan child_span(const CoveredEntry& e) {
    std::optional<CoverSpan> s = stored_cover_span(st_, e.seq);
    if (!s) throw Error(Exit::bad_input, "coverage.stale", fmt::format("the derived span of '{}' is missing", e.id),
                        "run `ctxfold index --rebuild`");
    return *s;
  }

  Store& st_;
  ExpandPage& page_;
  std::int64_t offset_, end_;
  std::int64_t pos_ = 0;   // grapheme position after the last row passed
  std::int64_t seen_ = 0;  // rows passed
  bool more_ = false;
};

}  // namespace

Coverage resolve_coverage(Store& st, const std::string& id) {
  const std::int64_t seq = view_seq(st, id);
  Coverage c;
  std::unordered_set<std::string> seen{id};
  collect(st, seq, c, seen, 0, text_index_state(st).through_seq > 0);
  return c;
}

ExpandPage expand(Store& st, const std::string& id, std::int64_t offset, std::int64_t limit) {
  if (limit <= 0) throw Error(Exit::usage, "expand.limit", "--limit must be positive");
  if (offset < 0) throw Error(Exit::usage, "expand.offset", "--offset must not be negative");
  const std::int64_t end = offset + limit;
  const std::int64_t seq = view_seq(st, id);
  if (std::optional<CoverSpan> span = stored_cover_span(st, seq); span && cover_span_current(st, seq)) {
    ExpandPage page;
    page.id = id;
    page.count = span->rows;
    page.offset = offset;
    page.limit = limit;
    SpanWalk walk(st, page, offset, end);
    if (span->rows > 0) {
      page.first = walk.edge(seq, false, 0);
      page.last = walk.edge(seq, true, 0);
    }
    walk.view(seq, *span, 0);
    if (walk.more()) page.next_offset = end;
    return page;
  }
  Coverage cov = resolve_coverage(st, id);
  ExpandPage page;
  page.id = id;
  page.count = static_cast<std::int64_t>(cov.rows.size());
  if (!cov.rows.empty()) {
    page.first = cov.rows.front();
    page.last = cov.rows.back();
  }
  page.offset = offset;
  page.limit = limit;
  std::int64_t pos = 0;  // grapheme position of the current row's start in the expansion
  bool more = false;
  for (std::size_t i = 0; i < cov.rows.size(); ++i) {
    if (i > 0) pos += 2;  // kExpandSeparator
    if (pos >= end) {
      more = true;
      break;
    }
    const std::int64_t known = cov.row_graphemes[i];
    if (known >= 0 && pos + known <= offset && !(known == 0 && pos >= offset)) {
      pos += known;  // before the page: skipped by its indexed length, never read
      continue;
    }
    pos += slice_into(page, cov.rows[i], row_text(st, cov.rows[i]), pos, offset, end);
    if (pos > end) {
      more = true;
      break;
    }
  }
  if (!more && pos == end && !cov.rows.empty()) more = false;
  if (more) page.next_offset = end;
  return page;
}

Json expand_page_record(const ExpandPage& p) {
  Json rows = Json::array();
  for (const ExpandRow& r : p.rows)
    rows.push_back({{"id", r.id}, {"seq", r.seq}, {"role", r.role.empty() ? Json(nullptr) : Json(r.role)}, {"text", r.text}});
  return {{"schema", "ctxfold.expand/1"},
          {"id", p.id},
          {"covers",
           {{"first", p.first.empty() ? Json(nullptr) : Json(p.first)},
            {"last", p.last.empty() ? Json(nullptr) : Json(p.last)},
            {"count", p.count}}},
          {"offset", p.offset},
          {"limit", p.limit},
          {"next_offset", p.next_offset ? Json(*p.next_offset) : Json(nullptr)},
          {"rows", rows}};
}

}  // namespace ctxfold
