#include "strategies/region.hpp"

#include <fmt/format.h>

#include <unordered_set>

#include "model/strategy_label.hpp"
#include "render/recap.hpp"
#include "strategies/rolling.hpp"
#include "strategies/rolling_parts.hpp"
#include "strategies/units.hpp"
#include "summarize/prompt.hpp"
#include "summarize/transcript.hpp"
#include "tokens/estimate.hpp"

namespace ctxfold {
namespace {

using rolling_parts::Chunked;
using rolling_parts::covered_ids;
using rolling_parts::items_tokens;
using rolling_parts::Plan;
using rolling_parts::summarize_chunks;
using rolling_parts::summary_event;
using rolling_parts::summary_node;
using rolling_parts::summary_not_smaller;

/// The refusal of a segment compact_region cannot take, with a hint on choosing one.
Error refuse(const std::string& msg, std::string hint = {}) {
  return Error(Exit::usage, "compact.region", msg,
               hint.empty() ? "choose --from/--to among the ids `ctxfold render` shows, on unit boundaries" : hint);
}

/// What one region pass is given.
struct Region {
  Store& store;
  const std::string& session;
  Summarizer& summarizer;
  const RegionOptions& opts;
  const std::string& render_strategy;
};

/// HEAD at the plan's boundary (the current one, or at_boundary for a re-plan).
void plan_head(Store& store, const std::string& session, std::optional<std::int64_t> at_boundary, Plan& p,
               CompactResult& res) {
  p.boundary = at_boundary ? *at_boundary : store.max_seq();
  p.head = plan_head(store, session, p.boundary);
  res.head = p.head;
  p.session_max = session_max_seq(store, session);
}

/// Refuses --from/--to ids that are unknown at the boundary, of another session, or view nodes.
void check_endpoints(const Region& rg, const Plan& p) {
  for (const std::string* id : {&rg.opts.from, &rg.opts.to}) {
    auto n = rg.store.node(*id, false);
    if (!n || n->seq > p.boundary) throw refuse(fmt::format("no node '{}'", *id));
    if (n->session != rg.session)
      throw refuse(fmt::format("node '{}' belongs to session '{}', not '{}'", *id, n->session, rg.session),
                   "pass --session with the nodes' session");
    if (n->is_view()) throw refuse(fmt::format("node '{}' is a summary, not a row of the chain", *id));
  }
}

/// The positions b <= e of --from and --to in the projection; refused when one is not shown there.
void locate_segment(const Region& rg, const Plan& p, std::size_t& b, std::size_t& e) {
  auto pos_of = [&](const std::string& id) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < p.items.size(); ++i)
      if (p.items[i].id == id) return i;
    return std::nullopt;
  };
  auto on_spine = [&](const std::string& id) {
    std::optional<std::string> cur = p.head;
    for (std::int64_t steps = 0; cur && steps <= p.boundary; ++steps) {
      if (*cur == id) return true;
      cur = rg.store.predecessor_of(*cur);
    }
    return false;
  };
  const RegionOptions& opts = rg.opts;
  for (const std::string* id : {&opts.from, &opts.to}) {
    auto at = pos_of(*id);
    if (!at) {
      if (!on_spine(*id))
        throw refuse(fmt::format("node '{}' is not on HEAD's spine (HEAD is '{}')", *id, p.head),
                     "checkout the branch that holds it first");
      throw refuse(fmt::format("node '{}' is hidden under a summary in HEAD's projection, or is not a message", *id));
    }
    (id == &opts.from ? b : e) = *at;
  }
  if (b > e)
    throw refuse(fmt::format("--from '{}' comes after --to '{}' on HEAD's spine", opts.from, opts.to),
                 "swap them: --from is the older node");
}

/// Refuses a segment holding another strategy's summary or a system message.
void check_segment_rows(const Plan& p, std::size_t b, std::size_t e) {
  for (std::size_t i = b; i <= e; ++i) {
    const Node& n = p.items[i];
    if (n.is_view() && !has_label(n.metadata, StrategyLabel::region))
      throw refuse(fmt::format("the segment holds the {} summary '{}'",
                               json_str(n.metadata, "strategy", std::string(label_name(StrategyLabel::rolling))), n.id),
                   "a region lies after the rolling summary and outside lcm folds");
    if (!n.is_view() && n.role == role::kSystem)
      throw refuse(fmt::format("the segment holds the system message '{}'", n.id));
  }
}

/// The units of items [b, e] become the plan's evicted units; refused when the segment holds an
/// open step or a boundary is not a unit boundary.
void select_units(Plan& p, std::size_t b, std::size_t e) {
  std::vector<Unit> all = split_units(p.items, 0);
  std::optional<std::size_t> ub, ue;
  for (std::size_t u = 0; u < all.size(); ++u) {
    if (all[u].begin == b) ub = u;
    if (all[u].end == e + 1) ue = u;
  }
  for (std::size_t u = ub.value_or(0); ub && ue && u <= *ue; ++u)
    if (all[u].open)
      throw refuse(fmt::format("the segment holds an open step (a tool call still without its result) at '{}'",
                               p.items[all[u].begin].id),
                   "end the region before the step that is still running");
  if (!ub || !ue) {
    PairingGaps g = pairing_gaps(p.items, b, e + 1);
    std::string detail;
    if (!g.unanswered_calls.empty()) detail = fmt::format(": tool call {} has its result outside", g.unanswered_calls.front());
    else if (!g.orphan_results.empty()) detail = fmt::format(": tool result {} has its call outside", g.orphan_results.front());
    const std::size_t at = ub ? e : b;
    bool open = false;
    for (const auto& u : all)
      if (u.open && u.begin <= e) open = true;
    if (open)
      throw refuse(fmt::format("the segment holds an open step (a tool call still without its result)"),
                   "end the region before the step that is still running");
    throw refuse(fmt::format("--{} '{}' is not on a unit boundary: it would split a step's tool calls from their results "
                             "or cut inside a turn{}",
                             ub ? "to" : "from", p.items[at].id, detail));
  }
  p.region_start = b;
  p.units.assign(all.begin() + static_cast<std::ptrdiff_t>(*ub), all.begin() + static_cast<std::ptrdiff_t>(*ue) + 1);
  p.cut_unit = p.units.size();
}

/// The chain segment items [region_start, e] cover; refused when it is not contiguous or partly
/// overlaps a standing region summary.
std::vector<std::string> cover_region(const Region& rg, const Plan& p, std::size_t e) {
  std::string why;
  auto covers = covered_ids(rg.store, p, e + 1, why);
  if (!covers || covers->empty()) throw refuse("cannot cover a contiguous segment: " + why);
  // Disjoint from the region summaries that stand: one it contains whole is allowed.
  std::unordered_set<std::string> mine(covers->begin(), covers->end());
  for (const auto& f : rg.store.summary_ranges(rg.session, StrategyLabel::region, p.boundary)) {
    std::vector<std::string> c = rg.store.covers_of(f.seq);
    std::size_t shared = 0;
    for (const auto& id : c) shared += mine.count(id);
    if (shared > 0 && shared < c.size())
      throw refuse(fmt::format("the segment partly overlaps region summary '{}' ({} of its {} rows)", f.id, shared, c.size()),
                   "choose a segment that contains it whole or lies outside it");
  }
  return std::move(*covers);
}

/// Rolling's chunked summarizer over the segment, with the region's shared options.
Chunked summarize_region(const Region& rg, const Plan& p, std::int64_t max_output) {
  RollingOptions chunk_opts;
  static_cast<CompactionOptions&>(chunk_opts) = rg.opts;
  return summarize_chunks(p, rg.summarizer, chunk_opts, max_output);
}

/// The provenance a region summary records: summarizer, prompt, input digest, parameters, calls.
Json region_provenance(const Region& rg, const Chunked& c, std::int64_t max_output) {
  const RegionOptions& opts = rg.opts;
  Json provenance{{"summarizer", {{"kind", rg.summarizer.kind()}, {"model", rg.summarizer.model()}}},
                  {"prompt_version", std::string(kDefaultPromptVersion)},
                  {"input_digest", c.input_digest},
                  {"parameters",
                   {{"from", opts.from},
                    {"to", opts.to},
                    {"max_output_tokens", max_output},
                    {"chunk_tokens", c.chunk_tokens},
                    {"instructions", opts.instructions}}},
                  {"calls", c.calls}};
  if (!c.usage.empty()) provenance["usage"] = c.usage;
  return provenance;
}

/// The bracket around summarizing the segment and committing its summary; the result after it.
void commit_region(const Region& rg, const Plan& p, const std::vector<std::string>& covers, std::int64_t replaced,
                   std::int64_t max_output, CompactResult& res) {
  Store& store = rg.store;
  const RegionOptions& opts = rg.opts;
  CompactionBracket bracket(store, rg.session, p.head, p.session_max, opts.env);
  const std::string summary_id = "reg-" + bracket.hex();
  res.compaction = bracket.id();
  bracket.start(Json{{"strategy", label_name(StrategyLabel::region)},
                     {"boundary_seq", p.boundary},
                     {"plan", {{"covers_count", covers.size()}, {"first", covers.front()}, {"last", covers.back()}}},
                     {"region", {{"from", opts.from}, {"to", opts.to}}},
                     {"estimated_tokens_before", p.r.estimated_tokens},
                     {"summarizer", {{"kind", rg.summarizer.kind()}, {"model", rg.summarizer.model()}}}});
  auto end_with_error = [&](const Error& err) {
    fail_result(res, err);
    bracket.fail(err, res.calls);
  };
  Chunked c = summarize_region(rg, p, max_output);
  res.calls = c.calls;
  if (c.failure) return end_with_error(*c.failure);
  if (c.capped || c.units_done < p.cut_unit)
    return end_with_error(Error(Exit::environment, "summarizer.calls", "the summarizer call limit was reached"));

  Node s = summary_node(store, rg.session, summary_id, covers, c.summary);
  const Json provenance = region_provenance(rg, c, max_output);
  s.metadata = Json{{"strategy", label_name(StrategyLabel::region)},
                    {"origin", "compact"},
                    {"compaction", bracket.id()},
                    {"region", {{"from", opts.from}, {"to", opts.to}}},
                    {"provenance", provenance}};
  s.covers_ids = covers;
  const std::int64_t summary_tokens = estimate_node_tokens(s);
  if (summary_tokens >= replaced) return end_with_error(summary_not_smaller(summary_tokens, replaced));
  auto changed = bracket.commit(
      [&] {
        bracket.append_summary(s, summary_event(provenance, c.summary, covers, summary_tokens, replaced));
      },
      res.calls, Json{{"summary_id", summary_id}, {"partial", false}, {"error", nullptr}});
  if (changed) {
    fail_result(res, *changed);
    return;
  }
  res.status = "compacted";
  res.summary_id = summary_id;
  RenderOptions after;
  after.strategy = rg.render_strategy;
  Rendered r2 = render_context(store, rg.session, after);
  res.estimated_tokens_after = r2.estimated_tokens;
  res.tokens_after = r2.tokens;
  res.details = Json{{"region", {{"from", opts.from}, {"to", opts.to}}}};
}

/// compact_region, or with `replan` its re-plan at `at_boundary`: the same selection and checks,
/// then the chunked requests issued to `summarizer` and the outcome put in *replan; nothing written.
CompactResult region_pass(Store& store, const std::string& session, Summarizer& summarizer, const RegionOptions& opts,
                          const std::string& render_strategy, std::optional<std::int64_t> at_boundary,
                          RollingReplan* replan) {
  validate_compaction_options(opts);
  const Region rg{store, session, summarizer, opts, render_strategy};
  CompactResult res;
  res.session = session;
  res.strategy = label_name(StrategyLabel::region);
  res.summarizer_kind = summarizer.kind();
  res.summarizer_model = summarizer.model();
  Plan p;
  plan_head(store, session, at_boundary, p, res);
  check_endpoints(rg, p);
  RenderOptions ro;
  ro.head = p.head;
  ro.as_of = p.boundary;
  ro.strategy = render_strategy;
  p.r = render_context(store, session, ro);
  for (const auto& n : p.r.items)
    if (!is_recap_node(n)) p.items.push_back(n);
  std::size_t b = 0, e = 0;
  locate_segment(rg, p, b, e);
  check_segment_rows(p, b, e);
  select_units(p, b, e);
  const std::vector<std::string> covers = cover_region(rg, p, e);
  const std::int64_t replaced = items_tokens(p.items, b, e + 1);
  res.covers_count = static_cast<std::int64_t>(covers.size());
  res.covers_first = covers.front();
  res.covers_last = covers.back();
  res.estimated_tokens_before = p.r.estimated_tokens;
  res.tokens_before = p.r.tokens;
  res.tokens_after = p.r.tokens;
  res.estimated_tokens_after = p.r.estimated_tokens;
  const std::int64_t max_output =
      opts.max_output_tokens > 0 ? opts.max_output_tokens : std::min<std::int64_t>(4096, std::max<std::int64_t>(256, replaced / 4));
  if (opts.dry_run) {
    res.status = "planned";
    res.reason = fmt::format("would cover {} nodes ({} items, {} tokens) from '{}' to '{}'", covers.size(), e + 1 - b,
                             replaced, opts.from, opts.to);
    res.plan = Json{{"from", opts.from}, {"to", opts.to}, {"items", e + 1 - b}, {"tokens", replaced}, {"units", p.cut_unit}};
    return res;
  }
  if (replan) {
    Chunked c = summarize_region(rg, p, max_output);
    replan->covers_ids = covers;
    replan->text = frame_summary(c.summary);
    replan->input_digest = c.input_digest;
    replan->calls = c.calls;
    if (c.failure) replan->failure = c.failure->code();
    if (c.failure) replan->why = c.failure->what();
    res.status = "replanned";
    return res;
  }
  commit_region(rg, p, covers, replaced, max_output, res);
  return res;
}
}  // namespace

CompactResult compact_region(Store& store, const std::string& session, Summarizer& summarizer,
                             const RegionOptions& opts, const std::string& render_strategy) {
  return region_pass(store, session, summarizer, opts, render_strategy, std::nullopt, nullptr);
}

std::optional<RollingReplan> replan_region(Store& store, const Node& summary, std::int64_t boundary, Summarizer& answers,
                                           std::string& why) {
  const Json prov = summary.metadata.contains("provenance") && summary.metadata["provenance"].is_object()
                        ? summary.metadata["provenance"]
                        : Json::object();
  const Json par = prov.contains("parameters") && prov["parameters"].is_object() ? prov["parameters"] : Json::object();
  RegionOptions opts;
  opts.from = json_str(par, "from");
  opts.to = json_str(par, "to");
  opts.instructions = json_str(par, "instructions");
  if (par.contains("max_output_tokens") && par["max_output_tokens"].is_number_integer())
    opts.max_output_tokens = par["max_output_tokens"].get<std::int64_t>();
  if (par.contains("chunk_tokens") && par["chunk_tokens"].is_number_integer())
    opts.summarizer_window = 2 * par["chunk_tokens"].get<std::int64_t>();
  why = "no plan";
  // The projection the segment was chosen in (the session's strategy then, not recorded): rolling,
  // else lcm, else snapcompact.
  for (StrategyLabel view : {StrategyLabel::rolling, StrategyLabel::lcm, StrategyLabel::snapcompact}) {
    const std::string strategy(label_name(view));
    RollingReplan out;
    try {
      region_pass(store, summary.session, answers, opts, strategy, boundary, &out);
    } catch (const Error& e) {
      why = fmt::format("the region plan under {} at boundary {} is refused: {}", strategy, boundary, e.what());
      continue;
    }
    if (out.failure && *out.failure == "replay.unrecorded") {
      why = out.why;
      continue;
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace ctxfold
