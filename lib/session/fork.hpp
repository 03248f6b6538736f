#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/store.hpp"
#include "util/json.hpp"

namespace ctxfold {

struct ForkOptions {
  std::string at;                      ///< the node the fork ends at (its HEAD)
  std::optional<std::string> session;  ///< when given, `at` must belong to it
  std::optional<std::string> name;     ///< the new session's id; default fork-<12 hex>
};

/// A view node of the source that fork did not copy. reason: "crosses_fork_point" (part of its
/// coverage is on the path, part is not: after the fork point or on another branch) or
/// "superseded" (a rolling summary the source no longer consults at the fork point; copying it
/// would make it the fork's active summary and change the fork's render).
struct OmittedSummary {
  std::string id;
  std::string reason;
};

struct ForkResult {
  std::string source_session;
  std::string session;
  std::string at;
  std::string head;  ///< the copy of `at`: the new session's HEAD
  std::int64_t source_boundary_seq = 0;
  std::int64_t copied_nodes = 0;  ///< every node written (path nodes and view nodes)
  std::vector<std::pair<std::string, std::string>> copied_summaries;  ///< (source id, copy id)
  std::vector<OmittedSummary> omitted_summaries;
};


/// Forks the session holding opts.at (docs/strategies.md "What a fork copies"):
/// writes a new session (kind "fork", parent_session = source, parent_node = at, metadata
/// {"forked_from","at","source_boundary_seq"}) holding
///  - the path root→at along predecessors, copied with new ids (fork_node_id) and remapped
///    predecessors: never sibling branches, never rows off that path (rewound or retried ones);
///  - every view node of the source whose whole coverage (covers_ids, each on the path or a view
///    node already copied) lies on the path, with remapped id, predecessor, covers_ids and every
///    metadata string naming a copied node (outside the provenance keys "source", "raw" and
///    "forked_from", kept verbatim); entries of
///    kNodeIdListKeys naming a node that is not copied are dropped and listed in
///    metadata.fork.dropped_refs. A view node crossing the fork point is omitted; its complete
///    children qualify on their own and are copied. Rolling summaries that the source no longer
///    consults at `at` are omitted as "superseded", so the fork renders exactly as the source's
///    `render --head at` did at the fork's boundary (invariant 9).
/// Nodes are written in the source's seq order (so "newest summary" means the same in both), each
/// with metadata.forked_from {"session","id"} (plus "origin" for a copy of a copy:
/// model/quoted_id.hpp forked_from_record), which names the id the fork's render quotes for the
/// copy, so model-visible text is the source's; HEAD of the new session is the copy of `at`
/// (cause "fork"). One BEGIN IMMEDIATE transaction; the source session is not touched; no model
/// call. Cost O(path + view nodes + their coverage); memory O(path ids).
/// Errors (nothing written): Error(usage,"node.unknown") for an unknown `at`;
/// Error(usage,"node.other_session") when opts.session is given and `at` is not in it;
/// Error(usage,"fork.at_view") for a view node; Error(bad_input,"session.exists") for a --name
/// that exists; Error(bad_input,"fork.id_conflict") when a new id is taken;
/// Error(bad_input,"fork.broken_chain") for a predecessor cycle or a predecessor in another session.
ForkResult fork_session(Store& store, const ForkOptions& opts);

/// {"schema":"ctxfold.fork/1","source_session","session","at","head","source_boundary_seq",
///  "copied_nodes","copied_summaries":[{"from","id"}],"omitted_summaries":[{"id","reason"}]}
Json fork_to_json(const ForkResult& r);

/// How `rewind` picks the new HEAD: `to` (a node on HEAD's spine), else `steps` message nodes
/// back along HEAD's spine (event and view nodes are passed over, not counted).
struct RewindOptions {
  std::optional<std::string> to;
  std::int64_t steps = 1;
};

struct RewindResult {
  std::string session;
  std::string head;
  std::string previous;
  bool moved = false;
  std::int64_t steps = 0;  ///< message nodes HEAD moved back over
};

/// Moves the session's HEAD back along its own predecessor spine (an explicit, recorded HEAD move,
/// cause "rewind"; docs/model.md "Chains, branches and HEAD"). Nothing else is written: the nodes
/// after the new HEAD stay in the ledger (a later append from the new HEAD opens a sibling branch).
/// With `steps`, the new HEAD is the message node reached after passing `steps` message nodes,
/// walking from HEAD.
/// Errors (nothing written): Error(bad_input,"session.no_head"); Error(usage,"rewind.steps") for
/// steps < 1; Error(bad_input,"rewind.out_of_range") when the spine is shorter;
/// Error(bad_input,"node.unknown"/"node.other_session") for `to`; Error(bad_input,
/// "rewind.not_on_spine") when `to` is not an ancestor of HEAD (use checkout for other branches).
RewindResult rewind_head(Store& store, const std::string& session, const RewindOptions& opts);

/// {"schema":"ctxfold.rewind/1","session","head","previous","moved","steps"}
Json rewind_to_json(const RewindResult& r);

}  // namespace ctxfold
