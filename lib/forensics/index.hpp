#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "forensics/lineage.hpp"
#include "store/store.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// One row of the sessions index (`ctxfold sessions`), read from the ledger only: timestamps
/// come from the records' own `timestamp` fields (metadata.timestamp), never from file times.
struct SessionIndexEntry {
  SessionInfo info;
  std::string agent;                   ///< the importer (claude-code, codex, gemini, ...) or "ctxfold"
  std::optional<std::string> project;  ///< working directory (Claude cwd, Codex session_meta.cwd) or
                                       ///< Gemini projectHash; a sub-agent inherits its parent's
  std::optional<std::string> title;    ///< the agent's own title record, else the first prompt
  std::string title_source;            ///< "agent" | "first_prompt" | "none"
  std::vector<std::string> models;     ///< distinct models named by the records, first-seen order
  std::optional<std::string> first_timestamp, last_timestamp;
  std::int64_t node_count = 0;
  std::int64_t compactions_imported = 0;  ///< summary nodes the agent wrote (Claude compact_boundary, Codex compacted)
  std::int64_t compactions_ctxfold = 0;   ///< summary nodes ctxfold's own strategies wrote
  std::optional<std::string> forked_from;   ///< fork parent (ctxfold fork, Codex forked_from_id, the session
                                            ///< Claude Code's --fork-session copies name: lineage.hpp)
  std::optional<std::string> resumed_from;  ///< Claude: the inner sessionId when it differs from the file's
  int depth = 0;                            ///< 0 for top-level sessions, +1 per sub-agent/fork level
  SessionLineage lineage;                   ///< parent, relation and shared prefix (lineage.hpp)
};

/// Filters of the sessions index. since/until compare with the session's last/first record
/// timestamp as ISO-8601 text (a date "2026-02-23" works as a prefix: until includes that day);
/// project is a substring of the project; agent is equal to the agent name.
struct SessionFilter {
  std::optional<std::string> since, until, project, agent;
};

/// Every session of the store, each sub-agent, fork and resumed copy directly after its lineage
/// parent (lineage.hpp lineage_order), filtered. A child whose parent is filtered out is still listed
/// when it matches. Read-only.
std::vector<SessionIndexEntry> session_index(Store& store, const SessionFilter& filter = {});

/// One session record of schema ctxfold.sessions/1 as its fields, in order (docs/commands.md
/// "sessions"): {"id","agent","kind","parent_session","parent_node","depth","project","title",
/// "title_source","models","first_timestamp","last_timestamp","node_count",
/// "compactions":{"imported","ctxfold"},"forked_from","resumed_from","lineage":{"parent","relation",
/// "parent_state","shared_nodes"},"source","format","head","created_seq"}; absent optionals are null. `head` and `node_count` are the caller's (HEAD and
/// the count at the boundary it reads, `--as-of`). The one definition `sessions` prints and
/// `mcp`'s sessions tool returns.
Json session_record(const SessionIndexEntry& e, const std::optional<std::string>& head, std::int64_t node_count);

}  // namespace ctxfold
