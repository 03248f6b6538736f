#pragma once
#include <cstdint>
#include <string>

#include "summarize/summarizer.hpp"

namespace ctxfold {

/// The built-in summarizer (docs/strategies.md "The extractive summary"): offline, deterministic
/// (same input, same bytes), no model. It reads the transcript (summarize/transcript.hpp layout;
/// "[harness CLASS]" text is never a request) into turns, one per real user request
/// (summarize/history.hpp), and writes, under fixed headings:
///   "## Tasks"          "### N. <request>" then Created/Edited (file and tool), Ran (command and
///                       status), Errors (line, call, resolved later | unresolved), Committed (git
///                       commit messages) and Outcome (the turn's last statement, shortened)
///   "## Current state"  In progress, Plan (last TodoWrite / update_plan), Edited since the last
///                       commit, Unresolved errors, Last action, Next step
///   "## Focus"          lines matching --instructions words (only with instructions)
///   "## Files"          Root, then the other real paths (tool arguments, paths in user or
///                       assistant text), grouped by folder
///   "## Identifiers"    `backticked` names and URLs of user or assistant text
///   "## Tools used"     calls per tool name, most used first (bounded; the rest counted)
///   "## Left out"       how many items the bounded lists left out, and the grep/expand commands
/// Every list is bounded; the most detailed of fourteen levels (statements shorten first, then lists) that fits the budget —
/// min(max_output_tokens, half the input) in bytes/4 tokens — is written, then, if none fits, the
/// first task and the newest ones that fit. A previous summary (or lcm child summaries under
/// "[summary ...]" headers) in this layout is merged: tasks carried over first, the newest current
/// state kept; another layout's sections are kept item by item, prose as "## Earlier summary".
/// The output is always strictly smaller than previous_summary + transcript. Throws
/// Error(environment,"summarizer.empty") when both are empty.
class ExtractiveSummarizer : public Summarizer {
 public:
  /// window: the input window reported to the chunker (tokens, local estimate).
  explicit ExtractiveSummarizer(std::int64_t window = kDefaultWindow) : window_(window) {}
  static constexpr std::int64_t kDefaultWindow = 128000;

  std::string kind() const override { return "extractive"; }
  std::string model() const override { return "extractive"; }
  std::int64_t window_tokens() const override { return window_; }
  /// It reads no context window, it scans: tool results and inputs are passed up to 64 KB and
  /// 16 KB (head and tail kept beyond), so a long input's path and command arguments and a long
  /// result's exit status survive.
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
