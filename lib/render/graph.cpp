#include "render/graph.hpp"

#include "model/preview.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>


namespace ctxfold {

namespace {
std::string dot_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

struct Raw {
  std::optional<std::string> pred;
  std::string label;
  bool event = false;
};

/// session_dot's state: the session's nodes, the active summary's coverage, what is drawn and
/// the DOT text so far.
struct DotGraph {
  GraphStats g;
  std::unordered_map<std::string, Raw> raw;
  std::unordered_set<std::string> has_child;
  std::vector<std::string> order;  // raw nodes in seq order
  std::vector<Node> views;
  std::optional<std::string> head;
  std::optional<Node> active;
  std::vector<std::string> covers;
  std::unordered_set<std::string> covered;
  std::unordered_set<std::string> visible;
  bool capsule_used = false;
  std::string out;

  void read_nodes(Store& st, const std::string& session, std::int64_t as_of);
  void read_active(Store& st, const std::string& session, std::int64_t as_of);
  void find_visible();
  void draw_raw_nodes();
  void draw_raw_edges();
  void draw_views();
};

/// Reads the session's raw nodes (labels, predecessors, which have children) and view nodes.
void DotGraph::read_nodes(Store& st, const std::string& session, std::int64_t as_of) {
  st.for_each_node(
      session,
      [&](const Node& n) {
        if (n.is_view()) {
          views.push_back(n);
          return true;
        }
        std::string label = fmt::format("{}\\n{} {}", dot_escape(n.id), n.role.empty() ? n.kind : n.role,
                                        dot_escape(node_preview(n, 40)));
        bool event = n.kind == "event";
        raw.emplace(n.id, Raw{n.predecessor, std::move(label), event});
        order.push_back(n.id);
        // Log-only events hanging off a node are not branches: only a non-event child makes its
        // predecessor an inner node, and an event is never a tip (an event inside a chain is
        // drawn as a point where a branch passes through it).
        if (n.predecessor && !event) has_child.insert(*n.predecessor);
        return true;
      },
      as_of, true);
  // An event with a branch below it is an inner node, so its predecessor is one too (reverse
  // seq order sees every child before its predecessor).
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Raw& r = raw[*it];
    if (r.event && r.pred && has_child.count(*it)) has_child.insert(*r.pred);
  }
}

/// HEAD, the active summary and the ids it covers.
void DotGraph::read_active(Store& st, const std::string& session, std::int64_t as_of) {
  head = st.head(session, as_of);
  active = st.active_summary(session, as_of);
  if (active) {
    for (const Node& v : views)
      if (v.id == active->id) covers = v.covers_ids;
  }
  covered = std::unordered_set<std::string>(covers.begin(), covers.end());
}

void DotGraph::find_visible() {
  // Visible raw nodes: the union of every tip's spine, minus the covered ids on tips that carry S.
  std::size_t bound = raw.size() + 1;
  for (const std::string& id : order) {
    if (has_child.count(id) || raw[id].event) continue;
    ++g.tips;
    std::vector<std::string> spine;
    std::optional<std::string> cur = id;
    for (std::size_t i = 0; cur && i < bound; ++i) {
      auto it = raw.find(*cur);
      if (it == raw.end()) break;
      spine.push_back(*cur);
      cur = it->second.pred;
    }
    std::size_t on = 0;
    for (const std::string& s : spine) on += covered.count(s);
    bool carries = !covers.empty() && on == covers.size();
    capsule_used = capsule_used || carries;
    for (const std::string& s : spine)
      if (!(carries && covered.count(s))) visible.insert(s);
  }
}

/// One DOT node per visible raw node (events as points, HEAD marked); counts the folded ones.
void DotGraph::draw_raw_nodes() {
  for (const std::string& id : order) {
    if (!visible.count(id)) {
      if (covered.count(id)) ++g.folded;
      continue;
    }
    ++g.raw_nodes;
    const Raw& r = raw[id];
    std::string extra = head && *head == id ? ", penwidth=3, color=\"blue\", xlabel=\"HEAD\"" : "";
    if (r.event)
      out += fmt::format("  \"{}\" [shape=point, label=\"\", tooltip=\"{}\"{}];\n", dot_escape(id), r.label, extra);
    else
      out += fmt::format("  \"{}\" [label=\"{}\"{}];\n", dot_escape(id), r.label, extra);
  }
}

/// The predecessor edges of the visible raw nodes; the node after the capsule hangs off it.
void DotGraph::draw_raw_edges() {
  const std::string last_covered = covers.empty() ? std::string() : covers.back();
  for (const std::string& id : order) {
    if (!visible.count(id)) continue;
    const Raw& r = raw[id];
    if (!r.pred) continue;
    if (capsule_used && *r.pred == last_covered && !visible.count(*r.pred))
      out += fmt::format("  \"{}\" -> \"{}\";\n", dot_escape(active->id), dot_escape(id));
    else if (capsule_used && *r.pred == last_covered)
      out += fmt::format("  \"{}\" -> \"{}\";\n  \"{}\" -> \"{}\" [style=dashed];\n", dot_escape(active->id),
                         dot_escape(id), dot_escape(*r.pred), dot_escape(id));
    else if (raw.count(*r.pred))
      out += fmt::format("  \"{}\" -> \"{}\";\n", dot_escape(*r.pred), dot_escape(id));
  }
}

/// The view nodes: the active summary as the capsule, every other one as an inert relic.
void DotGraph::draw_views() {
  for (const Node& v : views) {
    bool is_active = capsule_used && active && v.id == active->id;
    std::string text = dot_escape(node_preview(v, 60));
    if (is_active) {
      ++g.capsules;
      out += fmt::format(
          "  \"{}\" [shape=box, style=\"rounded,filled\", fillcolor=\"#fff3c4\", peripheries=2, "
          "label=\"{}\\nsummary of {} nodes\\n{} .. {}\\n{}\"];\n",
          dot_escape(v.id), dot_escape(v.id), covers.size(), dot_escape(covers.front()), dot_escape(covers.back()), text);
    } else {
      ++g.relics;
      out += fmt::format("  \"{}\" [shape=box, style=\"rounded,dashed\", color=\"gray50\", fontcolor=\"gray40\", "
                         "label=\"{}\\n{} (inert here), covers {}\"];\n",
                         dot_escape(v.id), dot_escape(v.id), v.kind, v.covers_ids.size());
    }
    if (v.predecessor && visible.count(*v.predecessor))
      out += fmt::format("  \"{}\" -> \"{}\"{};\n", dot_escape(*v.predecessor), dot_escape(v.id),
                         is_active ? "" : " [style=dotted, arrowhead=none]");
  }
}

}  // namespace

std::string session_dot(Store& st, const std::string& session, std::int64_t as_of, GraphStats* stats) {
  DotGraph d;
  d.read_nodes(st, session, as_of);
  d.read_active(st, session, as_of);
  d.find_visible();
  d.out = fmt::format(
      "digraph \"{}\" {{\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n",
      dot_escape(session));
  d.draw_raw_nodes();
  d.draw_raw_edges();
  d.draw_views();
  d.out += "}\n";
  if (stats) *stats = d.g;
  return d.out;
}

}  // namespace ctxfold
