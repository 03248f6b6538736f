#pragma once
// The parts of the rolling strategy that region compaction (region.cpp) reuses: the plan a pass
// is made from, the covered chain segment, the chunked summarizer and the summary node. Internal
// to lib/strategies.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/node.hpp"
#include "render/render.hpp"
#include "store/store.hpp"
#include "strategies/rolling.hpp"
#include "strategies/units.hpp"
#include "summarize/summarizer.hpp"
#include "tokens/calibrate.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace ctxfold::rolling_parts {

/// Everything one pass needs, frozen at the planning boundary.
struct Plan {
  Rendered r;
  std::vector<Node> items;  // r.items without a recap node
  std::string head;
  std::int64_t boundary = 0;     // database max seq when planned (render as_of)
  std::int64_t session_max = 0;  // the session's newest seq when planned
  std::int64_t before = 0;
  std::int64_t window_eff = 0;
  std::int64_t trigger = 0;
  std::int64_t retain_target = 0;
  std::size_t sys_end = 0;
  std::optional<std::size_t> summary_pos;
  std::optional<Node> old_summary;
  std::vector<std::string> old_covers;
  std::size_t region_start = 0;  // first item that may be newly evicted
  std::vector<Unit> units;       // over [region_start, items.size())
  std::size_t cut_unit = 0;      // units[0, cut_unit) are evicted
  std::int64_t old_recap_tokens = 0;
  std::optional<Calibration> calibration;  // the render's (render/token_figure.hpp token_figure)
  std::int64_t shown_before = 0;           // calibrated_figure(before).value
};

struct Chunked {
  std::string summary;          // raw, unframed
  std::size_t units_done = 0;   // evicted units the summary covers
  int calls = 0;
  int leaves = 0;               // calls on transcript chunks (the tree's first level)
  int depth = 0;                // levels of the tree: 1 for one chunk, 1 + merge levels
  std::int64_t input_tokens = 0;  // summed SummaryRequest::input_tokens of every call
  std::string input_digest;
  Json usage = Json::array();
  std::optional<Error> failure;  // the call that stopped it
  bool capped = false;           // the call cap stopped it
  std::int64_t chunk_tokens = 0;
};

/// The summary view node standing in for `covers` (docs/model.md "View nodes"); the caller adds
/// metadata and covers_ids.
Node summary_node(Store& store, const std::string& session, const std::string& id,
                  const std::vector<std::string>& covers, const std::string& summary);

/// A summary must be smaller than what it replaces: the refusal both passes give.
Error summary_not_smaller(std::int64_t summary_tokens, std::int64_t replaced);

/// The compact/summary event's payload.
Json summary_event(const Json& provenance, const std::string& raw_summary, const std::vector<std::string>& covers,
                   std::int64_t summary_tokens, std::int64_t replaced);

/// The local estimate of items [b, e).
std::int64_t items_tokens(const std::vector<Node>& items, std::size_t b, std::size_t e);

/// The covered ids for evicting items [region_start, cut); nullopt with `why` when the chain
/// segment is not contiguous.
std::optional<std::vector<std::string>> covered_ids(Store& store, const Plan& p, std::size_t cut, std::string& why);

/// Summarizes the previous summary plus the evicted units as a tree (docs/strategies.md
/// "Summarizer calls at scale"): the units are packed in order, whole, into chunks of at most half
/// the summarizer window less the prompt (the first chunk also carries the previous summary, so a
/// history that fits one chunk is one call, {previous summary, transcript}); each chunk is
/// summarized on its own (a leaf); then consecutive summaries are merged, as many as fit one
/// chunk (at least two), into one request whose previous_summary is their concatenation and whose
/// transcript is empty, level by level until one summary remains. Summarizer input is the
/// evicted text once plus every merged summary: linear in the history, with depth
/// 1 + ceil(log_f(leaves)) for the f summaries one chunk holds. The call cap
/// (summarizer_call_cap, default kRemoteCallCap) limits the leaves in advance so their merges
/// still fit it: the summary then covers a prefix (capped, partial). A failed call stops the tree;
/// the summary is then the first remaining piece (it covers a prefix of the units: partial).
Chunked summarize_chunks(const Plan& p, Summarizer& summarizer, const RollingOptions& opts, std::int64_t max_output);

/// What summarize_chunks will need, computed without calling the summarizer (compact --dry-run):
/// the leaves exactly, the merge levels as upper bounds, every answer taken as large as
/// oversized_answer accepts (2 x max_output, at most 90% of its input).
struct ChunkPlan {
  int leaves = 0;
  int merges = 0;
  int depth = 0;
  std::int64_t input_tokens = 0;  // summed request input_tokens, as Chunked::input_tokens counts them
  std::int64_t chunk_tokens = 0;
  int cap = 0;                    // summarizer_call_cap
  bool within_cap = true;         // false: the cap stops the leaves (a partial result)
  std::size_t units_covered = 0;  // evicted units the capped plan covers
  /// {"calls","leaf_calls","merge_calls","depth","input_tokens","chunk_tokens","call_cap" (null:
  /// none),"within_cap","estimated"}: a bound the run stays within.
  Json to_json() const;
};
ChunkPlan plan_chunks(const Plan& p, const Summarizer& summarizer, const RollingOptions& opts, std::int64_t max_output);

}  // namespace ctxfold::rolling_parts
