#include "invariants/verify_fork.hpp"

#include <fmt/format.h>

#include <set>
#include <unordered_map>
#include <unordered_set>

#include "invariants/catalog.hpp"
#include "render/render.hpp"
#include "util/error.hpp"

namespace ctxfold {

namespace {

/// The fork's serialized messages with every fork node id written back as the id it was copied
/// from: a renderer may quote node ids (the rolling recap does), and those necessarily differ.
/// One pass: at each occurrence of "<fork>:", the longest fork id starting there is replaced.
std::string unmap_ids(const std::string& text, const std::string& fork,
                      const std::unordered_map<std::string, std::string>& back, const std::set<std::size_t>& lengths) {
  const std::string prefix = fork + ":";
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t p = text.find(prefix, i);
    if (p == std::string::npos) break;
    out.append(text, i, p - i);
    bool replaced = false;
    for (auto it = lengths.rbegin(); it != lengths.rend() && !replaced; ++it) {
      if (p + *it > text.size()) continue;
      auto hit = back.find(text.substr(p, *it));
      if (hit != back.end()) {
        out += hit->second;
        i = p + *it;
        replaced = true;
      }
    }
    if (!replaced) {
      out += text[p];
      i = p + 1;
    }
  }
  if (i < text.size()) out.append(text, i, std::string::npos);
  return out;
}

/// The fork session check_one verifies and the check its findings go to.
struct ForkCheck {
  Store& store;
  const SessionInfo& s;
  Check& c;
  void violation(std::vector<std::string> nodes, std::string message) {
    c.ok = false;
    c.violations.push_back({s.id, std::move(nodes), std::move(message)});
  }
};

/// The fork's node ids, and each copied node's source id.
struct ForkIds {
  std::unordered_set<std::string> ids;
  std::unordered_map<std::string, std::string> back;  // fork id -> the source id it copies
  std::set<std::size_t> lengths;                      ///< the lengths of the fork ids in back
};

/// Gathers the fork's ForkIds in one pass over its nodes.
ForkIds fork_ids(ForkCheck& k) {
  ForkIds f;
  k.store.for_each_node(k.s.id, [&](const Node& n) {
    f.ids.insert(n.id);
    auto it = n.metadata.find("forked_from");
    if (it != n.metadata.end() && it->is_object()) {
      std::string from = json_str(*it, "id");
      if (!from.empty()) {
        f.back.emplace(n.id, from);
        f.lengths.insert(n.id.size());
      }
    }
    return true;
  }, kLatest, false);
  return f;
}

/// Every predecessor, covered id and node id a node's metadata names is a node of the fork.
void check_references(ForkCheck& k, const std::unordered_set<std::string>& ids) {
  k.store.for_each_node(k.s.id, [&](const Node& n) {
    if (n.predecessor && !ids.count(*n.predecessor))
      k.violation({n.id}, fmt::format("predecessor '{}' is not a node of the fork", *n.predecessor));
    for (const auto& cv : n.covers_ids)
      if (!ids.count(cv)) k.violation({n.id}, fmt::format("covered id '{}' is not a node of the fork", cv));
    for (const char* key : kNodeIdListKeys) {
      auto it = n.metadata.find(key);
      if (it == n.metadata.end()) continue;
      std::vector<std::string> refs;
      if (it->is_string()) refs.push_back(it->get<std::string>());
      if (it->is_array())
        for (const auto& v : *it)
          if (v.is_string()) refs.push_back(v.get<std::string>());
      for (const auto& ref : refs)
        if (!ids.count(ref))
          k.violation({n.id},
                      fmt::format("metadata.{} names '{}', which is not a node of the fork", key, ref));
    }
    return true;
  }, kLatest, true);
}

/// Every non-view node up to the fork's boundary is on HEAD's spine (walked at most node_count + 1 steps).
void check_one_chain(ForkCheck& k, const std::string& head, std::size_t node_count,
                     std::int64_t boundary_seq) {
  std::unordered_set<std::string> spine;
  {
    std::optional<std::string> cur = head;
    const std::size_t bound = node_count + 1;
    while (cur && spine.size() < bound && spine.insert(*cur).second) cur = k.store.predecessor_of(*cur);
  }
  k.store.for_each_node(k.s.id, [&](const Node& n) {
    if (!n.is_view() && !spine.count(n.id))
      k.violation({n.id}, fmt::format("node '{}' was copied but is not on the path to the fork point", n.id));
    return true;
  }, boundary_seq, false);
}

/// The fork's render at its HEAD and boundary equals the source's at the fork point, once fork ids
/// are written back as their source ids.
void check_same_context(ForkCheck& k, const std::string& head, const std::string& at,
                        const std::string& source, std::int64_t boundary_seq, const ForkIds& f) {
  const SessionInfo& s = k.s;
  std::int64_t source_boundary = kLatest;
  if (auto it = s.metadata.find("source_boundary_seq"); it != s.metadata.end() && it->is_number_integer())
    source_boundary = it->get<std::int64_t>();
  try {
    RenderOptions fo;
    fo.head = head;
    fo.as_of = boundary_seq;
    RenderOptions so;
    so.head = at;
    so.as_of = source_boundary;
    Json fork_msgs = render_to_json(render_context(k.store, s.id, fo), RenderFormat::openai)["messages"];
    Json source_msgs = render_to_json(render_context(k.store, source, so), RenderFormat::openai)["messages"];
    if (unmap_ids(dump_json(fork_msgs), s.id, f.back, f.lengths) != dump_json(source_msgs)) {
      std::size_t i = 0;
      while (i < fork_msgs.size() && i < source_msgs.size() && fork_msgs[i] == source_msgs[i]) ++i;
      k.violation({head, at},
                  fmt::format("the fork renders differently from '{}' at '{}': {} vs {} messages, first difference "
                              "at message {}",
                              source, at, fork_msgs.size(), source_msgs.size(), i));
    }
  } catch (const Error& e) {
    k.violation({head, at},
                fmt::format("cannot render the fork or its source at the fork point: {}", e.what()));
  }
}

void check_one(Store& store, const SessionInfo& s, Check& c) {
  ForkCheck k{store, s, c};
  const std::string at = json_str(s.metadata, "at");
  const std::string source = s.parent_session.value_or(json_str(s.metadata, "forked_from"));
  if (at.empty() || source.empty()) {
    k.violation({}, "fork session has no fork point: metadata.at or its parent session is missing");
    return;
  }

  // Closure: every reference resolves inside the fork.
  const ForkIds f = fork_ids(k);
  check_references(k, f.ids);

  // The fork's own boundary and HEAD at creation.
  std::optional<HeadMove> fork_move;
  for (const auto& m : store.head_moves(s.id))
    if (m.cause == "fork") {
      fork_move = m;
      break;
    }
  if (!fork_move) {
    k.violation({}, "fork session has no HEAD move with cause \"fork\"");
    return;
  }
  const std::string head = fork_move->node_id;
  if (head != fork_node_id(s.id, at))
    k.violation({head},
                fmt::format("the fork's first HEAD '{}' is not the copy of its fork point '{}'", head, at));

  // One chain: every non-view node at the fork boundary is on HEAD's spine.
  check_one_chain(k, head, f.ids.size(), fork_move->boundary_seq);

  // Same context as the source at the fork point.
  check_same_context(k, head, at, source, fork_move->boundary_seq, f);
}

}  // namespace

Check check_fork_closure(Store& store, const std::vector<std::string>& sessions) {
  Check c = make_check("I9");
  for (const auto& id : sessions) {
    auto s = store.session(id);
    if (!s || s->kind != "fork") continue;
    check_one(store, *s, c);
  }
  return c;
}

}  // namespace ctxfold
