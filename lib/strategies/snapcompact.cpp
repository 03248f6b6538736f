#include "strategies/snapcompact.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "render/render.hpp"
#include "store/recorded_model.hpp"
#include "render/partial.hpp"
#include "strategies/units.hpp"
#include "summarize/transcript.hpp"
#include "tokens/estimate.hpp"
#include "util/digest.hpp"

namespace ctxfold {

void apply_snapcompact_config(const Json& config, SnapcompactOptions& opts) {
  Json sec = apply_compaction_config(config, "snapcompact", opts);
  if (auto v = config_int(sec, "snapcompact", "archivePercent", 1, 100)) opts.archive_percent = static_cast<int>(*v);
  if (auto v = config_int(sec, "snapcompact", "maxFrames", 1, 1000)) opts.max_frames = static_cast<int>(*v);
}

std::string archive_node_text(const Node& n) {
  TranscriptOptions t;
  t.max_tool_result_tokens = std::int64_t(1) << 40;  // the archive keeps every character
  t.max_tool_input_tokens = std::int64_t(1) << 40;
  return node_transcript(n, t);
}

namespace {

void validate(const SnapcompactOptions& o) {
  validate_compaction_options(o);
  if (o.archive_percent < 1 || o.archive_percent > 100)
    throw Error(Exit::usage, "compact.options", "--archive-percent must be between 1 and 100");
  if (o.max_frames && (*o.max_frames < 1 || *o.max_frames > 1000))
    throw Error(Exit::usage, "compact.options", "--max-frames must be between 1 and 1000");
}

RenderOptions snap_render(const SnapcompactOptions& o, std::optional<std::string> head, std::int64_t as_of, bool encode) {
  RenderOptions ro;
  ro.head = std::move(head);
  ro.as_of = as_of;
  ro.strategy = "snapcompact";
  ro.model = o.model;
  ro.window = o.window;
  ro.archive_percent = o.archive_percent;
  ro.max_frames = o.max_frames;
  ro.encode_frames = encode;
  ro.notes = false;
  return ro;
}

/// What one run is given: the options with the model resolved, and that model.
struct Snap {
  Store& store;
  const std::string& session;
  const SnapcompactOptions& opts;
  const ModelInfo& model;
  const std::string& model_source;  // "flag", "session" or "default"
};

/// Everything the run needs, frozen at the planning boundary.
struct SnapPlan {
  std::int64_t boundary = 0;
  std::string head;
  std::int64_t session_max = 0;
  Rendered r;
  std::int64_t before = 0;
  std::int64_t extra = 0;  // what the labelled figure adds to the estimate
  std::int64_t window_eff = 0;
  std::int64_t trigger = 0;
  std::size_t region_start = 0;  // the first raw row after the system prompt and the last view
  std::optional<Node> old;       // the archive that grows, when it is the last view
  std::vector<Unit> units;       // over [region_start, items.size())
  std::int64_t retain = 0;
  std::size_t cut_unit = 0;  // units[0, cut_unit) are evicted
  std::size_t cut = 0;       // the first item of the kept tail
};

/// The archive text this run writes and what it covers.
struct Archive {
  std::string appended;  // the evicted rows' text
  std::int64_t evicted_tokens = 0;
  std::vector<std::string> covers;
  std::string old_text;
  std::string text;  // old_text, then appended
};

/// Without --model the frames are drawn for the model the session's transcript names now. Sets
/// opts.model and returns where it came from.
std::string resolve_model(Store& store, const std::string& session, SnapcompactOptions& opts) {
  std::string model_source = "flag";
  if (opts.model.empty()) {
    auto recorded = recorded_model(store, session);
    opts.model = recorded.value_or("");
    model_source = recorded ? "session" : "default";
  }
  return model_source;
}

/// A model that reads no image input gets rolling's text compaction (docs/strategies.md
/// "snapcompact"); the archive stays stored for a later model that does.
CompactResult rolling_fallback(const Snap& sn, Summarizer& summarizer) {
  RollingOptions ro;
  static_cast<CompactionOptions&>(ro) = sn.opts;
  CompactResult r = compact_rolling(sn.store, sn.session, summarizer, ro);
  r.strategy = "snapcompact";
  r.details["fallback"] = "rolling";
  r.details["model"] = Json{{"id", sn.model.id}, {"reads_images", false}, {"source", sn.model_source}};
  if (r.status == "noop" || r.status == "declined")
    r.reason = fmt::format("model '{}' reads no images, so rolling's text compaction ran: {}", sn.model.id, r.reason);
  return r;
}

/// Renders HEAD (snapcompact, frames not encoded) at the current append boundary and checks the
/// trigger. False with the reason set when the compaction is not due.
bool plan_render(const Snap& sn, SnapPlan& p, CompactResult& res) {
  Store& store = sn.store;
  p.boundary = store.max_seq();
  p.head = plan_head(store, sn.session, p.boundary);
  res.head = p.head;
  p.session_max = session_max_seq(store, sn.session);
  p.r = render_context(store, sn.session, snap_render(sn.opts, p.head, p.boundary, false));
  refuse_partial_history(p.r.warnings);
  p.before = p.r.estimated_tokens;
  res.estimated_tokens_before = res.estimated_tokens_after = p.before;
  res.tokens_before = res.tokens_after = p.r.tokens;
  const std::int64_t shown = p.r.tokens.value;
  p.extra = std::max<std::int64_t>(0, shown - p.before);
  const TriggerCheck t = check_trigger(sn.opts.window, sn.opts.trigger_percent, p.r.tokens, p.before, "snapcompact");
  p.window_eff = t.window_eff;
  p.trigger = t.trigger;
  if (!t.due && !sn.opts.force) {
    res.reason = t.reason;
    return false;
  }
  return true;
}

/// The region the archive takes from, after the system prompt and the other views; the archive
/// that grows when it is the last view.
void find_region(Store& store, SnapPlan& p) {
  const auto& items = p.r.items;
  const Rendered& r = p.r;
  std::size_t region_start = 0;
  while (region_start < items.size() && items[region_start].is_model_input() && items[region_start].role == role::kSystem)
    ++region_start;
  // Other strategies' folds stay ahead of the frames: the archive covers raw rows after
  // the last view the render substituted. It grows when that view is the archive itself;
  // otherwise (none yet, or a rolling summary or lcm fold now past it) a new archive starts there.
  std::optional<std::string> last_view;
  for (std::size_t i = region_start; i < items.size(); ++i) {
    const bool fold = std::any_of(r.folds.begin(), r.folds.end(), [&](const RenderedFold& f) { return f.id == items[i].id; });
    if (fold || (r.summary && items[i].id == *r.summary)) {
      region_start = i + 1;
      last_view = items[i].id;
    }
  }
  if (last_view && r.archive && *last_view == *r.archive) p.old = store.node(*r.archive, true);
  p.region_start = region_start;
}

/// The retention walk over the units after the region start. False with status/reason set when
/// every unit stays in the tail.
bool choose_cut(const SnapcompactOptions& opts, SnapPlan& p, CompactResult& res) {
  const auto& items = p.r.items;
  p.units = split_units(items, p.region_start);
  p.retain = std::max<std::int64_t>(1, ceil_percent(p.window_eff, opts.tail_percent));
  std::int64_t tail_room = std::numeric_limits<std::int64_t>::max();
  if (opts.window) {
    // What stays before the region, the part of the measured figure the estimate does not see,
    // and the frames (at most archive_percent of the window: the frame budget's window limit)
    // all sit under the trigger beside the tail.
    std::int64_t kept = 0;
    for (std::size_t i = 0; i < p.region_start; ++i) kept += p.r.item_tokens[i];
    const std::int64_t frames_room = *opts.window * opts.archive_percent / 100;
    tail_room = p.trigger - 1 - p.extra - kept - frames_room;
    p.retain = std::max<std::int64_t>(1, std::min(p.retain, tail_room));
  }
  p.cut_unit =
      retained_tail_start(p.units, p.retain, opts.window ? std::min(p.trigger - 1 - p.extra, tail_room) : tail_room);
  if (p.cut_unit == 0) {
    res.status = "declined";
    res.reason = p.units.size() <= 1
                     ? "the only unit after the archive stays in the verbatim tail (a unit is never split)"
                     : fmt::format("every unit after the archive is needed for the retained tail of {} tokens",
                                   p.retain);
    return false;
  }
  p.cut = p.cut_unit < p.units.size() ? p.units[p.cut_unit].begin : items.size();
  return true;
}

/// The evicted rows' text appended to the old archive's, and the chain segment it covers.
Archive build_archive(Store& store, const SnapPlan& p) {
  const auto& items = p.r.items;
  const std::optional<Node>& old = p.old;
  Archive ar;
  for (std::size_t i = p.region_start; i < p.cut; ++i) {
    ar.evicted_tokens += p.r.item_tokens[i];
    std::string t = archive_node_text(items[i]);
    if (t.empty()) continue;
    if (!ar.appended.empty()) ar.appended += "\n\n";
    ar.appended += t;
  }
  ar.covers = old ? old->covers_ids : std::vector<std::string>{};
  std::int64_t bound = p.r.spine_length + 2;
  for (const auto& f : p.r.folds) bound += f.count;
  std::vector<std::string> seg =
      chain_segment(store, items[p.cut - 1].id,
                    old && !old->covers_ids.empty() ? std::optional<std::string>(old->covers_ids.back()) : std::nullopt,
                    old ? std::nullopt : std::optional<std::string>(items[p.region_start].id), bound);
  ar.covers.insert(ar.covers.end(), seg.begin(), seg.end());
  ar.old_text = old ? archive_text(*old) : std::string();
  ar.text = ar.old_text;
  if (!ar.text.empty() && !ar.appended.empty()) ar.text += "\n\n";
  ar.text += ar.appended;
  return ar;
}

/// --dry-run: status "planned" and what would be archived and kept.
void plan_only(const SnapPlan& p, const Archive& ar, CompactResult& res) {
  const auto& items = p.r.items;
  const std::size_t cut = p.cut;
  res.status = "planned";
  res.reason = fmt::format("would append {} evicted items ({} tokens, {} bytes of text) to the archive and keep {} "
                           "items as the tail",
                           cut - p.region_start, ar.evicted_tokens, ar.appended.size(), items.size() - cut);
  res.plan = Json{{"trigger_tokens", p.trigger},
                  {"retain_tokens", p.retain},
                  {"window", p.window_eff},
                  {"previous_archive", p.old ? Json(p.old->id) : Json(nullptr)},
                  {"evicted_items", cut - p.region_start},
                  {"evicted_tokens", ar.evicted_tokens},
                  {"appended_bytes", ar.appended.size()},
                  {"kept_first", cut < items.size() ? Json(items[cut].id) : Json(nullptr)},
                  {"kept_items", items.size() - cut}};
}

/// The provenance an archive records: no summarizer call, the digest of its text, the parameters.
Json archive_provenance(const Snap& sn, const std::string& text) {
  const SnapcompactOptions& opts = sn.opts;
  return Json{{"summarizer", {{"kind", "snapcompact"}, {"model", kSnapArchiveVersion}}},
              {"prompt_version", kSnapArchiveVersion},
              {"input_digest", sha256_hex(text)},
              {"parameters",
               {{"window", opts.window ? Json(*opts.window) : Json(nullptr)},
                {"trigger_percent", opts.trigger_percent},
                {"tail_percent", opts.tail_percent},
                {"archive_percent", opts.archive_percent},
                {"max_frames", opts.max_frames ? Json(*opts.max_frames) : Json(nullptr)},
                {"model", sn.model.id},
                {"force", opts.force}}},
              {"calls", 0}};
}

/// The archive node standing in for the covered rows, with its metadata and covers.
Node archive_node(const Snap& sn, const SnapPlan& p, const Archive& ar, const CompactionBracket& bracket,
                  const Json& provenance) {
  const SnapcompactOptions& opts = sn.opts;
  const std::optional<Node>& old = p.old;
  Node a;
  a.id = "arc-" + bracket.hex();
  a.session = sn.session;
  a.kind = kind::kArchive;
  a.role = role::kUser;
  a.predecessor = sn.store.predecessor_of(ar.covers.front());
  a.content = Json::array({Json{{"type", "text"}, {"text", ar.text}}});
  a.metadata = Json{{"strategy", "snapcompact"},
                    {"origin", "compact"},
                    {"compaction", bracket.id()},
                    {"supersedes", old ? Json(old->id) : Json(nullptr)},
                    {"snapcompact",
                     {{"window", opts.window ? Json(*opts.window) : Json(nullptr)},
                      {"archive_percent", opts.archive_percent},
                      {"max_frames", opts.max_frames ? Json(*opts.max_frames) : Json(nullptr)},
                      {"model", sn.model.id},
                      {"appended_from", old ? Json(ar.old_text.size()) : Json(0)}}},
                    {"provenance", provenance}};
  if (p.r.tokens.calibration) a.metadata["calibration"] = p.r.tokens.calibration->to_json();
  a.covers_ids = ar.covers;
  return a;
}

/// The frame settings a render uses for `archive`: what the archive recorded, replaced by the
/// run's options (render/views.cpp does the same with the render's).
SnapSettings run_settings(const Node& archive, const SnapcompactOptions& o) {
  SnapSettings ss = archive_settings(archive);
  if (o.window) ss.window = o.window;
  ss.archive_percent = o.archive_percent;
  if (o.max_frames) ss.max_frames = o.max_frames;
  return ss;
}

/// The frame cache heals itself at the next compaction: when the archive the plan's render stands
/// on has frames missing from the cache (a kill between an older commit and its caching, rows
/// deleted), they are drawn and stored now, whatever the compaction then decides. Returns how many.
std::int64_t refill_frames(const Snap& sn, const SnapPlan& p) {
  if (!p.r.archive || !p.r.frames.is_object()) return 0;
  const Json& frames = p.r.frames["frames"];
  if (std::all_of(frames.begin(), frames.end(), [](const Json& f) { return f.value("cached", false); })) return 0;
  auto archive = sn.store.node(*p.r.archive, false);
  if (!archive) return 0;
  return cache_frames(sn.store, archive_frames(&sn.store, *archive, sn.opts.model, run_settings(*archive, sn.opts), true));
}

/// The result of a committed run: the frames stored with the archive, the figures after.
void report_compacted(const Snap& sn, const SnapPlan& p, const Archive& ar, const std::string& archive_id,
                      std::int64_t cached_new, CompactResult& res) {
  Store& store = sn.store;
  const SnapcompactOptions& opts = sn.opts;
  const ModelInfo& model = sn.model;
  res.status = "compacted";
  res.summary_id = archive_id;
  res.covers_count = static_cast<std::int64_t>(ar.covers.size());
  res.covers_first = ar.covers.front();
  res.covers_last = ar.covers.back();
  Rendered r2 = render_context(store, sn.session, snap_render(opts, std::nullopt, kLatest, false));
  res.estimated_tokens_after = r2.estimated_tokens;
  res.tokens_after = r2.tokens;
  res.details = Json{{"archive", archive_id},
                     {"archive_bytes", ar.text.size()},
                     {"appended_bytes", ar.appended.size()},
                     {"evicted_items", p.cut - p.region_start},
                     {"evicted_tokens", ar.evicted_tokens},
                     {"model",
                      {{"id", model.id}, {"known", model.known}, {"reads_images", true}, {"source", sn.model_source}}},
                     {"model_note", model.known ? Json(nullptr) : Json(unknown_model_note(model))},
                     {"frames", r2.frames},
                     {"frames_cached", cached_new}};
  if (opts.window && res.tokens_after.value >= p.trigger)
    res.reason = fmt::format("still {} {} tokens after compaction: the frames and the verbatim tail exceed the trigger "
                             "of {} tokens",
                             res.tokens_after.kind, res.tokens_after.value, p.trigger);
}

}  // namespace

CompactResult compact_snapcompact(Store& store, const std::string& session, Summarizer& summarizer,
                                  const SnapcompactOptions& given) {
  validate(given);
  SnapcompactOptions opts = given;
  const std::string model_source = resolve_model(store, session, opts);
  const ModelInfo model = lookup_model(opts.model);
  const Snap sn{store, session, opts, model, model_source};
  if (!model.reads_images) return rolling_fallback(sn, summarizer);

  CompactResult res;
  res.strategy = "snapcompact";
  res.session = session;
  res.summarizer_kind = "snapcompact";
  res.summarizer_model = kSnapArchiveVersion;
  res.window = opts.window;
  res.passes = 1;

  SnapPlan p;
  const bool due = plan_render(sn, p, res);
  const std::int64_t refilled = opts.dry_run ? 0 : refill_frames(sn, p);
  if (!opts.dry_run) res.details["frames_cached"] = refilled;
  if (!due) return res;
  find_region(store, p);
  if (!choose_cut(opts, p, res)) return res;
  const Archive ar = build_archive(store, p);
  if (opts.dry_run) {
    plan_only(p, ar, res);
    return res;
  }

  CompactionBracket bracket(store, session, p.head, p.session_max, opts.env);
  res.compaction = bracket.id();
  bracket.start(Json{{"strategy", "snapcompact"},
                     {"boundary_seq", p.boundary},
                     {"previous_archive", p.old ? Json(p.old->id) : Json(nullptr)},
                     {"plan",
                      {{"covers_count", ar.covers.size()}, {"first", ar.covers.front()}, {"last", ar.covers.back()}}},
                     {"estimated_tokens_before", p.before},
                     {"model", model.id}});
  const Json provenance = archive_provenance(sn, ar.text);
  Node a = archive_node(sn, p, ar, bracket, provenance);
  // The archive's frames for the model, drawn before the commit (outside the write lock) and
  // stored in the same transaction as the archive: no kill leaves an archive without its frames.
  const FrameSet frames = archive_frames(&store, a, opts.model, run_settings(a, opts), true);
  std::int64_t cached_new = 0;
  auto changed = bracket.commit(
      [&] {
        bracket.append_summary(
            a, Json{{"provenance", provenance},
                    {"kind", "archive"},
                    {"covers", {{"count", ar.covers.size()}, {"first", ar.covers.front()}, {"last", ar.covers.back()}}},
                    {"appended_bytes", ar.appended.size()},
                    {"archive_bytes", ar.text.size()}});
        cached_new = store_frames(store, frames);
      },
      0, Json{{"strategy", "snapcompact"}, {"summary_id", a.id}});
  if (changed) {
    fail_result(res, *changed);
    return res;
  }
  report_compacted(sn, p, ar, a.id, refilled + cached_new, res);
  (void)summarizer;
  return res;
}

}  // namespace ctxfold
