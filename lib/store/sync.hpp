#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "store/store.hpp"

namespace ctxfold {

/// What `ctxfold sync` copies and how (docs/backends.md "sync").
struct SyncOptions {
  /// The sessions to copy, with their ancestors (parent_session, recursively); empty: every
  /// session of the source. An id the source does not hold is Error(bad_input, "session.unknown").
  std::vector<std::string> sessions;
  /// Commit after at least this many nodes, at the next point where the source itself had
  /// committed (just after a HEAD move or an event, once every row of that boundary is copied),
  /// so a killed sync keeps whole batches and each batch leaves the destination as the source was
  /// at that boundary. >= 1.
  std::int64_t batch_nodes = 2000;
  /// Called after each commit (the tests' crash point); may be empty.
  std::function<void()> after_commit;
};

/// What sync did to one session. state: "new" (the destination did not hold it), "extended"
/// (it held a prefix of the source's rows), "unchanged" (it held exactly the source's rows) or
/// "destination_ahead" (it held the source's rows and more: nothing to copy; sync the other way).
/// ancestor: copied because a requested session descends from it.
struct SyncedSession {
  std::string id;
  std::string state;
  bool ancestor = false;
  std::int64_t nodes = 0;
  std::int64_t head_moves = 0;
  std::int64_t events = 0;
  std::int64_t source_records = 0;
};

struct SyncResult {
  std::vector<SyncedSession> sessions;  ///< in the source's order (oldest first)
  std::int64_t nodes = 0;               ///< nodes written, every session
  std::int64_t head_moves = 0;
  std::int64_t events = 0;
  std::int64_t source_records = 0;
  std::int64_t commits = 0;             ///< write transactions committed on the destination
  std::int64_t digests_checked = 0;     ///< nodes and source records whose digest was recomputed
};

/// Copies the ledger rows of `from`'s sessions that `to` lacks (docs/backends.md "sync"): for each
/// session, the rows past the destination's watermark (the number of its nodes, HEAD moves,
/// events and source records the destination already holds, which must be the source's first
/// rows of each table: a fast-forward), in the source's order (nodes by seq, HEAD moves and
/// events at the boundary they were written, merged across sessions), each node's digest
/// recomputed from the bytes read and compared with the source's before it is written. Rows
/// keep their bytes; seqs are the destination's own, and the fields that hold a seq of the source
/// (a fork's metadata.source_boundary_seq, compact/start's boundary_seq and session_seq) are
/// translated into the destination's seqs. Running it again copies nothing; a sync killed between
/// batches resumes where it stopped. `from` should be read-only (one snapshot), `to` read-write.
/// Errors: Error(bad_input,"sync.digest") when a source row does not match its digest (nothing of
/// its batch written); Error(environment,"sync.diverged") when the destination's rows of a
/// session are not a prefix of the source's or the other way round (checked for every session
/// before anything is written); Error(environment,"sync.conflict") when a node id to copy exists
/// in the destination with other content; Error(environment,"sync.raced") when another writer
/// changed a copied session of the destination between batches. Batches committed before an
/// error stay (each a state the source had).
SyncResult sync_stores(Store& from, Store& to, const SyncOptions& opts);

/// Whether two --db values name one database: the same file (after resolving links and relative
/// paths) or the same server URL, compared as written.
bool same_database(const std::string& a, const std::string& b);

/// Whether a --db value names a SQLite file that does not exist yet (Store::open read_write
/// would create it); false for a server URL, whose database must exist.
bool is_new_database_file(const std::string& path);

}  // namespace ctxfold
