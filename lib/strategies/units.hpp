#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <optional>

#include "model/node.hpp"
#include "store/store.hpp"

namespace ctxfold {

/// A conversation unit over a run of rendered items (docs/model.md "Conversation units"): what
/// compaction may cut between. A user message starts one; a step (a run of consecutive assistant
/// records, which render merges into one model turn, plus the tool results that follow it) is
/// another. Units are then merged across every boundary that is not tool-pairing balanced, so a
/// unit never separates a tool_use from its tool_result.
struct Unit {
  std::size_t begin = 0;   ///< index of the unit's first item
  std::size_t end = 0;     ///< one past its last item
  std::int64_t tokens = 0; ///< local estimate: sum of estimate_node_tokens over its items
  /// "user" (starts with a user-role message), "step" (starts with an assistant record),
  /// "summary" (a view node), "system" or "other" (a lone tool record whose call is elsewhere).
  std::string kind;
  /// The step has a tool_use with no result anywhere after it and no user message follows it:
  /// it is still running and is never compacted (compaction declines an open tail).
  bool open = false;
};

/// For every position i in [0, items.size()], whether cutting before items[i] is tool-pairing
/// balanced: no tool_use at an index < i has its first later tool_result at an index >= i, and
/// no open call (see Unit::open) lies before i. Calls whose result never comes but that are
/// followed by a user message (abandoned calls) do not constrain cuts; results without a call
/// before them (orphans) do not either. Cost O(items + blocks).
std::vector<bool> balanced_cuts(const std::vector<Node>& items);

/// Splits items[from, items.size()) into units (see Unit), merged so every boundary between two
/// units is balanced. Empty when from >= items.size().
std::vector<Unit> split_units(const std::vector<Node>& items, std::size_t from = 0);

/// Where the verbatim tail starts: the index of the first retained unit, 0 when every unit is
/// retained. Units are walked tail→head until retain_target tokens are retained (rounding toward
/// retaining more unless the unit that crosses it takes the tail past max_tail), so the latest
/// unit (and an open step, always the last) is always kept. A
/// tail that would start inside a turn (at a step) moves back to the turn's user message when
/// that keeps it within twice retain_target and at most max_tail tokens; otherwise forward to the
/// next user message (the rest of that turn is evicted with it), and a turn with no later user
/// message is cut between its steps (docs/strategies.md "Triggers and the tail"). Shared by
/// rolling and lcm.
std::size_t retained_tail_start(const std::vector<Unit>& units, std::int64_t retain_target, std::int64_t max_tail);

/// The tool_use ids called in items[begin,end) whose result lies in items after end, and the
/// tool_result ids there whose call lies in items before begin: the pairs a range would split,
/// checked on every summarizer chunk. Both empty for a balanced range.
struct PairingGaps {
  std::vector<std::string> unanswered_calls;
  std::vector<std::string> orphan_results;
  bool balanced() const { return unanswered_calls.empty() && orphan_results.empty(); }
};
PairingGaps pairing_gaps(const std::vector<Node>& items, std::size_t begin, std::size_t end);

/// The chain ids from `last` back to (exclusive) `stop_after`, or back to (inclusive) `stop_at`,
/// oldest first: the exact contiguous segment a fold covers, hidden records (events) included.
/// Shared by lcm (a leaf's segment) and snapcompact (what an archive newly covers). Throws
/// Error(internal,"compact.chain") when the walk exceeds `bound` steps or never reaches stop_after.
std::vector<std::string> chain_segment(Store& store, const std::string& last, const std::optional<std::string>& stop_after,
                                       const std::optional<std::string>& stop_at, std::int64_t bound);

}  // namespace ctxfold
