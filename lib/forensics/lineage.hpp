#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "store/store.hpp"
#include "util/json.hpp"

// Lineage: which session a forked, resumed or sub-agent session continues, and which of its nodes
// replay that parent's history (the shared prefix), so that forensics count a request or a
// compaction once across the tree (docs/forensics.md "Lineage").
namespace ctxfold {

/// The lineage of one session, read from the records only (docs/forensics.md "Lineage").
struct SessionLineage {
  std::string session;
  /// The session the records name as the one this session continues or was launched from:
  /// a sub-agent's or ctxfold fork's parent_session, Codex session_meta.forked_from_id, the
  /// session Claude Code's copied assistant records name (requestSessionId), or the inner
  /// sessionId of a Claude Code file named otherwise. nullopt: none named.
  std::optional<std::string> parent;
  /// "subagent" | "fork" | "resume" | "" (no parent named).
  std::string relation;
  /// "stored" (the parent is in the archive), "missing" (named, not in the archive: the shared
  /// prefix is unknown), "loop" (following parents comes back to this session: no prefix is
  /// taken from the loop), "none" (no parent named).
  std::string parent_state = "none";
  /// The ids of this session's nodes that replay a node of an ancestor (the shared prefix), each
  /// mapped to the ancestor node it replays. Empty unless parent_state is "stored".
  std::map<std::string, std::string> shared;
  /// Assistant records of this session whose request another session made (Claude Code
  /// requestSessionId naming another session), counted even when that session is missing.
  std::int64_t foreign_requests = 0;
};

/// The lineage of every session of the store, keyed by session id. Order independent: the same
/// archive imported in any order gives the same result. Never loops (a parent cycle is marked
/// "loop"). Read-only.
std::map<std::string, SessionLineage> session_lineage(Store& store);

/// Session ids in the lineage tree's order: each root (a session without a stored parent, or in a
/// parent loop) in the store's creation order, each child directly after its parent, depth-first,
/// children in creation order. The order `sessions` lists them in.
std::vector<std::string> lineage_order(const std::vector<SessionInfo>& sessions,
                                       const std::map<std::string, SessionLineage>& lineage);

/// Every node id of the store that belongs to some session's shared prefix (the union of
/// SessionLineage::shared keys): what `grep --all-sessions` and `compactions` leave out as already
/// reported with the parent.
std::set<std::string> shared_prefix_nodes(const std::map<std::string, SessionLineage>& lineage);

/// The same as shared_prefix_nodes(session_lineage(store)), without computing the lineage when
/// the store holds no copy link and fewer than two Codex sessions (then no session can have a
/// shared prefix): what `grep --all-sessions` reads on every run. Read-only.
std::set<std::string> shared_prefix_nodes(Store& store);

/// {"parent","relation","parent_state","shared_nodes"} for `sessions` and `usage`: shared_nodes is
/// null when the parent is missing (the prefix cannot be known without it), else the count.
Json lineage_json(const SessionLineage& l);

}  // namespace ctxfold
