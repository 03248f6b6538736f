#pragma once
#include <string>

#include "store/store.hpp"
#include "strategies/compaction.hpp"
#include "summarize/summarizer.hpp"

namespace ctxfold {

// Region summaries carry the label StrategyLabel::region (docs/strategies.md "region
// summaries"): several may be active at once on disjoint segments, and render reads them as
// stored folds under every strategy but raw.

/// What `compact --from ID --to ID` is given: the inclusive segment, and the shared options
/// (instructions, summarizer_window, max_output_tokens, max_calls, dry_run; window/trigger unused).
struct RegionOptions : CompactionOptions {
  std::string from, to;
};

/// Summarizes exactly the rendered segment [from, to] of HEAD's projection (strategy
/// `render_strategy`) into one summary node (metadata.strategy "region"; covers_ids: every node
/// of the chain segment from `from` to `to`, events and rows under nested region summaries
/// included; predecessor: the predecessor of `from`). Refused with Error(usage,"compact.region")
/// and nothing written when: an id is unknown, belongs to another session, is not on HEAD's
/// spine, is hidden under a summary, or is a view node; `from` comes after `to`; the segment
/// holds a system message, the rolling summary or an lcm fold; either boundary splits a step's
/// tool calls from their results, cuts inside a unit, or the segment holds an open step; the
/// segment partly overlaps an existing region summary (one it contains whole is allowed: the new
/// one stands over it). The summary is written through the CompactionBracket (compact/start, one
/// transaction, compact/end) with rolling's chunked summarizer and provenance; a summary not
/// smaller than the segment fails ("compact.not_reducing"). HEAD never moves.
CompactResult compact_region(Store& store, const std::string& session, Summarizer& summarizer,
                             const RegionOptions& opts, const std::string& render_strategy);

}  // namespace ctxfold
