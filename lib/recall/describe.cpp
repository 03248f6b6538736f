#include "recall/describe.hpp"
#include "model/view_kinds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_set>

#include "recall/expand.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace ctxfold {

namespace {

/// The view nodes that cover id (covers table) or name it as a child (lcm parents'
/// metadata.children), oldest first.
std::vector<std::string> parents_of(Store& st, const Node& n) {
  std::vector<std::string> out;
  auto q = st.db().prepare(
      "SELECT s.id FROM covers c JOIN nodes s ON s.seq=c.summary_seq WHERE c.node_id=?1 "
      "UNION SELECT p.id FROM nodes p, json_each(p.metadata, '$.children') ch WHERE p.session=?2 "
      "AND p.kind='summary' AND ch.value=?1 ORDER BY 1");
  q.bind(1, n.id).bind(2, n.session);
  std::vector<std::pair<std::int64_t, std::string>> seqd;
  while (q.step()) {
    auto p = st.node(q.text(0), false);
    if (p) seqd.emplace_back(p->seq, p->id);
  }
  std::sort(seqd.begin(), seqd.end());
  for (auto& [seq, id] : seqd) out.push_back(std::move(id));
  return out;
}

bool is_frontier(Store& st, const Node& n) {
  {
    auto& q = st.db().cached("SELECT 1 FROM covers WHERE node_id=?1 LIMIT 1");
    ResetOnExit reset(q);
    q.bind(1, n.id);
    if (q.step()) return false;
  }
  auto& q = st.db().cached(
      "SELECT 1 FROM nodes p, json_each(p.metadata, '$.children') ch WHERE p.session=?1 AND p.kind='summary' "
      "AND ch.value=?2 LIMIT 1");
  ResetOnExit reset(q);
  q.bind(1, n.session).bind(2, n.id);
  return !q.step();
}

std::string strategy_of(const Node& n) { return json_str(n.metadata, "strategy"); }

bool is_active(Store& st, const Node& n) {
  if (is_rolling_summary(n)) {
    auto a = st.active_summary(n.session);
    return a && a->id == n.id;
  }
  return is_frontier(st, n);
}

Json covers_json(const Node& n) {
  if (!n.metadata.contains("covers")) return nullptr;
  return n.metadata["covers"];
}

Json producer_of(const Node& n) {
  Json p{{"summarizer", nullptr}, {"model", nullptr}, {"prompt_version", nullptr}, {"origin", nullptr}, {"format", nullptr}};
  if (auto it = n.metadata.find("provenance"); it != n.metadata.end() && it->is_object()) {
    const Json& prov = *it;
    if (auto s = prov.find("summarizer"); s != prov.end()) {
      if (s->is_object()) {
        if (s->contains("kind")) p["summarizer"] = (*s)["kind"];
        if (s->contains("model")) p["model"] = (*s)["model"];
      } else {
        p["summarizer"] = *s;
      }
    }
    if (prov.contains("model") && p["model"].is_null()) p["model"] = prov["model"];
    if (prov.contains("prompt_version")) p["prompt_version"] = prov["prompt_version"];
  }
  if (n.metadata.contains("origin")) p["origin"] = n.metadata["origin"];
  if (auto s = n.metadata.find("source"); s != n.metadata.end() && s->is_object() && s->contains("format"))
    p["format"] = (*s)["format"];
  return p;
}

}  // namespace

std::vector<std::string> view_children(Store& st, std::int64_t view_seq) {
  std::vector<std::string> out;
  auto q = st.db().prepare(
      std::string("SELECT n.id FROM covers c JOIN nodes n ON n.id=c.node_id WHERE c.summary_seq=?1 AND n.kind IN ") +
      kViewKindsSql + " ORDER BY c.pos");
  q.bind(1, view_seq);
  while (q.step()) out.push_back(q.text(0));
  return out;
}

std::int64_t node_depth(Store& st, const Node& n) {
  if (!n.is_view()) return 0;
  if (auto it = n.metadata.find("depth"); it != n.metadata.end() && it->is_number_integer()) return it->get<std::int64_t>();
  std::int64_t best = 0;
  for (const std::string& c : view_children(st, n.seq)) {
    auto child = st.node(c, false);
    if (child && child->id != n.id) best = std::max(best, node_depth(st, *child));
  }
  return best + 1;
}

Json describe_node(Store& st, const std::string& id) {
  auto n = st.node(id, false);
  if (!n) throw Error(Exit::bad_input, "node.unknown", fmt::format("no node '{}'", id));
  Json out{{"schema", "ctxfold.describe/1"},
           {"id", n->id},
           {"session", n->session},
           {"kind", n->kind},
           {"role", n->role.empty() ? Json(nullptr) : Json(n->role)},
           {"seq", n->seq},
           {"depth", node_depth(st, *n)},
           {"strategy", strategy_of(*n).empty() ? Json(nullptr) : Json(strategy_of(*n))},
           {"parents", parents_of(st, *n)},
           {"estimated_tokens", n->tokens}};
  if (!n->is_view()) {
    out["active"] = nullptr;
    out["superseded"] = nullptr;
    out["coverage"] = nullptr;
    out["children"] = Json::array();
    out["summary_text"] = nullptr;
    out["source_estimated_tokens"] = nullptr;
    out["producer"] = producer_of(*n);
    return out;
  }
  const bool active = is_active(st, *n);
  out["active"] = active;
  out["superseded"] = !active;
  Coverage cov = resolve_coverage(st, n->id);
  Json coverage{{"first", nullptr}, {"last", nullptr}, {"first_seq", nullptr}, {"last_seq", nullptr},
                {"count", static_cast<std::int64_t>(cov.rows.size())}};
  std::int64_t source_tokens = 0;
  if (!cov.rows.empty()) {
    coverage["first"] = cov.rows.front();
    coverage["last"] = cov.rows.back();
    auto seq_of = [&](const std::string& rid) -> Json {
      auto& q = st.db().cached("SELECT seq FROM nodes WHERE id=?1");
      ResetOnExit reset(q);
      q.bind(1, rid);
      return q.step() ? Json(q.int64(0)) : Json(nullptr);
    };
    coverage["first_seq"] = seq_of(cov.rows.front());
    coverage["last_seq"] = seq_of(cov.rows.back());
  }
  if (cov.views.empty()) {
    // Covers are raw rows: one SQL sum over the covers table.
    auto q = st.db().prepare(
        "SELECT coalesce(sum(r.tokens),0) FROM covers c JOIN nodes r ON r.id=c.node_id WHERE c.summary_seq=?1");
    q.bind(1, n->seq);
    q.step();
    source_tokens = q.int64(0);
  } else {
    auto& q = st.db().cached("SELECT tokens FROM nodes WHERE id=?1");
    for (const std::string& rid : cov.rows) {
      ResetOnExit reset(q);
      q.bind(1, rid);
      if (q.step()) source_tokens += q.int64(0);
    }
  }
  out["coverage"] = coverage;
  if (auto it = n->metadata.find("children"); it != n->metadata.end() && it->is_array()) {
    out["children"] = *it;
  } else {
    out["children"] = view_children(st, n->seq);
  }
  out["summary_text"] = utf8_sanitize(node_text(*n));
  out["source_estimated_tokens"] = source_tokens;
  out["producer"] = producer_of(*n);
  return out;
}

Json list_views(Store& st, const std::string& session, std::int64_t offset, std::int64_t limit) {
  auto c = st.db().prepare(std::string("SELECT count(*) FROM nodes WHERE session=?1 AND kind IN ") + kViewKindsSql);
  c.bind(1, session);
  c.step();
  const std::int64_t total = c.int64(0);
  // Nodes an lcm parent condensed (its metadata.children): one pass over the session's parents.
  std::unordered_set<std::string> condensed;
  {
    auto q = st.db().prepare(
        "SELECT ch.value FROM nodes p, json_each(p.metadata, '$.children') ch WHERE p.session=?1 AND "
        "p.kind='summary' AND CAST(json_extract(p.metadata, '$.depth') AS INTEGER) > 1");
    q.bind(1, session);
    while (q.step()) condensed.insert(q.text(0));
  }
  std::vector<std::string> ids;
  std::vector<bool> frontier;
  {
    auto q = st.db().prepare(
        // INDEXED BY: without statistics the planner walks (session, seq) to skip the sort, which
        // reads every node of the session; the view nodes are few.
        "SELECT n.id, NOT EXISTS (SELECT 1 FROM covers cv WHERE cv.node_id = n.id) FROM nodes n "
        "INDEXED BY nodes_session_kind WHERE n.session=?1 AND n.kind IN " + std::string(kViewKindsSql) +
        " ORDER BY n.seq LIMIT ?2 OFFSET ?3");
    q.bind(1, session).bind(2, limit > 0 ? limit : std::numeric_limits<std::int64_t>::max()).bind(3, offset);
    while (q.step()) {
      ids.push_back(q.text(0));
      frontier.push_back(q.int64(1) != 0 && !condensed.count(ids.back()));
    }
  }
  Json items = Json::array();
  std::optional<Node> active = st.active_summary(session);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto n = st.node(ids[i], false);
    if (!n) continue;
    const std::string s = strategy_of(*n);
    const bool rolling_like = is_rolling_summary(*n);
    const bool is_act = rolling_like ? (active && active->id == n->id) : static_cast<bool>(frontier[i]);
    items.push_back({{"id", n->id},
                     {"kind", n->kind},
                     {"seq", n->seq},
                     {"strategy", s.empty() ? Json(nullptr) : Json(s)},
                     {"depth", node_depth(st, *n)},
                     {"active", is_act},
                     {"frontier", static_cast<bool>(frontier[i])},
                     {"covers", covers_json(*n)},
                     {"estimated_tokens", n->tokens}});
  }
  return {{"schema", "ctxfold.list/1"}, {"session", session}, {"total", total}, {"offset", offset}, {"items", items}};
}

}  // namespace ctxfold
