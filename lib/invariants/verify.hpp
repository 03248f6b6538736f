#pragma once
#include <functional>
#include <string>
#include <vector>

#include "store/store.hpp"
#include "util/environment.hpp"

namespace ctxfold {

/// One finding: which session and nodes, and what is wrong, in words a person can act on.
struct Violation {
  std::string session;
  std::vector<std::string> nodes;
  std::string message;
};

/// The result of one invariant (docs/invariants.md) over the checked sessions. Warnings are recorded
/// facts about the source (a missing parent in an imported excerpt), never failures.
struct Check {
  Check() = default;
  Check(std::string id_, std::string name_, bool ok_ = true, std::vector<Violation> violations_ = {},
        std::vector<Violation> warnings_ = {})
      : id(std::move(id_)), name(std::move(name_)), ok(ok_), violations(std::move(violations_)),
        warnings(std::move(warnings_)) {}
  std::string id;    ///< "I1".."I11"
  std::string name;  ///< e.g. "append-only ledger"
  bool ok = true;
  std::vector<Violation> violations;
  std::vector<Violation> warnings;
  /// Where the invariant is specified: 'docs/invariants.md "IN"' (stable, for CI reports).
  std::string source;
  /// Not run: --quick leaves out the costly checks (skipped_reason says why). A skipped check is ok.
  bool skipped = false;
  std::string skipped_reason;
};

/// How much verify_invariants does.
struct VerifyOptions {
  /// Only the cheap structural checks: I1 without recomputing node digests (seq continuity and
  /// order, coverage rows), I2, I3, I6, I7, I8, and I11 with PRAGMA quick_check instead of
  /// integrity_check (foreign_key_check still runs). Skipped (reported with skipped=true): the
  /// render-based I4, I5, I9, I10. Cost: no render, no content hashing.
  bool quick = false;
  /// Called as the work advances: (phase, done, total) — "sessions" per session checked, then
  /// each database-wide check by its id. For a progress bar; may be empty.
  std::function<void(const std::string& phase, std::int64_t done, std::int64_t total)> progress;
  /// CTXFOLD_VERIFY_PROFILE (and _RSS) read from here: CPU seconds per check (and peak RSS after
  /// each) as diagnostics (bench/verify.sh). Null: no profile.
  Environment* env = nullptr;
  /// The database as the caller opened it (a server URL with its password), to open the second
  /// connection of the database-wide checks; empty: the store's path().
  std::string database;
};

struct VerifyReport {
  bool ok = true;
  std::vector<std::string> sessions;
  std::vector<Check> checks;
  bool quick = false;  ///< made with VerifyOptions::quick
};

/// Runs the implemented invariants over the given sessions (read-only; works on a Store opened
/// read_only), checks in id order: I1 append-only ledger (digest of every node recomputed, seq
/// gap-free and strictly increasing, covered ids still exist), I2 well-formed DAG (missing
/// predecessors of imported roots are warnings), I3/I4/I7 (invariants/verify_compaction.hpp),
/// I8 the lcm summary tree (invariants/verify_lcm.hpp),
/// I5 render completeness (every node of HEAD's spine rendered exactly once raw or inside
/// exactly one rendered summary or fold — the default render, and the lcm render when the
/// session holds lcm summaries; tool-pairing repairs and render warnings are warnings; provider messages
/// pair every call with its result), I6 HEAD integrity (causes, existence, boundary, unbroken
/// chain of moves), I9 fork closure (invariants/verify_fork.hpp), I10 determinism (two renders give identical openai and anthropic bytes; the
/// render from HEAD's predecessor is a prefix of HEAD's, skipped when the summary differs),
/// I11 SQLite integrity_check and foreign_key_check (database-wide: session is empty).
/// An unknown session is an I6 violation. Cost: O(nodes of the checked sessions): one scan of each
/// session's rows serves I1 and I2 (and the links I5 walks), one render of HEAD serves I4, I5 and
/// I10. On a database file, I11, I3, I7 and I8 run on a second read-only connection in a second
/// thread beside the per-session checks (bench/verify.sh); on ":memory:" everything runs inline.
VerifyReport verify_invariants(Store& store, const std::vector<std::string>& sessions);
VerifyReport verify_invariants(Store& store, const std::vector<std::string>& sessions, const VerifyOptions& opts);

/// The source string of an invariant id ("I3" -> 'docs/invariants.md "I3"'); empty when unknown.
std::string invariant_source(const std::string& id);

/// {"schema":"ctxfold.verify/1","ok","sessions","checks":[{"id","name","ok","violations",
/// "warnings","source"}]} plus, only when set, "quick":true at the top and "skipped":true,
/// "skipped_reason" on a check.
Json verify_to_json(const VerifyReport& r);

}  // namespace ctxfold
