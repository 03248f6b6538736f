#include "tokens/requests.hpp"

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
  std::int64_t barrier = std::numeric_limits<std::int64_t>::max();
  {
    auto st = store.db().prepare(
        "SELECT min(seq) FROM nodes WHERE session=?1 AND seq>?2 AND seq<=?3 AND covers_count IS NOT NULL "
        "AND kind IN ('summary','archive')");
    st.bind(1, r.session).bind(2, summary_seq).bind(3, as_of);
    if (st.step() && !st.is_null(0)) barrier = st.int64(0);
  }

  // A request made on exactly this context: a child of HEAD carrying usage.
  for (const auto& id : store.children(r.head)) {
    auto c = store.node(id, false);
    if (!c || c->seq > as_of || c->seq <= summary_seq || c->seq >= barrier) continue;
    if (auto m = node_measured_tokens(*c)) {
      TokenFigure f;
      f.value = *m;
      f.kind = "measured";
      f.estimated = r.estimated_tokens;
      f.calibration = Calibration{c->id, *m, r.estimated_tokens, "request", kEstimatorVersion};
      return f;
    }
  }

  // The requests whose context is a prefix of this render (made after the rendered summary and
  // folds), oldest first: the latest calibrates the figure, and the pairs of consecutive ones teach
  // the hidden output per edit result (tokens/hidden.hpp), each pair only from what was measured
  // up to its second request.
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
  std::optional<Calibration> cal;
  if (!reqs.empty()) {
    std::vector<std::size_t> ends;
    ends.reserve(reqs.size());
    for (const auto& q : reqs) ends.push_back(q.first);
    const std::vector<std::int64_t> est = prefix_estimates(r.items, r.item_tokens, r.item_prior_thinking, ends);
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
    cal = Calibration{r.items[last.node].id, last.measured, est.back(), "request", kEstimatorVersion};
    cal->hidden_edits = count_between(edits, last.first, r.items.size());
    cal->hidden_per_edit = std::max(0.0, hidden.per_edit);
    cal->hidden = hidden.predict(cal->hidden_edits);
  }
  if (!cal && summary_pos) {
    auto it = r.items[*summary_pos].metadata.find("calibration");
    if (it != r.items[*summary_pos].metadata.end()) {
      cal = Calibration::from_json(*it);
      if (cal) cal->origin = "summary";
    }
  }
  return calibrated_figure(r.estimated_tokens, cal);
}

}  // namespace ctxfold

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

namespace ctxfold {

ErrorStats error_stats(std::vector<double> xs) {
  ErrorStats s;
  s.n = xs.size();
  if (xs.empty()) return s;
  for (auto& x : xs) x = std::fabs(x);
  std::sort(xs.begin(), xs.end());
  auto pct = [&](double q) {
    double k = (static_cast<double>(xs.size()) - 1) * q;
    auto f = static_cast<std::size_t>(std::floor(k));
    std::size_t c = std::min(f + 1, xs.size() - 1);
    return xs[f] + (xs[c] - xs[f]) * (k - static_cast<double>(f));
  };
  s.median = pct(0.5);
  s.p90 = pct(0.9);
  return s;
}

namespace {

struct Ctx {
  std::vector<Node> items;
  std::vector<std::int64_t> totals, prior, b4;
  std::unordered_map<std::string, std::size_t> index;
  std::int64_t summary_seq = -1;
};

Ctx context_at(Store& store, const std::string& session, const std::string& head, std::int64_t as_of) {
  RenderOptions ro;
  ro.head = head;
  ro.as_of = as_of;
  ro.strategy = "rolling";
  Rendered r = render_context(store, session, ro);
  Ctx c;
  c.totals = std::move(r.item_tokens);
  c.prior = std::move(r.item_prior_thinking);
  c.items = std::move(r.items);
  c.b4.reserve(c.items.size());
  for (std::size_t i = 0; i < c.items.size(); ++i) {
    c.b4.push_back(estimate_node(c.items[i], Estimator::bytes4).total);
    c.index.emplace(c.items[i].id, i);
    if (r.summary && c.items[i].id == *r.summary) c.summary_seq = c.items[i].seq;
  }
  return c;
}

std::int64_t sum_prefix(const std::vector<std::int64_t>& v, std::size_t end) {
  std::int64_t t = 0;
  for (std::size_t i = 0; i < end && i < v.size(); ++i) t += v[i];
  return t;
}

}  // namespace

RequestTable request_table(Store& store, const std::string& session, std::int64_t min_growth) {
  RequestTable t;
  t.session = session;
  RenderOptions raw;
  raw.strategy = "raw";
  Rendered spine = render_context(store, session, raw);
  const auto& items = spine.items;

  struct Req {
    std::size_t first, node;
    std::int64_t measured;
    std::string active;  // the active summary when the request was made
  };
  std::vector<Req> reqs;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].role != role::kAssistant || !items[i].is_model_input()) continue;
    const std::string mid = json_str(items[i].metadata, "message_id");
    bool more = i + 1 < items.size() && items[i + 1].role == role::kAssistant && !mid.empty() &&
                json_str(items[i + 1].metadata, "message_id") == mid;
    if (more) continue;  // usage is taken from the last node of a response
    auto m = node_measured_tokens(items[i]);
    if (!m) {
      ++t.skipped_no_usage;
      continue;
    }
    std::size_t first = request_start(items, i);
    std::int64_t as_of = items[first].seq;
    auto act = store.active_summary(session, as_of);
    reqs.push_back({first, i, *m, act ? act->id : std::string()});
  }

  // One render per run of requests sharing the active summary: the latest one's context; earlier
  // requests of the run are prefixes of it. A request missing from that render gets its own.
  std::vector<std::int64_t> est(reqs.size()), b4(reqs.size());
  std::size_t g = 0;
  while (g < reqs.size()) {
    std::size_t h = g;
    while (h + 1 < reqs.size() && reqs[h + 1].active == reqs[g].active) ++h;
    auto render_for = [&](const Req& q) -> std::optional<Ctx> {
      const Node& f = items[q.first];
      if (!f.predecessor) return Ctx{};
      // The state the request was made in: up to its first output node (or its predecessor, should
      // an import have appended that later).
      auto pred = store.node(*f.predecessor, false);
      if (!pred) return std::nullopt;
      return context_at(store, session, *f.predecessor, std::max(f.seq, pred->seq));
    };
    std::optional<Ctx> c = render_for(reqs[h]);
    for (std::size_t k = g; k <= h; ++k) {
      const Node& f = items[reqs[k].first];
      auto at = [&](const Ctx& cx) -> std::optional<std::size_t> {
        if (k == h) return cx.items.size();
        auto it = cx.index.find(f.id);
        if (it == cx.index.end() || f.seq <= cx.summary_seq) return std::nullopt;
        return it->second;
      };
      std::optional<std::size_t> end = c ? at(*c) : std::nullopt;
      if (end) {
        est[k] = prefix_estimate(c->items, c->totals, c->prior, *end);
        b4[k] = sum_prefix(c->b4, *end);
      } else if (auto own = render_for(reqs[k])) {
        est[k] = prefix_estimate(own->items, own->totals, own->prior, own->items.size());
        b4[k] = sum_prefix(own->b4, own->items.size());
      }
    }
    g = h + 1;
  }

  for (std::size_t k = 0; k < reqs.size(); ++k) {
    const Node& n = items[reqs[k].node];
    t.requests.push_back(RequestRow{n.id, items[reqs[k].first].id, json_str(n.metadata, "model"), n.seq,
                                    reqs[k].measured, est[k], b4[k]});
  }
  // The learned hidden output per edit result (tokens/hidden.hpp): pair k is predicted with what
  // pairs before it taught, then teaches; resets and model switches teach nothing; pairs under
  // min_growth teach but are not kept (a session's own measurements, whatever their size).
  const std::vector<std::int32_t> edits = edit_results(items);
  HiddenPerEdit hidden;
  for (std::size_t k = 1; k < t.requests.size(); ++k) {
    const RequestRow& a = t.requests[k - 1];
    const RequestRow& b = t.requests[k];
    const std::int64_t growth = b.measured - a.measured;
    if (growth < 0) {
      ++t.skipped_reset;
      continue;
    }
    if (a.model != b.model) {
      ++t.skipped_model_switch;
      continue;
    }
    Calibration cal{a.node, a.measured, a.estimated, "request", kEstimatorVersion};
    const std::int64_t remainder_growth = calibrated_figure(b.estimated, cal).value - a.measured;
    const std::int64_t n_edits = count_between(edits, reqs[k - 1].first, reqs[k].first);
    cal.hidden_edits = n_edits;
    cal.hidden = hidden.predict(n_edits);
    const std::int64_t calibrated = calibrated_figure(b.estimated, cal).value - a.measured;
    hidden.observe(growth, remainder_growth, n_edits);  // after this pair's prediction: no look-ahead
    if (growth < min_growth) {
      ++t.skipped_small;
      continue;
    }
    GrowthPair p;
    p.from = k - 1;
    p.to = k;
    p.measured = growth;
    p.estimated = b.estimated - a.estimated;
    p.bytes4 = b.bytes4 - a.bytes4;
    p.remainder = remainder_growth;
    p.calibrated = calibrated;
    p.hidden = cal.hidden;
    p.edits = n_edits;
    p.ratio = a.estimated > 0 ? static_cast<std::int64_t>(std::llround(static_cast<double>(a.measured) *
                                                                         static_cast<double>(b.estimated) /
                                                                         static_cast<double>(a.estimated))) -
                                    a.measured
                              : p.estimated;
    t.pairs.push_back(p);
  }
  return t;
}

Json request_table_json(const RequestTable& t, std::int64_t min_growth, const TokenFigure& current) {
  auto rel = [](std::int64_t pred, std::int64_t meas) {
    return meas == 0 ? 0.0 : static_cast<double>(pred - meas) / static_cast<double>(meas);
  };
  auto round4 = [](double x) { return std::round(x * 10000.0) / 10000.0; };
  Json reqs = Json::array();
  for (const auto& r : t.requests)
    reqs.push_back(Json{{"node", r.node},
                        {"first", r.first},
                        {"seq", r.seq},
                        {"model", r.model},
                        {"measured", r.measured},
                        {"estimated", r.estimated},
                        {"bytes4", r.bytes4},
                        {"remainder", r.measured - r.estimated}});
  Json pairs = Json::array();
  std::vector<double> e_b4, e_est, e_cal, e_rem, e_ratio, e_total;
  for (const auto& p : t.pairs) {
    const RequestRow& b = t.requests[p.to];
    double eb = rel(p.bytes4, p.measured), ee = rel(p.estimated, p.measured), ec = rel(p.calibrated, p.measured),
           er = rel(p.ratio, p.measured), em = rel(p.remainder, p.measured), et = rel(t.requests[p.from].measured + p.calibrated, b.measured);
    e_b4.push_back(eb);
    e_est.push_back(ee);
    e_cal.push_back(ec);
    e_rem.push_back(em);
    e_ratio.push_back(er);
    e_total.push_back(et);
    pairs.push_back(Json{{"from", t.requests[p.from].node},
                         {"to", b.node},
                         {"measured_growth", p.measured},
                         {"estimated_growth", p.estimated},
                         {"bytes4_growth", p.bytes4},
                         {"calibrated_growth", p.calibrated},
                         {"remainder_growth", p.remainder},
                         {"hidden_growth", p.hidden},
                         {"edits", p.edits},
                         {"ratio_growth", p.ratio},
                         {"error", round4(ee)},
                         {"bytes4_error", round4(eb)},
                         {"calibrated_error", round4(ec)},
                         {"remainder_error", round4(em)},
                         {"ratio_error", round4(er)}});
  }
  auto stats = [&](const std::vector<double>& xs) {
    ErrorStats s = error_stats(xs);
    // No pair, no error to state: null, never a perfect 0.
    if (s.n == 0) return Json{{"n", 0}, {"median", nullptr}, {"p90", nullptr}};
    return Json{{"n", s.n}, {"median", round4(s.median)}, {"p90", round4(s.p90)}};
  };
  Json j = Json::object();
  j["schema"] = "ctxfold.tokens/1";
  j["session"] = t.session;
  j["estimator"] = kEstimatorVersion;
  j["min_growth"] = min_growth;
  j["requests"] = std::move(reqs);
  j["pairs"] = std::move(pairs);
  j["skipped"] = Json{{"small", t.skipped_small},
                      {"reset", t.skipped_reset},
                      {"model_switch", t.skipped_model_switch},
                      {"no_usage", t.skipped_no_usage}};
  j["summary"] = Json{{"pairs", t.pairs.size()},
                      {"bytes4", stats(e_b4)},
                      {"estimated", stats(e_est)},
                      {"calibrated", stats(e_cal)},
                      {"remainder", stats(e_rem)},
                      {"ratio", stats(e_ratio)},
                      {"calibrated_total", stats(e_total)}};
  j["current"] = current.to_json();
  return j;
}

}  // namespace ctxfold
