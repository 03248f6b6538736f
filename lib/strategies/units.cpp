#include "strategies/units.hpp"

#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "tokens/estimate.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

bool is_assistant(const Node& n) { return n.is_model_input() && n.role == role::kAssistant; }

}  // namespace

std::vector<bool> balanced_cuts(const std::vector<Node>& items) {
  const std::size_t n = items.size();
  // Position of the first result for each call id after the call.
  std::unordered_map<std::string, std::size_t> call_at;
  std::vector<int> diff(n + 2, 0);
  std::unordered_set<std::string> answered;
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto& id : tool_result_ids(items[i])) {
      auto it = call_at.find(id);
      if (it == call_at.end() || answered.count(id)) continue;
      answered.insert(id);
      // Cuts in (call, result] would split the pair.
      diff[it->second + 1] += 1;
      diff[i + 1] -= 1;
    }
    if (is_assistant(items[i]))
      for (const auto& id : tool_use_ids(items[i]))
        if (!call_at.count(id)) call_at.emplace(id, i);
  }
  // Open calls: unanswered and no user turn after them.
  std::size_t last_user = n;  // index of the last user turn, n if none
  for (std::size_t i = n; i-- > 0;)
    if (is_user_turn(items[i])) {
      last_user = i;
      break;
    }
  std::size_t first_open = n + 1;
  for (const auto& [id, pos] : call_at) {
    if (answered.count(id)) continue;
    if (last_user != n && last_user > pos) continue;  // abandoned, not open
    if (pos < first_open) first_open = pos;
  }
  std::vector<bool> ok(n + 1, true);
  int depth = 0;
  for (std::size_t i = 0; i <= n; ++i) {
    depth += diff[i];
    if (depth > 0) ok[i] = false;
    if (first_open <= n && i > first_open) ok[i] = false;
  }
  return ok;
}

std::vector<Unit> split_units(const std::vector<Node>& items, std::size_t from) {
  std::vector<Unit> units;
  if (from >= items.size()) return units;
  const std::vector<bool> ok = balanced_cuts(items);
  auto starts_unit = [&](std::size_t i) {
    if (i == from) return true;
    const Node& cur = items[i];
    const Node& prev = items[i - 1];
    if (cur.is_view() || prev.is_view()) return true;
    if (cur.role == role::kSystem || prev.role == role::kSystem) return true;
    if (is_user_turn(cur)) return true;
    if (is_assistant(cur) && !is_assistant(prev)) return true;
    return false;
  };
  for (std::size_t i = from; i < items.size(); ++i) {
    const std::int64_t t = estimate_node_tokens(items[i]);
    if (starts_unit(i) && (i == from || ok[i])) {
      Unit u;
      u.begin = i;
      u.end = i + 1;
      u.tokens = t;
      const Node& n = items[i];
      u.kind = n.is_view() ? "summary"
               : n.role == role::kSystem ? "system"
               : is_user_turn(n) ? "user"
               : is_assistant(n) ? "step"
                                 : "other";
      units.push_back(std::move(u));
    } else {
      units.back().end = i + 1;
      units.back().tokens += t;
    }
  }
  // A unit is open when a cut right after it would be unbalanced because of an open call: the
  // only such unit is the last one holding an open call (balanced_cuts forbids every later cut).
  if (!units.empty() && !ok[items.size()]) units.back().open = true;
  for (auto& u : units)
    if (u.end < items.size() && !ok[u.end]) u.open = true;  // defensive; merging prevents this
  return units;
}

std::size_t retained_tail_start(const std::vector<Unit>& units, std::int64_t retain_target, std::int64_t max_tail) {
  std::int64_t acc = 0;
  std::size_t k = units.size();
  while (k > 0) {
    --k;
    acc += units[k].tokens;
    if (acc >= retain_target) break;
  }
  if (acc < retain_target) k = 0;
  // The unit that crosses retain_target is kept whole only while the tail stays within max_tail;
  // past it the tail starts after it (a large unit is evicted rather than carried over the cap).
  if (acc > max_tail && k + 1 < units.size()) acc -= units[k++].tokens;
  if (k < units.size() && units[k].kind == "step") {
    std::int64_t with_turn = acc;
    bool moved = false;
    for (std::size_t j = k; j-- > 0;) {
      with_turn += units[j].tokens;
      if (units[j].kind == "user") {
        if (with_turn <= 2 * retain_target && with_turn <= max_tail) {
          k = j;
          moved = true;
        }
        break;
      }
      if (units[j].kind != "step") break;
    }
    if (!moved)
      for (std::size_t j = k + 1; j < units.size(); ++j)
        if (units[j].kind == "user") {
          k = j;
          break;
        }
  }
  return k;
}

PairingGaps pairing_gaps(const std::vector<Node>& items, std::size_t begin, std::size_t end) {
  PairingGaps g;
  if (end > items.size()) end = items.size();
  std::unordered_set<std::string> calls_before, calls_inside, results_inside, results_after;
  for (std::size_t i = 0; i < begin && i < items.size(); ++i)
    for (const auto& id : tool_use_ids(items[i])) calls_before.insert(id);
  for (std::size_t i = end; i < items.size(); ++i)
    for (const auto& id : tool_result_ids(items[i])) results_after.insert(id);
  for (std::size_t i = begin; i < end; ++i) {
    for (const auto& id : tool_result_ids(items[i])) {
      results_inside.insert(id);
      if (!calls_inside.count(id) && calls_before.count(id)) g.orphan_results.push_back(id);
    }
    for (const auto& id : tool_use_ids(items[i])) calls_inside.insert(id);
  }
  for (std::size_t i = begin; i < end; ++i)
    for (const auto& id : tool_use_ids(items[i]))
      if (!results_inside.count(id) && results_after.count(id)) g.unanswered_calls.push_back(id);
  return g;
}

std::vector<std::string> chain_segment(Store& store, const std::string& last, const std::optional<std::string>& stop_after,
                                       const std::optional<std::string>& stop_at, std::int64_t bound) {
  std::vector<std::string> rev;
  std::optional<std::string> cur = last;
  for (std::int64_t steps = 0; cur; ++steps) {
    if (steps > bound)
      throw Error(Exit::internal, "compact.chain",
                  fmt::format("the chain behind '{}' is longer than the rendered spine", last));
    if (stop_after && *cur == *stop_after) break;
    rev.push_back(*cur);
    if (stop_at && *cur == *stop_at) break;
    cur = store.predecessor_of(*cur);
  }
  if (stop_after && !cur)
    throw Error(Exit::internal, "compact.chain",
                fmt::format("the chain behind '{}' does not reach the cursor '{}'", last, *stop_after));
  return {rev.rbegin(), rev.rend()};
}

}  // namespace ctxfold
