#include "strategies/rolling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "render/partial.hpp"
#include "render/recap.hpp"
#include "strategies/rolling_parts.hpp"
#include "strategies/units.hpp"
#include "summarize/prompt.hpp"
#include "summarize/transcript.hpp"
#include "tokens/calibrate.hpp"
#include "tokens/estimate.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

using rolling_parts::ChunkPlan;
using rolling_parts::Chunked;
using rolling_parts::covered_ids;
using rolling_parts::items_tokens;
using rolling_parts::Plan;
using rolling_parts::plan_chunks;
using rolling_parts::summarize_chunks;
using rolling_parts::summary_event;
using rolling_parts::summary_node;
using rolling_parts::summary_not_smaller;

/// The figure a local estimate of this session's context is shown as.
TokenFigure figure(const Plan& p, std::int64_t estimate) { return calibrated_figure(estimate, p.calibration); }

std::size_t cut_index(const Plan& p, std::size_t cut_unit) {
  return cut_unit < p.units.size() ? p.units[cut_unit].begin : p.items.size();
}

/// Renders HEAD (rolling) at the plan's boundary, without the recap node, and takes the figures
/// before: the old summary's recap counts when the render did not include it.
void render_plan(Store& store, const std::string& session, Plan& p, CompactResult& res,
                 std::optional<std::int64_t> at_boundary) {
  p.boundary = at_boundary ? *at_boundary : store.max_seq();
  p.head = plan_head(store, session, p.boundary);
  p.session_max = session_max_seq(store, session);
  RenderOptions ro;
  ro.head = p.head;
  ro.as_of = p.boundary;
  ro.strategy = "rolling";
  ro.notes = false;
  p.r = render_context(store, session, ro);
  refuse_partial_history(p.r.warnings);
  bool render_has_recap = false;
  for (const auto& s : p.r.sections)
    if (s.kind == "recap") render_has_recap = true;
  for (const auto& n : p.r.items)
    if (!is_recap_node(n)) p.items.push_back(n);
  res.head = p.head;

  p.before = p.r.estimated_tokens;
  for (std::size_t i = 0; i < p.items.size(); ++i)
    if (p.r.summary && p.items[i].id == *p.r.summary) p.summary_pos = i;
  if (p.summary_pos) {
    p.old_summary = store.node(p.items[*p.summary_pos].id, false);  // stored form, without the rendered recap
    p.old_covers = store.covers_of(p.old_summary->seq);
    if (auto rc = rolling_recap(store, *p.old_summary)) {
      p.old_recap_tokens = rc->estimated_tokens;
      if (!render_has_recap) p.before += p.old_recap_tokens;  // the projection includes it
    }
  }
  res.estimated_tokens_before = p.before;
  res.estimated_tokens_after = p.before;
  p.calibration = p.r.tokens.calibration;
  res.tokens_before = figure(p, p.before);
  if (p.r.tokens.kind == "measured" && p.before == p.r.estimated_tokens) res.tokens_before = p.r.tokens;
  res.tokens_after = res.tokens_before;
  p.shown_before = res.tokens_before.value;
}

/// A calibrated remainder (what the provider counts beyond the transcript) leaves less room for
/// the tail: cap it so remainder + system + a full summary + a full recap + tail < trigger.
/// Returns the room (unbounded without a remainder or a window).
std::int64_t cap_tail_room(const RollingOptions& opts, std::int64_t max_output, std::int64_t extra, Plan& p) {
  std::int64_t tail_room = std::numeric_limits<std::int64_t>::max();
  if (extra > 0 && opts.window) {
    const RecapOptions recap_defaults;
    tail_room = p.trigger - 1 - extra - items_tokens(p.items, 0, p.sys_end) - max_output - recap_defaults.max_tokens -
                2 * (kMessageOverhead + kBlockOverhead) - 40;
    p.retain_target = std::max<std::int64_t>(1, std::min(p.retain_target, tail_room));
  }
  return tail_room;
}

/// Nothing to evict: status and reason (an open step, a single oversized unit, a tail that needs
/// every unit, or nothing to compact).
void refuse_empty_cut(const RollingOptions& opts, const Plan& p, CompactResult& res) {
  std::int64_t tail = items_tokens(p.items, p.region_start, p.items.size());
  bool over = opts.window && p.shown_before >= p.trigger;
  if (!p.units.empty() && p.units.size() == 1 && p.units[0].open) {
    res.status = "declined";
    res.reason = "the only compactable content is an open step (tool calls without results); it is never "
                 "compacted — retry once it closes";
  } else if (!p.units.empty() && p.units.back().open && p.units.size() == 1) {
    res.status = "declined";
    res.reason = "only an open step remains";
  } else if (over || opts.force) {
    res.status = "declined";
    if (p.units.size() == 1)
      res.reason = fmt::format("the tail is a single unit of {} tokens, larger than the tail budget of {} tokens; "
                               "a unit is never split",
                               tail, p.retain_target);
    else if (p.units.empty())
      res.reason = "nothing after the system prompt and the summary to compact";
    else
      res.reason = fmt::format("every unit is needed for the retained tail of {} tokens ({} tokens after the "
                               "summary)",
                               p.retain_target, tail);
  } else {
    res.status = "noop";
    res.reason = "nothing to compact";
  }
}

/// Builds the plan: render, trigger, retention walk. Sets status/reason on res when nothing is
/// to be done and returns false.
/// at_boundary: plan at that append boundary (replay re-plans a compaction from the state it
/// started from) instead of the current one.
bool make_plan(Store& store, const std::string& session, const RollingOptions& opts, bool reconsolidate,
               std::int64_t max_output, Plan& p, CompactResult& res,
               std::optional<std::int64_t> at_boundary = std::nullopt) {
  render_plan(store, session, p, res, at_boundary);
  // What the calibration adds on top of any estimate: the unseen remainder (0 when it scales).
  const std::int64_t extra = std::max<std::int64_t>(0, p.shown_before - p.before);

  const TriggerCheck t = check_trigger(opts.window, opts.trigger_percent, res.tokens_before, p.before, "rolling");
  p.window_eff = t.window_eff;
  p.trigger = t.trigger;
  if ((!opts.window && !opts.force) || (!t.due && opts.window && !opts.force && !reconsolidate)) {
    res.status = "noop";
    res.reason = t.reason;
    return false;
  }
  p.retain_target = std::max<std::int64_t>(1, ceil_percent(p.window_eff, opts.tail_percent));

  while (p.sys_end < p.items.size() && p.items[p.sys_end].is_model_input() && p.items[p.sys_end].role == role::kSystem)
    ++p.sys_end;
  p.region_start = p.summary_pos ? *p.summary_pos + 1 : p.sys_end;
  p.units = split_units(p.items, p.region_start);
  const std::int64_t tail_room = cap_tail_room(opts, max_output, extra, p);

  // Retention walk, tail to head (docs/strategies.md "Triggers and the tail"), never starting the
  // kept tail inside a turn when it can be helped; a calibrated remainder lowers the bound on a
  // tail moved back.
  std::size_t k = retained_tail_start(
      p.units, p.retain_target, opts.window ? std::min(p.trigger - 1 - extra, tail_room) : tail_room);
  p.cut_unit = k;
  if (p.cut_unit == 0 && !(reconsolidate && p.old_summary)) {
    refuse_empty_cut(opts, p, res);
    return false;
  }
  return true;
}

std::vector<std::string> pick_recap_ids(const Plan& p, std::size_t cut, const RecapOptions& ro) {
  std::vector<std::string> ids;
  for (std::size_t i = cut; i-- > p.region_start && static_cast<int>(ids.size()) < ro.max_messages;)
    if (!user_prompt_text(p.items[i]).empty()) ids.push_back(p.items[i].id);
  if (static_cast<int>(ids.size()) < ro.max_messages && p.old_summary) {
    auto it = p.old_summary->metadata.find("recap_ids");
    if (it != p.old_summary->metadata.end() && it->is_array())
      for (auto r = it->rbegin(); r != it->rend() && static_cast<int>(ids.size()) < ro.max_messages; ++r)
        if (r->is_string()) ids.push_back(r->get<std::string>());
  }
  std::reverse(ids.begin(), ids.end());
  return ids;
}

/// --dry-run: status "planned" and what the pass would cover and keep.
void plan_only(const Plan& p, std::size_t cut, const std::vector<std::string>& covers, std::int64_t evicted_tokens,
               const ChunkPlan& calls, CompactResult& res) {
  res.status = "planned";
  res.reason = fmt::format("would cover {} nodes ({} evicted items, {} tokens) and keep {} items as the tail, in {} "
                           "summarizer calls ({} input tokens){}",
                           covers.size(), cut - p.region_start, evicted_tokens, p.items.size() - cut,
                           calls.leaves + calls.merges, calls.input_tokens,
                           calls.within_cap ? std::string()
                                            : fmt::format("; the call cap of {} stops it after {} of {} evicted units "
                                                          "(partial)",
                                                          calls.cap, calls.units_covered, p.cut_unit));
  res.covers_count = static_cast<std::int64_t>(covers.size());
  res.covers_first = covers.front();
  res.covers_last = covers.back();
  res.plan = Json{{"trigger_tokens", p.trigger},
                  {"retain_tokens", p.retain_target},
                  {"window", p.window_eff},
                  {"previous_summary", p.old_summary ? Json(p.old_summary->id) : Json(nullptr)},
                  {"evicted_items", cut - p.region_start},
                  {"evicted_tokens", evicted_tokens},
                  {"kept_first", cut < p.items.size() ? Json(p.items[cut].id) : Json(nullptr)},
                  {"kept_items", p.items.size() - cut},
                  {"kept_tokens", items_tokens(p.items, cut, p.items.size())},
                  {"units", p.units.size()},
                  {"evicted_units", p.cut_unit},
                  {"summarizer", calls.to_json()}};
}

/// One pass's inputs, its plan and its result, shared by the phases after the plan.
struct Pass {
  Store& store;
  const std::string& session;
  Summarizer& summarizer;
  const RollingOptions& opts;
  std::int64_t max_output;
  const Plan& p;
  CompactResult& res;
};

/// What the chunked summarizer produced and the cut it stands for: every evicted unit, or the
/// units completed before a failure or the call cap (partial).
struct Summarized {
  Chunked c;
  std::size_t cut = 0;
  std::vector<std::string> covers;
  bool partial = false;
};

/// Runs the chunked summarizer (res.calls counts its calls). The error that fails the attempt
/// when no chunk completed or the summarized part cannot be covered.
std::optional<Error> summarize_evicted(Pass& ps, Summarized& sm) {
  const Plan& p = ps.p;
  sm.c = summarize_chunks(p, ps.summarizer, ps.opts, ps.max_output);
  const Chunked& c = sm.c;
  ps.res.calls = c.calls;
  // Keep what completed chunks produced (partial); without any, the attempt failed.
  std::size_t done_units = c.units_done;
  if (c.failure || c.capped) {
    if (done_units == 0 || done_units >= p.cut_unit) {
      if (c.failure) return *c.failure;
      return Error(Exit::environment, "summarizer.calls", "the summarizer call limit was reached");
    }
    sm.partial = true;
  }
  if (sm.partial) {
    sm.cut = cut_index(p, done_units);
    ps.res.remaining_units = static_cast<std::int64_t>(p.cut_unit - done_units);
    ps.res.remaining_tokens = items_tokens(p.items, sm.cut, cut_index(p, p.cut_unit));
    std::string why;
    auto covers = covered_ids(ps.store, p, sm.cut, why);
    if (!covers || covers->empty())
      return Error(Exit::internal, "compact.partial", "cannot cover the summarized part: " + why);
    sm.covers = std::move(*covers);
  }
  return std::nullopt;
}

/// The provenance a pass records on its summary: summarizer, prompt, input digest, parameters, calls.
Json pass_provenance(const Pass& ps, const Chunked& c) {
  const RollingOptions& opts = ps.opts;
  Json provenance{{"summarizer", {{"kind", ps.summarizer.kind()}, {"model", ps.summarizer.model()}}},
                  {"prompt_version", std::string(kDefaultPromptVersion)},
                  {"input_digest", c.input_digest},
                  {"parameters",
                   {{"window", opts.window ? Json(*opts.window) : Json(nullptr)},
                    {"trigger_percent", opts.trigger_percent},
                    {"tail_percent", opts.tail_percent},
                    {"retain_tokens", ps.p.retain_target},
                    {"max_output_tokens", ps.max_output},
                    {"chunk_tokens", c.chunk_tokens},
                    {"instructions", opts.instructions},
                    {"force", opts.force}}},
                  {"calls", c.calls},
                  {"tree", {{"leaves", c.leaves}, {"depth", c.depth}, {"input_tokens", c.input_tokens}}}};
  if (!c.usage.empty()) provenance["usage"] = c.usage;
  return provenance;
}

/// The summary node of a pass: its metadata (superseded summary, recap ids, provenance,
/// calibration) and covers.
Node pass_summary(const Pass& ps, const Summarized& sm, const std::string& summary_id, const std::string& compaction,
                  const Json& provenance, const RecapOptions& ro) {
  const Plan& p = ps.p;
  Node s = summary_node(ps.store, ps.session, summary_id, sm.covers, sm.c.summary);
  s.metadata = Json{{"strategy", "rolling"},
                    {"origin", "compact"},
                    {"compaction", compaction},
                    {"supersedes", p.old_summary ? Json(p.old_summary->id) : Json(nullptr)},
                    {"recap_ids", pick_recap_ids(p, sm.cut, ro)},
                    {"provenance", provenance}};
  // The matched measurement this compaction saw, so renders after it stay calibrated until a
  // newer request is measured (the tail's measured requests saw the uncompacted context).
  if (p.calibration) s.metadata["calibration"] = p.calibration->to_json();
  s.covers_ids = sm.covers;
  return s;
}

/// The recap the projection will quote, from the ids just chosen (no store read needed).
std::int64_t projected_recap_tokens(const Plan& p, const Json& recap_ids, const RecapOptions& ro) {
  std::int64_t new_recap_tokens = 0;
  std::int64_t budget = ro.max_tokens;
  for (const auto& id : recap_ids) {
    const std::string want = id.get<std::string>();
    for (const auto& n : p.items)
      if (n.id == want) {
        std::int64_t t = std::min(budget, estimate_text_tokens(user_prompt_text(n)));
        new_recap_tokens += t;
        budget -= t;
      }
  }
  if (new_recap_tokens > 0) new_recap_tokens += kMessageOverhead + kBlockOverhead + 40;
  return new_recap_tokens;
}

/// The result of a committed pass, with the figures of the render after it.
void report_compacted(Pass& ps, const Summarized& sm, const std::string& summary_id) {
  CompactResult& res = ps.res;
  const Chunked& c = sm.c;
  const std::vector<std::string>& covers = sm.covers;
  res.status = "compacted";
  res.summary_id = summary_id;
  res.covers_count = static_cast<std::int64_t>(covers.size());
  res.covers_first = covers.front();
  res.covers_last = covers.back();
  res.partial = sm.partial;
  if (sm.partial) {
    if (c.failure) {
      res.error_code = c.failure->code();
      res.reason = fmt::format("partial: {} of {} evicted units summarized before the summarizer failed: {}",
                               c.units_done, ps.p.cut_unit, c.failure->what());
    } else {
      res.error_code = "summarizer.calls";
      res.reason = fmt::format("partial: {} of {} evicted units summarized within the limit of {} summarizer calls "
                               "(--max-calls); run compact again for the rest",
                               c.units_done, ps.p.cut_unit, summarizer_call_cap(ps.opts, ps.summarizer, kRemoteCallCap));
    }
  }
  // What a render now reads.
  RenderOptions after;
  after.strategy = "rolling";
  after.notes = false;
  Rendered r2 = render_context(ps.store, ps.session, after);
  res.estimated_tokens_after = r2.estimated_tokens;
  bool has_recap = std::any_of(r2.sections.begin(), r2.sections.end(), [](const Section& x) { return x.kind == "recap"; });
  if (!has_recap && r2.summary)
    if (auto n = ps.store.node(*r2.summary, false))
      if (auto rc = rolling_recap(ps.store, *n)) res.estimated_tokens_after += rc->estimated_tokens;
  res.tokens_after = calibrated_figure(res.estimated_tokens_after, r2.tokens.calibration);
}

/// One pass: plan, bracket, summarize, validate, commit.
CompactResult run_pass(Store& store, const std::string& session, Summarizer& summarizer, const RollingOptions& opts,
                       bool reconsolidate, std::int64_t max_output) {
  CompactResult res;
  res.session = session;
  res.summarizer_kind = summarizer.kind();
  res.summarizer_model = summarizer.model();
  res.window = opts.window;
  Plan p;
  if (!make_plan(store, session, opts, reconsolidate, max_output, p, res)) return res;

  std::size_t cut = cut_index(p, p.cut_unit);
  std::string why;
  auto covers = covered_ids(store, p, cut, why);
  if (!covers || covers->empty()) {
    res.status = "declined";
    res.reason = covers ? "nothing to cover" : "cannot cover a contiguous segment: " + why;
    return res;
  }
  const std::int64_t evicted_tokens = items_tokens(p.items, p.region_start, cut);
  const std::int64_t old_summary_tokens = p.old_summary ? estimate_node_tokens(*p.old_summary) : 0;
  if (opts.dry_run) {
    plan_only(p, cut, *covers, evicted_tokens, plan_chunks(p, summarizer, opts, max_output), res);
    return res;
  }

  // Identity of this attempt: deterministic in the state it starts from.
  CompactionBracket bracket(store, session, p.head, p.session_max, opts.env);
  const std::string compaction = bracket.id();
  const std::string summary_id = "sum-" + bracket.hex();
  res.compaction = compaction;
  bracket.start(Json{{"strategy", "rolling"},
                     {"boundary_seq", p.boundary},
                     {"previous_summary", p.old_summary ? Json(p.old_summary->id) : Json(nullptr)},
                     {"plan", {{"covers_count", covers->size()}, {"first", covers->front()}, {"last", covers->back()}}},
                     {"estimated_tokens_before", p.before},
                     {"summarizer", {{"kind", summarizer.kind()}, {"model", summarizer.model()}}}});

  auto end_with_error = [&](const Error& e) {
    fail_result(res, e);
    bracket.fail(e, res.calls);
    return res;
  };

  Pass ps{store, session, summarizer, opts, max_output, p, res};
  Summarized sm;
  sm.cut = cut;
  sm.covers = std::move(*covers);
  if (auto e = summarize_evicted(ps, sm)) return end_with_error(*e);
  const Chunked& c = sm.c;
  const std::int64_t replaced = old_summary_tokens + items_tokens(p.items, p.region_start, sm.cut);

  // The summary node.
  RecapOptions ro;
  const Json provenance = pass_provenance(ps, c);
  Node s = pass_summary(ps, sm, summary_id, compaction, provenance, ro);
  const std::int64_t summary_tokens = estimate_node_tokens(s);
  const std::int64_t new_recap_tokens = projected_recap_tokens(p, s.metadata["recap_ids"], ro);
  const std::int64_t candidate =
      p.before - p.old_recap_tokens - replaced + summary_tokens + new_recap_tokens;
  if (summary_tokens >= replaced) return end_with_error(summary_not_smaller(summary_tokens, replaced));
  if (candidate >= p.before)
    return end_with_error(Error(Exit::environment, "compact.not_reducing",
                                fmt::format("the compacted render ({} tokens) would not be smaller than now ({} tokens)",
                                            candidate, p.before)));

  // Commit: recheck the source, then compact/summary, the node and compact/end in one transaction.
  auto changed = bracket.commit(
      [&] {
        bracket.append_summary(s, summary_event(provenance, c.summary, sm.covers, summary_tokens, replaced));
      },
      res.calls,
      Json{{"summary_id", summary_id},
           {"partial", sm.partial},
           {"error", c.failure ? Json{{"code", c.failure->code()}, {"message", c.failure->what()}} : Json(nullptr)}});
  if (changed) {
    fail_result(res, *changed);
    return res;
  }
  report_compacted(ps, sm, summary_id);
  return res;
}

}  // namespace

void validate_rolling_options(const RollingOptions& o) {
  validate_compaction_options(o);
  if (o.max_passes < 1) throw Error(Exit::usage, "compact.options", "the pass limit must be at least 1");
}

void apply_rolling_config(const Json& config, RollingOptions& opts) { apply_compaction_config(config, "rolling", opts); }

CompactResult compact_rolling(Store& store, const std::string& session, Summarizer& summarizer,
                              const RollingOptions& opts) {
  validate_rolling_options(opts);
  std::int64_t window_eff = opts.window.value_or(0);
  std::int64_t max_output = opts.max_output_tokens > 0
                                ? opts.max_output_tokens
                                : std::min<std::int64_t>(4096, std::max<std::int64_t>(256, window_eff / 20));
  if (window_eff == 0 && opts.max_output_tokens <= 0) max_output = 4096;
  CompactResult first = run_pass(store, session, summarizer, opts, false, max_output);
  first.passes = 1;
  if (first.status != "compacted" || !opts.window || opts.dry_run || first.partial) return first;
  CompactResult total = first;
  const std::int64_t trigger = ceil_percent(*opts.window, opts.trigger_percent);
  for (int pass = 2; pass <= opts.max_passes && total.tokens_after.value >= trigger; ++pass) {
    // Still over the trigger (docs/strategies.md "rolling"): re-compact the head checkpoint
    // with half the output budget, unless the kept tail alone is the problem.
    RenderOptions ro;
    ro.notes = false;
    Rendered r = render_context(store, session, ro);
    std::int64_t summary_part = 0;
    for (const auto& s : r.sections)
      if (s.kind == "summary") summary_part += s.estimated_tokens;  // the recap and the tail do not shrink by re-compaction
    if (total.tokens_after.value - summary_part >= trigger) {
      const std::int64_t unseen = std::max<std::int64_t>(0, total.tokens_after.value - total.estimated_tokens_after);
      total.reason = fmt::format("still {} {} tokens after compaction: the kept tail alone exceeds the trigger of {} "
                                 "tokens (a single unit larger than the budget is not split){}",
                                 total.tokens_after.kind, total.tokens_after.value, trigger,
                                 unseen > 0 ? fmt::format("; {} of them are what the provider measured beyond the "
                                                          "transcript (system prompt, tool definitions)",
                                                          unseen)
                                            : std::string());
      break;
    }
    max_output = std::max<std::int64_t>(64, max_output / 2);
    CompactResult next = run_pass(store, session, summarizer, opts, true, max_output);
    total.calls += next.calls;
    total.passes = pass;
    if (next.status != "compacted") {
      total.reason = fmt::format("still {} tokens after {} passes; re-compaction {}: {}", total.tokens_after.value,
                                 pass - 1, next.status, next.reason);
      break;
    }
    total.summary_id = next.summary_id;
    total.compaction = next.compaction;
    total.covers_count = next.covers_count;
    total.covers_first = next.covers_first;
    total.covers_last = next.covers_last;
    total.estimated_tokens_after = next.estimated_tokens_after;
    total.tokens_after = next.tokens_after;
    total.partial = next.partial;
  }
  return total;
}

std::optional<RollingReplan> replan_rolling(Store& store, const Node& summary, std::int64_t boundary,
                                            Summarizer& answers, std::string& why) {
  const Json prov = summary.metadata.contains("provenance") && summary.metadata["provenance"].is_object()
                        ? summary.metadata["provenance"]
                        : Json::object();
  const Json par = prov.contains("parameters") && prov["parameters"].is_object() ? prov["parameters"] : Json::object();
  auto int_of = [&](const char* k, std::int64_t dflt) {
    return par.contains(k) && par[k].is_number_integer() ? par[k].get<std::int64_t>() : dflt;
  };
  RollingOptions opts;
  if (par.contains("window") && par["window"].is_number_integer()) opts.window = par["window"].get<std::int64_t>();
  opts.trigger_percent = static_cast<int>(int_of("trigger_percent", opts.trigger_percent));
  opts.tail_percent = static_cast<int>(int_of("tail_percent", opts.tail_percent));
  opts.instructions = json_str(par, "instructions");
  opts.force = par.contains("force") && par["force"].is_boolean() && par["force"].get<bool>();
  opts.summarizer_window = 2 * int_of("chunk_tokens", 0);  // summarize_chunks halves it back
  const std::int64_t max_output = int_of("max_output_tokens", 4096);
  why = "no plan";
  // A first pass, else a re-compaction of the head checkpoint (compact_rolling's later passes).
  for (bool reconsolidate : {false, true}) {
    Plan p;
    CompactResult res;
    if (!make_plan(store, summary.session, opts, reconsolidate, max_output, p, res, boundary)) {
      why = fmt::format("the plan at boundary {} is {}: {}", boundary, res.status, res.reason);
      continue;
    }
    std::size_t cut = cut_index(p, p.cut_unit);
    std::string cover_why;
    auto covers = covered_ids(store, p, cut, cover_why);
    if (!covers || covers->empty()) {
      why = "the re-planned cut covers nothing: " + cover_why;
      continue;
    }
    Chunked c = summarize_chunks(p, answers, opts, max_output);
    if (c.failure && c.failure->code() == "replay.unrecorded") {
      why = c.failure->what();
      continue;
    }
    if ((c.failure || c.capped) && c.units_done > 0 && c.units_done < p.cut_unit) {  // partial, as run_pass keeps it
      cut = cut_index(p, c.units_done);
      covers = covered_ids(store, p, cut, cover_why);
      if (!covers || covers->empty()) {
        why = "the re-planned partial cut covers nothing: " + cover_why;
        continue;
      }
    }
    RollingReplan out;
    out.reconsolidate = reconsolidate;
    out.covers_ids = *covers;
    out.text = frame_summary(c.summary);
    out.input_digest = c.input_digest;
    out.calls = c.calls;
    if (c.failure) out.failure = c.failure->code();
    return out;
  }
  return std::nullopt;
}

}  // namespace ctxfold
