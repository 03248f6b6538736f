#include "render/token_figure.hpp"

#include "render/figures.hpp"
#include "render/render.hpp"

#include "tokens/estimate.hpp"
#include "tokens/hidden.hpp"

#include <algorithm>
#include <limits>
#include <unordered_set>

namespace ctxfold {

bool starts_user_turn(const Node& n) {
  if (!n.is_model_input() || n.role != role::kUser) return false;
  // A harness injection (Claude Code isMeta: hook output, caveats) is not a prompt.
  if (auto m = n.metadata.find("is_meta"); m != n.metadata.end() && m->is_boolean() && m->get<bool>()) return false;
  if (n.content.is_string()) return true;
  if (!n.content.is_array()) return false;
  for (const auto& b : n.content)
    if (!b.is_object() || json_str(b, "type") != "tool_result") return true;
  return false;
}

std::int64_t prefix_estimate(const std::vector<Node>& items, const std::vector<std::int64_t>& totals,
                             const std::vector<std::int64_t>& prior, std::size_t end) {
  end = std::min({end, items.size(), totals.size()});
  std::size_t last_turn = 0;
  for (std::size_t i = end; i-- > 0;)
    if (starts_user_turn(items[i])) {
      last_turn = i;
      break;
    }
  std::int64_t t = 0;
  for (std::size_t i = 0; i < end; ++i) {
    t += totals[i];
    if (i < last_turn && i < prior.size()) t -= prior[i];
  }
  return t;
}

std::vector<std::int64_t> prefix_estimates(const std::vector<Node>& items, const std::vector<std::int64_t>& totals,
                                           const std::vector<std::int64_t>& prior,
                                           const std::vector<std::size_t>& ends) {
  std::vector<std::int64_t> out;
  out.reserve(ends.size());
  const std::size_t n = std::min(items.size(), totals.size());
  std::int64_t total = 0, prior_sum = 0, prior_before_turn = 0;  // sums over items[0, i)
  std::size_t i = 0;
  for (std::size_t e : ends) {
    e = std::min(e, n);
    if (e < i) {  // not ascending: fall back to the direct sum
      out.push_back(prefix_estimate(items, totals, prior, e));
      continue;
    }
    for (; i < e; ++i) {
      if (starts_user_turn(items[i])) prior_before_turn = prior_sum;
      total += totals[i];
      if (i < prior.size()) prior_sum += prior[i];
    }
    out.push_back(total - prior_before_turn);
  }
  return out;
}

std::size_t request_start(const std::vector<Node>& items, std::size_t i) {
  const std::string mid = json_str(items[i].metadata, "message_id");
  std::size_t f = i;
  while (f > 0) {
    const Node& prev = items[f - 1];
    if (prev.role != role::kAssistant || !prev.is_model_input()) break;
    if (!mid.empty() && json_str(prev.metadata, "message_id") != mid) break;
    --f;
  }
  return f;
}

std::optional<std::int64_t> node_measured_tokens(const Node& n) {
  if (!n.is_model_input() || n.role != role::kAssistant) return std::nullopt;
  auto it = n.metadata.find("usage");
  if (it == n.metadata.end()) return std::nullopt;
  return measured_input_tokens(*it);
}

namespace {

/// The seq of the first view node (summary or archive) after summary_seq up to as_of: requests
/// at or after it saw another context (token_figure explains why); INT64_MAX when none.
std::int64_t calibration_barrier(Store& store, const std::string& session, std::int64_t summary_seq,
                                 std::int64_t as_of) {
  std::int64_t barrier = std::numeric_limits<std::int64_t>::max();
  auto st = store.db().prepare(
      "SELECT min(seq) FROM nodes WHERE session=?1 AND seq>?2 AND seq<=?3 AND covers_count IS NOT NULL "
      "AND kind IN ('summary','archive')");
  st.bind(1, session).bind(2, summary_seq).bind(3, as_of);
  if (st.step() && !st.is_null(0)) barrier = st.int64(0);
  return barrier;
}

/// The figure of a request made on exactly this context (a child of HEAD carrying a plausible
/// usage): kind "measured". When every such measurement is refused, the estimate with the refusal;
/// nullopt when HEAD has no measured child in range.
std::optional<TokenFigure> head_request_figure(Store& store, const Rendered& r, std::int64_t as_of,
                                               std::int64_t summary_seq, std::int64_t barrier) {
  std::optional<RefusedMeasurement> refused;
  for (const auto& id : store.children(r.head)) {
    auto c = store.node(id, false);
    if (!c || c->seq > as_of || c->seq <= summary_seq || c->seq >= barrier) continue;
    auto m = node_measured_tokens(*c);
    if (!m) continue;
    if (auto why = implausible_measurement(*m, r.estimated_tokens)) {
      if (!refused) refused = RefusedMeasurement{c->id, *m, r.estimated_tokens, *why};
      continue;
    }
    TokenFigure f;
    f.value = *m;
    f.kind = "measured";
    f.estimated = r.estimated_tokens;
    f.calibration = Calibration{c->id, *m, r.estimated_tokens, "request", kEstimatorVersion};
    return f;
  }
  if (!refused) return std::nullopt;
  // The measurement of exactly this context is refused: nothing older stands in.
  TokenFigure f = calibrated_figure(r.estimated_tokens, std::nullopt);
  f.refused = refused;
  return f;
}

/// The requests whose context is a prefix of this render (made after the rendered summary and
/// folds), oldest first: the latest calibrates the figure, and the pairs of consecutive ones teach
/// the hidden output per edit result (tokens/hidden.hpp), each pair only from what was measured
/// up to its second request. Only the newest request calibrates: when it is refused
/// (implausible_measurement) nothing older stands in for it (an old prefix says little about this
/// context), `newest_ok` is false and the refusal goes to *refused; refused older ones teach the
/// hidden output nothing.
std::optional<Calibration> request_calibration(const Rendered& r, std::optional<std::size_t> summary_pos,
                                               std::int64_t summary_seq, std::int64_t barrier, bool& newest_ok,
                                               std::optional<RefusedMeasurement>& refused) {
  struct Req {
    std::size_t node, first;
    std::int64_t measured;
  };
  std::vector<Req> reqs;
  for (std::size_t i = summary_pos ? *summary_pos + 1 : 0; i < r.items.size(); ++i) {
    const Node& n = r.items[i];
    if (n.seq <= summary_seq) continue;
    auto m = node_measured_tokens(n);
    if (!m) continue;
    std::size_t first = request_start(r.items, i);
    if (r.items[first].seq >= barrier) continue;
    // Claude Code copies a response's usage onto each of its nodes: the last one stands for it.
    if (!reqs.empty() && reqs.back().first == first) reqs.pop_back();
    reqs.push_back({i, first, *m});
  }
  newest_ok = true;
  if (reqs.empty()) return std::nullopt;
  std::vector<std::size_t> ends;
  ends.reserve(reqs.size());
  for (const auto& q : reqs) ends.push_back(q.first);
  const std::vector<std::int64_t> all_est = prefix_estimates(r.items, r.item_tokens, r.item_prior_thinking, ends);
  if (auto why = implausible_measurement(reqs.back().measured, all_est.back())) {
    newest_ok = false;
    if (!refused) refused = RefusedMeasurement{r.items[reqs.back().node].id, reqs.back().measured, all_est.back(), *why};
    return std::nullopt;
  }
  std::vector<Req> kept;
  std::vector<std::int64_t> est;  // the prefix estimate of each kept request
  for (std::size_t k = 0; k < reqs.size(); ++k)
    if (k + 1 == reqs.size() || !implausible_measurement(reqs[k].measured, all_est[k])) {
      kept.push_back(reqs[k]);
      est.push_back(all_est[k]);
    }
  reqs = std::move(kept);
  const std::vector<std::int32_t> edits = edit_results(r.items);
  HiddenPerEdit hidden;
  for (std::size_t k = 1; k < reqs.size(); ++k) {
    const Req& a = reqs[k - 1];
    const Req& b = reqs[k];
    const std::int64_t growth = b.measured - a.measured;
    if (growth < 0 || json_str(r.items[a.node].metadata, "model") != json_str(r.items[b.node].metadata, "model"))
      continue;
    Calibration prev{r.items[a.node].id, a.measured, est[k - 1], "request", kEstimatorVersion};
    hidden.observe(growth, calibrated_figure(est[k], prev).value - a.measured, count_between(edits, a.first, b.first));
  }
  const Req& last = reqs.back();
  Calibration cal{r.items[last.node].id, last.measured, est.back(), "request", kEstimatorVersion};
  cal.hidden_edits = count_between(edits, last.first, r.items.size());
  cal.hidden_per_edit = std::max(0.0, hidden.per_edit);
  cal.hidden = hidden.predict(cal.hidden_edits);
  return cal;
}

}  // namespace

TokenFigure token_figure(Store& store, const Rendered& r, std::int64_t as_of) {
  // The last view node the render substituted (the rolling summary or an lcm fold) and the
  // newest seq among them: requests older than a view node saw another context.
  std::int64_t summary_seq = -1;
  std::optional<std::size_t> summary_pos;
  std::unordered_set<std::string> views;
  if (r.summary) views.insert(*r.summary);
  if (r.archive) views.insert(*r.archive);  // snapcompact: the archive's frames
  for (const auto& f : r.folds) views.insert(f.id);
  for (std::size_t i = 0; i < r.items.size() && !views.empty(); ++i)
    if (views.count(r.items[i].id)) {
      summary_pos = i;
      summary_seq = std::max(summary_seq, r.items[i].seq);
    }

  // A request saw the view nodes that existed when it was made: one made after a view node this
  // render does not show (an imported compaction summary under a render that starts before it, a
  // fold the render did not apply) saw another context, and matching it against this render's
  // estimate would calibrate a different history. Every view node the render shows has a seq at
  // or below summary_seq, so the first view node after it is the barrier: only requests before it
  // are consistent with the render (same covered frontier, context a prefix of it).
  const std::int64_t barrier = calibration_barrier(store, r.session, summary_seq, as_of);

  // A measurement that disagrees with the estimate of its context past kCalibrationFactor is
  // not used (tokens/calibrate.hpp implausible_measurement); the newest one refused is reported.
  if (auto f = head_request_figure(store, r, as_of, summary_seq, barrier)) return *f;
  std::optional<RefusedMeasurement> refused;

  bool summary_calibrates = true;  // false: the newest request was refused, and nothing older stands in
  std::optional<Calibration> cal =
      request_calibration(r, summary_pos, summary_seq, barrier, summary_calibrates, refused);
  if (!cal && summary_pos && summary_calibrates) {
    auto it = r.items[*summary_pos].metadata.find("calibration");
    if (it != r.items[*summary_pos].metadata.end()) {
      cal = Calibration::from_json(*it);
      if (cal) cal->origin = "summary";
    }
  }
  TokenFigure f = calibrated_figure(r.estimated_tokens, cal);
  if (!f.refused) f.refused = refused;
  return f;
}

std::size_t figure_request_start(const std::vector<ItemFigure>& figs, std::size_t i) {
  // request_start: back over assistant items; with a message_id only while it stays the same
  // (each step compares neighbours, which is the same as comparing with items[i]'s).
  const bool any_id = figs[i].has(ItemFigure::kNoMessageId);
  std::size_t f = i;
  while (f > 0) {
    if (!figs[f - 1].has(ItemFigure::kAssistant)) break;
    if (!any_id && !figs[f].has(ItemFigure::kSameMessageId)) break;
    --f;
  }
  return f;
}

std::vector<FigurePrefix> figure_prefixes(const std::vector<ItemFigure>& figs, const std::vector<std::size_t>& ends) {
  std::vector<FigurePrefix> out;
  out.reserve(ends.size());
  auto direct = [&](std::size_t end) {
    std::size_t last_turn = 0;
    for (std::size_t i = end; i-- > 0;)
      if (figs[i].has(ItemFigure::kUserTurn)) {
        last_turn = i;
        break;
      }
    FigurePrefix p;
    for (std::size_t i = 0; i < end; ++i) {
      p.estimated += figs[i].total - (i < last_turn ? figs[i].prior : 0);
      p.bytes4 += figs[i].bytes4;
    }
    return p;
  };
  std::int64_t total = 0, b4 = 0, prior_sum = 0, prior_before_turn = 0;  // sums over figs[0, i)
  std::size_t i = 0;
  for (std::size_t e : ends) {
    e = std::min(e, figs.size());
    if (e < i) {
      out.push_back(direct(e));
      continue;
    }
    for (; i < e; ++i) {
      if (figs[i].has(ItemFigure::kUserTurn)) prior_before_turn = prior_sum;
      total += figs[i].total;
      b4 += figs[i].bytes4;
      prior_sum += figs[i].prior;
    }
    out.push_back(FigurePrefix{total - prior_before_turn, b4});
  }
  return out;
}

std::int64_t figure_edits_between(const std::vector<ItemFigure>& figs, std::size_t begin, std::size_t end) {
  end = std::min(end, figs.size());
  std::int64_t n = 0;
  for (std::size_t i = begin; i < end; ++i) n += figs[i].edits;
  return n;
}

std::string figure_node_id(Store& store, const RenderedFigures& figs, std::size_t i) {
  const ItemFigure& f = figs.figures[i];
  if (f.node >= 0) return figs.r.items[static_cast<std::size_t>(f.node)].id;
  auto& st = store.db().cached("SELECT id FROM nodes WHERE seq=?1");
  ResetOnExit reset(st);
  st.bind(1, f.seq);
  return st.step() ? st.text(0) : std::string();
}

namespace {

/// request_calibration on a figures-only render (render_figures): the same requests, the same
/// refusals, the same hidden output per edit.
std::optional<Calibration> figures_request_calibration(Store& store, const RenderedFigures& out,
                                                       std::optional<std::size_t> summary_pos,
                                                       std::int64_t summary_seq, std::int64_t barrier,
                                                       bool& newest_ok, std::optional<RefusedMeasurement>& refused) {
  const std::vector<ItemFigure>& figs = out.figures;
  struct Req {
    std::size_t node, first;
    std::int64_t measured;
  };
  std::vector<Req> reqs;
  for (std::size_t i = summary_pos ? *summary_pos + 1 : 0; i < figs.size(); ++i) {
    if (figs[i].seq <= summary_seq || figs[i].measured < 0 || !figs[i].has(ItemFigure::kAssistant)) continue;
    std::size_t first = figure_request_start(figs, i);
    if (figs[first].seq >= barrier) continue;
    if (!reqs.empty() && reqs.back().first == first) reqs.pop_back();
    reqs.push_back({i, first, figs[i].measured});
  }
  std::optional<Calibration> cal;
  newest_ok = true;
  std::vector<FigurePrefix> est;    // the prefix estimate of each request in reqs
  if (!reqs.empty()) {
    std::vector<std::size_t> ends;
    ends.reserve(reqs.size());
    for (const auto& q : reqs) ends.push_back(q.first);
    est = figure_prefixes(figs, ends);
    if (auto why = implausible_measurement(reqs.back().measured, est.back().estimated)) {
      newest_ok = false;
      refused = RefusedMeasurement{figure_node_id(store, out, reqs.back().node), reqs.back().measured,
                                   est.back().estimated, *why};
      reqs.clear();
    }
    {  // refused older requests teach the hidden output nothing
      std::vector<Req> kept;
      std::vector<FigurePrefix> kept_est;
      for (std::size_t k = 0; k < reqs.size(); ++k)
        if (k + 1 == reqs.size() || !implausible_measurement(reqs[k].measured, est[k].estimated)) {
          kept.push_back(reqs[k]);
          kept_est.push_back(est[k]);
        }
      reqs = std::move(kept);
      est = std::move(kept_est);
    }
  }
  if (!reqs.empty()) {
    HiddenPerEdit hidden;
    for (std::size_t k = 1; k < reqs.size(); ++k) {
      const Req& a = reqs[k - 1];
      const Req& b = reqs[k];
      const std::int64_t growth = b.measured - a.measured;
      if (growth < 0 || figs[a.node].model != figs[b.node].model) continue;
      Calibration prev{std::string(), a.measured, est[k - 1].estimated, "request", kEstimatorVersion};
      hidden.observe(growth, calibrated_figure(est[k].estimated, prev).value - a.measured,
                     figure_edits_between(figs, a.first, b.first));
    }
    const Req& last = reqs.back();
    cal = Calibration{figure_node_id(store, out, last.node), last.measured, est.back().estimated, "request",
                      kEstimatorVersion};
    cal->hidden_edits = figure_edits_between(figs, last.first, figs.size());
    cal->hidden_per_edit = std::max(0.0, hidden.per_edit);
    cal->hidden = hidden.predict(cal->hidden_edits);
  }
  return cal;
}

}  // namespace

TokenFigure token_figure_of_figures(Store& store, const RenderedFigures& out, std::int64_t as_of) {
  // token_figure step by step, on the figures (see there for the reasons of each step).
  const Rendered& r = out.r;
  const std::vector<ItemFigure>& figs = out.figures;
  std::int64_t summary_seq = -1;
  std::optional<std::size_t> summary_pos;
  std::unordered_set<std::string> views;
  if (r.summary) views.insert(*r.summary);
  if (r.archive) views.insert(*r.archive);
  for (const auto& f : r.folds) views.insert(f.id);
  for (std::size_t i = 0; i < figs.size() && !views.empty(); ++i)
    if (figs[i].node >= 0 && views.count(r.items[static_cast<std::size_t>(figs[i].node)].id)) {
      summary_pos = i;
      summary_seq = std::max(summary_seq, figs[i].seq);
    }
  const std::int64_t barrier = calibration_barrier(store, r.session, summary_seq, as_of);
  if (auto f = head_request_figure(store, r, as_of, summary_seq, barrier)) return *f;
  std::optional<RefusedMeasurement> refused;  // as in token_figure: the newest refused one is reported
  bool summary_calibrates = true;  // false: the newest request was refused, and nothing older stands in
  std::optional<Calibration> cal =
      figures_request_calibration(store, out, summary_pos, summary_seq, barrier, summary_calibrates, refused);
  if (!cal && summary_pos && summary_calibrates) {
    const Node& s = r.items[static_cast<std::size_t>(figs[*summary_pos].node)];
    auto it = s.metadata.find("calibration");
    if (it != s.metadata.end()) {
      cal = Calibration::from_json(*it);
      if (cal) cal->origin = "summary";
    }
  }
  TokenFigure f = calibrated_figure(r.estimated_tokens, cal);
  if (!f.refused) f.refused = refused;
  return f;
}

}  // namespace ctxfold
