#pragma once
#include <string>
#include <vector>

#include "invariants/verify.hpp"
#include "store/store.hpp"

namespace ctxfold {

/// Invariant 8, the lcm summary tree (docs/invariants.md "I8"; docs/strategies.md "lcm"), over the summaries whose
/// metadata.strategy is "lcm":
///  - levels: metadata.depth is an integer >= 1; a leaf (depth 1) names no children, a parent
///    names at least one in metadata.children, every child is an lcm summary of the same session
///    exactly one level below it (depth grows upward) and is older (lower seq) than its parent,
///    so the tree is acyclic; no node is the child of two parents.
///  - range: a parent's covers_ids is exactly its children's covers_ids concatenated in order (a
///    parent's range is the union of its children's), and the children are adjacent: each
///    child's predecessor (its splice point) is the previous child's last covered id.
///  - cursor: every lcm compaction's compact/end records "cursor_before" and "cursor"; the first
///    leaf it wrote begins right after cursor_before (its predecessor), and cursor is the last id
///    covered by the last leaf it wrote, or cursor_before when it wrote no leaf (a failed summary
///    does not advance the cursor).
/// Read-only; cost O(lcm summaries + their covers).
Check check_lcm_tree(Store& store, const std::vector<std::string>& sessions);

}  // namespace ctxfold
