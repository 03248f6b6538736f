// Shared compaction flags of `compact` and `prepare` (compact_options.hpp).
#include "compact_options.hpp"

#include <fmt/format.h>

#include "util/config.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
/// Flags win over the config file, which wins over the defaults (docs/strategies.md "Settings").
void apply_flags(const CompactCliOptions& o, CompactionOptions& r) {
  if (o.window) r.window = *o.window;
  if (o.trigger_percent) r.trigger_percent = *o.trigger_percent;
  if (o.tail_percent) r.tail_percent = *o.tail_percent;
  if (o.summarizer_window) r.summarizer_window = *o.summarizer_window;
  if (o.max_calls) r.max_calls = *o.max_calls;
  r.force = o.force;
  r.dry_run = o.dry_run;
  r.instructions = o.instructions;
}

}  // namespace

RollingOptions rolling_options(const CompactCliOptions& o) {
  RollingOptions r;
  apply_rolling_config(load_config(o.config, system_environment()).value, r);
  apply_flags(o, r);
  validate_rolling_options(r);
  return r;
}

LcmOptions lcm_options(const CompactCliOptions& o) {
  LcmOptions r;
  apply_lcm_config(load_config(o.config, system_environment()).value, r);
  apply_flags(o, r);
  if (o.fanout) r.fanout = *o.fanout;
  if (o.leaf_chunk_tokens) r.leaf_chunk_tokens = *o.leaf_chunk_tokens;
  validate_lcm_options(r);
  return r;
}

SnapcompactOptions snapcompact_options(const CompactCliOptions& o) {
  SnapcompactOptions r;
  apply_snapcompact_config(load_config(o.config, system_environment()).value, r);
  apply_flags(o, r);
  if (o.archive_percent) r.archive_percent = *o.archive_percent;
  if (o.max_frames) r.max_frames = *o.max_frames;
  r.model = o.model;
  return r;
}

void add_compaction_flags(CLI::App& sub, CompactCliOptions& o) {
  sub.add_option("--summarizer", o.summarizer, "extractive | openai:MODEL | anthropic:MODEL | command:CMD")
      ->default_val("extractive");
  sub.add_option("--max-calls", o.max_calls,
                 "cap on summarizer calls per compaction; the rest waits for the next run (default: none for "
                 "extractive, 64 for a summarizer that costs per call, lcm 4096)")
      ->check(CLI::Range(1, 1000000));
  sub.add_option("--window", o.window, "model context window in tokens (rolling.contextWindowTokens)");
  sub.add_option("--trigger-percent", o.trigger_percent, "compact at this % of the window (default 80)");
  sub.add_option("--tail-percent", o.tail_percent, "keep about this % of the window verbatim (default 25)");
  sub.add_option("--summarizer-window", o.summarizer_window,
                 "chunk summarizer input to half of this many tokens (default: the summarizer's window)");
  sub.add_option("--fanout", o.fanout, "lcm: condense a level once it holds this many siblings (default 4)");
  sub.add_option("--leaf-chunk-tokens", o.leaf_chunk_tokens, "lcm: source tokens per leaf summary (default 20000; at most a sixteenth of --window)");
  sub.add_option("--model", o.model,
                 "snapcompact: the model the frames are for (share/models/catalog.json; a text-only model gets rolling; "
                 "default: the model the session's transcript names last)");
  sub.add_option("--archive-percent", o.archive_percent, "snapcompact: % of the window the frames may take (default 20)");
  sub.add_option("--max-frames", o.max_frames, "snapcompact: frame budget replacing the provider caps");
  sub.add_option("--config", o.config,
                 R"(JSON file {"rolling"|"lcm"|"snapcompact":{"contextWindowTokens","triggerPercent","tailPercent"}}, lcm also "fanout","leafChunkTokens", snapcompact "archivePercent","maxFrames" (default: $CTXFOLD_CONFIG, then ~/.config/ctxfold/config.json))");
  sub.add_flag("--force", o.force, "compact even below the trigger or without a window");
  sub.add_option("--instructions", o.instructions, "focus for the summarizer");
}

}  // namespace ctxfold::cli
