#include <chrono>

#include <fmt/format.h>

#include "store/store.hpp"
#include "recall/grep.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

/// The text of a content array's thinking blocks, joined by "\n"; empty when it has none.
std::string thinking_text(const Json& content) {
  std::string out;
  if (!content.is_array()) return out;
  bool first = true;
  for (const auto& b : content) {
    if (!b.is_object() || json_str(b, "type") != "thinking") continue;
    if (!first) out += "\n";
    out += json_str(b, "thinking");
    first = false;
  }
  if (!utf8_valid(out)) out = utf8_sanitize(out);
  return out;
}

}  // namespace

GrepTotals grep_thinking(Store& st, const GrepOptions& o, const std::function<void(const GrepMatch&)>& on_match) {
  if (o.scope)
    throw Error(Exit::usage, "grep.scope", "--scope does not apply to --in thinking",
                "search a session's thinking with --session, or every session with --all-sessions");
  const auto t0 = std::chrono::steady_clock::now();
  Matcher m(o.pattern, o.regex, o.ignore_case);
  GrepTotals totals;
  totals.index = "scan";
  auto q = st.db().prepare(
      "SELECT seq, id, session, role, content FROM nodes WHERE kind='message' AND (?1 = '' OR session=?1) "
      "AND content LIKE '%\"thinking\"%' ORDER BY seq");
  q.bind(1, o.session.value_or(""));  // '' for every session: a typed parameter on both engines
  std::int64_t n = 0;
  while (q.step()) {
    Json content = parse_node_content(q.view(4), st.path(), q.int64(0), q.view(1));
    std::string text = thinking_text(content);
    if (text.empty()) continue;
    ++totals.nodes_scanned;
    if (!m.matches(text) || o.skip.count(q.int64(0))) continue;
    const std::int64_t k = n++;
    ++totals.raw_matches;
    if (k < o.offset || (o.limit >= 0 && k >= o.offset + o.limit)) continue;
    GrepMatch g;
    g.seq = q.int64(0);
    g.id = std::string(q.text(1));
    g.session = std::string(q.text(2));
    g.role = std::string(q.text(3));
    g.kind = "message";
    g.raw = true;
    g.covered_by = covering_summary(st, g.id);
    auto at = m.find_grapheme(text);
    g.offset = static_cast<std::int64_t>(at.value_or(0));
    g.snippet = grep_snippet(text, at.value_or(0));
    on_match(g);
  }
  totals.elapsed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  return totals;
}

}  // namespace ctxfold
