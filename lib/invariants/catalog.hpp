#pragma once
// The invariants verify-invariants checks (docs/invariants.md), in one table: every id, name and
// source a report carries is read from it.
#include <string_view>

#include "invariants/verify.hpp"

namespace ctxfold {

/// Where an invariant's findings belong.
enum class InvariantScope {
  database,  ///< the database as a whole only (I11): JUnit's "(database)" testcase
  session,   ///< the checked sessions (database-wide findings, session empty, may come on top)
};

/// One row of kInvariants.
struct InvariantInfo {
  std::string_view id;      ///< "I1".."I11"
  std::string_view name;    ///< e.g. "append-only ledger"
  std::string_view source;  ///< the section of docs/invariants.md that states it
  InvariantScope scope;
  bool needs_render;  ///< renders (HEAD, or a fork and its source): --quick skips it
};

/// Every invariant, in id order (the order of a report's checks).
inline constexpr InvariantInfo kInvariants[] = {
    {"I1", "append-only ledger", "docs/invariants.md \"I1\"", InvariantScope::session, false},
    {"I2", "well-formed DAG", "docs/invariants.md \"I2\"", InvariantScope::session, false},
    {"I3", "summary coverage", "docs/invariants.md \"I3\"", InvariantScope::session, false},
    {"I4", "one active rolling summary", "docs/invariants.md \"I4\"", InvariantScope::session, true},
    {"I5", "render completeness", "docs/invariants.md \"I5\"", InvariantScope::session, true},
    {"I6", "HEAD integrity", "docs/invariants.md \"I6\"", InvariantScope::session, false},
    {"I7", "compaction bookkeeping", "docs/invariants.md \"I7\"", InvariantScope::session, false},
    {"I8", "lcm summary tree", "docs/invariants.md \"I8\"", InvariantScope::session, false},
    {"I9", "fork closure", "docs/invariants.md \"I9\"", InvariantScope::session, true},
    {"I10", "determinism", "docs/invariants.md \"I10\"", InvariantScope::session, true},
    {"I11", "SQLite integrity", "docs/invariants.md \"I11\"", InvariantScope::database, false},
};

/// The row of id; nullptr when id names no invariant.
const InvariantInfo* find_invariant(std::string_view id);

/// An empty, passing Check with the id and name of id's row (source left empty: verify_invariants
/// fills it in). Throws std::logic_error when id names no invariant.
Check make_check(std::string_view id);

}  // namespace ctxfold
