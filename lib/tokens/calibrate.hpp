#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "util/json.hpp"

namespace ctxfold {

/// Input tokens a provider measured for one request, from a node's metadata.usage as the
/// importers store it: Anthropic (Claude Code, Messages) input_tokens + cache_creation_input_tokens
/// + cache_read_input_tokens (the three are disjoint); OpenAI Responses / Codex last_token_usage
/// input_tokens (cached_input_tokens is a subset, not added); OpenAI chat and litellm
/// prompt_tokens; Gemini CLI tokens.input. nullopt when the fields are missing, not numbers, or
/// zero (Codex writes all-zero usage around a compaction): such usage is skipped, never divided by.
std::optional<std::int64_t> measured_input_tokens(const Json& usage);

/// A matched pair: what the provider measured for one request and ctxfold's estimate of exactly
/// the context that request saw (the render of its predecessor chain at the state it was made;
/// docs/model.md "Token figures").
struct Calibration {
  std::string node;        ///< the node carrying the usage (the request's output)
  std::int64_t measured = 0;
  std::int64_t estimated = 0;
  /// "request": matched on the rendered context; "summary": recorded by the compaction that wrote
  /// the active summary, from the request it matched before compacting.
  std::string origin = "request";
  std::string estimator;   ///< kEstimatorVersion of `estimated`
  /// Tokens added for content sent after this request but recorded nowhere: the learned hidden
  /// output per edit-tool result (HiddenPerEdit in tokens/hidden.hpp, from the session's earlier
  /// measured requests) times hidden_edits, the edit results made since this request. 0 without.
  std::int64_t hidden = 0;
  double hidden_per_edit = 0;  ///< the learned tokens per edit result (clamped at >= 0)
  std::int64_t hidden_edits = 0;

  /// {"node","measured","estimated","remainder","origin","estimator","hidden","hidden_per_edit",
  ///  "hidden_edits"}.
  Json to_json() const;
  /// Reads to_json's form; nullopt when fields are missing or the estimator differs from ours.
  static std::optional<Calibration> from_json(const Json& j);
};

/// How far below the local estimate of the context it measured a recorded measurement may fall
/// and still be used (docs/model.md "Measurements that are not used"): it is refused when
/// measured * kCalibrationFactor < estimated. A provider counts at least what the transcript
/// visibly holds (estimate / measured is at most 0.84 over the 858 matched requests of the shipped
/// transcripts), so a count under a quarter of it is not a measurement of this context: a usage
/// written around a harness compaction, copied from another request, truncated or made by hand.
/// A measurement above the estimate is always used: the provider sees what the transcript lacks
/// (system prompt, tool definitions, a context resumed from elsewhere; one shipped request
/// measured 169,290 tokens over a 2,497-token transcript).
inline constexpr std::int64_t kCalibrationFactor = 4;

/// Why `measured` (a provider's input tokens) cannot calibrate `estimated` (the local estimate of
/// the context it measured), as one sentence; nullopt when it may.
std::optional<std::string> implausible_measurement(std::int64_t measured, std::int64_t estimated);

/// A measurement kept out of a figure, and why (TokenFigure::refused).
struct RefusedMeasurement {
  std::string node;  ///< the node carrying the usage
  std::int64_t measured = 0;
  std::int64_t estimated = 0;
  std::string reason;  ///< implausible_measurement's sentence
  /// {"node","measured","estimated","factor","reason"}.
  Json to_json() const;
};

/// A token figure as shown to users, always labelled: kind "estimated" (local estimate only),
/// "calibrated" (a local estimate corrected by a matched measurement) or "measured" (the
/// provider's count for exactly this context).
struct TokenFigure {
  std::int64_t value = 0;
  std::string kind = "estimated";
  std::int64_t estimated = 0;  ///< the local estimate the value derives from
  std::optional<Calibration> calibration;
  /// The newest measurement that was not used because it disagrees with its estimate by more
  /// than kCalibrationFactor (implausible_measurement); the figure then rests on an older
  /// plausible one or on the estimate.
  std::optional<RefusedMeasurement> refused;

  /// {"value","kind","estimated","calibration":{...}|null} plus "calibration_refused"
  /// (RefusedMeasurement) when a measurement was refused.
  Json to_json() const;
};

/// Applies a matched calibration to the estimate of a later state. The matched remainder
/// measured - estimated is the part of a request ctxfold does not see (the harness's system
/// prompt and tool definitions: 18.9k-26.1k tokens on the first request of the real Claude Code
/// sessions, whose transcripts hold under 1k of it) plus the estimator's error. A positive remainder
/// is carried unchanged: scaling it with the visible content (value = measured * estimate /
/// estimated) under-counts any shrunken state, e.g. the real auto-compaction session's first
/// request after its compaction measured 32,015 tokens where the scaled figure gives a fraction of
/// it (bench/tokens_fidelity.sh prints both). A negative remainder means the estimate over-counts
/// the content itself, so the ratio measured/estimated scales it. Without a calibration the figure
/// is the estimate, kind "estimated"; with one, kind "calibrated", and c->hidden (the learned hidden
/// output of the edit results made since the matched request) is added. Never below 0. A
/// calibration whose measured and estimated disagree past kCalibrationFactor
/// (implausible_measurement) is not applied: the figure is the estimate, kind "estimated", with
/// the refusal in `refused`.
TokenFigure calibrated_figure(std::int64_t estimate, const std::optional<Calibration>& c);

}  // namespace ctxfold
