// The sessions index (`ctxfold sessions`): one row per session from the ledger's own records.
#include "forensics/index.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "model/node.hpp"
#include "store/store.hpp"
#include "util/json.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

std::optional<std::string> opt_str(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it != j.end() && it->is_string() && !it->get<std::string>().empty()) return it->get<std::string>();
  return std::nullopt;
}

/// One line of at most 100 characters (whole code points) from a prompt.
std::string title_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  auto b = s.find_first_not_of(' ');
  s = b == std::string::npos ? std::string() : s.substr(b);
  if (s.size() > 100) {
    std::size_t cut = 100;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut) + "...";
  }
  return s;
}

/// A user text that is a prompt a person typed, not an injection (Claude meta lines, command
/// echoes and caveats, Codex AGENTS.md / environment context, interrupted markers).
bool is_prompt(const std::string& t) {
  auto b = t.find_first_not_of(" \n\r\t");
  if (b == std::string::npos) return false;
  if (t[b] == '<') return false;
  if (t.compare(b, 12, "# AGENTS.md ") == 0) return false;
  if (t.compare(b, 10, "Caveat: ") == 0) return false;
  if (t.compare(b, 9, "[Request ") == 0) return false;
  return true;
}

/// Claude `summary` lines are titles; their leafUuid names the session they belong to, which
/// can be another file's (docs/import.md "Claude Code", issue #2597). The newest title record wins.
std::map<std::string, std::string> agent_titles(Db& db) {
  std::map<std::string, std::string> agent_title;
  Stmt q = db.prepare(
      "SELECT r.session, json_extract(r.raw,'$.summary'), n.session FROM source_records r "
      "LEFT JOIN nodes n ON n.id = json_extract(r.raw,'$.leafUuid') "
      "WHERE r.type='summary' AND json_valid(r.raw) ORDER BY r.seq");
  while (q.step()) {
    if (q.is_null(1)) continue;
    std::string owner = q.is_null(2) ? q.text(0) : q.text(2);
    agent_title[owner] = q.text(1);
  }
  return agent_title;
}

/// The entry's node count, timestamp range and summary counts.
void read_counts(Db& db, const SessionInfo& s, SessionIndexEntry& e) {
  Stmt q = db.prepare(
      "SELECT count(*), min(json_extract(metadata,'$.timestamp')), max(json_extract(metadata,'$.timestamp')), "
      "sum(CASE WHEN kind='summary' AND json_extract(metadata,'$.origin')='import' THEN 1 ELSE 0 END), "
      "sum(CASE WHEN kind='summary' AND coalesce(json_extract(metadata,'$.origin'),'')<>'import' THEN 1 ELSE 0 END) "
      "FROM nodes WHERE session=?1");
  q.bind(1, s.id);
  q.step();
  e.node_count = q.int64(0);
  e.first_timestamp = q.opt_text(1);
  e.last_timestamp = q.opt_text(2);
  e.compactions_imported = q.opt_int64(3).value_or(0);
  e.compactions_ctxfold = q.opt_int64(4).value_or(0);
}

void read_models(Db& db, const SessionInfo& s, SessionIndexEntry& e) {
  // Models in first-seen order: node metadata (Claude, Gemini), then Codex turn_context records.
  Stmt q = db.prepare(
      "SELECT m FROM (SELECT json_extract(metadata,'$.model') AS m, min(seq) AS s FROM nodes "
      "WHERE session=?1 AND role='assistant' GROUP BY m) AS t WHERE m IS NOT NULL ORDER BY s");
  q.bind(1, s.id);
  while (q.step()) e.models.push_back(q.text(0));
  Stmt r = db.prepare(
      "SELECT m FROM (SELECT json_extract(raw,'$.payload.model') AS m, min(seq) AS s FROM source_records "
      "WHERE session=?1 AND type='turn_context' AND json_valid(raw) GROUP BY m) AS t WHERE m IS NOT NULL ORDER BY s");
  r.bind(1, s.id);
  while (r.step())
    if (std::find(e.models.begin(), e.models.end(), r.text(0)) == e.models.end()) e.models.push_back(r.text(0));
}

/// The session's cwd, else the first record's, else Gemini's projectHash.
void read_project(Db& db, const SessionInfo& s, SessionIndexEntry& e) {
  e.project = opt_str(s.metadata, "cwd");
  if (!e.project) {
    Stmt q = db.prepare(
        "SELECT json_extract(metadata,'$.source.parts[0].record.cwd') FROM nodes "
        "WHERE session=?1 AND json_extract(metadata,'$.source.parts[0].record.cwd') IS NOT NULL ORDER BY seq LIMIT 1");
    q.bind(1, s.id);
    if (q.step()) e.project = q.text(0);
  }
  if (!e.project) e.project = opt_str(s.metadata, "projectHash");
}

/// The agent's title for the session, else its first prompt.
void read_title(Db& db, const SessionInfo& s, const std::map<std::string, std::string>& agent_title,
                SessionIndexEntry& e) {
  if (auto t = agent_title.find(s.id); t != agent_title.end()) {
    e.title = title_line(t->second);
    e.title_source = "agent";
  } else if (auto t2 = s.metadata.contains("summary") ? opt_str(s.metadata, "summary") : opt_str(s.metadata, "title")) {
    // Gemini's session summary; opencode's and Kilo's session title
    e.title = title_line(*t2);
    e.title_source = "agent";
  } else {
    Stmt q = db.prepare(
        "SELECT content, seq, id FROM nodes WHERE session=?1 AND kind='message' AND role='user' "
        "AND (json_extract(metadata,'$.is_meta') IS NULL OR CAST(json_extract(metadata,'$.is_meta') AS INTEGER)=0) AND json_extract(metadata,'$.codex_role') IS NULL "
        "ORDER BY seq LIMIT 64");
    q.bind(1, s.id);
    while (q.step() && !e.title) {
      Json content = parse_node_content(q.view(0), db.path(), q.int64(1), q.view(2));
      if (!content.is_array()) continue;
      for (const auto& b : content)
        if (b.is_object() && b.value("type", "") == "text" && b.contains("text") && b["text"].is_string() &&
            is_prompt(b["text"].get<std::string>())) {
          e.title = title_line(b["text"].get<std::string>());
          break;
        }
    }
    e.title_source = e.title ? "first_prompt" : "none";
  }
}

/// One session's row of the index (depth and an inherited project are set by the tree walk).
SessionIndexEntry index_entry(Db& db, const SessionInfo& s,
                              const std::map<std::string, std::string>& agent_title,
                              const std::map<std::string, SessionLineage>& lineage) {
  SessionIndexEntry e;
  e.info = s;
  e.agent = s.format.value_or("ctxfold");
  read_counts(db, s, e);
  read_models(db, s, e);
  read_project(db, s, e);
  read_title(db, s, agent_title, e);
  if (s.kind == "fork" && s.parent_session) e.forked_from = s.parent_session;
  if (auto f = opt_str(s.metadata, "forked_from_id")) e.forked_from = f;
  if (s.kind == "main") e.resumed_from = opt_str(s.metadata, "inner_session_id");
  if (auto l = lineage.find(s.id); l != lineage.end()) {
    e.lineage = l->second;
    if (e.lineage.relation == "fork" && !e.forked_from) e.forked_from = e.lineage.parent;
  }
  return e;
}

bool matches(const SessionFilter& filter, const SessionIndexEntry& e) {
  if (filter.agent && e.agent != *filter.agent) return false;
  if (filter.project && (!e.project || e.project->find(*filter.project) == std::string::npos)) return false;
  if (filter.since && (!e.last_timestamp || *e.last_timestamp < *filter.since)) return false;
  if (filter.until && (!e.first_timestamp || e.first_timestamp->substr(0, filter.until->size()) > *filter.until))
    return false;
  return true;
}

/// The entries in lineage order (lineage.hpp), depth set, filtered.
std::vector<SessionIndexEntry> walk_tree(const std::vector<SessionInfo>& all,
                                         const std::map<std::string, SessionLineage>& lineage,
                                         std::map<std::string, SessionIndexEntry>& by_id,
                                         const SessionFilter& filter) {
  std::vector<SessionIndexEntry> out;
  std::set<std::string> done;
  for (const std::string& id : lineage_order(all, lineage)) {
    SessionIndexEntry& e = by_id[id];
    e.depth = 0;
    const SessionLineage& l = e.lineage;
    if (l.parent && *l.parent != id && (l.parent_state == "stored" || l.parent_state == "loop")) {
      auto p = by_id.find(*l.parent);
      // The parent comes first in the order, unless this session closes a loop.
      if (p != by_id.end() && done.count(*l.parent)) {
        e.depth = p->second.depth + 1;
        // Sub-agent projects come from the parent when they name none.
        if (!e.project) e.project = p->second.project;
      }
    }
    done.insert(id);
    if (matches(filter, e)) out.push_back(e);
  }
  return out;
}

}  // namespace

std::vector<SessionIndexEntry> session_index(Store& store, const SessionFilter& filter) {
  Db& db = store.db();
  std::vector<SessionInfo> all = store.sessions();
  const std::map<std::string, SessionLineage> lineage = session_lineage(store);
  const std::map<std::string, std::string> agent_title = agent_titles(db);
  std::map<std::string, SessionIndexEntry> by_id;
  for (const SessionInfo& s : all) by_id.emplace(s.id, index_entry(db, s, agent_title, lineage));
  return walk_tree(all, lineage, by_id, filter);
}

Json session_record(const SessionIndexEntry& e, const std::optional<std::string>& head, std::int64_t node_count) {
  auto opt = [](const std::optional<std::string>& v) { return v ? Json(*v) : Json(nullptr); };
  const SessionInfo& s = e.info;
  return {{"id", s.id},
          {"agent", e.agent},
          {"kind", s.kind},
          {"parent_session", opt(s.parent_session)},
          {"parent_node", opt(s.parent_node)},
          {"depth", e.depth},
          {"project", opt(e.project)},
          {"title", opt(e.title)},
          {"title_source", e.title_source},
          {"models", e.models},
          {"first_timestamp", opt(e.first_timestamp)},
          {"last_timestamp", opt(e.last_timestamp)},
          {"node_count", node_count},
          {"compactions", {{"imported", e.compactions_imported}, {"ctxfold", e.compactions_ctxfold}}},
          {"forked_from", opt(e.forked_from)},
          {"resumed_from", opt(e.resumed_from)},
          {"lineage", lineage_json(e.lineage)},
          {"source", opt(s.source)},
          {"format", opt(s.format)},
          {"head", opt(head)},
          {"created_seq", s.created_seq}};
}

}  // namespace ctxfold
