#pragma once
#include <string>
#include <vector>

#include "invariants/verify.hpp"
#include "store/store.hpp"

namespace ctxfold {

/// Invariant 9, fork closure (docs/invariants.md "I9"; docs/strategies.md "What a fork copies"), over the checked
/// sessions of kind "fork" (other sessions pass trivially):
///  - closure: every id a forked node references resolves to a node of the fork itself: its
///    predecessor, its covers_ids, and the node ids in its metadata lists (session/fork.hpp
///    kNodeIdListKeys). metadata.forked_from names the source on purpose and is not a reference.
///  - one chain: at the fork's boundary (the HEAD move with cause "fork"), every non-view node of
///    the fork lies on the spine of the fork's HEAD (no sibling branch or rewound row came along).
///  - same context: the fork rendered from the copy of `at` at its fork boundary and the source
///    rendered with --head `at` at metadata.source_boundary_seq give the same provider messages:
///    render_to_json(..., openai)["messages"] serialized, where in the fork's bytes every fork
///    node id is first written back as the source id it was copied from (metadata.forked_from.id).
///    Model-visible text quotes every node by its first id (model/quoted_id.hpp), so on a fork
///    written by this version the write-back changes nothing; it keeps comparable a fork whose
///    copies lack metadata.forked_from (they quote their own ids). Nothing
///    else is normalized. The render documents' session, head, reads and section ids differ by
///    construction and are not compared.
/// A fork session lacking metadata.at, its source, or its "fork" HEAD move is a violation.
/// Read-only; cost O(fork nodes + path length).
Check check_fork_closure(Store& store, const std::vector<std::string>& sessions);

}  // namespace ctxfold
