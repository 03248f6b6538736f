#include "recall/expand.hpp"

#include <fmt/format.h>

#include <unordered_set>

#include "recall/text_index.hpp"
#include "util/error.hpp"
#include "util/graphemes.hpp"
#include "util/utf8.hpp"

namespace ctxfold {

namespace {

bool has_successor(Store& st, const std::string& id) {
  auto& q = st.db().cached("SELECT 1 FROM nodes WHERE predecessor=?1 LIMIT 1");
  ResetOnExit reset(q);
  q.bind(1, id);
  return q.step();
}

void collect(Store& st, std::int64_t view_seq, Coverage& out, std::unordered_set<std::string>& seen, int depth,
             bool stats) {
  if (depth > 64) throw Error(Exit::bad_input, "coverage.too_deep", "summary coverage nests deeper than 64 levels");
  // One statement per view node: its covered ids in order, each with its kind and stored length.
  auto q = st.db().prepare(stats ? "SELECT c.node_id, n.seq, n.kind, n.covers_count, t.graphemes FROM covers c "
                                   "LEFT JOIN nodes n ON n.id = c.node_id LEFT JOIN node_text t ON t.seq = n.seq "
                                   "WHERE c.summary_seq = ?1 ORDER BY c.pos"
                                 : "SELECT c.node_id, n.seq, n.kind, n.covers_count, NULL FROM covers c "
                                   "LEFT JOIN nodes n ON n.id = c.node_id WHERE c.summary_seq = ?1 ORDER BY c.pos");
  q.bind(1, view_seq);
  while (q.step()) {
    std::string id = q.text(0);
    const bool found = !q.is_null(1);
    if (found && kind::is_view(q.view(2)) && !q.is_null(3)) {
      // A view node the chain continues from (an imported summary written into the transcript)
      // is one of the covered rows, not a child summary to open.
      if (has_successor(st, id)) {
        out.row_graphemes.push_back(!q.is_null(4) ? q.int64(4) : -1);
        out.rows.push_back(std::move(id));
        continue;
      }
      if (!seen.insert(id).second) continue;  // a broken database cannot loop
      out.views.push_back(id);
      collect(st, q.int64(1), out, seen, depth + 1, stats);
    } else {
      out.row_graphemes.push_back(found && !q.is_null(4) ? q.int64(4) : -1);
      out.rows.push_back(std::move(id));
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
  r.text = searchable_text(q.text(2));
  return r;
}

}  // namespace

Json parse_stored_content(const std::string& raw) {
  try {
    return parse_json(raw);
  } catch (const nlohmann::json::parse_error&) {
    if (utf8_valid(raw)) throw;
    return parse_json(utf8_sanitize(raw));
  }
}

Coverage resolve_coverage(Store& st, const std::string& id) {
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
  Coverage c;
  std::unordered_set<std::string> seen{id};
  collect(st, seq, c, seen, 0, text_index_state(st).through_seq > 0);
  return c;
}

ExpandPage expand(Store& st, const std::string& id, std::int64_t offset, std::int64_t limit) {
  if (limit <= 0) throw Error(Exit::usage, "expand.limit", "--limit must be positive");
  if (offset < 0) throw Error(Exit::usage, "expand.offset", "--offset must not be negative");
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
  const std::int64_t end = offset + limit;
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
    RowText r = row_text(st, cov.rows[i]);
    const std::int64_t len = static_cast<std::int64_t>(grapheme_count(r.text));
    if (pos + len > offset || (len == 0 && pos >= offset)) {
      const std::int64_t from = std::max<std::int64_t>(0, offset - pos);
      const std::int64_t to = std::min<std::int64_t>(len, end - pos);
      std::size_t b0 = grapheme_byte_offset(r.text, static_cast<std::size_t>(from));
      std::size_t b1 = to >= len ? r.text.size() : grapheme_byte_offset(r.text, static_cast<std::size_t>(to));
      page.rows.push_back({cov.rows[i], r.seq, r.role, r.text.substr(b0, b1 - b0)});
    }
    pos += len;
    if (pos > end) {
      more = true;
      break;
    }
  }
  if (!more && pos == end && !cov.rows.empty()) more = false;
  if (more) page.next_offset = end;
  return page;
}

}  // namespace ctxfold
