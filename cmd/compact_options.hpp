#pragma once
// The compaction flags `compact` and `prepare` share, and how they become strategy options.
#include <cstdint>
#include <optional>
#include <string>

#include "context.hpp"
#include "strategies/lcm.hpp"
#include "strategies/rolling.hpp"
#include "strategies/snapcompact.hpp"

namespace ctxfold::cli {

/// Flags as given; absent optionals leave the config file's value or the default.
struct CompactCliOptions {
  std::optional<std::string> strategy;  ///< absent: the session's own strategy
  std::string summarizer = "extractive";
  std::optional<std::string> config;
  std::optional<std::int64_t> window;
  std::optional<int> trigger_percent;
  std::optional<int> tail_percent;
  std::optional<std::int64_t> summarizer_window;
  std::optional<int> max_calls;  ///< --max-calls: cap on summarizer calls (default: none for extractive)
  std::optional<int> fanout;
  std::optional<std::int64_t> leaf_chunk_tokens;
  std::optional<int> archive_percent;
  std::optional<int> max_frames;
  std::string model;
  bool notes = false;              ///< compact --notes: rewrite the notes layer after compacting
  std::optional<std::int64_t> notes_budget;  ///< --notes-budget; absent: notes.budgetTokens, else 2000
  bool force = false;
  bool dry_run = false;
  std::string instructions;
};

/// Declares --summarizer, --max-calls, --window, --trigger-percent, --tail-percent, --summarizer-window,
/// --fanout, --leaf-chunk-tokens, --model, --archive-percent, --max-frames, --config, --force and
/// --instructions on sub.
void add_compaction_flags(CLI::App& sub, CompactCliOptions& o);

/// Config file (--config), then flags, then validation (Error(usage,"compact.options")).
RollingOptions rolling_options(const CompactCliOptions& o);
LcmOptions lcm_options(const CompactCliOptions& o);
SnapcompactOptions snapcompact_options(const CompactCliOptions& o);

}  // namespace ctxfold::cli
