#include "budget_options.hpp"

#include "util/error.hpp"

namespace ctxfold::cli {

void add_budget_flags(CLI::App& sub, BudgetCliOptions& o) {
  sub.add_option("--budget", o.budget,
                 "fit the request into TOKENS (input + output cap) by summarizing tool results and older tool steps for "
                 "this request only; the database is not written");
  sub.add_option("--max-output", o.max_output,
                 "with --budget: the output cap to reserve (default: the smallest of the model's, 16384 and a quarter "
                 "of the budget)");
}

std::optional<BudgetOptions> budget_options(const BudgetCliOptions& o, const std::string& model) {
  if (!o.budget) {
    if (o.max_output)
      throw Error(Exit::usage, "budget.invalid", "--max-output is the output cap of --budget; give --budget too");
    return std::nullopt;
  }
  BudgetOptions b;
  b.budget = *o.budget;
  b.max_output = o.max_output;
  b.model = model;
  resolve_output_cap(b.budget, b.max_output, b.model);
  return b;
}

}  // namespace ctxfold::cli
