#include "strategies/registry.hpp"

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/names.hpp"

namespace ctxfold {

namespace {

const ViewPolicy& rolling_view() { return view_policy(label_name(StrategyLabel::rolling)); }
const ViewPolicy& lcm_view() { return view_policy(label_name(StrategyLabel::lcm)); }
const ViewPolicy& snapcompact_view() { return view_policy(label_name(StrategyLabel::snapcompact)); }

const StrategyInfo kStrategies[] = {
    {StrategyLabel::rolling, label_name(StrategyLabel::rolling),
     "one summary of everything older than the tail, rewritten at each compaction", rolling_view,
     [](StrategyOptions& o) -> CompactionOptions& { return o.rolling; },
     [](Store& st, const std::string& s, Summarizer& sum, const StrategyOptions& o) {
       return compact_rolling(st, s, sum, o.rolling);
     }},
    {StrategyLabel::lcm, label_name(StrategyLabel::lcm),
     "a tree of folds: leaves summarize chunks, parents summarize leaves; nothing is rewritten", lcm_view,
     [](StrategyOptions& o) -> CompactionOptions& { return o.lcm; },
     [](Store& st, const std::string& s, Summarizer& sum, const StrategyOptions& o) {
       return compact_lcm(st, s, sum, o.lcm);
     }},
    {StrategyLabel::snapcompact, label_name(StrategyLabel::snapcompact),
     "the evicted history drawn as text frames a vision model reads", snapcompact_view,
     [](StrategyOptions& o) -> CompactionOptions& { return o.snapcompact; },
     [](Store& st, const std::string& s, Summarizer& sum, const StrategyOptions& o) {
       return compact_snapcompact(st, s, sum, o.snapcompact);
     }},
};

}  // namespace

std::span<const StrategyInfo> compaction_strategies() { return kStrategies; }

const StrategyInfo* find_strategy(std::string_view name) { return find_named(kStrategies, name); }

const StrategyInfo& strategy_named(std::string_view name) {
  if (const StrategyInfo* s = find_strategy(name)) return *s;
  throw Error(Exit::usage, "compact.strategy", fmt::format("unknown strategy '{}'", name),
              "use " + strategy_names());
}

std::string strategy_names(std::string_view sep, std::string_view last) { return join_names(kStrategies, sep, last); }

}  // namespace ctxfold
