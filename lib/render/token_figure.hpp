#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/node.hpp"
#include "store/store.hpp"
#include "tokens/calibrate.hpp"

// The labelled token figure of a render and the prefix estimates it is matched on (docs/render.md
// "Token figures"): estimated, calibrated against a provider-measured request, or measured.
namespace ctxfold {

struct Rendered;  // render/render.hpp

/// True for a node that opens a user turn: a user-role message holding a prompt (text, image or
/// a string), not only tool results, and not a harness injection (metadata.is_meta: Claude
/// Code's isMeta records, sent inside the agent's turn). Thinking before the latest such node is "an earlier turn's".
bool starts_user_turn(const Node& n);

/// Estimate of the context items[0, end) as the renderer counts it: the sum of the per-item
/// totals, less prior_turn_thinking of the items before the last user turn that starts inside
/// [0, end). totals and prior are parallel to items (Rendered::item_tokens/item_prior_thinking).
std::int64_t prefix_estimate(const std::vector<Node>& items, const std::vector<std::int64_t>& totals,
                             const std::vector<std::int64_t>& prior, std::size_t end);

/// prefix_estimate for each of `ends` in one pass when ends ascend (O(items + ends)); an end
/// below the previous one is summed directly. Same values as prefix_estimate.
std::vector<std::int64_t> prefix_estimates(const std::vector<Node>& items, const std::vector<std::int64_t>& totals,
                                           const std::vector<std::int64_t>& prior,
                                           const std::vector<std::size_t>& ends);

/// The first output node of the request whose usage sits on items[i]: consecutive assistant
/// items before it belong to the same response (a Claude Code response is written one block per
/// record; a Codex response as several items), limited to the same metadata.message_id when
/// items[i] has one.
std::size_t request_start(const std::vector<Node>& items, std::size_t i);

/// Provider-measured input tokens of an assistant message node (measured_input_tokens of its
/// metadata.usage), else nullopt.
std::optional<std::int64_t> node_measured_tokens(const Node& n);

/// The labelled token figure of a render (docs/model.md "Token figures"):
///  - "measured" when a child of HEAD is a request with usage made on exactly this context
///    (its seq after the rendered summary's and every rendered lcm fold's): value = that measurement;
///  - "calibrated" with the latest request among r.items whose context is a prefix of this
///    render (a request made after the rendered summary was written), matched on the estimate of
///    that prefix; else with the calibration the compaction that wrote the last rendered summary
///    or fold recorded (metadata.calibration, same estimator version); see calibrated_figure.
///    A "request" calibration also carries the learned hidden output of the edit results made
///    since that request (Calibration::hidden; HiddenPerEdit taught by the consecutive pairs of
///    requests in the render, each pair predicted before it teaches);
///  - "estimated" otherwise.
/// Only requests made before the first view node (summary or archive) newer than the render's
/// newest shown view node count: a later request saw that view node, a context this render does
/// not show (an imported compaction summary a render starts before), so it never calibrates it.
/// Reads only HEAD's children and one indexed query beyond what the render loaded.
TokenFigure token_figure(Store& store, const Rendered& r, std::int64_t as_of);

}  // namespace ctxfold
