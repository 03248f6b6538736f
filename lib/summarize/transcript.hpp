#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "model/node.hpp"

namespace ctxfold {

/// Limits applied when turning nodes into summarizer text.
struct TranscriptOptions {
  /// A tool result longer than this (local token estimate) keeps its head and tail with an
  /// "[... N characters omitted ...]" marker in between.
  std::int64_t max_tool_result_tokens = 1500;
  /// The same for a tool call's JSON input.
  std::int64_t max_tool_input_tokens = 400;
};

/// The plain text a summarizer reads for one node (docs/strategies.md "Summarizers"):
///   user      "[user]\n<text>"
///   assistant "[assistant]\n<text>" then one "[tool call NAME id=ID] <input JSON>" line per call
///   tool      "[tool result id=ID]\n<text>" ("[tool result id=ID, error]" for is_error)
///   summary   "[earlier summary]\n<text>"
/// Images become "[image WxH omitted]" (or "[image omitted]" when the size is unknown) and are
/// never copied; thinking and opaque blocks are skipped; unknown blocks become "[TYPE block]".
/// Event nodes give an empty string. Never cuts inside a UTF-8 sequence.
std::string node_transcript(const Node& n, const TranscriptOptions& opts = {});

/// Shortens text to at most max_bytes by keeping its head and tail around an
/// "[... N characters omitted ...]" marker; text within the limit is returned unchanged. Cuts
/// only at UTF-8 sequence boundaries.
std::string shorten_middle(std::string_view text, std::size_t max_bytes);

/// Removes the checkpoint framing written around a rolling summary (the preamble and the
/// <compacted-summary>…</compacted-summary> tags, docs/strategies.md "rolling"), giving the raw
/// summary to merge. Text without the tags is returned whole (imported summaries).
std::string unframe_summary(std::string_view framed);

/// The framed text a rolling summary node holds: a preamble telling a resuming model to read it
/// as established background, then the raw summary inside <compacted-summary> tags so the next
/// compaction detects and merges it.
std::string frame_summary(std::string_view raw);

}  // namespace ctxfold
