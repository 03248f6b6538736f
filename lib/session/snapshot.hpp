#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/store.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// A session's state at one append boundary (docs/model.md "seq and the append boundary"). Reading
/// with `--as-of boundary_seq` answers exactly as the database did at that boundary.
struct Snapshot {
  std::string session;
  /// The database's append boundary (largest node seq, database-wide: HEAD moves record the
  /// database-wide boundary, so only that value pins HEAD).
  std::int64_t boundary_seq = 0;
  std::optional<std::string> head;
  std::vector<std::string> active_summaries;  ///< the active rolling summary, when there is one
  std::int64_t node_count = 0;                ///< the session's nodes with seq <= boundary_seq
  std::int64_t view_count = 0;                ///< of which view nodes (summaries, archives, notes)
  std::int64_t head_moves = 0;                ///< the session's HEAD moves recorded by then
  /// sha256 (hex) over what a render at the boundary depends on, and nothing else: "ctxfold.snapshot/1\n",
  /// the session id, HEAD, the active summaries, then "id\tdigest\n" for every node of the
  /// session with seq <= boundary_seq in seq order. The boundary number itself is not in it,
  /// so two boundaries with the same session state give the same digest. O(session) rows read
  /// (id and digest columns only), O(1) memory.
  std::string digest;
};

/// The first and last node seq of a session (nullopt for a session without nodes).
struct SessionSpan {
  std::int64_t first_seq = 0;
  std::int64_t last_seq = 0;
};
std::optional<SessionSpan> session_span(Store& store, const std::string& session);

/// The one check of an --as-of boundary, for every command that reads a past state (log, render,
/// show, sessions, snapshot): kLatest gives the current boundary (max_seq); any other value is
/// returned as it is when the state existed there. With a session, that is from the session's
/// first node's seq to the current boundary (before it the session did not exist yet);
/// database-wide (nullopt: `sessions`, `show`), 0 to the current boundary. Otherwise throws
/// Error(bad_input, "as_of.out_of_range", "--as-of N is outside the append boundaries of session
/// 'S': LO..HI" (or "of the database: 0..HI"; a session without a node has "none").
std::int64_t resolve_as_of(Store& store, const std::optional<std::string>& session, std::int64_t as_of);

/// Takes the snapshot of session at as_of (kLatest: now), validated by resolve_as_of.
/// Read-only. Errors: as resolve_as_of.
Snapshot take_snapshot(Store& store, const std::string& session, std::int64_t as_of = kLatest);

/// {"schema":"ctxfold.snapshot/1","session","boundary_seq","head","active_summaries",
///  "node_count","view_count","head_moves","digest"}
Json snapshot_to_json(const Snapshot& s);

/// What `render --as-of -` and friends read back: boundary_seq, and session/head when present.
/// Accepts a ctxfold.snapshot/1 document (or any JSON object with an integer "boundary_seq").
/// Throws Error(bad_input,"input.snapshot") otherwise.
struct SnapshotRef {
  std::int64_t boundary_seq = 0;
  std::optional<std::string> session;
  std::optional<std::string> head;
};
SnapshotRef snapshot_ref_from_json(const Json& j);

/// Parses an --as-of argument: a non-negative integer, or "-" for a snapshot JSON on stdin
/// (read by the caller and passed as stdin_text). Throws Error(usage,"usage.as_of") for
/// anything else.
SnapshotRef parse_as_of_arg(const std::string& arg, const std::string& stdin_text = {});

}  // namespace ctxfold
