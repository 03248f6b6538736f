#pragma once
// Request-local budgets (docs/strategies.md "Request-local budgets"): fitting one projected request
// into a token budget by transforming only the request. The ledger is never written: no node, no
// event, no summary provenance.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "render/render.hpp"
#include "summarize/summarizer.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// The standard output reserve: 16,384 tokens.
inline constexpr std::int64_t kStandardOutputReserve = 16384;
/// Summary calls one preparation may make: at most 32.
inline constexpr int kBudgetMaxCalls = 32;
/// The summary calls' shared deadline: 60 seconds.
inline constexpr std::int64_t kBudgetDeadlineMs = 60000;

/// The output cap a request reserves and where it came from.
struct OutputCap {
  std::int64_t tokens = 0;
  /// "flag" (given explicitly, kept unchanged), "model" (the catalog's max_output_tokens),
  /// "reserve" (kStandardOutputReserve) or "quarter" (a quarter of the window).
  std::string source;
};

/// The rule: an explicit cap is kept unchanged; otherwise the smallest of the model's
/// output capability (share/models/catalog.json max_output_tokens; an unknown model has none),
/// kStandardOutputReserve and a quarter of `window`. Throws Error(usage,"budget.invalid") for a
/// window or explicit cap below 1.
OutputCap resolve_output_cap(std::int64_t window, std::optional<std::int64_t> explicit_cap, const std::string& model);

/// What one budgeted preparation is given.
struct BudgetOptions {
  /// --budget TOKENS: the context window the request must fit, input plus the output cap.
  std::int64_t budget = 0;
  std::optional<std::int64_t> max_output;  ///< --max-output: an explicit output cap
  std::string model;                       ///< catalog id for the model's output capability
  /// Tokens the request carries outside the rendered messages' estimate and the render's
  /// calibration (prepare's replaced system prompt, notes and tool definitions), may be negative.
  std::int64_t extra_tokens = 0;
  /// Estimate of the tool definitions sent with the request (part of extra_tokens), named when
  /// protected content does not fit.
  std::int64_t tools_tokens = 0;
  int max_calls = kBudgetMaxCalls;
  std::int64_t deadline_ms = kBudgetDeadlineMs;
  /// Tool results below this many tokens are not worth a call (their summary would not be much
  /// smaller): ctxfold's choice.
  std::int64_t min_result_tokens = 256;
  /// max_output_tokens of one tool-result summary and of the checkpoint (ctxfold's choice:
  /// a result summary is a few hundred tokens; the checkpoint follows the rolling default).
  std::int64_t result_summary_tokens = 400;
  std::int64_t checkpoint_summary_tokens = 4096;
  /// Chunk size of summarizer inputs in tokens; 0: half the summarizer's window.
  std::int64_t chunk_tokens = 0;
  std::string instructions;  ///< --instructions, passed to every summary call
};

/// The per-invocation cache (answers matched on the original content and the model settings): key
/// sha256 over the summarizer kind and model, the request's max_output_tokens, instructions,
/// previous summary and transcript; value the answer's text. Lives only as long as the object (one
/// command run); never stored.
struct BudgetCache {
  std::map<std::string, std::string> answers;
  int hits = 0;
};

/// What apply_budget did (stderr line and "budget" in render/prepare JSON).
struct BudgetReport {
  std::int64_t budget = 0;
  OutputCap output_cap;
  std::int64_t margin = 0;        ///< safety margin kept free (budget_margin)
  std::int64_t input_budget = 0;  ///< budget - output cap - margin
  std::int64_t tokens_before = 0; ///< the request figure before any change
  std::int64_t tokens_after = 0;  ///< the request figure printed
  int calls = 0;                  ///< summarizer calls made (cache hits excluded)
  int cache_hits = 0;
  int max_calls = kBudgetMaxCalls;
  std::int64_t elapsed_ms = 0;
  /// tool_use ids whose results were replaced by a summary, in request order.
  std::vector<std::string> results_summarized;
  /// The checkpoints inserted: {"ids":[node ids covered],"messages":N,"tokens_before","tokens_after"}.
  Json checkpoints = Json::array();
  /// Why summarizing stopped before the request fit, when it did: "calls" (the cap), "deadline",
  /// or a summarizer failure code.
  std::optional<std::string> stopped;
  std::optional<std::string> failure;  ///< the failure's message
  bool changed() const { return !results_summarized.empty() || !checkpoints.empty(); }
  Json to_json() const;
};

/// The safety margin kept free under the budget: 1% of it, at least 256 tokens (ctxfold's
/// figure; it covers the estimator's per-request framing error).
std::int64_t budget_margin(std::int64_t budget);

/// Fits r into opts.budget, changing only r.messages (and r.estimated_tokens / r.tokens):
///  0. the figure is r.tokens recomputed by calibrated_figure from the estimate (the render's
///     calibration), plus opts.extra_tokens; it must be at most the input budget (budget - the
///     resolved output cap - budget_margin). Under it: nothing changes and no call is made.
///  1. Protected content — system messages, every user message, rendered summaries, the latest
///     assistant segment (the last assistant message and its results), messages with images,
///     signed thinking or opaque blocks, tool groups with a synthetic (missing) result — plus the
///     extra tokens and the output cap must fit the budget, else Error(environment,
///     "budget.protected") naming each part and its tokens, before any call.
///  2. Text-only results of completed tool groups outside the latest segment, largest first
///     (at least min_result_tokens), are replaced by "[ctxfold: result summarized for this
///     request ...]" plus a summary; tool_use_id and is_error stay as they were, tool_use blocks
///     are never touched. This step uses at most half of max_calls so the checkpoint keeps calls.
///  3. Still over: the oldest runs of eligible complete history (assistant messages and their
///     complete text-only tool groups, between protected messages) are replaced, whole tool
///     groups at a time and oldest first, by one user-role "checkpoint" message per run holding a
///     task summary; only as much of a run as needed is covered.
///  Order: 2 then 3 when step 2's best case — its half of the calls on the largest
///  candidates, each shrunk to result_summary_tokens — can close the gap; otherwise 3 runs first
///  (so no result is summarized only to be absorbed by the checkpoint) and 2 then works on the
///  groups the checkpoint left, if still over.
/// Summary calls go through `summarizer` directly (never the recording wrapper: nothing is
/// stored), at most max_calls and until deadline_ms; long text is cut into chunks of chunk_tokens
/// and a context-length failure ("summarizer.context_length") retries with half the chunk. A
/// failure, the cap or the deadline leaves whatever was not summarized intact. If the figure is
/// still over the input budget: Error(environment,"budget.over") naming what remained; a request
/// estimated over budget is never returned.
BudgetReport apply_budget(Rendered& r, Summarizer& summarizer, const BudgetOptions& opts, BudgetCache& cache);

/// The stderr line reporting a budgeted request: "ctxfold: budget: B tokens (output cap C from
/// SOURCE, margin M): X -> Y tokens, N summary calls of at most 32, K cached, R results
/// summarized, P checkpoints".
std::string budget_summary_line(const BudgetReport& b);

}  // namespace ctxfold
