#include "forensics/request_table.hpp"
#include "forensics/lineage.hpp"

#include "render/figures.hpp"

#include "tokens/estimate.hpp"
#include "tokens/hidden.hpp"

#include <algorithm>
#include <set>
#include <cmath>

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

/// The context a request saw, as figures (render_figures: ~40 bytes an item, never
/// the items themselves), and the seq of the rolling summary in it (-1: none).
struct Ctx {
  std::vector<ItemFigure> figs;
  std::int64_t summary_seq = -1;
  std::size_t scan = 0;  // where the last seq was found: requests of a run ascend

  /// The index of the item with this seq (seqs of stored nodes are unique; synthetic items have 0).
  std::optional<std::size_t> find(std::int64_t seq) {
    for (std::size_t pass = 0; pass < 2; ++pass) {
      const std::size_t from = pass == 0 ? scan : 0, to = pass == 0 ? figs.size() : std::min(scan, figs.size());
      for (std::size_t i = from; i < to; ++i)
        if (figs[i].seq == seq) {
          scan = i;
          return i;
        }
    }
    return std::nullopt;
  }
};

Ctx context_at(Store& store, const std::string& session, const std::string& head, std::int64_t as_of) {
  RenderOptions ro;
  ro.head = head;
  ro.as_of = as_of;
  ro.strategy = "rolling";
  ro.lean_metadata = true;
  RenderedFigures f = render_figures(store, session, ro, false);  // estimates only
  const Rendered& r = f.r;
  Ctx c;
  if (r.summary)
    for (const Node& n : r.items)
      if (n.id == *r.summary) {
        c.summary_seq = n.seq;
        break;
      }
  c.figs = std::move(f.figures);
  return c;
}

/// One measured request on the raw spine: what the table reads of it once the spine is gone.
struct Req {
  std::int64_t first;   // seq of its first output node
  std::int64_t active;  // seq of the active summary when the request was made, -1 none
  std::int64_t edits;   // edit results on the raw spine since the previous request's first node
};

/// The measured requests on the raw spine, in order, and their rows in t (estimates still 0);
/// counts the ones without usage in t.
std::vector<Req> find_requests(Store& store, const std::string& session, const RenderedFigures& spine,
                               const std::set<std::int64_t>& shared, RequestTable& t) {
  const std::vector<ItemFigure>& items = spine.figures;
  std::vector<Req> reqs;
  std::size_t prev_first = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!items[i].has(ItemFigure::kAssistant)) continue;
    // usage is taken from the last node of a response
    bool more = i + 1 < items.size() && items[i + 1].has(ItemFigure::kAssistant) &&
                !items[i].has(ItemFigure::kNoMessageId) && items[i + 1].has(ItemFigure::kSameMessageId);
    if (more) continue;
    if (items[i].measured < 0) {
      ++t.skipped_no_usage;
      continue;
    }
    if (shared.count(items[i].seq)) {  // the parent's request, replayed (docs/forensics.md "Lineage")
      ++t.skipped_shared_prefix;
      continue;
    }
    std::size_t first = figure_request_start(items, i);
    auto act = store.active_summary(session, items[first].seq);
    const std::int64_t edits = reqs.empty() ? 0 : figure_edits_between(items, prev_first, first);
    reqs.push_back({items[first].seq, act ? act->seq : -1, edits});
    t.requests.push_back(RequestRow{figure_node_id(store, spine, i), figure_node_id(store, spine, first),
                                    spine.models[items[i].model], items[i].seq, items[i].measured, 0, 0});
    prev_first = first;
  }
  return reqs;
}

/// The context request q was made in; nullopt when its first node's predecessor is missing.
std::optional<Ctx> render_for(Store& store, const std::string& session, const Req& q) {
  auto f = store.node_by_seq(q.first, false);
  if (!f || !f->predecessor) return Ctx{};
  // The state the request was made in: up to its first output node (or its predecessor, should
  // an import have appended that later).
  auto pred = store.node(*f->predecessor, false);
  if (!pred) return std::nullopt;
  return context_at(store, session, *f->predecessor, std::max(f->seq, pred->seq));
}

/// The content and bytes4 estimates of each request's context, by request.
struct Estimates {
  std::vector<std::int64_t> est, b4;
};

Estimates estimate_requests(Store& store, const std::string& session, const std::vector<Req>& reqs) {
  // One render per run of requests sharing the active summary: the latest one's context; earlier
  // requests of the run are prefixes of it. A request missing from that render gets its own.
  std::vector<std::int64_t> est(reqs.size()), b4(reqs.size());
  std::size_t g = 0;
  while (g < reqs.size()) {
    std::size_t h = g;
    while (h + 1 < reqs.size() && reqs[h + 1].active == reqs[g].active) ++h;
    std::optional<Ctx> c = render_for(store, session, reqs[h]);
    std::vector<std::size_t> ks, ends;  // the run's requests found in c, and their ends
    for (std::size_t k = g; k <= h; ++k) {
      const std::int64_t f = reqs[k].first;
      std::optional<std::size_t> end;
      if (c && k == h) end = c->figs.size();
      else if (c && f > c->summary_seq) end = c->find(f);
      if (end) {
        ks.push_back(k);
        ends.push_back(*end);
      } else if (auto own = render_for(store, session, reqs[k])) {
        const FigurePrefix p = figure_prefixes(own->figs, {own->figs.size()}).front();
        est[k] = p.estimated;
        b4[k] = p.bytes4;
      }
    }
    if (c) {
      const std::vector<FigurePrefix> ps = figure_prefixes(c->figs, ends);
      for (std::size_t j = 0; j < ks.size(); ++j) {
        est[ks[j]] = ps[j].estimated;
        b4[ks[j]] = ps[j].bytes4;
      }
    }
    g = h + 1;
  }
  return Estimates{std::move(est), std::move(b4)};
}

/// The growth pairs of t's consecutive requests, kept and skipped (counted in t).
void growth_pairs(RequestTable& t, const std::vector<Req>& reqs, std::int64_t min_growth) {
  // The learned hidden output per edit result (tokens/hidden.hpp): pair k is predicted with what
  // pairs before it taught, then teaches; resets and model switches teach nothing; pairs under
  // min_growth teach but are not kept (a session's own measurements, whatever their size).
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
    const std::int64_t n_edits = reqs[k].edits;
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
  // The raw spine as figures (~40 bytes a node, and the results waiting for their edit call
  // while it is walked), read for its requests and dropped; then each run's context as figures
  // without edit counts, one at a time.
  std::vector<Req> reqs;
  {
    RenderOptions raw;
    raw.strategy = "raw";
    raw.lean_metadata = true;
    const RenderedFigures spine = render_figures(store, session, raw);
    std::set<std::int64_t> shared;
    const auto lineage = session_lineage(store);
    if (auto l = lineage.find(session); l != lineage.end())
      for (const auto& [id, orig] : l->second.shared)
        if (auto n = store.node(id, false)) shared.insert(n->seq);
    reqs = find_requests(store, session, spine, shared, t);
  }
  const Estimates e = estimate_requests(store, session, reqs);
  for (std::size_t k = 0; k < reqs.size(); ++k) {
    t.requests[k].estimated = e.est[k];
    t.requests[k].bytes4 = e.b4[k];
  }
  growth_pairs(t, reqs, min_growth);
  return t;
}

namespace {

double relative(std::int64_t pred, std::int64_t meas) {
  return meas == 0 ? 0.0 : static_cast<double>(pred - meas) / static_cast<double>(meas);
}
double round4(double x) { return std::round(x * 10000.0) / 10000.0; }

Json request_json(const RequestRow& r) {
  return Json{{"node", r.node},         {"first", r.first},       {"seq", r.seq},
              {"model", r.model},       {"measured", r.measured}, {"estimated", r.estimated},
              {"bytes4", r.bytes4},     {"remainder", r.measured - r.estimated}};
}

/// The relative errors of the pairs, one list per estimator, in pair order.
struct PairErrors {
  std::vector<double> b4, est, cal, rem, ratio, total;
};

/// Adds pair p's errors to e.
void add_errors(const RequestTable& t, const GrowthPair& p, PairErrors& e) {
  e.b4.push_back(relative(p.bytes4, p.measured));
  e.est.push_back(relative(p.estimated, p.measured));
  e.cal.push_back(relative(p.calibrated, p.measured));
  e.rem.push_back(relative(p.remainder, p.measured));
  e.ratio.push_back(relative(p.ratio, p.measured));
  e.total.push_back(relative(t.requests[p.from].measured + p.calibrated, t.requests[p.to].measured));
}

/// Pair p's JSON; its errors are added to e.
Json pair_json(const RequestTable& t, const GrowthPair& p, PairErrors& e) {
  const RequestRow& b = t.requests[p.to];
  add_errors(t, p, e);
  const double ee = e.est.back(), eb = e.b4.back(), ec = e.cal.back(), em = e.rem.back(), er = e.ratio.back();
  return Json{{"from", t.requests[p.from].node},
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
              {"ratio_error", round4(er)}};
}

Json head_json(const RequestTable& t, std::int64_t min_growth) {
  Json j = Json::object();
  j["schema"] = "ctxfold.tokens/1";
  j["session"] = t.session;
  j["estimator"] = kEstimatorVersion;
  j["min_growth"] = min_growth;
  return j;
}

Json summary_json(const RequestTable& t, const PairErrors& e) {
  auto stats = [&](const std::vector<double>& xs) {
    ErrorStats s = error_stats(xs);
    // No pair, no error to state: null, never a perfect 0.
    if (s.n == 0) return Json{{"n", 0}, {"median", nullptr}, {"p90", nullptr}};
    return Json{{"n", s.n}, {"median", round4(s.median)}, {"p90", round4(s.p90)}};
  };
  return Json{{"pairs", t.pairs.size()},          {"bytes4", stats(e.b4)},   {"estimated", stats(e.est)},
              {"calibrated", stats(e.cal)},        {"remainder", stats(e.rem)}, {"ratio", stats(e.ratio)},
              {"calibrated_total", stats(e.total)}};
}

/// The members after "pairs": skipped, summary (the pairs' error stats), current.
Json tail_json(const RequestTable& t, const PairErrors& e, const TokenFigure& current) {
  Json j = Json::object();
  j["skipped"] = Json{{"small", t.skipped_small},
                      {"reset", t.skipped_reset},
                      {"model_switch", t.skipped_model_switch},
                      {"no_usage", t.skipped_no_usage},
                      {"shared_prefix", t.skipped_shared_prefix}};
  j["summary"] = summary_json(t, e);
  j["current"] = current.to_json();
  return j;
}

}  // namespace

Json request_table_json(const RequestTable& t, std::int64_t min_growth, const TokenFigure& current) {
  Json j = head_json(t, min_growth);
  Json reqs = Json::array();
  for (const auto& r : t.requests) reqs.push_back(request_json(r));
  PairErrors e;
  Json pairs = Json::array();
  for (const auto& p : t.pairs) pairs.push_back(pair_json(t, p, e));
  j["requests"] = std::move(reqs);
  j["pairs"] = std::move(pairs);
  const Json tail = tail_json(t, e, current);
  for (auto it = tail.begin(); it != tail.end(); ++it) j[it.key()] = *it;
  return j;
}

Json request_table_summary_json(const RequestTable& t) {
  PairErrors e;
  for (const auto& p : t.pairs) add_errors(t, p, e);
  return summary_json(t, e);
}

void write_request_table_json(const RequestTable& t, std::int64_t min_growth, const TokenFigure& current,
                              const std::function<void(const std::string&)>& out) {
  // The document's members in its order, each array element dumped on its own: the compact dump
  // of an object or array is its members' dumps joined by commas.
  std::string head = dump_json(head_json(t, min_growth));
  head.pop_back();  // the closing brace
  out(head + ",\"requests\":[");
  for (std::size_t k = 0; k < t.requests.size(); ++k) out((k ? "," : "") + dump_json(request_json(t.requests[k])));
  out("],\"pairs\":[");
  PairErrors e;
  for (std::size_t k = 0; k < t.pairs.size(); ++k) out((k ? "," : "") + dump_json(pair_json(t, t.pairs[k], e)));
  std::string tail = dump_json(tail_json(t, e, current));
  tail[0] = ',';  // its opening brace: the document goes on
  out("]" + tail);
}

}  // namespace ctxfold
