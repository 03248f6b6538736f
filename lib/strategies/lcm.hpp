#pragma once
#include <cstdint>
#include <string>

#include "store/store.hpp"
#include "strategies/compaction.hpp"
#include "summarize/summarizer.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// Prompt versions of the lcm summarizer calls (share/prompts/NAME.txt).
inline constexpr const char* kLcmLeafPrompt = "lcm-leaf-v2";
inline constexpr const char* kLcmCondensePrompt = "lcm-condense-v2";

/// Settings of the lcm strategy: the shared ones with rolling's names and defaults
/// (docs/strategies.md "Settings") plus the tree's shape.
struct LcmOptions : CompactionOptions {
  /// fanout: a level holding this many adjacent frontier siblings is condensed into one parent
  /// (the oldest `fanout` of them); at least 2.
  int fanout = 4;
  /// leafChunkTokens: source tokens (local estimate of the covered rows) per leaf summary; whole
  /// units are packed in order up to it, a larger unit is kept whole in its own chunk (input order
  /// preserved). Also bounded by a sixteenth of the conversation window (a 60,000-token window
  /// gives leaves of 3,750 tokens, so one compaction makes enough leaves to condense) and by half
  /// the summarizer's window.
  std::int64_t leaf_chunk_tokens = 20000;
};

/// lcm's default call cap with a summarizer that costs per call (summarizer_call_cap; the
/// extractive summarizer has none unless --max-calls sets one).
inline constexpr int kLcmRemoteCallCap = 4096;

/// Reads {"lcm":{"contextWindowTokens","triggerPercent","tailPercent","fanout","leafChunkTokens"}}
/// into opts, leaving absent keys as they are. Errors as apply_compaction_config; fanout 2..64,
/// leafChunkTokens 256..10^7.
void apply_lcm_config(const Json& config, LcmOptions& opts);

/// Checks the option ranges; throws Error(usage,"compact.options").
void validate_lcm_options(const LcmOptions& opts);

/// Runs the lcm strategy once on the session's HEAD (docs/strategies.md "lcm"):
///  1. render HEAD with strategy lcm at the current append boundary: the active rolling or
///     imported summary (render.cpp: unless an lcm fold overlaps its coverage) is a covered prefix
///     that is kept as it is, never summarized again; the history lcm summarizes is always the
///     durable rows after it. No window and no force, or a labelled figure
///     (render's tokens: calibrated where the session has matched provider usage) below
///     trigger_percent of the window: noop, no summarizer call. A calibrated remainder shrinks
///     the tail budget as in rolling; every node made records the calibration it saw
///     (metadata.calibration) so later renders stay calibrated.
///  2. the covered cursor is the last row covered by the newest lcm fold on the spine, else by
///     the rendered summary; with neither, the session's first user message (and the harness
///     records before it) stays verbatim ahead of the first leaf when it is at most a tenth of the
///     window (details.pinned names it); the units after it (docs/model.md "Conversation
///     units": a user message, or a closed step with its tool results)
///     are walked tail→head until tail_percent of the window is retained (retained_tail_start,
///     shared with rolling): the latest unit and an open step always stay in the verbatim tail,
///     and the tail starts at the latest user message whenever that keeps it within twice its
///     budget; a longer last turn is cut between its steps (docs/strategies.md "Triggers and the
///     tail").
///  3. compact/start is committed; the evicted units are packed in order into chunks of at most
///     leaf_chunk_tokens and each chunk is summarized into a leaf (prompt lcm-leaf-v2) covering
///     its exact chain segment (covers_ids, events included). Then every level of the frontier
///     holding `fanout` adjacent siblings is condensed, oldest first, into a parent (prompt
///     lcm-condense-v2) whose covers_ids is the concatenation of its children's and whose
///     metadata holds "children" and "depth" (children's depth + 1); children are kept.
///  4. a summary not smaller than its source (a leaf's covered rows, a parent's children) is
///     retried once with half the output limit, then stored as a short source pointer (metadata
///     lcm.pointer true); a chunk too small even for a pointer ends the leaves there.
///  5. a summarizer failure (error, empty, not UTF-8) or the call cap stops the run: the leaves
///     and parents made before it are committed (partial, with the error), the cursor advances
///     only over committed leaves; with nothing made the attempt failed and nothing is written
///     but the bracket. compact/end records "cursor_before" and "cursor".
/// The commit is the bracket's (CompactionBracket: HEAD and the newest seq rechecked, one
/// transaction, crash points). HEAD never moves. details: {"leaves":[ids],"parents":[ids],
/// "cursor":{"before","after"},"chunk_tokens","evicted_tokens","evicted_units","fanout"}.
/// Throws Error only for bad input or the database.
CompactResult compact_lcm(Store& store, const std::string& session, Summarizer& summarizer, const LcmOptions& opts);

}  // namespace ctxfold
