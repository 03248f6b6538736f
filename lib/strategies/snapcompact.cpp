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

}  // namespace

CompactResult compact_snapcompact(Store& store, const std::string& session, Summarizer& summarizer,
                                  const SnapcompactOptions& given) {
  validate(given);
  // Without --model the frames are drawn for the model the session's transcript names now.
  SnapcompactOptions opts = given;
  std::string model_source = "flag";
  if (opts.model.empty()) {
    auto recorded = recorded_model(store, session);
    opts.model = recorded.value_or("");
    model_source = recorded ? "session" : "default";
  }
  const ModelInfo model = lookup_model(opts.model);
  if (!model.reads_images) {
    // A model that reads no image input gets rolling's text compaction (docs/strategies.md
    // "snapcompact"); the archive stays stored for a later model that does.
    RollingOptions ro;
    static_cast<CompactionOptions&>(ro) = opts;
    CompactResult r = compact_rolling(store, session, summarizer, ro);
    r.strategy = "snapcompact";
    r.details["fallback"] = "rolling";
    r.details["model"] = Json{{"id", model.id}, {"reads_images", false}, {"source", model_source}};
    if (r.status == "noop" || r.status == "declined")
      r.reason = fmt::format("model '{}' reads no images, so rolling's text compaction ran: {}", model.id, r.reason);
    return r;
  }

  CompactResult res;
  res.strategy = "snapcompact";
  res.session = session;
  res.summarizer_kind = "snapcompact";
  res.summarizer_model = kSnapArchiveVersion;
  res.window = opts.window;
  res.passes = 1;

  const std::int64_t boundary = store.max_seq();
  auto h = store.head(session, boundary);
  if (!h)
    throw Error(Exit::bad_input, "render.no_head", fmt::format("session '{}' has no HEAD", session),
                "import or append nodes first");
  const std::string head = *h;
  res.head = head;
  const std::int64_t session_max = session_max_seq(store, session);
  Rendered r = render_context(store, session, snap_render(opts, head, boundary, false));
  refuse_partial_history(r.warnings);
  const std::int64_t before = r.estimated_tokens;
  res.estimated_tokens_before = res.estimated_tokens_after = before;
  res.tokens_before = res.tokens_after = r.tokens;
  const std::int64_t shown = r.tokens.value;
  const std::int64_t extra = std::max<std::int64_t>(0, shown - before);
  const TriggerCheck t = check_trigger(opts.window, opts.trigger_percent, r.tokens, before, "snapcompact");
  const std::int64_t window_eff = t.window_eff;
  const std::int64_t trigger = t.trigger;
  if (!t.due && !opts.force) {
    res.reason = t.reason;
    return res;
  }
  const auto& items = r.items;
  std::size_t region_start = 0;
  while (region_start < items.size() && items[region_start].is_model_input() && items[region_start].role == role::kSystem)
    ++region_start;
  // Other strategies' folds stay ahead of the frames: the archive covers raw rows after
  // the last view the render substituted. It grows when that view is the archive itself;
  // otherwise (none yet, or a rolling summary or lcm fold now past it) a new archive starts there.
  std::optional<Node> old;
  std::optional<std::string> last_view;
  for (std::size_t i = region_start; i < items.size(); ++i) {
    const bool fold = std::any_of(r.folds.begin(), r.folds.end(), [&](const RenderedFold& f) { return f.id == items[i].id; });
    if (fold || (r.summary && items[i].id == *r.summary)) {
      region_start = i + 1;
      last_view = items[i].id;
    }
  }
  if (last_view && r.archive && *last_view == *r.archive) old = store.node(*r.archive, true);
  std::vector<Unit> units = split_units(items, region_start);
  std::int64_t retain = std::max<std::int64_t>(1, ceil_percent(window_eff, opts.tail_percent));
  std::int64_t tail_room = std::numeric_limits<std::int64_t>::max();
  if (opts.window) {
    // What stays before the region, the part of the measured figure the estimate does not see,
    // and the frames (at most archive_percent of the window: the frame budget's window limit)
    // all sit under the trigger beside the tail.
    std::int64_t kept = 0;
    for (std::size_t i = 0; i < region_start; ++i) kept += r.item_tokens[i];
    const std::int64_t frames_room = *opts.window * opts.archive_percent / 100;
    tail_room = trigger - 1 - extra - kept - frames_room;
    retain = std::max<std::int64_t>(1, std::min(retain, tail_room));
  }
  const std::size_t cut_unit =
      retained_tail_start(units, retain, opts.window ? std::min(trigger - 1 - extra, tail_room) : tail_room);
  if (cut_unit == 0) {
    res.status = "declined";
    res.reason = units.size() <= 1 ? "the only unit after the archive stays in the verbatim tail (a unit is never split)"
                                   : fmt::format("every unit after the archive is needed for the retained tail of {} tokens",
                                                 retain);
    return res;
  }
  const std::size_t cut = cut_unit < units.size() ? units[cut_unit].begin : items.size();
  std::string appended;
  std::int64_t evicted_tokens = 0;
  for (std::size_t i = region_start; i < cut; ++i) {
    evicted_tokens += r.item_tokens[i];
    std::string t = archive_node_text(items[i]);
    if (t.empty()) continue;
    if (!appended.empty()) appended += "\n\n";
    appended += t;
  }
  std::vector<std::string> covers = old ? old->covers_ids : std::vector<std::string>{};
  std::int64_t bound = r.spine_length + 2;
  for (const auto& f : r.folds) bound += f.count;
  std::vector<std::string> seg =
      chain_segment(store, items[cut - 1].id,
                    old && !old->covers_ids.empty() ? std::optional<std::string>(old->covers_ids.back()) : std::nullopt,
                    old ? std::nullopt : std::optional<std::string>(items[region_start].id), bound);
  covers.insert(covers.end(), seg.begin(), seg.end());
  const std::string old_text = old ? archive_text(*old) : std::string();
  std::string text = old_text;
  if (!text.empty() && !appended.empty()) text += "\n\n";
  text += appended;
  if (opts.dry_run) {
    res.status = "planned";
    res.reason = fmt::format("would append {} evicted items ({} tokens, {} bytes of text) to the archive and keep {} "
                             "items as the tail",
                             cut - region_start, evicted_tokens, appended.size(), items.size() - cut);
    res.plan = Json{{"trigger_tokens", trigger},
                    {"retain_tokens", retain},
                    {"window", window_eff},
                    {"previous_archive", old ? Json(old->id) : Json(nullptr)},
                    {"evicted_items", cut - region_start},
                    {"evicted_tokens", evicted_tokens},
                    {"appended_bytes", appended.size()},
                    {"kept_first", cut < items.size() ? Json(items[cut].id) : Json(nullptr)},
                    {"kept_items", items.size() - cut}};
    return res;
  }

  CompactionBracket bracket(store, session, head, session_max);
  res.compaction = bracket.id();
  bracket.start(Json{{"strategy", "snapcompact"},
                     {"boundary_seq", boundary},
                     {"previous_archive", old ? Json(old->id) : Json(nullptr)},
                     {"plan", {{"covers_count", covers.size()}, {"first", covers.front()}, {"last", covers.back()}}},
                     {"estimated_tokens_before", before},
                     {"model", model.id}});
  Node a;
  a.id = "arc-" + bracket.hex();
  a.session = session;
  a.kind = kind::kArchive;
  a.role = role::kUser;
  a.predecessor = store.predecessor_of(covers.front());
  a.content = Json::array({Json{{"type", "text"}, {"text", text}}});
  Json provenance{{"summarizer", {{"kind", "snapcompact"}, {"model", kSnapArchiveVersion}}},
                  {"prompt_version", kSnapArchiveVersion},
                  {"input_digest", sha256_hex(text)},
                  {"parameters",
                   {{"window", opts.window ? Json(*opts.window) : Json(nullptr)},
                    {"trigger_percent", opts.trigger_percent},
                    {"tail_percent", opts.tail_percent},
                    {"archive_percent", opts.archive_percent},
                    {"max_frames", opts.max_frames ? Json(*opts.max_frames) : Json(nullptr)},
                    {"model", model.id},
                    {"force", opts.force}}},
                  {"calls", 0}};
  a.metadata = Json{{"strategy", "snapcompact"},
                    {"origin", "compact"},
                    {"compaction", bracket.id()},
                    {"supersedes", old ? Json(old->id) : Json(nullptr)},
                    {"snapcompact",
                     {{"window", opts.window ? Json(*opts.window) : Json(nullptr)},
                      {"archive_percent", opts.archive_percent},
                      {"max_frames", opts.max_frames ? Json(*opts.max_frames) : Json(nullptr)},
                      {"model", model.id},
                      {"appended_from", old ? Json(old_text.size()) : Json(0)}}},
                    {"provenance", provenance}};
  if (r.tokens.calibration) a.metadata["calibration"] = r.tokens.calibration->to_json();
  a.covers_ids = covers;
  auto changed = bracket.commit(
      [&] {
        bracket.append_summary(a, Json{{"provenance", provenance},
                                       {"kind", "archive"},
                                       {"covers", {{"count", covers.size()}, {"first", covers.front()}, {"last", covers.back()}}},
                                       {"appended_bytes", appended.size()},
                                       {"archive_bytes", text.size()}});
      },
      0, Json{{"strategy", "snapcompact"}, {"summary_id", a.id}});
  if (changed) {
    fail_result(res, *changed);
    return res;
  }
  res.status = "compacted";
  res.summary_id = a.id;
  res.covers_count = static_cast<std::int64_t>(covers.size());
  res.covers_first = covers.front();
  res.covers_last = covers.back();
  // The frames for this model, drawn once and cached so renders read them (unchanged leading
  // frames are already there under the same keys).
  Rendered r2 = render_context(store, session, snap_render(opts, std::nullopt, kLatest, false));
  std::int64_t cached_new = 0;
  if (r2.archive)
    for (const auto& n : r2.items)
      if (n.id == *r2.archive) {
        SnapSettings ss{opts.window, opts.archive_percent, opts.max_frames};
        cached_new = cache_frames(store, archive_frames(&store, *store.node(n.id, false), opts.model, ss, true));
      }
  res.estimated_tokens_after = r2.estimated_tokens;
  res.tokens_after = r2.tokens;
  res.details = Json{{"archive", a.id},
                     {"archive_bytes", text.size()},
                     {"appended_bytes", appended.size()},
                     {"evicted_items", cut - region_start},
                     {"evicted_tokens", evicted_tokens},
                     {"model", {{"id", model.id}, {"known", model.known}, {"reads_images", true}, {"source", model_source}}},
                     {"model_note", model.known ? Json(nullptr) : Json(unknown_model_note(model))},
                     {"frames", r2.frames},
                     {"frames_cached", cached_new}};
  if (opts.window && res.tokens_after.value >= trigger)
    res.reason = fmt::format("still {} {} tokens after compaction: the frames and the verbatim tail exceed the trigger "
                             "of {} tokens",
                             res.tokens_after.kind, res.tokens_after.value, trigger);
  (void)summarizer;
  return res;
}

}  // namespace ctxfold
