#include "forensics/request_table.hpp"

#include "tokens/estimate.hpp"
#include "tokens/hidden.hpp"

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

/// n as the table reads it once its estimates and edit counts are taken: no content but a marker
/// that keeps starts_user_turn (an empty string when n starts a user turn, else no blocks), and
/// only the metadata read here (message_id, model, usage). A few hundred bytes a node, so a long
/// session's spine and a context are never held whole together (memory: one render at a time).
Node slim_item(const Node& n) {
  Node s;
  s.seq = n.seq;
  s.id = n.id;
  s.session = n.session;
  s.predecessor = n.predecessor;
  s.kind = n.kind;
  s.role = n.role;
  s.content = starts_user_turn(n) ? Json("") : Json::array();
  for (const char* key : {"message_id", "model", "usage"})
    if (auto it = n.metadata.find(key); it != n.metadata.end()) s.metadata[key] = *it;
  return s;
}

Ctx context_at(Store& store, const std::string& session, const std::string& head, std::int64_t as_of) {
  RenderOptions ro;
  ro.head = head;
  ro.as_of = as_of;
  ro.strategy = "rolling";
  ro.lean_metadata = true;
  Rendered r = render_context(store, session, ro);
  Ctx c;
  c.totals = std::move(r.item_tokens);
  c.prior = std::move(r.item_prior_thinking);
  c.items.reserve(r.items.size());
  c.b4.reserve(r.items.size());
  for (std::size_t i = 0; i < r.items.size(); ++i) {
    c.b4.push_back(estimate_node(r.items[i], Estimator::bytes4).total);
    c.index.emplace(r.items[i].id, i);
    if (r.summary && r.items[i].id == *r.summary) c.summary_seq = r.items[i].seq;
    c.items.push_back(slim_item(r.items[i]));
  }
  return c;
}

std::int64_t sum_prefix(const std::vector<std::int64_t>& v, std::size_t end) {
  std::int64_t t = 0;
  for (std::size_t i = 0; i < end && i < v.size(); ++i) t += v[i];
  return t;
}

/// One measured request on the raw spine.
struct Req {
  std::size_t first, node;
  std::int64_t measured;
  std::string active;  // the active summary when the request was made
};

/// The measured requests on the raw spine's items, in order; counts the ones without usage in t.
std::vector<Req> find_requests(Store& store, const std::string& session, const std::vector<Node>& items,
                               RequestTable& t) {
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
  return reqs;
}

/// The context request q was made in; nullopt when its first node's predecessor is missing.
std::optional<Ctx> render_for(Store& store, const std::string& session, const std::vector<Node>& items,
                              const Req& q) {
  const Node& f = items[q.first];
  if (!f.predecessor) return Ctx{};
  // The state the request was made in: up to its first output node (or its predecessor, should
  // an import have appended that later).
  auto pred = store.node(*f.predecessor, false);
  if (!pred) return std::nullopt;
  return context_at(store, session, *f.predecessor, std::max(f.seq, pred->seq));
}

/// The content and bytes4 estimates of each request's context, by request.
struct Estimates {
  std::vector<std::int64_t> est, b4;
};

Estimates estimate_requests(Store& store, const std::string& session, const std::vector<Node>& items,
                            const std::vector<Req>& reqs) {
  // One render per run of requests sharing the active summary: the latest one's context; earlier
  // requests of the run are prefixes of it. A request missing from that render gets its own.
  std::vector<std::int64_t> est(reqs.size()), b4(reqs.size());
  std::size_t g = 0;
  while (g < reqs.size()) {
    std::size_t h = g;
    while (h + 1 < reqs.size() && reqs[h + 1].active == reqs[g].active) ++h;
    std::optional<Ctx> c = render_for(store, session, items, reqs[h]);
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
      } else if (auto own = render_for(store, session, items, reqs[k])) {
        est[k] = prefix_estimate(own->items, own->totals, own->prior, own->items.size());
        b4[k] = sum_prefix(own->b4, own->items.size());
      }
    }
    g = h + 1;
  }
  return Estimates{std::move(est), std::move(b4)};
}

/// The growth pairs of t's consecutive requests, kept and skipped (counted in t).
void growth_pairs(RequestTable& t, const std::vector<std::int32_t>& edits, const std::vector<Req>& reqs,
                  std::int64_t min_growth) {
  // The learned hidden output per edit result (tokens/hidden.hpp): pair k is predicted with what
  // pairs before it taught, then teaches; resets and model switches teach nothing; pairs under
  // min_growth teach but are not kept (a session's own measurements, whatever their size).
  // edits: edit_results of the raw spine's items.
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
}

}  // namespace

RequestTable request_table(Store& store, const std::string& session, std::int64_t min_growth) {
  RequestTable t;
  t.session = session;
  // The raw spine, slimmed (slim_item) once its edit counts are taken, before any context render.
  std::vector<Node> items;
  std::vector<std::int32_t> edits;
  {
    RenderOptions raw;
    raw.strategy = "raw";
    raw.lean_metadata = true;
    Rendered spine = render_context(store, session, raw);
    edits = edit_results(spine.items);
    items.reserve(spine.items.size());
    for (const Node& n : spine.items) items.push_back(slim_item(n));
  }

  const std::vector<Req> reqs = find_requests(store, session, items, t);
  const Estimates e = estimate_requests(store, session, items, reqs);
  for (std::size_t k = 0; k < reqs.size(); ++k) {
    const Node& n = items[reqs[k].node];
    t.requests.push_back(RequestRow{n.id, items[reqs[k].first].id, json_str(n.metadata, "model"), n.seq,
                                    reqs[k].measured, e.est[k], e.b4[k]});
  }
  growth_pairs(t, edits, reqs, min_growth);
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
