// Lineage of forked, resumed and sub-agent sessions and their shared prefixes (docs/forensics.md
// "Lineage").
#include "forensics/lineage.hpp"

#include <algorithm>

#include "model/node.hpp"

namespace ctxfold {
namespace {

std::optional<std::string> meta_str(const Json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it != j.end() && it->is_string() && !it->get<std::string>().empty()) return it->get<std::string>();
  return std::nullopt;
}

/// Claude Code: per session, the other sessions its assistant records name in requestSessionId
/// (2.1.x writes it on the records --fork-session copies from the session that made the request)
/// and how many records name each.
/// The nodes of the query's `nodes n` row source: the nodes node_marks lists with a lineage key
/// (schema 013) or, in a file of schema 012 opened read-only, those of the partial index
/// nodes_lineage_links, so only those few are read; every node otherwise. Each query keeps the
/// term for its key, so the rows are the same either way.
std::string lineage_nodes(Db& db) {
  if (db.has_schema_object("node_marks"))
    return "(SELECT * FROM nodes WHERE seq IN (SELECT seq FROM node_marks WHERE (mark & 1) <> 0)) n";
  return db.has_schema_object("nodes_lineage_links") ? "nodes n INDEXED BY nodes_lineage_links" : "nodes n";
}

std::map<std::string, std::map<std::string, std::int64_t>> request_sessions(Db& db) {
  std::map<std::string, std::map<std::string, std::int64_t>> out;
  // The named request session is filtered outside: a column alias is not visible in WHERE on a
  // server (docs/backends.md "Writing SQL for both engines").
  Stmt q = db.prepare(
      "SELECT session, r, count(DISTINCT id) FROM (SELECT n.session, n.id, "
      "json_extract(p.value,'$.record.requestSessionId') AS r "
      "FROM " + lineage_nodes(db) + ", json_each(n.metadata,'$.source.parts') p "
      "WHERE n.role='assistant' AND instr(n.metadata,'requestSessionId') > 0) x "
      "WHERE r IS NOT NULL AND r <> session GROUP BY session, r");
  while (q.step()) out[q.text(0)][q.text(1)] = q.int64(2);
  return out;
}

/// The parent a session's records name, and the relation (see SessionLineage::parent).
void named_parent(const SessionInfo& s, const std::map<std::string, std::int64_t>* requests, SessionLineage& l) {
  if (s.kind == "sidechain" && s.parent_session) {
    l.parent = s.parent_session;
    l.relation = "subagent";
  } else if (s.kind == "fork" && s.parent_session) {
    l.parent = s.parent_session;
    l.relation = "fork";
  } else if (auto f = meta_str(s.metadata, "forked_from_id")) {
    l.parent = f;
    l.relation = "fork";
  } else if (requests && !requests->empty()) {
    // The session most copied records name (one in practice).
    auto best = std::max_element(requests->begin(), requests->end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    l.parent = best->first;
    l.relation = "fork";
  } else if (auto inner = meta_str(s.metadata, "inner_session_id"); inner && *inner != s.id && s.kind == "main") {
    l.parent = inner;
    l.relation = "resume";
  }
  if (requests && s.kind == "main")
    for (const auto& [other, n] : *requests) l.foreign_requests += n;
}

/// A node stored twice under the client's own record id: (node, its session) and (the other
/// node, its session). From metadata.duplicate_of (the same record id written into another
/// session's file: Claude Code copies, Gemini CLI resumes) and metadata.forked_from (ctxfold fork).
struct CopyLink {
  std::string a, a_session, b, b_session;
};

std::vector<CopyLink> copy_links(Db& db) {
  std::vector<CopyLink> out;
  const std::string nodes = lineage_nodes(db);
  Stmt q = db.prepare(
      "SELECT n.id, n.session, o.id, o.session FROM " + nodes + " JOIN nodes o "
      "ON o.id = json_extract(n.metadata,'$.duplicate_of') "
      "WHERE instr(n.metadata,'\"duplicate_of\"') > 0 AND o.session <> n.session "
      "UNION ALL "
      "SELECT n.id, n.session, json_extract(n.metadata,'$.forked_from.id'), "
      "json_extract(n.metadata,'$.forked_from.session') FROM " + nodes + " "
      "WHERE instr(n.metadata,'\"forked_from\"') > 0 AND json_type(n.metadata,'$.forked_from')='object' "
      "AND json_extract(n.metadata,'$.forked_from.session') <> n.session");
  while (q.step())
    if (!q.is_null(2) && !q.is_null(3)) out.push_back({q.text(0), q.text(1), q.text(2), q.text(3)});
  return out;
}

struct Item {
  std::string id, kind, role, content;
  bool instructions = false;
};

std::vector<Item> codex_items(Db& db, const std::string& session) {
  std::vector<Item> out;
  Stmt q = db.prepare(
      "SELECT id, kind, coalesce(role,''), content, "
      "coalesce(json_extract(metadata,'$.codex_role'),'') = 'instructions' FROM nodes WHERE session=?1 ORDER BY seq");
  q.bind(1, session);
  while (q.step()) out.push_back({q.text(0), q.text(1), q.text(2), q.text(3), q.int64(4) != 0});
  return out;
}

/// Codex: a child rollout replays its parent's items (and their token_count events) before its
/// own. The shared prefix is the child's leading nodes equal to the parent's in order (kind, role
/// and content; the instructions node each session_meta gives is left out of the comparison).
void codex_prefix(Db& db, const std::string& child, const std::string& parent,
                  std::map<std::string, std::string>& shared) {
  std::vector<Item> c = codex_items(db, child), p = codex_items(db, parent);
  std::vector<const Item*> pc;
  for (const Item& i : p)
    if (!i.instructions) pc.push_back(&i);
  std::size_t k = 0;
  for (const Item& i : c) {
    if (i.instructions) continue;
    if (k >= pc.size() || pc[k]->kind != i.kind || pc[k]->role != i.role || pc[k]->content != i.content) break;
    shared.emplace(i.id, pc[k]->id);
    ++k;
  }
}

/// The stored ancestors of a session, nearest first; "loop" when the walk comes back to it.
std::vector<std::string> ancestors(const std::string& id, std::map<std::string, SessionLineage>& all, bool& loop) {
  std::vector<std::string> out;
  std::set<std::string> seen{id};
  loop = false;
  const SessionLineage* cur = &all[id];
  while (cur->parent) {
    auto it = all.find(*cur->parent);
    if (it == all.end()) break;  // missing
    if (!seen.insert(*cur->parent).second) {
      loop = true;
      break;
    }
    out.push_back(*cur->parent);
    cur = &it->second;
  }
  return out;
}

}  // namespace

std::map<std::string, SessionLineage> session_lineage(Store& store) {
  Db& db = store.db();
  std::vector<SessionInfo> all = store.sessions();
  const auto requests = request_sessions(db);
  std::map<std::string, SessionLineage> out;
  std::map<std::string, std::string> format;
  for (const SessionInfo& s : all) {
    SessionLineage l;
    l.session = s.id;
    auto r = requests.find(s.id);
    named_parent(s, r == requests.end() ? nullptr : &r->second, l);
    format[s.id] = s.format.value_or("");
    out.emplace(s.id, std::move(l));
  }
  // A Claude Code session is stored under its file's name; a parent named by its sessionId is
  // found through the file's inner sessionId when no session has that id.
  std::map<std::string, std::string> by_inner;
  for (const SessionInfo& s : all)
    if (auto inner = meta_str(s.metadata, "inner_session_id"); inner && s.kind == "main" && *inner != s.id)
      by_inner.emplace(*inner, s.id);
  std::map<std::string, std::set<std::string>> anc;  // stored, loop-free ancestors
  for (auto& [id, l] : out)
    if (l.parent && !out.count(*l.parent))
      if (auto b = by_inner.find(*l.parent); b != by_inner.end() && b->second != id) l.parent = b->second;
  for (auto& [id, l] : out) {
    if (!l.parent) continue;
    if (!out.count(*l.parent)) {
      l.parent_state = "missing";
      continue;
    }
    bool loop = false;
    std::vector<std::string> a = ancestors(id, out, loop);
    l.parent_state = loop ? "loop" : "stored";
    if (!loop) anc[id] = std::set<std::string>(a.begin(), a.end());
  }
  // In a parent loop no session is the root: the one listed first (lineage_order: creation order)
  // is taken as its neighbour's parent, so the loop's shared records still count once.
  {
    std::map<std::string, std::size_t> rank;
    std::vector<std::string> order = lineage_order(all, out);
    for (std::size_t i = 0; i < order.size(); ++i) rank[order[i]] = i;
    for (auto& [id, l] : out)
      if (l.parent_state == "loop" && rank[*l.parent] < rank[id]) anc[id] = {*l.parent};
  }
  // Copies of one record in two sessions: the copy in the descendant is its shared prefix,
  // whichever of the two was imported first.
  for (const CopyLink& c : copy_links(db)) {
    if (auto it = anc.find(c.a_session); it != anc.end() && it->second.count(c.b_session))
      out[c.a_session].shared.emplace(c.a, c.b);
    else if (auto jt = anc.find(c.b_session); jt != anc.end() && jt->second.count(c.a_session))
      out[c.b_session].shared.emplace(c.b, c.a);
  }
  for (auto& [id, l] : out)
    if (anc.count(id) && format[id] == "codex" && format[*l.parent] == "codex")
      codex_prefix(db, id, *l.parent, l.shared);
  return out;
}

std::vector<std::string> lineage_order(const std::vector<SessionInfo>& sessions,
                                       const std::map<std::string, SessionLineage>& lineage) {
  std::map<std::string, std::vector<std::string>> children;
  std::vector<std::string> roots;
  for (const SessionInfo& s : sessions) {
    auto it = lineage.find(s.id);
    const bool linked = it != lineage.end() && it->second.parent && *it->second.parent != s.id &&
                        (it->second.parent_state == "stored" || it->second.parent_state == "loop");
    if (linked) children[*it->second.parent].push_back(s.id);
    else roots.push_back(s.id);
  }
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::vector<std::string> stack;
  auto visit = [&](const std::string& root) {
    stack.assign(1, root);
    while (!stack.empty()) {
      std::string id = std::move(stack.back());
      stack.pop_back();
      if (!seen.insert(id).second) continue;
      out.push_back(id);
      const auto& c = children[id];
      for (auto it = c.rbegin(); it != c.rend(); ++it) stack.push_back(*it);
    }
  };
  for (const auto& r : roots) visit(r);
  for (const SessionInfo& s : sessions) visit(s.id);  // parent loops
  return out;
}

std::set<std::string> shared_prefix_nodes(const std::map<std::string, SessionLineage>& lineage) {
  std::set<std::string> out;
  for (const auto& [id, l] : lineage)
    for (const auto& [node, orig] : l.shared) out.insert(node);
  return out;
}

std::set<std::string> shared_prefix_nodes(Store& store) {
  // A shared prefix is made of copy links between a session and its ancestor, and of Codex
  // children replaying a Codex parent: with no copy link and fewer than two Codex sessions there
  // is none, whatever the parents are, and the whole lineage (every session's metadata parsed)
  // need not be computed.
  Db& db = store.db();
  std::int64_t codex = 0;
  {
    Stmt q = db.prepare("SELECT count(*) FROM sessions WHERE format = 'codex'");
    if (q.step()) codex = q.int64(0);
  }
  if (codex < 2 && copy_links(db).empty()) return {};
  return shared_prefix_nodes(session_lineage(store));
}

Json lineage_json(const SessionLineage& l) {
  return Json{{"parent", l.parent ? Json(*l.parent) : Json(nullptr)},
              {"relation", l.relation.empty() ? Json(nullptr) : Json(l.relation)},
              {"parent_state", l.parent_state},
              {"shared_nodes", l.parent_state == "missing" ? Json(nullptr) : Json(l.shared.size())}};
}

}  // namespace ctxfold
