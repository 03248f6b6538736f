// compact: run a compaction strategy now (PRODUCT.md §3): rolling or lcm.
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "context.hpp"
#include "util/config.hpp"
#include "strategies/lcm.hpp"
#include "strategies/notes.hpp"
#include "strategies/rolling.hpp"
#include "strategies/snapcompact.hpp"
#include "summarize/summarizer.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {

struct CompactCliOptions {
  std::string strategy = "rolling";
  std::string summarizer = "extractive";
  std::optional<std::string> config;
  std::optional<std::int64_t> window;
  std::optional<int> trigger_percent;
  std::optional<int> tail_percent;
  std::optional<std::int64_t> summarizer_window;
  std::optional<int> fanout;
  std::optional<std::int64_t> leaf_chunk_tokens;
  std::optional<int> archive_percent;
  std::optional<int> max_frames;
  std::string model;
  bool notes = false;
  std::int64_t notes_budget = 2000;
  bool force = false;
  bool dry_run = false;
  std::string instructions;
};

/// Flags win over the config file, which wins over the defaults (seed 002 "configure").
void apply_flags(const CompactCliOptions& o, CompactionOptions& r) {
  if (o.window) r.window = *o.window;
  if (o.trigger_percent) r.trigger_percent = *o.trigger_percent;
  if (o.tail_percent) r.tail_percent = *o.tail_percent;
  if (o.summarizer_window) r.summarizer_window = *o.summarizer_window;
  r.force = o.force;
  r.dry_run = o.dry_run;
  r.instructions = o.instructions;
}

RollingOptions rolling_options(const CompactCliOptions& o) {
  RollingOptions r;
  apply_rolling_config(load_config(o.config).value, r);
  apply_flags(o, r);
  validate_rolling_options(r);
  return r;
}

LcmOptions lcm_options(const CompactCliOptions& o) {
  LcmOptions r;
  apply_lcm_config(load_config(o.config).value, r);
  apply_flags(o, r);
  if (o.fanout) r.fanout = *o.fanout;
  if (o.leaf_chunk_tokens) r.leaf_chunk_tokens = *o.leaf_chunk_tokens;
  validate_lcm_options(r);
  return r;
}

SnapcompactOptions snapcompact_options(const CompactCliOptions& o) {
  SnapcompactOptions r;
  apply_snapcompact_config(load_config(o.config).value, r);
  apply_flags(o, r);
  if (o.archive_percent) r.archive_percent = *o.archive_percent;
  if (o.max_frames) r.max_frames = *o.max_frames;
  r.model = o.model;
  return r;
}

int run_compact(Context& ctx, const CompactCliOptions& o) {
  if (o.strategy == "notes")
    throw Error(Exit::usage, "compact.strategy", fmt::format("strategy '{}' is not yet supported", o.strategy),
                "use --strategy rolling, lcm or snapcompact");
  if (o.strategy != "rolling" && o.strategy != "lcm" && o.strategy != "snapcompact")
    throw Error(Exit::usage, "compact.strategy", fmt::format("unknown strategy '{}'", o.strategy),
                "use one of: rolling, lcm, snapcompact");
  if (o.strategy != "lcm" && (o.fanout || o.leaf_chunk_tokens))
    throw Error(Exit::usage, "compact.options", "--fanout and --leaf-chunk-tokens apply to --strategy lcm only");
  if (o.strategy != "snapcompact" && (o.archive_percent || o.max_frames || !o.model.empty()))
    throw Error(Exit::usage, "compact.options",
                "--archive-percent, --max-frames and --model apply to --strategy snapcompact only");
  CompactResult r;
  if (o.strategy == "snapcompact") {
    SnapcompactOptions opts = snapcompact_options(o);
    std::unique_ptr<Summarizer> summarizer = make_summarizer(o.summarizer);
    r = compact_snapcompact(ctx.db(), ctx.resolve_session(), *summarizer, opts);
  } else if (o.strategy == "lcm") {
    LcmOptions opts = lcm_options(o);
    std::unique_ptr<Summarizer> summarizer = make_summarizer(o.summarizer);
    r = compact_lcm(ctx.db(), ctx.resolve_session(), *summarizer, opts);
  } else {
    RollingOptions opts = rolling_options(o);
    std::unique_ptr<Summarizer> summarizer = make_summarizer(o.summarizer);
    r = compact_rolling(ctx.db(), ctx.resolve_session(), *summarizer, opts);
  }
  if (o.notes && r.status == "compacted") {
    // The notes layer (seed 002 "notes"): rewritten after the strategy committed; a failure keeps
    // the old notes, is said in the output, and never fails the compaction.
    std::unique_ptr<Summarizer> summarizer = make_summarizer(o.summarizer);
    NotesOptions no;
    no.budget_tokens = o.notes_budget;
    no.instructions = o.instructions;
    if (o.summarizer_window) no.summarizer_window = *o.summarizer_window;
    Json n = rewrite_notes(ctx.db(), r.session, r, *summarizer, no);
    if (json_str(n, "status") == "failed") {
      std::string why = n.contains("error") ? json_str(n["error"], "message") : std::string();
      warn(fmt::format("notes rewrite failed, the previous notes are kept: {}", why));
      r.reason += (r.reason.empty() ? "" : "; ") + fmt::format("notes rewrite failed, the previous notes are kept: {}", why);
    }
    r.details["notes"] = std::move(n);
  }
  if (ctx.text) {
    emit_text(fmt::format("{}: {}{}\n", r.status, r.reason.empty() ? std::string() : r.reason,
                          r.summary_id ? fmt::format(" (summary {}, covers {} nodes, {} -> {} tokens, {})", *r.summary_id,
                                                     r.covers_count, r.tokens_before.value, r.tokens_after.value,
                                                     r.tokens_after.kind)
                                       : std::string()));
  } else {
    emit(compact_to_json(r));
  }
  if (r.status == "failed" || r.partial) {
    warn(fmt::format("compaction {}: {}", r.partial ? "partial" : "failed", r.reason));
    return static_cast<int>(Exit::environment);  // summarizer failure, or a source that changed: retry
  }
  return 0;
}

}  // namespace

std::function<int(Context&)> setup_compact(CLI::App& sub) {
  auto o = std::make_shared<CompactCliOptions>();
  sub.add_option("--strategy", o->strategy, "compaction strategy: rolling | lcm | snapcompact")->default_val("rolling");
  sub.add_option("--summarizer", o->summarizer, "extractive | openai:MODEL | anthropic:MODEL | command:CMD")
      ->default_val("extractive");
  sub.add_option("--window", o->window, "model context window in tokens (rolling.contextWindowTokens)");
  sub.add_option("--trigger-percent", o->trigger_percent, "compact at this % of the window (default 80)");
  sub.add_option("--tail-percent", o->tail_percent, "keep about this % of the window verbatim (default 25)");
  sub.add_option("--summarizer-window", o->summarizer_window,
                 "chunk summarizer input to half of this many tokens (default: the summarizer's window)");
  sub.add_option("--fanout", o->fanout, "lcm: condense a level once it holds this many siblings (default 4)");
  sub.add_option("--leaf-chunk-tokens", o->leaf_chunk_tokens, "lcm: source tokens per leaf summary (default 20000)");
  sub.add_option("--model", o->model,
                 "snapcompact: the model the frames are for (share/models/catalog.json; a text-only model gets rolling)");
  sub.add_option("--archive-percent", o->archive_percent, "snapcompact: % of the window the frames may take (default 20)");
  sub.add_option("--max-frames", o->max_frames, "snapcompact: frame budget replacing the provider caps");
  sub.add_option("--config", o->config,
                 R"(JSON file {"rolling"|"lcm"|"snapcompact":{"contextWindowTokens","triggerPercent","tailPercent"}}, lcm also "fanout","leafChunkTokens", snapcompact "archivePercent","maxFrames" (default: $CTXFOLD_CONFIG, then ~/.config/ctxfold/config.json))");
  sub.add_flag("--notes", o->notes, "also rewrite the session's notes (seed 002 notes layer) after the compaction");
  sub.add_option("--notes-budget", o->notes_budget, "notes budget in tokens (notes.budgetTokens, default 2000)")
      ->default_val(2000)
      ->check(CLI::Range(std::int64_t(64), std::int64_t(1000000)));
  sub.add_flag("--force", o->force, "compact even below the trigger or without a window");
  sub.add_flag("--dry-run", o->dry_run, "print the plan; write nothing and call no summarizer");
  sub.add_option("--instructions", o->instructions, "focus for the summarizer");
  return [o](Context& ctx) { return run_compact(ctx, *o); };
}

}  // namespace ctxfold::cli
