#pragma once
#include <span>
#include <string>
#include <string_view>

#include "model/strategy_label.hpp"
#include "model/strategy_label.hpp"
#include "render/view_policy.hpp"
#include "store/store.hpp"
#include "strategies/compaction.hpp"
#include "strategies/lcm.hpp"
#include "strategies/rolling.hpp"
#include "strategies/snapcompact.hpp"
#include "summarize/summarizer.hpp"

// The compaction strategies, registered once (docs/strategies.md): each one's name, its view
// policy (what a render substitutes for the view nodes it writes), its compactor and the line
// help gives it. compact, prepare, render's defaults, config and help read this table; a new
// strategy is one file and one row here.
namespace ctxfold {

/// Every compacting strategy's options, each read from its own config section and flags.
struct StrategyOptions {
  RollingOptions rolling;          ///< window, trigger, tail (and rolling's own keys)
  LcmOptions lcm;                  ///< the same shared keys, and lcm's own
  SnapcompactOptions snapcompact;  ///< and snapcompact's (its model sets the frames)
};

/// One compacting strategy.
struct StrategyInfo {
  StrategyLabel label;    ///< the label its view nodes carry (model/strategy_label.hpp)
  std::string_view name;  ///< label_name(label): the name compact --strategy and config take
  std::string_view help;  ///< one line: what it keeps
  const ViewPolicy& (*view)();
  /// The options the strategy runs with (its own part of StrategyOptions), as the keys every
  /// strategy shares (window, trigger, tail, force, dry run).
  CompactionOptions& (*shared)(StrategyOptions&);
  /// Runs the strategy once on the session's HEAD with its part of `o`.
  CompactResult (*compact)(Store&, const std::string& session, Summarizer&, const StrategyOptions& o);
};

/// The compacting strategies, in the order help lists them: rolling, lcm, snapcompact.
std::span<const StrategyInfo> compaction_strategies();

/// The strategy named `name`, or nullptr.
const StrategyInfo* find_strategy(std::string_view name);

/// The strategy named `name`; throws Error(usage,"compact.strategy") naming the known ones.
const StrategyInfo& strategy_named(std::string_view name);

/// The names joined for a message or help text ("rolling, lcm or snapcompact").
std::string strategy_names(std::string_view sep = ", ", std::string_view last = " or ");

}  // namespace ctxfold
