#pragma once
// The request-local budget flags `render` and `prepare` share (issue 11, docs/strategies.md
// "Request-local budgets").
#include <cstdint>
#include <optional>
#include <string>

#include "context.hpp"
#include "session/budget.hpp"

namespace ctxfold::cli {

/// --budget and --max-output as given.
struct BudgetCliOptions {
  std::optional<std::int64_t> budget;      ///< tokens the request must fit, input plus output cap
  std::optional<std::int64_t> max_output;  ///< the output cap to reserve; only with --budget
};

/// Declares --budget and --max-output on sub.
void add_budget_flags(CLI::App& sub, BudgetCliOptions& o);

/// The budget to apply, or none without --budget. The output cap is resolved here against model
/// (share/models/catalog.json), so a bad flag fails before anything is read. Errors:
/// Error(usage, "budget.invalid") for --max-output without --budget and what resolve_output_cap
/// refuses.
std::optional<BudgetOptions> budget_options(const BudgetCliOptions& o, const std::string& model);

}  // namespace ctxfold::cli
