#include "tokens/hidden.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_set>

#include "util/json.hpp"

namespace ctxfold {

bool is_edit_tool(std::string_view name) {
  return name == "Edit" || name == "Write" || name == "MultiEdit" || name == "NotebookEdit";
}

std::vector<std::int32_t> edit_results(const std::vector<Node>& items) {
  std::vector<std::int32_t> out(items.size(), 0);
  std::unordered_set<std::string> calls;  // tool_use ids of edit-tool calls seen so far
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Json& c = items[i].content;
    if (!c.is_array()) continue;
    for (const auto& b : c) {
      if (!b.is_object()) continue;
      const std::string type = json_str(b, "type");
      if (type == "tool_use") {
        if (is_edit_tool(json_str(b, "name"))) calls.insert(json_str(b, "id"));
      } else if (type == "tool_result") {
        if (calls.count(json_str(b, "tool_use_id"))) ++out[i];
      }
    }
  }
  return out;
}

std::int64_t count_between(const std::vector<std::int32_t>& counts, std::size_t begin, std::size_t end) {
  end = std::min(end, counts.size());
  std::int64_t n = 0;
  for (std::size_t i = begin; i < end; ++i) n += counts[i];
  return n;
}

void HiddenPerEdit::observe(std::int64_t measured_growth, std::int64_t predicted_growth, std::int64_t edits) {
  if (edits <= 0) return;
  const double sample = static_cast<double>(measured_growth - predicted_growth) / static_cast<double>(edits);
  per_edit += kAlpha * (sample - per_edit);
  ++samples;
}

std::int64_t HiddenPerEdit::predict(std::int64_t edits) const {
  if (edits <= 0 || per_edit <= 0) return 0;
  return static_cast<std::int64_t>(std::llround(per_edit * static_cast<double>(edits)));
}

}  // namespace ctxfold
