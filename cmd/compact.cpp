// compact: run a compaction strategy now (docs/strategies.md): rolling, lcm or snapcompact; or a region.
#include <fmt/format.h>

#include "compact_options.hpp"
#include "context.hpp"
#include "session/prepare.hpp"
#include "model/strategy_label.hpp"
#include "strategies/notes.hpp"
#include "strategies/region.hpp"
#include "strategies/replay.hpp"
#include "summarize/summarizer.hpp"
#include "util/config.hpp"
#include "util/error.hpp"
#include "progress.hpp"

namespace ctxfold::cli {

namespace {

/// A summarizer that draws "ctxfold: compact N call(s) (KIND MODEL)" on a terminal while a
/// compaction waits for its model (docs/commands.md "Output": progress on stderr, only on a TTY).
class ProgressSummarizer : public Summarizer {
 public:
  explicit ProgressSummarizer(std::unique_ptr<Summarizer> inner) : inner_(std::move(inner)), bar_("compact") {}
  std::string kind() const override { return inner_->kind(); }
  std::string model() const override { return inner_->model(); }
  std::int64_t window_tokens() const override { return inner_->window_tokens(); }
  SummaryResult summarize(const SummaryRequest& req) override {
    bar_.update(calls_, 0, fmt::format("summarizer call(s), waiting for {} {}", inner_->kind(), inner_->model()));
    SummaryResult r = inner_->summarize(req);
    bar_.update(++calls_, 0, fmt::format("summarizer call(s) answered by {} {}", inner_->kind(), inner_->model()));
    return r;
  }

 private:
  std::unique_ptr<Summarizer> inner_;
  Progress bar_;
  std::int64_t calls_ = 0;
};

std::unique_ptr<Summarizer> with_progress(std::unique_ptr<Summarizer> s) {
  if (!progress_wanted()) return s;
  return std::make_unique<ProgressSummarizer>(std::move(s));
}

/// compact --from ID --to ID: a region summary over exactly that segment (docs/strategies.md "region summaries").
int run_region(Context& ctx, const CompactCliOptions& o, const std::string& from, const std::string& to) {
  if (o.strategy || o.window || o.trigger_percent || o.tail_percent || o.fanout || o.leaf_chunk_tokens || o.force ||
      o.archive_percent || o.max_frames || !o.model.empty())
    throw Error(Exit::usage, "compact.options",
                "--from/--to summarize exactly that segment: --strategy, --window, --trigger-percent, "
                "--tail-percent, --fanout, --leaf-chunk-tokens, --force and the snapcompact flags do not apply");
  std::string session = ctx.resolve_session();
  RegionOptions ro;
  static_cast<CompactionOptions&>(ro) = rolling_options(o);
  ro.from = from;
  ro.to = to;
  ro.env = ctx.env;
  std::unique_ptr<Summarizer> summarizer =
      with_progress(make_recording_summarizer(ctx.db(), session, make_summarizer(o.summarizer, *ctx.env)));
  CompactResult r = compact_region(ctx.db(), session, *summarizer, ro, session_strategy(ctx.db(), session));
  if (ctx.text)
    emit_text(fmt::format("{}: {}{}\n", r.status, r.reason,
                          r.summary_id ? fmt::format(" (region summary {}, covers {} nodes)", *r.summary_id, r.covers_count)
                                       : std::string()));
  else
    emit(compact_to_json(r));
  if (r.status == "failed") {
    warn(fmt::format("compaction failed: {}", r.reason));
    return static_cast<int>(Exit::environment);
  }
  return 0;
}

int run_compact(Context& ctx, const CompactCliOptions& o) {
  std::string session = ctx.resolve_session();
  // Without --strategy the session's own strategy runs; --strategy X first makes X the session's
  // own (docs/strategies.md "The session's own strategy").
  const std::string strategy = o.strategy ? *o.strategy : session_strategy(ctx.db(), session);
  if (parse_label(strategy) == StrategyLabel::notes)
    throw Error(Exit::usage, "compact.strategy", fmt::format("strategy '{}' is not yet supported", strategy),
                "use --strategy " + strategy_names());
  const StrategyInfo& info = strategy_named(strategy);  // an unknown name is a usage error
  if (info.label != StrategyLabel::lcm && (o.fanout || o.leaf_chunk_tokens))
    throw Error(Exit::usage, "compact.options", "--fanout and --leaf-chunk-tokens apply to --strategy lcm only");
  if (info.label != StrategyLabel::snapcompact && (o.archive_percent || o.max_frames || !o.model.empty()))
    throw Error(Exit::usage, "compact.options",
                "--archive-percent, --max-frames and --model apply to --strategy snapcompact only");
  // Each strategy reads its own flags and config section; only the one that runs is validated.
  StrategyOptions sopts;
  switch (info.label) {
    case StrategyLabel::lcm: sopts.lcm = lcm_options(o); break;
    case StrategyLabel::snapcompact: sopts.snapcompact = snapcompact_options(o); break;
    default: sopts.rolling = rolling_options(o); break;
  }
  info.shared(sopts).env = ctx.env;
  std::unique_ptr<Summarizer> summarizer =
      with_progress(make_recording_summarizer(ctx.db(), session, make_summarizer(o.summarizer, *ctx.env)));
  if (o.strategy && !o.dry_run) record_session_strategy(ctx.db(), session, strategy);
  CompactResult r = compact_session(ctx.db(), session, strategy, *summarizer, sopts);
  NotesOptions no;
  apply_notes_config(load_config(o.config, *ctx.env).value, no);
  if (o.notes) no.enabled = true;
  if (o.notes_budget) no.budget_tokens = *o.notes_budget;
  if (no.enabled && r.status == "compacted") {
    // The notes layer (docs/strategies.md "notes"): rewritten after the strategy committed; a failure keeps
    // the old notes, is said in the output, and never fails the compaction.
    std::unique_ptr<Summarizer> notes_summarizer = make_summarizer(o.summarizer, *ctx.env);
    no.instructions = o.instructions;
    if (o.summarizer_window) no.summarizer_window = *o.summarizer_window;
    Json n = rewrite_notes(ctx.db(), r.session, r, *notes_summarizer, no);
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
  if (r.status == "failed") {
    warn(fmt::format("compaction failed: {}", r.reason));
    return static_cast<int>(Exit::environment);  // summarizer failure, or a source that changed: retry
  }
  if (r.partial) {
    // Committed, but part of the evicted history waits for the next run (docs/commands.md "Exit codes").
    warn(fmt::format("compaction partial: {}", r.reason));
    return static_cast<int>(Exit::partial);
  }
  return 0;
}

}  // namespace

Runner setup_compact(CLI::App& sub) {
  auto o = std::make_shared<CompactCliOptions>();
  sub.add_option("--strategy", o->strategy,
                 "compaction strategy: " + strategy_names(" | ", " | ") +
                     "; makes it the session's own (default: the session's, else rolling)");
  add_compaction_flags(sub, *o);
  sub.add_flag("--notes", o->notes, "also rewrite the session's notes (the notes layer) after the compaction");
  sub.add_option("--notes-budget", o->notes_budget, "notes budget in tokens (notes.budgetTokens, default 2000)")
      ->check(CLI::Range(std::int64_t(64), std::int64_t(1000000)));
  sub.add_flag("--dry-run", o->dry_run, "print the plan; write nothing and call no summarizer");
  auto from = std::make_shared<std::string>();
  auto to = std::make_shared<std::string>();
  auto* f = sub.add_option("--from", *from, "region: the first node of the segment to summarize");
  auto* t = sub.add_option("--to", *to, "region: the last node of the segment to summarize");
  f->needs(t);
  t->needs(f);
  // A dry run writes nothing and calls no summarizer: it reads a database it cannot write.
  return Runner(
      [o, from, to](Context& ctx) {
        if (!from->empty()) return run_region(ctx, *o, *from, *to);
        return run_compact(ctx, *o);
      },
      [o] { return o->dry_run ? Needs::read_only : Needs::read_write; });
}

}  // namespace ctxfold::cli
