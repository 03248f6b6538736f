// The view choice and the spine walk of render_context: HEAD, the summary, folds and archives a view
// policy substitutes, and the walk from HEAD to the root that puts each in place of the segment it
// covers (docs/render.md, docs/model.md "How a render uses a summary").
#include "render/render_parts.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "model/quoted_id.hpp"
#include "render/partial.hpp"
#include "render/token_figure.hpp"
#include "tokens/estimate.hpp"
#include "tokens/hidden.hpp"
#include "util/error.hpp"

namespace ctxfold::render_detail {
namespace {

/// The segment `summary` covers: its metadata.covers, else its covers_ids; nullopt when it names none.
std::optional<Coverage> coverage_of(const Node& summary) {
  auto it = summary.metadata.find("covers");
  if (it != summary.metadata.end() && it->is_object()) {
    Coverage c{json_str(*it, "first"), json_str(*it, "last"), 0};
    if (auto cnt = it->find("count"); cnt != it->end() && cnt->is_number_integer()) c.count = cnt->get<std::int64_t>();
    if (!c.first.empty() && !c.last.empty()) return c;
  }
  if (!summary.covers_ids.empty())
    return Coverage{summary.covers_ids.front(), summary.covers_ids.back(),
                    static_cast<std::int64_t>(summary.covers_ids.size())};
  return std::nullopt;
}

/// RenderOptions::lean_metadata: the metadata keys no render step reads are dropped, "source" is
/// cut to the "format" the estimator reads (tokens/estimate.hpp provider_of).
void lean_metadata(Json& metadata) {
  if (!metadata.is_object()) return;
  metadata.erase("tool_use_result");
  metadata.erase("raw");
  auto src = metadata.find("source");
  if (src == metadata.end() || !src->is_object()) return;
  Json kept = Json::object();
  if (auto f = src->find("format"); f != src->end()) kept["format"] = *f;
  *src = std::move(kept);
}

}  // namespace

void FigureState::credit(std::int64_t slot) {
  if (slot >= 0) ++figs_rev[static_cast<std::size_t>(slot)].edits;
  else ++full_counts[static_cast<std::size_t>(-slot - 1)];
}

void FigureState::count_edits(const Json& content, std::int64_t slot) {
  if (!edits) return;
  // Forward, a result counts when an edit call with its id came before it (an earlier item, or an
  // earlier block of its own). Newest first: this item's edit calls credit the newer results
  // waiting for them; its results matched by its own earlier calls count now, the others wait.
  std::vector<std::string> calls;  // this item's edit calls so far
  std::vector<std::string> waiting;
  for (const auto& b : content) {
    if (!b.is_object()) continue;
    const std::string type = json_str(b, "type");
    if (type == "tool_use") {
      if (!is_edit_tool(json_str(b, "name"))) continue;
      std::string id = json_str(b, "id");
      if (auto it = pending.find(id); it != pending.end()) {
        for (std::int64_t s : it->second) credit(s);
        pending.erase(it);
      }
      calls.push_back(std::move(id));
    } else if (type == "tool_result") {
      std::string id = json_str(b, "tool_use_id");
      if (std::find(calls.begin(), calls.end(), id) != calls.end()) credit(slot);
      else waiting.push_back(std::move(id));
    }
  }
  for (auto& id : waiting) pending[std::move(id)].push_back(slot);
}

/// HEAD of the render: --head (checked against the session and the boundary), else the session's.
void resolve_head(Store& store, const std::string& session, const RenderOptions& opts, Rendered& r) {
  if (opts.head) {
    auto n = store.node(*opts.head, false);
    if (!n || n->seq > opts.as_of)
      throw Error(Exit::bad_input, "node.unknown", fmt::format("no node '{}'", *opts.head));
    if (n->session != session)
      throw Error(Exit::bad_input, "node.unknown",
                  fmt::format("node '{}' belongs to session '{}', not '{}'", *opts.head, n->session, session),
                  "pass --session with the node's session");
    r.head = *opts.head;
  } else {
    auto h = store.head(session, opts.as_of);
    if (!h)
      throw Error(Exit::bad_input, "render.no_head", fmt::format("session '{}' has no HEAD", session),
                  "import or append nodes first, or pass --head ID");
    r.head = *h;
  }
}

/// The summary, folds and archives the policy substitutes (docs/render.md "View policies").
Views choose_views(Store& store, const std::string& session, const RenderOptions& opts, const ViewPolicy& view) {
  Views v;
  // snapcompact reads the other strategies' stored folds as text ahead of its frames:
  // its walk is rolling's, with the archive folds drawn as frames afterwards. lcm starts from the
  // active rolling (or imported) summary as its covered prefix; when one of its own folds
  // overlaps that summary's coverage (a rolling summary that read the lcm folds), the newest older
  // summary that none overlaps, else none (below): its saved nodes decide (switching
  // back to lcm uses its saved nodes; it never summarizes the rolling summary).
  if (view.summary) {
    v.summary = store.active_summary(session, opts.as_of);
    if (v.summary) v.cov = coverage_of(*v.summary);
    if (v.summary && !v.cov) v.summary.reset();
  }

  if (view.archives) {
    // A snapcompact archive is a stored fold: rolling reads it as text (docs/model.md "View nodes"),
    // snapcompact as frames.
    for (auto& f : store.view_ranges(session, kind::kArchive, StrategyLabel::snapcompact, opts.as_of)) {
      v.archive_folds.insert(f.id);
      v.folds_by_last[f.last].push_back(std::move(f));
    }
  }
  if (view.folds) {
    for (StrategyLabel label : {StrategyLabel::lcm, StrategyLabel::region})
      for (auto& f : store.summary_ranges(session, label, opts.as_of)) {
        if (label == StrategyLabel::region) v.region_ids.insert(f.id);
        v.folds_by_last[f.last].push_back(std::move(f));
      }
    // lcm: the newest rolling/imported summary none of its own folds overlaps, the one its folds
    // were built after (a later rolling summary that read the lcm folds is not lcm's prefix).
    for (int tries = 0; view.lcm_prefix && v.summary; ++tries) {
      bool overlaps = false;
      for (const auto& [last, ranges] : v.folds_by_last) {
        for (const auto& f : ranges)
          if (!v.region_ids.count(f.id) &&
              (store.covers_contains(v.summary->seq, f.first) || store.covers_contains(f.seq, v.cov->first))) {
            overlaps = true;
            break;
          }
        if (overlaps) break;
      }
      if (!overlaps) break;
      const std::int64_t older = v.summary->seq - 1;
      v.summary.reset();
      v.cov.reset();
      if (tries >= 16) break;
      v.summary = store.active_summary(session, older);
      if (v.summary) v.cov = coverage_of(*v.summary);
      if (v.summary && !v.cov) v.summary.reset();
    }
    for (auto& [last, ranges] : v.folds_by_last)
      std::sort(ranges.begin(), ranges.end(), [](const Store::SummaryRange& a, const Store::SummaryRange& b) {
        return a.count != b.count ? a.count > b.count : a.seq > b.seq;
      });
  }

  // render --head X (docs/render.md "Rendering at a node"): X's spine may hold an older rolling or
  // imported summary than the session's newest (X sits between two compactions, or on a branch the
  // newest does not reach). The first summary the walk meets, on the chain or at its last covered
  // node, is the one in force at X; the newest, when met first, wins as before.
  if (opts.head && view.head_summary)
    for (auto& f : store.summary_ranges(session, StrategyLabel::rolling, opts.as_of)) {
      if (v.summary && f.id == v.summary->id) continue;
      v.alt_by_last[f.last] = f;  // oldest first: a newer summary ending at the same node replaces it
      v.alt_by_id[f.id] = std::move(f);
    }

  return v;
}

namespace {

/// walk_spine's state: the items and folds met so far (newest first), where the walk is, and
/// how far the summary in force has been taken in.
struct SpineWalk {
  Store& store;
  const RenderOptions& opts;
  Views& v;
  Rendered& r;
  const std::int64_t limit;
  std::vector<RenderedFold> folds_rev;
  std::vector<Node> rev;
  FigureState* figs = nullptr;  ///< render_figures
  std::unordered_set<std::int64_t> visited;  ///< seqs of the nodes walked
  bool summary_admitted = false, summary_jumped = false;
  std::optional<std::string> cur;

  SpineWalk(Store& s, const RenderOptions& o, Views& views, Rendered& rendered)
      : store(s), opts(o), v(views), r(rendered), limit(s.max_seq() + 1), cur(rendered.head) {}

  std::optional<Node> enter(const std::string& id);
  void adopt_older_summary(const Node& n);
  bool jump_summary(const Node& n);
  bool apply_fold(const Node& n);
  RenderedFold fold_of(const Store::SummaryRange& f, const Node& fold, const Node& first,
                       const Node& n) const;
  void keep(Node n);
  void push_full(Node n);
  void push_figure(Node& n);
};

/// A node kept whole in r.items (render_figures: its edit results are counted on the way).
void SpineWalk::push_full(Node n) {
  if (figs && n.content.is_array()) {
    figs->full_ids.push_back(n.id);
    figs->full_counts.push_back(0);
    figs->count_edits(n.content, -static_cast<std::int64_t>(figs->full_ids.size()));
  }
  rev.push_back(std::move(n));
}

/// render_figures: a plain item's figure, and its run's placeholder in rev.
void SpineWalk::push_figure(Node& n) {
  if (opts.max_row_bytes > 0) cap_row(n, opts.max_row_bytes, r.truncated);
  FigureState& fs = *figs;
  ItemFigure f = fs.figure(n);  // n is a message (keep): kAssistant as for an item kept whole
  std::string mid = json_str(n.metadata, "message_id");
  if (mid.empty()) f.flags |= ItemFigure::kNoMessageId;
  if (rev.empty() || !rev.back().id.empty()) {  // a new run: its placeholder; its newest message_id
    Node run;
    run.tokens = 0;
    run.metadata["newest_mid"] = mid;
    rev.push_back(std::move(run));
  } else if (fs.older_mid == mid) {
    fs.figs_rev.back().flags |= ItemFigure::kSameMessageId;  // the newer neighbour of this run
  }
  rev.back().metadata["oldest_mid"] = mid;
  ++rev.back().tokens;
  fs.older_mid = std::move(mid);
  fs.figs_rev.push_back(f);
  if (n.content.is_array()) fs.count_edits(n.content, static_cast<std::int64_t>(fs.figs_rev.size()) - 1);
}

/// The node `id` the walk steps onto, or nullopt (with a kPartialHistory warning) when the walk
/// must stop: a cycle, a walk longer than the database, a missing predecessor.
std::optional<Node> SpineWalk::enter(const std::string& id) {
  // Visited nodes are kept by seq (unique per database): 8 bytes a node, not its id.
  auto n = store.node(id, false);
  const bool exists = n && n->seq <= opts.as_of;
  if (exists && !visited.insert(n->seq).second) {
    r.warnings.push_back(
        fmt::format("{}predecessor cycle at node '{}': the walk stopped there", kPartialHistory, id));
    return std::nullopt;
  }
  if (r.spine_length >= limit) {
    r.warnings.push_back(fmt::format("{}the walk exceeded the database's node count and stopped", kPartialHistory));
    return std::nullopt;
  }
  if (!exists) {
    r.warnings.push_back(
        fmt::format("{}predecessor '{}' does not exist: the walk stopped there", kPartialHistory, id));
    return std::nullopt;
  }
  if (opts.lean_metadata) lean_metadata(n->metadata);
  return n;
}

/// render --head: the first older summary met on the chain or at its last covered node, before
/// the newest is met, becomes the summary in force (Views::alt_by_id, alt_by_last).
void SpineWalk::adopt_older_summary(const Node& n) {
  if (!v.alt_by_id.empty() && !summary_admitted && !summary_jumped && !(v.summary && n.id == v.cov->last) &&
      !(v.summary && n.id == v.summary->id)) {
    const Store::SummaryRange* alt = nullptr;
    if (auto a = v.alt_by_id.find(n.id); a != v.alt_by_id.end()) alt = &a->second;
    else if (auto b = v.alt_by_last.find(n.id); b != v.alt_by_last.end()) alt = &b->second;
    if (alt)
      if (auto s = store.node(alt->id, false)) {
        v.cov = Coverage{alt->first, alt->last, alt->count};
        v.summary = std::move(s);
        v.alt_by_id.clear();
      }
  }
}

/// At the summary's last covered node: takes the summary in and jumps to its splice point
/// (true), or drops the summary with a warning when it does not splice there (false).
bool SpineWalk::jump_summary(const Node& n) {
  if (v.summary && !summary_jumped && n.id == v.cov->last) {
    // The covered segment is on the spine; jump to its splice point (docs/model.md "How a render
    // uses a summary").
    std::optional<Node> first =
        v.cov->first == n.id ? std::optional<Node>(n) : store.node(v.cov->first, false);
    bool spliced = first && first->seq <= opts.as_of &&
                   (summary_admitted || first->predecessor == v.summary->predecessor);
    if (spliced) {
      if (!summary_admitted) push_full(*v.summary);
      summary_admitted = summary_jumped = true;
      r.summary = v.summary->id;
      cur = first->predecessor;
      return true;
    }
    r.warnings.push_back(fmt::format(
        "summary '{}' was not applied: its predecessor is not the predecessor of its first covered node '{}'",
        v.summary->id, v.cov->first));
    v.summary.reset();
  }
  return false;
}

/// At a fold's last covered node: takes in the largest fold that splices there and jumps to its
/// splice point (true); false when none applies.
bool SpineWalk::apply_fold(const Node& n) {
  auto fit = v.folds_by_last.find(n.id);
  if (fit == v.folds_by_last.end()) return false;
  for (const auto& f : fit->second) {
    std::optional<Node> first = f.first == n.id ? std::optional<Node>(n) : store.node(f.first, false);
    if (!first || first->seq > opts.as_of || first->predecessor != f.predecessor) {
      r.warnings.push_back(fmt::format(
          "{} '{}' was not applied: its predecessor is not the predecessor of its first covered node '{}'",
          v.archive_folds.count(f.id) ? "snapcompact archive" : v.region_ids.count(f.id) ? "region summary" : "lcm summary",
          f.id, f.first));
      continue;
    }
    // Under rolling, a fold must not swallow the rolling summary's segment (or the summary
    // where it sits on the chain): the rolling summary already stands for that history.
    if (v.summary && !summary_jumped &&
        (store.covers_contains(f.seq, v.cov->last) || store.covers_contains(f.seq, v.summary->id)))
      continue;
    auto fold = store.node(f.id, false);
    if (!fold) continue;
    RenderedFold rf = fold_of(f, *fold, *first, n);
    Json content = Json::array({Json{{"type", "text"}, {"text", fold_header(rf)}}});
    if (fold->content.is_array())
      for (auto& b : fold->content) content.push_back(std::move(b));
    fold->content = std::move(content);
    push_full(std::move(*fold));
    folds_rev.push_back(std::move(rf));
    cur = first->predecessor;
    return true;
  }
  return false;
}

/// The RenderedFold of fold node `fold` (range f) spliced from `first` to `n`.
RenderedFold SpineWalk::fold_of(const Store::SummaryRange& f, const Node& fold, const Node& first,
                                const Node& n) const {
  RenderedFold rf;
  rf.id = f.id;
  if (v.archive_folds.count(f.id)) rf.kind = "archive";
  if (v.region_ids.count(f.id)) rf.kind = label_name(StrategyLabel::region);
  if (auto d = fold.metadata.find("depth"); d != fold.metadata.end() && d->is_number_integer())
    rf.depth = d->get<std::int64_t>();
  rf.first = f.first;
  rf.last = f.last;
  rf.first_seq = first.seq;
  rf.last_seq = n.seq;
  rf.count = f.count;
  rf.quoted = quoted_id(fold);
  rf.quoted_first = quoted_id(first);
  rf.quoted_last = quoted_id(n);
  return rf;
}

/// A node no view stands for: kept when the model reads it (an imported summary on the chain
/// as the summary in force); the walk goes on at its predecessor.
void SpineWalk::keep(Node n) {
  std::optional<std::string> next = n.predecessor;
  if (v.summary && !summary_admitted && n.id == v.summary->id) {
    push_full(*v.summary);  // an imported summary sitting on the chain
    summary_admitted = true;
    r.summary = v.summary->id;
  } else if (n.is_model_input()) {
    const bool plain = figs && n.role != role::kSystem && !n.metadata.contains("system_prompt") &&
                       !n.metadata.contains("system_blocks");
    if (plain) push_figure(n);
    else push_full(std::move(n));
  }
  cur = std::move(next);
}

}  // namespace

/// Walks HEAD's spine to the root, newest first, substituting the views whose covered segment it
/// meets (docs/model.md "How a render uses a summary"); fills r.items, r.folds, r.summary,
/// r.spine_length and the walk's warnings. Returns the seq of the head node (the system prompt's
/// bound under --head). A cycle or a dangling predecessor ends the walk.
std::int64_t walk_spine(Store& store, const RenderOptions& opts, Views& v, Rendered& r, FigureState* figs) {
  SpineWalk w(store, opts, v, r);
  w.figs = figs;
  std::int64_t head_seq = opts.as_of;
  while (w.cur) {
    auto n = w.enter(*w.cur);
    if (!n) break;
    ++r.spine_length;
    if (n->id == r.head) head_seq = n->seq;
    w.adopt_older_summary(*n);
    if (w.jump_summary(*n)) continue;
    if (w.apply_fold(*n)) continue;
    w.keep(std::move(*n));
  }
  r.items.assign(std::make_move_iterator(w.rev.rbegin()), std::make_move_iterator(w.rev.rend()));
  r.folds.assign(std::make_move_iterator(w.folds_rev.rbegin()), std::make_move_iterator(w.folds_rev.rend()));
  return head_seq;
}

}  // namespace ctxfold::render_detail
