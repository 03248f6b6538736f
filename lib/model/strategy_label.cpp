#include "model/strategy_label.hpp"

#include <iterator>

namespace ctxfold {

std::optional<StrategyLabel> parse_label(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kStrategyLabelNames); ++i)
    if (kStrategyLabelNames[i] == name) return static_cast<StrategyLabel>(i);
  return std::nullopt;
}

std::optional<StrategyLabel> strategy_label(const Json& metadata) {
  if (!metadata.is_object()) return StrategyLabel::rolling;
  auto it = metadata.find("strategy");
  if (it == metadata.end() || it->is_null()) return StrategyLabel::rolling;
  if (!it->is_string()) return std::nullopt;
  return parse_label(it->get_ref<const std::string&>());
}

bool has_label(const Json& metadata, StrategyLabel label) { return strategy_label(metadata) == label; }

}  // namespace ctxfold
