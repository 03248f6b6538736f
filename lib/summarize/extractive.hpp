#pragma once
#include <cstdint>
#include <string>

#include "summarize/summarizer.hpp"

namespace ctxfold {

/// The built-in summarizer (docs/strategies.md "Summarizers"): offline, deterministic, no model. It
/// extracts from the previous summary and the transcript (summarize/transcript.hpp layout) what a
/// resuming agent needs and writes it as short bullet lists under fixed headings:
///   "## User requests"   every user message, whitespace collapsed, each shortened
///   "## Files"           file paths mentioned anywhere
///   "## Commands"        shell commands from tool calls ("command"/"cmd" inputs) and "$ " lines
///   "## Errors"          lines that report an error or failure
///   "## Decisions and progress"  the opening line of each assistant reply
///   "## Identifiers"     `backticked` names and URLs
///   "## Focus"           lines matching --instructions words (only with instructions)
///   "## Tools used"      calls per tool name
/// A previous summary in this layout is merged item by item (duplicates dropped); one in another
/// layout (an imported or LLM summary) is kept as "## Earlier summary" lines. When the result
/// exceeds its budget — min(max_output_tokens, half the input) in bytes/4 tokens — file paths
/// and commands are kept first (they take at most 60% of the budget when the prose needs the
/// rest): paths are grouped by folder ("dir/{a.cpp, b.hpp}"), and the least salient go first
/// (commands shortened to 200 bytes, then paths only mentioned in tool output, then the oldest;
/// a path a tool call names or a command run weighs 3 mentions). The prose then shortens its
/// longest items to 200 bytes, drops the oldest items but keeps each section's newest and the
/// first and latest user request (so a condensation keeps every child's latest request and
/// newest decisions), then drops whole sections, largest first, and the requests last, the
/// newest kept. Identifiers already listed as a file or
/// command are not repeated. The output is always strictly smaller
/// than previous_summary + transcript. Throws Error(environment,"summarizer.empty") when both
/// are empty.
class ExtractiveSummarizer : public Summarizer {
 public:
  /// window: the input window reported to the chunker (tokens, local estimate).
  explicit ExtractiveSummarizer(std::int64_t window = kDefaultWindow) : window_(window) {}
  static constexpr std::int64_t kDefaultWindow = 128000;

  std::string kind() const override { return "extractive"; }
  std::string model() const override { return "extractive"; }
  std::int64_t window_tokens() const override { return window_; }
  /// It reads no context window, it scans: tool results and inputs are passed up to 64 KB and
  /// 16 KB (head and tail kept beyond), so the names and commands in long outputs (listings,
  /// build logs) reach the "## Files"/"## Commands" sections.
  TranscriptOptions transcript_options() const override { return extractive_transcript_options(); }
  static TranscriptOptions extractive_transcript_options() {
    TranscriptOptions t;
    t.max_tool_result_tokens = 16000;
    t.max_tool_input_tokens = 4000;
    return t;
  }
  SummaryResult summarize(const SummaryRequest& req) override;

 private:
  std::int64_t window_;
};

}  // namespace ctxfold
