#pragma once
// Replayable summaries (recorded model answers, `ctxfold replay`): every summarizer call a
// compaction makes is logged with its request, parameters and response, never an API key (a
// SummaryRequest holds none), and can be answered again offline.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/store.hpp"
#include "summarize/recorded.hpp"
#include "summarize/summarizer.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// Wraps `inner` and logs each call (kSummarizerCallEvent) in the session's event log right after
/// it returns or fails; kind, model and window are the inner summarizer's.
std::unique_ptr<Summarizer> make_recording_summarizer(Store& store, std::string session, std::unique_ptr<Summarizer> inner);

/// What `ctxfold replay SUMMARY_ID` found.
struct ReplayResult {
  std::string summary_id;
  std::string strategy;
  std::string compaction;
  std::vector<Json> calls;     ///< the recorded calls that produced the summary, in order
  std::string stored;          ///< the node's text as stored
  std::string reproduced;      ///< the text the recorded answers give
  bool identical = false;
  /// Rolling and region summaries: the compaction was re-planned from the ledger (replan_rolling) rather
  /// than its text rebuilt from the last recorded answer; the pass that matched ("first" or
  /// "recompaction" or "region") and the requests the re-plan issued.
  bool replanned = false;
  std::string replan_pass;
  int replan_calls = 0;
};

/// Re-derives a summary's text offline from its compaction's recorded calls. A rolling or region
/// summary (origin compact) is re-planned (region: replan_region): the pass is planned again at its compact/start boundary with
/// the recorded parameters (strategies/rolling.hpp replan_rolling), its requests are issued again
/// and answered by the recorded responses (by request digest), and the covered ids, the input
/// digest and the produced text are compared with the stored node; a re-plan whose requests were
/// not recorded, or that covers other nodes, is refused (Error(bad_input,"replay.replan_mismatch")
/// with the reason). Other summaries (region, lcm): every recorded
/// request must still hash to its request_digest, and the requests must hash to the summary's
/// provenance.input_digest (rolling/region: over all the compaction's calls, as rolling chains
/// them; lcm: the calls for this node's transcript); the last answer, cleaned as at compaction
/// time (clean_summary_text) and framed as the strategy frames it (rolling/region:
/// frame_summary; lcm: as is), is compared byte for byte with the stored text. Throws
/// Error(bad_input,"replay.*") with the reason: not a summary, no recorded calls, a digest that
/// no longer matches, an lcm source pointer (no call made it).
ReplayResult replay_summary(Store& store, const std::string& summary_id);

}  // namespace ctxfold
