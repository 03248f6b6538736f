#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "render/render.hpp"
#include "store/store.hpp"

// Figures-only renders (docs/render.md "Memory"): the same walk as render_context, keeping of each
// plain item only the numbers the token figures and `tokens` read, so that rendering a long spine
// holds a few tens of bytes an item instead of the item.
namespace ctxfold {

/// What a figures-only render keeps of one item. Estimates are in tokens: estimate_node's total and
/// prior_turn_thinking (content estimator) and the bytes4 baseline's total (tokens/estimate.hpp).
struct ItemFigure {
  static constexpr std::uint8_t kUserTurn = 1;       ///< starts_user_turn (render/token_figure.hpp)
  static constexpr std::uint8_t kAssistant = 2;      ///< an assistant-role message (model input)
  static constexpr std::uint8_t kNoMessageId = 4;    ///< metadata.message_id empty or absent
  static constexpr std::uint8_t kSameMessageId = 8;  ///< the same metadata.message_id as the item before
  std::int64_t seq = 0;        ///< the node's seq (0 for a synthetic system message)
  std::int64_t measured = -1;  ///< node_measured_tokens, -1 when none
  std::int32_t total = 0, prior = 0, bytes4 = 0;
  std::int32_t edits = 0;      ///< the item's edit_results in this render (tokens/hidden.hpp)
  std::int32_t node = -1;      ///< its index in RenderedFigures::r.items when kept whole, else -1
  std::uint16_t model = 0;     ///< index into RenderedFigures::models of metadata.model ("" is 0)
  std::uint8_t flags = 0;
  bool has(std::uint8_t f) const { return (flags & f) != 0; }
};

/// A figures-only render. r is render_context's Rendered for the same options except that
/// r.items holds only the items kept whole (system messages and messages carrying a
/// system_prompt/system_blocks, the summary with its recap, folds with their header, notes), and
/// reads, sections, messages, repairs, item_tokens and item_prior_thinking are empty;
/// r.estimated_tokens, r.tokens, r.warnings, r.summary, r.folds and r.spine_length are the same.
/// With max_row_bytes, r.truncated lists the plain rows newest first.
struct RenderedFigures {
  Rendered r;
  std::vector<ItemFigure> figures;          ///< one per item of the request, in request order
  std::vector<std::string> models{""};      ///< the model names figures index
};

/// render_context keeping figures (see RenderedFigures): ~40 bytes a plain item, plus, while the
/// walk runs and with `edits`, each tool result whose edit call it has not met yet (its
/// tool_use_id). Same errors as render_context. The edit results of the system prompt and notes
/// inserted after the walk are counted as the oldest items' (exact unless those messages hold
/// tool blocks). edits=false: every ItemFigure::edits is 0 and r.tokens is figured as if the
/// render held no edit result (for callers that read only the estimates).
RenderedFigures render_figures(Store& store, const std::string& session, const RenderOptions& opts,
                               bool edits = true);

/// request_start (render/token_figure.hpp) over figures: the same index for the same items.
std::size_t figure_request_start(const std::vector<ItemFigure>& figs, std::size_t i);

/// A prefix of a figures-only render: prefix_estimate's value and the bytes4 sum of the same items.
struct FigurePrefix {
  std::int64_t estimated = 0, bytes4 = 0;
};
/// The FigurePrefix of figs[0, end) for each of `ends` (clamped to figs.size()): one pass while ends
/// ascend, a direct sum for an end below the previous one.
std::vector<FigurePrefix> figure_prefixes(const std::vector<ItemFigure>& figs, const std::vector<std::size_t>& ends);

/// Sum of ItemFigure::edits over figs[begin, end) (clamped): count_between over edit_results.
std::int64_t figure_edits_between(const std::vector<ItemFigure>& figs, std::size_t begin, std::size_t end);

/// The node id of f.figures[i]: its item's when kept whole, else the stored node's with that seq
/// (one indexed query); empty when there is none.
std::string figure_node_id(Store& store, const RenderedFigures& f, std::size_t i);

/// token_figure (render/token_figure.hpp) of a figures-only render, read from the figures: the
/// same figure render_context gives.
TokenFigure token_figure_of_figures(Store& store, const RenderedFigures& f, std::int64_t as_of);

}  // namespace ctxfold
