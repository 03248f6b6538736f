#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "render/render.hpp"
#include "render/token_figure.hpp"
#include "store/store.hpp"
#include "util/json.hpp"

// The fidelity table of the `tokens` command: every measured request of a session against the
// estimate of the context it saw (docs/render.md "Token figures").
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
/// rows ("no_usage" counts the assistant nodes skipped for missing or zero usage), nor are the
/// requests a fork or resumed copy replays from its parent ("shared_prefix", lineage.hpp).
struct RequestTable {
  std::string session;
  std::vector<RequestRow> requests;
  std::vector<GrowthPair> pairs;     ///< kept pairs only
  std::int64_t skipped_small = 0, skipped_reset = 0, skipped_model_switch = 0, skipped_no_usage = 0;
  /// Requests in the session's shared prefix (lineage.hpp): the parent's, reported with it.
  std::int64_t skipped_shared_prefix = 0;
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

/// The "summary" member of request_table_json (the pairs' error stats).
Json request_table_summary_json(const RequestTable& t);

/// The bytes of dump_json(request_table_json(t, min_growth, current)), handed to `out` in pieces
/// (the head, one piece per request and per pair, the tail) so the whole document is never held.
void write_request_table_json(const RequestTable& t, std::int64_t min_growth, const TokenFigure& current,
                              const std::function<void(const std::string&)>& out);

}  // namespace ctxfold
