#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "model/node.hpp"
#include "store/store.hpp"
#include "summarize/summarizer.hpp"
#include "tokens/calibrate.hpp"
#include "util/environment.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

// What every compaction strategy shares (docs/strategies.md): the window settings, the result
// printed by `compact`, and the log-only bracket compact/start … compact/end (docs/strategies.md
// "The compaction bracket").
namespace ctxfold {

/// Settings every strategy accepts, with the configuration file's names (contextWindowTokens,
/// triggerPercent, tailPercent; docs/strategies.md "Settings") and defaults.
struct CompactionOptions {
  /// contextWindowTokens: the model window (local estimate). Without it nothing compacts unless
  /// `force`.
  std::optional<std::int64_t> window;
  int trigger_percent = 80;  ///< compact when the render estimate reaches this % of the window
  int tail_percent = 25;     ///< keep about this % of the window as the verbatim tail
  bool force = false;        ///< compact even below the trigger or without a window
  bool dry_run = false;      ///< plan only: nothing is written, the summarizer is not called
  std::string instructions;  ///< --instructions: focus for the summarizer
  /// Chunk inputs to half of this window instead of the summarizer's own (0: the summarizer's).
  std::int64_t summarizer_window = 0;
  /// Cap on one summary's size in tokens (0: the strategy's default).
  std::int64_t max_output_tokens = 0;
  /// --max-calls / <section>.maxCalls: the cap on summarizer calls of one compaction; past it the
  /// rest waits for the next run (partial). nullopt: no cap for the offline extractive summarizer
  /// (it costs nothing per call), else the strategy's default for summarizers that cost per call
  /// (kRemoteCallCap; lcm kLcmRemoteCallCap). See summarizer_call_cap and docs/strategies.md
  /// "Summarizer calls at scale".
  std::optional<int> max_calls;
  /// The clock of the compaction log's started_at/ended_at and the kill tests' crash points
  /// (util/environment.hpp). Needed by a compaction that writes: without it the bracket throws
  /// Error(internal,"compact.env"); a dry run does not use it.
  Environment* env = nullptr;
};

/// Reads the shared keys of config[section] ({"contextWindowTokens","triggerPercent",
/// "tailPercent"}) into opts, leaving absent keys as they are, and returns config[section] (null
/// when absent) so a strategy can read its own keys with config_int. Throws
/// Error(bad_input,"config.invalid") for a config that is not an object, a section that is not
/// one, or a value of the wrong type or out of range (percentages 1..100, window > 0).
Json apply_compaction_config(const Json& config, const std::string& section, CompactionOptions& opts);

/// One integer key of a config section (integral floats accepted), checked against [lo, hi];
/// nullopt when absent or null. Throws Error(bad_input,"config.invalid") naming section.key.
std::optional<std::int64_t> config_int(const Json& section_json, const std::string& section, const char* key,
                                       std::int64_t lo, std::int64_t hi);

/// The default call cap of rolling and region compactions with a summarizer that costs per call
/// (openai:, anthropic:, command:, replay:).
inline constexpr int kRemoteCallCap = 64;

/// The summarizer calls one compaction may make: opts.max_calls when the user set it, else
/// unlimited (INT_MAX) for the extractive summarizer (offline, free per call: a large history is
/// never cut to a partial result by a cap), else remote_default (docs/strategies.md "Summarizer
/// calls at scale").
int summarizer_call_cap(const CompactionOptions& opts, const Summarizer& summarizer, int remote_default);

/// Checks the shared option ranges; throws Error(usage,"compact.options").
void validate_compaction_options(const CompactionOptions& opts);

/// The outcome of `compact` (the fields of ctxfold.compact/1).
struct CompactResult {
  std::string session;
  std::string strategy = "rolling";
  std::string status = "noop";  ///< compacted | noop | declined | failed | planned (--dry-run)
  std::string reason;
  std::string error_code;       ///< failed: "summarizer.*", "compact.source_changed", "compact.not_reducing", ...
  std::optional<std::string> summary_id;  ///< the newest summary written
  std::optional<std::string> compaction;  ///< the compaction id pairing compact/start and compact/end
  std::int64_t covers_count = 0;
  std::optional<std::string> covers_first, covers_last;
  std::int64_t estimated_tokens_before = 0;  ///< local estimate of the render before
  std::int64_t estimated_tokens_after = 0;   ///< local estimate of the render after
  /// The labelled figures the trigger decision and the report use: calibrated where the session
  /// has matched provider usage (render/token_figure.hpp), else the estimates. The "after" figure is
  /// calibrated with the same calibration as "before" (recorded on the summary node as
  /// metadata.calibration, so later renders keep it until a newer request is measured).
  TokenFigure tokens_before;
  TokenFigure tokens_after;
  std::optional<std::int64_t> window;
  std::string summarizer_kind, summarizer_model;
  int calls = 0;
  int passes = 0;
  bool partial = false;  ///< a summarizer failure or the call cap stopped it; what was done is kept
  /// partial: what waits for the next run, in evicted units and their local-estimate tokens
  /// (JSON "remaining":{"units","tokens"}, null unless partial; `compact` exits 5).
  std::int64_t remaining_units = 0;
  std::int64_t remaining_tokens = 0;
  std::string head;
  Json plan = Json::object();     ///< --dry-run: what would be covered and kept
  Json details = Json::object();  ///< strategy-specific fields, merged into the JSON (lcm: leaves, parents, cursor)
};

/// {"schema":"ctxfold.compact/1","session","strategy","status","reason","summary_id",
///  "covers":{"count","first","last"},"estimated_tokens_before","estimated_tokens_after",
///  "tokens_before","tokens_after" (TokenFigure: {"value","kind","estimated","calibration"}),
///  "summarizer":{"kind","model","calls"},"head"} plus "compaction", "window", "passes",
///  "partial", "remaining" ({"units","tokens"} when partial, else null), "error" (failed), "plan"
///  (--dry-run) and the strategy's details.
Json compact_to_json(const CompactResult& r);

/// Trims a summarizer answer in place and checks it is text: Error(environment,"summarizer.empty")
/// for nothing but whitespace, Error(environment,"summarizer.malformed") for bytes that are not
/// UTF-8 or hold NUL (a summary that is empty or failed is rejected).
std::optional<Error> clean_summary_text(std::string& text);

/// Sets status "failed", error_code and reason from e.
void fail_result(CompactResult& res, const Error& e);

/// ceil(total * percent / 100): the trigger and tail budgets.
inline std::int64_t ceil_percent(std::int64_t total, int percent) { return (total * percent + 99) / 100; }

/// The trigger decision every strategy and `context` share (docs/strategies.md "Triggers and the
/// tail": without a window nothing compacts automatically; a compaction is due when the request
/// reaches triggerPercent of the window). window_eff is the window, or the estimate itself when
/// none is known (what --force compacts against); trigger = ceil_percent(window_eff,
/// trigger_percent); due when a window is known and shown.value reaches the trigger. reason says
/// why it is not due, naming the config section ("rolling", "lcm", "snapcompact") that sets the
/// window.
struct TriggerCheck {
  std::int64_t window_eff = 0;
  std::int64_t trigger = 0;
  bool due = false;
  std::string reason;  ///< empty when due
};
TriggerCheck check_trigger(const std::optional<std::int64_t>& window, int trigger_percent, const TokenFigure& shown,
                           std::int64_t estimate, const std::string& section);

/// The session's newest node seq (0 for an empty session): what a commit rechecks.
std::int64_t session_max_seq(Store& store, const std::string& session);

/// The session's HEAD at append boundary `boundary`, where a compaction's plan starts; throws
/// Error(bad_input,"render.no_head") for a session without one, as render_context does.
std::string plan_head(Store& store, const std::string& session, std::int64_t boundary);

/// The log-only bracket of one compaction attempt (docs/strategies.md "The compaction bracket"):
/// compact/start is committed before any summarizer call; the summaries, one compact/summary record
/// per summary, and compact/end are written in one BEGIN IMMEDIATE transaction after HEAD and the
/// session's newest seq are rechecked; a recoverable failure writes compact/end with an "error". A
/// crash leaves an inert compact/start without an end.
class CompactionBracket {
 public:
  /// The attempt's identity is a hash of (session, head, session_max, the newest event seq): id()
  /// is "cmp-<16 hex>", distinct for each attempt, since every attempt logs compact/start.
  /// `env` gives the time stamps and the crash points before_start, after_start, after_summary
  /// and after_commit (Environment::crash_point); null is Error(internal,"compact.env").
  CompactionBracket(Store& store, std::string session, std::string head, std::int64_t session_max, Environment* env);
  const std::string& id() const { return id_; }
  /// 16 hex digits of the summary ids a strategy derives ("sum-<hex>", "lcm-<hex>-<n>",
  /// "arc-<hex>", "reg-<hex>"): a hash of (session, head, session_max) only, the state the plan
  /// reads, so an attempt killed before its commit and retried writes the same ids as an
  /// uninterrupted run (docs/strategies.md "The compaction bracket"). Unique: every commit appends
  /// to the session, so no two commits start from the same state.
  const std::string& hex() const { return hex_; }

  /// Commits compact/start {"strategy", "head", "session_seq", "started_at", ...payload}.
  /// Crash points before_start and after_start.
  void start(const Json& payload);
  /// Commits compact/end {"status":"failed","summary_id":null,"error":{code,message},"calls",
  /// "ended_at", ...extra}.
  void fail(const Error& e, int calls, const Json& extra = Json::object());
  /// The commit transaction. When HEAD or the session's newest seq moved since the plan, writes
  /// compact/end failed with "compact.source_changed" and returns that error (nothing else is
  /// written). Otherwise calls write() (which appends summaries with append_summary), then
  /// compact/end {"status":"compacted","calls","ended_at", ...end_payload}, and commits; crash
  /// point after_commit once it is durable.
  std::optional<Error> commit(const std::function<void()>& write, int calls, const Json& end_payload);
  /// Inside commit's write(): compact/summary {"summary_id", ...record} then the node itself;
  /// crash point after_summary after the first node. Throws Error(internal,
  /// "compact.summary_exists") when the id is taken.
  void append_summary(Node& s, const Json& record);

 private:
  Store& store_;
  Environment& env_;
  std::string session_, head_;
  std::int64_t session_max_ = 0;
  std::string hex_, id_;
  bool first_summary_ = true;
};

}  // namespace ctxfold
