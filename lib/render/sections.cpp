// The reads and sections of a render: the ids the model reads, rolling's recap after a ctxfold
// summary, the per-item estimates and the labelled runs of items (Rendered::sections).
#include "render/render_parts.hpp"

#include <string_view>

#include "render/recap.hpp"
#include "render/token_figure.hpp"
#include "tokens/estimate.hpp"

namespace ctxfold::render_detail {

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

ItemFigure FigureState::figure(const Node& n) {
  ItemFigure f;
  f.seq = n.seq;
  const NodeEstimate e = estimate_node(n);
  f.total = static_cast<std::int32_t>(e.total);
  f.prior = static_cast<std::int32_t>(e.prior_turn_thinking);
  f.bytes4 = static_cast<std::int32_t>(estimate_node(n, Estimator::bytes4).total);
  if (auto m = node_measured_tokens(n)) f.measured = *m;
  if (starts_user_turn(n)) f.flags |= ItemFigure::kUserTurn;
  if (n.is_model_input() && n.role == role::kAssistant) f.flags |= ItemFigure::kAssistant;
  const std::string model = json_str(n.metadata, "model");
  if (!model.empty()) {
    auto [it, added] = models.emplace(model, static_cast<std::uint16_t>(names.size()));
    if (added) names.push_back(model);
    f.model = it->second;
  }
  return f;
}

void assign_figures(Store& store, const ViewPolicy& view, FigureState& fs, RenderedFigures& out) {
  Rendered& r = out.r;
  std::vector<ItemFigure>& figures = out.figures;
  std::size_t summary_pos = r.items.size();
  for (std::size_t i = 0; i < r.items.size(); ++i)
    if (r.summary && r.items[i].id == *r.summary) summary_pos = i;
  if (summary_pos < r.items.size() && view.recap && json_str(r.items[summary_pos].metadata, "origin") != "import") {
    std::optional<Recap> recap = rolling_recap(store, r.items[summary_pos]);
    if (recap && recap->node.content.is_array())
      for (const auto& b : recap->node.content) r.items[summary_pos].content.push_back(b);
  }
  // The items the walk did not meet (the system prompt, the notes) are the oldest: their edit
  // results are counted last, newest first.
  std::unordered_set<std::string> walked(fs.full_ids.begin(), fs.full_ids.end());
  for (std::size_t i = r.items.size(); i-- > 0;) {
    const Node& n = r.items[i];
    if (n.id.empty() || walked.count(n.id) || !n.content.is_array()) continue;
    fs.full_ids.push_back(n.id);
    fs.full_counts.push_back(0);
    fs.count_edits(n.content, -static_cast<std::int64_t>(fs.full_ids.size()));
  }
  std::unordered_map<std::string, std::int32_t> full_edits;
  for (std::size_t k = 0; k < fs.full_ids.size(); ++k) full_edits.emplace(fs.full_ids[k], fs.full_counts[k]);

  std::vector<Node> kept;
  std::size_t whole = 0;
  for (const Node& n : r.items) whole += n.id.empty() ? 0 : 1;
  figures.reserve(fs.figs_rev.size() + whole);
  std::string prev_mid;
  for (Node& n : r.items) {
    const bool first = figures.empty();
    if (n.id.empty()) {  // a run of plain items
      // figs_rev is newest first: a run is taken from its end, and what is taken is freed.
      for (std::int64_t c = 0; c < n.tokens && !fs.figs_rev.empty(); ++c) {
        ItemFigure f = fs.figs_rev.back();
        fs.figs_rev.pop_back();
        if (c == 0 && !first && json_str(n.metadata, "oldest_mid") == prev_mid) f.flags |= ItemFigure::kSameMessageId;
        figures.push_back(f);
      }
      prev_mid = json_str(n.metadata, "newest_mid");
      continue;
    }
    ItemFigure f = fs.figure(n);
    std::string mid = json_str(n.metadata, "message_id");
    if (mid.empty()) f.flags |= ItemFigure::kNoMessageId;
    if (!first && mid == prev_mid) f.flags |= ItemFigure::kSameMessageId;
    if (auto it = full_edits.find(n.id); it != full_edits.end()) f.edits = it->second;
    f.node = static_cast<std::int32_t>(kept.size());
    figures.push_back(f);
    prev_mid = std::move(mid);
    kept.push_back(std::move(n));
  }
  r.items = std::move(kept);
  std::size_t last_turn = 0;
  for (std::size_t i = 0; i < figures.size(); ++i)
    if (figures[i].has(ItemFigure::kUserTurn)) last_turn = i;
  r.estimated_tokens = 0;
  for (std::size_t i = 0; i < figures.size(); ++i)
    r.estimated_tokens += figures[i].total - (i < last_turn ? figures[i].prior : 0);
  out.models = std::move(fs.names);
}

}  // namespace ctxfold::render_detail
