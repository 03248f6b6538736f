#include "session/fork.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "model/quoted_id.hpp"
#include "render/render.hpp"
#include "session/prepare.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"

namespace ctxfold {

namespace {

using IdMap = std::unordered_map<std::string, std::string>;

struct PathEntry {
  std::int64_t seq = 0;
  std::string id;
};

/// Rewrites every string equal to a copied id, anywhere in j (at the top level of a metadata
/// object, "source", "raw" and "forked_from" are provenance: the original record, kept verbatim).
void remap_strings(Json& j, const IdMap& map, bool top) {
  if (j.is_string()) {
    auto it = map.find(j.get_ref<const std::string&>());
    if (it != map.end()) j = it->second;
  } else if (j.is_array()) {
    for (auto& v : j) remap_strings(v, map, false);
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (top && (it.key() == "source" || it.key() == "raw" || it.key() == "forked_from")) continue;
      remap_strings(it.value(), map, false);
    }
  }
}

/// After remapping: entries of the id-list keys that name no copied node are dropped (the node
/// they named is not in the fork); returns what was dropped.
Json drop_dangling_refs(Json& meta, const std::unordered_set<std::string>& new_ids) {
  Json dropped = Json::array();
  for (const char* key : kNodeIdListKeys) {
    auto it = meta.find(key);
    if (it == meta.end()) continue;
    if (it->is_string()) {
      if (!new_ids.count(it->get<std::string>())) {
        dropped.push_back(*it);
        meta.erase(key);
      }
    } else if (it->is_array()) {
      Json kept = Json::array();
      for (auto& v : *it) {
        if (v.is_string() && !new_ids.count(v.get<std::string>()))
          dropped.push_back(v);
        else
          kept.push_back(v);
      }
      *it = std::move(kept);
    }
  }
  return dropped;
}

/// A rolling (or imported) summary with a coverage.
bool is_covering_rolling_summary(const Node& v) { return !v.covers_ids.empty() && is_rolling_summary(v); }

std::string default_fork_name(Store& store, const std::string& source, const std::string& at) {
  Sha256 h;
  h.update(source);
  h.update(std::string(1, '\0'));
  h.update(at);
  h.update(std::string(1, '\0'));
  h.update(std::to_string(store.max_seq()));
  std::string base = "fork-" + h.hex().substr(0, 12);
  std::string name = base;
  for (int i = 2; store.session(name); ++i) name = fmt::format("{}-{}", base, i);
  return name;
}

/// Copies one chain (non-view) node under a new id, session and predecessor (Store::copy_node):
/// its metadata's node ids remapped, references to nodes not copied dropped and listed, and the
/// source named in metadata.forked_from. Returns false when the source row is gone.
bool copy_chain_node(Store& store, const std::string& old_id, const std::string& new_id, const std::string& session,
                     const IdMap& map, const std::unordered_set<std::string>& new_ids, const std::string& source) {
  return store.copy_node(old_id, new_id, session, [&](Json& meta, std::optional<std::string>& pred) {
    remap_strings(meta, map, true);
    Json dropped = drop_dangling_refs(meta, new_ids);
    meta["forked_from"] = forked_from_record(source, old_id, meta);
    if (!dropped.empty()) meta["fork"] = Json{{"dropped_refs", std::move(dropped)}};
    if (pred) pred = map.at(*pred);
  });
}

/// The fork point: a chain node of the given session (when one is named). Throws for an unknown
/// node, another session's, or a view node.
Node fork_point(Store& store, const ForkOptions& opts) {
  auto at = store.node(opts.at, false);
  if (!at)
    throw Error(Exit::bad_input, "node.unknown", fmt::format("no node '{}'", opts.at), "list nodes with 'ctxfold log'");
  if (opts.session && *opts.session != at->session)
    throw Error(Exit::usage, "node.other_session",
                fmt::format("node '{}' belongs to session '{}', not '{}'", at->id, at->session, *opts.session));
  if (at->is_view())
    throw Error(Exit::usage, "fork.at_view", fmt::format("node '{}' is a {} node, not a chain node", at->id, at->kind),
                "fork at a message of the chain; a summary is copied when its coverage lies on the path");
  return std::move(*at);
}

/// The new session's name: --name (not empty, not taken), else a generated one.
std::string fork_name(Store& store, const ForkOptions& opts, const ForkResult& r) {
  if (opts.name) {
    if (opts.name->empty()) throw Error(Exit::usage, "usage.fork", "--name must not be empty");
    if (store.session(*opts.name))
      throw Error(Exit::bad_input, "session.exists", fmt::format("session '{}' already exists", *opts.name),
                  "choose another --name, or omit it for a generated one");
    return *opts.name;
  }
  return default_fork_name(store, r.source_session, r.at);
}

/// The path root→at, walked from at (ids and seqs only), and the set of its ids.
struct Path {
  std::vector<PathEntry> entries;
  std::unordered_set<std::string> ids;
};

Path walk_path(Store& store, const Node& at, const ForkResult& r) {
  Path path;
  const std::int64_t bound = store.node_count(r.source_session) + 1;
  std::optional<std::string> cur = at.id;
  while (cur) {
    if (!path.ids.insert(*cur).second || static_cast<std::int64_t>(path.entries.size()) >= bound)
      throw Error(Exit::bad_input, "fork.broken_chain",
                  fmt::format("predecessor cycle at node '{}' on the path to '{}'", *cur, r.at),
                  "run 'ctxfold verify-invariants'");
    std::optional<Store::NodeLink> link = store.link(*cur);
    if (!link)
      throw Error(Exit::bad_input, "fork.broken_chain", fmt::format("predecessor '{}' does not exist", *cur));
    if (link->session != r.source_session)
      throw Error(Exit::bad_input, "fork.broken_chain",
                  fmt::format("predecessor '{}' belongs to session '{}'", *cur, link->session),
                  "run 'ctxfold verify-invariants'");
    path.entries.push_back({link->seq, *cur});
    cur = std::move(link->predecessor);
  }
  return path;
}

/// The source's view nodes and which of them the fork copies.
struct Views {
  std::vector<Node> all;
  std::unordered_set<std::string> on_path;  // view nodes sitting on the chain itself (rare)
  std::vector<const Node*> copies;          // into `all`
};

/// The seq of the rolling summary the source renders at `at` (0 for none).
std::int64_t applied_summary_seq(Store& store, const ForkResult& r, const std::vector<Node>& views,
                                 std::optional<std::string>& applied) {
  {
    RenderOptions ro;
    ro.head = r.at;
    ro.notes = false;
    ro.encode_frames = false;
    applied = render_context(store, r.source_session, ro).summary;
  }
  std::int64_t applied_seq = 0;
  for (const Node& v : views)
    if (applied && v.id == *applied) applied_seq = v.seq;
  return applied_seq;
}

/// Which view nodes come along. The rolling summary in force at `at` is the one the source
/// renders there (`render --head AT`, docs/render.md "Rendering at a node"); it and the older
/// rolling summaries wholly on the path come along, newer ones are superseded at `at`.
void select_views(Store& store, const Node& at, const Path& path, ForkResult& r, Views& vs) {
  const auto& on_path = path.ids;
  vs.all = store.view_nodes(r.source_session, {}, kLatest, true);
  const std::vector<Node>& views = vs.all;
  std::optional<std::string> applied;
  const std::int64_t applied_seq = applied_summary_seq(store, r, views, applied);

  for (const Node& v : views)
    if (on_path.count(v.id)) vs.on_path.insert(v.id);
  std::unordered_set<std::string> copied_views;
  for (const Node& v : views) {
    if (on_path.count(v.id)) continue;  // a view node on the chain is copied as a path node
    std::size_t inside = 0;
    for (const auto& c : v.covers_ids)
      if (on_path.count(c) || copied_views.count(c)) ++inside;
    bool pred_ok = !v.predecessor || on_path.count(*v.predecessor) || copied_views.count(*v.predecessor);
    // Notes belong to their session: a fork starts without them and its first compaction writes
    // its own from all it evicts (docs/strategies.md "What a fork copies").
    if (v.kind == kind::kNotes) continue;
    if (v.covers_ids.empty()) {
      // A view node without coverage: it belongs to the fork when it hangs off the path at or
      // before the fork point.
      if (v.predecessor && pred_ok && v.seq <= at.seq) {
        copied_views.insert(v.id);
        vs.copies.push_back(&v);
      }
      continue;
    }
    if (inside == 0) continue;  // another branch's summary: not part of this path at all
    if (inside < v.covers_ids.size() || !pred_ok) {
      r.omitted_summaries.push_back({v.id, "crosses_fork_point"});
      continue;
    }
    if (is_covering_rolling_summary(v) && !(applied && v.seq <= applied_seq)) {
      r.omitted_summaries.push_back({v.id, "superseded"});
      continue;
    }
    copied_views.insert(v.id);
    vs.copies.push_back(&v);
  }
}

/// The id map, complete before anything is written (metadata may name later nodes); throws when
/// a new id is taken.
void build_id_map(Store& store, const std::string& session, const Path& path, const Views& vs, IdMap& map,
                  std::unordered_set<std::string>& new_ids) {
  for (const auto& p : path.entries) map.emplace(p.id, fork_node_id(session, p.id));
  for (const Node* v : vs.copies) map.emplace(v->id, fork_node_id(session, v->id));
  for (const auto& [old_id, new_id] : map) {
    if (store.has_node(new_id))
      throw Error(Exit::bad_input, "fork.id_conflict",
                  fmt::format("node id '{}' for the copy of '{}' is already taken", new_id, old_id),
                  "choose another --name");
    new_ids.insert(new_id);
  }
}

void create_fork_session(Store& store, const ForkResult& r) {
  SessionInfo s;
  s.id = r.session;
  s.kind = "fork";
  s.parent_session = r.source_session;
  s.parent_node = r.at;
  s.format = "fork";
  s.metadata = Json{{"forked_from", r.source_session}, {"at", r.at}, {"source_boundary_seq", r.source_boundary_seq}};
  store.create_session(s);
}

/// One node to copy, in the source's seq order.
struct Item {
  std::int64_t seq;
  const std::string* id;
  const Node* view;
};

/// Copies a view node (or a view node on the chain, loaded with its covers) under its new id:
/// metadata remapped as for chain nodes, covers and predecessor remapped.
void copy_view_node(Store& store, const Item& it, const IdMap& map, const std::unordered_set<std::string>& new_ids,
                    ForkResult& r) {
  Node n;
  if (it.view) {
    n = *it.view;
  } else {
    auto loaded = store.node(*it.id, true);
    if (!loaded) throw Error(Exit::internal, "fork.vanished", fmt::format("node '{}' vanished", *it.id));
    n = std::move(*loaded);
  }
  const std::string old_id = n.id;
  n.metadata.erase("covers");
  remap_strings(n.metadata, map, true);
  Json dropped = drop_dangling_refs(n.metadata, new_ids);
  n.metadata["forked_from"] = forked_from_record(r.source_session, old_id, n.metadata);
  if (!dropped.empty()) n.metadata["fork"] = Json{{"dropped_refs", std::move(dropped)}};
  n.id = map.at(old_id);
  n.session = r.session;
  if (n.predecessor) n.predecessor = map.at(*n.predecessor);
  for (auto& c : n.covers_ids) c = map.at(c);
  n.seq = 0;
  if (store.append(n) != AppendResult::added)
    throw Error(Exit::bad_input, "fork.id_conflict", fmt::format("node id '{}' is already taken", n.id));
  ++r.copied_nodes;
  if (it.view) r.copied_summaries.emplace_back(old_id, n.id);
}

/// Every copy in the source's seq order.
void write_copies(Store& store, const Path& path, const Views& vs, const IdMap& map,
                  const std::unordered_set<std::string>& new_ids, ForkResult& r) {
  std::vector<Item> items;
  items.reserve(path.entries.size() + vs.copies.size());
  for (const auto& p : path.entries) items.push_back({p.seq, &p.id, nullptr});
  for (const Node* v : vs.copies) items.push_back({v->seq, &v->id, v});
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.seq < b.seq; });

  for (const Item& it : items) {
    if (!it.view && !vs.on_path.count(*it.id)) {
      // A chain node: copied as text (the common, bulk case).
      if (!copy_chain_node(store, *it.id, map.at(*it.id), r.session, map, new_ids, r.source_session))
        throw Error(Exit::internal, "fork.vanished", fmt::format("node '{}' vanished", *it.id));
      ++r.copied_nodes;
      continue;
    }
    copy_view_node(store, it, map, new_ids, r);
  }
}

}  // namespace

ForkResult fork_session(Store& store, const ForkOptions& opts) {
  Txn txn(store.db());
  ForkResult r;
  r.at = opts.at;
  const Node at = fork_point(store, opts);
  r.source_session = at.session;
  r.source_boundary_seq = store.max_seq();
  r.session = fork_name(store, opts, r);

  // 1. The path root→at, walked from at (ids and seqs only).
  const Path path = walk_path(store, at, r);
  // 2. Which view nodes come along.
  Views vs;
  select_views(store, at, path, r, vs);
  // 3. The id map, complete before anything is written (metadata may name later nodes).
  IdMap map;
  std::unordered_set<std::string> new_ids;
  build_id_map(store, r.session, path, vs, map, new_ids);
  // 4. Write: the session, then every copy in the source's seq order, then HEAD.
  create_fork_session(store, r);
  // The fork's own strategy is its source's, so a render without --strategy projects the fork as
  // `render --head AT` projects the source (docs/strategies.md "What a fork copies").
  record_session_strategy(store, r.session, session_strategy(store, r.source_session));
  write_copies(store, path, vs, map, new_ids, r);
  r.head = map.at(r.at);
  store.move_head(r.session, r.head, "fork");
  txn.commit();
  return r;
}

Json fork_to_json(const ForkResult& r) {
  Json copied = Json::array();
  for (const auto& [from, id] : r.copied_summaries) copied.push_back(Json{{"from", from}, {"id", id}});
  Json omitted = Json::array();
  for (const auto& o : r.omitted_summaries) omitted.push_back(Json{{"id", o.id}, {"reason", o.reason}});
  return Json{{"schema", "ctxfold.fork/1"},
              {"source_session", r.source_session},
              {"session", r.session},
              {"at", r.at},
              {"head", r.head},
              {"source_boundary_seq", r.source_boundary_seq},
              {"copied_nodes", r.copied_nodes},
              {"copied_summaries", std::move(copied)},
              {"omitted_summaries", std::move(omitted)}};
}

RewindResult rewind_head(Store& store, const std::string& session, const RewindOptions& opts) {
  Txn txn(store.db());
  RewindResult r;
  r.session = session;
  auto head = store.head(session);
  if (!head)
    throw Error(Exit::bad_input, "session.no_head", fmt::format("session '{}' has no HEAD", session));
  r.previous = *head;
  const std::int64_t bound = store.node_count(session) + 1;
  if (opts.to) {
    auto target = store.node(*opts.to, false);
    if (!target) throw Error(Exit::bad_input, "node.unknown", fmt::format("no node '{}'", *opts.to));
    if (target->session != session)
      throw Error(Exit::bad_input, "node.other_session",
                  fmt::format("node '{}' belongs to session '{}', not '{}'", target->id, target->session, session));
    std::optional<std::string> cur = *head;
    std::int64_t walked = 0, messages = 0;
    bool found = false;
    while (cur && walked++ <= bound) {
      if (*cur == target->id) {
        found = true;
        break;
      }
      auto n = store.node(*cur, false);
      if (!n) break;
      if (n->is_model_input()) ++messages;
      cur = n->predecessor;
    }
    if (!found)
      throw Error(Exit::bad_input, "rewind.not_on_spine",
                  fmt::format("node '{}' is not on HEAD's spine (HEAD is '{}')", target->id, *head),
                  "rewind moves back along HEAD's own chain; use 'ctxfold checkout ID' to switch branches");
    r.head = target->id;
    r.steps = messages;
  } else {
    if (opts.steps < 1) throw Error(Exit::usage, "rewind.steps", "rewind takes a positive number of messages");
    std::optional<std::string> cur = *head;
    std::int64_t passed = 0, walked = 0;
    std::optional<std::string> landed;
    while (cur && walked++ <= bound) {
      auto n = store.node(*cur, false);
      if (!n) break;
      if (n->is_model_input()) {
        if (passed == opts.steps) {
          landed = n->id;
          break;
        }
        ++passed;
      }
      cur = n->predecessor;
    }
    if (!landed)
      throw Error(Exit::bad_input, "rewind.out_of_range",
                  fmt::format("HEAD's spine has fewer than {} messages before it", opts.steps + 1),
                  "rewind fewer messages, or use --to ID");
    r.head = *landed;
    r.steps = opts.steps;
  }
  r.moved = r.head != r.previous;
  if (r.moved) store.move_head(session, r.head, "rewind");
  txn.commit();
  return r;
}

Json rewind_to_json(const RewindResult& r) {
  return Json{{"schema", "ctxfold.rewind/1"}, {"session", r.session}, {"head", r.head},
              {"previous", r.previous}, {"moved", r.moved},       {"steps", r.steps}};
}

}  // namespace ctxfold
