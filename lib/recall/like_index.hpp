#pragma once
// grep's index on a database engine with a trigram index of its own for LIKE (a PostgreSQL
// server's pg_trgm, store/scan.hpp like_index_supported; docs/backends.md "grep on a server"):
// table grep_like holds each node's searchable text folded by ctxfold's own case folding, and
// the engine's GIN trigram index over it narrows a search to candidates that ctxfold's matcher
// then reads and confirms one by one. SQLite's grep index is FTS5 instead (text_index.hpp).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "store/store.hpp"

namespace ctxfold {

/// How far grep_like reaches, as a reader finds it: every node with seq <= through_seq has its
/// row. 0 when there is no such table (SQLite, or a server never indexed) or when its text was
/// folded under another text_fold_version() (then `unusable` says so, for grep's note). Read-only.
struct LikeIndexState {
  std::int64_t through_seq = 0;
  std::string unusable;
};
LikeIndexState like_index_state(Store& st);

struct LikeIndexReport {
  std::int64_t indexed = 0;       ///< nodes added by this run
  std::int64_t through_seq = 0;   ///< the index now reaches this seq
  std::int64_t text_bytes = 0;    ///< bytes of folded text added
  bool rebuilt = false;           ///< the old rows were cleared first (--rebuild, another fold version)
};

/// `ctxfold index` on an engine with like_index_supported: creates grep_like, grep_like_state and
/// the engine's trigram index on grep_like.folded (store/scan.hpp create_like_index: the server's
/// pg_trgm, Error(environment, "index.pg_trgm") without it) in the first transaction, then adds
/// one row per node after through_seq in seq order (seq, session, view flag, casefold() of its
/// searchable text, NUL written as U+FFFF since a server's text holds no NUL) in transactions of
/// about `batch_bytes` of text, each advancing through_seq, so an interrupted run keeps what it
/// committed. `rebuild`, or a stored fold version other than text_fold_version(), clears the rows
/// first. Requires a writable store (Error(usage, "index.read_only")).
LikeIndexReport update_like_index(Store& st, bool rebuild, std::int64_t batch_bytes = 64 << 20);

/// The candidate nodes of a search from grep_like: seq <= `through`, of `session` (every session
/// when nullopt), whose folded text holds one of `literals` (IndexQuery::literals, folded), in
/// ascending seq with their view flag. A superset of the matching nodes: the caller's matcher
/// decides. Stops (returning false) once more than `cap` candidates were found (negative: no cap),
/// before calling fn for any; else calls fn for each and returns true.
bool like_candidates(Store& st, const std::vector<std::string>& literals, std::int64_t through,
                     const std::optional<std::string>& session, std::int64_t cap,
                     const std::function<void(std::int64_t seq, bool view)>& fn);

/// The rows of the candidates like_candidates found (their seqs, ascending, as `seqs`), read with
/// one statement per 256: fn(row) with columns seq, id, session, kind, role ('' when none),
/// content, in ascending seq. A server answers each statement in one round trip instead of one
/// per candidate.
void for_each_candidate_row(Store& st, const std::vector<std::int64_t>& seqs, const std::function<void(Stmt& row)>& fn);

}  // namespace ctxfold
