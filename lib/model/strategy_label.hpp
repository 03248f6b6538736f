#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "util/json.hpp"

// The strategy label a view node carries in metadata.strategy: which strategy wrote it
// (docs/strategies.md). This is the one table of strategy names; the strategies' registry
// (strategies/registry.hpp) and render's view policies (render/view_policy.hpp) name their rows
// with it, and every other file compares StrategyLabel values, never the strings.
namespace ctxfold {

/// The strategies that write view nodes. `region` is `compact --from/--to`'s region summary and
/// `notes` the notes layer; both run beside a compacting strategy rather than as one.
enum class StrategyLabel { rolling, lcm, snapcompact, notes, region };

/// The stored names, in StrategyLabel's order.
inline constexpr std::string_view kStrategyLabelNames[] = {"rolling", "lcm", "snapcompact", "notes", "region"};

/// The stored name of a label ("rolling", "lcm", "snapcompact", "notes", "region").
constexpr std::string_view label_name(StrategyLabel label) {
  return kStrategyLabelNames[static_cast<std::size_t>(label)];
}

/// The label named `name`, or nullopt for any other string.
std::optional<StrategyLabel> parse_label(std::string_view name);

/// The label of a view node's metadata: metadata.strategy, where absent or null reads as rolling
/// (an imported summary; the store's active-summary rule, docs/strategies.md "rolling"); nullopt
/// for a value that names no label, or is not a string.
std::optional<StrategyLabel> strategy_label(const Json& metadata);

/// True when metadata.strategy is `label` (absent or null counting as rolling).
bool has_label(const Json& metadata, StrategyLabel label);

}  // namespace ctxfold
