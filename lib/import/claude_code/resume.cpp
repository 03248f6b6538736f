// Claude Code importer, resumed imports: what a file that only grew may continue from.

#include "import/claude_code/skeleton.hpp"

namespace ctxfold::cc_import {

/// Resumed import: what only a whole-file read plans right (docs/import.md "Claude Code"): a parent not
/// found (so attached to the record before it), a compaction (its covered chain lies before the
/// resume point) or an inline 1.0.x sidechain (its root may). Throws kResumeUnsafe.
void Importer::check_resumable() const {
  if (!resume_) return;
  for (const Plan& p : plans_)
    if (p.missing_pred)
      throw Error(Exit::bad_input, kResumeUnsafe, "a record names a parent written neither before nor after");
  for (const Line& ln : sk_.lines) {
    if (ln.boundary || ln.compact_summary)
      throw Error(Exit::bad_input, kResumeUnsafe, "a compaction after the resume point");
    if (ln.sidechain && !subagent_)
      throw Error(Exit::bad_input, kResumeUnsafe, "an inline sidechain after the resume point");
  }
}

std::string Importer::stored_node_of_uuid(const std::string& uuid, const std::string& session) {
  if (auto n = sink_.store().node(uuid, false)) return n->session == session ? uuid : std::string();
  // A streamed line merged into the node of its message's first line (source.parts[].record.uuid);
  // an appended record names one of the last lines written, so only the newest nodes are searched.
  auto& q = sink_.store().db().cached(
      "SELECT n.id FROM (SELECT id, metadata FROM nodes WHERE session=?1 ORDER BY seq DESC LIMIT 256) n, "
      "json_each(n.metadata, '$.source.parts') p WHERE json_extract(p.value, '$.record.uuid') = ?2 LIMIT 1");
  ResetOnExit r(q);
  q.bind(1, session).bind(2, uuid);
  return q.step() ? q.text(0) : std::string();
}

std::string Importer::stored_message_id(const std::string& id) {
  auto n = sink_.store().node(id, false);
  return n && n->role == role::kAssistant ? json_str(n->metadata, "message_id") : std::string();
}

/// The end of the stored chain of tool results linearized under a stored assistant step (the
/// step itself when it has none yet): where a resumed result continues (linearize_results).
std::string Importer::stored_results_end(const std::string& step) {
  std::string cur = step;
  for (int guard = 0; guard < 10000; ++guard) {
    std::string next;
    for (const std::string& c : sink_.store().children(cur))
      if (auto n = sink_.store().node(c, false); n && n->role == role::kTool) next = c;
    if (next.empty()) break;
    cur = std::move(next);
  }
  return cur;
}

}  // namespace ctxfold::cc_import
