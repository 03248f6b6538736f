#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/node.hpp"
#include "render/render.hpp"
#include "store/store.hpp"
#include "tokens/calibrate.hpp"

namespace ctxfold {

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

namespace ctxfold {

/// One measured request on HEAD's spine and the estimates of the context it saw.
struct RequestRow {
  std::string node;   ///< the node holding the usage (last output node of the request)
  std::string first;  ///< the request's first output node; its context is everything before it
  std::string model;
  std::int64_t seq = 0;
  std::int64_t measured = 0;
  std::int64_t estimated = 0;  ///< Estimator::content of the matched context
  std::int64_t bytes4 = 0;     ///< Estimator::bytes4 of the same context
};

/// Growth between two consecutive measured requests and what each estimator predicted for it:
/// estimated and bytes4 their own growth; remainder = calibrated_figure(E_k, match of k-1) -
/// M_{k-1} without the hidden term, which with a positive remainder equals the estimated growth;
/// calibrated = the same with the hidden term, hidden = HiddenPerEdit::predict(edits) learned from
/// the pairs before this one only (edits: edit-tool results added between the two requests);
/// ratio = the growth the pure ratio scaling M_{k-1} * E_k / E_{k-1} predicts (shown for
/// comparison, not used).
struct GrowthPair {
  std::size_t from = 0, to = 0;  ///< indexes into RequestTable::requests
  std::int64_t measured = 0, estimated = 0, bytes4 = 0, remainder = 0, calibrated = 0, ratio = 0;
  std::int64_t hidden = 0, edits = 0;
};

/// Median and 90th percentile (linear interpolation) of absolute relative errors.
struct ErrorStats {
  std::size_t n = 0;
  double median = 0, p90 = 0;
};
/// Stats of |x| over xs (empty: n = 0).
ErrorStats error_stats(std::vector<double> xs);

/// The fidelity table of one session (issue 9): every measured request on HEAD's raw spine
/// (usage taken from the last node of a response, as Claude Code copies it onto each), the
/// estimate of exactly the context each saw (the rolling render of its first node's predecessor
/// at the state it was made), and the growth pairs. Pairs are skipped and counted when the
/// measured growth is below min_growth ("small"), negative ("reset": a compaction), or the model
/// changed between the two requests ("model_switch"); requests without usable usage are not
/// rows ("no_usage" counts the assistant nodes skipped for missing or zero usage).
struct RequestTable {
  std::string session;
  std::vector<RequestRow> requests;
  std::vector<GrowthPair> pairs;     ///< kept pairs only
  std::int64_t skipped_small = 0, skipped_reset = 0, skipped_model_switch = 0, skipped_no_usage = 0;
};
RequestTable request_table(Store& store, const std::string& session, std::int64_t min_growth = 200);

/// {"schema":"ctxfold.tokens/1","session","estimator","min_growth","requests":[...],"pairs":[...],
///  "skipped":{...},"summary":{"pairs","bytes4":{"median","p90"},"estimated":{...},
///  "calibrated":{...},"remainder":{...},"ratio":{...},"calibrated_total":{...}},"current":TokenFigure}.
/// Each pair also shows remainder_growth/remainder_error (the calibration without the learned
/// hidden term), hidden_growth and edits.
/// Relative errors are (predicted - measured) / measured growth; calibrated_total is the error of
/// the calibrated figure against the measured total of the next request.
Json request_table_json(const RequestTable& t, std::int64_t min_growth, const TokenFigure& current);

}  // namespace ctxfold
