#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "invariants/verify.hpp"
#include "render/render.hpp"
#include "store/store.hpp"

namespace ctxfold {

/// What I3's pass over one summary's covers rows (check_summary_coverage) hands to I7
/// (check_compaction_log), which compares the summary's own estimated tokens with `tokens`.
struct CoveredTokens {
  std::int64_t tokens = 0;  ///< sum of nodes.tokens of the covered nodes that are the session's
  std::int64_t rows = 0;    ///< covers rows, whatever they name
};
/// CoveredTokens by the summary's seq.
using CoveredTokensBySummary = std::unordered_map<std::int64_t, CoveredTokens>;

/// Invariant 3 (docs/invariants.md "I3"): every summary node's covers_ids is non-empty, names
/// nodes of its own session, is a contiguous chain segment (each covered node's predecessor is
/// the previous covered id), names no view node when the summary is a rolling or a region one, and the
/// summary's predecessor is the predecessor of the first covered node (its splice point). Both
/// edges must be tool-pairing balanced (no result inside whose call lies only outside, no call
/// inside whose results lie only outside) and the segment must not start with a tool record.
/// Edge findings on imported summaries (metadata.origin "import") are warnings: the source cut
/// there. Read-only; cost O(session nodes + covered ids).
/// covered, when given, receives per summary (by seq) the estimated tokens of the covered nodes
/// of its session and the number of its covers rows, read on the same pass over the covered rows:
/// what I7 compares the summary's own tokens with (check_compaction_log).
Check check_summary_coverage(Store& store, const std::vector<std::string>& sessions,
                             CoveredTokensBySummary* covered = nullptr);

/// Invariant 4 (docs/invariants.md "I4"): at most one active rolling summary per session. The
/// active one is the newest (store.active_summary); rendering HEAD with strategy rolling must
/// substitute no summary other than it and at most one summary at all (a superseded summary is
/// never consulted). A superseded rolling summary whose coverage overlaps the active one's without
/// being contained in it gives a warning (the active summary does not extend it). Region summaries
/// (metadata.strategy "region", `compact --from/--to`; docs/strategies.md "region summaries") may
/// be active several at once: no two may partly overlap (one containing another whole is a nesting), and the summaries the
/// render of HEAD substitutes must stand for pairwise disjoint sets of nodes.
Check check_active_summary(Store& store, const std::vector<std::string>& sessions);

/// Invariant 4 for one session, adding to c (made as Check{"I4", ...}). head_render: the default
/// (rolling) render of the session's HEAD when the caller already made it (verify renders HEAD
/// once for I4, I5 and I10), else nullptr and it renders HEAD itself.
void check_active_summary(Store& store, const std::string& session, Check& c, const Rendered* head_render);

/// Invariant 7 (docs/invariants.md "I7", docs/strategies.md "The compaction bracket"): every compact/start has exactly one
/// compact/end with its ref, or is an inert orphan (no summary landed with that compaction id;
/// reported as a warning); no compact/end or compact/summary without its compact/start; every
/// summary written by compact (metadata.origin "compact"; a fork's copy, metadata.forked_from, has its
/// record in the source session) has its compact/summary record naming
/// it and a provenance (summarizer kind and model, prompt_version, input_digest); every summary
/// is smaller (estimated tokens) than the nodes it covers (a warning for imported summaries).
/// covered: the sums check_summary_coverage gathered on its pass over the same summaries, used
/// instead of summing again (each covered node's tokens column lies past its content, so a second
/// sum reads every covered node's pages again); a summary missing from it is summed here.
Check check_compaction_log(Store& store, const std::vector<std::string>& sessions,
                           const CoveredTokensBySummary* covered = nullptr);

}  // namespace ctxfold
