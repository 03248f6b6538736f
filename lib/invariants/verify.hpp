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

/// Runs the implemented invariants over the given sessions (read-only; works on a Store opened
/// read_only), checks in id order: I1 append-only ledger (digest of every node recomputed, seq
/// gap-free and strictly increasing, covered ids still exist), I2 well-formed DAG (missing
/// predecessors of imported roots are warnings), I3/I4/I7 (invariants/verify_compaction.hpp),
/// I5 render completeness (every node of HEAD's spine rendered exactly once raw or inside the
/// rendered summary; tool-pairing repairs and render warnings are warnings; provider messages
/// pair every call with its result), I6 HEAD integrity (causes, existence, boundary, unbroken
/// chain of moves), I9 fork closure (invariants/verify_fork.hpp), I10 determinism (two renders give identical openai and anthropic bytes; the
/// render from HEAD's predecessor is a prefix of HEAD's, skipped when the summary differs),
/// I11 SQLite integrity_check and foreign_key_check (database-wide: session is empty).
/// An unknown session is an I6 violation. Cost: O(nodes of the checked sessions).
VerifyReport verify_invariants(Store& store, const std::vector<std::string>& sessions);

/// {"schema":"ctxfold.verify/1","ok","sessions","checks":[{"id","name","ok","violations",
/// "warnings"}]}
Json verify_to_json(const VerifyReport& r);

}  // namespace ctxfold
