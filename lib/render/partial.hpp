#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace ctxfold {

/// Prefix of the Rendered::warnings entries that say HEAD's walk stopped before the root: a
/// predecessor cycle, a predecessor that does not exist, a walk longer than the database. The
/// history rendered is then partial, from a database that breaks invariant 2 (docs/invariants.md
/// "I2", made by editing the SQLite file directly). cmd/render prints every warning on stderr and
/// exits 3 (bad input data) on these, as fork (fork.broken_chain) and log do for the same database.
inline constexpr std::string_view kPartialHistory = "partial history: ";

/// True when a render warning is a kPartialHistory one.
inline bool is_partial_history(std::string_view warning) { return warning.substr(0, kPartialHistory.size()) == kPartialHistory; }

/// A compaction plans from HEAD's render: on a partial history it would fold a chain it cannot
/// see whole, so it writes nothing and throws Error(bad_input, "compact.broken_chain") with the
/// first kPartialHistory warning (exit 3, as render on the same database), before compact/start.
inline void refuse_partial_history(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings)
    if (is_partial_history(w))
      throw Error(Exit::bad_input, "compact.broken_chain", w, "run 'ctxfold verify-invariants'; no compaction was written");
}

}  // namespace ctxfold
