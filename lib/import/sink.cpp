#include <set>

#include <fmt/format.h>

#include "import/import.hpp"

namespace ctxfold {
namespace {

/// " (table T, row R)" for a node read from a database row (metadata.source.table and .rowid, the
/// opencode / Kilo stores), else "": where an empty node came from when there is no file line.
std::string db_row(const Json& metadata) {
  auto s = metadata.find("source");
  if (s == metadata.end() || !s->is_object() || !s->contains("table") || !s->contains("rowid")) return {};
  return fmt::format(" (table {}, row {})", json_str(*s, "table"), (*s)["rowid"].dump());
}

}  // namespace

ImportSink::ImportSink(Store& store, ImportResult& result, std::string file)
    : store_(store), result_(result), file_(std::move(file)), start_seq_(store.max_seq()) {}

void ImportSink::warn(std::int64_t line, const std::string& code, const std::string& message) {
  result_.warnings.push_back(ImportWarning{file_, line, code, message});
}

SessionImport& ImportSink::entry(const std::string& session) {
  auto it = index_.find(session);
  if (it == index_.end()) {
    result_.sessions.push_back(SessionImport{session, file_, "", 0, 0, store_.head(session)});
    it = index_.emplace(session, result_.sessions.size() - 1).first;
  }
  return result_.sessions[it->second];
}

void ImportSink::begin_session(SessionInfo info) {
  if (!info.source) info.source = file_;
  store_.create_session(info);
  SessionImport& e = entry(info.id);
  e.format = info.format.value_or("");
}

bool ImportSink::has(const std::string& id) { return store_.has_node(id); }

bool ImportSink::added_here(const std::string& id) {
  auto& st = store_.db().cached("SELECT seq FROM nodes WHERE id=?1");
  ResetOnExit st_reset(st);
  st.bind(1, id);
  return st.step() && st.int64(0) > start_seq_;
}

std::optional<std::string> ImportSink::same_but_moved(const Node& n) {
  // Candidates: the id itself and the conflict copies stored as "<id>~<8 hex>".
  std::vector<std::string> ids{n.id};
  {
    auto& st = store_.db().cached("SELECT id FROM nodes WHERE id > ?1 AND id < ?2 ORDER BY seq");
    ResetOnExit st_reset(st);
    st.bind(1, n.id + "~").bind(2, n.id + "~~");
    while (st.step()) ids.push_back(st.text(0));
  }
  Json want = n.metadata;
  want.erase("source");
  want.erase("covers");
  want.erase("duplicate_of");
  for (const std::string& id : ids) {
    auto stored = store_.node(id);
    if (!stored || stored->session != n.session || stored->kind != n.kind || stored->role != n.role ||
        stored->predecessor != n.predecessor || stored->content != n.content || stored->covers_ids != n.covers_ids)
      continue;
    Json have = stored->metadata;
    have.erase("source");
    have.erase("covers");
    have.erase("duplicate_of");
    if (have == want) return id;
  }
  return std::nullopt;
}

std::string ImportSink::add(Node n, std::int64_t line) {
  SessionImport& e = entry(n.session);
  if (n.predecessor) {
    std::optional<std::string> psession;
    if (!last_id_.empty() && *n.predecessor == last_id_) {
      psession = last_session_;  // the node just stored, as most predecessors are: no statement
    } else {
      auto& st = store_.db().cached("SELECT session FROM nodes WHERE id=?1");
      ResetOnExit st_reset(st);
      st.bind(1, *n.predecessor);
      if (st.step()) psession = st.text(0);
    }
    if (psession != n.session) {
      warn(line, "parent.missing",
           psession ? fmt::format("node '{}' names predecessor '{}' of another session '{}'; kept as a root", n.id,
                                  *n.predecessor, *psession)
             : fmt::format("node '{}' names predecessor '{}', which the source never wrote; kept as a root", n.id,
                           *n.predecessor));
      n.metadata["missing_predecessor"] = *n.predecessor;
      n.predecessor.reset();
    }
  }
  // A conversation record that converted to nothing is reported, never passed over in silence
  // (docs/import.md "What every import guarantees").
  if (n.kind == kind::kMessage && !n.role.empty() && n.content.is_array() && n.content.empty())
    warn(line, "node.empty",
         fmt::format("node '{}' ({}) has no content: the record{} holds nothing this importer reads", n.id, n.role,
                     db_row(n.metadata)));
  std::string id = n.id;
  switch (store_.append(n)) {
    case AppendResult::added:
      ++e.nodes_added;
      last_id_ = id;
      last_session_ = n.session;
      return id;
    case AppendResult::duplicate:
      ++e.nodes_skipped;
      last_id_ = id;  // stored with the same digest, so in the same session
      last_session_ = n.session;
      if (added_here(id))
        warn(line, "id.duplicate", fmt::format("node '{}' appears again with an identical payload; counted once", id));
      return id;
    case AppendResult::conflict:
      break;
  }
  if (auto same = same_but_moved(n)) {
    // A rewritten source file re-read whole: the same record at another line (Claude Code and
    // Codex keep line numbers in metadata.source) is the node already stored, not a new one.
    ++e.nodes_skipped;
    return *same;
  }
  Node copy = n;
  copy.id = fmt::format("{}~{}", id, node_digest(n).substr(0, 8));
  copy.metadata["duplicate_of"] = id;
  AppendResult r = store_.append(copy);
  if (r == AppendResult::added) {
    ++e.nodes_added;
    warn(line, "id.duplicate_conflict",
         fmt::format("node '{}' appears again with a different payload; kept as '{}'", id, copy.id));
  } else {
    ++e.nodes_skipped;
  }
  return copy.id;
}

void ImportSink::keep_record(const std::string& session, std::int64_t line, const std::string& type,
                             const std::string& raw) {
  store_.add_source_record(session, file_, line, type, raw);
}

void ImportSink::follow_rewrite(const std::string& session, const std::string& node_id,
                                const std::set<std::string>& source_nodes) {
  auto current = store_.head(session);
  if (current && *current != node_id && source_nodes.count(*current) && added_here(node_id)) {
    store_.move_head(session, node_id, "import");
    entry(session).head = store_.head(session);
    return;
  }
  propose_head(session, node_id);
}

void ImportSink::follow_file(const std::string& session, const std::string& node_id) {
  auto current = store_.head(session);
  if (current && *current != node_id && added_here(node_id)) {
    const std::vector<HeadMove> moves = store_.head_moves(session);
    if (!moves.empty() && moves.back().cause == "import") {
      store_.move_head(session, node_id, "import");
      entry(session).head = store_.head(session);
      return;
    }
  }
  propose_head(session, node_id);
}

void ImportSink::propose_head(const std::string& session, const std::string& node_id) {
  SessionImport& e = entry(session);
  auto current = store_.head(session);
  if (current == node_id) {
    e.head = current;
    return;
  }
  bool extends = !current;
  if (current) {
    // Does node_id descend from the current HEAD? Walk predecessors (bounded: no cycles by FK order).
    std::optional<std::string> cur = node_id;
    std::int64_t limit = store_.max_seq() + 1;
    while (cur && limit-- > 0) {
      if (*cur == *current) {
        extends = true;
        break;
      }
      cur = store_.predecessor_of(*cur);
    }
  }
  if (!extends && current) {
    // The earlier import ended on a side record (a progress or attachment event hanging off the
    // chain, which the conversation did not continue from): when everything between that HEAD
    // and the new leaf's spine is events, the new leaf extends the conversation HEAD was in.
    std::set<std::string> spine;
    std::optional<std::string> cur = node_id;
    std::int64_t limit = store_.max_seq() + 1;
    while (cur && limit-- > 0) {
      spine.insert(*cur);
      cur = store_.predecessor_of(*cur);
    }
    cur = current;
    limit = store_.max_seq() + 1;
    while (cur && !spine.count(*cur) && limit-- > 0) {
      auto n = store_.node(*cur, false);
      if (!n || n->kind != kind::kEvent) break;
      cur = n->predecessor;
    }
    extends = cur && spine.count(*cur) > 0;
  }
  if (extends) store_.move_head(session, node_id, "import");
  e.head = store_.head(session);
}

}  // namespace ctxfold
