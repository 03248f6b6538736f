#pragma once
// The harness path before every model request (docs/strategies.md "prepare"): the session's own
// strategy, project, compact when due, project again, and the system prompt / tool set the model
// last knew the session by.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "render/render.hpp"
#include "util/environment.hpp"
#include "session/budget.hpp"
#include "store/store.hpp"
#include "strategies/compaction.hpp"
#include "strategies/registry.hpp"
#include "summarize/summarizer.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// Log event recording the session's own strategy: payload {"strategy"} (written by `compact
/// --strategy X`, docs/strategies.md "The session's own strategy"). The newest one wins.
inline constexpr const char* kSessionStrategyEvent = "session/strategy";
/// Log event of one prepared request: {"head","strategy","system_digest","tools_digest",
/// "compaction","estimated_tokens"}; its head is the HEAD the last prepared request reported.
inline constexpr const char* kPrepareSentEvent = "prepare/sent";
/// Log event written when the prompt the model knows the session by changes: {"system_digest",
/// "system" (text), "tools_digest", "notes":[{"after","digest","text"}]} (the prompt and tools the
/// model knows, kept in the append-only log instead of a mutable row).
inline constexpr const char* kPrepareKnownEvent = "prepare/known";

/// The session's own strategy at append boundary as_of, the one default of `render`, `context`,
/// `prepare` and `compact` without --strategy: the newest session/strategy event's (written by
/// `compact --strategy X`: later requests read the projection that strategy saved); else the
/// strategy of the session's newest successful compaction (rolling, lcm or snapcompact; a region
/// compaction does not count); else "rolling", the default (docs/strategies.md "The session's own
/// strategy").
std::string session_strategy(Store& store, const std::string& session, std::int64_t as_of = kLatest);

/// Makes `strategy` the session's own (a session/strategy event) unless it already is; returns
/// whether an event was written. Throws Error(usage,"compact.strategy") for an unknown name.
bool record_session_strategy(Store& store, const std::string& session, const std::string& strategy);

/// Runs `strategy` (a name of strategies/registry.hpp, with its part of `options`) once on the
/// session's HEAD. Throws Error(usage,"compact.strategy") for an unknown name.
CompactResult compact_session(Store& store, const std::string& session, const std::string& strategy,
                              Summarizer& summarizer, const StrategyOptions& options);

/// What one preparation is given: each strategy's options (StrategyOptions) and these.
struct PrepareOptions : StrategyOptions {
  std::optional<std::string> strategy;  ///< this request only; default: session_strategy
  std::string summarizer = "extractive";
  bool force = false;                   ///< compact even when not due (still at most once)
  std::int64_t max_row_bytes = kDefaultMaxRowBytes;  ///< render's per-row cap
  /// --system FILE: the harness's current system prompt; it replaces the session's leading
  /// system messages in the request.
  std::optional<std::string> system;
  /// --tools FILE: the harness's current tool definitions (a JSON array, sent as "tools").
  std::optional<Json> tools;
  /// --budget: fit the printed request into a request-local budget (session/budget.hpp
  /// apply_budget) after the system prompt, notes and tools are applied; nothing of it is stored.
  std::optional<BudgetOptions> budget;
};

/// One inserted `capabilities changed` note (docs/strategies.md "prepare").
struct CapabilityNote {
  std::string after;   ///< the node the note follows (the prepared_head when it was added)
  std::string digest;  ///< sha256 of the prompt it carries
  std::string text;    ///< that prompt
};

/// The outcome of prepare_request.
struct PrepareResult {
  Rendered rendered;        ///< the final projection, messages with the system prompt and notes applied
  std::string strategy;
  bool due = false;         ///< the first projection reached the trigger (or --force)
  std::int64_t tokens_before = 0;  ///< request figure of the first projection
  std::optional<CompactResult> compaction;  ///< the one compaction this request ran, if any
  /// "session" (no --system: the session's own system messages), "current" or "pinned".
  std::string system_sent = "session";
  std::vector<CapabilityNote> notes;  ///< notes in the request
  std::optional<Json> tools;
  /// Local estimate of the printed request: the projection, less the replaced system messages,
  /// plus the sent prompt, the notes and the tool definitions.
  std::int64_t estimated_tokens = 0;
  /// The figure the trigger compares: estimated_tokens, or the calibrated render figure plus the
  /// same adjustments when the session has matched provider usage.
  std::int64_t request_tokens = 0;
  std::optional<std::int64_t> window;
  bool still_due = false;  ///< after the compaction the request still reaches the trigger
  std::optional<BudgetReport> budget;  ///< what --budget did
};

/// The preparation (docs/strategies.md "prepare"): project HEAD with the strategy (render_context);
/// when a window is known and the request figure (the render's labelled figure, less the session's
/// leading system messages when --system replaces them, plus the prompt, notes and tools) reaches
/// trigger_percent of it, or when `force`, run the strategy once (compact_session, forced so the
/// strategy does not re-decide on a figure that cannot see the prompt or tools) and project again.
/// A request compacts at most once: the second projection is returned even if still due. With
/// --system/--tools: the first preparation makes the prompt known. An unchanged prompt is sent as
/// is. A changed prompt with the same tools keeps the known prompt pinned and adds a
/// `capabilities changed` note (a mid-conversation system message carrying the new prompt) after
/// the previous request's HEAD; notes stay in place on later requests. A changed tool set, or a
/// compaction in this request, makes the current prompt known and drops the notes. Writes: the
/// compaction's own, one prepare/sent event per preparation given --system or --tools, and
/// prepare/known when the known prompt or notes change.
/// With `budget`, the final request goes through apply_budget (summarizer: make_summarizer(
/// summarizer), never the recording one) before prepare/sent is written; its errors
/// (budget.protected, budget.over) are thrown and nothing is printed.
/// Throws what render_context and the strategies throw; a summarizer failure is reported in
/// compaction (status failed) and the previous projection is returned. The summarizers are made
/// with `env` (make_summarizer).
PrepareResult prepare_request(Store& store, const std::string& session, const PrepareOptions& opts,
                              Environment& env);

/// The JSON `prepare` prints: render_to_json(rendered, format) (with "tools" when given) plus
/// "prepare": {"strategy","due","still_due","window","tokens_before","estimated_tokens",
/// "request_tokens","system":"session|current|pinned","notes":[{"after","digest"}],
/// "compaction": compact_to_json or null, "budget": BudgetReport::to_json or null}.
Json prepare_to_json(const PrepareResult& p, RenderFormat format);

/// Exactly the provider request body: render_request_body plus "tools" when given.
Json prepare_request_body(const PrepareResult& p, RenderFormat format);

}  // namespace ctxfold
