#include "invariants/verify_lcm.hpp"

#include <fmt/format.h>

#include <map>
#include <unordered_map>

#include "invariants/catalog.hpp"
#include "model/strategy_label.hpp"

namespace ctxfold {
namespace {

std::string opt_id(const Json& j) { return j.is_string() ? j.get<std::string>() : std::string("none"); }

void add(Check& c, const std::string& session, std::vector<std::string> nodes, std::string message) {
  c.ok = false;
  c.violations.push_back(Violation{session, std::move(nodes), std::move(message)});
}

/// An lcm summary's metadata.depth: nullopt unless an integer >= 1.
std::optional<std::int64_t> depth_of(const Node& n) {
  auto it = n.metadata.find("depth");
  if (it == n.metadata.end() || !it->is_number_integer() || it->get<std::int64_t>() < 1) return std::nullopt;
  return it->get<std::int64_t>();
}

/// One session's lcm tree as the node checks read it.
struct LcmCheck {
  const std::string& session;
  Check& c;
  std::unordered_map<std::string, const Node*> by_id;
  std::unordered_map<std::string, std::string> parent_of;  ///< child id -> the first parent naming it
};

/// The children of lcm parent n (at depth) each exist, have one parent, are older, sit one level
/// below it and follow each other; returns the union of their coverage, nullopt when a child is
/// missing.
std::optional<std::vector<std::string>> children_union(LcmCheck& k, const Node& n, std::int64_t depth,
                                                       const std::vector<std::string>& children) {
  const std::string& session = k.session;
  std::vector<std::string> union_ids;
  bool children_ok = true;
  const Node* prev = nullptr;
  for (const auto& cid : children) {
    auto it = k.by_id.find(cid);
    if (it == k.by_id.end()) {
      add(k.c, session, {n.id, cid},
          fmt::format("lcm parent '{}' names child '{}', which is not an lcm summary of session '{}'", n.id, cid,
                      session));
      children_ok = false;
      continue;
    }
    const Node& ch = *it->second;
    if (auto [pit, fresh] = k.parent_of.emplace(cid, n.id); !fresh)
      add(k.c, session, {cid, pit->second, n.id},
          fmt::format("lcm summary '{}' is the child of two parents, '{}' and '{}'", cid, pit->second, n.id));
    if (ch.seq >= n.seq)
      add(k.c, session, {n.id, cid},
          fmt::format("lcm parent '{}' (seq {}) names child '{}' (seq {}) that is not older than it: the tree must "
                      "be acyclic, children written before their parent",
                      n.id, n.seq, cid, ch.seq));
    auto cd = depth_of(ch);
    if (cd && *cd != depth - 1)
      add(k.c, session, {n.id, cid},
          fmt::format("lcm parent '{}' at depth {} names child '{}' at depth {}: a child sits exactly one level "
                      "below its parent",
                      n.id, depth, cid, *cd));
    if (prev && !prev->covers_ids.empty() && ch.predecessor != std::optional<std::string>(prev->covers_ids.back()))
      add(k.c, session, {n.id, prev->id, cid},
          fmt::format("the children '{}' and '{}' of lcm parent '{}' are not adjacent: '{}' does not begin right "
                      "after '{}'",
                      prev->id, cid, n.id, cid, prev->covers_ids.back()));
    union_ids.insert(union_ids.end(), ch.covers_ids.begin(), ch.covers_ids.end());
    prev = &ch;
  }
  if (!children_ok) return std::nullopt;
  return union_ids;
}

/// One lcm summary: a valid depth, children only above depth 1, and a range that is the union
/// of its children's.
void check_lcm_node(LcmCheck& k, const Node& n) {
  const std::string& session = k.session;
  auto depth = depth_of(n);
  if (!depth) {
    add(k.c, session, {n.id},
        fmt::format("lcm summary '{}' has no valid metadata.depth (an integer >= 1)", n.id));
    return;
  }
  std::vector<std::string> children;
  if (auto it = n.metadata.find("children"); it != n.metadata.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_string()) children.push_back(v.get<std::string>());
  if (*depth == 1) {
    if (!children.empty())
      add(k.c, session, {n.id},
          fmt::format("lcm leaf '{}' (depth 1) names {} children", n.id, children.size()));
    return;
  }
  if (children.empty()) {
    add(k.c, session, {n.id}, fmt::format("lcm parent '{}' (depth {}) names no children", n.id, *depth));
    return;
  }
  auto union_ids = children_union(k, n, *depth, children);
  if (!union_ids) return;
  if (*union_ids != n.covers_ids) {
    std::size_t i = 0;
    while (i < union_ids->size() && i < n.covers_ids.size() && (*union_ids)[i] == n.covers_ids[i]) ++i;
    add(k.c, session, {n.id},
        fmt::format("lcm parent '{}' covers {} ids but its {} children cover {}: its range is not the union of "
                    "its children's (first difference at position {}: '{}' vs '{}')",
                    n.id, n.covers_ids.size(), children.size(), union_ids->size(), i,
                    i < n.covers_ids.size() ? n.covers_ids[i] : std::string("(end)"),
                    i < union_ids->size() ? (*union_ids)[i] : std::string("(end)")));
  }
}

/// The covered cursor each lcm compaction's compact/end records agrees with the leaves it wrote.
void check_lcm_cursor(Store& store, const std::string& session, const std::vector<Node>& tree, Check& c) {
  std::map<std::string, std::vector<const Node*>> leaves_of;  // compaction id -> leaves, seq order
  for (const Node& n : tree)
    if (depth_of(n) == std::optional<std::int64_t>(1))
      if (auto ref = json_str(n.metadata, "compaction"); !ref.empty()) leaves_of[ref].push_back(&n);
  for (const auto& e : store.events(session, "compact/end")) {
    if (!has_label(e.payload, StrategyLabel::lcm)) continue;
    const std::string ref = e.ref.value_or("");
    if (!e.payload.contains("cursor") || !e.payload.contains("cursor_before")) {
      add(c, session, {},
          fmt::format("lcm compaction '{}' records no covered cursor in its compact/end", ref));
      continue;
    }
    const Json& before = e.payload["cursor_before"];
    const Json& after = e.payload["cursor"];
    auto it = leaves_of.find(ref);
    if (it == leaves_of.end() || it->second.empty()) {
      if (opt_id(after) != opt_id(before))
        add(c, session, {},
            fmt::format("lcm compaction '{}' wrote no leaf but moved the covered cursor from '{}' to '{}'", ref,
                        opt_id(before), opt_id(after)));
      continue;
    }
    const Node& first = *it->second.front();
    const Node& last = *it->second.back();
    if (before.is_string() && first.predecessor != std::optional<std::string>(before.get<std::string>()))
      add(c, session, {first.id},
          fmt::format("lcm compaction '{}' started at cursor '{}' but its first leaf '{}' begins after '{}'", ref,
                      opt_id(before), first.id, first.predecessor.value_or("none")));
    const std::string expect = last.covers_ids.empty() ? std::string("none") : last.covers_ids.back();
    if (opt_id(after) != expect)
      add(c, session, {last.id},
          fmt::format("lcm compaction '{}' records cursor '{}' but its last leaf '{}' covers up to '{}'", ref,
                      opt_id(after), last.id, expect));
  }
}

}  // namespace

Check check_lcm_tree(Store& store, const std::vector<std::string>& sessions) {
  Check c = make_check("I8");
  for (const auto& session : sessions) {
    std::vector<Node> tree;
    for (auto& n : store.view_nodes(session, kind::kSummary, kLatest, true))
      if (has_label(n.metadata, StrategyLabel::lcm)) tree.push_back(std::move(n));
    if (tree.empty()) continue;
    LcmCheck k{session, c, {}, {}};
    for (const auto& n : tree) k.by_id.emplace(n.id, &n);
    for (const Node& n : tree) check_lcm_node(k, n);

    // The covered cursor, per lcm compaction.
    check_lcm_cursor(store, session, tree, c);
  }
  return c;
}

}  // namespace ctxfold
