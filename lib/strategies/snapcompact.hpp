#pragma once
#include <optional>
#include <string>

#include "snapcompact/archive.hpp"
#include "store/store.hpp"
#include "strategies/compaction.hpp"
#include "strategies/rolling.hpp"
#include "summarize/summarizer.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// Prompt-free provenance name of an archive (what made its text): the normalization below.
inline constexpr const char* kSnapArchiveVersion = "snapcompact-archive-v1";

/// Settings of snapcompact (docs/strategies.md "Settings": contextWindowTokens, triggerPercent,
/// tailPercent default 10, archivePercent 20, maxFrames) and the model the frames are drawn for.
struct SnapcompactOptions : CompactionOptions {
  SnapcompactOptions() { tail_percent = 10; }
  int archive_percent = 20;
  std::optional<int> max_frames;
  /// share/models/catalog.json id (unknown: the catalog defaults); empty: the model the session's
  /// transcript names now (store/recorded_model.hpp), else the catalog defaults.
  std::string model;
};

/// Reads {"snapcompact":{"contextWindowTokens","triggerPercent","tailPercent","archivePercent",
/// "maxFrames"}} into opts (an "enabled" key is ignored). archivePercent 1..100,
/// maxFrames 1..1000. Errors as apply_compaction_config.
void apply_snapcompact_config(const Json& config, SnapcompactOptions& opts);

/// The normalized archive text of one node (reasoning left out, function calls written the same
/// way for every provider):
/// summarize/transcript.hpp node_transcript with no shortening (tool calls "[tool call NAME id=ID]
/// <input JSON>" for every provider; thinking and opaque blocks left out; images as
/// "[image WxH omitted]").
std::string archive_node_text(const Node& n);

/// Runs snapcompact once on the session's HEAD (docs/strategies.md "snapcompact"):
///  - a model that reads no images (catalog reads_images false): rolling's text compaction runs
///    instead (compact_rolling with the same window settings); the result says strategy
///    "snapcompact", details.fallback "rolling"; the archive stays stored for a later model.
///  - otherwise: render HEAD (strategy snapcompact, frames laid out but not encoded); no window and
///    no force, or the labelled figure below trigger_percent: noop. The units after the archive
///    (after the system run when there is none) are walked tail→head to keep tail_percent of the
///    window (units.hpp retained_tail_start, as rolling and lcm); the evicted items' normalized
///    text is appended to the previous archive's text and a new archive view node (kind archive,
///    metadata.strategy "snapcompact", id "arc-<hex>") covers the previous archive's ids plus the
///    newly evicted chain segment. compact/start, compact/summary + the node, compact/end through
///    the CompactionBracket. Then the frames for the model are drawn and stored in the frame cache
///    (details.frames_cached). HEAD never moves.
/// details: {"archive_chars","appended_chars","evicted_items","model","frames":FrameSet JSON};
/// details.model.source: "flag" (opts.model given), "session" (the recorded model) or "default".
CompactResult compact_snapcompact(Store& store, const std::string& session, Summarizer& summarizer,
                                  const SnapcompactOptions& opts);

}  // namespace ctxfold
