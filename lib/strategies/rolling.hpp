#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/node.hpp"
#include "render/render.hpp"
#include "strategies/compaction.hpp"
#include "render/recap.hpp"
#include "store/store.hpp"
#include "summarize/summarizer.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// Settings of the rolling strategy: the shared ones (strategies/compaction.hpp, the config
/// file's names and defaults; max_output_tokens 0 means min(4096, max(256, window/20))) plus
/// the re-compaction bound.
struct RollingOptions : CompactionOptions {
  int max_passes = 3;  ///< one compaction plus at most two re-compactions of the head checkpoint
};

/// Reads {"rolling":{"contextWindowTokens","triggerPercent","tailPercent"}} into
/// opts, leaving absent keys as they are. Throws Error(bad_input,"config.invalid") for a value of
/// the wrong type or out of range (percentages 1..100, window > 0).
void apply_rolling_config(const Json& config, RollingOptions& opts);

/// Checks the option ranges; throws Error(usage,"compact.options").
void validate_rolling_options(const RollingOptions& opts);

/// Runs the rolling strategy once on the session's HEAD (docs/strategies.md "rolling"):
///  1. render HEAD (strategy rolling) at the current append boundary; no window and no force, or
///     a figure (calibrated where usage exists, tokens_before) below trigger_percent of the window:
///     noop. With a calibration that adds a remainder the transcript does not hold (system prompt,
///     tool definitions), the retained tail is also capped so that remainder + system + summary
///     budget + recap + tail stays under the trigger.
///  2. units after the system run (after the active summary when one is rendered) are walked
///     tail→head until tail_percent of the window is retained, rounding toward retaining more;
///     a cut inside a turn moves back to the turn's user message when that keeps the tail within
///     twice the target (else the turn is cut between steps); open steps are
///     never covered. Nothing to evict: declined with the reason (single oversized unit, open step).
///  3. compact/start is committed, then the previous summary plus the evicted transcript is
///     summarized in chunks of at most half the summarizer window with the summary carried along;
///     every answer must be non-empty UTF-8, at most 90% of its input and at most twice
///     max_output_tokens. A failure after some chunks keeps the chunks done (partial).
///  4. the framed summary must be smaller than what it replaces and the candidate render smaller
///     than the current one; HEAD and the session's newest seq are rechecked inside one
///     BEGIN IMMEDIATE transaction that writes compact/summary, the summary node and compact/end.
///     A changed source commits nothing (failed, "compact.source_changed"). HEAD never moves.
///  5. still over the trigger: the head checkpoint is re-compacted with half the output budget,
///     at most max_passes in all; a tail that alone exceeds the trigger is reported, not split.
/// Recoverable failures write compact/end with an "error" and leave history as it was.
/// Test hook (never set in production): CTXFOLD_TEST_CRASH_AT=before_start|after_start|
/// after_summary raises SIGKILL before compact/start, after it is committed (before the first
/// summarizer call), or after the summary node is appended inside the commit transaction
/// (CompactionBracket).
/// Throws Error only for bad input or the database (locked, I/O); summarizer failures are
/// returned as status "failed".
CompactResult compact_rolling(Store& store, const std::string& session, Summarizer& summarizer,
                              const RollingOptions& opts);

/// What re-planning one rolling summary from the ledger gives (`ctxfold replay`, issue 11 part 4).
struct RollingReplan {
  bool reconsolidate = false;           ///< it matched as a re-compaction pass of the head checkpoint
  std::vector<std::string> covers_ids;  ///< what the re-planned pass covers
  std::string text;                     ///< the summary text it produces, framed as stored
  std::string input_digest;             ///< over the requests it issued (provenance.input_digest's rule)
  int calls = 0;
  std::optional<std::string> failure;   ///< the code of the call that stopped it (a partial compaction)
  std::string why;                      ///< that call's message
};

/// Re-plans the rolling pass that wrote `summary` without writing anything: the plan is made at
/// append boundary `boundary` (its compact/start's boundary_seq, so HEAD and the active summary
/// are those of the state before the summary) with the parameters its provenance records
/// (window, trigger_percent, tail_percent, instructions, force, max_output_tokens, chunk_tokens),
/// and the chunked summarizer requests are issued again to `answers` (the recorded responses).
/// A first pass is tried, then a re-compaction pass; a plan whose requests `answers` does not
/// know (it throws Error code "replay.unrecorded") does not match. nullopt when neither matches,
/// with the reason in `why`.
std::optional<RollingReplan> replan_rolling(Store& store, const Node& summary, std::int64_t boundary,
                                            Summarizer& answers, std::string& why);

/// The same for a region summary (`compact --from/--to`, strategies/region.hpp): the segment
/// [from, to] its provenance records is selected again at `boundary` with compact_region's
/// checks, under the rolling projection, else lcm's, else snapcompact's (the session's strategy
/// at the time is not recorded), and its requests issued again to `answers`. Nothing is written.
std::optional<RollingReplan> replan_region(Store& store, const Node& summary, std::int64_t boundary,
                                           Summarizer& answers, std::string& why);


}  // namespace ctxfold
