#include "render/render.hpp"
#include "render/recap.hpp"
#include "render/view_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "render/blocks.hpp"
#include "render/pairing.hpp"
#include "render/partial.hpp"
#include "snapcompact/archive.hpp"
#include "tokens/estimate.hpp"
#include "render/token_figure.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

using render_detail::text_block;
using render_detail::text_bytes;

// ---------------------------------------------------------------- the spine walk

struct Coverage {
  std::string first;
  std::string last;
  std::int64_t count = 0;
};

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

/// The system message render_context puts first for a prompt it did not read off the spine.
Node system_node(const std::string& id, const std::string& session, Json content) {
  Node sys;
  sys.id = id;
  sys.session = session;
  sys.kind = kind::kMessage;
  sys.role = role::kSystem;
  sys.content = std::move(content);
  return sys;
}

/// The system prompt goes first (docs/render.md "The system prompt"): system-role messages that
/// lead the spine are the transcript's own; else --system; else the newest system_prompt event
/// recorded at or before `bound` (the head node's seq), rendered as a system message.
void apply_system_prompt(Store& store, const std::string& session, const RenderOptions& opts, std::int64_t bound,
                         Rendered& r) {
  std::size_t lead = 0;
  while (lead < r.items.size() && r.items[lead].is_model_input() && r.items[lead].role == role::kSystem) ++lead;
  if (opts.system_text) {
    Node sys = system_node(kSystemOptionId, session, Json::array({text_block(*opts.system_text)}));
    r.items.erase(r.items.begin(), r.items.begin() + static_cast<std::ptrdiff_t>(lead));
    r.system = SystemPromptInfo{true, "option", std::nullopt, static_cast<std::int64_t>(opts.system_text->size()), -1};
    r.items.insert(r.items.begin(), std::move(sys));
    return;
  }
  if (lead > 0) {
    std::int64_t chars = 0;
    for (std::size_t i = 0; i < lead; ++i) chars += text_bytes(r.items[i].content);
    r.system = SystemPromptInfo{true, "transcript", std::nullopt, chars, -1};
    return;
  }
  auto ev = store.system_prompt(session, bound);
  if (ev) {
    Node sys = std::move(*ev);
    sys.kind = kind::kMessage;
    sys.role = role::kSystem;
    SystemPromptInfo info{true, "record", sys.id, text_bytes(sys.content), -1};
    if (auto t = sys.metadata.find("tools"); t != sys.metadata.end() && t->is_array())
      info.tools = static_cast<std::int64_t>(t->size());
    r.system = std::move(info);
    r.items.insert(r.items.begin(), std::move(sys));
    return;
  }
  // An importer that read the prompt from the client's request records keeps it in metadata:
  // on the nodes where it changed (the nearest rendered one before HEAD is in force), else on
  // the session (docs/render.md "The system prompt").
  const Json* meta = nullptr;
  std::optional<std::string> from;
  for (std::size_t i = r.items.size(); i-- > 0;)
    if (r.items[i].metadata.contains("system_prompt") || r.items[i].metadata.contains("system_blocks")) {
      meta = &r.items[i].metadata;
      from = r.items[i].id;
      break;
    }
  std::optional<SessionInfo> info_row;
  if (!meta) {
    info_row = store.session(session);
    if (info_row && (info_row->metadata.contains("system_prompt") || info_row->metadata.contains("system_blocks")))
      meta = &info_row->metadata;
  }
  if (!meta) return;
  Json content = Json::array();
  if (auto b = meta->find("system_blocks"); b != meta->end() && b->is_array()) {
    for (const auto& blk : *b) {
      if (blk.is_string()) content.push_back(Json{{"type", "text"}, {"text", blk}});
      else if (blk.is_object() && json_str(blk, "type") == "text") content.push_back(Json{{"type", "text"}, {"text", json_str(blk, "text")}});
    }
  }
  if (content.empty())
    if (auto t = meta->find("system_prompt"); t != meta->end() && t->is_string() && !t->get_ref<const std::string&>().empty())
      content.push_back(Json{{"type", "text"}, {"text", *t}});
  if (content.empty()) return;
  Node sys = system_node(from ? *from + "#system" : session + "#system", session, std::move(content));
  SystemPromptInfo info{true, from ? "node" : "session", from, text_bytes(sys.content), -1};
  if (auto t = meta->find("tools"); t != meta->end() && t->is_array()) info.tools = static_cast<std::int64_t>(t->size());
  r.system = std::move(info);
  r.items.insert(r.items.begin(), std::move(sys));
}

}  // namespace

using namespace render_detail;

namespace {

/// The stored views a render may substitute under one view policy, chosen before the walk.
struct Views {
  std::optional<Node> summary;   ///< the rolling or imported summary in force
  std::optional<Coverage> cov;   ///< its coverage
  /// lcm and region folds and snapcompact archives by their last covered id, largest first.
  std::unordered_map<std::string, std::vector<Store::SummaryRange>> folds_by_last;
  std::unordered_set<std::string> archive_folds;  ///< snapcompact archives among the folds
  std::unordered_set<std::string> region_ids;     ///< region summaries among the folds
  /// render --head: the older rolling summaries, by last covered id and by id.
  std::unordered_map<std::string, Store::SummaryRange> alt_by_last, alt_by_id;
};

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
  std::unordered_set<std::string> visited;
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
};

/// The node `id` the walk steps onto, or nullopt (with a kPartialHistory warning) when the walk
/// must stop: a cycle, a walk longer than the database, a missing predecessor.
std::optional<Node> SpineWalk::enter(const std::string& id) {
  if (!visited.insert(id).second) {
    r.warnings.push_back(
        fmt::format("{}predecessor cycle at node '{}': the walk stopped there", kPartialHistory, id));
    return std::nullopt;
  }
  if (r.spine_length >= limit) {
    r.warnings.push_back(fmt::format("{}the walk exceeded the database's node count and stopped", kPartialHistory));
    return std::nullopt;
  }
  auto n = store.node(id, false);
  if (!n || n->seq > opts.as_of) {
    r.warnings.push_back(
        fmt::format("{}predecessor '{}' does not exist: the walk stopped there", kPartialHistory, id));
    return std::nullopt;
  }
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
      if (!summary_admitted) rev.push_back(*v.summary);
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
    rev.push_back(std::move(*fold));
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
  return rf;
}

/// A node no view stands for: kept when the model reads it (an imported summary on the chain
/// as the summary in force); the walk goes on at its predecessor.
void SpineWalk::keep(Node n) {
  std::optional<std::string> next = n.predecessor;
  if (v.summary && !summary_admitted && n.id == v.summary->id) {
    rev.push_back(*v.summary);  // an imported summary sitting on the chain
    summary_admitted = true;
    r.summary = v.summary->id;
  } else if (n.is_model_input()) {
    rev.push_back(std::move(n));
  }
  cur = std::move(next);
}

/// Walks HEAD's spine to the root, newest first, substituting the views whose covered segment it
/// meets (docs/model.md "How a render uses a summary"); fills r.items, r.folds, r.summary,
/// r.spine_length and the walk's warnings. Returns the seq of the head node (the system prompt's
/// bound under --head). A cycle or a dangling predecessor ends the walk.
std::int64_t walk_spine(Store& store, const RenderOptions& opts, Views& v, Rendered& r) {
  SpineWalk w(store, opts, v, r);
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

/// An archive stands in the request as its frames (docs/strategies.md "snapcompact"): a caption,
/// then one PNG image block per frame the budget keeps. r.frames describes the newest archive's.
void draw_frames(Store& store, const RenderOptions& opts, const std::unordered_set<std::string>& archive_folds,
                 Rendered& r) {
  for (const auto& f : r.folds)
    if (f.kind == "archive") r.archive = f.id;
  for (Node& n : r.items)
    if (archive_folds.count(n.id)) {
      if (n.content.is_array() && !n.content.empty()) n.content.erase(n.content.begin());  // the fold_header
      SnapSettings ss;
      const Json meta = n.metadata.value("snapcompact", Json::object());
      if (auto w = meta.find("window"); w != meta.end() && w->is_number_integer()) ss.window = w->get<std::int64_t>();
      if (auto a = meta.find("archive_percent"); a != meta.end() && a->is_number_integer()) ss.archive_percent = a->get<int>();
      if (auto m = meta.find("max_frames"); m != meta.end() && m->is_number_integer()) ss.max_frames = m->get<int>();
      if (opts.window) ss.window = opts.window;
      if (opts.archive_percent) ss.archive_percent = *opts.archive_percent;
      if (opts.max_frames) ss.max_frames = opts.max_frames;
      FrameSet fs = archive_frames(&store, n, opts.model, ss, opts.encode_frames);
      n.content = std::move(fs.content);
      if (r.archive && n.id == *r.archive) r.frames = fs.to_json();
    }
}

/// The session's notes start the request, after the system run, under kNotesHeader.
void insert_notes(Store& store, const std::string& session, const RenderOptions& opts, Rendered& r) {
  auto notes = store.latest_of_kind(session, kind::kNotes, opts.as_of);
  if (!notes) return;
  std::size_t at = 0;
  while (at < r.items.size() && r.items[at].is_model_input() && r.items[at].role == role::kSystem) ++at;
  Json content = Json::array({Json{{"type", "text"}, {"text", kNotesHeader}}});
  for (auto& b : notes->content) content.push_back(std::move(b));
  notes->content = std::move(content);
  r.notes = notes->id;
  r.items.insert(r.items.begin() + static_cast<std::ptrdiff_t>(at), std::move(*notes));
}

/// The reads, rolling's recap after a ctxfold summary, the per-item estimates and the sections
/// (system, prefix, summary, recap, folds or frames, notes, tail) with their estimates.
void assign_sections(Store& store, const ViewPolicy& view, const std::unordered_set<std::string>& archive_folds,
                     Rendered& r) {
  const bool snap = view.frames;
  // The rolling projection (docs/strategies.md "rolling"): a bounded recap of the covered user
  // messages, quoted verbatim, follows the summary. It travels in the summary's own user message
  // (its blocks appended at render time, never stored), so the message list keeps one item per read
  // id; the "recap" section names the quoted ids.
  std::size_t summary_pos = r.items.size();
  for (std::size_t i = 0; i < r.items.size(); ++i) {
    if (i == 0 && r.system.known && r.system.source != "record" && r.system.source != "transcript") continue;
    r.reads.push_back(r.items[i].id);
    if (r.summary && r.items[i].id == *r.summary) summary_pos = i;
  }
  std::optional<Recap> recap;
  // An imported summary is the agent's own compaction: the request holds what the client sent
  // after it, and no recap the client never sent (docs/render.md "Imported sessions").
  if (summary_pos < r.items.size() && view.recap && json_str(r.items[summary_pos].metadata, "origin") != "import") {
    recap = rolling_recap(store, r.items[summary_pos]);
    if (recap && recap->node.content.is_array())
      for (const auto& b : recap->node.content) r.items[summary_pos].content.push_back(b);
  }
  // Per-item estimates; thinking of turns before the latest user turn counts only where the
  // provider resends it (NodeEstimate::prior_turn_thinking).
  r.item_tokens.resize(r.items.size());
  r.item_prior_thinking.resize(r.items.size());
  std::size_t last_turn = 0;
  for (std::size_t i = 0; i < r.items.size(); ++i) {
    NodeEstimate e = estimate_node(r.items[i]);
    r.item_tokens[i] = e.total;
    r.item_prior_thinking[i] = e.prior_turn_thinking;
    if (starts_user_turn(r.items[i])) last_turn = i;
  }
  auto add_section = [&](const char* kind_name, std::size_t from, std::size_t to) {
    if (from >= to) return;
    Section s{kind_name, {}, 0};
    for (std::size_t i = from; i < to; ++i) {
      s.ids.push_back(r.items[i].id);
      s.estimated_tokens += r.item_tokens[i] - (i < last_turn ? r.item_prior_thinking[i] : 0);
    }
    if (recap && from == summary_pos) s.estimated_tokens -= recap->estimated_tokens;  // counted in "recap"
    r.estimated_tokens += s.estimated_tokens;
    r.sections.push_back(std::move(s));
  };
  std::size_t sys_end = 0;
  while (sys_end < r.items.size() && r.items[sys_end].is_model_input() && r.items[sys_end].role == role::kSystem)
    ++sys_end;
  add_section("system", 0, sys_end);
  // After the system run: runs of raw items ("prefix" before the last summary or fold, "tail"
  // after it), the rolling summary (then its recap), and runs of folds.
  std::unordered_set<std::string> fold_ids;
  for (const auto& f : r.folds) fold_ids.insert(f.id);
  const std::string fold_kind(view.fold_section);
  std::size_t last_view = sys_end;
  for (std::size_t i = sys_end; i < r.items.size(); ++i)
    if (i == summary_pos || fold_ids.count(r.items[i].id)) last_view = i + 1;
  auto kind_at = [&](std::size_t i) -> const char* {
    if (i == summary_pos) return "summary";
    if (r.notes && r.items[i].id == *r.notes) return "notes";
    if (snap && archive_folds.count(r.items[i].id)) return "frames";
    if (fold_ids.count(r.items[i].id)) return fold_kind.c_str();
    return i < last_view ? "prefix" : "tail";
  };
  for (std::size_t i = sys_end; i < r.items.size();) {
    const char* k = kind_at(i);
    std::size_t j = i + 1;
    if (i != summary_pos)
      while (j < r.items.size() && j != summary_pos && std::string_view(kind_at(j)) == k) ++j;
    add_section(k, i, j);
    if (i == summary_pos && recap) {
      r.sections.push_back(Section{"recap", recap->quoted_ids, recap->estimated_tokens});
      r.estimated_tokens += recap->estimated_tokens;
    }
    i = j;
  }

}

}  // namespace

Rendered render_context(Store& store, const std::string& session, const RenderOptions& opts) {
  const ViewPolicy* policy = &view_policy(opts.strategy);
  Rendered r;
  r.session = session;
  r.strategy = opts.strategy;
  // The view policy applied: snapcompact for a model that reads no images is rolling's
  // (docs/strategies.md "snapcompact"; the archive stays stored).
  if (!policy->text_fallback.empty() && !lookup_model(opts.model).reads_images) {
    policy = &view_policy(policy->text_fallback);
    r.fallback = std::string(policy->name);
  }
  const ViewPolicy& view = *policy;
  const bool snap = view.frames;

  resolve_head(store, session, opts, r);
  Views v = choose_views(store, session, opts, view);
  const std::int64_t head_seq = walk_spine(store, opts, v, r);
  if (snap) draw_frames(store, opts, v.archive_folds, r);
  apply_system_prompt(store, session, opts, opts.head ? head_seq : opts.as_of, r);
  if (opts.notes && view.notes) insert_notes(store, session, opts, r);
  for (Node& n : r.items) cap_row(n, opts.max_row_bytes, r.truncated);
  assign_sections(store, view, v.archive_folds, r);
  build_messages(r);
  r.tokens = token_figure(store, r, opts.as_of);
  return r;
}

}  // namespace ctxfold
