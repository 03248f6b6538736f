#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "model/node.hpp"

namespace ctxfold {

/// True for the names of Claude Code's file-editing tools (Edit, Write, MultiEdit, NotebookEdit):
/// the calls after which a harness's PostToolUse hooks (compile checks, linters) typically add
/// output the model is sent but no session file records. Source: every hook reminder the
/// auto-compaction worker replays in the shipped transcripts
/// (claude-code/auto_compaction_v2.1_full/.../subagents/agent-acompact-70d8e7.jsonl) is
/// "PostToolUse:Edit hook additional context: ..." (compile errors, Credo, Ash codegen); the
/// under-counted pairs of bench/tokens_fidelity.sh (18 of the 27 off by more than 25% before
/// issue 9's learned term) follow Edit or Write calls. Other harnesses' edit tools (Codex
/// apply_patch, Gemini CLI replace/write_file) have no such hooks and are not matched.
bool is_edit_tool(std::string_view name);

/// Per item of a context (a render's items or a raw spine), the number of tool_result blocks in
/// it that answer an is_edit_tool call made in that item or an earlier one. Same size as items.
std::vector<std::int32_t> edit_results(const std::vector<Node>& items);

/// Sum of counts[begin, end) (bounds clamped to counts.size()).
std::int64_t count_between(const std::vector<std::int32_t>& counts, std::size_t begin, std::size_t end);

/// Online estimate of the tokens a harness sends per edit-tool result but records nowhere (the
/// hook output of issue 9's "what is left"), learned only from a session's own earlier measured
/// requests (calibration comes from the session's measured usage: docs/model.md "Token figures").
///
/// After each pair of consecutive measured requests (same model, measured growth >= 0; both
/// checked by the caller), observe() takes the measured growth, the growth the calibrated figure
/// predicted without this term, and the number of edit results added between the two requests;
/// when that number is positive, the residual per edit result (residual / edits) moves the
/// estimate half way: per_edit += kAlpha * (sample - per_edit). Residuals of steps without edit
/// results are not attributed (they carry no information about hooks). predict() applies the
/// estimate clamped at >= 0, so a session whose hooks are silent (residuals around zero or
/// negative) adds nothing. Nothing measured later than the request being predicted is ever used.
struct HiddenPerEdit {
  /// Damping of the running estimate: each new sample counts half (an exponential moving average
  /// with weight 1/2, i.e. one observation's half-life). Not fitted: bench/README.md
  /// ("Token-estimate fidelity") reports the 90th-percentile error for weights 0.2 to 1.0 on the
  /// shipped transcripts, flat within 2 points between 0.3 and 0.8.
  static constexpr double kAlpha = 0.5;

  double per_edit = 0;    ///< running estimate in tokens per edit result; may be negative
  std::int64_t samples = 0;  ///< steps with edit results observed so far

  /// Records one measured step (see above); edits <= 0 is a no-op.
  void observe(std::int64_t measured_growth, std::int64_t predicted_growth, std::int64_t edits);
  /// Tokens to add for `edits` edit results made since the latest measured request:
  /// round(max(0, per_edit) * edits); 0 when edits <= 0.
  std::int64_t predict(std::int64_t edits) const;
};

}  // namespace ctxfold
