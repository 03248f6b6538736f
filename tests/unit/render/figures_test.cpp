// render_figures (docs/render.md "Memory") and the `tokens` table built on it: on every
// real transcript (read in place), raw, rolling and lcm renders, at HEAD and at nodes along the
// spine, and after rolling and lcm compactions, the figures equal what the whole render's items
// give, the token figure is the same, and request_table equals the table the whole renders gave
// before figures existed (old_request_table below: the previous implementation, kept as the
// reference).
#include <gtest/gtest.h>

#include <cstdlib>

#include "fake_environment.hpp"
#include "forensics/request_table.hpp"
#include "import/import.hpp"
#include "render/figures.hpp"
#include "render/render.hpp"
#include "render_sweep.hpp"
#include "render/token_figure.hpp"
#include "session/open.hpp"
#include "temp_dir.hpp"
#include "strategies/lcm.hpp"
#include "strategies/rolling.hpp"
#include "summarize/extractive.hpp"
#include "tokens/estimate.hpp"
#include "tokens/hidden.hpp"

namespace ctxfold {
namespace {

using render_sweep::kDir;

/// Compares the figures-only render with the whole one at the same options; returns the number
/// of differing fields (each reported).
int compare_figures(Store& st, const std::string& session, RenderOptions o, const std::string& what) {
  o.lean_metadata = true;
  const Rendered whole = render_context(st, session, o);
  const RenderedFigures out = render_figures(st, session, o);
  const Rendered& figs = out.r;
  int bad = 0;
  auto check = [&](bool same, const std::string& field) {
    if (!same) {
      ++bad;
      ADD_FAILURE() << what << ": " << field;
    }
  };
  check(out.figures.size() == whole.items.size(), "figure count");
  const std::vector<std::int32_t> edits = edit_results(whole.items);
  for (std::size_t i = 0; i < std::min(out.figures.size(), whole.items.size()) && bad < 5; ++i) {
    const Node& n = whole.items[i];
    const ItemFigure& f = out.figures[i];
    const std::string at = " at item " + std::to_string(i) + " (" + n.id + ")";
    check(f.seq == n.seq, "seq" + at);
    check(f.total == whole.item_tokens[i], "total" + at);
    check(f.prior == whole.item_prior_thinking[i], "prior" + at);
    check(f.bytes4 == estimate_node(n, Estimator::bytes4).total, "bytes4" + at);
    check(f.measured == node_measured_tokens(n).value_or(-1), "measured" + at);
    check(f.edits == edits[i], "edits" + at);
    check(f.has(ItemFigure::kUserTurn) == starts_user_turn(n), "user turn" + at);
    check(f.has(ItemFigure::kAssistant) == (n.is_model_input() && n.role == role::kAssistant), "assistant" + at);
    const std::string mid = json_str(n.metadata, "message_id");
    check(f.has(ItemFigure::kNoMessageId) == mid.empty(), "no message_id" + at);
    if (i > 0)
      check(f.has(ItemFigure::kSameMessageId) == (json_str(whole.items[i - 1].metadata, "message_id") == mid),
            "same message_id" + at);
    if (n.role == role::kAssistant) check(out.models.at(f.model) == json_str(n.metadata, "model"), "model" + at);
    if (f.node >= 0) check(figs.items.at(static_cast<std::size_t>(f.node)).id == n.id, "node" + at);
    else check(figure_node_id(st, out, i) == n.id, "id by seq" + at);
  }
  check(figs.estimated_tokens == whole.estimated_tokens, "estimated_tokens");
  check(dump_json(figs.tokens.to_json()) == dump_json(whole.tokens.to_json()), "token figure " +
        dump_json(figs.tokens.to_json()) + " vs " + dump_json(whole.tokens.to_json()));
  check(figs.warnings == whole.warnings, "warnings");
  check(figs.summary == whole.summary && figs.spine_length == whole.spine_length, "summary, spine length");
  return bad;
}

// ---- the previous request_table (whole renders, slimmed), the reference ----

struct OldCtx {
  std::vector<Node> items;
  std::vector<std::int64_t> totals, prior, b4;
  std::unordered_map<std::string, std::size_t> index;
  std::int64_t summary_seq = -1;
};

OldCtx old_context_at(Store& store, const std::string& session, const std::string& head, std::int64_t as_of) {
  RenderOptions ro;
  ro.head = head;
  ro.as_of = as_of;
  ro.lean_metadata = true;
  Rendered r = render_context(store, session, ro);
  OldCtx c;
  c.items = r.items;
  c.totals = r.item_tokens;
  c.prior = r.item_prior_thinking;
  for (std::size_t i = 0; i < r.items.size(); ++i) {
    c.b4.push_back(estimate_node(r.items[i], Estimator::bytes4).total);
    c.index.emplace(r.items[i].id, i);
    if (r.summary && r.items[i].id == *r.summary) c.summary_seq = r.items[i].seq;
  }
  return c;
}

struct OldReq {
  std::size_t first, node;
  std::int64_t measured;
  std::string active;
};

std::optional<OldCtx> old_render_for(Store& store, const std::string& session, const std::vector<Node>& items,
                                     const OldReq& q) {
  const Node& f = items[q.first];
  if (!f.predecessor) return OldCtx{};
  auto pred = store.node(*f.predecessor, false);
  if (!pred) return std::nullopt;
  return old_context_at(store, session, *f.predecessor, std::max(f.seq, pred->seq));
}

/// The rows of the previous implementation, and the edit results between consecutive requests.
std::pair<std::vector<RequestRow>, std::vector<std::int64_t>> old_request_rows(Store& store, const std::string& session) {
  RenderOptions raw;
  raw.strategy = "raw";
  raw.lean_metadata = true;
  const Rendered spine = render_context(store, session, raw);
  const std::vector<Node>& items = spine.items;
  const std::vector<std::int32_t> edits = edit_results(items);
  std::vector<OldReq> reqs;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].role != role::kAssistant || !items[i].is_model_input()) continue;
    const std::string mid = json_str(items[i].metadata, "message_id");
    if (i + 1 < items.size() && items[i + 1].role == role::kAssistant && !mid.empty() &&
        json_str(items[i + 1].metadata, "message_id") == mid)
      continue;
    auto m = node_measured_tokens(items[i]);
    if (!m) continue;
    std::size_t first = request_start(items, i);
    auto act = store.active_summary(session, items[first].seq);
    reqs.push_back({first, i, *m, act ? act->id : std::string()});
  }
  std::vector<std::int64_t> est(reqs.size()), b4(reqs.size());
  for (std::size_t g = 0; g < reqs.size();) {
    std::size_t h = g;
    while (h + 1 < reqs.size() && reqs[h + 1].active == reqs[g].active) ++h;
    std::optional<OldCtx> c = old_render_for(store, session, items, reqs[h]);
    for (std::size_t k = g; k <= h; ++k) {
      const Node& f = items[reqs[k].first];
      std::optional<std::size_t> end;
      if (c && k == h) end = c->items.size();
      else if (c)
        if (auto it = c->index.find(f.id); it != c->index.end() && f.seq > c->summary_seq) end = it->second;
      auto sum = [](const std::vector<std::int64_t>& v, std::size_t e) {
        std::int64_t t = 0;
        for (std::size_t i = 0; i < e && i < v.size(); ++i) t += v[i];
        return t;
      };
      if (end) {
        est[k] = prefix_estimate(c->items, c->totals, c->prior, *end);
        b4[k] = sum(c->b4, *end);
      } else if (auto own = old_render_for(store, session, items, reqs[k])) {
        est[k] = prefix_estimate(own->items, own->totals, own->prior, own->items.size());
        b4[k] = sum(own->b4, own->items.size());
      }
    }
    g = h + 1;
  }
  std::vector<RequestRow> rows;
  std::vector<std::int64_t> between;
  for (std::size_t k = 0; k < reqs.size(); ++k) {
    const Node& n = items[reqs[k].node];
    rows.push_back(RequestRow{n.id, items[reqs[k].first].id, json_str(n.metadata, "model"), n.seq, reqs[k].measured,
                              est[k], b4[k]});
    between.push_back(k == 0 ? 0 : count_between(edits, reqs[k - 1].first, reqs[k].first));
  }
  return {rows, between};
}

/// request_table against the reference: same rows, same edit counts in the kept pairs.
int compare_table(Store& st, const std::string& session, const std::string& what) {
  const RequestTable t = request_table(st, session, 0);
  const auto [rows, between] = old_request_rows(st, session);
  int bad = 0;
  if (t.requests.size() != rows.size()) {
    ADD_FAILURE() << what << ": " << t.requests.size() << " requests, reference " << rows.size();
    return 1;
  }
  for (std::size_t k = 0; k < rows.size() && bad < 5; ++k) {
    const RequestRow& a = t.requests[k];
    const RequestRow& b = rows[k];
    if (a.node != b.node || a.first != b.first || a.model != b.model || a.seq != b.seq || a.measured != b.measured ||
        a.estimated != b.estimated || a.bytes4 != b.bytes4) {
      ++bad;
      ADD_FAILURE() << what << ": request " << k << " " << a.node << " est " << a.estimated << "/" << b.estimated
                    << " bytes4 " << a.bytes4 << "/" << b.bytes4 << " first " << a.first << "/" << b.first;
    }
  }
  // The document written in pieces is the document.
  std::string written;
  write_request_table_json(t, 0, TokenFigure{}, [&](const std::string& piece) { written += piece; });
  if (written != dump_json(request_table_json(t, 0, TokenFigure{}))) {
    ++bad;
    ADD_FAILURE() << what << ": write_request_table_json differs from request_table_json";
  }
  for (const auto& p : t.pairs)
    if (p.edits != between[p.to]) {
      ++bad;
      ADD_FAILURE() << what << ": pair " << p.to << " edits " << p.edits << ", reference " << between[p.to];
    }
  return bad;
}

TEST(Figures, EqualTheWholeRenderAndTheOldTableOnEveryRealTranscript) {
  if (render_sweep::transcript_files().empty()) GTEST_SKIP() << "no transcripts at " << kDir;
  TempDir dir("figures");
  EXPECT_GT(render_sweep::sweep_transcripts(dir.root(), 23, compare_figures, compare_table), 40);
}

TEST(Figures, EqualTheWholeRenderAfterRollingAndLcmCompactions) {
  TempDir dir("figures");
  render_sweep::sweep_compactions(dir.root(), 41, compare_figures, compare_table);
}

}  // namespace
}  // namespace ctxfold
