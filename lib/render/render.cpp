// render_context: the driver that runs a render's steps in order (render_parts.hpp), and the
// system prompt it puts first.
#include "render/render.hpp"
#include "render/moved.hpp"

#include <fmt/format.h>

#include "render/blocks.hpp"
#include "render/pairing.hpp"
#include "render/render_parts.hpp"
#include "render/token_figure.hpp"
#include "render/view_policy.hpp"
#include "snapcompact/archive.hpp"

namespace ctxfold {
namespace {

using render_detail::text_block;
using render_detail::text_bytes;

/// The system message render_context puts first for a prompt it did not read off the spine.
Node system_node(const std::string& id, const std::string& session, Json content) {
  Node sys;
  sys.id = id;
  sys.session = session;
  sys.kind = kind::kMessage;
  sys.role = role::kSystem;
  sys.content = std::move(content);
  return sys;
}

/// The system prompt goes first (docs/render.md "The system prompt"): system-role messages that
/// lead the spine are the transcript's own; else --system; else the newest system_prompt event
/// recorded at or before `bound` (the head node's seq), rendered as a system message.
void apply_system_prompt(Store& store, const std::string& session, const RenderOptions& opts, std::int64_t bound,
                         Rendered& r) {
  std::size_t lead = 0;
  while (lead < r.items.size() && r.items[lead].is_model_input() && r.items[lead].role == role::kSystem) ++lead;
  if (opts.system_text) {
    Node sys = system_node(kSystemOptionId, session, Json::array({text_block(*opts.system_text)}));
    r.items.erase(r.items.begin(), r.items.begin() + static_cast<std::ptrdiff_t>(lead));
    r.system = SystemPromptInfo{true, "option", std::nullopt, static_cast<std::int64_t>(opts.system_text->size()), -1};
    r.items.insert(r.items.begin(), std::move(sys));
    return;
  }
  if (lead > 0) {
    std::int64_t chars = 0;
    for (std::size_t i = 0; i < lead; ++i) chars += text_bytes(r.items[i].content);
    r.system = SystemPromptInfo{true, "transcript", std::nullopt, chars, -1};
    return;
  }
  auto ev = store.system_prompt(session, bound);
  if (ev) {
    Node sys = std::move(*ev);
    sys.kind = kind::kMessage;
    sys.role = role::kSystem;
    SystemPromptInfo info{true, "record", sys.id, text_bytes(sys.content), -1};
    if (auto t = sys.metadata.find("tools"); t != sys.metadata.end() && t->is_array())
      info.tools = static_cast<std::int64_t>(t->size());
    r.system = std::move(info);
    r.items.insert(r.items.begin(), std::move(sys));
    return;
  }
  // An importer that read the prompt from the client's request records keeps it in metadata:
  // on the nodes where it changed (the nearest rendered one before HEAD is in force), else on
  // the session (docs/render.md "The system prompt").
  const Json* meta = nullptr;
  std::optional<std::string> from;
  for (std::size_t i = r.items.size(); i-- > 0;)
    if (r.items[i].metadata.contains("system_prompt") || r.items[i].metadata.contains("system_blocks")) {
      meta = &r.items[i].metadata;
      from = r.items[i].id;
      break;
    }
  std::optional<SessionInfo> info_row;
  if (!meta) {
    info_row = store.session(session);
    if (info_row && (info_row->metadata.contains("system_prompt") || info_row->metadata.contains("system_blocks")))
      meta = &info_row->metadata;
  }
  if (!meta) return;
  Json content = Json::array();
  if (auto b = meta->find("system_blocks"); b != meta->end() && b->is_array()) {
    for (const auto& blk : *b) {
      if (blk.is_string()) content.push_back(Json{{"type", "text"}, {"text", blk}});
      else if (blk.is_object() && json_str(blk, "type") == "text") content.push_back(Json{{"type", "text"}, {"text", json_str(blk, "text")}});
    }
  }
  if (content.empty())
    if (auto t = meta->find("system_prompt"); t != meta->end() && t->is_string() && !t->get_ref<const std::string&>().empty())
      content.push_back(Json{{"type", "text"}, {"text", *t}});
  if (content.empty()) return;
  Node sys = system_node(from ? *from + "#system" : session + "#system", session, std::move(content));
  SystemPromptInfo info{true, from ? "node" : "session", from, text_bytes(sys.content), -1};
  if (auto t = meta->find("tools"); t != meta->end() && t->is_array()) info.tools = static_cast<std::int64_t>(t->size());
  r.system = std::move(info);
  r.items.insert(r.items.begin(), std::move(sys));
}

}  // namespace

using namespace render_detail;

namespace {

/// A recorded usage the figure refused to calibrate with is said on stderr by render, context,
/// tokens and prepare (docs/model.md "Token figures").
void warn_refused_calibration(Rendered& r) {
  if (r.tokens.refused)
    r.warnings.push_back(fmt::format("calibration: the usage on node '{}' is not used: {}", r.tokens.refused->node,
                                     r.tokens.refused->reason));
}

/// render_context's steps; with figs, render_figures' (figs->r is r); with moved, render_moved's.
void render_into(Store& store, const std::string& session, const RenderOptions& opts, Rendered& r,
                 RenderedFigures* figs_out, bool edits, bool moved = false) {
  const ViewPolicy* policy = &view_policy(opts.strategy);
  r.session = session;
  r.strategy = opts.strategy;
  // The view policy applied: snapcompact for a model that reads no images is rolling's
  // (docs/strategies.md "snapcompact"; the archive stays stored).
  if (!policy->text_fallback.empty() && !lookup_model(opts.model).reads_images) {
    policy = &view_policy(policy->text_fallback);
    r.fallback = std::string(policy->name);
  }
  const ViewPolicy& view = *policy;
  const bool snap = view.frames;

  resolve_head(store, session, opts, r);
  Views v = choose_views(store, session, opts, view);
  std::optional<FigureState> figs;
  if (figs_out) {
    figs.emplace();
    figs->edits = edits;
  }
  const std::int64_t head_seq = walk_spine(store, opts, v, r, figs ? &*figs : nullptr);
  if (snap) draw_frames(store, opts, v.archive_folds, r);
  apply_system_prompt(store, session, opts, opts.head ? head_seq : opts.as_of, r);
  if (opts.notes && view.notes) insert_notes(store, session, opts, r);
  for (Node& n : r.items) cap_row(n, opts.max_row_bytes, r.truncated);
  if (figs) {  // render_figures: no reads, sections or messages
    assign_figures(store, view, *figs, *figs_out);
    r.tokens = token_figure_of_figures(store, *figs_out, opts.as_of);
    warn_refused_calibration(r);
    return;
  }
  assign_sections(store, view, v.archive_folds, r);
  if (!moved) {
    build_messages(r);
    r.tokens = token_figure(store, r, opts.as_of);
  } else {  // the figure reads the items' content (edit results), which the messages then take
    r.tokens = token_figure(store, r, opts.as_of);
    build_messages(r, true);
  }
  warn_refused_calibration(r);
}

}  // namespace

Rendered render_context(Store& store, const std::string& session, const RenderOptions& opts) {
  Rendered r;
  render_into(store, session, opts, r, nullptr, false);
  return r;
}

Rendered render_moved(Store& store, const std::string& session, const RenderOptions& opts) {
  Rendered r;
  render_into(store, session, opts, r, nullptr, false, true);
  return r;
}

RenderedFigures render_figures(Store& store, const std::string& session, const RenderOptions& opts, bool edits) {
  RenderedFigures f;
  render_into(store, session, opts, f.r, &f, edits);
  return f;
}

}  // namespace ctxfold
