#pragma once
// The steps of render_context (lib/render/render.cpp) and the state they share (private to
// lib/render): the view choice and the spine walk (walk.cpp), the frames and notes a render adds
// (views.cpp), the reads and sections (sections.cpp).
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/node.hpp"
#include "render/figures.hpp"
#include "render/render.hpp"
#include "render/view_policy.hpp"
#include "store/store.hpp"

namespace ctxfold::render_detail {

/// The segment a summary covers: its first and last covered ids and their count.
struct Coverage {
  std::string first;
  std::string last;
  std::int64_t count = 0;
};

/// The stored views a render may substitute under one view policy, chosen before the walk.
struct Views {
  std::optional<Node> summary;   ///< the rolling or imported summary in force
  std::optional<Coverage> cov;   ///< its coverage
  /// lcm and region folds and snapcompact archives by their last covered id, largest first.
  std::unordered_map<std::string, std::vector<Store::SummaryRange>> folds_by_last;
  std::unordered_set<std::string> archive_folds;  ///< snapcompact archives among the folds
  std::unordered_set<std::string> region_ids;     ///< region summaries among the folds
  /// render --head: the older rolling summaries, by last covered id and by id.
  std::unordered_map<std::string, Store::SummaryRange> alt_by_last, alt_by_id;
};

/// What a figures-only walk (render_figures) keeps besides Rendered::items: the plain
/// items' figures newest first, and the edit results (tokens/hidden.hpp edit_results) counted
/// newest first: a result whose edit call the walk has not met yet waits in `pending` under its
/// tool_use_id until the call's item is met (forward: the call comes first).
struct FigureState {
  /// A deque: it grows without copying, and assign_figures frees it as it takes the figures out.
  std::deque<ItemFigure> figs_rev;
  /// Slot of a waiting result: >= 0 an index into figs_rev, < 0 -(k+1) for full_ids[k].
  std::unordered_map<std::string, std::vector<std::int64_t>> pending;
  std::vector<std::string> full_ids;        ///< items kept whole that hold edit results
  std::vector<std::int32_t> full_counts;    ///< their counts, parallel to full_ids
  std::vector<std::string> names{""};                     ///< RenderedFigures::models
  std::unordered_map<std::string, std::uint16_t> models{{"", 0}};  ///< names by name
  std::string older_mid;                    ///< message_id of the last plain item figured
  bool edits = true;                        ///< count edit results (render_figures' edits)

  /// Counts the edit results of one item's blocks (in their order) met newest first; slot names
  /// where its own count goes.
  void count_edits(const Json& content, std::int64_t slot);
  void credit(std::int64_t slot);
  /// The figure of one message item (render/figures.hpp ItemFigure): its estimates, measured
  /// tokens, user-turn and assistant flags and its model's index in `names` (added when new); the
  /// caller sets the edit and message_id flags.
  ItemFigure figure(const Node& n);
};

/// HEAD of the render: --head (checked against the session and the boundary), else the session's.
void resolve_head(Store& store, const std::string& session, const RenderOptions& opts, Rendered& r);

/// The summary, folds and archives the policy substitutes (docs/render.md "View policies").
Views choose_views(Store& store, const std::string& session, const RenderOptions& opts, const ViewPolicy& view);

/// Walks HEAD's spine to the root, newest first, substituting the views whose covered segment it
/// meets (docs/model.md "How a render uses a summary"); fills r.items, r.folds, r.summary,
/// r.spine_length and the walk's warnings. Returns the seq of the head node (the system prompt's
/// bound under --head). A cycle or a dangling predecessor ends the walk.
/// render_figures (figs non-null): plain items go to figs->figs_rev and each run of them is one
/// placeholder in r.items (empty id, Node::tokens its length) that assign_figures expands.
std::int64_t walk_spine(Store& store, const RenderOptions& opts, Views& v, Rendered& r, FigureState* figs = nullptr);

/// An archive stands in the request as its frames (docs/strategies.md "snapcompact"): a caption,
/// then one PNG image block per frame the budget keeps. r.frames describes the newest archive's.
void draw_frames(Store& store, const RenderOptions& opts, const std::unordered_set<std::string>& archive_folds,
                 Rendered& r);

/// The session's notes start the request, after the system run, under kNotesHeader.
void insert_notes(Store& store, const std::string& session, const RenderOptions& opts, Rendered& r);

/// The reads, rolling's recap after a ctxfold summary, the per-item estimates and the sections
/// (system, prefix, summary, recap, folds or frames, notes, tail) with their estimates.
void assign_sections(Store& store, const ViewPolicy& view, const std::unordered_set<std::string>& archive_folds,
                     Rendered& r);

/// render_figures: the recap, then RenderedFigures::figures from r.items and the placeholders' runs, the
/// placeholders dropped from r.items, each figure's edits and estimated_tokens (as assign_sections
/// sums it). Items inserted after the walk (system prompt, notes) are counted as the oldest.
void assign_figures(Store& store, const ViewPolicy& view, FigureState& fs, RenderedFigures& out);

}  // namespace ctxfold::render_detail
