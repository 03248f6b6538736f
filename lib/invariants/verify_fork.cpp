#include "invariants/verify_fork.hpp"

#include <fmt/format.h>

#include <set>
#include <unordered_map>
#include <unordered_set>

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

void check_one(Store& store, const SessionInfo& s, Check& c) {
  auto violation = [&](std::vector<std::string> nodes, std::string message) {
    c.ok = false;
    c.violations.push_back({s.id, std::move(nodes), std::move(message)});
  };
  const std::string at = json_str(s.metadata, "at");
  const std::string source = s.parent_session.value_or(json_str(s.metadata, "forked_from"));
  if (at.empty() || source.empty()) {
    violation({}, "fork session has no fork point: metadata.at or its parent session is missing");
    return;
  }

  // Closure: every reference resolves inside the fork.
  std::unordered_set<std::string> ids;
  std::unordered_map<std::string, std::string> back;  // fork id -> the source id it copies
  std::set<std::size_t> lengths;
  store.for_each_node(s.id, [&](const Node& n) {
    ids.insert(n.id);
    auto f = n.metadata.find("forked_from");
    if (f != n.metadata.end() && f->is_object()) {
      std::string from = json_str(*f, "id");
      if (!from.empty()) {
        back.emplace(n.id, from);
        lengths.insert(n.id.size());
      }
    }
    return true;
  }, kLatest, false);
  store.for_each_node(s.id, [&](const Node& n) {
    if (n.predecessor && !ids.count(*n.predecessor))
      violation({n.id}, fmt::format("predecessor '{}' is not a node of the fork", *n.predecessor));
    for (const auto& cv : n.covers_ids)
      if (!ids.count(cv)) violation({n.id}, fmt::format("covered id '{}' is not a node of the fork", cv));
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
          violation({n.id}, fmt::format("metadata.{} names '{}', which is not a node of the fork", key, ref));
    }
    return true;
  }, kLatest, true);

  // The fork's own boundary and HEAD at creation.
  std::optional<HeadMove> fork_move;
  for (const auto& m : store.head_moves(s.id))
    if (m.cause == "fork") {
      fork_move = m;
      break;
    }
  if (!fork_move) {
    violation({}, "fork session has no HEAD move with cause \"fork\"");
    return;
  }
  const std::string head = fork_move->node_id;
  if (head != fork_node_id(s.id, at))
    violation({head}, fmt::format("the fork's first HEAD '{}' is not the copy of its fork point '{}'", head, at));

  // One chain: every non-view node at the fork boundary is on HEAD's spine.
  std::unordered_set<std::string> spine;
  {
    std::optional<std::string> cur = head;
    const std::size_t bound = ids.size() + 1;
    while (cur && spine.size() < bound && spine.insert(*cur).second) cur = store.predecessor_of(*cur);
  }
  store.for_each_node(s.id, [&](const Node& n) {
    if (!n.is_view() && !spine.count(n.id))
      violation({n.id}, fmt::format("node '{}' was copied but is not on the path to the fork point", n.id));
    return true;
  }, fork_move->boundary_seq, false);

  // Same context as the source at the fork point.
  std::int64_t source_boundary = kLatest;
  if (auto it = s.metadata.find("source_boundary_seq"); it != s.metadata.end() && it->is_number_integer())
    source_boundary = it->get<std::int64_t>();
  try {
    RenderOptions fo;
    fo.head = head;
    fo.as_of = fork_move->boundary_seq;
    RenderOptions so;
    so.head = at;
    so.as_of = source_boundary;
    Json fork_msgs = render_to_json(render_context(store, s.id, fo), RenderFormat::openai)["messages"];
    Json source_msgs = render_to_json(render_context(store, source, so), RenderFormat::openai)["messages"];
    if (unmap_ids(dump_json(fork_msgs), s.id, back, lengths) != dump_json(source_msgs)) {
      std::size_t i = 0;
      while (i < fork_msgs.size() && i < source_msgs.size() && fork_msgs[i] == source_msgs[i]) ++i;
      violation({head, at},
                fmt::format("the fork renders differently from '{}' at '{}': {} vs {} messages, first difference at "
                            "message {}",
                            source, at, fork_msgs.size(), source_msgs.size(), i));
    }
  } catch (const Error& e) {
    violation({head, at}, fmt::format("cannot render the fork or its source at the fork point: {}", e.what()));
  }
}

}  // namespace

Check check_fork_closure(Store& store, const std::vector<std::string>& sessions) {
  Check c{"I9", "fork closure", true, {}, {}};
  for (const auto& id : sessions) {
    auto s = store.session(id);
    if (!s || s->kind != "fork") continue;
    check_one(store, *s, c);
  }
  return c;
}

}  // namespace ctxfold
