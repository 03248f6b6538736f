#pragma once
#include <string>
#include <vector>

#include "store/store.hpp"

namespace ctxfold {

/// One finding: which session and nodes, and what is wrong, in words a person can act on.
struct Violation {
  std::string session;
  std::vector<std::string> nodes;
  std::string message;
};

/// The result of one invariant (PRODUCT.md §4) over the checked sessions. Warnings are recorded
/// facts about the source (a missing parent in an imported excerpt), never failures.
struct Check {
  std::string id;    ///< "I1".."I11"
  std::string name;  ///< e.g. "append-only ledger"
  bool ok = true;
  std::vector<Violation> violations;
  std::vector<Violation> warnings;
};

struct VerifyReport {
  bool ok = true;
  std::vector<std::string> sessions;
  std::vector<Check> checks;
};

/// Runs the implemented invariants over the given sessions (read-only). Implemented now:
/// I1 append-only ledger, I2 well-formed DAG, I5 render completeness, I6 HEAD integrity,
/// I10 determinism, I11 SQLite integrity.
VerifyReport verify_invariants(Store& store, const std::vector<std::string>& sessions);

/// {"schema":"ctxfold.verify/1","ok","sessions","checks":[{"id","name","ok","violations",
/// "warnings"}]}
Json verify_to_json(const VerifyReport& r);

}  // namespace ctxfold
